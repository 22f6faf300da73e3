/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "mimo_detector_impl.h"
#include "plumbing/block_parameters.h"
#include "plumbing/noise_var_tags.h"

#include <gnuradio/block_detail.h>
#include <gnuradio/buffer_reader.h>
#include <gnuradio/io_signature.h>
#include <gnuradio/mimo_gpu/device_buffer.h>
#include <mimo_gpu/detector_registry.h>

#include <algorithm>
#include <exception>

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
                                        const std::string& policy,
                                        bool device_buffers)
{
    const ::mimo_gpu::detector_spec spec{ algorithm,
                                          ::mimo_gpu::parse_parameter_list(parameters) };
    return make_from_spec(spec,
                          nr,
                          nt,
                          modulation,
                          noise_var,
                          symbols_per_channel,
                          backend,
                          max_batch,
                          policy,
                          device_buffers);
}

mimo_detector::sptr mimo_detector::make_from_spec(const ::mimo_gpu::detector_spec& spec,
                                                  int nr,
                                                  int nt,
                                                  const std::string& modulation,
                                                  double noise_var,
                                                  int symbols_per_channel,
                                                  const std::string& backend,
                                                  int max_batch,
                                                  const std::string& policy,
                                                  bool device_buffers)
{
    const ::mimo_gpu::mimo_shape shape = checked_shape(nr, nt);
    checked_symbols_per_channel(symbols_per_channel);
    checked_max_batch(max_batch);
    const auto bad_problems = ::mimo_gpu::parse_bad_problem_policy(policy);
    auto core = ::mimo_gpu::make_detector(spec,
                                          shape,
                                          ::mimo_gpu::modulation_from_string(modulation),
                                          ::mimo_gpu::backend_from_string(backend));
    core->set_bad_problem_policy(bad_problems);
    // Device buffers where the detector runs on CUDA from device memory; else host.
    const bool device = device_buffers &&
                        core->active_backend() == ::mimo_gpu::backend::cuda &&
                        core->capabilities().device_path;
    return gnuradio::make_block_sptr<mimo_detector_impl>(
        std::move(core), noise_var, symbols_per_channel, max_batch, device);
}

std::vector<std::string> mimo_detector::algorithms()
{
    return ::mimo_gpu::detector_names();
}

namespace {

/// Received vectors waiting at most this long for a whole batch by default.
constexpr std::chrono::milliseconds k_default_max_wait{ 5 };
/// Frames in flight per GPU (copy in, kernels, copy out of different frames
/// overlap), and how many frames the upstream buffers hold (twice the output
/// multiple, see batch_gate): enough that upstream blocks keep writing while a
/// frame is in flight. 2 measured better than 4 on the H100 (14.7 against 12.9 M
/// problems/s for 4x4 N-way from host sources): smaller buffers stay in cache.
constexpr int k_slots = 3;
constexpr int k_buffered_frames = 2;
/// Upstream buffers stay below this size for the largest items (massive-MIMO H).
constexpr size_t k_max_buffer_bytes = size_t(64) << 20;

/// Ordinary input types even with device buffers (device_buffer.h says why).
gr::io_signature::sptr detector_inputs(const ::mimo_gpu::detector& core)
{
    return gr::io_signature::make2(2,
                                   2,
                                   sizeof(gr_complex) * core.shape().nr * core.shape().nt,
                                   sizeof(gr_complex) * core.shape().nr);
}

gr::io_signature::sptr detector_output(const ::mimo_gpu::detector& core, bool device)
{
    const int llrs = sizeof(float) * core.llrs_per_problem();
    return device ? gr::io_signature::make(1, 1, llrs, device_buffer::type)
                  : gr::io_signature::make(1, 1, llrs);
}

int frame_channels(const ::mimo_gpu::detector& core,
                   int symbols_per_channel,
                   int max_batch)
{
    const size_t h_bytes = sizeof(gr_complex) * core.shape().nr * core.shape().nt;
    const size_t by_bytes = k_max_buffer_bytes / (2 * k_buffered_frames * h_bytes);
    return int(std::max<size_t>(
        1, std::min<size_t>(size_t(max_batch / symbols_per_channel), by_bytes)));
}

} // namespace

