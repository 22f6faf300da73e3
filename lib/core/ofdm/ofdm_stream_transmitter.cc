// ofdm_stream_transmitter: the backend choice and the CPU engine (one
// ofdm_transmitter per worker, frames spread over the cores).
#include <mimo_gpu/ofdm_stream_transmitter.h>
#include <mimo_gpu/ofdm_transmitter.h>

#include "../runtime/engine_choice.h"
#include "../runtime/thread_pool.h"
#include "transmitter_engine.h"

#include <algorithm>
#include <limits>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace mimo_gpu {

bad_frame_bits::bad_frame_bits(size_t frame)
    : std::invalid_argument("mimo_gpu: ofdm transmitter: frame " + std::to_string(frame) +
                            " of the batch holds a bit byte other than 0 or 1"),
      m_frame(frame)
{
}

namespace {

class cpu_transmitter final : public detail::transmitter_engine
{
public:
    explicit cpu_transmitter(const ofdm_grid& grid) : m_grid(grid) {}
    backend kind() const override { return backend::cpu; }

    void modulate(const uint8_t* bits, size_t frames, cfloat* const* antennas) override
    {
        const size_t workers = std::min<size_t>(frames, detail::parallel_width());
        while (m_workers.size() < workers)
            m_workers.push_back(std::make_unique<worker>(m_grid));
        const size_t S = size_t(m_grid.frame_samples()), B = m_grid.frame_bits();
        const int nt = m_grid.nt;
        std::mutex bad_mutex;
        size_t bad = std::numeric_limits<size_t>::max();
        detail::run_tasks(workers, [&](size_t w) {
            worker& me = *m_workers[w];
            for (size_t f = w; f < frames; f += workers) {
                try {
                    me.tx.modulate(bits + f * B, me.samples.data());
                } catch (const std::invalid_argument&) {
                    const std::lock_guard<std::mutex> lock(bad_mutex);
                    bad = std::min(bad, f);
                    return;
                }
                for (int t = 0; t < nt; ++t) {
                    cfloat* out = antennas[t] + f * S;
                    for (size_t n = 0; n < S; ++n)
                        out[n] = me.samples[n * size_t(nt) + size_t(t)];
                }
            }
        });
        if (bad != std::numeric_limits<size_t>::max())
            throw bad_frame_bits(bad);
    }

private:
    struct worker {
        explicit worker(const ofdm_grid& g)
            : tx(g), samples(size_t(g.frame_samples()) * size_t(g.nt))
        {
        }
        ofdm_transmitter tx;
        std::vector<cfloat> samples; // antenna-interleaved
    };
    const ofdm_grid m_grid;
    std::vector<std::unique_ptr<worker>> m_workers;
};

} // namespace

struct ofdm_stream_transmitter::engine {
    ofdm_grid grid;
    std::unique_ptr<detail::transmitter_engine> impl;
};

ofdm_stream_transmitter::ofdm_stream_transmitter(const ofdm_grid& grid, backend requested)
    : m_engine(std::make_unique<engine>())
{
    grid.validate();
    m_engine->grid = grid;
    m_engine->impl = detail::choose_engine(
        requested,
        [&]() -> std::unique_ptr<detail::transmitter_engine> {
            return std::make_unique<cpu_transmitter>(grid);
        },
        [&]() -> std::unique_ptr<detail::transmitter_engine> {
#ifdef MIMO_GPU_HAVE_CUDA
            return detail::make_cuda_transmitter(grid);
#else
            return nullptr;
#endif
        });
}

ofdm_stream_transmitter::~ofdm_stream_transmitter() = default;

const ofdm_grid& ofdm_stream_transmitter::grid() const { return m_engine->grid; }

backend ofdm_stream_transmitter::active_backend() const { return m_engine->impl->kind(); }

void ofdm_stream_transmitter::modulate(const uint8_t* bits,
                                       size_t frames,
                                       cfloat* const* antennas)
{
    if (frames > 0)
        m_engine->impl->modulate(bits, frames, antennas);
}

} // namespace mimo_gpu
