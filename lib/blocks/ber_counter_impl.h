/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef INCLUDED_MIMO_GPU_BER_COUNTER_IMPL_H
#define INCLUDED_MIMO_GPU_BER_COUNTER_IMPL_H

#include <gnuradio/mimo_gpu/ber_counter.h>
#include <gnuradio/mimo_gpu/device_buffer.h>
#include <gnuradio/thread/thread.h>
#include <mimo_gpu/device_memory.h>

#include "plumbing/device_staging.h"

#include <mimo_gpu/channel_generator.h>

#include <memory>

namespace gr {
namespace mimo_gpu {

class ber_counter_impl : public ber_counter, public device_stream_reader
{
public:
    ber_counter_impl(int bits_per_item, bool device_buffers, bool hard_decisions);
    ~ber_counter_impl() override;

    uint64_t bits() const override;
    uint64_t errors() const override;
    double ber() const override;
    uint64_t items() const override;
    uint64_t item_errors() const override;
    void reset() override;
    bool reads_device_memory() const override { return d_stream != nullptr; }

    int work(int noutput_items,
             gr_vector_const_void_star& input_items,
             gr_vector_void_star& output_items) override;

private:
    /// This call's errors, counted on the host or (device_buffers) on the GPU.
    ::mimo_gpu::error_counts
    count(const void* decisions, const uint8_t* sent, size_t items);

    const int d_bits_per_item;
    const bool d_hard; // decisions are bytes, else LLRs
    // device_buffers: errors counted into two device words (bits, items) on the
    // block's stream; they keep counting across reset()
    std::unique_ptr<::mimo_gpu::device_stream> d_stream;
    unsigned long long* d_device_counts = nullptr;
    device_staging<float> d_llr_staging;
    device_staging<uint8_t> d_decided_staging;
    device_staging<uint8_t> d_bits_staging;
    ::mimo_gpu::error_counts d_device_before; // device counts at the last reset
    mutable gr::thread::mutex d_mutex;        // the counters are read from other threads
    uint64_t d_bits = 0, d_items = 0;
    ::mimo_gpu::error_counts d_errors;
};

} // namespace mimo_gpu
} // namespace gr

#endif
