/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "ofdm_rx_impl.h"
#include "plumbing/noise_var_tags.h"
#include "plumbing/ofdm_parameters.h"

#include <gnuradio/block_detail.h>
#include <gnuradio/buffer_double_mapped.h>
#include <gnuradio/buffer_reader.h>
#include <gnuradio/io_signature.h>
#include <gnuradio/mimo_gpu/device_buffer.h>
#include <mimo_gpu/device_memory.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace gr {
namespace mimo_gpu {

namespace {
const pmt::pmt_t k_frame_key = pmt::mp("ofdm_frame");
constexpr int k_buffered_frames = 6;
/// Where the receiver hands back batches of several frames (the CPU's, up to
/// eight side by side; the GPU's short frames, up to eight a launch sequence,
/// even where a stream at the air rate never fills one): room for two batches
/// and a few frames, or a call would rarely be given room for one (LTE 20 MHz
/// on 16 cores, with six: three frames
/// at most, batches of two on average); as many as k_batch_buffer_bytes hold
/// for both outputs, but never fewer than k_buffered_frames (NR 100 MHz 4x4:
/// 14 MB a frame, six frames; its window holds batches to four anyway).
constexpr size_t k_batch_buffer_bytes = size_t(64) << 20;

::mimo_gpu::time_interpolation time_from(const std::string& name)
{
    if (name == "hold")
        return ::mimo_gpu::time_interpolation::hold;
    if (name == "linear")
        return ::mimo_gpu::time_interpolation::linear;
    if (name == "lmmse")
        return ::mimo_gpu::time_interpolation::lmmse;
    throw std::invalid_argument(
        "ofdm_rx: time_interpolation must be \"hold\", \"linear\" or \"lmmse\", got \"" +
        name + "\"");
}

::mimo_gpu::frequency_interpolation frequency_from(const std::string& name)
{
    if (name == "lmmse")
        return ::mimo_gpu::frequency_interpolation::lmmse;
    if (name == "linear")
        return ::mimo_gpu::frequency_interpolation::linear;
    throw std::invalid_argument(
        "ofdm_rx: frequency_interpolation must be \"lmmse\" or \"linear\", got \"" +
        name + "\"");
}

gr::io_signature::sptr rx_outputs(const ::mimo_gpu::ofdm_grid& grid, int nr, bool device)
{
    const gr::buffer_type type =
        device ? device_buffer::type : gr::buffer_double_mapped::type;
    return gr::io_signature::make2(2,
                                   2,
                                   nr * grid.nt * int(sizeof(gr_complex)),
                                   nr * int(sizeof(gr_complex)),
                                   type,
                                   type);
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
                            const std::string& backend,
                            bool device_buffers,
                            const std::vector<int>& pilot_positions,
                            bool noise_per_antenna,
                            bool across_frames,
                            double gpu_batch_speed)
{
    ::mimo_gpu::ofdm_receiver_config c;
    c.nr = nr;
    c.gpu_batch_speed = gpu_batch_speed;
    c.noise_per_antenna = noise_per_antenna;
    c.across_frames = across_frames;
    c.interpolation = time_from(time_interpolation);
    c.frequency = frequency_from(frequency_interpolation);
    c.requested = ::mimo_gpu::backend_from_string(backend);
    return gnuradio::make_block_sptr<ofdm_rx_impl>(
        ofdm_frame(grid, nt, modulation, slots, data_symbols, pilot_positions),
        c,
        device_buffers);
}

ofdm_rx_impl::ofdm_rx_impl(const ::mimo_gpu::ofdm_grid& grid,
                           const ::mimo_gpu::ofdm_receiver_config& config,
                           bool device_buffers)
    : gr::block(
          "ofdm_rx",
          gr::io_signature::make(config.nr, config.nr, sizeof(gr_complex)),
          // The receiver is made (and the backend known) before the signature: see below.
          gr::io_signature::make2(2, 2, 1, 1)),
      d_grid(grid),
      d_config(config),
      d_receiver(std::make_unique<::mimo_gpu::ofdm_stream_receiver>(grid, config)),
      d_backend(d_receiver->active_backend()),
      d_symbols_per_channel(d_receiver->symbols_per_channel()),
      d_device_outputs(device_buffers && d_backend == ::mimo_gpu::backend::cuda),
      d_H_per_frame(int(d_receiver->H_items_per_frame())),
      d_y_per_frame(int(d_receiver->y_items_per_frame())),
      d_chunk(std::max(grid.fft_size, grid.frame_samples() / 4)),
      d_inputs(size_t(config.nr))
{
    set_output_signature(rx_outputs(grid, config.nr, d_device_outputs));
    // noutput_items counts y items, a frame's worth at a time (H has as many or fewer).
    set_output_multiple(d_y_per_frame);
    // Several frames between the receiver and the detector, so that neither waits
    // for the other's call to end (NR 100 MHz 4x4 chain on the H100: 1.07x real
    // time with six frames against 0.93x with GNU Radio's two).
    // GNU Radio gives one noutput_items for both outputs, the least room among
    // them, counted here in y items: H's buffer holds as many items as y's, or a
    // call could never be given more than one frame (H has up to 13x fewer items
    // a frame; LTE 20 MHz ran a frame a call, 0.2 ms each).
    const int buffered = buffered_frames();
    set_min_output_buffer(0, buffered * d_y_per_frame);
    set_min_output_buffer(1, buffered * d_y_per_frame);
    set_relative_rate(uint64_t(d_y_per_frame), uint64_t(grid.frame_samples()));
    // A receiver that waits for a batch of frames does so up to
    // max_batch_wait_ms: the scheduler looks at the block again after that long
    // even when no samples come (a source that pauses), so the frames there are go then.
    if (d_receiver->max_batch_frames() > 1)
        set_blkd_input_timer_value(
            unsigned(std::max(1.0, std::ceil(config.max_batch_wait_ms))));
    set_tag_propagation_policy(TPP_DONT);
    d_receiver->set_frames_in_flight(true);
    d_logger->info("{}, {} receive antennas, S = {}, on {}{}",
                   ::mimo_gpu::describe(grid),
                   config.nr,
                   symbols_per_channel(),
                   active_backend(),
                   d_device_outputs ? " (device buffers)" : "");
}

std::string ofdm_rx_impl::active_backend() const
{
    return ::mimo_gpu::to_string(d_backend);
}

void ofdm_rx_impl::forecast(int, gr_vector_int& ninput_items_required)
{
    // Frames that had no room wait in the receiver: a call needs no new samples.
    if (d_receiver->frames_waiting() || d_receiver->ended()) {
        std::fill(ninput_items_required.begin(), ninput_items_required.end(), 0);
        return;
    }
    // What the next search needs (the rest of a frame found, or where the next
    // frame could complete: so a frame is taken as soon as its last sample is
    // there), at most a frame; else a quarter frame of new samples.
    const size_t wanted = d_receiver->samples_wanted();
    const int ask =
        wanted > 0 ? int(std::min<size_t>(wanted, size_t(d_chunk) * 4)) : d_chunk;
    const auto d = detail();
    for (size_t r = 0; r < ninput_items_required.size(); ++r) {
        // An ended input is asked for what it still holds (GNU Radio ends a block
        // whose ended input cannot satisfy its forecast); never more than the
        // buffer can hold.
        const auto in = d ? d->input(int(r)) : nullptr;
        ninput_items_required[r] =
            !in          ? ask
            : in->done() ? std::min(ask, in->items_available())
                         : std::min(ask, in->max_possible_items_available());
    }
}

int ofdm_rx_impl::buffered_frames() const
{
    const size_t batch = d_receiver->max_batch_frames();
    if (batch <= 1)
        return k_buffered_frames;
    // Both outputs hold as many items as y (H's items are nr * nt values).
    const size_t frame_bytes = size_t(d_y_per_frame) * sizeof(gr_complex) *
                               size_t(d_config.nr) * size_t(1 + d_grid.nt);
    return int(std::clamp<size_t>(
        k_batch_buffer_bytes / frame_bytes, size_t(k_buffered_frames), 2 * batch + 4));
}

bool ofdm_rx_impl::samples_came_since(const gr_vector_int& ninput_items) const
{
    const auto d = detail();
    for (int r = 0; d && r < d->ninputs(); ++r) {
        const auto in = d->input(r);
        gr::thread::scoped_lock guard(*in->mutex()); // the writer's thread moves it
        if (in->items_available() > ninput_items[size_t(r)])
            return true;
    }
    return false;
}

bool ofdm_rx_impl::an_input_ran_out(size_t taken)
{
    const auto d = detail();
    bool out = false;
    uint64_t longest = 0;
    for (int r = 0; d && r < d->ninputs(); ++r) {
        const auto in = d->input(r);
        const bool done =
            in->done(); // first: the items written before it are then all counted
        const uint64_t available = uint64_t(in->items_available());
        const uint64_t left =
            available - std::min<uint64_t>(available, taken); // not yet consumed
        out = out || (done && left == 0);
        longest = std::max(longest, left);
    }
    if (out)
        d_unread_at_end = longest;
    return out;
}

void ofdm_rx_impl::lock_input_buffers()
{
    d_inputs_checked = true;
    if (d_backend != ::mimo_gpu::backend::cuda)
        return;
    const std::string why = d_locks.lock(*this, true, false);
    if (!why.empty())
        d_logger->info("input buffers staged through page-locked memory ({})", why);
    else
        d_logger->info(
            "input buffers page-locked in place: samples go to the GPU without a copy");
}

bool ofdm_rx_impl::start()
{
    d_inputs_checked = false; // a new run may have new buffers
    if (d_started) {          // a flowgraph run again: a new stream, from sample 0
        ::mimo_gpu::ofdm_receiver_config config = d_config;
        config.requested = d_backend; // the buffers were made for it
        d_receiver = std::make_unique<::mimo_gpu::ofdm_stream_receiver>(d_grid, config);
        d_receiver->set_frames_in_flight(true);
        d_failed = false;
        d_frame_mismatch = false;
        d_unread_at_end = 0;
        update_counters();
    }
    d_started = true;
    return true;
}

int ofdm_rx_impl::general_work(int noutput_items,
                               gr_vector_int& ninput_items,
                               gr_vector_const_void_star& input_items,
                               gr_vector_void_star& output_items)
{
    if (d_failed || (d_device_outputs && d_output_guard.must_stop(*this, *d_logger)))
        return WORK_DONE;
    if (!d_inputs_checked)
        lock_input_buffers();
    d_trace.begin();
    const size_t available =
        size_t(*std::min_element(ninput_items.begin(), ninput_items.end()));
    const size_t taken =
        std::min(available, d_receiver->ended() ? size_t(0) : d_receiver->room());
    std::vector<::mimo_gpu::stream_frame> frames;
    if (!stream_frame_matches(taken)) {
        d_failed = true;
        return WORK_DONE;
    }
    try {
        for (size_t r = 0; r < d_inputs.size(); ++r)
            d_inputs[r] = static_cast<const gr_complex*>(input_items[r]);
        d_receiver->push(d_inputs.data(), taken);
        if (!d_receiver->ended() && an_input_ran_out(taken)) {
            d_receiver->end_stream();
            if (d_unread_at_end > 0)
                d_logger->warn(
                    "an antenna stream ended {} samples before another: the receiver "
                    "ends with it "
                    "(it needs every antenna's samples); those samples are not read",
                    d_unread_at_end);
        }
        frames = d_receiver->receive(size_t(noutput_items / d_y_per_frame),
                                     static_cast<gr_complex*>(output_items[0]),
                                     static_cast<gr_complex*>(output_items[1]),
                                     d_device_outputs);
        // Frames left in flight go in the next call, whose search overlaps
        // their demodulation; where no samples came meanwhile (a source at the
        // air rate), nothing would: they go now.
        if (d_receiver->frames_in_flight() > 0 && !samples_came_since(ninput_items)) {
            const size_t n = frames.size();
            const auto more = d_receiver->hand_on_frames_in_flight(
                size_t(noutput_items / d_y_per_frame) - n,
                static_cast<gr_complex*>(output_items[0]) +
                    n * size_t(d_H_per_frame) * size_t(d_config.nr) * size_t(d_grid.nt),
                static_cast<gr_complex*>(output_items[1]) +
                    n * size_t(d_y_per_frame) * size_t(d_config.nr),
                d_device_outputs);
            frames.insert(frames.end(), more.begin(), more.end());
        }
        // Only now: consuming frees the samples for the upstream writer at once,
        // and page-locked samples are copied to the GPU until receive() returns.
        consume_each(int(taken));
    } catch (const std::exception& e) {
        d_logger->error(
            "stream samples {}..: {}; ending the stream", nitems_read(0), e.what());
        d_failed = true; // an exception escaping work() would hang the flowgraph
        return WORK_DONE;
    }
    for (size_t f = 0; f < frames.size(); ++f) {
        emit_tags(frames[f],
                  nitems_written(0) + f * size_t(d_H_per_frame),
                  nitems_written(1) + f * size_t(d_y_per_frame));
        d_last_n0 = frames[f].n0;
        d_last_cfo = frames[f].cfo;
    }
    update_counters();
    produce(0, int(frames.size()) * d_H_per_frame);
    produce(1, int(frames.size()) * d_y_per_frame);
    d_trace.end(long(frames.size()));
    if (frames.empty() && d_receiver->ended() && !d_receiver->frames_waiting())
        return WORK_DONE; // the end: no whole frame is left
    return WORK_CALLED_PRODUCE;
}

bool ofdm_rx_impl::stream_frame_matches(size_t taken)
{
    std::vector<gr::tag_t> tags;
    get_tags_in_window(tags, 0, 0, taken, k_grid_tag_key);
    for (const auto& tag : tags) {
        const auto sent = grid_from_tag_value(tag.value);
        const std::string mismatch =
            sent ? ::mimo_gpu::frame_mismatch(*sent, d_grid)
                 : std::string("an ofdm_grid tag that is not a frame's description");
        if (!mismatch.empty()) {
            d_logger->error("the stream's frame ({}) is not this block's ({}) from "
                            "sample {} on: {}; no frame of "
                            "it can be received, ending the stream",
                            sent ? ::mimo_gpu::describe(*sent) : std::string("?"),
                            ::mimo_gpu::describe(d_grid),
                            tag.offset,
                            mismatch);
            d_frame_mismatch = true;
            return false;
        }
    }
    return true;
}

void ofdm_rx_impl::update_counters()
{
    const uint64_t dropped_before = d_frames_dropped;
    d_frames = d_receiver->frames_received();
    d_frames_dropped = d_receiver->frames_dropped();
    d_samples_dropped = d_receiver->samples_outside_frames();
    std::lock_guard<std::mutex> lock(d_timing_mutex);
    d_timing = d_receiver->timing();
    if (d_frames_dropped > dropped_before)
        d_logger->warn(
            "{} frame(s) dropped: their pilots hold non-finite samples ({} so far)",
            d_frames_dropped - dropped_before,
            uint64_t(d_frames_dropped));
}

void ofdm_rx_impl::emit_tags(const ::mimo_gpu::stream_frame& f,
                             uint64_t H_item,
                             uint64_t y_item)
{
    const pmt::pmt_t n0 = pmt::from_double(f.n0);
    add_item_tag(0, H_item, k_noise_var_key, n0);
    add_item_tag(1, y_item, k_noise_var_key, n0);
    pmt::pmt_t info = pmt::make_dict();
    info = pmt::dict_add(info, pmt::mp("cfo"), pmt::from_double(f.cfo));
    info = pmt::dict_add(info, pmt::mp("frame_start"), pmt::from_uint64(f.start));
    info = pmt::dict_add(info, pmt::mp("delay_spread"), pmt::from_double(f.delay_spread));
    info = pmt::dict_add(info, pmt::mp("doppler"), pmt::from_double(f.doppler));
    info = pmt::dict_add(info,
                         pmt::mp("antenna_n0"),
                         pmt::init_f64vector(f.antenna_n0.size(),
                                             std::vector<double>(f.antenna_n0.begin(),
                                                                 f.antenna_n0.end())));
    info = pmt::dict_add(info, pmt::mp("whitened"), pmt::from_bool(f.whitened));
    info = pmt::dict_add(info, pmt::mp("linked"), pmt::from_bool(f.linked));
    add_item_tag(1, y_item, k_frame_key, info);
}

std::string ofdm_rx_impl::timing_summary() const
{
    ::mimo_gpu::ofdm_stream_receiver::time_spent t;
    {
        std::lock_guard<std::mutex> lock(d_timing_mutex); // work() updates it
        t = d_timing;
    }
    const double frames = std::max<double>(1.0, double(d_frames));
    char text[320];
    std::snprintf(text,
                  sizeof text,
                  "per frame: samples in %.3f ms (%llu calls), landing %.3f ms (%llu "
                  "waits), search %.3f ms (%llu), demodulation %.3f ms (%llu batches)",
                  1e3 * t.push / frames,
                  (unsigned long long)t.pushes,
                  1e3 * t.land / frames,
                  (unsigned long long)t.lands,
                  1e3 * t.search / frames,
                  (unsigned long long)t.searches,
                  1e3 * t.demodulate / frames,
                  (unsigned long long)t.batches);
    return text;
}

bool ofdm_rx_impl::stop()
{
    d_locks.unlock(); // before GNU Radio frees them
    if (d_receiver->frames_in_flight() > 0)
        d_logger->warn("stopped with {} frame(s) found but not handed on",
                       d_receiver->frames_in_flight());
    d_logger->info(
        "{} frames received, {} dropped (non-finite pilots), {} samples outside frames",
        uint64_t(d_frames),
        uint64_t(d_frames_dropped),
        uint64_t(d_samples_dropped));
    return true;
}

} // namespace mimo_gpu
} // namespace gr
