// cuda_front_end: gather + CFO rotation, batched cuFFT, bin pick, a block per
// (frame, slot) for estimation and interpolation, then the detector's H and y.
#include "cuda_front_end.h"

#include "comb_interpolation.h"

#include "../runtime/cuda_buffers.h"

#include <cufft.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace mimo_gpu {
namespace detail {

namespace {

constexpr int k_threads = 256;

void check_cufft(cufftResult r, const char* what)
{
    if (r != CUFFT_SUCCESS)
        throw std::runtime_error(std::string("mimo_gpu: ") + what + " failed (cufftResult " + std::to_string(int(r)) +
                                 ")");
}

unsigned blocks_for(size_t n) { return unsigned((n + k_threads - 1) / k_threads); }

struct dims {
    int N, SS, U, nr, nt, D, slots, K; // K: symbols per frame
};

/// A thread per (frame, symbol, antenna, sample): the FFT window's sample,
/// rotated by -2 pi cfo m / N, m counted from the preamble's window.
__global__ void gather_rotate_kernel(const float2* rx, const size_t* start, const float* cfo, dims d, size_t frames,
                                     float2* out)
{
    const size_t e = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    const size_t per_frame = size_t(d.K) * d.nr * d.N;
    if (e >= frames * per_frame)
        return;
    const size_t f = e / per_frame, rest = e % per_frame;
    const int k = int(rest / (size_t(d.nr) * d.N)), r = int(rest / d.N % d.nr), n = int(rest % d.N);
    const size_t m = size_t(k) * d.SS + size_t(n);
    const float2 x = rx[(start[f] + m) * d.nr + r];
    // -2 cfo m / N in half turns, reduced mod 2 in double so the float sincos stays exact
    const double turns = -2.0 * double(cfo[f]) * double(m) / double(d.N);
    float s, c;
    sincospif(float(turns - 2.0 * floor(turns / 2.0)), &s, &c);
    out[e] = make_float2(x.x * c - x.y * s, x.x * s + x.y * c);
}

/// Y[((f K + k) U + i) nr + r] = X[((f K + k) nr + r) N + bin(i)] / sqrt(N).
__global__ void pick_bins_kernel(const float2* X, const int* bins, dims d, size_t frames, float scale, float2* Y)
{
    const size_t e = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    const size_t per_symbol = size_t(d.U) * d.nr;
    if (e >= frames * d.K * per_symbol)
        return;
    const size_t fk = e / per_symbol;
    const int i = int(e % per_symbol / d.nr), r = int(e % d.nr);
    const float2 v = X[(fk * d.nr + r) * d.N + size_t(bins[i])];
    Y[e] = make_float2(v.x * scale, v.y * scale);
}

__device__ float2 cmul(float2 a, float2 b) { return make_float2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x); }
__device__ float2 cdiv(float2 a, float2 b)
{
    const float n = b.x * b.x + b.y * b.y;
    return make_float2((a.x * b.x + a.y * b.y) / n, (a.y * b.x - a.x * b.y) / n);
}

/// Sums a float2 over the block (k_threads threads).
__device__ float2 block_sum(float2 v, float2* shared)
{
    for (int o = 16; o > 0; o >>= 1) {
        v.x += __shfl_xor_sync(0xffffffffu, v.x, o);
        v.y += __shfl_xor_sync(0xffffffffu, v.y, o);
    }
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    __syncthreads();
    if (lane == 0)
        shared[warp] = v;
    __syncthreads();
    float2 t = make_float2(0, 0);
    for (int w = 0; w < k_threads / 32; ++w)
        t = make_float2(t.x + shared[w].x, t.y + shared[w].y);
    return t;
}

/// A block per (frame, slot): LS at the pilots, the mean-delay slope measured
/// and taken out, and the slot's sums for the frame's statistics: second
/// differences (noise), power, comb-neighbour correlation (delay spread).
__global__ void pilot_ls_kernel(const float2* Y, const float2* pilots, const int* offsets, dims d, float2* ls_out,
                                float* slope_out, float* sums)
{
    __shared__ float2 partial[k_threads / 32];
    const int f = blockIdx.x / d.slots, j = blockIdx.x % d.slots;
    const int U = d.U, nr = d.nr, nt = d.nt;
    const int k = 1 + j * (1 + d.D);
    const float2* Yk = Y + (size_t(f) * d.K + k) * U * nr;
    float2* ls = ls_out + (size_t(f) * d.slots + j) * U * nr;
    for (int e = threadIdx.x; e < U * nr; e += blockDim.x)
        ls[e] = cdiv(Yk[e], pilots[size_t(j) * U + e / nr]);
    __syncthreads();
    float2 turn = make_float2(0, 0);
    for (int e = threadIdx.x; e < U * nr; e += blockDim.x) {
        const int i = e / nr, r = e % nr;
        if (i + nt < U) {
            const float2 a = ls[e], b = ls[(i + nt) * nr + r];
            const float w = 1.0f / float(offsets[i + nt] - offsets[i]);
            turn.x += (a.x * b.x + a.y * b.y) * w;
            turn.y += (a.x * b.y - a.y * b.x) * w;
        }
    }
    turn = block_sum(turn, partial);
    const float slope = atan2f(turn.y, turn.x) / float(nt);
    __syncthreads();
    float2 power = make_float2(0, 0);
    for (int e = threadIdx.x; e < U * nr; e += blockDim.x) {
        float sn, cs;
        sincosf(-slope * float(offsets[e / nr]), &sn, &cs);
        const float2 v = cmul(ls[e], make_float2(cs, sn));
        ls[e] = v;
        power.x += v.x * v.x + v.y * v.y;
    }
    __syncthreads();
    float2 noise_corr = make_float2(0, 0); // x: second differences, y: neighbour correlation
    for (int e = threadIdx.x; e < U * nr; e += blockDim.x) {
        const int i = e / nr, r = e % nr;
        if (i + 2 * nt < U && offsets[i + nt] - offsets[i] == offsets[i + 2 * nt] - offsets[i + nt]) {
            const float2 a = ls[e], b = ls[(i + nt) * nr + r], c = ls[(i + 2 * nt) * nr + r];
            const float ex = a.x - 2 * b.x + c.x, ey = a.y - 2 * b.y + c.y;
            noise_corr.x += ex * ex + ey * ey;
        }
        if (i + nt < U && offsets[i + nt] - offsets[i] == nt) {
            const float2 a = ls[e], b = ls[(i + nt) * nr + r];
            noise_corr.y += a.x * b.x + a.y * b.y;
        }
    }
    noise_corr = block_sum(noise_corr, partial);
    power = block_sum(power, partial);
    if (threadIdx.x == 0) {
        slope_out[blockIdx.x] = slope;
        sums[blockIdx.x * 3 + 0] = noise_corr.x;
        sums[blockIdx.x * 3 + 1] = power.x;
        sums[blockIdx.x * 3 + 2] = noise_corr.y;
    }
}

/// A thread per frame: N0, the LS noise relative to the channel power, and the
/// LMMSE model's delay spread (fixed, or from the comb-neighbour correlation).
__global__ void frame_stats_kernel(const float* sums, dims d, size_t frames, float noise_terms, float neighbour_terms,
                                   float fixed_spread_over_n, float* n0, float* relative_noise, float* spread_over_n,
                                   float* spread)
{
    const size_t f = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (f >= frames)
        return;
    float noise = 0, power = 0, corr = 0;
    for (int j = 0; j < d.slots; ++j) {
        noise += sums[(f * d.slots + j) * 3 + 0];
        power += sums[(f * d.slots + j) * 3 + 1];
        corr += sums[(f * d.slots + j) * 3 + 2];
    }
    const float N0 = noise_terms > 0 ? noise / noise_terms * float(d.nt) / 6.0f : 0.0f;
    n0[f] = N0;
    const float ls_noise = N0 / float(d.nt);
    const float pair_power = power / (float(d.slots) * d.U * d.nr);
    const float floor = 1e-3f * pair_power + 1e-30f;
    const float channel_power = pair_power - ls_noise > floor ? pair_power - ls_noise : floor;
    relative_noise[f] = ls_noise / channel_power;
    float s = fixed_spread_over_n;
    if (s < 0) {
        const float rho = neighbour_terms > 0 ? corr / neighbour_terms / channel_power : 0.0f;
        s = delay_spread_from_correlation(rho, d.nt, d.N, 0.5f, 2.0f * float(d.SS - d.N)) / float(d.N);
    }
    spread_over_n[f] = s;
    spread[f] = s * float(d.N);
}

/// A thread per (frame, slot, subcarrier, antenna t): the comb weights (linear
/// or LMMSE), applied to every receive antenna, the slope put back.
__global__ void interpolate_kernel(const float2* ls_all, const float* slopes, const int* offsets, dims d,
                                   size_t frames, bool lmmse, int window, const float* relative_noise,
                                   const float* spread_over_n, float2* H_slot)
{
    const size_t e = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    const size_t per_frame = size_t(d.slots) * d.U * d.nt;
    if (e >= frames * per_frame)
        return;
    const size_t f = e / per_frame;
    const int j = int(e / (size_t(d.U) * d.nt) % d.slots), c = int(e / d.nt % d.U), t = int(e % d.nt);
    int pilot[k_lmmse_max_window];
    float w[k_lmmse_max_window];
    const int n = lmmse ? lmmse_comb_weights(c, t, d.nt, d.U, offsets, window, spread_over_n[f], relative_noise[f],
                                             pilot, w)
                        : linear_comb_weights(c, t, d.nt, d.U, offsets, pilot, w);
    const size_t fj = f * d.slots + j;
    const float2* ls = ls_all + fj * d.U * d.nr;
    float sn, cs;
    sincosf(slopes[fj] * float(offsets[c]), &sn, &cs);
    for (int r = 0; r < d.nr; ++r) {
        float2 v = make_float2(0, 0);
        for (int a = 0; a < n; ++a) {
            const float2 x = ls[pilot[a] * d.nr + r];
            v.x += x.x * w[a];
            v.y += x.y * w[a];
        }
        H_slot[((fj * d.U + c) * d.nr + r) * d.nt + t] = cmul(v, make_float2(cs, sn));
    }
}

/// A thread per (frame, slot, pilot, antenna): the LS estimates as measured.
__global__ void reramp_kernel(float2* ls, const float* slopes, const int* offsets, dims d, size_t frames)
{
    const size_t e = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (e >= frames * d.slots * d.U * d.nr)
        return;
    const size_t fj = e / (size_t(d.U) * d.nr);
    const int i = int(e / d.nr % d.U);
    float sn, cs;
    sincosf(slopes[fj] * float(offsets[i]), &sn, &cs);
    ls[e] = cmul(ls[e], make_float2(cs, sn));
}


constexpr int k_metric_run = 64; // positions per thread of the Schmidl-Cox metric

/// A thread per run of k_metric_run positions d: P(d) = sum_r sum_m conj(x[d+m])
/// x[d+m+L] and R(d) (the halves' mean energy) summed exactly at the run's start
/// (double), then slid one position at a time, as the CPU does every 4096.
__global__ void sync_metric_kernel(const float2* rx, size_t from, size_t count, int L, int nr, float* M, float2* P)
{
    const size_t run = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    const size_t d0 = from + run * k_metric_run;
    if (run * k_metric_run >= count)
        return;
    double pr = 0, pi = 0, R = 0;
    for (int m = 0; m < L; ++m)
        for (int r = 0; r < nr; ++r) {
            const float2 a = rx[(d0 + m) * nr + r], b = rx[(d0 + m + L) * nr + r];
            pr += double(a.x) * b.x + double(a.y) * b.y;
            pi += double(a.x) * b.y - double(a.y) * b.x;
            R += 0.5 * (double(a.x) * a.x + double(a.y) * a.y + double(b.x) * b.x + double(b.y) * b.y);
        }
    const size_t end = min(count, (run + 1) * k_metric_run);
    for (size_t k = run * k_metric_run; k < end; ++k) {
        const size_t d = from + k;
        if (d > d0)
            for (int r = 0; r < nr; ++r) {
                const float2 a0 = rx[(d - 1) * nr + r], aL = rx[(d - 1 + L) * nr + r],
                             a2 = rx[(d - 1 + 2 * L) * nr + r];
                pr += double(aL.x) * a2.x + double(aL.y) * a2.y - (double(a0.x) * aL.x + double(a0.y) * aL.y);
                pi += double(aL.x) * a2.y - double(aL.y) * a2.x - (double(a0.x) * aL.y - double(a0.y) * aL.x);
                R += 0.5 * (double(a2.x) * a2.x + double(a2.y) * a2.y - double(a0.x) * a0.x - double(a0.y) * a0.y);
            }
        M[k] = R > 0 ? float((pr * pr + pi * pi) / (R * R)) : 0.0f;
        P[k] = make_float2(float(pr), float(pi));
    }
}

/// The first position (index into M) whose metric exceeds the threshold, by atomicMin.
__global__ void first_crossing_kernel(const float* M, size_t count, float threshold, unsigned long long* first)
{
    const size_t k = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (k < count && M[k] > threshold)
        atomicMin(first, (unsigned long long)k);
}

/// A block per candidate position d: sum over antennas of |sum_m x_r[d+m] conj(q[m])|^2.
__global__ void matched_filter_kernel(const float2* rx, size_t lo, const float2* q, int N, int nr, float* c)
{
    __shared__ float2 partial[k_threads / 32];
    const size_t d = lo + blockIdx.x;
    float total = 0;
    for (int r = 0; r < nr; ++r) {
        float2 acc = make_float2(0, 0);
        for (int m = threadIdx.x; m < N; m += blockDim.x) {
            const float2 x = rx[(d + m) * nr + r], w = q[m];
            acc.x += x.x * w.x + x.y * w.y;
            acc.y += x.y * w.x - x.x * w.y;
        }
        acc = block_sum(acc, partial);
        total += acc.x * acc.x + acc.y * acc.y;
    }
    if (threadIdx.x == 0)
        c[blockIdx.x] = total;
}

/// A thread per (frame, problem, antenna): y, and with linear time
/// interpolation H per problem (hold: H is the slot estimate itself).
__global__ void emit_kernel(const float2* Y, const float2* H_slot, dims d, size_t frames, bool linear, float2* y,
                            float2* H)
{
    const size_t e = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    const size_t problems = size_t(d.slots) * d.U * d.D;
    if (e >= frames * problems * d.nr)
        return;
    const size_t f = e / (problems * d.nr), p = e / d.nr % problems;
    const int r = int(e % d.nr);
    const int s = int(p % d.D), c = int(p / d.D % d.U), j = int(p / (size_t(d.D) * d.U));
    const int k = 2 + j * (1 + d.D) + s;
    y[e] = Y[((f * d.K + k) * d.U + c) * d.nr + r];
    if (!linear)
        return;
    const size_t hn = size_t(d.nr) * d.nt;
    const float2* Hj = H_slot + ((f * d.slots + j) * d.U + c) * hn;
    const float2* Hn = j + 1 < d.slots ? H_slot + ((f * d.slots + j + 1) * d.U + c) * hn : Hj;
    const float a = float(s + 1) / float(d.D + 1);
    for (int t = 0; t < d.nt; ++t) {
        const size_t o = size_t(r) * d.nt + t;
        H[(f * problems + p) * hn + o] =
            make_float2(Hj[o].x * (1 - a) + Hn[o].x * a, Hj[o].y * (1 - a) + Hn[o].y * a);
    }
}

} // namespace

