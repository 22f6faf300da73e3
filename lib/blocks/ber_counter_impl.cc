/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "ber_counter_impl.h"


#include <gnuradio/io_signature.h>
#include <gnuradio/mimo_gpu/device_buffer.h>
#include <mimo_gpu/backend.h>
#include <mimo_gpu/channel_generator.h>

#include <stdexcept>
#include <string>

namespace gr {
namespace mimo_gpu {

namespace {
int checked_bits_per_item(int bits_per_item)
{
    if (bits_per_item <= 0)
        throw std::invalid_argument("bits_per_item must be > 0, got " +
                                    std::to_string(bits_per_item));
    return bits_per_item;
}
} // namespace

ber_counter::sptr ber_counter::make(int bits_per_item, bool device_buffers)
{
    checked_bits_per_item(bits_per_item);
    if (device_buffers && !::mimo_gpu::cuda_available())
        throw std::invalid_argument("ber_counter: device_buffers needs CUDA: " +
                                    ::mimo_gpu::cuda_unavailable_reason());
    return gnuradio::make_block_sptr<ber_counter_impl>(bits_per_item, device_buffers);
}

ber_counter_impl::ber_counter_impl(int bits_per_item, bool device_buffers)
    : gr::sync_block(
          "ber_counter",
          // Ordinary input types even with device buffers (device_buffer.h says why).
          gr::io_signature::make2(
              2, 2, bits_per_item * sizeof(uint8_t), bits_per_item * sizeof(float)),
          gr::io_signature::make(0, 0, 0)),
      d_bits_per_item(bits_per_item)
{
    if (device_buffers) {
        d_stream = std::make_unique<::mimo_gpu::device_stream>();
        d_device_errors =
            static_cast<unsigned long long*>(::mimo_gpu::allocate_device(sizeof(uint64_t)));
        const unsigned long long zero = 0;
        ::mimo_gpu::copy_memory(d_device_errors,
                                &zero,
                                sizeof(zero),
                                ::mimo_gpu::copy_direction::host_to_device);
    }
}

ber_counter_impl::~ber_counter_impl() { ::mimo_gpu::free_device(d_device_errors); }

uint64_t ber_counter_impl::bits() const
{
    gr::thread::scoped_lock lock(d_mutex);
    return d_bits;
}

uint64_t ber_counter_impl::errors() const
{
    gr::thread::scoped_lock lock(d_mutex);
    return d_errors;
}

double ber_counter_impl::ber() const
{
    gr::thread::scoped_lock lock(d_mutex);
    return d_bits == 0 ? 0.0 : double(d_errors) / double(d_bits);
}

void ber_counter_impl::reset()
{
    gr::thread::scoped_lock lock(d_mutex);
    d_errors_before += d_errors; // the device word keeps counting
    d_bits = 0;
    d_errors = 0;
}

int ber_counter_impl::work(int noutput_items,
                           gr_vector_const_void_star& input_items,
                           gr_vector_void_star& /*output_items*/)
{
    const auto sent = static_cast<const uint8_t*>(input_items[0]);
    const auto llr = static_cast<const float*>(input_items[1]);
    const size_t count = size_t(noutput_items) * d_bits_per_item;

    gr::thread::scoped_lock lock(d_mutex);
    if (d_stream) {
        try {
            // Pageable host memory (an ordinary upstream block) is staged first.
            ::mimo_gpu::count_bit_errors_device(d_llr_staging.device_view(llr, count),
                                                d_bits_staging.device_view(sent, count),
                                                count,
                                                d_device_errors,
                                                d_stream->get());
            d_stream->synchronize();
            unsigned long long total = 0;
            ::mimo_gpu::copy_memory(&total,
                                    d_device_errors,
                                    sizeof(total),
                                    ::mimo_gpu::copy_direction::device_to_host);
            d_errors = total - d_errors_before;
        } catch (const std::exception& e) {
            d_logger->error("{}; ending the stream", e.what());
            return WORK_DONE; // an exception escaping work() would hang the flowgraph
        }
    } else {
        d_errors += ::mimo_gpu::count_bit_errors(llr, sent, count);
    }
    d_bits += count;
    return noutput_items;
}

} // namespace mimo_gpu
} // namespace gr
