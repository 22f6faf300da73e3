// The CUDA backend's sample window: a ring of device memory per antenna
// (power-of-two capacity, so a sample's slot is its index masked), filled
// through two page-locked staging chunks (the host copies one chunk while the
// previous one crosses PCIe), searched and demodulated in place by
// cuda_front_end, H and y written where the caller wants them. Appends run on
// their own stream and land at finish_appends(): meanwhile the front end works
// on the samples landed before (appends_lag), in ring slots no copy writes
// (where a copy would reach the slots of a demodulation in flight, it waits
// for that demodulation).
// The search and the demodulation have a stream each, so that a demodulation
// left in flight by one call (demodulates_in_flight) overlaps the next call's
// search on the GPU.
#ifdef MIMO_GPU_HAVE_CUDA

#include "antenna_noise.h"
#include "cuda_front_end.h"
#include "sample_window.h"

#include <mimo_gpu/device_memory.h>

#include "../runtime/cuda_buffers.h"
#include "../runtime/parallel_for.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace mimo_gpu {
namespace detail {

namespace {

constexpr size_t k_chunk = 65536;      // samples per antenna per staging chunk
constexpr size_t k_copy_piece = 16384; // samples per host copy task

/// The receiver's stream goes first: its search and demodulation are a chain of
/// small kernels with host round trips between them, the live chain's critical
/// path, while the detector's and the decoder's kernels fill the GPU for tens of
/// microseconds at a time (NR 100 MHz 4x4 on the H100, once running: 1.76x / 1.73x
/// real time with nway:1 / mmse against 1.65x / 1.66x at the default priority).
int receiver_priority()
{
    int least = 0, greatest = 0;
    MIMO_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    return greatest;
}

size_t next_power_of_two(size_t n)
{
    size_t p = 1;
    while (p < n)
        p <<= 1;
    return p;
}

/// Short frames come searched and demodulated in batches of up to this many
/// samples over all antennas (sample_window::frames_per_batch): at LTE 20 MHz
/// a frame's search and demodulation each cost a launch sequence and a wait,
/// 0.07-0.08 ms of host time a call (session 20), more than their kernels. NR
/// 100 MHz 4x4 frames exceed it (a frame a batch, as before).
constexpr size_t k_batch_samples = size_t(1) << 19;

size_t frames_a_batch(const ofdm_grid& grid, const ofdm_receiver_config& config)
{
    const size_t nr = size_t(config.nr);
    if (std::isinf(config.gpu_batch_speed)) // never batches: the ring as before
        return 1;
    return std::clamp<size_t>(k_batch_samples / (size_t(grid.frame_samples()) * nr),
                              1,
                              k_most_frames_per_batch);
}

/// The ring: the search's window, and room for a batch being gathered while
/// the one before is demodulated from it.
size_t ring_samples(const ofdm_grid& grid, size_t batch)
{
    const size_t gathering = batch > 1 ? 2 * batch * size_t(grid.frame_samples()) : 0;
    return next_power_of_two(window_samples(grid) + gathering);
}

class cuda_sample_window : public sample_window
{
public:
    cuda_sample_window(const ofdm_grid& grid, const ofdm_receiver_config& config)
        : m_nr(size_t(config.nr)),
          m_batch(frames_a_batch(grid, config)),
          m_capacity(ring_samples(grid, m_batch)),
          m_stream(receiver_priority()),
          m_search_stream(receiver_priority()),
          m_front_end(grid,
                      config,
                      config.window_backoff < 0 ? grid.cp_length / 8
                                                : config.window_backoff,
                      preamble_time_signal(grid))
    {
        m_ring.reserve(m_capacity * m_nr);
        for (auto& s : m_staging)
            s.reserve(k_chunk * m_nr);
        m_n0.reserve(64);
        m_spread.reserve(64);
        m_doppler.reserve(64);
        m_linked.reserve(64);
        m_antenna_n0.reserve(64 * m_nr);
        m_front_end.reserve_search(m_capacity);
    }

    ~cuda_sample_window() override
    {
        // A demodulation, copies or appends in flight use memory freed below.
        cudaStreamSynchronize(m_stream.get());
        cudaStreamSynchronize(m_copy_stream.get());
    }