mimo_detector_impl::mimo_detector_impl(std::unique_ptr<::mimo_gpu::detector> core,
                                       double noise_var,
                                       int symbols_per_channel,
                                       int max_batch,
                                       bool device_buffers)
    : gr::block("mimo_detector",
                detector_inputs(*core),
                detector_output(*core, device_buffers)),
      d_core(std::move(core)),
      d_symbols_per_channel(symbols_per_channel),
      d_frame_channels(frame_channels(*d_core, symbols_per_channel, max_batch)),
      d_gate(
          d_frame_channels * symbols_per_channel, k_buffered_frames, k_default_max_wait),
      d_noise_var(checked_noise_var(noise_var)),
      d_erasures(d_logger),
      d_ignored_noise_var(d_logger, "ignored noise_var tags")
{
    d_gate.install(*this); // output multiple: whole frames of whole channels
    // Output item k is y item k: y's tags go along 1:1; H's (one per S items) do not.
    set_tag_propagation_policy(TPP_CUSTOM);
    if (device_buffers)
        d_device_stream = std::make_unique<::mimo_gpu::device_stream>();
    else
        rebuild_pipeline();
    d_logger->info("{} detector, {}x{} {}, S = {}, parameters '{}', bad problems: {}, "
                   "frames of {} received vectors, on backend {}{}",
                   d_core->name(),
                   d_core->shape().nr,
                   d_core->shape().nt,
                   ::mimo_gpu::to_string(d_core->mod()),
                   d_symbols_per_channel,
                   ::mimo_gpu::format_parameter_list(d_core->parameters()),
                   ::mimo_gpu::to_string(d_core->bad_problems()),
                   d_frame_channels * d_symbols_per_channel,
                   active_backend(),
                   device_buffers ? ", device buffers" : "");
}

