/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef INCLUDED_MIMO_GPU_NWAY_DETECTOR_IMPL_H
#define INCLUDED_MIMO_GPU_NWAY_DETECTOR_IMPL_H

#include <gnuradio/mimo_gpu/nway_detector.h>
#include <gnuradio/thread/thread.h>
#include <mimo_gpu/nway_ssfe_detector.h>

#include "plumbing/batch_runner.h"
#include "plumbing/erasure_tags.h"

namespace gr {
namespace mimo_gpu {

class nway_detector_impl : public nway_detector
{
public:
    nway_detector_impl(int nr,
                       int nt,
                       const std::string& modulation,
                       int passes,
                       double noise_var,
                       double llr_clip,
                       const std::string& backend,
                       int max_batch,
                       const std::string& policy);

    void set_noise_var(double noise_var) override;
    double noise_var() const override;
    void set_llr_clip(double llr_clip) override;
    double llr_clip() const override;
    std::string active_backend() const override;
    uint64_t erased_problems() const override { return d_erasures.erased(); }

    int work(int noutput_items,
             gr_vector_const_void_star& input_items,
             gr_vector_void_star& output_items) override;

private:
    ::mimo_gpu::nway_ssfe_detector d_detector;
    batch_runner d_batches;
    mutable gr::thread::mutex d_mutex; // guards N0 and the clip, set from other threads
    float d_noise_var;
    erasure_log d_erasures;
    rate_limited_warning d_ignored_noise_var;
};

} // namespace mimo_gpu
} // namespace gr

#endif
