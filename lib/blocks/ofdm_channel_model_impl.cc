/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "ofdm_channel_model_impl.h"
#include "plumbing/ofdm_parameters.h"

#include <gnuradio/io_signature.h>

namespace gr {
namespace mimo_gpu {

ofdm_channel_model::sptr ofdm_channel_model::make(const std::string& grid,
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
                                                  double doppler)
{
    const ::mimo_gpu::ofdm_grid g = ofdm_frame(grid, nt, "qpsk", slots, data_symbols);
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
    return gnuradio::make_block_sptr<ofdm_channel_model_impl>(g.frame_samples(), c);
}

ofdm_channel_model_impl::ofdm_channel_model_impl(
    int frame_samples, const ::mimo_gpu::multipath_config& config)
    : gr::block("ofdm_channel_model",
                gr::io_signature::make(config.nt, config.nt, sizeof(gr_complex)),
                gr::io_signature::make(config.nr, config.nr, sizeof(gr_complex))),
      d_frame(frame_samples),
      d_output(int(
          ::mimo_gpu::multipath_channel(config).output_samples(size_t(frame_samples)))),
      d_channel(config),
      d_in(size_t(frame_samples) * config.nt),
      d_out(size_t(d_output) * config.nr)
{
    // A whole frame per call: its output (with the timing offset and the delay spread) at
    // once.
    set_output_multiple(d_output);
    set_relative_rate(uint64_t(d_output), uint64_t(d_frame));
}

void ofdm_channel_model_impl::set_snr_db(double snr_db)
{
    gr::thread::scoped_lock lock(d_mutex);
    d_channel.set_snr_db(snr_db);
}

double ofdm_channel_model_impl::snr_db() const
{
    gr::thread::scoped_lock lock(d_mutex);
    return d_channel.config().snr_db;
}

void ofdm_channel_model_impl::forecast(int noutput_items,
                                       gr_vector_int& ninput_items_required)
{
    for (auto& n : ninput_items_required)
        n = (noutput_items / d_output) * d_frame;
}

int ofdm_channel_model_impl::general_work(int noutput_items,
                                          gr_vector_int& ninput_items,
                                          gr_vector_const_void_star& input_items,
                                          gr_vector_void_star& output_items)
{
    const int nt = int(input_items.size()), nr = int(output_items.size());
    int available = ninput_items[0];
    for (int t = 1; t < nt; ++t)
        available = std::min(available, ninput_items[t]);
    const int frames = std::min(noutput_items / d_output, available / d_frame);
    gr::thread::scoped_lock lock(d_mutex);
    for (int f = 0; f < frames; ++f) {
        for (int t = 0; t < nt; ++t) {
            auto in =
                static_cast<const gr_complex*>(input_items[t]) + size_t(f) * d_frame;
            for (int n = 0; n < d_frame; ++n)
                d_in[size_t(n) * nt + t] = in[n];
        }
        d_channel.run(d_in.data(), size_t(d_frame), d_out.data());
        for (int r = 0; r < nr; ++r) {
            auto out = static_cast<gr_complex*>(output_items[r]) + size_t(f) * d_output;
            for (int n = 0; n < d_output; ++n)
                out[n] = d_out[size_t(n) * nr + r];
        }
    }
    consume_each(frames * d_frame);
    return frames * d_output;
}

} // namespace mimo_gpu
} // namespace gr
