/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef INCLUDED_MIMO_GPU_MIMO_DETECTOR_IMPL_H
#define INCLUDED_MIMO_GPU_MIMO_DETECTOR_IMPL_H

#include <gnuradio/mimo_gpu/mimo_detector.h>
#include <gnuradio/thread/thread.h>
#include <mimo_gpu/detector.h>

#include "batch_runner.h"
#include "erasure_tags.h"

#include <memory>

namespace gr {
namespace mimo_gpu {

class mimo_detector_impl : public mimo_detector
{
public:
    mimo_detector_impl(std::unique_ptr<::mimo_gpu::detector> core,
                       double noise_var,
                       int symbols_per_channel,
                       int max_batch);

    std::string algorithm() const override { return d_core->name(); }
    void set_noise_var(double noise_var) override;
    double noise_var() const override;
    void set_parameter(const std::string& name, double value) override;
    double parameter(const std::string& name) const override;
    std::string active_backend() const override;
    uint64_t erased_problems() const override { return d_erasures.erased(); }

    void forecast(int noutput_items, gr_vector_int& ninput_items_required) override;
    int general_work(int noutput_items,
                     gr_vector_int& ninput_items,
                     gr_vector_const_void_star& input_items,
                     gr_vector_void_star& output_items) override;
    bool stop() override;

private:
    std::unique_ptr<::mimo_gpu::detector> d_core;
    const int d_symbols_per_channel;
    batch_runner d_batches; // in channels
    mutable gr::thread::mutex
        d_mutex; // guards N0 and the parameters, set from other threads
    float d_noise_var;
    erasure_log d_erasures;
};

} // namespace mimo_gpu
} // namespace gr

#endif
