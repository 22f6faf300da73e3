/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "idd_receiver_impl.h"
#include "plumbing/block_parameters.h"
#include "plumbing/noise_var_tags.h"
#include "plumbing/transport_block_codes.h"
#include <mimo_gpu/detector_registry.h>

#include <gnuradio/block_detail.h>
#include <gnuradio/buffer_reader.h>
#include <gnuradio/io_signature.h>

#include <algorithm>
#include <stdexcept>
#include <string>

namespace gr {
namespace mimo_gpu {

namespace {
const pmt::pmt_t k_crc_ok_key = pmt::mp("crc_ok");
const pmt::pmt_t k_iterations_key = pmt::mp("idd_iterations");
} // namespace

idd_receiver::sptr idd_receiver::make(const std::string& algorithm,
                                      int nr,
                                      int nt,
                                      const std::string& modulation,
                                      int A,
                                      int G,
                                      const std::string& parameters,
                                      int rv,
                                      int outer_iterations,
                                      int turbo_iterations,
                                      double noise_var,
                                      int symbols_per_channel,
                                      const std::string& backend,
                                      int max_blocks,
                                      const std::string& code)
{
    const transport_block_code chosen = transport_block_code_from_string(code);
    const ::mimo_gpu::mimo_shape shape = checked_shape(nr, nt);
    checked_noise_var(noise_var);
    checked_symbols_per_channel(symbols_per_channel);
    checked_max_batch(max_blocks, "max_blocks");
    const ::mimo_gpu::detector_spec spec{ algorithm,
                                          ::mimo_gpu::parse_parameter_list(parameters) };
    const auto requested = ::mimo_gpu::backend_from_string(backend);
    auto detector = ::mimo_gpu::make_detector(
        spec, shape, ::mimo_gpu::modulation_from_string(modulation), requested);
    // A bad received vector is erased (LLRs 0): its block fails its CRC.
    detector->set_bad_problem_policy(::mimo_gpu::bad_problem_policy::erase);
    ::mimo_gpu::iterative_receiver_config config;
    config.outer_iterations = outer_iterations;
    // Qm from the modulation; a codeword maps to at most 4 layers.
    const int Qm = detector->bits_per_symbol();
    auto decoder = make_transport_block_code_decoder(
        chosen, A, G, Qm, std::min(nt, 4), rv, "", turbo_iterations, 0.75, 64, requested);
    auto receiver = std::make_unique<::mimo_gpu::iterative_receiver>(
        std::move(detector), std::move(decoder), config);
    if (receiver->problems_per_block() % symbols_per_channel != 0)
        throw std::invalid_argument(
            "idd_receiver: a transport block's " +
            std::to_string(receiver->problems_per_block()) +
            " received vectors must be whole channels of symbols_per_channel = " +
            std::to_string(symbols_per_channel));
    return gnuradio::make_block_sptr<idd_receiver_impl>(
        std::move(receiver), algorithm, noise_var, symbols_per_channel, max_blocks);
}

idd_receiver_impl::idd_receiver_impl(
    std::unique_ptr<::mimo_gpu::iterative_receiver> receiver,
    std::string algorithm,
    double noise_var,
    int symbols_per_channel,
    int max_blocks)
    : gr::block("idd_receiver",
                channel_signature(receiver->detector_used().shape().nr,
                                  receiver->detector_used().shape().nt),
                gr::io_signature::make(1, 1, receiver->A())),
      d_receiver(std::move(receiver)),
      d_algorithm(std::move(algorithm)),
      d_S(symbols_per_channel),
      d_vectors_per_block(d_receiver->problems_per_block()),
      d_channels_per_block(d_vectors_per_block / d_S),
      d_max_blocks(max_blocks),
      d_noise_var(float(noise_var)),
      d_outer_iterations(d_receiver->outer_iterations()),
      d_ignored_noise_var(d_logger, "ignored noise_var tags")
{
    set_relative_rate(1, uint64_t(d_vectors_per_block));
    set_tag_propagation_policy(TPP_DONT);
    d_logger->info("{} + {} decoder, A {} -> G {}, {} received vectors a block, up "
                   "to {} passes, on {}",
                   d_algorithm,
                   d_receiver->code(),
                   d_receiver->A(),
                   d_receiver->G(),
                   d_vectors_per_block,
                   d_outer_iterations,
                   active_backend());
}

std::string idd_receiver_impl::active_backend() const
{
    return ::mimo_gpu::to_string(d_receiver->detector_used().active_backend());
}

int idd_receiver_impl::outer_iterations() const
{
    gr::thread::scoped_lock lock(d_mutex);
    return d_outer_iterations;
}

void idd_receiver_impl::set_outer_iterations(int outer_iterations)
{
    ::mimo_gpu::iterative_receiver_config c;
    c.outer_iterations = outer_iterations;
    c.validate(); // throws here, in the caller's thread
    gr::thread::scoped_lock lock(d_mutex);
    d_outer_iterations = outer_iterations;
}

void idd_receiver_impl::set_noise_var(double noise_var)
{
    const float checked = checked_noise_var(noise_var);
    gr::thread::scoped_lock lock(d_mutex);
    d_noise_var = checked;
}

double idd_receiver_impl::noise_var() const
{
    gr::thread::scoped_lock lock(d_mutex);
    return d_noise_var;
}

bool idd_receiver_impl::starved() const
{
    // done() first: the items written before it are then all counted.
    const auto d = detail();
    if (!d)
        return false;
    const int needed[2] = { d_channels_per_block, d_vectors_per_block };
    for (int i = 0; i < 2; ++i)
        if (d->input(i)->done() && d->input(i)->items_available() < needed[i])
            return true;
    return false;
}

bool idd_receiver_impl::inputs_ended() const
{
    const auto d = detail();
    return d && (d->input(0)->done() || d->input(1)->done());
}

void idd_receiver_impl::forecast(int noutput_items, gr_vector_int& ninput_items_required)
{
    if (inputs_ended()) { // work() takes what whole blocks are left, counts the rest
        ninput_items_required[0] = ninput_items_required[1] = 0;
        return;
    }
    const int wanted = std::min(noutput_items, d_max_blocks);
    ninput_items_required[0] = wanted * d_channels_per_block;
    ninput_items_required[1] = wanted * d_vectors_per_block;
}

void idd_receiver_impl::receive(const gr_complex* H,
                                const gr_complex* y,
                                size_t first,
                                size_t count,
                                float n0,
                                uint8_t* bits)
{
    const auto shape = d_receiver->detector_used().shape();
    ::mimo_gpu::detector_input in;
    in.H = H + first * d_channels_per_block * size_t(shape.nr * shape.nt);
    in.y = y + first * d_vectors_per_block * size_t(shape.nr);
    in.channels = count * size_t(d_channels_per_block);
    in.symbols_per_channel = d_S;
    in.n0 = n0;
    const size_t A = size_t(d_receiver->A());
    const auto results = d_receiver->receive(in, count, bits + first * A);
    for (size_t t = 0; t < count; ++t) {
        const uint64_t item = nitems_written(0) + first + t;
        add_item_tag(
            0, item, k_iterations_key, pmt::from_long(results[t].outer_iterations));
        d_passes += uint64_t(results[t].outer_iterations);
        if (!results[t].decoded.crc_ok) {
            ++d_crc_failures;
            add_item_tag(0, item, k_crc_ok_key, pmt::PMT_F);
        }
    }
    d_blocks += count;
}

int idd_receiver_impl::general_work(int noutput_items,
                                    gr_vector_int& ninput_items,
                                    gr_vector_const_void_star& input_items,
                                    gr_vector_void_star& output_items)
{
    const int whole = std::min(ninput_items[0] / d_channels_per_block,
                               ninput_items[1] / d_vectors_per_block);
    if (whole == 0) {
        if (!starved())
            return 0; // the other stream may still bring its part
        if (ninput_items[1] > 0)
            d_logger->warn("{} received vectors at the end of the stream make no whole "
                           "transport block; dropped",
                           ninput_items[1]);
        d_dropped_vectors += uint64_t(ninput_items[1]);
        consume(0, ninput_items[0]);
        consume(1, ninput_items[1]);
        return WORK_DONE;
    }
    const size_t count = size_t(std::min({ whole, noutput_items, d_max_blocks }));
    float n0;
    {
        gr::thread::scoped_lock lock(d_mutex);
        n0 = d_noise_var;
        if (d_outer_iterations != d_receiver->outer_iterations())
            d_receiver->set_outer_iterations(d_outer_iterations);
    }
    // Each transport block takes the N0 in force at its first received vector;
    // consecutive blocks with one N0 are received in one call.
    std::vector<gr::tag_t> tags;
    const int vectors = int(count) * d_vectors_per_block;
    get_tags_in_window(tags, 1, 0, vectors, k_noise_var_key);
    const auto segments =
        split_at_noise_var_tags(tags, nitems_read(1), vectors, n0, d_ignored_noise_var);
    std::vector<float> block_n0(count);
    for (const auto& s : segments)
        for (size_t t = 0; t < count; ++t)
            if (int(t) * d_vectors_per_block >= s.begin &&
                int(t) * d_vectors_per_block < s.end)
                block_n0[t] = s.noise_var;
    {
        gr::thread::scoped_lock lock(d_mutex);
        d_noise_var = n0; // in force after these items
    }
    const auto H = static_cast<const gr_complex*>(input_items[0]);
    const auto y = static_cast<const gr_complex*>(input_items[1]);
    const auto bits = static_cast<uint8_t*>(output_items[0]);
    try {
        for (size_t first = 0; first < count;) {
            size_t last = first + 1;
            while (last < count && block_n0[last] == block_n0[first])
                ++last;
            receive(H, y, first, last - first, block_n0[first], bits);
            first = last;
        }
    } catch (const std::exception& e) {
        d_logger->error(
            "transport blocks {}..: {}; ending the stream", nitems_written(0), e.what());
        return WORK_DONE; // an exception escaping work() would hang the flowgraph
    }
    consume(0, int(count) * d_channels_per_block);
    consume(1, vectors);
    produce(0, int(count));
    return WORK_CALLED_PRODUCE;
}

} // namespace mimo_gpu
} // namespace gr
