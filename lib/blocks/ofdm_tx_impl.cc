/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "ofdm_tx_impl.h"
#include "plumbing/ofdm_parameters.h"

#include <gnuradio/io_signature.h>

#include <stdexcept>

namespace gr {
namespace mimo_gpu {

namespace {

gr::io_signature::sptr tx_outputs(const ::mimo_gpu::ofdm_grid& g, bool device)
{
    return device ? gr::io_signature::make(
                        g.nt, g.nt, sizeof(gr_complex), device_buffer::type)
                  : gr::io_signature::make(g.nt, g.nt, sizeof(gr_complex));
}

} // namespace

ofdm_tx::sptr ofdm_tx::make(const std::string& grid,
                            int nt,
                            const std::string& modulation,
                            int slots,
                            int data_symbols,
                            const std::string& backend,
                            bool device_buffers,
                            const std::vector<int>& pilot_positions)
{
    auto transmitter = std::make_unique<::mimo_gpu::ofdm_stream_transmitter>(
        ofdm_frame(grid, nt, modulation, slots, data_symbols, pilot_positions),
        ::mimo_gpu::backend_from_string(backend));
    const bool device =
        device_buffers && transmitter->active_backend() == ::mimo_gpu::backend::cuda;
    return gnuradio::make_block_sptr<ofdm_tx_impl>(std::move(transmitter), device);
}

ofdm_tx_impl::ofdm_tx_impl(
    std::unique_ptr<::mimo_gpu::ofdm_stream_transmitter> transmitter, bool device_buffers)
    : gr::sync_interpolator("ofdm_tx",
                            gr::io_signature::make(
                                1, 1, transmitter->grid().frame_bits() * sizeof(uint8_t)),
                            tx_outputs(transmitter->grid(), device_buffers),
                            unsigned(transmitter->grid().frame_samples())),
      d_transmitter(std::move(transmitter)),
      d_on_gpu(d_transmitter->active_backend() == ::mimo_gpu::backend::cuda),
      d_device_outputs(device_buffers),
      d_outputs(size_t(grid().nt))
{
    d_logger->info("{}: {} coded bits -> {} samples per frame, on {}{}",
                   ::mimo_gpu::describe(grid()),
                   grid().frame_bits(),
                   grid().frame_samples(),
                   active_backend(),
                   d_device_outputs ? " (device buffers)" : "");
}

std::string ofdm_tx_impl::active_backend() const
{
    return ::mimo_gpu::to_string(d_transmitter->active_backend());
}

bool ofdm_tx_impl::start()
{
    d_buffers_checked = false; // a new run may have new buffers
    d_failed = false;
    return true;
}

bool ofdm_tx_impl::stop()
{
    d_locks.unlock(); // before GNU Radio frees them
    return true;
}

int ofdm_tx_impl::work(int noutput_items,
                       gr_vector_const_void_star& input_items,
                       gr_vector_void_star& output_items)
{
    if (d_failed || (d_device_outputs && d_output_guard.must_stop(*this, *d_logger)))
        return WORK_DONE;
    if (!d_buffers_checked) {
        d_buffers_checked = true;
        if (d_on_gpu) { // host buffers (bits in, samples out): locked in place
            const std::string why = d_locks.lock(*this, true, true);
            if (!why.empty())
                d_logger->info("host buffers not page-locked ({})", why);
        }
    }
    const int S = frame_samples();
    const int frames = noutput_items / S;
    for (size_t t = 0; t < d_outputs.size(); ++t)
        d_outputs[t] = static_cast<gr_complex*>(output_items[t]);
    try {
        d_transmitter->modulate(static_cast<const uint8_t*>(input_items[0]),
                                size_t(frames),
                                d_outputs.data());
    } catch (const ::mimo_gpu::bad_frame_bits& e) {
        d_logger->error("frame {}: a bit byte other than 0 or 1; ending the stream "
                        "after the frames before it",
                        nitems_read(0) + e.frame());
        d_failed = true;
        return e.frame() > 0 ? int(e.frame()) * S : WORK_DONE;
    } catch (const std::exception& e) {
        d_logger->error("frames {}..: {}; ending the stream", nitems_read(0), e.what());
        d_failed = true;
        return WORK_DONE; // an exception escaping work() would hang the flowgraph
    }
    return frames * S;
}

} // namespace mimo_gpu
} // namespace gr
