/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef INCLUDED_MIMO_GPU_TB_SOURCE_IMPL_H
#define INCLUDED_MIMO_GPU_TB_SOURCE_IMPL_H

#include "plumbing/device_output_guard.h"

#include "plumbing/transport_block_codes.h"
#include <gnuradio/mimo_gpu/tb_source.h>
#include <mimo_gpu/backend.h>
#include <mimo_gpu/lte_turbo_decoder.h>

#include <vector>

namespace gr {
namespace mimo_gpu {

/// The pool of encoded transport blocks, in host or device memory, copied out in
/// runs of consecutive blocks.
class tb_source_impl : public tb_source
{
public:
    /// encode: one transport block's A bits -> G coded bits.
    tb_source_impl(int A,
                   int G,
                   const transport_block_encode& encode,
                   uint64_t seed,
                   int pool,
                   uint64_t blocks,
                   ::mimo_gpu::backend backend,
                   bool device_buffers);
    ~tb_source_impl() override;

    std::string active_backend() const override;
    bool device_buffers() const override { return d_device_coded != nullptr; }

    int general_work(int noutput_items,
                     gr_vector_int& ninput_items,
                     gr_vector_const_void_star& input_items,
                     gr_vector_void_star& output_items) override;

private:
    /// Copies blocks [first, first + count) of the stream (pool indices cycled).
    void copy_out(uint64_t first, size_t count, uint8_t* coded, uint8_t* info) const;

    const int d_A, d_G;
    const ::mimo_gpu::backend d_backend;
    const size_t d_pool;
    const uint64_t d_blocks;              // 0: endless
    std::vector<uint8_t> d_coded, d_info; // pool, host side
    uint8_t* d_device_coded = nullptr;    // pool, device side (device buffers)
    uint8_t* d_device_info = nullptr;
    device_output_guard d_output_guard;
};

} // namespace mimo_gpu
} // namespace gr

#endif
