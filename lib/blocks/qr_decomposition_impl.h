/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef INCLUDED_MIMO_GPU_QR_DECOMPOSITION_IMPL_H
#define INCLUDED_MIMO_GPU_QR_DECOMPOSITION_IMPL_H

#include <gnuradio/mimo_gpu/qr_decomposition.h>
#include <mimo_gpu/batched_qr.h>

#include "plumbing/batch_runner.h"
#include "plumbing/erasure_tags.h"

namespace gr {
namespace mimo_gpu {

class qr_decomposition_impl : public qr_decomposition
{
public:
    qr_decomposition_impl(int nr,
                          int nt,
                          int orders,
                          const std::string& backend,
                          int max_batch,
                          const std::string& policy);

    std::string active_backend() const override;
    uint64_t erased_problems() const override { return d_erasures.erased(); }

    int work(int noutput_items,
             gr_vector_const_void_star& input_items,
             gr_vector_void_star& output_items) override;

private:
    ::mimo_gpu::batched_qr d_qr;
    batch_runner d_batches;
    erasure_log d_erasures;
};

} // namespace mimo_gpu
} // namespace gr

#endif
