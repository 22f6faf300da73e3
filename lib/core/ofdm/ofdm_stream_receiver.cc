// ofdm_stream_receiver: the stream's bookkeeping (which samples the window
// keeps, where the search goes on, what was received, dropped or left behind)
// over a sample_window that holds the samples and does the work.
#include <mimo_gpu/ofdm_stream_receiver.h>

#include "arrival_pace.h"
#include "sample_window.h"

#include "../runtime/engine_choice.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <stdexcept>
#include <utility>

namespace mimo_gpu {

namespace {
double seconds_since(std::chrono::steady_clock::time_point t)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}
} // namespace

struct ofdm_stream_receiver::engine {
    ofdm_grid grid;
    ofdm_receiver_config config;
    detail::sync_rule rule;
    std::unique_ptr<detail::sample_window> window;
    uint64_t begin = 0, end = 0; ///< the window's samples
    uint64_t from = 0;           ///< where the search goes on
    uint64_t needs = 0;          ///< the search waits until the samples reach this
    /// ...and, for up to max_batch_wait_ms from batch_since, until they reach
    /// this (a batch of frames: wait_for_a_batch); 0: no batch waited for.
    uint64_t batch_until = 0;
    std::chrono::steady_clock::time_point batch_since;
    /// Samples [.., ready) have landed in the window. Where appends finish later
    /// (the CUDA window copies on its own stream), a receive() searches the
    /// samples of earlier calls while the new ones cross PCIe: the transfer of a
    /// call's samples overlaps the search and demodulation of the frames before
    /// them (NR 100 MHz 4x4 on the H100: four 1 MB copies, 160 us a frame, on
    /// the receiver's critical path before). Copies that read the caller's
    /// memory in place land by the call's end; staged ones when a search needs
    /// them (free_callers_memory in receive()).
    uint64_t ready = 0;
    uint64_t searched_to = 0; ///< the samples the last search saw end here
    bool ended = false, more = false;
    uint64_t received = 0, dropped = 0, covered = 0;
    /// Frames in flight (set_frames_in_flight): how many of the window's last
    /// queued batch wait to be collected, and those collected (kept) that wait
    /// for room, with their place in that batch.
    struct collected_frame {
        stream_frame frame;
        size_t place; ///< in the window's last queued batch
    };
    bool in_flight_mode = false;
    size_t queued = 0;
    std::vector<collected_frame> collected;
    /// How fast the pushes come (windows whose batches need a fast stream).
    detail::arrival_pace pace;
    ofdm_stream_receiver::time_spent spent;

    engine(const ofdm_grid& g, const ofdm_receiver_config& c, int backoff)
        : grid(g), config(c), rule(g, c, backoff), pace(g.sample_rate)
    {
    }
};

ofdm_stream_receiver::ofdm_stream_receiver(const ofdm_grid& grid,
                                           const ofdm_receiver_config& config)
{
    ofdm_receiver_config checked = config;
    checked.requested = backend::cpu;
    const ofdm_receiver validator(grid,
                                  checked); // throws for a bad grid or configuration
    m_engine = std::make_unique<engine>(grid, config, validator.window_backoff());
    m_engine->window = detail::choose_engine(
        config.requested,
        [&] { return detail::make_host_window(grid, config); },
        [&] {
#ifdef MIMO_GPU_HAVE_CUDA
            return detail::make_cuda_window(grid, config);
#else
            return std::unique_ptr<detail::sample_window>();
#endif
        });
}

ofdm_stream_receiver::~ofdm_stream_receiver() = default;

const ofdm_grid& ofdm_stream_receiver::grid() const { return m_engine->grid; }

backend ofdm_stream_receiver::active_backend() const { return m_engine->window->kind(); }

int ofdm_stream_receiver::symbols_per_channel() const
{
    return m_engine->config.interpolation == time_interpolation::hold
               ? m_engine->grid.data_symbols
               : 1;
}

size_t ofdm_stream_receiver::H_items_per_frame() const
{
    const ofdm_grid& g = m_engine->grid;
    return size_t(g.slots) * g.used_subcarriers *
           size_t(g.data_symbols / symbols_per_channel());
}

size_t ofdm_stream_receiver::y_items_per_frame() const
{
    return m_engine->grid.data_elements();
}

size_t ofdm_stream_receiver::room() const
{
    const engine& e = *m_engine;
    return e.ended ? 0 : e.window->capacity() - size_t(e.end - e.begin);
}

size_t ofdm_stream_receiver::max_batch_frames() const
{
    return m_engine->window->max_frames_per_batch();
}

