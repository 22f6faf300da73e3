/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "ofdm_rx_impl.h"
#include "noise_var_tags.h"
#include "ofdm_parameters.h"

#include <gnuradio/block_detail.h>
#include <gnuradio/buffer_reader.h>
#include <gnuradio/io_signature.h>

#include <algorithm>
#include <stdexcept>

namespace gr {
namespace mimo_gpu {

namespace {
const pmt::pmt_t k_frame_key = pmt::mp("ofdm_frame");

::mimo_gpu::time_interpolation time_from(const std::string& name)
{
    if (name == "hold")
        return ::mimo_gpu::time_interpolation::hold;
    if (name == "linear")
        return ::mimo_gpu::time_interpolation::linear;
    throw std::invalid_argument("ofdm_rx: time_interpolation must be \"hold\" or \"linear\", got \"" + name + "\"");
}

::mimo_gpu::frequency_interpolation frequency_from(const std::string& name)
{
    if (name == "lmmse")
        return ::mimo_gpu::frequency_interpolation::lmmse;
    if (name == "linear")
        return ::mimo_gpu::frequency_interpolation::linear;
    throw std::invalid_argument("ofdm_rx: frequency_interpolation must be \"lmmse\" or \"linear\", got \"" + name +
                                "\"");
}
} // namespace

ofdm_rx::sptr ofdm_rx::make(const std::string& grid,
                            int nt,
                            int nr,
                            const std::string& modulation,
                            int slots,
                            int data_symbols,
                            const std::string& time_interpolation,
                            const std::string& frequency_interpolation,
                            const std::string& backend)
{
    ::mimo_gpu::ofdm_receiver_config c;
    c.nr = nr;
    c.interpolation = time_from(time_interpolation);
    c.frequency = frequency_from(frequency_interpolation);
    c.requested = ::mimo_gpu::backend_from_string(backend);
    return gnuradio::make_block_sptr<ofdm_rx_impl>(ofdm_frame(grid, nt, modulation, slots, data_symbols), c);
}

ofdm_rx_impl::ofdm_rx_impl(const ::mimo_gpu::ofdm_grid& grid, const ::mimo_gpu::ofdm_receiver_config& config)
    : gr::block("ofdm_rx",
                gr::io_signature::make(config.nr, config.nr, sizeof(gr_complex)),
                gr::io_signature::make2(2, 2, config.nr * grid.nt * sizeof(gr_complex), config.nr * sizeof(gr_complex))),
      d_receiver(grid, config),
      d_frame(grid.frame_samples()),
      d_y_per_frame(int(grid.data_elements())),
      d_H_per_frame(grid.slots * grid.used_subcarriers *
                    (config.interpolation == ::mimo_gpu::time_interpolation::hold ? 1 : grid.data_symbols)),
      d_symbols_per_channel(config.interpolation == ::mimo_gpu::time_interpolation::hold ? grid.data_symbols : 1)
{
    // noutput_items counts y items, a frame's worth at a time (H has fewer per frame).
    set_output_multiple(d_y_per_frame);
    set_relative_rate(uint64_t(d_y_per_frame), uint64_t(d_frame));
    set_tag_propagation_policy(TPP_DONT);
    d_logger->info("{}, {} receive antennas, S = {}, on {}", ::mimo_gpu::describe(grid), config.nr,
                   d_symbols_per_channel,
                   d_receiver.active_backend() == ::mimo_gpu::backend::cuda ? "CUDA" : "the CPU");
}

void ofdm_rx_impl::forecast(int noutput_items, gr_vector_int& ninput_items_required)
{
    // A frame's samples per frame wanted: no more, or a last frame at the very end
    // of a stream would never be asked for. A frame that is not aligned makes
    // work() drop what lies before it and wait for the rest.
    const int frames = std::max(1, noutput_items / d_y_per_frame);
    for (auto& n : ninput_items_required)
        n = frames * d_frame;
}

int ofdm_rx_impl::general_work(int noutput_items,
                               gr_vector_int& ninput_items,
                               gr_vector_const_void_star& input_items,
                               gr_vector_void_star& output_items)
{
    const int nr = int(input_items.size());
    const ::mimo_gpu::ofdm_grid& g = d_receiver.grid();
    int n = ninput_items[0];
    for (int r = 1; r < nr; ++r)
        n = std::min(n, ninput_items[r]);
    d_samples.resize(size_t(n) * nr);
    for (int r = 0; r < nr; ++r) {
        auto in = static_cast<const gr_complex*>(input_items[r]);
        for (int k = 0; k < n; ++k)
            d_samples[size_t(k) * nr + r] = in[k];
    }
    // Frames one after another, as many as the outputs take.
    const int room = noutput_items / d_y_per_frame;
    std::vector<::mimo_gpu::sync_result> syncs;
    size_t from = 0, consumed = 0;
    while (int(syncs.size()) < room) {
        const ::mimo_gpu::sync_result s = d_receiver.synchronize(d_samples.data(), size_t(n), from);
        if (!s.found) { // keep where a preamble could still be found: its FFT and two symbols
            const size_t keep = size_t(g.fft_size) + 2 * size_t(g.symbol_samples());
            consumed = std::max(from, size_t(n) > keep ? size_t(n) - keep : size_t(0));
            break;
        }
        if (!s.complete) { // wait for the rest, the preamble kept with two symbols of margin
            const size_t margin = 2 * size_t(g.symbol_samples());
            consumed = std::max(from, s.frame_start > margin ? s.frame_start - margin : size_t(0));
            break;
        }
        syncs.push_back(s);
        from = s.frame_start + size_t(d_frame) - size_t(g.cp_length);
        consumed = from;
    }
    if (syncs.empty() && consumed == 0 && upstream_done()) { // the end: nothing more can be found
        d_dropped += size_t(n);
        consume_each(n);
        return WORK_DONE;
    }
    if (!syncs.empty()) {
        const auto frames = d_receiver.receive_frames(d_samples.data(), size_t(n), syncs);
        auto H = static_cast<gr_complex*>(output_items[0]);
        auto y = static_cast<gr_complex*>(output_items[1]);
        for (size_t f = 0; f < frames.size(); ++f) {
            const auto& fr = frames[f];
            std::copy(fr.H.begin(), fr.H.end(), H + f * fr.H.size());
            std::copy(fr.y.begin(), fr.y.end(), y + f * fr.y.size());
            emit_tags(fr, nitems_written(0) + f * size_t(d_H_per_frame), nitems_written(1) + f * size_t(d_y_per_frame),
                      nitems_read(0) + fr.sync.frame_start);
            d_last_n0 = fr.n0;
            d_last_cfo = fr.sync.cfo;
        }
        d_frames += frames.size();
    }
    // Samples consumed outside any frame are dropped (between frames: noise or gaps).
    const size_t in_frames = syncs.size() * (size_t(d_frame) - size_t(g.cp_length));
    d_dropped += consumed > in_frames ? consumed - in_frames : 0;
    consume_each(int(consumed));
    produce(0, int(syncs.size()) * d_H_per_frame);
    produce(1, int(syncs.size()) * d_y_per_frame);
    return WORK_CALLED_PRODUCE;
}

void ofdm_rx_impl::emit_tags(const ::mimo_gpu::front_end_frame& f, uint64_t H_item, uint64_t y_item,
                             uint64_t first_sample)
{
    const pmt::pmt_t n0 = pmt::from_double(f.n0);
    add_item_tag(0, H_item, k_noise_var_key, n0);
    add_item_tag(1, y_item, k_noise_var_key, n0);
    pmt::pmt_t info = pmt::make_dict();
    info = pmt::dict_add(info, pmt::mp("cfo"), pmt::from_double(f.sync.cfo));
    info = pmt::dict_add(info, pmt::mp("frame_start"), pmt::from_uint64(first_sample));
    info = pmt::dict_add(info, pmt::mp("delay_spread"), pmt::from_double(f.delay_spread));
    add_item_tag(1, y_item, k_frame_key, info);
}

bool ofdm_rx_impl::upstream_done() const
{
    if (!detail())
        return false;
    for (int r = 0; r < detail()->ninputs(); ++r)
        if (!detail()->input(r)->done())
            return false;
    return true;
}

bool ofdm_rx_impl::stop()
{
    d_logger->info("{} frames received, {} samples outside frames dropped", d_frames, d_dropped);
    return true;
}

} // namespace mimo_gpu
} // namespace gr