    backend kind() const override { return backend::cuda; }
    size_t capacity() const override { return m_capacity; }
    size_t frames_per_batch() const override { return m_batch; }
    size_t max_frames_per_batch() const override { return m_batch; }
    bool batches_need_a_fast_stream() const override { return true; }

    bool appends_lag() const override { return true; }

    void append(const cfloat* const* antennas, size_t count, uint64_t end) override
    {
        const cudaStream_t st = m_copy_stream.get();
        // Ring slots a demodulation in flight still reads are written after it.
        if (m_reads_ring && end + count > m_reads_from + m_capacity)
            MIMO_CUDA_CHECK(cudaStreamWaitEvent(st, m_demodulated.get(), 0));
        // Page-locked (the caller locked its buffers) or device memory: copied from
        // where it is; ordinary memory goes through the staging chunks.
        std::vector<bool> direct(m_nr);
        bool all_direct = true;
        for (size_t r = 0; r < m_nr; ++r) {
            direct[r] = ::mimo_gpu::memory_kind_of(antennas[r]) !=
                        ::mimo_gpu::memory_kind::pageable;
            all_direct = all_direct && direct[r];
            m_reads_callers = m_reads_callers || direct[r];
        }
        for (size_t done = 0; done < count;) {
            const size_t n = all_direct ? count : std::min(k_chunk, count - done);
            const int slot = m_next_slot;
            cfloat* staging = m_staging[slot].data();
            if (!all_direct) {
                m_next_slot ^= 1;
                // The slot's previous transfer must have left its staging memory.
                MIMO_CUDA_CHECK(cudaEventSynchronize(m_staged[slot].get()));
                const size_t pieces = (n + k_copy_piece - 1) / k_copy_piece;
                parallel_for(m_nr * pieces, 1, [&](size_t begin, size_t stop) {
                    for (size_t task = begin; task < stop; ++task) {
                        const size_t r = task / pieces, lo = task % pieces * k_copy_piece;
                        const size_t len = std::min(k_copy_piece, n - lo);
                        if (!direct[r])
                            std::memcpy(staging + r * k_chunk + lo,
                                        antennas[r] + done + lo,
                                        len * sizeof(cfloat));
                    }
                });
            }
            // Into the ring, antenna after antenna (two pieces where it wraps).
            const uint64_t at = end + done;
            const size_t slot_at = size_t(at & (m_capacity - 1)),
                         first = std::min(n, m_capacity - slot_at);
            for (size_t r = 0; r < m_nr; ++r) {
                const cfloat* from =
                    direct[r] ? antennas[r] + done : staging + r * k_chunk;
                cfloat* ring = m_ring.data() + r * m_capacity;
                MIMO_CUDA_CHECK(cudaMemcpyAsync(
                    ring + slot_at, from, first * sizeof(cfloat), cudaMemcpyDefault, st));
                if (first < n)
                    MIMO_CUDA_CHECK(cudaMemcpyAsync(ring,
                                                    from + first,
                                                    (n - first) * sizeof(cfloat),
                                                    cudaMemcpyDefault,
                                                    st));
            }
            if (!all_direct)
                MIMO_CUDA_CHECK(cudaEventRecord(m_staged[slot].get(), st));
            done += n;
        }
        // Memory copied from where it is is read by the time finish_appends()
        // returns (ofdm_stream_receiver::receive ends with it where
        // appends_read_callers_memory()); staged samples land meanwhile.
    }

    void finish_appends() override
    {
        m_copy_stream.synchronize();
        m_reads_callers = false;
    }

    bool appends_read_callers_memory() const override { return m_reads_callers; }

    void release(uint64_t) override {} // the ring overwrites what was let go

    walk_result search(uint64_t,
                       uint64_t end,
                       uint64_t search_begin,
                       uint64_t from,
                       size_t max_frames,
                       bool ended) override
    {
        return m_front_end.find_frames(view(),
                                       size_t(end),
                                       size_t(search_begin),
                                       size_t(from),
                                       max_frames,
                                       ended,
                                       m_search_stream.get());
    }