void ofdm_stream_receiver::push(const cfloat* const* antennas, size_t count)
{
    engine& e = *m_engine;
    if (count == 0)
        return;
    if (e.ended)
        throw std::logic_error("mimo_gpu: ofdm_stream_receiver: push after end_stream");
    if (count > room())
        throw std::invalid_argument(
            "mimo_gpu: ofdm_stream_receiver: " + std::to_string(count) +
            " samples pushed, room for " + std::to_string(room()));
    const auto t = std::chrono::steady_clock::now();
    e.window->append(antennas, count, e.end);
    e.end += count;
    e.pace.note(count, t);
    if (!e.window->appends_lag())
        e.ready = e.end;
    e.spent.push += seconds_since(t);
    ++e.spent.pushes;
}

void ofdm_stream_receiver::end_stream() { m_engine->ended = true; }

bool ofdm_stream_receiver::ended() const { return m_engine->ended; }

namespace {

/// A frame the search found but the landed samples cut, whose rest is among
/// the samples still landing: taken as the walk would take it on those
/// samples (a decided run's frame does not change with more samples), after
/// they land. Without this, a stream whose calls bring less than a frame each
/// is searched twice per frame (once to find it, once to complete it).
template <class Engine, class Land>
void take_landing_frame(Engine& e,
                        detail::walk_result& w,
                        uint64_t search_begin,
                        size_t max_frames,
                        Land land)
{
    const detail::sync_rule& rule = e.rule;
    if (!w.cut.found || w.frames.size() >= max_frames ||
        uint64_t(w.cut.frame_start) + rule.reach > e.end)
        return;
    land();
    sync_result s = w.cut;
    s.complete = true;
    w.frames.push_back(s);
    w.cut = sync_result{};
    w.next_from = rule.after(s.frame_start);
    w.keep_from = rule.keep_from(size_t(search_begin), w.next_from);
    w.needs = 0;
    w.more = false;
}

/// A window that demodulates a batch's frames side by side (the CPU's, where
/// cores are free) searches again only when the samples hold a batch of frames
/// after where the search goes on, rather than as each frame completes: a
/// flowgraph hands the receiver about a frame at a time (GNU Radio's buffers
/// hold two), and one frame's demodulation splits over a few cores at best.
/// Costs latency: up to config.max_batch_wait_ms (then the frames there are
/// are taken); never waits past what the window holds, nor where the last
/// search stopped short of the caller's room. The GPU's window batches only
/// while the samples come at least config.gpu_batch_speed times the air rate:
/// a batch there saves host calls, not cores, and a stream at the air rate
/// would only wait for it. The batch fits the room the frames in flight leave
/// (the next search's room).
template <class Engine>
void wait_for_a_batch(Engine& e, size_t max_frames)
{
    e.batch_until = 0;
    const size_t owed = e.queued + e.collected.size();
    const size_t room = max_frames > owed ? max_frames - owed : 0;
    const size_t batch = std::min(room, e.window->frames_per_batch());
    if (batch <= 1 || e.ended || e.more)
        return;
    if (e.window->batches_need_a_fast_stream() && e.config.gpu_batch_speed > 0 &&
        !(e.pace.speed() >= e.config.gpu_batch_speed))
        return;
    // A symbol more than the batch's frames: the last frame's timing offset
    // and what deciding its run reads beyond its start.
    const uint64_t batch_end =
        e.from + uint64_t(batch) * e.rule.frame_samples + uint64_t(e.rule.N + e.rule.CP);
    const uint64_t window_end = e.begin + e.window->capacity();
    const uint64_t until = std::min(batch_end, window_end);
    if (until <= e.needs)
        return;
    e.batch_until = until;
    e.batch_since = std::chrono::steady_clock::now();
}

/// Where the samples must reach before a search can give a frame more than the
/// last one did: the walk takes frames that start at or after where it goes on
/// (walk_runs skips the others), so none completes before the samples reach
/// that plus a frame's reach; and what the walk stopped for (a
/// cut frame's end, a run's decision) where that lies later. Searching sooner
/// found nothing new: at NR 100 MHz, where GNU Radio's calls bring about half
/// a frame, it searched twice a frame (0.25 ms of the receiver's 0.51-0.57 ms
/// a frame, H100).
uint64_t searching_again_pays_from(const detail::sync_rule& rule,
                                   const detail::walk_result& w)
{
    return std::max<uint64_t>(w.needs, uint64_t(w.next_from) + rule.reach);
}

/// Where the samples must reach before the next search: what the last one
/// stopped for, and a batch's end while the wait for it lasts.
template <class Engine>
uint64_t search_waits_for(const Engine& e)
{
    if (e.batch_until == 0 || std::chrono::duration<double, std::milli>(
                                  std::chrono::steady_clock::now() - e.batch_since)
                                      .count() >= e.config.max_batch_wait_ms)
        return e.needs;
    return std::max(e.needs, e.batch_until);
}

} // namespace

