// The CPU backend's sample window: the samples antenna-interleaved in host
// memory (ofdm_receiver's layout), searched by frame_search and demodulated by
// ofdm_receiver::receive_frames.
#include "sample_window.h"

#include "../runtime/thread_pool.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace mimo_gpu {
namespace detail {

size_t window_samples(const ofdm_grid& grid)
{
    // A frame from its run's start (with the search's look-back) to its end is
    // less than a frame and two symbols; the window starts on a multiple of
    // k_metric_alignment below that.
    // At least 2^19 samples: short frames (LTE 20 MHz: 23 k samples) then come
    // many to a call, searched and demodulated in batches, rather than one a call.
    return std::max<size_t>(4 * size_t(grid.frame_samples()) +
                                4 * size_t(grid.fft_size + grid.cp_length) +
                                k_metric_alignment,
                            size_t(1) << 19);
}

namespace {
[[noreturn]] void no_demodulation_in_flight()
{
    throw std::logic_error(
        "mimo_gpu: this sample window demodulates frames within the call only");
}
} // namespace

void sample_window::queue_demodulation(const std::vector<sync_result>&)
{
    no_demodulation_in_flight();
}

std::vector<stream_frame> sample_window::demodulation_results()
{
    no_demodulation_in_flight();
}

void sample_window::hand_on(const std::vector<size_t>&, cfloat*, cfloat*, bool)
{
    no_demodulation_in_flight();
}

namespace {

class host_sample_window : public sample_window
{
public:
    host_sample_window(const ofdm_grid& grid, const ofdm_receiver_config& config)
        : m_receiver(grid,
                     [&] {
                         ofdm_receiver_config c = config;
                         c.requested = backend::cpu;
                         return c;
                     }()),
          m_search(grid, config, m_receiver.window_backoff()),
          m_nr(size_t(config.nr)),
          m_H_per_frame(
              size_t(grid.slots) * grid.used_subcarriers *
              (config.interpolation == time_interpolation::hold ? 1 : grid.data_symbols) *
              config.nr * grid.nt),
          m_y_per_frame(grid.data_elements() * size_t(config.nr)),
          m_capacity(window_samples(grid))
    {
    }

    backend kind() const override { return backend::cpu; }
    /// The cores this thread may use now, up to k_most_frames_per_batch
    /// frames: a frame a core (the latency of a batch: up to that many frames'
    /// air time).
    size_t frames_per_batch() const override
    {
        return std::min(k_most_frames_per_batch, parallel_width());
    }
    size_t max_frames_per_batch() const override { return k_most_frames_per_batch; }
    size_t capacity() const override { return m_capacity; }

    void append(const cfloat* const* antennas, size_t count, uint64_t) override
    {
        cfloat* out = m_samples.get() + m_held * m_nr;
        if (m_nr == 2) { // the usual case, a loop the compiler vectorises
            const cfloat* a = antennas[0];
            const cfloat* b = antennas[1];
            for (size_t n = 0; n < count; ++n) {
                out[2 * n] = a[n];
                out[2 * n + 1] = b[n];
            }
        } else {
            for (size_t n = 0; n < count; ++n)
                for (size_t r = 0; r < m_nr; ++r)
                    out[n * m_nr + r] = antennas[r][n];
        }
        m_held += count;
    }

    void release(uint64_t begin) override
    {
        const size_t drop = size_t(std::min<uint64_t>(begin - m_begin, m_held));
        std::memmove(m_samples.get(),
                     m_samples.get() + drop * m_nr,
                     (m_held - drop) * m_nr * sizeof(cfloat));
        m_held -= drop;
        m_begin += drop;
    }

    walk_result search(uint64_t begin,
                       uint64_t end,
                       uint64_t search_begin,
                       uint64_t from,
                       size_t max_frames,
                       bool ended) override
    {
        (void)begin;
        // Frames start at or after `from`; samples before the window are gone, so
        // a from before it is the window's start.
        walk_result w = m_search.find(m_samples.get(),
                                      size_t(end - m_begin),
                                      size_t(search_begin - m_begin),
                                      size_t(std::max(from, m_begin) - m_begin),
                                      max_frames,
                                      ended,
                                      m_begin,
                                      &m_decisions);
        for (sync_result& s : w.frames)
            s.frame_start += m_begin;
        if (w.cut.found)
            w.cut.frame_start += m_begin;
        w.next_from += m_begin;
        w.keep_from += m_begin;
        if (w.needs)
            w.needs += m_begin;
        return w;
    }

    std::vector<stream_frame> demodulate(const std::vector<sync_result>& frames,
                                         cfloat* H,
                                         cfloat* y,
                                         bool) override
    {
        std::vector<sync_result> local = frames;
        std::vector<uint64_t> position(frames.size()); // for estimation across frames
        for (size_t f = 0; f < frames.size(); ++f) {
            position[f] = frames[f].frame_start;
            local[f].frame_start -= m_begin;
        }
        const auto received =
            m_receiver.receive_frames(m_samples.get(), m_held, local, position.data());
        std::vector<stream_frame> out(frames.size());
        for (size_t f = 0; f < frames.size(); ++f) {
            std::copy(received[f].H.begin(), received[f].H.end(), H + f * m_H_per_frame);
            std::copy(received[f].y.begin(), received[f].y.end(), y + f * m_y_per_frame);
            out[f] = { frames[f].frame_start,    frames[f].cfo,
                       frames[f].metric,         received[f].n0,
                       received[f].delay_spread, received[f].doppler,
                       received[f].antenna_n0,   received[f].whitened,
                       received[f].linked };
        }
        return out;
    }

    void move_frame(cfloat* H, cfloat* y, size_t from, size_t to, bool) override
    {
        std::memmove(H + to * m_H_per_frame,
                     H + from * m_H_per_frame,
                     m_H_per_frame * sizeof(cfloat));
        std::memmove(y + to * m_y_per_frame,
                     y + from * m_y_per_frame,
                     m_y_per_frame * sizeof(cfloat));
    }

private:
    ofdm_receiver m_receiver;
    frame_search m_search;
    const size_t m_nr, m_H_per_frame, m_y_per_frame, m_capacity;
    /// Samples [m_begin, m_begin + m_held), antenna-interleaved, in a buffer
    /// made once (a vector grown at each append zero-filled what it then copied).
    std::unique_ptr<cfloat[]> m_samples{ new cfloat[m_capacity * m_nr] };
    size_t m_held = 0;
    std::vector<run_decision> m_decisions; // the searches' decisions between calls
    uint64_t m_begin = 0;
};

} // namespace

std::unique_ptr<sample_window> make_host_window(const ofdm_grid& grid,
                                                const ofdm_receiver_config& config)
{
    return std::make_unique<host_sample_window>(grid, config);
}

} // namespace detail
} // namespace mimo_gpu