void mimo_detector_impl::rebuild_pipeline()
{
    ::mimo_gpu::pipeline_config config;
    config.detector = d_core->name();
    config.config = { d_core->shape(), d_core->mod(), d_core->parameters() };
    config.slots_per_device = k_slots;
    config.max_channels = size_t(d_frame_channels);
    config.symbols_per_channel = d_symbols_per_channel;
    config.requested = d_core->active_backend();
    d_pipeline.reset(); // drains the old one first
    d_pipeline = std::make_unique<::mimo_gpu::detector_pipeline>(config);
    d_parameters_changed = false;
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
    // The pipeline's detectors are remade between frames (device buffers use d_core).
    d_parameters_changed = d_pipeline != nullptr;
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

void mimo_detector_impl::set_max_wait_ms(double ms)
{
    if (!(ms >= 0 && ms <= 1e6))
        throw std::invalid_argument("max_wait_ms must be in 0..1e6, got " +
                                    std::to_string(ms));
    gr::thread::scoped_lock lock(d_mutex);
    d_gate.set_max_wait(*this, std::chrono::milliseconds(std::lround(ms)));
}

double mimo_detector_impl::max_wait_ms() const
{
    gr::thread::scoped_lock lock(d_mutex);
    return double(d_gate.max_wait().count());
}

int mimo_detector_impl::items_in_flight() const
{
    int items = 0;
    for (const auto& f : d_in_flight)
        items += f.channels * d_symbols_per_channel;
    return items;
}

bool mimo_detector_impl::single_mapped_inputs() const
{
    const auto d = detail();
    for (int i = 0; d && i < d->ninputs(); ++i)
        if (d->input(i)->buffer()->get_mapping_type() ==
            gr::buffer_mapping_type::single_mapped)
            return true;
    return false;
}

bool mimo_detector_impl::inputs_ended() const
{
    const auto d = detail();
    return d && (d->input(0)->done() || d->input(1)->done());
}

void mimo_detector_impl::forecast(int noutput_items, gr_vector_int& ninput_items_required)
{
    const int S = d_symbols_per_channel;
    if (!d_in_flight.empty() || d_parameters_changed) {
        // Frames in flight are collected (and the tail flushed) without new input.
        ninput_items_required[0] = ninput_items_required[1] = 0;
        return;
    }
    int wanted = std::min(noutput_items, d_gate.batch_items());
    if (const auto d = detail()) {
        const auto y = d->input(1);
        // The same measure as general_work's: whole channels that both inputs hold,
        // so a "due" here is a call that work() does not turn down (which would spin).
        const int waiting =
            std::min(d->input(0)->items_available() * S, y->items_available()) / S * S;
        gr::thread::scoped_lock lock(d_mutex);
        // Once an input has ended, never ask it for more than it may still hold:
        // GNU Radio ends a block whose ended input cannot satisfy its forecast.
        const bool ended = inputs_ended();
        if (ended || d_gate.due(waiting, ended, y->max_possible_items_available()))
            wanted = S; // one channel is enough: take whatever waits
    }
    ninput_items_required[0] = (wanted + S - 1) / S;
    ninput_items_required[1] = wanted;
}

void mimo_detector_impl::submit(
    const gr_complex* H, const gr_complex* y, float* llr, int first_item, int channels)
{
    const int S = d_symbols_per_channel;
    const auto shape = d_core->shape();
    const size_t llrs_per_symbol = d_core->llrs_per_problem();
    std::vector<gr::tag_t> tags;
    get_tags_in_window(tags, 1, first_item, first_item + channels * S, k_noise_var_key);
    // N0 changes at channel boundaries: a tag applies from the first symbol of its
    // channel.
    float n0 = d_noise_var;
    const auto segments = split_at_noise_var_tags(
        tags, nitems_read(1) + first_item, channels * S, n0, d_ignored_noise_var);
    d_noise_var = n0;
    const int first_channel = first_item / S;
    for (size_t i = 0; i < segments.size(); ++i) {
        const int begin = segments[i].begin / S;
        const int end = i + 1 < segments.size() ? segments[i + 1].begin / S : channels;
        for (int c = begin; c < end; c += d_frame_channels) {
            const int count = std::min(d_frame_channels, end - c);
            const size_t channel = size_t(first_channel + c);
            d_pipeline->submit(H + channel * shape.nr * shape.nt,
                               y + channel * S * shape.nr,
                               size_t(count),
                               segments[i].noise_var,
                               llr + channel * S * llrs_per_symbol);
            d_in_flight.push_back({ count, d_calls });
        }
    }
}

int mimo_detector_impl::collect(bool all)
{
    const int S = d_symbols_per_channel;
    int items = 0;
    while (!d_in_flight.empty() && (all || d_in_flight.front().call < d_calls)) {
        const int frame_items = d_in_flight.front().channels * S;
        d_in_flight.pop_front(); // collect() takes the frame, whether it succeeded or not
        const uint64_t first = nitems_written(0) + uint64_t(items);
        try {
            const auto result = d_pipeline->collect();
            if (d_failed)
                continue; // frames after a failure are dropped: the stream ends
            if (d_core->bad_problems() == ::mimo_gpu::bad_problem_policy::stop &&
                result.report.erased > 0)
                throw std::invalid_argument(result.report.describe());
            for (const auto& tag : d_erasures.record(result.report, first))
                add_item_tag(0, tag);
            items += frame_items;
        } catch (const std::exception& e) {
            if (!d_failed)
                d_logger->error("stream items {}..{}: {}; ending the stream",
                                first,
                                first + frame_items - 1,
                                e.what());
            d_failed = true;
        }
    }
    return items;
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
    ++d_calls;

    gr::thread::scoped_lock lock(d_mutex);
    if (d_device_stream) {
        const int channels =
            std::min({ ninput_items[0], ninput_items[1] / S, noutput_items / S });
        const auto reader = detail()->input(1);
        if (d_failed || device_outputs_failed(*this))
            return WORK_DONE;
        if (channels <= 0 || !d_gate.due(channels * S,
                                         inputs_ended(),
                                         reader->max_possible_items_available()))
            return 0;
        d_gate.taken();
        d_trace.begin();
        const int done = device_work(channels, H, y, llr);
        d_trace.end(done);
        if (done == 0 && d_failed)
            return WORK_DONE;
        return done;
    }
    const int pending = items_in_flight();
    bool submitted = false;
    if (!d_failed && !d_parameters_changed) {
        // New channels beyond the frames in flight (which hold the windows' start).
        const int channels = std::min({ ninput_items[0] - pending / S,
                                        (ninput_items[1] - pending) / S,
                                        (noutput_items - pending) / S });
        const auto reader = detail()->input(1);
        if (channels > 0 &&
            d_gate.due(channels * S,
                       inputs_ended(),
                       reader->max_possible_items_available() - pending)) {
            try {
                submit(H, y, llr, pending, channels);
                submitted = true;
            } catch (const std::exception& e) {
                d_logger->error("stream items {}..: {}; ending the stream",
                                nitems_read(1) + pending,
                                e.what());
                d_failed = true;
            }
            d_gate.taken();
        }
    }
    // Frames of earlier calls; all of them when nothing new came (the tail, or
    // before a parameter change remakes the pipeline's detectors), or when an
    // input is a single-mapped (custom) buffer, which GNU Radio may move between
    // work() calls under a frame still reading it.
    const int done = collect(!submitted || single_mapped_inputs());
    if (d_in_flight.empty() && d_parameters_changed) {
        try {
            rebuild_pipeline();
        } catch (const std::exception& e) {
            d_logger->error(
                "remaking the detectors after a parameter change: {}; ending the "
                "stream",
                e.what());
            d_failed = true; // an exception escaping work() would hang the flowgraph
        }
    }

    std::vector<gr::tag_t> y_tags;
    get_tags_in_window(y_tags, 1, 0, done);
    for (const auto& tag : y_tags)
        add_item_tag(0, tag); // same absolute offset: output and y advance together
    consume(0, done / S);
    consume(1, done);
    if (d_failed && d_in_flight.empty() && done == 0)
        return WORK_DONE;
    return done;
}

int mimo_detector_impl::device_work(int channels,
                                    const gr_complex* H,
                                    const gr_complex* y,
                                    float* llr)
{
    const int S = d_symbols_per_channel;
    const auto shape = d_core->shape();
    const size_t llrs_per_symbol = d_core->llrs_per_problem();
    std::vector<gr::tag_t> tags;
    get_tags_in_window(tags, 1, 0, channels * S, k_noise_var_key);
    float n0 = d_noise_var;
    const auto segments = split_at_noise_var_tags(
        tags, nitems_read(1), channels * S, n0, d_ignored_noise_var);
    d_noise_var = n0;
    const auto stream = d_device_stream->get();
    try {
        // From an ordinary upstream block the inputs are pageable host memory,
        // which kernels cannot read: staged to the device first.
        H = d_H_staging.device_view(H, size_t(channels) * shape.nr * shape.nt);
        y = d_y_staging.device_view(y, size_t(channels) * S * shape.nr);
        for (size_t i = 0; i < segments.size(); ++i) {
            const int begin = segments[i].begin / S;
            const int end =
                i + 1 < segments.size() ? segments[i + 1].begin / S : channels;
            ::mimo_gpu::detector_input in;
            in.H = H + size_t(begin) * shape.nr * shape.nt;
            in.y = y + size_t(begin) * S * shape.nr;
            in.channels = size_t(end - begin);
            in.symbols_per_channel = S;
            in.n0 = segments[i].noise_var;
            d_core->detect_device(in, llr + size_t(begin) * S * llrs_per_symbol, stream);
        }
        d_device_stream
            ->synchronize(); // the items are complete when GNU Radio hands them on
        // One report for every segment's call, each erased problem listed.
        const auto report = d_core->check_device_status(stream);
        for (const auto& tag : d_erasures.record(report, nitems_written(0)))
            add_item_tag(0, tag);
    } catch (const std::exception& e) {
        d_logger->error("stream items {}..{}: {}; ending the stream",
                        nitems_read(1),
                        nitems_read(1) + uint64_t(channels) * S - 1,
                        e.what());
        d_failed = true;
        return 0;
    }
    std::vector<gr::tag_t> y_tags;
    get_tags_in_window(y_tags, 1, 0, channels * S);
    for (const auto& tag : y_tags)
        add_item_tag(0, tag);
    consume(0, channels);
    consume(1, channels * S);
    return channels * S;
}

bool mimo_detector_impl::start()
{
    d_failed = false; // a flowgraph started again after a failure runs again
    return true;
}

bool mimo_detector_impl::stop()
{
    // A flowgraph stopped early (tb.stop()) leaves frames in flight: wait for them
    // before GNU Radio frees the buffers they read and write.
    while (!d_in_flight.empty() && d_pipeline) {
        try {
            d_pipeline->collect();
        } catch (const std::exception&) {
        }
        d_in_flight.pop_front();
    }
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
