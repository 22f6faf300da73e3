/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef INCLUDED_MIMO_GPU_BER_COUNTER_IMPL_H
#define INCLUDED_MIMO_GPU_BER_COUNTER_IMPL_H

#include <gnuradio/mimo_gpu/ber_counter.h>
#include <gnuradio/thread/thread.h>

namespace gr {
namespace mimo_gpu {

class ber_counter_impl : public ber_counter
{
public:
    explicit ber_counter_impl(int bits_per_item);

    uint64_t bits() const override;
    uint64_t errors() const override;
    double ber() const override;
    void reset() override;

    int work(int noutput_items,
             gr_vector_const_void_star& input_items,
             gr_vector_void_star& output_items) override;

private:
    const int d_bits_per_item;
    mutable gr::thread::mutex d_mutex; // the counters are read from other threads
    uint64_t d_bits = 0;
    uint64_t d_errors = 0;
};

} // namespace mimo_gpu
} // namespace gr

#endif
