/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "block_parameters.h"
#include "mimo_detector_impl.h"
#include "noise_var_tags.h"

#include <gnuradio/block_detail.h>
#include <gnuradio/buffer_reader.h>
#include <gnuradio/io_signature.h>
#include <mimo_gpu/detector_registry.h>

#include <algorithm>

namespace gr {
namespace mimo_gpu {

mimo_detector::sptr mimo_detector::make(const std::string& algorithm,
                                        int nr,
                                        int nt,
                                        const std::string& modulation,
                                        const std::string& parameters,
                                        double noise_var,
                                        int symbols_per_channel,
                                        const std::string& backend,
                                        int max_batch,
                                        const std::string& policy)
{
    ::mimo_gpu::detector_config config;
    config.shape = checked_shape(nr, nt);
    config.mod = ::mimo_gpu::modulation_from_string(modulation);
    config.parameters = ::mimo_gpu::parse_parameter_list(parameters);
    if (symbols_per_channel < 1)
        throw std::invalid_argument("symbols_per_channel must be >= 1, got " +
                                    std::to_string(symbols_per_channel));
    checked_max_batch(max_batch);
    const auto bad_problems = ::mimo_gpu::parse_bad_problem_policy(policy);
    auto core = ::mimo_gpu::make_detector(
        algorithm, config, ::mimo_gpu::backend_from_string(backend));
    core->set_bad_problem_policy(bad_problems);
    return gnuradio::make_block_sptr<mimo_detector_impl>(
        std::move(core), noise_var, symbols_per_channel, max_batch);
}

std::vector<std::string> mimo_detector::algorithms()
{
    return ::mimo_gpu::detector_names();
}

mimo_detector_impl::mimo_detector_impl(std::unique_ptr<::mimo_gpu::detector> core,
                                       double noise_var,
                                       int symbols_per_channel,
                                       int max_batch)
    : gr::block("mimo_detector",
                channel_signature(core->shape().nr, core->shape().nt),
                gr::io_signature::make(1, 1, sizeof(float) * core->llrs_per_problem())),
      d_core(std::move(core)),
      d_symbols_per_channel(symbols_per_channel),
      d_batches(
          std::max(1, max_batch / symbols_per_channel), d_logger, symbols_per_channel),
      d_noise_var(checked_noise_var(noise_var)),
      d_erasures(d_logger)
{
    set_output_multiple(d_symbols_per_channel);
    // Output item k is y item k: y's tags go along 1:1; H's (one per S items) do not.
    set_tag_propagation_policy(TPP_CUSTOM);
    request_batch_sized_output_buffers(*this, max_batch);
    d_logger->info("{} detector, {}x{} {}, S = {}, parameters '{}', bad problems: {}, on "
                   "backend {}",
                   d_core->name(),
                   d_core->shape().nr,
                   d_core->shape().nt,
                   ::mimo_gpu::to_string(d_core->mod()),
                   d_symbols_per_channel,
                   ::mimo_gpu::format_parameter_list(d_core->parameters()),
                   ::mimo_gpu::to_string(d_core->bad_problems()),
                   active_backend());
}

void mimo_detector_impl::set_noise_var(double noise_var)
{
    const float checked = checked_noise_var(noise_var);
    gr::thread::scoped_lock lock(d_mutex);
    d_noise_var = checked;
}

double mimo_detector_impl::noise_var() const
{
    gr::thread::scoped_lock lock(d_mutex);
    return d_noise_var;
}

void mimo_detector_impl::set_parameter(const std::string& name, double value)
{
    gr::thread::scoped_lock lock(d_mutex);
    d_core->set_parameter(name, value); // throws for an unknown, fixed or bad value
}

double mimo_detector_impl::parameter(const std::string& name) const
{
    gr::thread::scoped_lock lock(d_mutex);
    return d_core->parameter(name);
}

std::string mimo_detector_impl::active_backend() const
{
    return ::mimo_gpu::to_string(d_core->active_backend());
}

void mimo_detector_impl::forecast(int noutput_items, gr_vector_int& ninput_items_required)
{
    const int S = d_symbols_per_channel;
    ninput_items_required[0] = (noutput_items + S - 1) / S;
    ninput_items_required[1] = noutput_items;
}

int mimo_detector_impl::general_work(int noutput_items,
                                     gr_vector_int& ninput_items,
                                     gr_vector_const_void_star& input_items,
                                     gr_vector_void_star& output_items)
{
    const auto H = static_cast<const gr_complex*>(input_items[0]);
    const auto y = static_cast<const gr_complex*>(input_items[1]);
    auto llr = static_cast<float*>(output_items[0]);
    const int S = d_symbols_per_channel;
    const auto shape = d_core->shape();
    const size_t llrs_per_symbol = d_core->llrs_per_problem();
    const int channels =
        std::min({ ninput_items[0], ninput_items[1] / S, noutput_items / S });
    if (channels <= 0)
        return 0;

    if (!d_batches.start(nitems_read(1)))
        return WORK_DONE;
    gr::thread::scoped_lock lock(d_mutex);
    std::vector<gr::tag_t> tags;
    get_tags_in_window(tags, 1, 0, channels * S, k_noise_var_key);
    // N0 changes at channel boundaries: a tag applies from the first symbol of its
    // channel.
    const auto segments = split_at_noise_var_tags(
        tags, nitems_read(1), channels * S, d_noise_var, d_logger);
    for (size_t i = 0; i < segments.size(); ++i) {
        const int begin = segments[i].begin / S;
        const int end = i + 1 < segments.size() ? segments[i + 1].begin / S : channels;
        d_batches.run(begin, end, [&](int first, int count) {
            ::mimo_gpu::detector_input in;
            in.H = H + size_t(first) * shape.nr * shape.nt;
            in.y = y + size_t(first) * S * shape.nr;
            in.channels = count;
            in.symbols_per_channel = S;
            in.n0 = segments[i].noise_var;
            const auto report =
                d_core->detect(in, llr + size_t(first) * S * llrs_per_symbol);
            for (const auto& tag :
                 d_erasures.record(report, nitems_written(0) + uint64_t(first) * S))
                add_item_tag(0, tag);
        });
    }
    const int done = d_batches.finish(channels);
    if (done < 0)
        return WORK_DONE;
    std::vector<gr::tag_t> y_tags;
    get_tags_in_window(y_tags, 1, 0, done * S);
    for (const auto& tag : y_tags)
        add_item_tag(0, tag); // same absolute offset: output and y advance together
    consume(0, done);
    consume(1, done * S);
    return done * S;
}

bool mimo_detector_impl::stop()
{
    d_erasures.summarize(nitems_written(0));
    // Received vectors left over at the end do not fill a channel of S symbols
    // (or have no H): say so rather than drop them silently.
    if (detail() && detail()->ninputs() == 2 && detail()->input(1)->done()) {
        const int left = detail()->input(1)->items_available();
        if (left > 0)
            d_logger->error(
                "the y stream ended with {} received vector(s) that do not fill "
                "a channel of S = {} symbols with an H item: they were not detected",
                left,
                d_symbols_per_channel);
    }
    return true;
}

} // namespace mimo_gpu
} // namespace gr