    std::vector<stream_frame> demodulate(const std::vector<sync_result>& frames,
                                         cfloat* H,
                                         cfloat* y,
                                         bool on_device) override
    {
        if (frames.empty())
            return {};
        queue(frames, on_device ? H : nullptr, on_device ? y : nullptr);
        if (!on_device) { // host outputs: from the engine's own device buffers
            const size_t count = frames.size();
            const size_t hn = m_front_end.H_per_frame(), yn = m_front_end.y_per_frame();
            MIMO_CUDA_CHECK(cudaMemcpyAsync(H,
                                            m_front_end.device_H(),
                                            count * hn * sizeof(cfloat),
                                            cudaMemcpyDeviceToHost,
                                            m_stream.get()));
            MIMO_CUDA_CHECK(cudaMemcpyAsync(y,
                                            m_front_end.device_y(),
                                            count * yn * sizeof(cfloat),
                                            cudaMemcpyDeviceToHost,
                                            m_stream.get()));
        }
        m_stream.synchronize(); // the outputs are complete when the caller hands them on
        return demodulation_results();
    }

    bool demodulates_in_flight() const override { return true; }

    void queue_demodulation(const std::vector<sync_result>& frames) override
    {
        if (!frames.empty())
            queue(frames, nullptr, nullptr);
    }

    std::vector<stream_frame> demodulation_results() override
    {
        const size_t count = m_queued.size();
        std::vector<stream_frame> out(count);
        if (count == 0)
            return out;
        MIMO_CUDA_CHECK(cudaEventSynchronize(m_demodulated.get()));
        m_reads_ring = false;
        const bool antenna_noise = m_front_end.device_antenna_n0() != nullptr;
        std::vector<float> scale(m_nr);
        for (size_t f = 0; f < count; ++f) {
            out[f].start = m_queued[f].frame_start;
            out[f].cfo = m_queued[f].cfo;
            out[f].metric = m_queued[f].metric;
            out[f].n0 = m_n0.data()[f];
            out[f].delay_spread = m_spread.data()[f];
            out[f].doppler = m_doppler.data()[f];
            out[f].linked = m_linked.data()[f] != 0;
            // the kernel's rule again on the same numbers (antenna_noise.h)
            out[f].whitened = report_antenna_noise(
                int(m_nr),
                out[f].n0,
                antenna_noise ? m_antenna_n0.data() + f * m_nr : nullptr,
                out[f].antenna_n0,
                scale);
        }
        m_queued.clear();
        return out;
    }

    void hand_on(const std::vector<size_t>& which,
                 cfloat* H,
                 cfloat* y,
                 bool on_device) override
    {
        const size_t hn = m_front_end.H_per_frame(), yn = m_front_end.y_per_frame();
        const cudaMemcpyKind kind =
            on_device ? cudaMemcpyDeviceToDevice : cudaMemcpyDeviceToHost;
        const cudaStream_t st = m_stream.get();
        // Runs of consecutive frames (all of them, unless one was dropped) a copy each.
        for (size_t j = 0; j < which.size();) {
            size_t n = 1;
            while (j + n < which.size() && which[j + n] == which[j] + n)
                ++n;
            MIMO_CUDA_CHECK(cudaMemcpyAsync(H + j * hn,
                                            m_front_end.device_H() + which[j] * hn,
                                            n * hn * sizeof(cfloat),
                                            kind,
                                            st));
            MIMO_CUDA_CHECK(cudaMemcpyAsync(y + j * yn,
                                            m_front_end.device_y() + which[j] * yn,
                                            n * yn * sizeof(cfloat),
                                            kind,
                                            st));
            j += n;
        }
        MIMO_CUDA_CHECK(cudaEventRecord(m_handed_on.get(), st));
    }

    void finish_hand_on() override
    {
        MIMO_CUDA_CHECK(cudaEventSynchronize(m_handed_on.get()));
    }

    void move_frame(cfloat* H, cfloat* y, size_t from, size_t to, bool on_device) override
    {
        const size_t hn = m_front_end.H_per_frame(), yn = m_front_end.y_per_frame();
        if (!on_device) { // receive() has synchronised: the frames are complete
            std::memmove(H + to * hn, H + from * hn, hn * sizeof(cfloat));
            std::memmove(y + to * yn, y + from * yn, yn * sizeof(cfloat));
            return;
        }
        const cudaMemcpyKind kind = cudaMemcpyDeviceToDevice;
        MIMO_CUDA_CHECK(cudaMemcpyAsync(
            H + to * hn, H + from * hn, hn * sizeof(cfloat), kind, m_stream.get()));
        MIMO_CUDA_CHECK(cudaMemcpyAsync(
            y + to * yn, y + from * yn, yn * sizeof(cfloat), kind, m_stream.get()));
        m_stream.synchronize();
    }

private:
    sample_view view() const { return sample_view::ring(m_ring.data(), m_capacity); }

