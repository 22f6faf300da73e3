/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "batch_runner.h"
#include "block_parameters.h"
#include "mimo_channel_impl.h"
#include "noise_var_tags.h"

#include <gnuradio/io_signature.h>

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

mimo_channel::sptr mimo_channel::make(
    int nr, int nt, const std::string& modulation, double snr_db, uint64_t seed)
{
    return gnuradio::make_block_sptr<mimo_channel_impl>(nr, nt, modulation, snr_db, seed);
}

mimo_channel_impl::mimo_channel_impl(
    int nr, int nt, const std::string& modulation, double snr_db, uint64_t seed)
    : gr::sync_block(
          "mimo_channel", bits_signature(nr, nt, modulation), channel_signature(nr, nt)),
      d_simulator(
          checked_shape(nr, nt), ::mimo_gpu::modulation_from_string(modulation), seed),
      d_batches(k_max_batch, d_logger),
      d_snr_db(checked_snr_db(snr_db)),
      d_noise_var(::mimo_gpu::noise_variance_from_snr_db(snr_db))
{
    request_batch_sized_output_buffers(*this, k_max_batch);
    d_logger->info("{}x{} {} channel, SNR {} dB (N0 {}), runs on the CPU",
                   nr,
                   nt,
                   ::mimo_gpu::to_string(d_simulator.constel().kind()),
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

int mimo_channel_impl::work(int noutput_items,
                            gr_vector_const_void_star& input_items,
                            gr_vector_void_star& output_items)
{
    const auto bits = static_cast<const uint8_t*>(input_items[0]);
    auto H = static_cast<gr_complex*>(output_items[0]);
    auto y = static_cast<gr_complex*>(output_items[1]);

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
    const size_t bits_per_problem = d_simulator.bits_per_problem();
    d_batches.run(0, noutput_items, [&](int first, int count) {
        d_simulator.run(bits + first * bits_per_problem,
                        count,
                        d_noise_var,
                        H + size_t(first) * shape.nr * shape.nt,
                        y + size_t(first) * shape.nr);
    });
    return d_batches.finish(noutput_items);
}

} // namespace mimo_gpu
} // namespace gr