std::vector<stream_frame> ofdm_stream_receiver::receive(size_t max_frames,
                                                        cfloat* H,
                                                        cfloat* y,
                                                        bool outputs_on_device)
{
    engine& e = *m_engine;
    if (outputs_on_device && e.window->kind() != backend::cuda)
        throw std::invalid_argument(
            "mimo_gpu: ofdm_stream_receiver: device outputs need the CUDA backend");
    const auto land_appends = [&e] {
        // (An append that failed part-way may have queued copies that read
        // the caller's memory without counting its samples.)
        if (e.ready == e.end && !e.window->appends_read_callers_memory())
            return;
        const auto t = std::chrono::steady_clock::now();
        e.window->finish_appends();
        e.ready = e.end;
        e.spent.land += seconds_since(t);
        ++e.spent.lands;
    };
    // Every way out frees the caller's memory: copies that read it in place
    // land first. Samples staged on the host land while the caller goes on,
    // until a search needs them (the samples it waits for lie among them): a
    // call that does not search waits for no transfer.
    const auto free_callers_memory = [&] {
        if (e.window->appends_read_callers_memory())
            land_appends();
    };
    // An exception too (the caller's samples are not read after it returns);
    // the normal ways out free the caller's memory explicitly, so the guard
    // acts only while unwinding.
    struct landing_guard {
        engine& e;
        const int exceptions = std::uncaught_exceptions();
        ~landing_guard()
        {
            if (std::uncaught_exceptions() == exceptions)
                return;
            try {
                e.window->finish_appends();
            } catch (...) { // already failing: the first error is the one reported
            }
        }
    } guard{ e };
    if (e.ended) // nothing more will come to overlap with
        land_appends();
    if (max_frames == 0) { // no room: frames may wait
        free_callers_memory();
        e.more = e.end > e.begin;
        return {};
    }
    // Frames in flight take the room first; the search looks for new frames
    // only where they all fit, in the room they leave.
    const size_t owed = e.queued + e.collected.size();
    const size_t room_for_new = owed < max_frames ? max_frames - owed : 0;
    detail::walk_result w;
    bool searched = false;
    if (room_for_new > 0) {
        const uint64_t waits_for = search_waits_for(e);
        bool enough = true;
        if (!e.ended && e.ready < waits_for) { // the last search stopped for samples
            if (e.end < waits_for) {           // ...not yet here
                e.more = false;
                enough = false;
            } else // ...among those still landing: searched now
                land_appends();
        }
        if (enough) {
            const uint64_t search_begin = std::max(
                e.begin, e.from >= e.rule.lookback() ? e.from - e.rule.lookback() : 0);
            const auto t = std::chrono::steady_clock::now();
            w = e.window->search(
                e.begin, e.ready, search_begin, e.from, room_for_new, e.ended);
            e.searched_to = e.ready;
            take_landing_frame(e, w, search_begin, room_for_new, land_appends);
            e.spent.search += seconds_since(t);
            ++e.spent.searches;
            searched = true;
        }
    }
    const auto t = std::chrono::steady_clock::now();
    std::vector<stream_frame> frames =
        e.in_flight_mode
            ? hand_on_and_queue(w.frames, max_frames, H, y, outputs_on_device)
            : demodulate_now(w.frames, H, y, outputs_on_device);
    if (!w.frames.empty() || !frames.empty()) {
        e.spent.demodulate += seconds_since(t);
        e.spent.batches += !w.frames.empty();
    }
    if (searched) {
        e.covered += w.frames.size() * (e.rule.frame_samples - size_t(e.rule.CP));
        e.from = w.next_from;
        e.more = w.more;
        e.needs = w.more ? w.needs : searching_again_pays_from(e.rule, w);
        // The window starts where the metric's sums restart (frame_search.h).
        const uint64_t keep = std::max<uint64_t>(
            e.begin,
            detail::align_down(std::min<uint64_t>(w.keep_from, e.ready),
                               detail::k_metric_alignment));
        if (keep > e.begin) {
            e.window->release(keep);
            e.begin = keep;
        }
        wait_for_a_batch(e, max_frames);
    }
    free_callers_memory();
    return frames;
}

std::vector<stream_frame> ofdm_stream_receiver::demodulate_now(
    const std::vector<sync_result>& found, cfloat* H, cfloat* y, bool outputs_on_device)
{
    engine& e = *m_engine;
    std::vector<stream_frame> frames =
        e.window->demodulate(found, H, y, outputs_on_device);
    // No pilots, no estimate: a frame whose N0 came out non-finite is dropped.
    size_t kept = 0;
    for (size_t f = 0; f < frames.size(); ++f) {
        if (!std::isfinite(frames[f].n0)) {
            ++e.dropped;
            continue;
        }
        if (kept != f)
            e.window->move_frame(H, y, f, kept, outputs_on_device);
        frames[kept++] = frames[f];
    }
    frames.resize(kept);
    e.received += kept;
    return frames;
}

