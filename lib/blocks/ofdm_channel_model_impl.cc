/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "ofdm_channel_model_impl.h"
#include "plumbing/ofdm_parameters.h"

#include <gnuradio/io_signature.h>
#include <mimo_gpu/backend.h>

#include <algorithm>

namespace gr {
namespace mimo_gpu {

ofdm_channel_model::sptr
ofdm_channel_model::make(const std::string& grid,
                         int nt,
                         int nr,
                         int slots,
                         int data_symbols,
                         const std::string& profile,
                         double snr_db,
                         double cfo,
                         int timing_offset,
                         uint64_t seed,
                         double tx_correlation,
                         double rx_correlation,
                         double doppler,
                         const std::string& backend,
                         bool device_buffers,
                         const std::vector<int>& pilot_positions,
                         const std::vector<double>& antenna_noise_db)
{
    const ::mimo_gpu::ofdm_grid g =
        ofdm_frame(grid, nt, "qpsk", slots, data_symbols, pilot_positions);
    ::mimo_gpu::multipath_config c;
    c.nr = nr;
    c.nt = nt;
    c.profile = ::mimo_gpu::delay_profile_from_string(profile);
    c.sample_rate = g.sample_rate;
    c.cfo = cfo * g.subcarrier_spacing();
    c.timing_offset = timing_offset;
    c.snr_db = snr_db;
    c.seed = seed;
    c.tx_correlation = tx_correlation;
    c.rx_correlation = rx_correlation;
    c.doppler = doppler;
    c.antenna_noise_db = antenna_noise_db;
    const ::mimo_gpu::backend requested = ::mimo_gpu::backend_from_string(backend);
    // "auto" keeps the CPU for what the GPU channel does not take (> 8 antennas).
    const bool fits = nr <= ::mimo_gpu::cuda_multipath_channel::max_antennas &&
                      nt <= ::mimo_gpu::cuda_multipath_channel::max_antennas;
    const bool gpu =
        ::mimo_gpu::resolve_backend(requested) == ::mimo_gpu::backend::cuda &&
        (fits || requested == ::mimo_gpu::backend::cuda);
    return gnuradio::make_block_sptr<ofdm_channel_model_impl>(
        g.frame_samples(), c, gpu, gpu && device_buffers);
}

namespace {

gr::io_signature::sptr channel_outputs(int nr, bool device)
{
    return device
               ? gr::io_signature::make(nr, nr, sizeof(gr_complex), device_buffer::type)
               : gr::io_signature::make(nr, nr, sizeof(gr_complex));
}

} // namespace

ofdm_channel_model_impl::ofdm_channel_model_impl(
    int frame_samples,
    const ::mimo_gpu::multipath_config& config,
    bool gpu,
    bool device_buffers)
    : gr::block("ofdm_channel_model",
                gr::io_signature::make(config.nt, config.nt, sizeof(gr_complex)),
                channel_outputs(config.nr, device_buffers)),
      d_frame(frame_samples),
      d_output(int(
          ::mimo_gpu::multipath_channel(config).output_samples(size_t(frame_samples)))),
      d_device_outputs(device_buffers)
{
    if (gpu)
        d_gpu = std::make_unique<::mimo_gpu::cuda_multipath_channel>(config);
    else {
        d_cpu = std::make_unique<::mimo_gpu::multipath_channel>(config);
        d_in.resize(size_t(frame_samples) * config.nt);
        d_out.resize(size_t(d_output) * config.nr);
    }
    // A whole frame per call: its output (with the timing offset and the delay spread) at
    // once.
    set_output_multiple(d_output);
    set_relative_rate(uint64_t(d_output), uint64_t(d_frame));
    d_logger->info("{} {}x{}, {:.1f} dB, on {}{}",
                   ::mimo_gpu::to_string(config.profile),
                   config.nr,
                   config.nt,
                   config.snr_db,
                   active_backend(),
                   d_device_outputs ? " (device buffers)" : "");
}

::mimo_gpu::multipath_channel& ofdm_channel_model_impl::model()
{
    return d_gpu ? d_gpu->model() : *d_cpu;
}

const ::mimo_gpu::multipath_channel& ofdm_channel_model_impl::model() const
{
    return d_gpu ? d_gpu->model() : *d_cpu;
}

void ofdm_channel_model_impl::set_snr_db(double snr_db)
{
    gr::thread::scoped_lock lock(d_mutex);
    model().set_snr_db(snr_db);
}

double ofdm_channel_model_impl::snr_db() const
{
    gr::thread::scoped_lock lock(d_mutex);
    return model().config().snr_db;
}

bool ofdm_channel_model_impl::start()
{
    d_buffers_checked = false; // a new run may have new buffers
    d_failed = false;
    return true;
}

bool ofdm_channel_model_impl::stop()
{
    d_locks.unlock(); // before GNU Radio frees them
    return true;
}

void ofdm_channel_model_impl::forecast(int noutput_items,
                                       gr_vector_int& ninput_items_required)
{
    for (auto& n : ninput_items_required)
        n = (noutput_items / d_output) * d_frame;
}

void ofdm_channel_model_impl::run_on_cpu(int frames,
                                         gr_vector_const_void_star& input_items,
                                         gr_vector_void_star& output_items)
{
    const int nt = int(input_items.size()), nr = int(output_items.size());
    for (int f = 0; f < frames; ++f) {
        for (int t = 0; t < nt; ++t) {
            auto in =
                static_cast<const gr_complex*>(input_items[t]) + size_t(f) * d_frame;
            for (int n = 0; n < d_frame; ++n)
                d_in[size_t(n) * nt + t] = in[n];
        }
        d_cpu->run(d_in.data(), size_t(d_frame), d_out.data());
        for (int r = 0; r < nr; ++r) {
            auto out = static_cast<gr_complex*>(output_items[r]) + size_t(f) * d_output;
            for (int n = 0; n < d_output; ++n)
                out[n] = d_out[size_t(n) * nr + r];
        }
    }
}

int ofdm_channel_model_impl::general_work(int noutput_items,
                                          gr_vector_int& ninput_items,
                                          gr_vector_const_void_star& input_items,
                                          gr_vector_void_star& output_items)
{
    if (d_failed || (d_device_outputs && d_output_guard.must_stop(*this, *d_logger)))
        return WORK_DONE;
    if (d_gpu && !d_buffers_checked) {
        d_buffers_checked = true;
        const std::string why = d_locks.lock(*this, true, true);
        if (!why.empty())
            d_logger->info("host buffers not page-locked ({})", why);
    }
    const int nt = int(input_items.size());
    int available = ninput_items[0];
    for (int t = 1; t < nt; ++t)
        available = std::min(available, ninput_items[t]);
    const int frames = std::min(noutput_items / d_output, available / d_frame);
    gr::thread::scoped_lock lock(d_mutex);
    try {
        if (d_gpu)
            d_gpu->run_frames(
                reinterpret_cast<const ::mimo_gpu::cfloat* const*>(input_items.data()),
                size_t(d_frame),
                size_t(frames),
                reinterpret_cast<::mimo_gpu::cfloat* const*>(output_items.data()));
        else
            run_on_cpu(frames, input_items, output_items);
    } catch (const std::exception& e) {
        d_logger->error(
            "frames {}..: {}; ending the stream", nitems_written(0) / d_output, e.what());
        d_failed = true;
        return WORK_DONE; // an exception escaping work() would hang the flowgraph
    }
    consume_each(frames * d_frame);
    return frames * d_output;
}

} // namespace mimo_gpu
} // namespace gr
