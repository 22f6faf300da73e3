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

ber_counter::sptr
ber_counter::make(int bits_per_item, bool device_buffers, const std::string& decisions)
{
    checked_bits_per_item(bits_per_item);
    if (decisions != "llr" && decisions != "hard")
        throw std::invalid_argument(
            "ber_counter: decisions must be \"llr\" or \"hard\", got \"" + decisions +
            "\"");
    if (device_buffers && !::mimo_gpu::cuda_available())
        throw std::invalid_argument("ber_counter: device_buffers needs CUDA: " +
                                    ::mimo_gpu::cuda_unavailable_reason());
    return gnuradio::make_block_sptr<ber_counter_impl>(
        bits_per_item, device_buffers, decisions == "hard");
}

ber_counter_impl::ber_counter_impl(int bits_per_item,
                                   bool device_buffers,
                                   bool hard_decisions)
    : gr::sync_block(
          "ber_counter",
          // Ordinary input types even with device buffers (device_buffer.h says why).
          gr::io_signature::make2(2,
                                  2,
                                  bits_per_item * sizeof(uint8_t),
                                  bits_per_item *
                                      (hard_decisions ? sizeof(uint8_t) : sizeof(float))),
          gr::io_signature::make(0, 0, 0)),
      d_bits_per_item(bits_per_item),
      d_hard(hard_decisions)
{
    if (device_buffers) {
        d_stream = std::make_unique<::mimo_gpu::device_stream>();
        d_device_counts = static_cast<unsigned long long*>(
            ::mimo_gpu::allocate_device(2 * sizeof(unsigned long long)));
        const unsigned long long zero[2] = { 0, 0 };
        try { // a constructor that throws runs no destructor
            ::mimo_gpu::copy_memory(d_device_counts,
                                    zero,
                                    sizeof(zero),
                                    ::mimo_gpu::copy_direction::host_to_device);
        } catch (...) {
            ::mimo_gpu::free_device(d_device_counts);
            throw;
        }
    }
}

ber_counter_impl::~ber_counter_impl() { ::mimo_gpu::free_device(d_device_counts); }

uint64_t ber_counter_impl::bits() const
{
    gr::thread::scoped_lock lock(d_mutex);
    return d_bits;
}

uint64_t ber_counter_impl::errors() const
{
    gr::thread::scoped_lock lock(d_mutex);
    return d_errors.bits;
}

double ber_counter_impl::ber() const
{
    gr::thread::scoped_lock lock(d_mutex);
    return d_bits == 0 ? 0.0 : double(d_errors.bits) / double(d_bits);
}

uint64_t ber_counter_impl::items() const
{
    gr::thread::scoped_lock lock(d_mutex);
    return d_items;
}

uint64_t ber_counter_impl::item_errors() const
{
    gr::thread::scoped_lock lock(d_mutex);
    return d_errors.items;
}

void ber_counter_impl::reset()
{
    gr::thread::scoped_lock lock(d_mutex);
    d_device_before.bits += d_errors.bits; // the device words keep counting
    d_device_before.items += d_errors.items;
    d_bits = 0;
    d_items = 0;
    d_errors = {};
}

::mimo_gpu::error_counts
ber_counter_impl::count(const void* decisions, const uint8_t* sent, size_t items)
{
    const size_t n = items * size_t(d_bits_per_item);
    if (!d_stream) {
        const ::mimo_gpu::error_counts e =
            d_hard
                ? ::mimo_gpu::count_errors(static_cast<const uint8_t*>(decisions),
                                           sent,
                                           items,
                                           d_bits_per_item)
                : ::mimo_gpu::count_errors(
                      static_cast<const float*>(decisions), sent, items, d_bits_per_item);
        return { d_errors.bits + e.bits, d_errors.items + e.items };
    }
    // Pageable host memory (an ordinary upstream block) is staged first.
    const uint8_t* d_sent = d_bits_staging.device_view(sent, n);
    if (d_hard)
        ::mimo_gpu::count_errors_device(
            d_decided_staging.device_view(static_cast<const uint8_t*>(decisions), n),
            d_sent,
            items,
            d_bits_per_item,
            d_device_counts,
            d_stream->get());
    else
        ::mimo_gpu::count_errors_device(
            d_llr_staging.device_view(static_cast<const float*>(decisions), n),
            d_sent,
            items,
            d_bits_per_item,
            d_device_counts,
            d_stream->get());
    d_stream->synchronize();
    unsigned long long total[2] = { 0, 0 };
    ::mimo_gpu::copy_memory(total,
                            d_device_counts,
                            sizeof(total),
                            ::mimo_gpu::copy_direction::device_to_host);
    return { total[0] - d_device_before.bits, total[1] - d_device_before.items };
}

int ber_counter_impl::work(int noutput_items,
                           gr_vector_const_void_star& input_items,
                           gr_vector_void_star& /*output_items*/)
{
    const auto sent = static_cast<const uint8_t*>(input_items[0]);
    gr::thread::scoped_lock lock(d_mutex);
    try {
        d_errors = count(input_items[1], sent, size_t(noutput_items));
    } catch (const std::exception& e) {
        d_logger->error("{}; ending the stream", e.what());
        return WORK_DONE; // an exception escaping work() would hang the flowgraph
    }
    d_bits += uint64_t(noutput_items) * uint64_t(d_bits_per_item);
    d_items += uint64_t(noutput_items);
    return noutput_items;
}

} // namespace mimo_gpu
} // namespace gr