    /// Queues the frames' demodulation on m_stream, H and y into the given device
    /// memory or (nullptr) the front end's own; their per-frame results into the
    /// pinned arrays (demodulation_results reads them after m_demodulated).
    void queue(const std::vector<sync_result>& frames, cfloat* H, cfloat* y)
    {
        const size_t count = frames.size();
        const cudaStream_t st = m_stream.get();
        // More frames than before may grow the front end's H and y, which
        // copies handed on may still read: they finish first.
        if (count > m_most_queued)
            MIMO_CUDA_CHECK(cudaEventSynchronize(m_handed_on.get()));
        std::vector<size_t> start(count);
        std::vector<uint64_t> position(
            count); // the stream's: for estimation across frames
        std::vector<float> cfo(count);
        for (size_t f = 0; f < count; ++f) {
            start[f] = frames[f].frame_start;
            position[f] = frames[f].frame_start;
            cfo[f] = frames[f].cfo;
        }
        // The results' host copies, made before the launches (a recorded graph
        // may not allocate).
        float* n0 = m_n0.reserve(count);
        float* spread = m_spread.reserve(count);
        float* doppler = m_doppler.reserve(count);
        int* linked = m_linked.reserve(count);
        float* antenna_n0 = m_antenna_n0.reserve(count * m_nr);
        // Pinned, the same every call of a shape: recorded with the demodulation.
        // Device pointers are read here: run_view grows them.
        const auto downloads = [&] {
            const auto download = [&](auto* to, const auto* from, size_t n) {
                if (from)
                    MIMO_CUDA_CHECK(cudaMemcpyAsync(
                        to, from, n * sizeof(*to), cudaMemcpyDeviceToHost, st));
            };
            download(n0, m_front_end.device_n0(), count);
            download(spread, m_front_end.device_spread(), count);
            download(doppler, m_front_end.device_doppler(), count);
            download(linked, m_front_end.linked_frames(), count);
            download(antenna_n0, m_front_end.device_antenna_n0(), count * m_nr);
        };
        m_front_end.run_view(view(),
                             start.data(),
                             cfo.data(),
                             count,
                             H,
                             y,
                             st,
                             position.data(),
                             downloads);
        // Per-frame values the configuration does not make: zeros.
        if (!m_front_end.device_doppler())
            std::fill(doppler, doppler + count, 0.0f);
        if (!m_front_end.linked_frames())
            std::fill(linked, linked + count, 0);
        MIMO_CUDA_CHECK(cudaEventRecord(m_demodulated.get(), st));
        m_most_queued = std::max(m_most_queued, count);
        m_queued = frames;
        m_reads_ring = true;
        m_reads_from = *std::min_element(start.begin(), start.end());
    }

    const size_t m_nr, m_batch, m_capacity;
    /// The demodulation and the copies of its outputs, first (receiver_priority).
    cuda_stream m_stream;
    /// The search, as first: it overlaps a demodulation in flight.
    cuda_stream m_search_stream;
    cuda_stream m_copy_stream; ///< appends: they overlap the front end's work
    cuda_front_end m_front_end;
    device_array<cfloat> m_ring;
    pinned_buffer<cfloat> m_staging[2];
    cuda_event m_staged[2];
    int m_next_slot = 0;
    /// Whether an append since the last finish_appends() copies from the
    /// caller's memory.
    bool m_reads_callers = false;
    pinned_buffer<float> m_n0, m_spread, m_doppler, m_antenna_n0;
    pinned_buffer<int> m_linked;
    std::vector<sync_result> m_queued; ///< the frames of the last queue(), until read
    cuda_event m_demodulated, m_handed_on;
    /// Whether a queued demodulation may still read the ring, from this sample on.
    bool m_reads_ring = false;
    uint64_t m_reads_from = 0;
    size_t m_most_queued = 0; ///< frames a queue() took at most
};

} // namespace

std::unique_ptr<sample_window> make_cuda_window(const ofdm_grid& grid,
                                                const ofdm_receiver_config& config)
{
    return std::make_unique<cuda_sample_window>(grid, config);
}

} // namespace detail
} // namespace mimo_gpu

#endif