struct cuda_front_end::impl {
    ofdm_grid g;
    dims d;
    bool linear;
    ofdm_receiver_config config;
    size_t noise_terms = 0, neighbour_terms = 0;
    cuda_stream stream;
    cufftHandle plan = 0;
    size_t plan_batch = 0;
    device_buffer<int> bins, offsets;
    device_buffer<float2> pilots, X, Y, ls, H_slot, y, H;
    device_buffer<float> sums, slopes, n0, relative_noise, spread_over_n, spread;
    device_buffer<size_t> start;
    device_buffer<float> cfo;
    device_buffer<float2> rx, sync_P, q;
    device_buffer<float> sync_M, matched;
    device_buffer<unsigned long long> first;
    pinned_buffer<float2> h_P;
    pinned_buffer<float> h_M;
    pinned_buffer<size_t> h_start;
    pinned_buffer<float> h_cfo;
};

cuda_front_end::cuda_front_end(const ofdm_grid& grid, const ofdm_receiver_config& config)
    : m(std::make_unique<impl>())
{
    const int nr = config.nr;
    const time_interpolation interpolation = config.interpolation;
    m->config = config;
    m->g = grid;
    m->d = { grid.fft_size, grid.symbol_samples(), grid.used_subcarriers, nr, grid.nt,
             grid.data_symbols, grid.slots, 1 + grid.slots * (1 + grid.data_symbols) };
    m->linear = interpolation == time_interpolation::linear;
    const int U = grid.used_subcarriers, nt = grid.nt;
    std::vector<int> bins(static_cast<size_t>(U)), offsets(static_cast<size_t>(U));
    for (int i = 0; i < U; ++i) {
        bins[size_t(i)] = grid.bin(i);
        offsets[size_t(i)] = grid.offset(i);
    }
    std::vector<cfloat> pilots(size_t(grid.slots) * U);
    const float boost = std::sqrt(float(nt));
    for (int j = 0; j < grid.slots; ++j)
        for (int i = 0; i < U; ++i)
            pilots[size_t(j) * U + i] = grid.pilot(j, i) * boost;
    MIMO_CUDA_CHECK(cudaMemcpy(m->bins.reserve(bins.size()), bins.data(), bins.size() * sizeof(int),
                               cudaMemcpyHostToDevice));
    MIMO_CUDA_CHECK(cudaMemcpy(m->offsets.reserve(offsets.size()), offsets.data(), offsets.size() * sizeof(int),
                               cudaMemcpyHostToDevice));
    MIMO_CUDA_CHECK(cudaMemcpy(m->pilots.reserve(pilots.size()), pilots.data(), pilots.size() * sizeof(cfloat),
                               cudaMemcpyHostToDevice));
    for (int t = 0; t < nt; ++t) { // the statistics' terms per slot, as the CPU counts them
        for (int i = t; i + 2 * nt < U; i += nt)
            if (grid.offset(i + nt) - grid.offset(i) == grid.offset(i + 2 * nt) - grid.offset(i + nt))
                m->noise_terms += size_t(nr);
        for (int i = t; i + nt < U; i += nt)
            if (grid.offset(i + nt) - grid.offset(i) == nt)
                m->neighbour_terms += size_t(nr);
    }
}

