/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "plumbing/transport_block_pdu.h"
#include "tb_source_impl.h"

#include <gnuradio/buffer_double_mapped.h>
#include <gnuradio/io_signature.h>
#include <gnuradio/mimo_gpu/device_buffer.h>
#include <mimo_gpu/device_memory.h>

#include <algorithm>
#include <random>
#include <stdexcept>
#include <string>

namespace gr {
namespace mimo_gpu {

namespace {

gr::io_signature::sptr source_outputs(int A, int G, bool device)
{
    const gr::buffer_type type =
        device ? device_buffer::type : gr::buffer_double_mapped::type;
    return gr::io_signature::makev(2, 2, { G, A }, { type, type });
}

/// Most blocks per call: about 16 MiB of coded bits.
constexpr size_t k_max_bytes_per_call = size_t(16) << 20;

} // namespace

tb_source::sptr tb_source::make(int A,
                                int G,
                                int Qm,
                                int NL,
                                int rv,
                                uint64_t seed,
                                int pool,
                                uint64_t blocks,
                                const std::string& backend,
                                bool device_buffers,
                                const std::string& code)
{
    const transport_block_encode encode = make_transport_block_encode(
        transport_block_code_from_string(code), A, G, Qm, NL, rv);
    if (pool < 1)
        throw std::invalid_argument(
            "tb_source: pool must be at least 1 transport block, got " +
            std::to_string(pool));
    ::mimo_gpu::backend b = ::mimo_gpu::backend_from_string(backend);
    if (b == ::mimo_gpu::backend::cuda && !::mimo_gpu::cuda_available())
        throw std::runtime_error("tb_source: backend cuda: " +
                                 ::mimo_gpu::cuda_unavailable_reason());
    if (b == ::mimo_gpu::backend::automatic)
        b = ::mimo_gpu::cuda_available() ? ::mimo_gpu::backend::cuda
                                         : ::mimo_gpu::backend::cpu;
    const bool device = device_buffers && b == ::mimo_gpu::backend::cuda;
    return gnuradio::make_block_sptr<tb_source_impl>(
        A, G, encode, seed, pool, blocks, b, device);
}

tb_source_impl::tb_source_impl(int A,
                               int G,
                               const transport_block_encode& encode,
                               uint64_t seed,
                               int pool,
                               uint64_t blocks,
                               ::mimo_gpu::backend backend,
                               bool device_buffers)
    : gr::block("tb_source",
                gr::io_signature::make(0, 0, 0),
                source_outputs(A, G, device_buffers)),
      d_A(A),
      d_G(G),
      d_backend(backend),
      d_pool(size_t(pool)),
      d_blocks(blocks),
      d_coded(d_pool * size_t(G)),
      d_info(d_pool * size_t(A))
{
    std::mt19937_64 rng(seed);
    for (size_t b = 0; b < d_pool; ++b) {
        uint8_t* a = d_info.data() + b * size_t(A);
        for (int i = 0; i < A; ++i)
            a[i] = uint8_t(rng() & 1);
        encode(a, d_coded.data() + b * size_t(G));
    }
    if (device_buffers) {
        try { // a constructor that throws runs no destructor
            d_device_coded =
                static_cast<uint8_t*>(::mimo_gpu::allocate_device(d_coded.size()));
            d_device_info =
                static_cast<uint8_t*>(::mimo_gpu::allocate_device(d_info.size()));
            ::mimo_gpu::copy_memory(d_device_coded,
                                    d_coded.data(),
                                    d_coded.size(),
                                    ::mimo_gpu::copy_direction::host_to_device);
            ::mimo_gpu::copy_memory(d_device_info,
                                    d_info.data(),
                                    d_info.size(),
                                    ::mimo_gpu::copy_direction::host_to_device);
        } catch (...) {
            ::mimo_gpu::free_device(d_device_coded);
            ::mimo_gpu::free_device(d_device_info);
            throw;
        }
    }
    const size_t per_call = std::max<size_t>(1, k_max_bytes_per_call / size_t(G));
    set_min_output_buffer(0, long(per_call));
    set_min_output_buffer(1, long(per_call));
    d_logger->info("transport blocks A {} -> G {}, a pool of {}, on {}{}",
                   A,
                   G,
                   d_pool,
                   active_backend(),
                   device_buffers ? " (device buffers)" : "");
}

tb_source_impl::~tb_source_impl()
{
    ::mimo_gpu::free_device(d_device_coded);
    ::mimo_gpu::free_device(d_device_info);
}

std::string tb_source_impl::active_backend() const
{
    return ::mimo_gpu::to_string(d_backend);
}

void tb_source_impl::copy_out(uint64_t first,
                              size_t count,
                              uint8_t* coded,
                              uint8_t* info) const
{
    const size_t G = size_t(d_G), A = size_t(d_A);
    size_t done = 0;
    while (done < count) { // a run of consecutive pool blocks
        const size_t index = size_t((first + done) % d_pool);
        const size_t run = std::min(count - done, d_pool - index);
        if (d_device_coded) {
            ::mimo_gpu::copy_memory(coded + done * G,
                                    d_device_coded + index * G,
                                    run * G,
                                    ::mimo_gpu::copy_direction::device_to_device);
            ::mimo_gpu::copy_memory(info + done * A,
                                    d_device_info + index * A,
                                    run * A,
                                    ::mimo_gpu::copy_direction::device_to_device);
        } else {
            std::copy_n(d_coded.data() + index * G, run * G, coded + done * G);
            std::copy_n(d_info.data() + index * A, run * A, info + done * A);
        }
        done += run;
    }
}

int tb_source_impl::general_work(int noutput_items,
                                 gr_vector_int&,
                                 gr_vector_const_void_star&,
                                 gr_vector_void_star& output_items)
{
    if (d_output_guard.must_stop(*this, *d_logger))
        return WORK_DONE;
    const uint64_t first = nitems_written(0);
    if (d_blocks && first >= d_blocks)
        return WORK_DONE;
    uint64_t count = uint64_t(noutput_items);
    if (d_blocks)
        count = std::min(count, d_blocks - first);
    try {
        copy_out(first,
                 size_t(count),
                 static_cast<uint8_t*>(output_items[0]),
                 static_cast<uint8_t*>(output_items[1]));
    } catch (const std::exception& e) {
        d_logger->error("transport blocks {}..: {}; ending the stream", first, e.what());
        return WORK_DONE; // an exception escaping work() would hang the flowgraph
    }
    return int(count);
}

} // namespace mimo_gpu
} // namespace gr
