/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "mimo_channel_impl.h"
#include "plumbing/batch_runner.h"
#include "plumbing/block_parameters.h"
#include "plumbing/noise_var_tags.h"

#include <gnuradio/block_detail.h>
#include <gnuradio/buffer_reader.h>
#include <gnuradio/io_signature.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace gr {
namespace mimo_gpu {

namespace {
// Shape checked before any io_signature is made from it.
gr::io_signature::sptr bits_signature(int nr, int nt, const std::string& modulation)
{
    const int bits_per_item = checked_shape(nr, nt).nt * bits_per_symbol(modulation);
    return gr::io_signature::make(1, 1, bits_per_item * sizeof(uint8_t));
}

// Problems per simulator call: bounds the simulator's scratch memory.
constexpr size_t k_max_batch = 8192;

double checked_snr_db(double snr_db)
{
    if (!std::isfinite(snr_db))
        throw std::invalid_argument("snr_db must be finite");
    return snr_db;
}

} // namespace

mimo_channel::sptr mimo_channel::make(int nr,
                                      int nt,
                                      const std::string& modulation,
                                      double snr_db,
                                      uint64_t seed,
                                      int symbols_per_channel)
{
    return gnuradio::make_block_sptr<mimo_channel_impl>(
        nr, nt, modulation, snr_db, seed, symbols_per_channel);
}

mimo_channel_impl::mimo_channel_impl(int nr,
                                     int nt,
                                     const std::string& modulation,
                                     double snr_db,
                                     uint64_t seed,
                                     int symbols_per_channel)
    : gr::block(
          "mimo_channel", bits_signature(nr, nt, modulation), channel_signature(nr, nt)),
      d_simulator(
          checked_shape(nr, nt), ::mimo_gpu::modulation_from_string(modulation), seed),
      d_symbols_per_channel(checked_symbols_per_channel(symbols_per_channel)),
      d_batches(std::max<size_t>(1, k_max_batch / size_t(symbols_per_channel)),
                d_logger,
                symbols_per_channel),
      d_snr_db(checked_snr_db(snr_db)),
      d_noise_var(::mimo_gpu::noise_variance_from_snr_db(snr_db))
{
    // noutput_items counts y items (whole channels); H gets one item per S of them.
    set_output_multiple(d_symbols_per_channel);
    // Input item k is y item k; H item k / S belongs to it.
    set_tag_propagation_policy(TPP_CUSTOM);
    // Both outputs get buffers of the same item count: GNU Radio hands work() as
    // many items as the fuller output buffer has room for.
    request_batch_sized_output_buffers(*this, k_max_batch);
    d_logger->info("{}x{} {} channel, S = {} symbols per channel, SNR {} dB (N0 {}), "
                   "runs on the CPU",
                   nr,
                   nt,
                   ::mimo_gpu::to_string(d_simulator.constel().kind()),
                   d_symbols_per_channel,
                   d_snr_db,
                   d_noise_var);
}

void mimo_channel_impl::set_snr_db(double snr_db)
{
    checked_snr_db(snr_db);
    gr::thread::scoped_lock lock(d_mutex);
    d_snr_db = snr_db;
    d_noise_var = ::mimo_gpu::noise_variance_from_snr_db(snr_db);
    d_tag_pending = true;
}

double mimo_channel_impl::snr_db() const
{
    gr::thread::scoped_lock lock(d_mutex);
    return d_snr_db;
}

double mimo_channel_impl::noise_var() const
{
    gr::thread::scoped_lock lock(d_mutex);
    return d_noise_var;
}

void mimo_channel_impl::forecast(int noutput_items, gr_vector_int& ninput_items_required)
{
    ninput_items_required[0] = noutput_items;
}

int mimo_channel_impl::general_work(int noutput_items,
                                    gr_vector_int& ninput_items,
                                    gr_vector_const_void_star& input_items,
                                    gr_vector_void_star& output_items)
{
    const auto bits = static_cast<const uint8_t*>(input_items[0]);
    auto H = static_cast<gr_complex*>(output_items[0]);
    auto y = static_cast<gr_complex*>(output_items[1]);
    const int S = d_symbols_per_channel;
    const int channels = std::min(noutput_items, ninput_items[0]) / S;
    if (channels <= 0)
        return 0;

    if (!d_batches.start(nitems_read(0)))
        return WORK_DONE;
    gr::thread::scoped_lock lock(d_mutex);
    if (d_tag_pending) {
        for (int port = 0; port < 2; ++port)
            add_item_tag(port,
                         nitems_written(port),
                         k_noise_var_key,
                         pmt::from_double(d_noise_var));
        d_tag_pending = false;
    }
    const auto shape = d_simulator.shape();
    const size_t bits_per_channel = size_t(S) * d_simulator.bits_per_problem();
    d_batches.run(0, channels, [&](int first, int count) {
        d_simulator.run(bits + first * bits_per_channel,
                        count,
                        S,
                        d_noise_var,
                        H + size_t(first) * shape.nr * shape.nt,
                        y + size_t(first) * S * shape.nr);
    });
    const int done = d_batches.finish(channels);
    if (done < 0)
        return WORK_DONE;
    // The input's tags go to y at the same offset and to H at the channel's item.
    std::vector<gr::tag_t> tags;
    get_tags_in_window(tags, 0, 0, uint64_t(done) * S);
    for (auto tag : tags) {
        add_item_tag(1, tag);
        tag.offset /= uint64_t(S);
        add_item_tag(0, tag);
    }
    consume(0, done * S);
    produce(0, done);
    produce(1, done * S);
    return WORK_CALLED_PRODUCE;
}

bool mimo_channel_impl::stop()
{
    // Problems left at the end that do not fill a channel of S: say so rather
    // than drop them silently.
    if (d_symbols_per_channel > 1 && detail() && detail()->ninputs() == 1 &&
        detail()->input(0)->done()) {
        const int left = detail()->input(0)->items_available();
        if (left > 0)
            d_logger->error("the bit stream ended with {} problem(s) that do not fill a "
                            "channel of S = {} symbols: they were not simulated",
                            left,
                            d_symbols_per_channel);
    }
    return true;
}

} // namespace mimo_gpu
} // namespace gr