cuda_front_end::~cuda_front_end()
{
    if (m->plan)
        cufftDestroy(m->plan);
}

size_t cuda_front_end::H_per_frame() const
{
    const dims& d = m->d;
    return size_t(d.slots) * d.U * (m->linear ? d.D : 1) * d.nr * d.nt;
}
size_t cuda_front_end::y_per_frame() const
{
    const dims& d = m->d;
    return size_t(d.slots) * d.U * d.D * d.nr;
}
const cfloat* cuda_front_end::device_H() const
{
    return reinterpret_cast<const cfloat*>(m->linear ? m->H.data() : m->H_slot.data());
}
const cfloat* cuda_front_end::device_y() const { return reinterpret_cast<const cfloat*>(m->y.data()); }
const float* cuda_front_end::device_n0() const { return m->n0.data(); }

void cuda_front_end::run_device(const cfloat* d_rx, size_t samples, const size_t* frame_start, const float* cfo,
                                size_t frames, cudaStream_t st)
{
    const dims& d = m->d;
    const size_t reach = size_t(d.K - 1) * d.SS + size_t(d.N);
    for (size_t f = 0; f < frames; ++f)
        if (frame_start[f] + reach > samples)
            throw std::invalid_argument("mimo_gpu: ofdm_receiver: frame " + std::to_string(f) +
                                        " does not lie whole in the buffer");
    size_t* hs = m->h_start.reserve(frames);
    float* hc = m->h_cfo.reserve(frames);
    std::copy(frame_start, frame_start + frames, hs);
    std::copy(cfo, cfo + frames, hc);
    MIMO_CUDA_CHECK(cudaMemcpyAsync(m->start.reserve(frames), hs, frames * sizeof(size_t), cudaMemcpyHostToDevice, st));
    MIMO_CUDA_CHECK(cudaMemcpyAsync(m->cfo.reserve(frames), hc, frames * sizeof(float), cudaMemcpyHostToDevice, st));
    const size_t windows = frames * size_t(d.K) * d.nr;
    float2* X = m->X.reserve(windows * d.N);
    if (m->plan_batch != windows) {
        if (m->plan)
            cufftDestroy(m->plan);
        m->plan = 0;
        int n = d.N;
        check_cufft(cufftPlanMany(&m->plan, 1, &n, nullptr, 1, n, nullptr, 1, n, CUFFT_C2C, int(windows)),
                    "cufftPlanMany");
        m->plan_batch = windows;
    }
    check_cufft(cufftSetStream(m->plan, st), "cufftSetStream");
    gather_rotate_kernel<<<blocks_for(windows * d.N), k_threads, 0, st>>>(
        reinterpret_cast<const float2*>(d_rx), m->start.data(), m->cfo.data(), d, frames, X);
    MIMO_CUDA_CHECK(cudaGetLastError());
    check_cufft(cufftExecC2C(m->plan, reinterpret_cast<cufftComplex*>(X), reinterpret_cast<cufftComplex*>(X),
                             CUFFT_FORWARD),
                "cufftExecC2C");
    const size_t grid_elements = frames * size_t(d.K) * d.U * d.nr;
    float2* Y = m->Y.reserve(grid_elements);
    pick_bins_kernel<<<blocks_for(grid_elements), k_threads, 0, st>>>(X, m->bins.data(), d, frames,
                                                                       float(1.0 / std::sqrt(double(d.N))), Y);
    MIMO_CUDA_CHECK(cudaGetLastError());
    const size_t fj = frames * d.slots;
    float2* ls = m->ls.reserve(fj * d.U * d.nr);
    float2* Hs = m->H_slot.reserve(fj * d.U * d.nr * d.nt);
    float* slopes = m->slopes.reserve(fj);
    pilot_ls_kernel<<<unsigned(fj), k_threads, 0, st>>>(Y, m->pilots.data(), m->offsets.data(), d, ls, slopes,
                                                         m->sums.reserve(fj * 3));
    MIMO_CUDA_CHECK(cudaGetLastError());
    const double fixed = m->config.lmmse_delay_spread;
    frame_stats_kernel<<<blocks_for(frames), k_threads, 0, st>>>(
        m->sums.data(), d, frames, float(m->noise_terms * d.slots), float(m->neighbour_terms * d.slots),
        fixed < 0 ? -1.0f : float(fixed / d.N), m->n0.reserve(frames), m->relative_noise.reserve(frames),
        m->spread_over_n.reserve(frames), m->spread.reserve(frames));
    MIMO_CUDA_CHECK(cudaGetLastError());
    interpolate_kernel<<<blocks_for(fj * d.U * d.nt), k_threads, 0, st>>>(
        ls, slopes, m->offsets.data(), d, frames, m->config.frequency == frequency_interpolation::lmmse,
        m->config.lmmse_window, m->relative_noise.data(), m->spread_over_n.data(), Hs);
    MIMO_CUDA_CHECK(cudaGetLastError());
    reramp_kernel<<<blocks_for(fj * d.U * d.nr), k_threads, 0, st>>>(ls, slopes, m->offsets.data(), d, frames);
    MIMO_CUDA_CHECK(cudaGetLastError());
    const size_t ye = frames * y_per_frame();
    float2* H = m->linear ? m->H.reserve(frames * H_per_frame()) : nullptr;
    emit_kernel<<<blocks_for(ye), k_threads, 0, st>>>(Y, Hs, d, frames, m->linear, m->y.reserve(ye), H);
    MIMO_CUDA_CHECK(cudaGetLastError());
}

