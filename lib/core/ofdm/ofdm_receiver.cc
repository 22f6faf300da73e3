// ofdm_receiver (CPU): synchronisation, demodulation, pilot estimation,
// interpolation and the detector's H / y. VOLK does the per-sample work
// (CFO rotation, matched-filter dot products); FFTW the FFTs.
#include <mimo_gpu/ofdm_receiver.h>

#include "comb_interpolation.h"
#include "fftw_plan.h"
#include "../runtime/parallel_for.h"
#include "../runtime/engine_choice.h"
#ifdef MIMO_GPU_HAVE_CUDA
#include "cuda_front_end.h"
#endif

#include <volk/volk.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <map>
#include <functional>
#include <stdexcept>

namespace mimo_gpu {

namespace {
void fail(const std::string& what) { throw std::invalid_argument("mimo_gpu: ofdm_receiver: " + what); }
} // namespace

struct ofdm_receiver::impl {
    detail::fftw_plan_1d fft;
    std::vector<cfloat> preamble_body; ///< the preamble of all antennas together, N time samples
    std::vector<cfloat> Y;             ///< demodulated grid: (k * U + i) * nr + r
    std::vector<int> offsets; ///< frequency offset of each logical subcarrier
#ifdef MIMO_GPU_HAVE_CUDA
    std::unique_ptr<detail::cuda_front_end> cuda; ///< null: the CPU demodulates and estimates
#endif
    explicit impl(int N) : fft(N, detail::fftw_plan_1d::direction::forward) {}
};

ofdm_receiver::ofdm_receiver(const ofdm_grid& grid, const ofdm_receiver_config& config)
    : m_grid((grid.validate(), grid)), m_config(config),
      m_backoff(config.window_backoff < 0 ? grid.cp_length / 8 : config.window_backoff),
      m_spread_over_n(float(config.lmmse_delay_spread / grid.fft_size)),
      m_impl(std::make_unique<impl>(grid.fft_size))
{
    if (config.nr < grid.nt || config.nr > 256)
        fail("nr must be in nt..256 (nt = " + std::to_string(grid.nt) + "), got " + std::to_string(config.nr));
    if (!(config.sync_threshold > 0 && config.sync_threshold < 1))
        fail("sync_threshold must be in (0, 1)");
    if (config.lmmse_window < 2 || config.lmmse_window > detail::k_lmmse_max_window)
        fail("lmmse_window must be in 2.." + std::to_string(detail::k_lmmse_max_window) + ", got " +
             std::to_string(config.lmmse_window));
    if (!(config.lmmse_delay_spread < 0 || (config.lmmse_delay_spread > 0 &&
                                            config.lmmse_delay_spread <= grid.fft_size)))
        fail("lmmse_delay_spread must be -1 (estimated from the pilots) or in (0, fft_size] samples");
    if (m_backoff > grid.cp_length)
        fail("window_backoff must be at most the cyclic prefix (" + std::to_string(grid.cp_length) + ")");
    const int N = grid.fft_size;
    std::vector<cfloat> bins(size_t(N), cfloat(0, 0));
    for (int i = 0; i < grid.used_subcarriers; ++i)
        bins[size_t(grid.bin(i))] = grid.preamble(i);
    m_impl->preamble_body.resize(size_t(N));
    detail::fftw_plan_1d ifft(N, detail::fftw_plan_1d::direction::inverse);
    ifft.run(bins.data(), m_impl->preamble_body.data());
    for (int i = 0; i < grid.used_subcarriers; ++i)
        m_impl->offsets.push_back(grid.offset(i));
    const bool cuda = detail::choose_engine(
        config.requested, [] { return false; }, [] { return true; });
#ifdef MIMO_GPU_HAVE_CUDA
    if (cuda)
        m_impl->cuda = std::make_unique<detail::cuda_front_end>(grid, config);
#else
    (void)cuda;
#endif
}

ofdm_receiver::device_frames ofdm_receiver::receive_device(const cfloat* d_rx, size_t samples,
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
        m_impl->cuda->run_device(d_rx, samples, start.data(), cfo.data(), syncs.size(),
                                 reinterpret_cast<cudaStream_t>(stream));
        const bool hold = m_config.interpolation == time_interpolation::hold;
        out.H = m_impl->cuda->device_H();
        out.y = m_impl->cuda->device_y();
        out.n0 = m_impl->cuda->device_n0();
        out.frames = syncs.size();
        out.symbols_per_channel = hold ? m_grid.data_symbols : 1;
        out.channels = size_t(m_grid.slots) * m_grid.used_subcarriers * (hold ? 1 : m_grid.data_symbols);
        return out;
    }
#endif
    (void)d_rx;
    (void)samples;
    (void)stream;
    throw std::logic_error("mimo_gpu: ofdm_receiver: receive_device needs the CUDA backend");
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

sync_result ofdm_receiver::synchronize(const cfloat* rx, size_t samples, size_t from) const
{
    const int N = m_grid.fft_size, L = N / 2, CP = m_grid.cp_length, nr = m_config.nr;
    if (samples < size_t(N) || from > samples - size_t(N))
        return {};
    // Schmidl-Cox over all antennas: P(d) = sum conj(x[d+m]) x[d+m+L], R(d) the
    // mean energy of the two halves, M = |P|^2 / R^2; sums slide by one sample.
    const size_t last = samples - size_t(N);
    auto at = [&](size_t n, int r) { return std::complex<double>(rx[n * nr + size_t(r)]); };
    std::complex<double> P;
    double R = 0;
    auto exact = [&](size_t d) {
        P = 0;
        R = 0;
        for (int m = 0; m < L; ++m)
            for (int r = 0; r < nr; ++r) {
                const auto a = at(d + m, r), b = at(d + m + L, r);
                P += std::conj(a) * b;
                R += 0.5 * (std::norm(a) + std::norm(b));
            }
    };
    sync_metric w;
    for (size_t d = from; d <= last; ++d) {
        if ((d - from) % 4096 == 0)
            exact(d); // no drift of the running sums over long buffers
        else
            for (int r = 0; r < nr; ++r) {
                const auto a0 = at(d - 1, r), aL = at(d - 1 + L, r), a2 = at(d - 1 + 2 * L, r);
                P += std::conj(aL) * a2 - std::conj(a0) * aL;
                R += 0.5 * (std::norm(a2) - std::norm(a0));
            }
        const float m = R > 0 ? float(std::norm(P) / (R * R)) : 0.0f;
        if (!w.crossed && m > m_config.sync_threshold) {
            w.crossed = true;
            w.first = d;
        }
        if (w.crossed) {
            w.M.push_back(m);
            w.P.push_back(P);
            if (w.M.size() > size_t(N + CP))
                break;
        }
    }
    return decide(w, from, samples, [&](size_t lo, size_t hi, const std::vector<cfloat>& q) {
        const size_t span = hi - lo + size_t(N);
        std::vector<cfloat> lanes(size_t(nr) * span);
        for (size_t n = 0; n < span; ++n)
            for (int r = 0; r < nr; ++r)
                lanes[size_t(r) * span + n] = rx[(lo + n) * nr + size_t(r)];
        std::vector<float> c(hi - lo + 1, 0.0f);
        detail::parallel_for(c.size(), 32, [&](size_t begin, size_t end) {
            for (size_t d = lo + begin; d < lo + end; ++d)
                for (int r = 0; r < nr; ++r) {
                    lv_32fc_t dot;
                    volk_32fc_x2_conjugate_dot_prod_32fc(&dot, &lanes[size_t(r) * span + (d - lo)], q.data(),
                                                         unsigned(N));
                    c[d - lo] += std::norm(dot);
                }
        });
        return c;
    });
}

sync_result ofdm_receiver::decide(const sync_metric& w, size_t from, size_t samples,
                                  const matched_filter& matched) const
{
    const int N = m_grid.fft_size, CP = m_grid.cp_length;
    sync_result out;
    if (!w.crossed || w.M.empty())
        return out;
    const size_t last = samples - size_t(N);
    // The plateau (M within 90% of its peak) is where both halves lie in the
    // repeated part; its middle gives the CFO, its end the coarse body start.
    const float peak = *std::max_element(w.M.begin(), w.M.end());
    size_t p0 = w.M.size(), p1 = 0;
    for (size_t k = 0; k < w.M.size(); ++k)
        if (w.M[k] >= 0.9f * peak) {
            p0 = std::min(p0, k);
            p1 = k;
        }
    const size_t mid = (p0 + p1) / 2;
    out.found = true;
    out.metric = w.M[mid];
    out.cfo = float(std::arg(w.P[mid]) / M_PI);
    // Fine timing: matched filter with the CFO-rotated preamble over a window
    // around the coarse body start; the FFT window starts `backoff` samples
    // before the earliest path within 10 dB of the strongest. A path is a local
    // maximum of the matched filter's output: the preamble is band-limited, so
    // its correlation peak spans several samples.
    const size_t coarse = w.first + p1;
    const size_t lo = coarse > size_t(CP) + from ? coarse - size_t(CP) : from;
    const size_t hi = std::min(last, coarse + size_t(CP / 2 + 1));
    std::vector<cfloat> q(static_cast<size_t>(N));
    for (int m = 0; m < N; ++m)
        q[size_t(m)] = m_impl->preamble_body[size_t(m)] * std::polar(1.0f, float(2 * M_PI * out.cfo * m / N));
    const std::vector<float> c = matched(lo, hi, q);
    const float cmax = *std::max_element(c.begin(), c.end());
    size_t first_path = lo;
    for (size_t d = lo; d <= hi; ++d) {
        const float v = c[d - lo];
        const bool local_max = (d == lo || v >= c[d - lo - 1]) && (d == hi || v >= c[d - lo + 1]);
        if (local_max && v >= 0.1f * cmax) {
            first_path = d;
            break;
        }
    }
    out.frame_start = first_path >= size_t(m_backoff) ? first_path - size_t(m_backoff) : 0;
    const size_t frame_end =
        out.frame_start + size_t(m_grid.slots) * (1 + m_grid.data_symbols) * m_grid.symbol_samples() + size_t(N);
    out.complete = frame_end <= samples;
    return out;
}

sync_result ofdm_receiver::synchronize_device(const cfloat* d_rx, size_t samples, size_t from,
                                              cuda_stream_t stream) const
{
#ifdef MIMO_GPU_HAVE_CUDA
    if (m_impl->cuda) {
        const int N = m_grid.fft_size, CP = m_grid.cp_length;
        if (samples < size_t(N) || from > samples - size_t(N))
            return {};
        const auto st = reinterpret_cast<cudaStream_t>(stream);
        // The metric of every position on the GPU; the decisions (first crossing,
        // plateau, first path) on the host, as synchronize() makes them.
        // Searched a frame's length at a time (plus the plateau after a crossing),
        // so finding frame after frame costs what the frames hold, not the buffer.
        std::vector<float> M;
        std::vector<std::complex<double>> P;
        sync_metric w;
        const size_t last = samples - size_t(N), window = size_t(m_grid.frame_samples()),
                     tail = size_t(N + CP) + 1;
        for (size_t at = from; at <= last && !w.crossed; at += window) {
            const size_t end = std::min(last + 1, at + window + tail); // positions [at, end)
            const size_t k = m_impl->cuda->sync_metric(d_rx, end - 1 + size_t(N), at, window,
                                                       m_config.sync_threshold, tail, M, P, st);
            if (k != size_t(-1)) {
                w.crossed = true;
                w.first = at + k;
                w.M = M;
                w.P = P;
            }
        }
        return decide(w, from, samples, [&](size_t lo, size_t hi, const std::vector<cfloat>& q) {
            return m_impl->cuda->matched_filter(d_rx, lo, hi, q, st);
        });
    }
#endif
    (void)d_rx;
    (void)samples;
    (void)from;
    (void)stream;
    throw std::logic_error("mimo_gpu: ofdm_receiver: synchronize_device needs the CUDA backend");
}

void ofdm_receiver::demodulate(const cfloat* rx, const sync_result& sync)
{
    const ofdm_grid& g = m_grid;
    const int N = g.fft_size, U = g.used_subcarriers, nr = m_config.nr;
    const int K = 1 + g.slots * (1 + g.data_symbols);
    m_impl->Y.resize(size_t(K) * U * nr);
    // CFO correction: rotate by -2 pi cfo n / N, n counted from the preamble window.
    const double w = -2 * M_PI * sync.cfo / N;
    const lv_32fc_t step = std::polar(1.0f, float(w));
    const detail::fftw_plan_1d& fft = m_impl->fft;
    const float scale = fft.scale();
    // Windows (symbol k, antenna r) are independent: spread over the cores.
    detail::parallel_for(size_t(K) * nr, 8, [&](size_t begin, size_t end) {
        const auto lane = fft.make_buffer();
        for (size_t e = begin; e < end; ++e) {
            const int k = int(e / size_t(nr)), r = int(e % size_t(nr));
            const size_t start = sync.frame_start + size_t(k) * g.symbol_samples();
            for (int n = 0; n < N; ++n)
                lane[size_t(n)] = rx[(start + size_t(n)) * nr + size_t(r)];
            lv_32fc_t phase = std::polar(1.0f, float(std::fmod(w * double(k) * g.symbol_samples(), 2 * M_PI)));
            volk_32fc_s32fc_x2_rotator_32fc(lane.get(), lane.get(), step, &phase, unsigned(N));
            fft.execute(lane.get());
            for (int i = 0; i < U; ++i)
                m_impl->Y[(size_t(k) * U + i) * nr + r] = lane[size_t(g.bin(i))] * scale;
        }
    });
}

void ofdm_receiver::estimate(front_end_frame& f) const
{
    const ofdm_grid& g = m_grid;
    const int U = g.used_subcarriers, nr = m_config.nr, nt = g.nt, D = g.data_symbols;
    const float boost = std::sqrt(float(nt));
    f.pilot_ls.resize(size_t(g.slots) * U * nr);
    f.slot_channels.resize(size_t(g.slots) * U * nr * nt);
    std::vector<double> slopes(size_t(g.slots));
    double noise = 0, power = 0, neighbours = 0;
    size_t noise_terms = 0, neighbour_terms = 0;
    // Per slot: LS at the pilots; the channel's mean delay (window timing
    // included) turns the estimates along frequency at a steady rate, so it is
    // measured from neighbouring pilots and taken out before the noise estimate
    // and the interpolation, which then see only the spread around it.
    for (int j = 0; j < g.slots; ++j) {
        const int k = 1 + j * (1 + D);
        cfloat* ls = &f.pilot_ls[size_t(j) * U * nr];
        for (int i = 0; i < U; ++i) {
            const cfloat p = g.pilot(j, i) * boost;
            for (int r = 0; r < nr; ++r)
                ls[size_t(i) * nr + r] = m_impl->Y[(size_t(k) * U + i) * nr + r] / p;
        }
        std::complex<double> turn(0, 0);
        for (int t = 0; t < nt; ++t)
            for (int i = t; i + nt < U; i += nt)
                for (int r = 0; r < nr; ++r)
                    turn += std::conj(std::complex<double>(ls[size_t(i) * nr + r])) *
                            std::complex<double>(ls[size_t(i + nt) * nr + r]) /
                            double(g.offset(i + nt) - g.offset(i));
        slopes[size_t(j)] = std::arg(turn) / nt; // radians per subcarrier spacing
        for (int i = 0; i < U; ++i)
            for (int r = 0; r < nr; ++r) {
                cfloat& v = ls[size_t(i) * nr + r];
                v *= std::polar(1.0f, float(-slopes[size_t(j)] * g.offset(i)));
                power += std::norm(v);
            }
        // Correlation of comb neighbours nt apart, for the LMMSE model's delay spread.
        for (int t = 0; t < nt; ++t)
            for (int i = t; i + nt < U; i += nt)
                if (g.offset(i + nt) - g.offset(i) == nt)
                    for (int r = 0; r < nr; ++r) {
                        neighbours += std::real(std::conj(ls[size_t(i) * nr + r]) * ls[size_t(i + nt) * nr + r]);
                        ++neighbour_terms;
                    }
        // Noise from second differences along each comb (equally spaced triples):
        // E|e|^2 = 6 N0 / nt for LS noise N0 / nt, a linear channel trend cancels.
        for (int t = 0; t < nt; ++t)
            for (int i = t; i + 2 * nt < U; i += nt) {
                if (g.offset(i + nt) - g.offset(i) != g.offset(i + 2 * nt) - g.offset(i + nt))
                    continue; // straddles the DC null
                for (int r = 0; r < nr; ++r) {
                    const cfloat e = ls[size_t(i) * nr + r] - 2.0f * ls[size_t(i + nt) * nr + r] +
                                     ls[size_t(i + 2 * nt) * nr + r];
                    noise += std::norm(e);
                    ++noise_terms;
                }
            }
    }
    f.n0 = noise_terms ? float(noise / double(noise_terms) * nt / 6.0) : 0.0f;
    // The LMMSE weights need the LS noise relative to an antenna pair's channel power.
    const float ls_noise = f.n0 / float(nt);
    const float pair_power = float(power / (double(g.slots) * U * nr));
    const float channel_power = std::max(pair_power - ls_noise, 1e-3f * pair_power + 1e-30f);
    const float relative_noise = ls_noise / channel_power;
    float spread_over_n = m_spread_over_n;
    if (m_config.lmmse_delay_spread < 0) { // from the pilots: at least half a sample, at most twice the CP
        const float rho = neighbour_terms ? float(neighbours / double(neighbour_terms)) / channel_power : 0.0f;
        spread_over_n = detail::delay_spread_from_correlation(rho, nt, g.fft_size, 0.5f, 2.0f * g.cp_length) /
                        float(g.fft_size);
    }
    f.delay_spread = spread_over_n * float(g.fft_size);
    // The weights depend on the frame's statistics, not on the slot: made once.
    const int Wmax = detail::k_lmmse_max_window;
    std::vector<int> pilots(size_t(U) * nt * Wmax), counts(size_t(U) * nt);
    std::vector<float> weights_of(size_t(U) * nt * Wmax);
    // Most windows share their geometry (pilot distances): LMMSE solves once per geometry.
    std::map<std::vector<int>, std::vector<float>> solved;
    for (int t = 0; t < nt; ++t)
        for (int c = 0; c < U; ++c) {
            const size_t ct = size_t(t) * U + c;
            int* pilot = &pilots[ct * Wmax];
            float* w = &weights_of[ct * Wmax];
            if (m_config.frequency == frequency_interpolation::linear) {
                counts[ct] = detail::linear_comb_weights(c, t, nt, U, m_impl->offsets.data(), pilot, w);
                continue;
            }
            const int n = detail::lmmse_comb_window(c, t, nt, U, m_config.lmmse_window, pilot);
            std::vector<int> distance(static_cast<size_t>(n));
            for (int a = 0; a < n; ++a)
                distance[size_t(a)] = g.offset(pilot[a]) - g.offset(c);
            auto it = solved.find(distance);
            if (it == solved.end()) {
                std::vector<float> v(static_cast<size_t>(n));
                detail::lmmse_solve(distance.data(), n, spread_over_n, relative_noise, v.data());
                it = solved.emplace(distance, std::move(v)).first;
            }
            std::copy(it->second.begin(), it->second.end(), w);
            counts[ct] = n;
        }
    for (int j = 0; j < g.slots; ++j) {
        cfloat* ls = &f.pilot_ls[size_t(j) * U * nr];
        cfloat* H = &f.slot_channels[size_t(j) * U * nr * nt];
        const double slope = slopes[size_t(j)];
        detail::parallel_for(size_t(U), 256, [&](size_t c_begin, size_t c_end) {
            for (int t = 0; t < nt; ++t)
                for (int c = int(c_begin); c < int(c_end); ++c) {
                    const size_t ct = size_t(t) * U + c;
                    const int* pilot = &pilots[ct * Wmax];
                    const float* w = &weights_of[ct * Wmax];
                    const cfloat back = std::polar(1.0f, float(slope * g.offset(c)));
                    for (int r = 0; r < nr; ++r) {
                        cfloat v(0, 0);
                        for (int k = 0; k < counts[ct]; ++k)
                            v += ls[size_t(pilot[k]) * nr + r] * w[k];
                        H[(size_t(c) * nr + r) * nt + t] = v * back;
                    }
                }
        });
        for (int i = 0; i < U; ++i) // the LS estimates as measured, for diagnostics
            for (int r = 0; r < nr; ++r)
                ls[size_t(i) * nr + r] *= std::polar(1.0f, float(slope * g.offset(i)));
    }
}

void ofdm_receiver::emit(front_end_frame& f) const
{
    const ofdm_grid& g = m_grid;
    const int U = g.used_subcarriers, nr = m_config.nr, nt = g.nt, D = g.data_symbols;
    const size_t hn = size_t(nr) * nt;
    const bool hold = m_config.interpolation == time_interpolation::hold;
    f.symbols_per_channel = hold ? D : 1;
    f.channels = size_t(g.slots) * U * (hold ? 1 : D);
    f.H.resize(f.channels * hn);
    f.y.resize(g.data_elements() * nr);
    for (int j = 0; j < g.slots; ++j)
        for (int c = 0; c < U; ++c) {
            const cfloat* Hj = &f.slot_channels[(size_t(j) * U + c) * hn];
            const cfloat* Hn = j + 1 < g.slots ? &f.slot_channels[(size_t(j + 1) * U + c) * hn] : Hj;
            for (int s = 0; s < D; ++s) {
                const size_t p = (size_t(j) * U + c) * D + size_t(s);
                const int k = 2 + j * (1 + D) + s;
                for (int r = 0; r < nr; ++r)
                    f.y[p * nr + r] = m_impl->Y[(size_t(k) * U + c) * nr + r];
                if (hold && s > 0)
                    continue;
                cfloat* out = &f.H[(hold ? (size_t(j) * U + c) : p) * hn];
                const float a = hold ? 0.0f : float(s + 1) / float(D + 1);
                for (size_t e = 0; e < hn; ++e)
                    out[e] = Hj[e] * (1 - a) + Hn[e] * a;
            }
        }
}

front_end_frame ofdm_receiver::receive(const cfloat* rx, size_t samples, const sync_result& sync)
{
    return std::move(receive_frames(rx, samples, { sync }).front());
}

std::vector<front_end_frame> ofdm_receiver::receive_frames(const cfloat* rx, size_t samples,
                                                           const std::vector<sync_result>& syncs)
{
    for (const sync_result& sync : syncs)
        if (!sync.found || !sync.complete)
            fail(sync.found ? "the frame found is not complete in the buffer (" + std::to_string(samples) +
                                  " samples from " + std::to_string(sync.frame_start) + ")"
                            : "no preamble found: nothing to receive");
    std::vector<front_end_frame> frames(syncs.size());
#ifdef MIMO_GPU_HAVE_CUDA
    if (m_impl->cuda) {
        m_impl->cuda->run(rx, samples, syncs.data(), syncs.size(), frames.data());
        return frames;
    }
#endif
    for (size_t k = 0; k < syncs.size(); ++k) {
        frames[k].sync = syncs[k];
        demodulate(rx, syncs[k]);
        estimate(frames[k]);
        emit(frames[k]);
    }
    return frames;
}

front_end_frame ofdm_receiver::receive_known_channel(const cfloat* rx, size_t samples, const sync_result& sync,
                                                     const cfloat* H_known, float n0)
{
    if (!sync.found || !sync.complete)
        fail("receive_known_channel needs a complete frame");
    (void)samples;
    front_end_frame f;
    f.sync = sync;
    demodulate(rx, sync);
    const size_t per_slot = size_t(m_grid.used_subcarriers) * m_config.nr * m_grid.nt;
    f.slot_channels.resize(size_t(m_grid.slots) * per_slot);
    for (int j = 0; j < m_grid.slots; ++j)
        std::copy(H_known, H_known + per_slot, f.slot_channels.begin() + ptrdiff_t(size_t(j) * per_slot));
    f.n0 = n0;
    emit(f);
    return f;
}

} // namespace mimo_gpu
