// ofdm_receiver (CPU): synchronisation, demodulation, pilot estimation,
// interpolation and the detector's H / y. VOLK does the per-sample work
// (CFO rotation, matched-filter dot products); FFTW the FFTs.
#include <mimo_gpu/ofdm_receiver.h>

#include "../runtime/engine_choice.h"
#include "../runtime/parallel_for.h"
#include "antenna_noise.h"
#include "comb_interpolation.h"
#include "delay_profile.h"
#include "fftw_plan.h"
#include "frame_history.h"
#include "frame_search.h"
#include "time_filter.h"
#ifdef MIMO_GPU_HAVE_CUDA
#include "cuda_front_end.h"
#endif

#include <volk/volk.h>

#include <unordered_map>
#include <algorithm>
#include <cmath>
#include <complex>
#include <functional>
#include <stdexcept>

namespace mimo_gpu {

namespace {
/// FFT windows per task of the demodulation: about 32 512-point FFTs' work (tens
/// of microseconds); less costs more to hand to another thread than to run.
size_t windows_per_task(int fft_size)
{
    return std::max<size_t>(1, size_t(32 * 512) / size_t(fft_size));
}

void fail(const std::string& what)
{
    throw std::invalid_argument("mimo_gpu: ofdm_receiver: " + what);
}
} // namespace

struct ofdm_receiver::impl {
    detail::fftw_plan_1d fft;
    detail::delay_profile_geometry profile; ///< delay_profile.h's search
    detail::fftw_plan_1d profile_fft;       ///< its transform (inverse)
    detail::frame_search search;
    std::vector<cfloat> Y;    ///< demodulated grid: (k * U + i) * nr + r
    std::vector<int> offsets; ///< frequency offset of each logical subcarrier
    std::vector<int> bins;    ///< FFT bin of each logical subcarrier
    std::vector<cfloat>
        pilots; ///< known pilot of (pilot symbol q, subcarrier i), boosted: [q * U + i]
    detail::slot_layout layout; ///< where the pilot and data symbols sit
    /// Estimation across frames: where the last frame received lay, and its
    /// pilot symbols' estimates.
    detail::frame_history history;
    std::vector<cfloat> last_pilots;
#ifdef MIMO_GPU_HAVE_CUDA
    std::unique_ptr<detail::cuda_front_end>
        cuda; ///< null: the CPU demodulates and estimates
#endif
    impl(const ofdm_grid& g, const ofdm_receiver_config& c, int backoff)
        : fft(g.fft_size, detail::fftw_plan_1d::direction::forward),
          profile(detail::make_delay_profile_geometry(g.fft_size,
                                                      g.cp_length,
                                                      g.used_subcarriers,
                                                      g.nt,
                                                      c.nr,
                                                      g.pilot_symbols())),
          profile_fft(profile.points, detail::fftw_plan_1d::direction::inverse),
          search(g, c, backoff),
          layout(detail::layout_of(g)),
          history(g, c.across_frames)
    {
    }
};

ofdm_receiver::ofdm_receiver(const ofdm_grid& grid, const ofdm_receiver_config& config)
    : m_grid((grid.validate(), grid)),
      m_config(config),
      m_backoff(config.window_backoff < 0 ? grid.cp_length / 8 : config.window_backoff),
      m_spread_over_n(float(config.lmmse_delay_spread / grid.fft_size)),
      m_impl(std::make_unique<impl>(grid, config, m_backoff))
{
    if (config.nr < grid.nt || config.nr > 256)
        fail("nr must be in nt..256 (nt = " + std::to_string(grid.nt) + "), got " +
             std::to_string(config.nr));
    if (!(config.sync_threshold > 0 && config.sync_threshold < 1))
        fail("sync_threshold must be in (0, 1)");
    if (!(config.max_batch_wait_ms >= 0 && std::isfinite(config.max_batch_wait_ms)))
        fail("max_batch_wait_ms must be finite and >= 0, got " +
             std::to_string(config.max_batch_wait_ms));
    if (!(config.gpu_batch_speed >= 0)) // infinity allowed: never batches
        fail("gpu_batch_speed must be >= 0, got " +
             std::to_string(config.gpu_batch_speed));
    if (config.lmmse_window < 2 || config.lmmse_window > detail::k_lmmse_max_window)
        fail("lmmse_window must be in 2.." + std::to_string(detail::k_lmmse_max_window) +
             ", got " + std::to_string(config.lmmse_window));
    if (!(config.lmmse_delay_spread < 0 ||
          (config.lmmse_delay_spread > 0 && config.lmmse_delay_spread <= grid.fft_size)))
        fail("lmmse_delay_spread must be -1 (estimated from the pilots) or in (0, "
             "fft_size] samples");
    if (m_backoff > grid.cp_length)
        fail("window_backoff must be at most the cyclic prefix (" +
             std::to_string(grid.cp_length) + ")");
    if (config.across_frames && config.interpolation != time_interpolation::lmmse)
        fail("across_frames needs LMMSE interpolation in time (the Doppler model "
             "weighs the older frame's pilot symbols)");
    for (int i = 0; i < grid.used_subcarriers; ++i) {
        m_impl->offsets.push_back(grid.offset(i));
        m_impl->bins.push_back(grid.bin(i));
    }
    for (int q = 0; q < m_impl->layout.pilots(); ++q)
        for (int i = 0; i < grid.used_subcarriers; ++i)
            m_impl->pilots.push_back(grid.pilot(q, i) * std::sqrt(float(grid.nt)));
    const bool cuda = detail::choose_engine(
        config.requested, [] { return false; }, [] { return true; });
#ifdef MIMO_GPU_HAVE_CUDA
    if (cuda)
        m_impl->cuda = std::make_unique<detail::cuda_front_end>(
            grid, config, m_backoff, m_impl->search.preamble());
#else
    (void)cuda;
#endif
}

ofdm_receiver::device_frames
ofdm_receiver::receive_device(const cfloat* d_rx,
                              size_t samples,
                              const std::vector<sync_result>& syncs,
                              cuda_stream_t stream)
{
    device_frames out;
#ifdef MIMO_GPU_HAVE_CUDA
    if (m_impl->cuda) {
        std::vector<size_t> start;
        std::vector<float> cfo;
        for (const sync_result& s : syncs) {
            if (!s.found)
                fail("receive_device: a frame with no preamble found");
            start.push_back(s.frame_start);
            cfo.push_back(s.cfo);
        }
        m_impl->cuda->run_device(d_rx,
                                 samples,
                                 start.data(),
                                 cfo.data(),
                                 syncs.size(),
                                 reinterpret_cast<cudaStream_t>(stream));
        const bool hold = m_config.interpolation == time_interpolation::hold;
        out.H = m_impl->cuda->device_H();
        out.y = m_impl->cuda->device_y();
        out.n0 = m_impl->cuda->device_n0();
        out.frames = syncs.size();
        out.symbols_per_channel = hold ? m_grid.data_symbols : 1;
        out.channels = size_t(m_grid.slots) * m_grid.used_subcarriers *
                       (hold ? 1 : m_grid.data_symbols);
        return out;
    }
#endif
    (void)d_rx;
    (void)samples;
    (void)syncs;
    (void)stream;
    throw std::logic_error(
        "mimo_gpu: ofdm_receiver: receive_device needs the CUDA backend");
}

backend ofdm_receiver::active_backend() const
{
#ifdef MIMO_GPU_HAVE_CUDA
    if (m_impl->cuda)
        return backend::cuda;
#endif
    return backend::cpu;
}

ofdm_receiver::~ofdm_receiver() = default;

sync_result
ofdm_receiver::synchronize(const cfloat* rx, size_t samples, size_t from) const
{
    const detail::frame_search& search = m_impl->search;
    const size_t begin =
        from >= search.rule().lookback() ? from - search.rule().lookback() : 0;
    const detail::walk_result w = search.find(rx, samples, begin, from, 1, true);
    return w.frames.empty() ? w.cut : w.frames.front();
}

sync_result ofdm_receiver::synchronize_device(const cfloat* d_rx,
                                              size_t samples,
                                              size_t from,
                                              cuda_stream_t stream) const
{
#ifdef MIMO_GPU_HAVE_CUDA
    if (m_impl->cuda) {
        const size_t lookback = m_impl->search.rule().lookback();
        const size_t begin = from >= lookback ? from - lookback : 0;
        const detail::walk_result w =
            m_impl->cuda->find_frames(detail::sample_view::interleaved(d_rx, m_config.nr),
                                      samples,
                                      begin,
                                      from,
                                      1,
                                      true,
                                      reinterpret_cast<cudaStream_t>(stream));
        return w.frames.empty() ? w.cut : w.frames.front();
    }
#endif
    (void)d_rx;
    (void)samples;
    (void)from;
    (void)stream;
    throw std::logic_error(
        "mimo_gpu: ofdm_receiver: synchronize_device needs the CUDA backend");
}

void ofdm_receiver::demodulate(const cfloat* rx,
                               const sync_result& sync,
                               std::vector<cfloat>& Y) const
{
    const ofdm_grid& g = m_grid;
    const int N = g.fft_size, U = g.used_subcarriers, nr = m_config.nr;
    const int K = g.frame_symbols();
    Y.resize(size_t(K) * U * nr);
    // CFO correction: rotate by -2 pi cfo n / N, n counted from the preamble window.
    const double w = -2 * M_PI * sync.cfo / N;
    const lv_32fc_t step = std::polar(1.0f, float(w));
    const detail::fftw_plan_1d& fft = m_impl->fft;
    const float scale = fft.scale();
    // Windows (symbol k, antenna r) are independent: spread over the cores.
    detail::parallel_for(
        size_t(K) * nr, windows_per_task(N), [&](size_t begin, size_t end) {
            const auto lane = fft.make_buffer();
            for (size_t e = begin; e < end; ++e) {
                const int k = int(e / size_t(nr)), r = int(e % size_t(nr));
                const size_t start = sync.frame_start + size_t(k) * g.symbol_samples();
                for (int n = 0; n < N; ++n)
                    lane[size_t(n)] = rx[(start + size_t(n)) * nr + size_t(r)];
                lv_32fc_t phase = std::polar(
                    1.0f, float(std::fmod(w * double(k) * g.symbol_samples(), 2 * M_PI)));
                volk_32fc_s32fc_x2_rotator_32fc(
                    lane.get(), lane.get(), step, &phase, unsigned(N));
                fft.execute(lane.get());
                for (int i = 0; i < U; ++i)
                    Y[(size_t(k) * U + i) * nr + r] =
                        lane[size_t(m_impl->bins[size_t(i)])] * scale;
            }
        });
}

namespace {

/// What the LS estimates at the pilots say about the frame (estimate's first step).
struct pilot_statistics {
    std::vector<double> slopes; ///< per pilot symbol: the turn per subcarrier
                                ///< spacing (the mean delay)
    double noise = 0, power = 0;
    size_t noise_terms = 0;
};

/// Per pilot symbol: LS at the pilots; the channel's mean delay (window
/// timing included) turns the estimates along frequency at a steady rate, so
/// it is measured from neighbouring pilots and taken out before the noise
/// estimate and the interpolation, which then see only the spread around it.
/// pilot_ls: pilot symbols * U * nr, the estimates with the turn taken out.
pilot_statistics least_squares_at_pilots(const ofdm_grid& g,
                                         const detail::slot_layout& layout,
                                         int nr,
                                         const cfloat* Y,
                                         const cfloat* pilots,
                                         const int* offset,
                                         cfloat* pilot_ls)
{
    const int U = g.used_subcarriers, nt = g.nt;
    pilot_statistics st;
    st.slopes.resize(size_t(layout.pilots()));
    for (int j = 0; j < layout.pilots(); ++j) {
        const int k = layout.pilot_symbol(j);
        cfloat* ls = pilot_ls + size_t(j) * U * nr;
        for (int i = 0; i < U; ++i) {
            // y / p as (y conj(p)) / |p|^2 (the CUDA kernel's arithmetic; std::complex's
            // division guards infinities at several times the cost)
            const cfloat p = pilots[size_t(j) * U + size_t(i)];
            const float norm = p.real() * p.real() + p.imag() * p.imag();
            for (int r = 0; r < nr; ++r) {
                const cfloat y = Y[(size_t(k) * U + i) * nr + r];
                ls[size_t(i) * nr + r] =
                    cfloat((y.real() * p.real() + y.imag() * p.imag()) / norm,
                           (y.imag() * p.real() - y.real() * p.imag()) / norm);
            }
        }
        std::complex<double> turn(0, 0);
        for (int t = 0; t < nt; ++t)
            for (int i = t; i + nt < U; i += nt)
                for (int r = 0; r < nr; ++r)
                    turn += std::conj(std::complex<double>(ls[size_t(i) * nr + r])) *
                            std::complex<double>(ls[size_t(i + nt) * nr + r]) /
                            double(offset[i + nt] - offset[i]);
        st.slopes[size_t(j)] = std::arg(turn) / nt; // radians per subcarrier spacing
        for (int i = 0; i < U; ++i) {
            const cfloat turn_back = std::polar(
                1.0f, float(-st.slopes[size_t(j)] * offset[i])); // once per subcarrier
            for (int r = 0; r < nr; ++r) {
                cfloat& v = ls[size_t(i) * nr + r];
                v *= turn_back;
                st.power += std::norm(v);
            }
        }
        // Noise from second differences along each comb (equally spaced triples):
        // E|e|^2 = 6 N0 / nt for LS noise N0 / nt, a linear channel trend cancels.
        for (int t = 0; t < nt; ++t)
            for (int i = t; i + 2 * nt < U; i += nt) {
                if (offset[i + nt] - offset[i] != offset[i + 2 * nt] - offset[i + nt])
                    continue; // straddles the DC null
                for (int r = 0; r < nr; ++r) {
                    const cfloat e = ls[size_t(i) * nr + r] -
                                     2.0f * ls[size_t(i + nt) * nr + r] +
                                     ls[size_t(i + 2 * nt) * nr + r];
                    st.noise += std::norm(e);
                    ++st.noise_terms;
                }
            }
    }
    return st;
}

/// The delay support of the frame's channel and the LS noise (delay_profile.h)
/// from the LS estimates with the mean delay out (pilot_ls: pilots * U * nr),
/// and each receive antenna's LS noise from its share of the profile
/// (antenna_noise.h; -1 where too few bins); per_antenna: where the antennas'
/// noise is apart, searched again with each antenna weighted by it.
struct measured_delay_profile {
    detail::delay_profile_result frame;
    std::vector<float> antenna_ls_noise;
};

measured_delay_profile measure_delay_profile(const ofdm_grid& g,
                                             int pilots,
                                             int nr,
                                             const cfloat* pilot_ls,
                                             float ls_noise,
                                             bool per_antenna,
                                             const detail::delay_profile_geometry& geo,
                                             const detail::fftw_plan_1d& fft)
{
    const int U = g.used_subcarriers, nt = g.nt, A = geo.points;
    std::vector<float> antenna_power(size_t(nr) * A, 0.0f); // [r * A + b]
    const auto lane = fft.make_buffer();
    for (int j = 0; j < pilots; ++j)
        for (int t = 0; t < nt; ++t) {
            const int M = (U - t + nt - 1) / nt;
            for (int r = 0; r < nr; ++r) {
                std::fill(lane.get(), lane.get() + A, cfloat(0, 0));
                for (int m = 0; m < M; ++m)
                    lane[size_t(m)] =
                        pilot_ls[(size_t(j) * U + size_t(t + nt * m)) * nr + r] *
                        detail::delay_profile_window(m, M);
                fft.execute(lane.get());
                for (int b = 0; b < A; ++b)
                    antenna_power[size_t(r) * A + b] += std::norm(lane[size_t(b)]);
            }
        }
    // The frame's profile (antenna r's weighted by weight[r]), searched; each
    // antenna's noise beside the span found.
    std::vector<float> power(static_cast<size_t>(A));
    std::vector<float> weight(size_t(nr), 1.0f);
    measured_delay_profile m;
    m.antenna_ls_noise.assign(size_t(nr), -1.0f);
    // Each antenna's noise beside a span (an empty one: beside the mean
    // delay's bins alone); whether every antenna had enough bins.
    const auto antenna_noise = [&](const detail::delay_span& span) {
        bool measured = true;
        for (int r = 0; r < nr; ++r) {
            float sum = 0;
            int bins = 0;
            for (int k = -A / 2; k < A / 2; ++k)
                if (detail::delay_noise_bin(geo, k, span.lo, span.hi)) {
                    sum += antenna_power[size_t(r) * A + size_t(k < 0 ? k + A : k)];
                    ++bins;
                }
            m.antenna_ls_noise[size_t(r)] = detail::antenna_ls_noise(geo, sum, bins, nr);
            measured = measured && m.antenna_ls_noise[size_t(r)] >= 0;
        }
        return measured;
    };
    const auto search = [&](float initial_noise) {
        std::fill(power.begin(), power.end(), 0.0f);
        for (int r = 0; r < nr; ++r)
            for (int b = 0; b < A; ++b)
                power[size_t(b)] += antenna_power[size_t(r) * A + b] * weight[size_t(r)];
        m.frame = detail::search_delay_profile(geo, power.data(), initial_noise);
        return m.frame.ls_noise >= 0 && antenna_noise(m.frame.span);
    };
    bool measured = search(ls_noise);
    if (!per_antenna)
        return m;
    // A noisy antenna's profile can also lift bins of the sum above the floor
    // everywhere (its noise spreads as a few profiles', not as all of them):
    // then the first guess of each antenna's noise is its bins beside the mean
    // delay's alone, and the weighted search runs twice. A weighted search
    // that finds too few noise bins gives way to the last that did not.
    bool have_noise = measured;
    int passes = 1;
    if (!measured) {
        have_noise = antenna_noise(detail::delay_span{ 1, 0 });
        passes = 2;
    }
    measured_delay_profile kept = m;
    for (int pass = 0;
         pass < passes && have_noise &&
         detail::antenna_profile_weights(m.antenna_ls_noise.data(), nr, weight.data());
         ++pass) {
        float mean = 0;
        for (float n : m.antenna_ls_noise)
            mean += n / float(nr);
        if (!search(mean)) { // the antennas apart: again, each by its noise
            m = kept;
            break;
        }
        float weighted_mean = 0; // a weighted search's LS noise: the antennas' mean
        for (float n : m.antenna_ls_noise)
            weighted_mean += n / float(nr);
        m.frame.ls_noise = weighted_mean;
        kept = m;
        measured = true;
    }
    if (!measured)
        std::fill(m.antenna_ls_noise.begin(), m.antenna_ls_noise.end(), -1.0f);
    return m;
}

/// The comb interpolation of each (stream, subcarrier): its pilots and
/// weights, k_lmmse_max_window slots each.
struct comb_weights {
    std::vector<int> pilots, counts;
    std::vector<float> weights;
};

/// The weights depend on the frame's statistics, not on the slot: made once a frame.
comb_weights make_comb_weights(const ofdm_grid& g,
                               const ofdm_receiver_config& config,
                               const int* offsets,
                               float spread_over_n,
                               float relative_noise)
{
    const int U = g.used_subcarriers, nt = g.nt;
    const int Wmax = detail::k_lmmse_max_window;
    comb_weights cw;
    cw.pilots.resize(size_t(U) * nt * Wmax);
    cw.counts.resize(size_t(U) * nt);
    cw.weights.resize(size_t(U) * nt * Wmax);
    // Most windows share their geometry (pilot distances): LMMSE solves once per
    // geometry, found again by a hash of its distances (a map of vectors allocated
    // a key per subcarrier).
    struct geometry {
        int n;
        int distance[detail::k_lmmse_max_window];
        float weights[detail::k_lmmse_max_window];
    };
    std::vector<geometry> geometries;
    std::unordered_map<uint64_t, size_t> geometry_of_hash;
    for (int t = 0; t < nt; ++t)
        for (int c = 0; c < U; ++c) {
            const size_t ct = size_t(t) * U + c;
            int* pilot = &cw.pilots[ct * Wmax];
            float* w = &cw.weights[ct * Wmax];
            if (config.frequency == frequency_interpolation::linear) {
                cw.counts[ct] =
                    detail::linear_comb_weights(c, t, nt, U, offsets, pilot, w);
                continue;
            }
            geometry key;
            key.n = detail::lmmse_comb_window(c, t, nt, U, config.lmmse_window, pilot);
            uint64_t hash = 1469598103934665603ull ^ uint64_t(key.n);
            for (int a = 0; a < key.n; ++a) {
                key.distance[a] = offsets[size_t(pilot[a])] - offsets[size_t(c)];
                hash = (hash ^ uint64_t(uint32_t(key.distance[a]))) * 1099511628211ull;
            }
            auto same = [&](const geometry& x) {
                return x.n == key.n &&
                       std::equal(x.distance, x.distance + x.n, key.distance);
            };
            const auto found = geometry_of_hash.find(hash);
            size_t index = geometries.size();
            if (found != geometry_of_hash.end() && same(geometries[found->second]))
                index = found->second;
            else // new, or a hash collision: look the geometry up by its distances
                index = size_t(std::find_if(geometries.begin(), geometries.end(), same) -
                               geometries.begin());
            if (index == geometries.size()) {
                detail::lmmse_solve(
                    key.distance, key.n, spread_over_n, relative_noise, key.weights);
                geometries.push_back(key);
                geometry_of_hash.emplace(hash, index);
            }
            std::copy(geometries[index].weights, geometries[index].weights + key.n, w);
            cw.counts[ct] = key.n;
        }
    return cw;
}

/// Each pilot symbol's channel at every subcarrier from its pilots (the turn
/// put back), and the LS estimates turned back as measured, for diagnostics.
/// weights: one for every receive antenna, or one each.
void interpolate_pilot_symbols(const ofdm_grid& g,
                               int pilots,
                               int nr,
                               const std::vector<comb_weights>& weights,
                               const std::vector<double>& slopes,
                               const int* offsets,
                               cfloat* pilot_ls,
                               cfloat* pilot_channels)
{
    const int U = g.used_subcarriers, nt = g.nt;
    const int Wmax = detail::k_lmmse_max_window;
    for (int j = 0; j < pilots; ++j) {
        cfloat* ls = pilot_ls + size_t(j) * U * nr;
        cfloat* H = pilot_channels + size_t(j) * U * nr * nt;
        const double slope = slopes[size_t(j)];
        detail::parallel_for(size_t(U), 256, [&](size_t c_begin, size_t c_end) {
            for (int t = 0; t < nt; ++t)
                for (int c = int(c_begin); c < int(c_end); ++c) {
                    const size_t ct = size_t(t) * U + c;
                    const cfloat back =
                        std::polar(1.0f, float(slope * offsets[size_t(c)]));
                    for (int r = 0; r < nr; ++r) {
                        const comb_weights& cw =
                            weights[weights.size() > 1 ? size_t(r) : 0];
                        const int* pilot = &cw.pilots[ct * Wmax];
                        const float* w = &cw.weights[ct * Wmax];
                        cfloat v(0, 0);
                        for (int k = 0; k < cw.counts[ct]; ++k)
                            v += ls[size_t(pilot[k]) * nr + r] * w[k];
                        H[(size_t(c) * nr + r) * nt + t] = v * back;
                    }
                }
        });
        for (int i = 0; i < U; ++i) { // the LS estimates as measured, for diagnostics
            const cfloat turn_again = std::polar(1.0f, float(slope * offsets[size_t(i)]));
            for (int r = 0; r < nr; ++r)
                ls[size_t(i) * nr + r] *= turn_again;
        }
    }
}

/// Each antenna's noise (antenna_n0: nr values; null: the frame's N0 at
/// each) and whether and how the frame is whitened (antenna_noise.h).
void set_antenna_noise(front_end_frame& f, int nr, const float* antenna_n0)
{
    f.whitened =
        detail::report_antenna_noise(nr, f.n0, antenna_n0, f.antenna_n0, f.antenna_scale);
}

} // namespace

namespace detail {
/// The frame before a linked frame (time_filter.h, estimation across frames).
struct frame_before {
    const cfloat* pilot_channels = nullptr; ///< its Q pilot symbols' estimates
    float gap = 0;                          ///< symbols from its start to this frame's
    std::vector<frame_link_turn> turns;     ///< per pilot symbol, onto this frame's phase
};
} // namespace detail

namespace {

/// The turns of the frame before's pilot symbols onto this frame's first
/// (frame_link_of), and the sums link_model takes: C (each older pilot
/// symbol q, turned, against this frame's q) and P. False where a sum is not
/// finite or zero (not linked).
bool link_frames(const ofdm_grid& g,
                 const int* offsets,
                 int nr,
                 const cfloat* before,
                 const cfloat* pilots,
                 detail::frame_before& link,
                 float& C,
                 float& P)
{
    const int U = g.used_subcarriers, Q = g.pilot_symbols();
    const size_t hn = size_t(nr) * g.nt, per_pilot = size_t(U) * hn;
    link.turns.assign(size_t(Q), {});
    std::vector<std::complex<double>> d(static_cast<size_t>(U)),
        same(static_cast<size_t>(U));
    double cross = 0, power = 0;
    for (int q = 0; q < Q; ++q) {
        const cfloat* a = before + size_t(q) * per_pilot;
        const cfloat* b = pilots + size_t(q) * per_pilot;
        for (int c = 0; c < U; ++c) {
            std::complex<double> sum(0, 0), pair(0, 0);
            for (size_t e = 0; e < hn; ++e) {
                const size_t x = size_t(c) * hn + e;
                sum += std::complex<double>(std::conj(a[x]) * pilots[x]);
                pair += std::complex<double>(std::conj(a[x]) * b[x]);
                power += 0.5 * (double(std::norm(a[x])) + double(std::norm(b[x])));
            }
            d[size_t(c)] = sum;
            same[size_t(c)] = pair;
        }
        // The ramp from d_c's phases alone (a product of two d's grows with
        // |H|^4: a scaled input would overflow the CUDA engine's floats).
        const auto unit = [](std::complex<double> v) {
            const double m = std::abs(v);
            return m > 0 ? v / m : std::complex<double>(0, 0);
        };
        std::complex<double> step(0, 0), centred(0, 0), pair(0, 0);
        for (int c = 0; c + 1 < U; ++c)
            if (offsets[c + 1] - offsets[c] == 1)
                step += std::conj(unit(d[size_t(c)])) * unit(d[size_t(c) + 1]);
        const float slope =
            detail::frame_link_slope(float(step.real()), float(step.imag()), g.fft_size);
        for (int c = 0; c < U; ++c) {
            const std::complex<double> back =
                std::polar(1.0, -double(slope) * offsets[c]);
            centred += d[size_t(c)] * back;
            pair += same[size_t(c)] * back;
        }
        cross += std::abs(pair);
        if (!detail::frame_link_of(float(step.real()),
                                   float(step.imag()),
                                   float(centred.real()),
                                   float(centred.imag()),
                                   slope,
                                   link.turns[size_t(q)]))
            return false;
    }
    C = float(cross);
    P = float(power);
    return std::isfinite(C) && std::isfinite(P);
}

} // namespace

detail::jakes_model ofdm_receiver::estimate(front_end_frame& f,
                                            const cfloat* Y,
                                            std::vector<float>& antenna_time_noise) const
{
    antenna_time_noise.clear();
    const ofdm_grid& g = m_grid;
    const detail::slot_layout& layout = m_impl->layout;
    const int U = g.used_subcarriers, nr = m_config.nr, nt = g.nt, Q = layout.pilots();
    f.pilot_ls.resize(size_t(Q) * U * nr);
    f.pilot_channels.resize(size_t(Q) * U * nr * nt);
    const int* offsets = m_impl->offsets.data();
    const pilot_statistics st = least_squares_at_pilots(
        g, layout, nr, Y, m_impl->pilots.data(), offsets, f.pilot_ls.data());
    f.n0 = st.noise_terms ? float(st.noise / double(st.noise_terms) * nt / 6.0) : 0.0f;
    // The LMMSE weights need the LS noise relative to an antenna pair's channel power.
    float ls_noise = f.n0 / float(nt);
    const float pair_power = float(st.power / (double(Q) * U * nr));
    float spread_over_n = m_spread_over_n;
    std::vector<double> slopes = st.slopes;
    std::vector<float> antenna_n0; // empty: the frame's N0 at every antenna
    if (m_config.lmmse_delay_spread < 0 &&
        m_config.frequency == frequency_interpolation::lmmse) {
        // From the pilots' delay profile: the noise where its bins beyond the
        // channel give it, the model centred on the support's middle (the
        // estimates turned by it as by the mean delay).
        const measured_delay_profile measured =
            measure_delay_profile(g,
                                  Q,
                                  nr,
                                  f.pilot_ls.data(),
                                  ls_noise,
                                  m_config.measures_antenna_noise(),
                                  m_impl->profile,
                                  m_impl->profile_fft);
        const detail::delay_profile_result& profile = measured.frame;
        if (profile.ls_noise >= 0) {
            ls_noise = profile.ls_noise;
            f.n0 = ls_noise * float(nt);
            if (m_config.measures_antenna_noise() &&
                *std::min_element(measured.antenna_ls_noise.begin(),
                                  measured.antenna_ls_noise.end()) >= 0)
                for (float ls : measured.antenna_ls_noise)
                    antenna_n0.push_back(ls * float(nt));
        }
        spread_over_n = profile.support.spread / float(g.fft_size);
        const double turn = 2 * M_PI * double(profile.support.centre) / g.fft_size;
        for (int j = 0; j < Q; ++j) {
            slopes[size_t(j)] -= turn;
            for (int i = 0; i < U; ++i) {
                const cfloat by = std::polar(1.0f, float(turn * offsets[i]));
                for (int r = 0; r < nr; ++r)
                    f.pilot_ls[(size_t(j) * U + i) * nr + r] *= by;
            }
        }
    }
    set_antenna_noise(f, nr, antenna_n0.empty() ? nullptr : antenna_n0.data());
    const float relative_noise = detail::lmmse_relative_noise(pair_power, ls_noise);
    f.delay_spread = m_config.frequency == frequency_interpolation::lmmse
                         ? spread_over_n * float(g.fft_size)
                         : 0.0f;
    // A whitened frame's antennas differ in noise: each antenna's comb filter
    // (and time filter) smooths as its own noise asks (one filter for all where
    // they are alike).
    std::vector<float> antenna_relative_noise;
    if (f.whitened && m_config.frequency == frequency_interpolation::lmmse)
        for (int r = 0; r < nr; ++r)
            antenna_relative_noise.push_back(detail::lmmse_antenna_relative_noise(
                pair_power, ls_noise, f.antenna_n0[size_t(r)] / float(nt)));
    std::vector<comb_weights> weights;
    for (float s : antenna_relative_noise)
        weights.push_back(make_comb_weights(g, m_config, offsets, spread_over_n, s));
    if (weights.empty())
        weights.push_back(
            make_comb_weights(g, m_config, offsets, spread_over_n, relative_noise));
    interpolate_pilot_symbols(
        g, Q, nr, weights, slopes, offsets, f.pilot_ls.data(), f.pilot_channels.data());
    if (m_config.interpolation != time_interpolation::lmmse)
        return {};
    // The time filter: the noise the frequency filter leaves, and the Doppler
    // from the closest pilot symbols' estimates.
    const size_t per_pilot = size_t(U) * nr * nt;
    std::complex<double> C(0, 0);
    double P = 0;
    for (int j = 0; j + 1 < Q; ++j)
        for (size_t e = 0; e < per_pilot && layout.doppler_pair(j); ++e) {
            const cfloat a = f.pilot_channels[size_t(j) * per_pilot + e],
                         b = f.pilot_channels[size_t(j + 1) * per_pilot + e];
            C += std::conj(std::complex<double>(a)) * std::complex<double>(b);
            P += 0.5 * (double(std::norm(a)) + double(std::norm(b)));
        }
    const float gain =
        detail::frequency_noise_gain(m_config.frequency == frequency_interpolation::lmmse,
                                     spread_over_n,
                                     nt,
                                     m_config.lmmse_window);
    const detail::jakes_model model = detail::jakes_model_of_frame(C.real(),
                                                                   C.imag(),
                                                                   P,
                                                                   layout.doppler_pairs(),
                                                                   float(per_pilot),
                                                                   ls_noise,
                                                                   relative_noise,
                                                                   gain,
                                                                   layout.doppler_lag());
    for (float s : antenna_relative_noise)
        antenna_time_noise.push_back(s * gain);
    f.doppler =
        detail::doppler_hz(model.doppler, float(g.sample_rate / g.symbol_samples()));
    return model;
}

void ofdm_receiver::emit_y(front_end_frame& f, const cfloat* Y) const
{
    const ofdm_grid& g = m_grid;
    const detail::slot_layout& layout = m_impl->layout;
    const int U = g.used_subcarriers, nr = m_config.nr, D = g.data_symbols;
    f.y.resize(g.data_elements() * nr);
    for (int j = 0; j < g.slots; ++j)
        for (int c = 0; c < U; ++c)
            for (int s = 0; s < D; ++s) {
                const size_t p = (size_t(j) * U + c) * D + size_t(s);
                const int k = layout.data_symbol(j, s);
                for (int r = 0; r < nr; ++r)
                    f.y[p * nr + r] =
                        Y[(size_t(k) * U + c) * nr + r] * f.antenna_scale[size_t(r)];
            }
}

void ofdm_receiver::emit_channels(front_end_frame& f,
                                  const detail::jakes_model& model,
                                  const std::vector<float>& antenna_time_noise,
                                  const detail::frame_before* before) const
{
    const ofdm_grid& g = m_grid;
    const detail::slot_layout& layout = m_impl->layout;
    const int U = g.used_subcarriers, nr = m_config.nr, nt = g.nt, D = g.data_symbols,
              Q = layout.pilots();
    const size_t hn = size_t(nr) * nt, per_pilot = size_t(U) * hn;
    const bool hold = m_config.interpolation == time_interpolation::hold;
    f.symbols_per_channel = hold ? D : 1;
    f.channels = size_t(g.slots) * U * (hold ? 1 : D);
    f.H.resize(f.channels * hn);
    f.linked = before != nullptr;
    // Each data symbol's combination of pilot symbols (the same at every
    // subcarrier; hold: one a slot, made for its first data symbol); per
    // receive antenna where the antennas' noise is their own.
    const detail::time_filter_kind kind =
        hold ? detail::time_filter_kind::hold
        : m_config.interpolation == time_interpolation::linear
            ? detail::time_filter_kind::linear
            : detail::time_filter_kind::lmmse;
    const bool own =
        kind == detail::time_filter_kind::lmmse && !antenna_time_noise.empty();
    const size_t filters = own ? size_t(nr) : 1;
    std::vector<detail::time_combination> combination(size_t(g.slots) * D * filters);
    for (int j = 0; j < g.slots; ++j)
        for (int s = 0; s < D; ++s)
            for (size_t r = 0; r < filters; ++r) {
                detail::jakes_model antenna_model = model;
                if (own)
                    antenna_model.noise = antenna_time_noise[r];
                float lmmse[2 * detail::k_time_taps] = {};
                if (kind == detail::time_filter_kind::lmmse)
                    detail::data_symbol_time_weights(
                        layout, j, s, antenna_model, lmmse, before ? before->gap : -1.0f);
                combination[(size_t(j) * D + s) * filters + r] =
                    detail::combine_in_time(layout, kind, j, s, lmmse, before != nullptr);
            }
    // The frame before's pilot symbols turned onto this frame's phase (linked
    // frames only): its pilot symbol q is pilot symbol q - Q here.
    std::vector<cfloat> turned(before ? size_t(Q) * per_pilot : 0);
    const float first_time = float(layout.pilot_time(0));
    for (int q = 0; before && q < Q; ++q) {
        const float dt =
            detail::linked_pilot_time(layout, q - Q, before->gap) - first_time;
        for (int c = 0; c < U; ++c) {
            const cfloat turn =
                std::polar(1.0f,
                           detail::frame_link_angle(before->turns[size_t(q)],
                                                    m_impl->offsets[size_t(c)],
                                                    model.theta,
                                                    dt));
            const size_t at = size_t(q) * per_pilot + size_t(c) * hn;
            for (size_t e = 0; e < hn; ++e)
                turned[at + e] = before->pilot_channels[at + e] * turn;
        }
    }
    const auto pilot_at = [&](int i, int c, size_t e) {
        return i >= 0 ? f.pilot_channels[size_t(i) * per_pilot + size_t(c) * hn + e]
                      : turned[size_t(Q + i) * per_pilot + size_t(c) * hn + e];
    };
    detail::parallel_for(size_t(U), 256, [&](size_t c_begin, size_t c_end) {
        for (int j = 0; j < g.slots; ++j)
            for (int c = int(c_begin); c < int(c_end); ++c)
                for (int s = 0; s < (hold ? 1 : D); ++s) {
                    const size_t p = (size_t(j) * U + c) * D + size_t(s);
                    cfloat* out = &f.H[(hold ? (size_t(j) * U + c) : p) * hn];
                    for (size_t e = 0; e < hn; ++e) {
                        const detail::time_combination& w =
                            combination[(size_t(j) * D + s) * filters +
                                        (own ? e / size_t(nt) : 0)];
                        cfloat v(0, 0);
                        for (int a = 0; a < w.taps; ++a)
                            v += pilot_at(w.first + a, c, e) *
                                 cfloat(w.w[2 * a], w.w[2 * a + 1]);
                        out[e] = v * f.antenna_scale[e / size_t(nt)];
                    }
                }
    });
}

front_end_frame
ofdm_receiver::receive(const cfloat* rx, size_t samples, const sync_result& sync)
{
    return std::move(receive_frames(rx, samples, { sync }).front());
}

std::vector<front_end_frame>
ofdm_receiver::receive_frames(const cfloat* rx,
                              size_t samples,
                              const std::vector<sync_result>& syncs,
                              const uint64_t* positions)
{
    for (const sync_result& sync : syncs)
        if (!sync.found || !sync.complete)
            fail(sync.found ? "the frame found is not complete in the buffer (" +
                                  std::to_string(samples) + " samples from " +
                                  std::to_string(sync.frame_start) + ")"
                            : "no preamble found: nothing to receive");
    std::vector<front_end_frame> frames(syncs.size());
#ifdef MIMO_GPU_HAVE_CUDA
    if (m_impl->cuda) {
        m_impl->cuda->run(
            rx, samples, syncs.data(), syncs.size(), frames.data(), positions);
        return frames;
    }
#endif
    // Estimation across frames: the gap in symbols from the frame each one
    // follows closely enough (-1: none), the one before in this call or the
    // last of the call before.
    const size_t n = syncs.size();
    const std::vector<float> gaps = m_impl->history.gaps(positions, n);
    // Frames apart: one a task where cores are free, each demodulated into a
    // grid of its own (the work inside a frame splits too, where cores are
    // left). The thread's grid is safe to keep: a thread waiting inside a frame
    // runs only that frame's own tasks (thread_pool.h), never another frame.
    // A linked frame's H waits for the frame before's pilot symbols.
    std::vector<detail::jakes_model> models(n);
    std::vector<std::vector<float>> antenna_time_noise(n);
    const auto receive_frame = [&](size_t k) {
        thread_local std::vector<cfloat> Y;
        front_end_frame& f = frames[k];
        f.sync = syncs[k];
        demodulate(rx, syncs[k], Y);
        models[k] = estimate(f, Y.data(), antenna_time_noise[k]);
        emit_y(f, Y.data());
        if (gaps[k] < 0)
            emit_channels(f, models[k], antenna_time_noise[k], nullptr);
    };
    const auto link_frame = [&](size_t k) {
        if (gaps[k] < 0)
            return;
        detail::frame_before before;
        before.pilot_channels =
            k ? frames[k - 1].pilot_channels.data() : m_impl->last_pilots.data();
        before.gap = gaps[k];
        float C = 0, P = 0;
        const bool joined = detail::slow_enough_to_link(models[k], before.gap) &&
                            link_frames(m_grid,
                                        m_impl->offsets.data(),
                                        m_config.nr,
                                        before.pilot_channels,
                                        frames[k].pilot_channels.data(),
                                        before,
                                        C,
                                        P);
        detail::jakes_model model = models[k];
        const bool linked = joined && detail::link_model(model,
                                                         C,
                                                         P,
                                                         m_impl->layout.pilots(),
                                                         float(m_grid.used_subcarriers) *
                                                             m_config.nr * m_grid.nt,
                                                         before.gap);
        if (linked) // the Doppler the filter used, measured over the frames' distance
            frames[k].doppler = detail::doppler_hz(
                model.doppler, float(m_grid.sample_rate / m_grid.symbol_samples()));
        emit_channels(
            frames[k], model, antenna_time_noise[k], linked ? &before : nullptr);
    };
    const bool parallel = n > 1 && detail::parallel_width() > 1;
    for (const auto& step : { std::function<void(size_t)>(receive_frame),
                              std::function<void(size_t)>(link_frame) }) {
        if (parallel)
            detail::run_tasks(n, step);
        else
            for (size_t k = 0; k < n; ++k)
                step(k);
    }
    m_impl->history.received(positions, n);
    if (n > 0 && m_impl->history.has_last())
        m_impl->last_pilots = frames.back().pilot_channels;
    return frames;
}


front_end_frame ofdm_receiver::receive_known(const cfloat* rx,
                                             const sync_result& sync,
                                             const cfloat* H,
                                             size_t slot_stride,
                                             float n0,
                                             const float* antenna_n0)
{
    if (!sync.found || !sync.complete)
        fail("a known channel needs a complete frame");
    front_end_frame f;
    f.sync = sync;
    demodulate(rx, sync, m_impl->Y);
    const detail::slot_layout& layout = m_impl->layout;
    const size_t per_pilot = size_t(m_grid.used_subcarriers) * m_config.nr * m_grid.nt;
    f.pilot_channels.resize(size_t(layout.pilots()) * per_pilot);
    for (int q = 0; q < layout.pilots(); ++q) {
        const cfloat* slot_channel = H + size_t(q / layout.P) * slot_stride;
        std::copy(slot_channel,
                  slot_channel + per_pilot,
                  f.pilot_channels.begin() + ptrdiff_t(size_t(q) * per_pilot));
    }
    f.n0 = n0;
    for (int r = 0; antenna_n0 && r < m_config.nr; ++r)
        if (!(std::isfinite(antenna_n0[r]) && antenna_n0[r] > 0))
            fail("a known channel's noise per antenna must be finite and > 0 (antenna " +
                 std::to_string(r) + ")");
    set_antenna_noise(f, m_config.nr, antenna_n0);
    emit_y(f, m_impl->Y.data());
    emit_channels(
        f, detail::jakes_model{}, {}, nullptr); // a slot's channel at its pilots
    return f;
}

front_end_frame ofdm_receiver::receive_known_channel(const cfloat* rx,
                                                     size_t samples,
                                                     const sync_result& sync,
                                                     const cfloat* H_known,
                                                     float n0,
                                                     const float* antenna_n0)
{
    (void)samples;
    return receive_known(rx, sync, H_known, 0, n0, antenna_n0);
}

front_end_frame ofdm_receiver::receive_known_channels(const cfloat* rx,
                                                      size_t samples,
                                                      const sync_result& sync,
                                                      const cfloat* H_symbols,
                                                      float n0,
                                                      const float* antenna_n0)
{
    (void)samples;
    // The pilot symbols hold each slot's first data symbol's channel; H is
    // then each data symbol's own.
    const int U = m_grid.used_subcarriers, D = m_grid.data_symbols;
    const size_t hn = size_t(m_config.nr) * m_grid.nt;
    front_end_frame f =
        receive_known(rx, sync, H_symbols, size_t(D) * U * hn, n0, antenna_n0);
    f.symbols_per_channel = 1;
    f.channels = m_grid.data_elements();
    f.H.resize(f.channels * hn);
    for (int j = 0; j < m_grid.slots; ++j)
        for (int s = 0; s < D; ++s)
            for (int c = 0; c < U; ++c)
                for (size_t e = 0; e < hn; ++e)
                    f.H[((size_t(j) * U + c) * D + s) * hn + e] =
                        H_symbols[((size_t(j) * D + s) * U + c) * hn + e] *
                        f.antenna_scale[e / size_t(m_grid.nt)];
    return f;
}

} // namespace mimo_gpu