size_t cuda_front_end::sync_metric(const cfloat* d_rx, size_t samples, size_t from, size_t search, float threshold,
                                   size_t keep, std::vector<float>& M, std::vector<std::complex<double>>& P,
                                   cudaStream_t st)
{
    const dims& d = m->d;
    const size_t count = samples - size_t(d.N) - from + 1;
    float* dM = m->sync_M.reserve(count);
    float2* dP = m->sync_P.reserve(count);
    const size_t runs = (count + k_metric_run - 1) / k_metric_run;
    sync_metric_kernel<<<blocks_for(runs), k_threads, 0, st>>>(reinterpret_cast<const float2*>(d_rx), from, count,
                                                               d.N / 2, d.nr, dM, dP);
    MIMO_CUDA_CHECK(cudaGetLastError());
    // Only the first crossing among the first `search` positions, and the
    // `keep` positions from it, come back to the host.
    unsigned long long* first = m->first.reserve(1);
    const unsigned long long none = ~0ull;
    MIMO_CUDA_CHECK(cudaMemcpyAsync(first, &none, sizeof none, cudaMemcpyHostToDevice, st));
    const size_t n = std::min(search, count);
    first_crossing_kernel<<<blocks_for(n), k_threads, 0, st>>>(dM, n, threshold, first);
    MIMO_CUDA_CHECK(cudaGetLastError());
    unsigned long long found = none;
    MIMO_CUDA_CHECK(cudaMemcpyAsync(&found, first, sizeof found, cudaMemcpyDeviceToHost, st));
    MIMO_CUDA_CHECK(cudaStreamSynchronize(st));
    if (found == none)
        return size_t(-1);
    const size_t k = size_t(found), take = std::min(keep, count - k);
    float* hM = m->h_M.reserve(take);
    float2* hP = m->h_P.reserve(take);
    MIMO_CUDA_CHECK(cudaMemcpyAsync(hM, dM + k, take * sizeof(float), cudaMemcpyDeviceToHost, st));
    MIMO_CUDA_CHECK(cudaMemcpyAsync(hP, dP + k, take * sizeof(float2), cudaMemcpyDeviceToHost, st));
    MIMO_CUDA_CHECK(cudaStreamSynchronize(st));
    M.assign(hM, hM + take);
    P.resize(take);
    for (size_t j = 0; j < take; ++j)
        P[j] = std::complex<double>(hP[j].x, hP[j].y);
    return k;
}

