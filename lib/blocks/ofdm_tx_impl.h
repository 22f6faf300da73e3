/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef INCLUDED_MIMO_GPU_OFDM_TX_IMPL_H
#define INCLUDED_MIMO_GPU_OFDM_TX_IMPL_H

#include "plumbing/device_output_guard.h"
#include "plumbing/host_buffer_locks.h"

#include <gnuradio/mimo_gpu/device_buffer.h>
#include <gnuradio/mimo_gpu/ofdm_tx.h>
#include <mimo_gpu/ofdm_stream_transmitter.h>

#include <memory>
#include <vector>

namespace gr {
namespace mimo_gpu {

/// The block over the core's ofdm_stream_transmitter: each call sends the
/// whole frames it may write, in one batch.
class ofdm_tx_impl : public ofdm_tx, public device_stream_reader
{
public:
    ofdm_tx_impl(std::unique_ptr<::mimo_gpu::ofdm_stream_transmitter> transmitter,
                 bool device_buffers);
    int frame_bits() const override { return int(grid().frame_bits()); }
    int frame_samples() const override { return grid().frame_samples(); }
    std::string active_backend() const override;
    bool device_buffers() const override { return d_device_outputs; }
    bool reads_device_memory() const override { return d_on_gpu; }
    bool start() override;
    bool stop() override;
    int work(int noutput_items,
             gr_vector_const_void_star& input_items,
             gr_vector_void_star& output_items) override;

private:
    const ::mimo_gpu::ofdm_grid& grid() const { return d_transmitter->grid(); }

    std::unique_ptr<::mimo_gpu::ofdm_stream_transmitter> d_transmitter;
    const bool d_on_gpu;
    const bool d_device_outputs;
    device_output_guard d_output_guard;
    host_buffer_locks d_locks; // host buffers page-locked in place (CUDA)
    bool d_buffers_checked = false;
    bool d_failed = false;
    std::vector<gr_complex*> d_outputs;
};

} // namespace mimo_gpu
} // namespace gr

#endif
