/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "mimo_channel_source_impl.h"
#include "plumbing/block_parameters.h"
#include "plumbing/noise_var_tags.h"

#include <gnuradio/block_detail.h>
#include <gnuradio/buffer_double_mapped.h>
#include <gnuradio/buffer_reader.h>
#include <gnuradio/io_signature.h>
#include <gnuradio/mimo_gpu/device_buffer.h>
#include <mimo_gpu/channel_simulator.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace gr {
namespace mimo_gpu {

namespace {

gr::io_signature::sptr source_outputs(const ::mimo_gpu::channel_generator& g, bool device)
{
    const auto shape = g.shape();
    const std::vector<int> sizes{ int(sizeof(gr_complex)) * shape.nr * shape.nt,
                                  int(sizeof(gr_complex)) * shape.nr,
                                  g.bits_per_problem() };
    // The bits output may be left unconnected when the bits come in (input 0).
    if (device)
        return gr::io_signature::makev(
            2,
            3,
            sizes,
            { device_buffer::type, device_buffer::type, device_buffer::type });
    return gr::io_signature::makev(2,
                                   3,
                                   sizes,
                                   { gr::buffer_double_mapped::type,
                                     gr::buffer_double_mapped::type,
                                     gr::buffer_double_mapped::type });
}

double checked_snr_db(double snr_db)
{
    if (!std::isfinite(snr_db))
        throw std::invalid_argument("snr_db must be finite");
    ::mimo_gpu::noise_variance_from_snr_db(snr_db); // throws outside float's range
    return snr_db;
}

} // namespace

mimo_channel_source::sptr mimo_channel_source::make(int nr,
                                                    int nt,
                                                    const std::string& modulation,
                                                    double snr_db,
                                                    uint64_t seed,
                                                    int symbols_per_channel,
                                                    uint64_t problems,
                                                    const std::string& backend,
                                                    int max_batch,
                                                    bool device_buffers,
                                                    int bits_per_input_item)
{
    checked_max_batch(max_batch);
    checked_snr_db(snr_db);
    auto generator = std::make_unique<::mimo_gpu::channel_generator>(
        checked_shape(nr, nt),
        ::mimo_gpu::modulation_from_string(modulation),
        seed,
        symbols_per_channel,
        ::mimo_gpu::backend_from_string(backend));
    const int bpp = generator->bits_per_problem();
    if (bits_per_input_item == 0)
        bits_per_input_item = bpp;
    if (bits_per_input_item < 0 || bits_per_input_item % bpp != 0)
        throw std::invalid_argument(
            "mimo_channel_source: bits_per_input_item must be 0 or a "
            "positive multiple of nt*Q = " +
            std::to_string(bpp) + ", got " + std::to_string(bits_per_input_item));
    // With a bits input the block works in whole input items and whole channels.
    const uint64_t unit_problems =
        std::lcm(uint64_t(symbols_per_channel), uint64_t(bits_per_input_item / bpp));
    if (unit_problems > (uint64_t(1) << 24))
        throw std::invalid_argument(
            "mimo_channel_source: whole channels of S = " +
            std::to_string(symbols_per_channel) + " that take whole input items of " +
            std::to_string(bits_per_input_item / bpp) +
            " received vectors come in units of " + std::to_string(unit_problems) +
            " received vectors, more than 2^24");
    const bool device =
        device_buffers && generator->active_backend() == ::mimo_gpu::backend::cuda;
    return gnuradio::make_block_sptr<mimo_channel_source_impl>(
        std::move(generator), snr_db, problems, max_batch, device, bits_per_input_item);
}

mimo_channel_source_impl::mimo_channel_source_impl(
    std::unique_ptr<::mimo_gpu::channel_generator> generator,
    double snr_db,
    uint64_t problems,
    int max_batch,
    bool device_buffers,
    int bits_per_input_item)
    : gr::block("mimo_channel_source",
                // the optional bits to send; an ordinary type (device_buffer.h says why)
                gr::io_signature::make(0, 1, bits_per_input_item),
                source_outputs(*generator, device_buffers)),
      d_generator(std::move(generator)),
      d_channels((problems + d_generator->symbols_per_channel() - 1) /
                 d_generator->symbols_per_channel()),
      d_problems_per_input_item(bits_per_input_item / d_generator->bits_per_problem()),
      d_unit_channels(
          std::lcm(d_generator->symbols_per_channel(), d_problems_per_input_item) /
          d_generator->symbols_per_channel()),
      d_max_channels(
          std::max(1, max_batch / d_generator->symbols_per_channel() / d_unit_channels) *
          d_unit_channels),
      d_snr_db(snr_db),
      d_noise_var(::mimo_gpu::noise_variance_from_snr_db(snr_db))
{
    if (device_buffers) // else generate() writes host memory, on either backend
        d_stream = std::make_unique<::mimo_gpu::device_stream>();
    // noutput_items counts y items (whole channels); H gets one per S of them.
    set_output_multiple(d_unit_channels * d_generator->symbols_per_channel());
    // y items per input item: GNU Radio sizes the bits input's buffer from it.
    set_relative_rate(uint64_t(d_problems_per_input_item), 1);
    set_tag_propagation_policy(TPP_DONT);
    request_batch_sized_output_buffers(*this, size_t(max_batch));
    set_min_output_buffer(0, std::max(1, max_batch / d_generator->symbols_per_channel()));
    d_logger->info("{}x{} channel source, S = {}, SNR {} dB, on {}{}",
                   d_generator->shape().nr,
                   d_generator->shape().nt,
                   d_generator->symbols_per_channel(),
                   d_snr_db,
                   active_backend(),
                   d_stream ? " (device buffers)" : "");
}

void mimo_channel_source_impl::set_snr_db(double snr_db)
{
    checked_snr_db(snr_db);
    gr::thread::scoped_lock lock(d_mutex);
    d_snr_db = snr_db;
    d_noise_var = ::mimo_gpu::noise_variance_from_snr_db(snr_db);
    d_tag_pending = true;
}

double mimo_channel_source_impl::snr_db() const
{
    gr::thread::scoped_lock lock(d_mutex);
    return d_snr_db;
}

double mimo_channel_source_impl::noise_var() const
{
    gr::thread::scoped_lock lock(d_mutex);
    return d_noise_var;
}

std::string mimo_channel_source_impl::active_backend() const
{
    return ::mimo_gpu::to_string(d_generator->active_backend());
}

bool mimo_channel_source_impl::check_topology(int ninputs, int noutputs)
{
    if (ninputs == 0 && noutputs < 3) {
        d_logger->error("output 2 (the bits sent) must be connected when the bits are "
                        "drawn here (no bits input)");
        return false;
    }
    return true;
}

void mimo_channel_source_impl::forecast(int noutput_items,
                                        gr_vector_int& ninput_items_required)
{
    if (!ninput_items_required.empty()) // whole input items (noutput_items is a multiple)
        ninput_items_required[0] = std::max(1, noutput_items / d_problems_per_input_item);
}

int mimo_channel_source_impl::general_work(int noutput_items,
                                           gr_vector_int& ninput_items,
                                           gr_vector_const_void_star& input_items,
                                           gr_vector_void_star& output_items)
{
    if (d_output_guard.must_stop(*this, *d_logger))
        return WORK_DONE;
    const int S = d_generator->symbols_per_channel();
    const uint64_t first = nitems_written(0); // channels so far
    if (d_channels && first >= d_channels)
        return WORK_DONE;
    uint64_t channels = uint64_t(std::min(noutput_items / S, d_max_channels));
    if (d_channels)
        channels = std::min(channels, d_channels - first);
    const bool given = !input_items.empty();
    if (given) { // whole input items only
        const uint64_t unit = uint64_t(d_unit_channels);
        if (d_channels && d_channels - first < unit)
            return WORK_DONE; // `problems` reached, to whole input items
        const uint64_t waiting =
            uint64_t(ninput_items[0]) * uint64_t(d_problems_per_input_item) / uint64_t(S);
        channels = std::min(channels, waiting) / unit * unit;
        if (channels == 0 && detail()->input(0)->done())
            return WORK_DONE; // the input ended; what is left makes no whole channel
    }
    if (channels == 0)
        return 0;
    auto H = static_cast<gr_complex*>(output_items[0]);
    auto y = static_cast<gr_complex*>(output_items[1]);
    auto bits =
        output_items.size() > 2 ? static_cast<uint8_t*>(output_items[2]) : nullptr;
    gr::thread::scoped_lock lock(d_mutex);
    if (d_tag_pending) {
        for (int port = 0; port < 2; ++port)
            add_item_tag(port,
                         nitems_written(port),
                         k_noise_var_key,
                         pmt::from_double(d_noise_var));
        d_tag_pending = false;
    }
    try {
        const size_t n_bits =
            size_t(channels) * size_t(S) * size_t(d_generator->bits_per_problem());
        const auto in = given ? static_cast<const uint8_t*>(input_items[0]) : nullptr;
        if (d_stream) {
            d_generator->generate_device(first,
                                         channels,
                                         d_noise_var,
                                         bits,
                                         H,
                                         y,
                                         d_stream->get(),
                                         in ? d_given_staging.device_view(in, n_bits)
                                            : nullptr);
            d_stream->synchronize(); // complete before GNU Radio hands the items on
        } else {
            d_generator->generate(first, channels, d_noise_var, bits, H, y, in);
        }
    } catch (const std::exception& e) {
        // An exception escaping work() would leave the flowgraph waiting forever.
        d_logger->error("channels {}..: {}; ending the stream", first, e.what());
        return WORK_DONE;
    }
    if (given)
        consume(0, int(channels * S / uint64_t(d_problems_per_input_item)));
    produce(0, int(channels));
    produce(1, int(channels) * S);
    if (bits)
        produce(2, int(channels) * S);
    return WORK_CALLED_PRODUCE;
}

} // namespace mimo_gpu
} // namespace gr