std::vector<float> cuda_front_end::matched_filter(const cfloat* d_rx, size_t lo, size_t hi,
                                                  const std::vector<cfloat>& q, cudaStream_t st)
{
    const dims& d = m->d;
    const size_t count = hi - lo + 1;
    float2* dq = m->q.reserve(q.size());
    MIMO_CUDA_CHECK(cudaMemcpyAsync(dq, q.data(), q.size() * sizeof(cfloat), cudaMemcpyHostToDevice, st));
    float* dc = m->matched.reserve(count);
    matched_filter_kernel<<<unsigned(count), k_threads, 0, st>>>(reinterpret_cast<const float2*>(d_rx), lo, dq, d.N,
                                                                 d.nr, dc);
    MIMO_CUDA_CHECK(cudaGetLastError());
    std::vector<float> c(count);
    MIMO_CUDA_CHECK(cudaMemcpyAsync(c.data(), dc, count * sizeof(float), cudaMemcpyDeviceToHost, st));
    MIMO_CUDA_CHECK(cudaStreamSynchronize(st));
    return c;
}

void cuda_front_end::run(const cfloat* rx, size_t samples, const sync_result* syncs, size_t frames,
                         front_end_frame* out)
{
    const dims& d = m->d;
    const cudaStream_t st = m->stream.get();
    std::vector<size_t> start(frames);
    std::vector<float> cfo(frames);
    for (size_t f = 0; f < frames; ++f) {
        start[f] = syncs[f].frame_start;
        cfo[f] = syncs[f].cfo;
    }
    float2* drx = m->rx.reserve(samples * d.nr);
    MIMO_CUDA_CHECK(cudaMemcpyAsync(drx, rx, samples * d.nr * sizeof(cfloat), cudaMemcpyHostToDevice, st));
    run_device(reinterpret_cast<const cfloat*>(drx), samples, start.data(), cfo.data(), frames, st);
    const size_t hn = H_per_frame(), yn = y_per_frame(), sn = size_t(d.slots) * d.U * d.nr * d.nt,
                 ln = size_t(d.slots) * d.U * d.nr;
    std::vector<float> n0(frames), spread(frames);
    for (size_t f = 0; f < frames; ++f) {
        front_end_frame& o = out[f];
        o.sync = syncs[f];
        o.symbols_per_channel = m->linear ? 1 : d.D;
        o.channels = size_t(d.slots) * d.U * (m->linear ? d.D : 1);
        o.H.resize(hn);
        o.y.resize(yn);
        o.slot_channels.resize(sn);
        o.pilot_ls.resize(ln);
        MIMO_CUDA_CHECK(cudaMemcpyAsync(o.H.data(), device_H() + f * hn, hn * sizeof(cfloat),
                                        cudaMemcpyDeviceToHost, st));
        MIMO_CUDA_CHECK(cudaMemcpyAsync(o.y.data(), device_y() + f * yn, yn * sizeof(cfloat),
                                        cudaMemcpyDeviceToHost, st));
        MIMO_CUDA_CHECK(cudaMemcpyAsync(o.slot_channels.data(), m->H_slot.data() + f * sn, sn * sizeof(cfloat),
                                        cudaMemcpyDeviceToHost, st));
        MIMO_CUDA_CHECK(cudaMemcpyAsync(o.pilot_ls.data(), m->ls.data() + f * ln, ln * sizeof(cfloat),
                                        cudaMemcpyDeviceToHost, st));
    }
    MIMO_CUDA_CHECK(cudaMemcpyAsync(n0.data(), m->n0.data(), frames * sizeof(float), cudaMemcpyDeviceToHost, st));
    MIMO_CUDA_CHECK(
        cudaMemcpyAsync(spread.data(), m->spread.data(), frames * sizeof(float), cudaMemcpyDeviceToHost, st));
    MIMO_CUDA_CHECK(cudaStreamSynchronize(st));
    for (size_t f = 0; f < frames; ++f) {
        out[f].n0 = n0[f];
        out[f].delay_spread = spread[f];
    }
}

} // namespace detail
} // namespace mimo_gpu