std::vector<stream_frame>
ofdm_stream_receiver::hand_on_and_queue(const std::vector<sync_result>& found,
                                        size_t max_frames,
                                        cfloat* H,
                                        cfloat* y,
                                        bool outputs_on_device)
{
    engine& e = *m_engine;
    if (e.queued > 0) { // the last batch: dropped frames (non-finite N0) left out
        const std::vector<stream_frame> done = e.window->demodulation_results();
        for (size_t f = 0; f < done.size(); ++f) {
            if (!std::isfinite(done[f].n0)) {
                ++e.dropped;
                continue;
            }
            e.collected.push_back({ done[f], f });
        }
        e.queued = 0;
    }
    const size_t n = std::min(max_frames, e.collected.size());
    std::vector<stream_frame> out;
    std::vector<size_t> places;
    out.reserve(n);
    places.reserve(n);
    for (size_t f = 0; f < n; ++f) { // erased from `collected` below
        out.push_back(std::move(e.collected[f].frame));
        places.push_back(e.collected[f].place);
    }
    if (n > 0)
        e.window->hand_on(places, H, y, outputs_on_device);
    e.collected.erase(e.collected.begin(), e.collected.begin() + ptrdiff_t(n));
    if (!found.empty()) { // searched only where every frame owed fits: all out now
        if (!e.collected.empty())
            throw std::logic_error("mimo_gpu: ofdm_stream_receiver: frames found "
                                   "while earlier ones wait for room");
        // Queued behind the copies: they read the memory it writes.
        try {
            e.window->queue_demodulation(found);
        } catch (...) { // the copies into the caller's memory end before it hears
            try {
                if (n > 0)
                    e.window->finish_hand_on();
            } catch (...) { // already failing: the first error is the one reported
            }
            throw;
        }
        e.queued = found.size();
    }
    if (n > 0)
        e.window->finish_hand_on();
    e.received += n;
    return out;
}

void ofdm_stream_receiver::set_frames_in_flight(bool on)
{
    engine& e = *m_engine;
    if (frames_in_flight() > 0)
        throw std::logic_error(
            "mimo_gpu: ofdm_stream_receiver: set_frames_in_flight with frames in flight");
    e.in_flight_mode = on && e.window->demodulates_in_flight();
}

size_t ofdm_stream_receiver::frames_in_flight() const
{
    return m_engine->queued + m_engine->collected.size();
}

std::vector<stream_frame> ofdm_stream_receiver::hand_on_frames_in_flight(
    size_t max_frames, cfloat* H, cfloat* y, bool outputs_on_device)
{
    engine& e = *m_engine;
    if (outputs_on_device && e.window->kind() != backend::cuda)
        throw std::invalid_argument(
            "mimo_gpu: ofdm_stream_receiver: device outputs need the CUDA backend");
    if (frames_in_flight() == 0 || max_frames == 0)
        return {};
    const auto t = std::chrono::steady_clock::now();
    std::vector<stream_frame> frames =
        hand_on_and_queue({}, max_frames, H, y, outputs_on_device);
    e.spent.demodulate += seconds_since(t);
    return frames;
}

bool ofdm_stream_receiver::frames_waiting() const
{
    const engine& e = *m_engine;
    // Or the last search saw fewer samples than have come since (landed or
    // landing), and those reach what it waited for: another receive() goes on
    // without new samples.
    return e.more || frames_in_flight() > 0 ||
           (!e.ended && e.searched_to < e.end && search_waits_for(e) <= e.end);
}

size_t ofdm_stream_receiver::samples_wanted() const
{
    const engine& e = *m_engine;
    const uint64_t waits_for = search_waits_for(e);
    return !e.ended && waits_for > e.end ? size_t(waits_for - e.end) : 0;
}

uint64_t ofdm_stream_receiver::samples_pushed() const { return m_engine->end; }

uint64_t ofdm_stream_receiver::samples_outside_frames() const
{
    const engine& e = *m_engine;
    // Dropped frames' samples count as outside: `covered` is what was received.
    const uint64_t let_go = e.ended && !e.more ? e.end : e.begin;
    const uint64_t in_frames =
        e.covered - e.dropped * (e.rule.frame_samples - size_t(e.rule.CP));
    return let_go > in_frames ? let_go - in_frames : 0;
}

uint64_t ofdm_stream_receiver::frames_received() const { return m_engine->received; }

uint64_t ofdm_stream_receiver::frames_dropped() const { return m_engine->dropped; }

ofdm_stream_receiver::time_spent ofdm_stream_receiver::timing() const
{
    return m_engine->spent;
}

} // namespace mimo_gpu
