// cuda_front_end: frame synchronisation (the metric in tiles, runs compacted in
// order, a block per run for the plateau, the matched filter and the first path,
// the walk on the host), then gather + CFO rotation, batched cuFFT, bin pick, a
// block per (frame, slot) for estimation and interpolation, the detector's H and y.
#include "cuda_front_end.h"

#include "antenna_noise.h"
#include "comb_interpolation.h"
#include "delay_profile.h"
#include "frame_history.h"
#include "time_filter.h"

#include "../runtime/cuda_buffers.h"
#include "../runtime/cuda_graph.h"

#include <cufft.h>

#include <algorithm>
#include <cmath>
#include <map>
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
        throw std::runtime_error(std::string("mimo_gpu: ") + what +
                                 " failed (cufftResult " + std::to_string(int(r)) + ")");
}

unsigned blocks_for(size_t n) { return unsigned((n + k_threads - 1) / k_threads); }

/// The plan of `batch` in-place C2C transforms of n points from `plans`, made
/// on first use (planning allocates and synchronises: once per batch size),
/// bound to `stream`.
cufftHandle batched_plan(std::map<size_t, cufftHandle>& plans,
                         int n,
                         size_t batch,
                         cudaStream_t stream)
{
    auto plan = plans.find(batch);
    if (plan == plans.end()) {
        cufftHandle h = 0;
        check_cufft(
            cufftPlanMany(&h, 1, &n, nullptr, 1, n, nullptr, 1, n, CUFFT_C2C, int(batch)),
            "cufftPlanMany");
        plan = plans.emplace(batch, h).first;
    }
    check_cufft(cufftSetStream(plan->second, stream), "cufftSetStream");
    return plan->second;
}

/// The batched transform `plan` of x, in place (direction CUFFT_FORWARD or
/// CUFFT_INVERSE).
void fft_in_place(cufftHandle plan, float2* x, int direction)
{
    cufftComplex* c = reinterpret_cast<cufftComplex*>(x);
    check_cufft(cufftExecC2C(plan, c, c, direction), "cufftExecC2C");
}

struct dims {
    int N, SS, U, nr, nt, D, slots, K; // K: symbols per frame
    int Q;                             // pilot symbols per frame
    slot_layout lay;                   // where they sit (pilot_layout.h)
};

/// Sample n of antenna r as the view holds it.
__device__ float2 sample_at(const sample_view& v, size_t n, int r)
{
    return reinterpret_cast<const float2*>(
        v.base)[(n & v.mask) * v.sample_stride + size_t(r) * v.antenna_stride];
}

/// As the search reads it: a non-finite sample counts as zero (frame_search.h).
__device__ float2 finite_sample_at(const sample_view& v, size_t n, int r)
{
    const float2 x = sample_at(v, n, r);
    return isfinite(x.x) && isfinite(x.y) ? x : make_float2(0.0f, 0.0f);
}

/// A thread per (frame, symbol, antenna, sample): the FFT window's sample,
/// rotated by -2 pi cfo m / N, m counted from the preamble's window.
__global__ void gather_rotate_kernel(sample_view rx,
                                     const size_t* start,
                                     const float* cfo,
                                     dims d,
                                     size_t frames,
                                     float2* out)
{
    const size_t e = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    const size_t per_frame = size_t(d.K) * d.nr * d.N;
    if (e >= frames * per_frame)
        return;
    const size_t f = e / per_frame, rest = e % per_frame;
    const int k = int(rest / (size_t(d.nr) * d.N)), r = int(rest / d.N % d.nr),
              n = int(rest % d.N);
    const size_t m = size_t(k) * d.SS + size_t(n);
    const float2 x = sample_at(rx, start[f] + m, r);
    // -2 cfo m / N in half turns, reduced mod 2 in double so the float sincos stays exact
    const double turns = -2.0 * double(cfo[f]) * double(m) / double(d.N);
    float s, c;
    sincospif(float(turns - 2.0 * floor(turns / 2.0)), &s, &c);
    out[e] = make_float2(x.x * c - x.y * s, x.x * s + x.y * c);
}

/// Y[((f K + k) U + i) nr + r] = X[((f K + k) nr + r) N + bin(i)] / sqrt(N).
__global__ void pick_bins_kernel(
    const float2* X, const int* bins, dims d, size_t frames, float scale, float2* Y)
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

__device__ float2 cmul(float2 a, float2 b)
{
    return make_float2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}
__device__ float2 cdiv(float2 a, float2 b)
{
    const float n = b.x * b.x + b.y * b.y;
    return make_float2((a.x * b.x + a.y * b.y) / n, (a.y * b.x - a.x * b.y) / n);
}

/// Sums a pair (float2 or double2) over the block (Threads threads).
template <int Threads = k_threads, class Pair> // Pair: float2 or double2
__device__ Pair block_sum(Pair v, Pair* shared)
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
    Pair t{};
    for (int w = 0; w < Threads / 32; ++w) {
        t.x += shared[w].x;
        t.y += shared[w].y;
    }
    return t;
}

/// The pilot kernels' blocks: a (frame, pilot symbol)'s pilots (13 104 values at NR 100
/// MHz 4x4) in chunks of k_pilot_chunk, a block each, so that a frame fills
/// many SMs (a block per slot took 37 us of the receiver's critical path on the
/// H100). Partial sums per chunk, added in a fixed order: the same bits every run.
constexpr int k_pilot_threads = 256;
constexpr int k_pilot_chunk = 2 * k_pilot_threads;

__host__ __device__ inline int pilot_chunks(const dims& d)
{
    return (d.U * d.nr + k_pilot_chunk - 1) / k_pilot_chunk;
}

/// LS estimate e (= pilot i, antenna r) of the slot whose received pilot
/// symbol is Yk.
__device__ float2 pilot_ls_at(const float2* Yk, const float2* known, int e, int nr)
{
    return cdiv(Yk[e], known[e / nr]);
}

/// Grid (frame * pilot symbol, chunk): LS at the chunk's pilots, and its part of the
/// comb-neighbour product whose angle is the mean delay's slope.
__global__ void __launch_bounds__(k_pilot_threads) pilot_ls_kernel(const float2* Y,
                                                                   const float2* pilots,
                                                                   const int* offsets,
                                                                   dims d,
                                                                   float2* ls_out,
                                                                   float2* turn_out)
{
    __shared__ float2 partial[k_pilot_threads / 32];
    const int fj = blockIdx.x, f = fj / d.Q, j = fj % d.Q;
    const int U = d.U, nr = d.nr, nt = d.nt;
    const int k = d.lay.pilot_symbol(j);
    const float2* Yk = Y + (size_t(f) * d.K + k) * U * nr;
    const float2* known = pilots + size_t(j) * U;
    float2* ls = ls_out + size_t(fj) * U * nr;
    const int lo = blockIdx.y * k_pilot_chunk, hi = min(lo + k_pilot_chunk, U * nr);
    float2 turn = make_float2(0, 0);
    for (int e = lo + threadIdx.x; e < hi; e += blockDim.x) {
        const int i = e / nr;
        const float2 a = pilot_ls_at(Yk, known, e, nr);
        ls[e] = a;
        if (i + nt < U) {
            const float2 b = pilot_ls_at(Yk, known, e + nt * nr, nr);
            const float w = 1.0f / float(offsets[i + nt] - offsets[i]);
            turn.x += (a.x * b.x + a.y * b.y) * w;
            turn.y += (a.x * b.y - a.y * b.x) * w;
        }
    }
    turn = block_sum<k_pilot_threads>(turn, partial);
    if (threadIdx.x == 0)
        turn_out[size_t(fj) * gridDim.y + blockIdx.y] = turn;
}

/// The slot's slope from the chunks' parts (every block adds them alike).
__device__ float pilot_slope(const float2* turn, int chunks, int nt)
{
    float2 t = make_float2(0, 0);
    for (int c = 0; c < chunks; ++c)
        t = make_float2(t.x + turn[c].x, t.y + turn[c].y);
    return atan2f(t.y, t.x) / float(nt);
}

/// LS estimate e with the slope taken out.
__device__ float2
flat_at(const float2* ls, const int* offsets, float slope, int e, int nr)
{
    float sn, cs;
    sincosf(-slope * float(offsets[e / nr]), &sn, &cs);
    return cmul(ls[e], make_float2(cs, sn));
}

/// Grid (frame * pilot symbol, chunk): the slope taken out of the chunk's LS estimates
/// (into flat; the measured ones stay), and its sums for the frame's
/// statistics: second differences (noise) and power.
__global__ void __launch_bounds__(k_pilot_threads)
    pilot_sums_kernel(const float2* ls_all,
                      const float2* turn_all,
                      const int* offsets,
                      dims d,
                      float2* flat_out,
                      float* slope_out,
                      float* sums)
{
    __shared__ float2 partial[k_pilot_threads / 32];
    const int fj = blockIdx.x, chunks = gridDim.y;
    const int U = d.U, nr = d.nr, nt = d.nt;
    const float2* ls = ls_all + size_t(fj) * U * nr;
    float2* flat = flat_out + size_t(fj) * U * nr;
    const float slope = pilot_slope(turn_all + size_t(fj) * chunks, chunks, nt);
    const int lo = blockIdx.y * k_pilot_chunk, hi = min(lo + k_pilot_chunk, U * nr);
    float2 noise_power = make_float2(0, 0); // x: second differences, y: power
    for (int e = lo + threadIdx.x; e < hi; e += blockDim.x) {
        const int i = e / nr;
        const float2 a = flat_at(ls, offsets, slope, e, nr);
        flat[e] = a;
        noise_power.y += a.x * a.x + a.y * a.y;
        if (i + 2 * nt < U &&
            offsets[i + nt] - offsets[i] == offsets[i + 2 * nt] - offsets[i + nt]) {
            const float2 b = flat_at(ls, offsets, slope, e + nt * nr, nr);
            const float2 c = flat_at(ls, offsets, slope, e + 2 * nt * nr, nr);
            const float ex = a.x - 2 * b.x + c.x, ey = a.y - 2 * b.y + c.y;
            noise_power.x += ex * ex + ey * ey;
        }
    }
    noise_power = block_sum<k_pilot_threads>(noise_power, partial);
    if (threadIdx.x == 0) {
        if (blockIdx.y == 0)
            slope_out[fj] = slope;
        float* out = sums + (size_t(fj) * chunks + blockIdx.y) * 2;
        out[0] = noise_power.x;
        out[1] = noise_power.y;
    }
}

/// A thread per frame: N0 (second differences), the pairs' mean LS power, the
/// LS noise relative to the channel power, and the LMMSE model's delay spread
/// where it is fixed (delay_support_kernel estimates it otherwise, and N0 and
/// the relative noise again from the delay profile).
__global__ void frame_stats_kernel(const float* sums,
                                   dims d,
                                   size_t frames,
                                   float noise_terms,
                                   float fixed_spread_over_n,
                                   float* n0,
                                   float* pair_power,
                                   float* relative_noise,
                                   float* spread_over_n,
                                   float* spread,
                                   float* centre_turn)
{
    const size_t f = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (f >= frames)
        return;
    float noise = 0, power = 0;
    const size_t parts = size_t(d.Q) * pilot_chunks(d); // (pilot, chunk) in order
    for (size_t p = 0; p < parts; ++p) {
        noise += sums[(f * parts + p) * 2 + 0];
        power += sums[(f * parts + p) * 2 + 1];
    }
    const float N0 = noise_terms > 0 ? noise / noise_terms * float(d.nt) / 6.0f : 0.0f;
    n0[f] = N0;
    const float ls_noise = N0 / float(d.nt);
    pair_power[f] = power / (float(d.Q) * d.U * d.nr);
    relative_noise[f] = lmmse_relative_noise(pair_power[f], ls_noise);
    spread_over_n[f] = fixed_spread_over_n;
    spread[f] = fixed_spread_over_n * float(d.N);
    centre_turn[f] = 0;
}

/// A thread per (frame, pilot symbol, antenna t, antenna r, point m): the Hann-windowed
/// comb of flat LS estimates, zero-padded to A points (delay_profile.h).
__global__ void
delay_profile_gather_kernel(const float2* flat, dims d, size_t frames, int A, float2* out)
{
    const size_t e = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (e >= frames * d.Q * d.nt * d.nr * size_t(A))
        return;
    const int m = int(e % A);
    const size_t profile = e / A; // (fj, t, r)
    const int r = int(profile % d.nr), t = int(profile / d.nr % d.nt);
    const size_t fj = profile / (size_t(d.nr) * d.nt);
    const int M = (d.U - t + d.nt - 1) / d.nt;
    float2 v = make_float2(0, 0);
    if (m < M) {
        const float w = delay_profile_window(m, M);
        const float2 x = flat[(fj * d.U + t + size_t(d.nt) * m) * d.nr + r];
        v = make_float2(x.x * w, x.y * w);
    }
    out[e] = v;
}

/// A thread per (frame, receive antenna r, bin b): the power of the frame's
/// transformed combs at bin b summed over pilot symbols and transmit antennas,
/// in the CPU's order (measure_delay_profile's antenna_power).
__global__ void antenna_bin_power_kernel(
    const float2* X, int profiles, int nr, int A, size_t frames, float* out)
{
    const size_t e = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (e >= frames * size_t(nr) * size_t(A))
        return;
    const int b = int(e % size_t(A)), r = int(e / size_t(A) % size_t(nr));
    const size_t f = e / (size_t(A) * nr);
    const float2* Xf = X + f * size_t(profiles) * A;
    float p = 0;
    for (int q0 = 0; q0 < profiles; q0 += nr) { // q = (pilot * nt + t) * nr + r
        const float2 x = Xf[size_t(q0 + r) * A + b];
        p += x.x * x.x + x.y * x.y;
    }
    out[e] = p;
}

/// Bins of a frame's weighted profile kept in shared memory (beyond: in
/// global scratch, as large FFTs with few transmit antennas need).
constexpr int k_shared_profile_points = 8192;

/// A block per frame: the delay-power profile (antenna_bin_power_kernel's
/// powers, each antenna's weighted, summed) and delay_profile.h's
/// search_delay_profile by block reductions: the peak, the span above the
/// floor, the noise of the bins away from it, the span and the noise again
/// (N0 and the LMMSE's relative noise replaced where there are enough bins);
/// then the model's spread and the turn that centres it (radians per
/// subcarrier). With antenna_n0 (frames * nr, or null): each receive antenna's
/// noise from its profiles' bins beside the span; where the antennas are apart
/// (antenna_profile_weights) the search again with each antenna's profiles
/// weighted by its noise, and each antenna's noise beside that span; the
/// whitening scale (antenna_noise.h; the frame's N0 at each antenna where too
/// few bins), and where the frame is whitened each antenna's LMMSE relative
/// noise for the comb filter (antenna_relative_noise, frames * nr; -1 first
/// where not: one filter for all). The weighted profile is made once per
/// search into shared memory (or `scratch`, A floats a frame, where A is
/// larger than k_shared_profile_points): the search reads each bin several
/// times, and summing the pairs' transforms at every read took 46 us a frame
/// at LTE 20 MHz 2x2 on the H100, a third of the receiver's kernels.
__global__ void __launch_bounds__(k_threads)
    delay_support_kernel(const float* antenna_power,
                         dims d,
                         delay_profile_geometry geo,
                         const float* pair_power,
                         float* n0,
                         float* relative_noise,
                         float* spread_over_n,
                         float* spread,
                         float* centre_turn,
                         float* antenna_n0,
                         float* antenna_scale,
                         float* antenna_relative_noise,
                         float* scratch)
{
    extern __shared__ float shared_profile[];
    __shared__ float float_part[k_threads / 32];
    __shared__ int lo_part[k_threads / 32], hi_part[k_threads / 32];
    __shared__ float weight[k_max_receive_antennas]; // antenna r's profiles' weight
    __shared__ float antenna_ls[k_max_receive_antennas];
    __shared__ float kept_ls[k_max_receive_antennas]; // the last good search's
    __shared__ int search_again;
    constexpr int k_per_thread = 8; // bins a thread holds
    static_assert(k_per_thread * k_threads >= 2 * k_delay_support_max_reach + 1,
                  "the block holds every bin searched");
    const int f = blockIdx.x, lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const int A = geo.points, reach = geo.reach, nr = d.nr;
    const float* power_of = antenna_power + size_t(f) * nr * A; // [r * A + b]
    float* profile =
        A <= k_shared_profile_points ? shared_profile : scratch + size_t(f) * A;
    for (int r = int(threadIdx.x); r < nr; r += k_threads)
        weight[r] = 1.0f;
    __syncthreads();
    // The weighted profile, summed as the CPU's search() sums it.
    const auto make_profile = [&] {
        for (int b = int(threadIdx.x); b < A; b += k_threads) {
            float p = 0;
            for (int r = 0; r < nr; ++r)
                p += power_of[size_t(r) * A + b] * weight[r];
            profile[b] = p;
        }
        __syncthreads();
    };
    const auto at = [&](int k) { return profile[k < 0 ? k + A : k]; }; // signed bin k
    // A block-wide sum (op: +) or maximum, returned to every thread.
    const auto block_reduce = [&](float v, bool sum) {
        for (int o = 16; o > 0; o >>= 1) {
            const float other = __shfl_xor_sync(0xffffffffu, v, o);
            v = sum ? v + other : fmaxf(v, other);
        }
        __syncthreads(); // the previous reduction's parts are read
        if (lane == 0)
            float_part[warp] = v;
        __syncthreads();
        v = float_part[0];
        for (int w = 1; w < k_threads / 32; ++w)
            v = sum ? v + float_part[w] : fmaxf(v, float_part[w]);
        return v;
    };
    float power[k_per_thread];
    float peak = 0;
    // The span of bins above the floor that `noise` gives, to every thread.
    const auto span_above = [&](float noise) {
        const float floor = delay_support_floor(geo, peak, noise);
        int lo = reach + 1, hi = -reach - 1;
        for (int u = 0; u < k_per_thread; ++u) {
            const int k = -reach + int(threadIdx.x) + u * k_threads;
            if (k <= reach && power[u] > floor) {
                lo = min(lo, k);
                hi = max(hi, k);
            }
        }
        for (int o = 16; o > 0; o >>= 1) {
            lo = min(lo, __shfl_xor_sync(0xffffffffu, lo, o));
            hi = max(hi, __shfl_xor_sync(0xffffffffu, hi, o));
        }
        __syncthreads();
        if (lane == 0) {
            lo_part[warp] = lo;
            hi_part[warp] = hi;
        }
        __syncthreads();
        for (int w = 0; w < k_threads / 32; ++w) {
            lo = min(lo, lo_part[w]);
            hi = max(hi, hi_part[w]);
        }
        return delay_span{ lo, hi };
    };
    // The LS noise of the bins away from a span, to every thread (-1: too few).
    const auto noise_beside = [&](const delay_span& sp) {
        float sum = 0, bins = 0;
        for (int k = -A / 2 + int(threadIdx.x); k < A / 2; k += k_threads)
            if (delay_noise_bin(geo, k, sp.lo, sp.hi)) {
                sum += at(k);
                bins += 1;
            }
        sum = block_reduce(sum, true);
        bins = block_reduce(bins, true);
        return delay_profile_ls_noise(geo, sum, int(bins));
    };
    // The profile (weighted) searched from `noise`: the span, the LS noise and
    // the model's support (every thread alike).
    delay_span span;
    float ls_noise;
    delay_support support;
    const auto search = [&](float noise) {
        make_profile();
        peak = 0;
        for (int u = 0; u < k_per_thread; ++u) {
            const int k = -reach + int(threadIdx.x) + u * k_threads;
            power[u] = k <= reach ? at(k) : 0.0f;
            peak = fmaxf(peak, power[u]);
        }
        peak = block_reduce(peak, false);
        span = span_above(noise);
        ls_noise = noise_beside(span);
        if (ls_noise >= 0) { // once more: weak paths under the first floor left out
            span = span_above(ls_noise);
            const float again = noise_beside(span);
            if (again >= 0)
                ls_noise = again;
        }
        // the walk to the outermost peaks: a few bins, their powers summed again
        support = delay_support_of_span(geo, at, span.lo, span.hi);
    };
    // Each antenna's LS noise beside a span (unweighted; an empty span: beside
    // the mean delay's bins alone), into antenna_ls; whether every antenna had
    // enough bins.
    const auto antenna_noise = [&](const delay_span& sp) {
        float bins = 0;
        for (int k = -A / 2 + int(threadIdx.x); k < A / 2; k += k_threads)
            bins += delay_noise_bin(geo, k, sp.lo, sp.hi) ? 1.0f : 0.0f;
        bins = block_reduce(bins, true);
        bool measured = true;
        for (int r = 0; r < nr; ++r) {
            float sum = 0;
            for (int k = -A / 2 + int(threadIdx.x); k < A / 2; k += k_threads)
                if (delay_noise_bin(geo, k, sp.lo, sp.hi))
                    sum += power_of[size_t(r) * A + size_t(k < 0 ? k + A : k)];
            const float ls =
                antenna_ls_noise(geo, block_reduce(sum, true), int(bins), nr);
            measured = measured && ls >= 0; // alike in every thread
            if (threadIdx.x == 0)
                antenna_ls[r] = ls;
        }
        __syncthreads();
        return measured;
    };
    search(n0[f] / float(d.nt));
    bool measured = false,
         weighted = false; // weighted: the result kept is a weighted search's
    if (antenna_n0) {
        // As the CPU's measure_delay_profile: a failed first search (a noisy
        // antenna's bins above the floor everywhere) guesses each antenna's
        // noise beside the mean delay alone and runs the weighted search
        // twice; a weighted search with too few noise bins gives way to the
        // last that had enough.
        measured = ls_noise >= 0 && antenna_noise(span);
        bool have_noise = measured;
        int passes = 1;
        if (!measured) {
            have_noise = antenna_noise(delay_span{ 1, 0 });
            passes = 2;
        }
        delay_span kept_span = span;
        float kept_noise = ls_noise;
        delay_support kept_support = support;
        for (int r = int(threadIdx.x); r < nr; r += k_threads)
            kept_ls[r] = antenna_ls[r];
        for (int pass = 0; pass < passes; ++pass) {
            if (threadIdx.x == 0)
                search_again =
                    have_noise && antenna_profile_weights(antenna_ls, nr, weight);
            __syncthreads();
            if (!search_again)
                break;
            float mean = 0;
            for (int r = 0; r < nr; ++r)
                mean += antenna_ls[r] / float(nr);
            __syncthreads(); // every thread has read antenna_ls and search_again
            search(mean);    // the antennas apart: again, each by its noise
            if (!(ls_noise >= 0 && antenna_noise(span))) {
                span = kept_span;
                ls_noise = kept_noise;
                support = kept_support;
                for (int r = int(threadIdx.x); r < nr; r += k_threads)
                    antenna_ls[r] = kept_ls[r];
                __syncthreads();
                break;
            }
            kept_span = span;
            kept_noise = ls_noise;
            kept_support = support;
            for (int r = int(threadIdx.x); r < nr; r += k_threads)
                kept_ls[r] = antenna_ls[r];
            measured = weighted = true;
        }
        measured = measured && ls_noise >= 0;
    }
    if (threadIdx.x == 0) {
        if (measured && weighted) { // a weighted search's N0: the antennas' mean
            ls_noise = 0;
            for (int r = 0; r < nr; ++r)
                ls_noise += antenna_ls[r] / float(nr);
        }
        if (ls_noise >= 0) {
            n0[f] = ls_noise * float(d.nt);
            relative_noise[f] = lmmse_relative_noise(pair_power[f], ls_noise);
        }
        spread_over_n[f] = support.spread / float(d.N);
        spread[f] = support.spread;
        centre_turn[f] = 2.0f * 3.14159265358979f * support.centre / float(d.N);
        if (antenna_n0) {
            float* noise = antenna_n0 + size_t(f) * nr;
            for (int r = 0; r < nr; ++r)
                noise[r] = measured ? antenna_ls[r] * float(d.nt) : n0[f];
            float* relative = antenna_relative_noise + size_t(f) * nr;
            relative[0] = -1.0f;
            if (antenna_whitening(noise, nr, n0[f], antenna_scale + size_t(f) * nr))
                for (int r = 0; r < nr; ++r) // as the CPU receiver's estimate()
                    relative[r] = lmmse_antenna_relative_noise(
                        pair_power[f], ls_noise, noise[r] / float(d.nt));
        }
    }
}

/// Subcarrier c of antenna t's comb in slot fj: its weights (LMMSE with
/// comb_interpolation.h's Fixed, or linear), applied to every receive antenna,
/// the slope put back. antenna_relative_noise (nr values, or null): LMMSE
/// weights of each receive antenna's own.
template <int Fixed>
__device__ void interpolate_one(const float2* ls_all,
                                const float* slopes,
                                const int* offsets,
                                const dims& d,
                                size_t fj,
                                int c,
                                int t,
                                bool lmmse,
                                int window,
                                float spread_over_n,
                                float relative_noise,
                                const float* antenna_relative_noise,
                                float centre_turn,
                                float2* H_pilot)
{
    constexpr int N = Fixed > 0 ? Fixed : k_lmmse_max_window;
    int pilot[N];
    float w[N];
    float2 wt[N];
    int n = 0;
    const float2* ls = ls_all + fj * d.U * d.nr;
    float sn, cs;
    sincosf((slopes[fj] - centre_turn) * float(offsets[c]), &sn, &cs);
    for (int r = 0; r < d.nr; ++r) {
        if (r == 0 || antenna_relative_noise) {
            n = lmmse ? lmmse_comb_weights<Fixed>(c,
                                                  t,
                                                  d.nt,
                                                  d.U,
                                                  offsets,
                                                  window,
                                                  spread_over_n,
                                                  antenna_relative_noise
                                                      ? antenna_relative_noise[r]
                                                      : relative_noise,
                                                  pilot,
                                                  w)
                      : linear_comb_weights(c, t, d.nt, d.U, offsets, pilot, w);
            // The model's centre turned out of the pilots (each weight turned)
            // and back in.
#pragma unroll
            for (int a = 0; a < N; ++a) {
                if (a >= n)
                    break;
                float s, co;
                sincosf(centre_turn * float(offsets[pilot[a]]), &s, &co);
                wt[a] = make_float2(w[a] * co, w[a] * s);
            }
        }
        float2 v = make_float2(0, 0);
#pragma unroll
        for (int a = 0; a < N; ++a) {
            if (a >= n)
                break;
            const float2 x = cmul(ls[pilot[a] * d.nr + r], wt[a]);
            v.x += x.x;
            v.y += x.y;
        }
        H_pilot[((fj * d.U + c) * d.nr + r) * d.nt + t] = cmul(v, make_float2(cs, sn));
    }
}

/// A thread per (frame, pilot symbol, subcarrier, antenna t). The default LMMSE window
/// of 8 pilots takes loops of compile-time length (the solve's arrays in
/// registers, not local memory); the same operations as any other window.
/// antenna_relative_noise (delay_support_kernel's, or null): a whitened frame's
/// receive antennas each with LMMSE weights of their own.
__global__ void interpolate_kernel(const float2* ls_all,
                                   const float* slopes,
                                   const int* offsets,
                                   dims d,
                                   size_t frames,
                                   bool lmmse,
                                   int window,
                                   const float* relative_noise,
                                   const float* antenna_relative_noise,
                                   const float* spread_over_n,
                                   const float* centre_turn,
                                   float2* H_pilot)
{
    const size_t e = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    const size_t per_frame = size_t(d.Q) * d.U * d.nt;
    if (e >= frames * per_frame)
        return;
    const size_t f = e / per_frame;
    const int j = int(e / (size_t(d.U) * d.nt) % d.Q), c = int(e / d.nt % d.U),
              t = int(e % d.nt);
    const size_t fj = f * d.Q + j;
    const float* own = antenna_relative_noise && antenna_relative_noise[f * d.nr] >= 0
                           ? antenna_relative_noise + f * d.nr
                           : nullptr;
    constexpr int k_fixed = 8;
    const bool fixed =
        lmmse && window == k_fixed && (d.U - t + d.nt - 1) / d.nt >= k_fixed;
    if (fixed)
        interpolate_one<k_fixed>(ls_all,
                                 slopes,
                                 offsets,
                                 d,
                                 fj,
                                 c,
                                 t,
                                 true,
                                 window,
                                 spread_over_n[f],
                                 relative_noise[f],
                                 own,
                                 centre_turn[f],
                                 H_pilot);
    else
        interpolate_one<0>(ls_all,
                           slopes,
                           offsets,
                           d,
                           fj,
                           c,
                           t,
                           lmmse,
                           window,
                           spread_over_n[f],
                           relative_noise[f],
                           own,
                           centre_turn[f],
                           H_pilot);
}

// ---- frame search (frame_search.h) -------------------------------------------

constexpr int k_tile =
    1024; // metric positions per block (k_metric_alignment is a multiple)
static_assert(k_metric_alignment % k_tile == 0,
              "a window's first sample starts a metric tile");
constexpr int k_per_thread = k_tile / k_threads; // consecutive positions per thread
/// SMs of the GPUs the tile choices aim at (an H100 has 132): a guess, not a
/// query, so that the choice does not depend on the device.
constexpr int k_sm_count_guess = 132;

/// Block-wide sum of three doubles (k_threads threads), returned to every thread:
/// within warps by shuffles, then across the warps.
__device__ void block_sum3(double& a, double& b, double& c, double (*shared)[k_threads])
{
    for (int o = 16; o > 0; o >>= 1) {
        a += __shfl_xor_sync(0xffffffffu, a, o);
        b += __shfl_xor_sync(0xffffffffu, b, o);
        c += __shfl_xor_sync(0xffffffffu, c, o);
    }
    const int warp = threadIdx.x / 32;
    __syncthreads();
    if (threadIdx.x % 32 == 0) {
        shared[0][warp] = a;
        shared[1][warp] = b;
        shared[2][warp] = c;
    }
    __syncthreads();
    a = b = c = 0;
    for (int w = 0; w < k_threads / 32; ++w) { // the same order in every thread
        a += shared[0][w];
        b += shared[1][w];
        c += shared[2][w];
    }
}

/// Block-wide exclusive prefix sums of three doubles, in thread order: inclusive
/// scans within warps by shuffles, then the warps' totals added in.
__device__ void
block_exclusive_scan3(double& a, double& b, double& c, double (*shared)[k_threads])
{
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    double x[3] = { a, b, c };
    for (int o = 1; o < 32; o <<= 1)
        for (int k = 0; k < 3; ++k) {
            const double y = __shfl_up_sync(0xffffffffu, x[k], o);
            if (lane >= o)
                x[k] += y;
        }
    __syncthreads();
    if (lane == 31)
        for (int k = 0; k < 3; ++k)
            shared[k][warp] = x[k];
    __syncthreads();
    for (int k = 0; k < 3; ++k) {
        double before = 0;
        for (int w = 0; w < warp; ++w)
            before += shared[k][w];
        x[k] += before;
    }
    // exclusive: less this thread's own value
    a = x[0] - a;
    b = x[1] - b;
    c = x[2] - c;
}

/// Block-wide reductions of one value (k_threads threads), returned to every thread.
template <typename T, typename Op>
__device__ T block_reduce(T v, Op op, T* shared)
{
    __syncthreads();
    shared[threadIdx.x] = v;
    __syncthreads();
    for (int o = k_threads / 2; o > 0; o >>= 1) {
        if (int(threadIdx.x) < o)
            shared[threadIdx.x] = op(shared[threadIdx.x], shared[threadIdx.x + o]);
        __syncthreads();
    }
    return shared[0];
}

struct max_op {
    template <typename T>
    __device__ T operator()(T a, T b) const
    {
        return a > b ? a : b;
    }
};
struct sum_op {
    __device__ int operator()(int a, int b) const { return a + b; }
};
struct min_op {
    template <typename T>
    __device__ T operator()(T a, T b) const
    {
        return a < b ? a : b;
    }
};

/// The Schmidl-Cox metric of positions [first, first + count): a block per tile
/// of k_tile positions sums P and R exactly (double) at the tile's first
/// position, then each position adds the increments up to it (a block-wide
/// prefix sum, double), as the CPU slides its sums one position at a time.
template <int PerThread>
__global__ void metric_kernel(
    sample_view v, size_t first, size_t count, int L, int nr, float* M, float2* P)
{
    constexpr int k_per_thread = PerThread, k_tile = PerThread * k_threads;
    __shared__ double shared[3][k_threads];
    const size_t t0 = size_t(blockIdx.x) * k_tile, d0 = first + t0;
    double pr = 0, pi = 0, R = 0;
    for (int m = threadIdx.x; m < L; m += k_threads)
        for (int r = 0; r < nr; ++r) {
            const float2 a = finite_sample_at(v, d0 + size_t(m), r),
                         b = finite_sample_at(v, d0 + size_t(m + L), r);
            pr += double(a.x) * b.x + double(a.y) * b.y;
            pi += double(a.x) * b.y - double(a.y) * b.x;
            R += 0.5 * (double(a.x) * a.x + double(a.y) * a.y + double(b.x) * b.x +
                        double(b.y) * b.y);
        }
    block_sum3(pr, pi, R, shared);
    // Increments: position i gets those of the steps from the tile's start to it.
    double cpr[k_per_thread], cpi[k_per_thread], cr[k_per_thread];
    double spr = 0, spi = 0, sr = 0;
    for (int j = 0; j < k_per_thread; ++j) {
        const size_t i = size_t(threadIdx.x) * k_per_thread + size_t(j);
        if (i > 0 && t0 + i < count) {
            const size_t m = d0 + i - 1;
            for (int r = 0; r < nr; ++r) {
                const float2 a0 = finite_sample_at(v, m, r),
                             aL = finite_sample_at(v, m + size_t(L), r),
                             a2 = finite_sample_at(v, m + size_t(2 * L), r);
                spr += (double(aL.x) * a2.x + double(aL.y) * a2.y) -
                       (double(a0.x) * aL.x + double(a0.y) * aL.y);
                spi += (double(aL.x) * a2.y - double(aL.y) * a2.x) -
                       (double(a0.x) * aL.y - double(a0.y) * aL.x);
                sr += 0.5 * (double(a2.x) * a2.x + double(a2.y) * a2.y -
                             double(a0.x) * a0.x - double(a0.y) * a0.y);
            }
        }
        cpr[j] = spr;
        cpi[j] = spi;
        cr[j] = sr;
    }
    double opr = spr, opi = spi, orr = sr;
    block_exclusive_scan3(opr, opi, orr, shared);
    for (int j = 0; j < k_per_thread; ++j) {
        const size_t i = size_t(threadIdx.x) * k_per_thread + size_t(j);
        if (t0 + i >= count)
            break;
        const double p_re = pr + opr + cpr[j], p_im = pi + opi + cpi[j],
                     r = R + orr + cr[j];
        M[t0 + i] = r > 0 ? float((p_re * p_re + p_im * p_im) / (r * r)) : 0.0f;
        P[t0 + i] = make_float2(float(p_re), float(p_im));
    }
}

/// Whether position i starts or ends (last position of) a run above the threshold.
__device__ void run_edges(
    const float* M, size_t i, size_t count, float threshold, bool& starts, bool& ends)
{
    const bool above = M[i] > threshold;
    starts = above && (i == 0 || !(M[i - 1] > threshold));
    ends = above && (i + 1 == count || !(M[i + 1] > threshold));
}

/// Runs compacted in order: counts per tile ...
__global__ void
run_count_kernel(const float* M, size_t count, float threshold, int* counts)
{
    __shared__ int shared[k_threads];
    int starts = 0, ends = 0;
    for (int j = 0; j < k_per_thread; ++j) {
        const size_t i =
            size_t(blockIdx.x) * k_tile + size_t(threadIdx.x) * k_per_thread + size_t(j);
        if (i < count) {
            bool s, e;
            run_edges(M, i, count, threshold, s, e);
            starts += s;
            ends += e;
        }
    }
    starts = block_reduce(starts, sum_op{}, shared);
    ends = block_reduce(ends, sum_op{}, shared);
    if (threadIdx.x == 0) {
        counts[2 * blockIdx.x] = starts;
        counts[2 * blockIdx.x + 1] = ends;
    }
}

/// ... their exclusive prefix sums over the tiles (one block), and the totals ...
__global__ void run_scan_kernel(int* counts, size_t tiles, unsigned long long* totals)
{
    __shared__ int shared[k_threads];
    for (int kind = 0; kind < 2; ++kind) {
        // Each thread sums a contiguous chunk of tiles, then the chunks are scanned.
        const size_t chunk = (tiles + k_threads - 1) / k_threads;
        const size_t lo = size_t(threadIdx.x) * chunk, hi = min(tiles, lo + chunk);
        int mine = 0;
        for (size_t b = lo; b < hi; ++b)
            mine += counts[2 * b + size_t(kind)];
        __syncthreads();
        shared[threadIdx.x] = mine;
        __syncthreads();
        for (int o = 1; o < k_threads; o <<= 1) {
            const int x = int(threadIdx.x) >= o ? shared[threadIdx.x - o] : 0;
            __syncthreads();
            shared[threadIdx.x] += x;
            __syncthreads();
        }
        int running = shared[threadIdx.x] - mine;
        for (size_t b = lo; b < hi; ++b) {
            const int c = counts[2 * b + size_t(kind)];
            counts[2 * b + size_t(kind)] = running;
            running += c;
        }
        if (threadIdx.x == k_threads - 1)
            totals[kind] = (unsigned long long)shared[k_threads - 1];
        __syncthreads();
    }
}

/// ... and each tile's starts and ends written at its offsets, in position order.
__global__ void run_write_kernel(const float* M,
                                 size_t first,
                                 size_t count,
                                 float threshold,
                                 const int* offsets,
                                 size_t* starts,
                                 size_t* lasts)
{
    __shared__ int shared[2][k_threads];
    bool s[k_per_thread], e[k_per_thread];
    int ns = 0, ne = 0;
    for (int j = 0; j < k_per_thread; ++j) {
        const size_t i =
            size_t(blockIdx.x) * k_tile + size_t(threadIdx.x) * k_per_thread + size_t(j);
        s[j] = e[j] = false;
        if (i < count)
            run_edges(M, i, count, threshold, s[j], e[j]);
        ns += s[j];
        ne += e[j];
    }
    shared[0][threadIdx.x] = ns;
    shared[1][threadIdx.x] = ne;
    __syncthreads();
    for (int o = 1; o < k_threads; o <<= 1) {
        const int xs = int(threadIdx.x) >= o ? shared[0][threadIdx.x - o] : 0;
        const int xe = int(threadIdx.x) >= o ? shared[1][threadIdx.x - o] : 0;
        __syncthreads();
        shared[0][threadIdx.x] += xs;
        shared[1][threadIdx.x] += xe;
        __syncthreads();
    }
    int at_s = offsets[2 * blockIdx.x] + shared[0][threadIdx.x] - ns;
    int at_e = offsets[2 * blockIdx.x + 1] + shared[1][threadIdx.x] - ne;
    for (int j = 0; j < k_per_thread; ++j) {
        const size_t i =
            size_t(blockIdx.x) * k_tile + size_t(threadIdx.x) * k_per_thread + size_t(j);
        if (s[j])
            starts[at_s++] = first + i;
        if (e[j])
            lasts[at_e++] = first + i;
    }
}

/// A run's decision as the host reads it.
struct run_slot {
    unsigned long long start, last, lo, hi, frame_start;
    float cfo, metric;
    int valid;
    int pad;
};

/// A block per slot k: run j0 + skip + k, where j0 is the first run whose last
/// position is at or after `from` (skip: runs of earlier batches). The analysis window
/// [s, s + N + CP] (clamped to the last position): the peak, the plateau within 90 % of
/// it, the CFO and metric at its middle, the matched filter's range. The last slot only
/// records the next run's position (the host's sign that more runs follow).
__global__ void plateau_kernel(const float* M,
                               const float2* P,
                               size_t first,
                               size_t count,
                               const size_t* starts,
                               const size_t* lasts,
                               const unsigned long long* totals,
                               size_t from,
                               size_t skip,
                               int slots,
                               int N,
                               int CP,
                               run_slot* out)
{
    __shared__ float fshared[k_threads];
    __shared__ unsigned long long ushared[k_threads];
    __shared__ size_t j0;
    const size_t total = size_t(totals[0]);
    if (threadIdx.x == 0) { // lower bound: the first run with last >= from
        size_t lo = 0, hi = total;
        while (lo < hi) {
            const size_t mid = (lo + hi) / 2;
            if (lasts[mid] < from)
                lo = mid + 1;
            else
                hi = mid;
        }
        j0 = lo;
    }
    __syncthreads();
    run_slot& slot = out[blockIdx.x];
    const size_t j = j0 + skip + blockIdx.x;
    if (j >= total) {
        if (threadIdx.x == 0)
            slot.valid = 0;
        return;
    }
    const size_t s = starts[j], last_position = first + count - 1;
    if (threadIdx.x == 0) {
        slot.start = s;
        slot.last = lasts[j];
        slot.valid = 1;
    }
    if (int(blockIdx.x) == slots - 1)
        return;
    const size_t window_end = min(s + size_t(N + CP), last_position),
                 n = window_end - s + 1;
    float peak = 0.0f;
    for (size_t o = threadIdx.x; o < n; o += k_threads)
        peak = fmaxf(peak, M[s - first + o]);
    peak = block_reduce(peak, max_op{}, fshared);
    unsigned long long p0 = n, p1 = 0;
    for (size_t o = threadIdx.x; o < n; o += k_threads)
        if (M[s - first + o] >= k_plateau_fraction * peak) {
            p0 = min(p0, (unsigned long long)o);
            p1 = max(p1, (unsigned long long)o);
        }
    p0 = block_reduce(p0, min_op{}, ushared);
    p1 = block_reduce(p1, max_op{}, ushared);
    if (threadIdx.x == 0) {
        const plateau_verdict v =
            plateau_of(s, size_t(p0), size_t(p1), CP, first, last_position);
        const float2 pm = P[v.mid - first];
        slot.cfo = float(atan2(double(pm.y), double(pm.x)) / M_PI);
        slot.metric = M[v.mid - first];
        slot.lo = v.lo;
        slot.hi = v.hi;
    }
}

/// q[k][m]: the preamble rotated by slot k's CFO, as frame_search::matched_filter
/// makes it. Grid: (chunks of the preamble, slots).
__global__ void
rotate_preamble_kernel(const float2* preamble, const run_slot* slots, int N, float2* q)
{
    const run_slot& slot = slots[blockIdx.y];
    if (!slot.valid)
        return;
    const size_t k = blockIdx.y;
    for (int m = int(blockIdx.x * blockDim.x + threadIdx.x); m < N;
         m += int(gridDim.x * blockDim.x)) {
        float s, c;
        sincosf(float(2.0 * M_PI * double(slot.cfo) * m / N), &s, &c);
        q[k * N + m] = cmul(preamble[m], make_float2(c, s));
    }
}

/// The matched filter's thread blocks: k_matched_positions consecutive positions
/// each, their samples (N + k_matched_positions per antenna) in shared memory,
/// the N products of a position split over k_matched_groups groups of threads.
/// Few positions a block, so that a slot's range (CP * 1.5 positions) fills
/// many SMs: with 32 a block, 14 blocks of an nr100 slot took 95 us on the H100.
constexpr int k_matched_positions = 8;
constexpr int k_matched_threads = 1024;
constexpr int k_matched_groups = k_matched_threads / k_matched_positions;
constexpr int k_matched_warps = k_matched_threads / 32;
constexpr int k_matched_max_fft =
    4096; // larger FFTs: the samples straight from global memory

/// The sum over the block's groups of each position's value: in the warp (its
/// 32 / k_matched_positions groups), then over the warps in the first warp.
/// Valid in the first k_matched_positions threads.
__device__ float2 matched_block_sum(float2 v, float2 (*partial)[k_matched_positions])
{
    static_assert(32 % k_matched_positions == 0, "positions divide a warp");
    for (int o = k_matched_positions; o < 32; o <<= 1) {
        v.x += __shfl_xor_sync(0xffffffffu, v.x, o);
        v.y += __shfl_xor_sync(0xffffffffu, v.y, o);
    }
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    if (lane < k_matched_positions)
        partial[warp][lane] = v;
    __syncthreads();
    float2 t = make_float2(0, 0);
    if (warp == 0) {
        for (int w = lane / k_matched_positions; w < k_matched_warps;
             w += 32 / k_matched_positions) {
            t.x += partial[w][lane % k_matched_positions].x;
            t.y += partial[w][lane % k_matched_positions].y;
        }
        for (int o = k_matched_positions; o < 32; o <<= 1) {
            t.x += __shfl_xor_sync(0xffffffffu, t.x, o);
            t.y += __shfl_xor_sync(0xffffffffu, t.y, o);
        }
    }
    __syncthreads(); // partial is free for the next antenna
    return t;
}

/// A block per (k_matched_positions positions of a slot's range, slot k): the
/// matched filter sum over antennas of |sum_m x_r[d + m] conj(q[m])|^2 at
/// d = lo + i, for its positions i. Thread t: position t % k_matched_positions,
/// products m = t / k_matched_positions, + k_matched_groups, ...
__global__ void __launch_bounds__(k_matched_threads) matched_kernel(sample_view v,
                                                                    const run_slot* slots,
                                                                    const float2* q,
                                                                    int N,
                                                                    int nr,
                                                                    int span,
                                                                    float* c)
{
    __shared__ float2 x[k_matched_max_fft + k_matched_positions];
    __shared__ float2 partial[k_matched_warps][k_matched_positions];
    const run_slot& slot = slots[blockIdx.y];
    const size_t d0 = size_t(slot.lo) + size_t(blockIdx.x) * k_matched_positions;
    if (!slot.valid || d0 > slot.hi)
        return;
    const float2* qk = q + size_t(blockIdx.y) * N;
    const int p = threadIdx.x % k_matched_positions,
              group = threadIdx.x / k_matched_positions;
    const bool shared_samples = N <= k_matched_max_fft;
    // This block's positions up to the slot's last: their samples end at hi + N - 1,
    // the last sample there is (a view over the caller's buffer ends there).
    const size_t left = size_t(slot.hi) - d0 + 1;
    const int positions =
        left < size_t(k_matched_positions) ? int(left) : k_matched_positions;
    float total = 0; // thread p: position d0 + p
    for (int r = 0; r < nr; ++r) {
        if (shared_samples) {
            for (int i = threadIdx.x; i < N + positions - 1; i += k_matched_threads)
                x[i] = finite_sample_at(v, d0 + size_t(i), r);
            __syncthreads();
        }
        float2 acc = make_float2(0, 0);
        for (int m = group; p < positions && m < N; m += k_matched_groups) {
            const float2 w = qk[m];
            const float2 s =
                shared_samples ? x[p + m] : finite_sample_at(v, d0 + size_t(p + m), r);
            acc.x += s.x * w.x + s.y * w.y;
            acc.y += s.y * w.x - s.x * w.y;
        }
        // Its barriers also keep x until every thread has read this antenna's.
        const float2 t = matched_block_sum(acc, partial);
        total += t.x * t.x + t.y * t.y;
    }
    const size_t d = d0 + size_t(p);
    if (threadIdx.x < k_matched_positions && p < positions)
        c[size_t(blockIdx.y) * span + (d - size_t(slot.lo))] = total;
}

/// A block per slot: the earliest local maximum of the matched filter within
/// 10 dB of its strongest, and the FFT window's start before it.
__global__ void
first_path_kernel(run_slot* slots, const float* c_all, int span, int backoff)
{
    __shared__ float fshared[k_threads];
    __shared__ unsigned long long ushared[k_threads];
    run_slot& slot = slots[blockIdx.x];
    if (!slot.valid)
        return;
    const float* c = c_all + size_t(blockIdx.x) * span;
    const int n = int(slot.hi - slot.lo) + 1;
    float cmax = c[0];
    for (int i = threadIdx.x; i < n; i += k_threads)
        cmax = fmaxf(cmax, c[i]);
    cmax = block_reduce(cmax, max_op{}, fshared);
    unsigned long long first_path = (unsigned long long)n;
    for (int i = threadIdx.x; i < n; i += k_threads) {
        const float x = c[i];
        const bool local_max = (i == 0 || x >= c[i - 1]) && (i == n - 1 || x >= c[i + 1]);
        if (local_max && x >= k_path_fraction * cmax)
            first_path = min(first_path, (unsigned long long)i);
    }
    first_path = block_reduce(first_path, min_op{}, ushared);
    if (threadIdx.x == 0)
        slot.frame_start = frame_start_of(
            size_t(slot.lo) +
                (first_path < (unsigned long long)n ? size_t(first_path) : 0),
            backoff);
}

/// Elements of a pair of pilot symbols' estimates a block of pilot_pair_sums_kernel sums.
constexpr int k_pair_chunk = 2048;

/// Grid (frame * (pilot symbols - 1), chunk): for the LMMSE time filter's
/// Doppler, the chunk's sum of conj(H_q) H_q+1 and of (|H_q|^2 + |H_q+1|^2) / 2
/// where (q, q + 1) is a pair slot_layout::doppler_pair takes (zeros otherwise).
__global__ void __launch_bounds__(k_threads)
    pilot_pair_sums_kernel(const float2* H_pilot, dims d, double* parts)
{
    __shared__ double2 partial[k_threads / 32];
    const size_t per_pilot = size_t(d.U) * d.nr * d.nt;
    const int pair = blockIdx.x, candidates = d.Q - 1;
    const size_t f = size_t(pair / candidates), j = size_t(pair % candidates);
    const float2* a_all = H_pilot + (f * d.Q + j) * per_pilot;
    const float2* b_all = a_all + per_pilot;
    const size_t lo = size_t(blockIdx.y) * k_pair_chunk;
    const size_t hi = d.lay.doppler_pair(int(j)) ? min(lo + k_pair_chunk, per_pilot) : lo;
    // In double, as the CPU sums them: the Doppler of a slow channel lies in
    // their 1e-5 (doppler_omega).
    double2 c = make_double2(0, 0), p = make_double2(0, 0);
    for (size_t e = lo + threadIdx.x; e < hi; e += blockDim.x) {
        const float2 a = a_all[e], b = b_all[e];
        c.x += double(a.x) * b.x + double(a.y) * b.y;
        c.y += double(a.x) * b.y - double(a.y) * b.x;
        p.x += 0.5 * (double(a.x) * a.x + double(a.y) * a.y + double(b.x) * b.x +
                      double(b.y) * b.y);
    }
    c = block_sum<k_threads>(c, partial);
    p = block_sum<k_threads>(p, partial);
    if (threadIdx.x == 0) {
        double* out = parts + (size_t(pair) * gridDim.y + blockIdx.y) * 3;
        out[0] = c.x;
        out[1] = c.y;
        out[2] = p.x;
    }
}

/// Estimation across frames on the device (time_filter.h): per frame its gap
/// in symbols from the frame before (-1: not linked; gap null: nothing is),
/// the frame before's pilot symbols for a batch's first frame (the call
/// before's last; the others' lie before theirs in H_pilot), the link sums
/// per (frame, older pilot symbol), and what time_weights_kernel decided.
struct frame_links {
    const float* gap = nullptr;
    const float2* last_pilots = nullptr;
    float* sums = nullptr;  ///< frames * Q * 4: phase, slope, |pair|, power
    int* linked = nullptr;  ///< frames
    float* theta = nullptr; ///< frames: the linked model's theta
};

/// The frame before's pilot symbol q for frame f of a batch.
__device__ const float2* older_pilot(
    const float2* H_pilot, const frame_links& links, const dims& d, size_t f, int q)
{
    const size_t per_pilot = size_t(d.U) * d.nr * d.nt;
    return f ? H_pilot + ((f - 1) * d.Q + size_t(q)) * per_pilot
             : links.last_pilots + size_t(q) * per_pilot;
}

/// d_c of ofdm_receiver.cc's link_frames at subcarrier c: the sum over antenna
/// pairs of conj(A) B, A an older pilot symbol's estimates, B this frame's.
__device__ float2 link_product(const float2* a, const float2* b, size_t hn, int c)
{
    float2 v = make_float2(0, 0);
    for (size_t e = 0; e < hn; ++e) {
        const float2 u = a[size_t(c) * hn + e], w = b[size_t(c) * hn + e];
        v.x += u.x * w.x + u.y * w.y;
        v.y += u.x * w.y - u.y * w.x;
    }
    return v;
}

/// Subcarriers a block of the link kernels takes (a thread each): a frame's
/// link spreads over many blocks (a block per pilot symbol took 0.3 ms a
/// frame at NR 100 MHz, waiting on memory with two blocks on the GPU).
constexpr int k_link_chunk = k_threads;

/// Grid (frame * older pilot symbol q, chunk) of each linked frame (gap >= 0):
/// the chunk's sum of conj(d_c) d_c+1 over neighbouring subcarriers, d_c
/// against this frame's first pilot symbol (link_frames' step).
__global__ void __launch_bounds__(k_threads) frame_link_step_kernel(
    const float2* H_pilot, const int* offsets, dims d, frame_links links, float* parts)
{
    __shared__ float2 partial[k_threads / 32];
    const size_t fq = blockIdx.x, f = fq / d.Q;
    if (!(links.gap[f] >= 0.0f))
        return; // the whole block
    const size_t hn = size_t(d.nr) * d.nt, per_pilot = size_t(d.U) * hn;
    const float2* a = older_pilot(H_pilot, links, d, f, int(fq % d.Q));
    const float2* first = H_pilot + f * d.Q * per_pilot;
    const int c = int(blockIdx.y) * k_link_chunk + int(threadIdx.x);
    float2 step = make_float2(0, 0);
    if (c + 1 < d.U && offsets[c + 1] - offsets[c] == 1) {
        // d_c's phases alone, as the CPU (a product of two d's grows with |H|^4)
        const auto unit = [](float2 v) {
            const float m = hypotf(v.x, v.y);
            return m > 0.0f ? make_float2(v.x / m, v.y / m) : make_float2(0, 0);
        };
        const float2 lo = unit(link_product(a, first, hn, c)),
                     hi = unit(link_product(a, first, hn, c + 1));
        step = make_float2(lo.x * hi.x + lo.y * hi.y, lo.x * hi.y - lo.y * hi.x);
    }
    step = block_sum<k_threads>(step, partial);
    if (threadIdx.x == 0) {
        float* out = parts + (fq * gridDim.y + blockIdx.y) * 2;
        out[0] = step.x;
        out[1] = step.y;
    }
}

/// The step of (frame, older pilot symbol) from its chunks' parts, in order.
__device__ float2 link_step(const float* step_parts, size_t fq, int chunks)
{
    float2 step = make_float2(0, 0);
    for (int k = 0; k < chunks; ++k) {
        step.x += step_parts[(fq * chunks + k) * 2 + 0];
        step.y += step_parts[(fq * chunks + k) * 2 + 1];
    }
    return step;
}

/// Grid as frame_link_step_kernel's: with the slope from the step
/// (frame_link_slope), the chunk's d_c turned back summed (against this
/// frame's first pilot symbol, and against its pilot symbol q) and the
/// pairs' power.
__global__ void __launch_bounds__(k_threads)
    frame_link_sums_kernel(const float2* H_pilot,
                           const int* offsets,
                           dims d,
                           frame_links links,
                           const float* step_parts,
                           float* parts)
{
    __shared__ float2 partial[k_threads / 32];
    const size_t fq = blockIdx.x, f = fq / d.Q;
    if (!(links.gap[f] >= 0.0f))
        return; // the whole block
    const int q = int(fq % d.Q);
    const size_t hn = size_t(d.nr) * d.nt, per_pilot = size_t(d.U) * hn;
    const float2* a = older_pilot(H_pilot, links, d, f, q);
    const float2* first = H_pilot + f * d.Q * per_pilot;
    const float2* b = first + size_t(q) * per_pilot;
    const float2 step = link_step(step_parts, fq, int(gridDim.y));
    const float slope = frame_link_slope(step.x, step.y, d.N);
    const int c = int(blockIdx.y) * k_link_chunk + int(threadIdx.x);
    float2 centred = make_float2(0, 0), pair = make_float2(0, 0),
           power = make_float2(0, 0);
    if (c < d.U) {
        float sn, cs;
        sincosf(-slope * float(offsets[c]), &sn, &cs);
        const float2 x = link_product(a, first, hn, c), y = link_product(a, b, hn, c);
        centred = make_float2(x.x * cs - x.y * sn, x.x * sn + x.y * cs);
        pair = make_float2(y.x * cs - y.y * sn, y.x * sn + y.y * cs);
        for (size_t e = 0; e < hn; ++e) {
            const float2 u = a[size_t(c) * hn + e], w = b[size_t(c) * hn + e];
            power.x += 0.5f * (u.x * u.x + u.y * u.y + w.x * w.x + w.y * w.y);
        }
    }
    centred = block_sum<k_threads>(centred, partial);
    pair = block_sum<k_threads>(pair, partial);
    power = block_sum<k_threads>(power, partial);
    if (threadIdx.x == 0) {
        float* out = parts + (fq * gridDim.y + blockIdx.y) * 5;
        out[0] = centred.x;
        out[1] = centred.y;
        out[2] = pair.x;
        out[3] = pair.y;
        out[4] = power.x;
    }
}

/// A thread per (frame, older pilot symbol) of each linked frame: the chunks'
/// parts added in order, the turn (frame_link_of) and the sums time_weights_kernel
/// takes: links.sums = phase (NaN: not linked), slope, |pair|, power.
__global__ void frame_link_finish_kernel(dims d,
                                         size_t frames,
                                         int chunks,
                                         frame_links links,
                                         const float* step_parts,
                                         const float* parts)
{
    const size_t fq = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (fq >= frames * d.Q || !(links.gap[fq / d.Q] >= 0.0f))
        return;
    const float2 step = link_step(step_parts, fq, chunks);
    float v[5] = { 0, 0, 0, 0, 0 };
    for (int k = 0; k < chunks; ++k)
        for (int x = 0; x < 5; ++x)
            v[x] += parts[(fq * chunks + k) * 5 + x];
    frame_link_turn turn;
    const bool ok = frame_link_of(
        step.x, step.y, v[0], v[1], frame_link_slope(step.x, step.y, d.N), turn);
    float* out = links.sums + fq * 4;
    out[0] = ok ? turn.phase : NAN;
    out[1] = turn.slope;
    out[2] = hypotf(v[2], v[3]);
    out[3] = v[4];
}

/// A thread per (frame, data symbol of a slot, receive antenna): the frame's
/// Doppler from the pair sums (every thread adds them alike), then the data
/// symbol's LMMSE time weights (time_filter.h), k_time_taps complex ones each;
/// alike for every antenna unless the frame is whitened
/// (antenna_relative_noise, as interpolate_kernel's).
__global__ void time_weights_kernel(const double* parts,
                                    int chunks,
                                    dims d,
                                    size_t frames,
                                    bool lmmse_frequency,
                                    int window,
                                    const float* n0,
                                    const float* relative_noise,
                                    const float* antenna_relative_noise,
                                    const float* spread_over_n,
                                    float symbols_per_second,
                                    frame_links links,
                                    float* weights,
                                    float* doppler)
{
    const size_t e = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    const size_t per_frame = size_t(d.slots) * d.D * d.nr;
    if (e >= frames * per_frame)
        return;
    const size_t f = e / per_frame;
    const int j = int(e % per_frame / (size_t(d.D) * d.nr)), s = int(e / d.nr % d.D),
              r = int(e % d.nr);
    double cx = 0, cy = 0, p = 0;
    const size_t n = size_t(d.Q - 1) * chunks;
    for (size_t k = 0; k < n; ++k) {
        const double* q = parts + (f * n + k) * 3;
        cx += q[0];
        cy += q[1];
        p += q[2];
    }
    const float gain =
        frequency_noise_gain(lmmse_frequency, spread_over_n[f], d.nt, window);
    const float per_pilot = float(d.U) * d.nr * d.nt;
    jakes_model model = jakes_model_of_frame(cx,
                                             cy,
                                             p,
                                             d.lay.doppler_pairs(),
                                             per_pilot,
                                             n0[f] / float(d.nt),
                                             relative_noise[f],
                                             gain,
                                             d.lay.doppler_lag());
    // Linked to the frame before where it follows closely, the channel is slow
    // and the link's sums are finite (as ofdm_receiver.cc's link_frame).
    const float gap = links.gap ? links.gap[f] : -1.0f;
    bool linked = gap >= 0.0f && slow_enough_to_link(model, gap);
    float C = 0, P = 0;
    for (int q = 0; linked && q < d.Q; ++q) {
        const float* sums = links.sums + (f * d.Q + size_t(q)) * 4;
        linked = isfinite(sums[0]);
        C += sums[2];
        P += sums[3];
    }
    linked = linked && isfinite(C) && isfinite(P) &&
             link_model(model, C, P, d.Q, per_pilot, gap);
    // A whitened frame: each receive antenna's channel filtered by its own noise.
    const float* own =
        antenna_relative_noise ? antenna_relative_noise + f * d.nr : nullptr;
    if (own && own[0] >= 0)
        model.noise = own[r] * gain;
    data_symbol_time_weights(
        d.lay, j, s, model, weights + e * 2 * k_time_taps, linked ? gap : -1.0f);
    if (j == 0 && s == 0 && r == 0) {
        doppler[f] = doppler_hz(model.doppler, symbols_per_second);
        if (links.linked) {
            links.linked[f] = linked;
            links.theta[f] = model.theta;
        }
    }
}

/// A thread per (frame, problem, antenna): y, and H by combine_in_time (hold:
/// a channel a slot, written for its first data symbol; with one pilot symbol
/// a slot that is its estimates, copied: one tap of weight 1 is exact);
/// both scaled by the antenna's whitening scale (scale: frames * nr, or null).
/// A linked frame's older pilot symbols (taps before its first) are turned
/// onto its phase (frame_link_angle).
__global__ void emit_kernel(const float2* Y,
                            const float2* H_pilot,
                            dims d,
                            size_t frames,
                            time_filter_kind kind,
                            const float* time_weights,
                            const float* scale,
                            const int* offsets,
                            frame_links links,
                            const uint64_t* outputs)
{
    // Where y and H go: read from device memory (the call's upload), so that a
    // recorded graph of this launch serves every call (replayed_launches).
    float2* y = reinterpret_cast<float2*>(outputs[0]);
    float2* H = reinterpret_cast<float2*>(outputs[1]);
    const size_t e = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    const size_t problems = size_t(d.slots) * d.U * d.D;
    if (e >= frames * problems * d.nr)
        return;
    const size_t f = e / (problems * d.nr), p = e / d.nr % problems;
    const int r = int(e % d.nr);
    const int s = int(p % d.D), c = int(p / d.D % d.U), j = int(p / (size_t(d.D) * d.U));
    const float sc = scale ? scale[f * d.nr + r] : 1.0f;
    const float2 x = Y[((f * d.K + d.lay.data_symbol(j, s)) * d.U + c) * d.nr + r];
    y[e] = make_float2(x.x * sc, x.y * sc);
    const bool hold = kind == time_filter_kind::hold;
    if (hold && s > 0)
        return;
    const size_t hn = size_t(d.nr) * d.nt, per_pilot = size_t(d.U) * hn;
    const bool linked = links.linked && links.linked[f];
    const time_combination w = combine_in_time(
        d.lay,
        kind,
        j,
        s,
        time_weights
            ? time_weights + (((f * d.slots + j) * d.D + s) * d.nr + r) * 2 * k_time_taps
            : nullptr,
        linked);
    // Each tap's pilot symbol at this subcarrier and its weight (an older
    // pilot symbol's turned onto this frame).
    const float2* from[k_time_taps];
    float2 tap[k_time_taps];
    for (int a = 0; a < w.taps; ++a) {
        const int i = w.first + a;
        float2 wa = make_float2(w.w[2 * a], w.w[2 * a + 1]);
        if (i < 0) {
            const int q = d.Q + i;
            const float* sums = links.sums + (f * d.Q + size_t(q)) * 4;
            frame_link_turn turn;
            turn.phase = sums[0];
            turn.slope = sums[1];
            float sn, cs;
            sincosf(frame_link_angle(turn,
                                     offsets[c],
                                     links.theta[f],
                                     linked_pilot_time(d.lay, i, links.gap[f]) -
                                         float(d.lay.pilot_time(0))),
                    &sn,
                    &cs);
            wa = cmul(wa, make_float2(cs, sn));
            from[a] = older_pilot(H_pilot, links, d, f, q) + size_t(c) * hn;
        } else {
            from[a] = H_pilot + (f * d.Q + size_t(i)) * per_pilot + size_t(c) * hn;
        }
        tap[a] = wa;
    }
    const size_t out =
        hold ? (f * d.slots * d.U + size_t(j) * d.U + c) * hn : (f * problems + p) * hn;
    for (int t = 0; t < d.nt; ++t) {
        const size_t o = size_t(r) * d.nt + t;
        float2 v = make_float2(0, 0);
        for (int a = 0; a < w.taps; ++a) {
            const float2 x = cmul(from[a][o], tap[a]);
            v.x += x.x;
            v.y += x.y;
        }
        H[out + o] = make_float2(v.x * sc, v.y * sc);
    }
}

} // namespace

struct cuda_front_end::impl {
    dims d;
    time_filter_kind kind; ///< how H is formed from the pilot symbols' estimates
    /// each antenna's noise measured (and the frames whitened where they differ)
    bool antenna_noise = false;
    /// a channel per data symbol (linear or LMMSE in time): S = 1
    bool per_symbol() const { return kind != time_filter_kind::hold; }
    ofdm_receiver_config config;
    sync_rule rule;
    size_t noise_terms = 0;
    delay_profile_geometry profile{}; ///< the delay support's search
    float symbols_per_second = 0;     ///< the LMMSE time filter's Doppler scale
    std::map<size_t, cufftHandle> profile_plans; ///< the delay profiles', per count
    cuda_stream stream;
    /// A batched FFT plan per number of windows seen (a stream's calls take 1, 2,
    /// ... frames: planning allocates and synchronises, so each is made once).
    std::map<size_t, cufftHandle> plans;
    /// The demodulation's launches, a graph per shape (replayed_launches).
    replayed_launches demodulation;
    device_array<int> bins, offsets;
    device_array<float2> pilots, X, Y, ls, flat, turn, H_pilot, y, H;
    device_array<float2> profiles;
    device_array<double> pair_parts; ///< the Doppler's pair sums (double: doppler_omega)
    device_array<float> sums, slopes, n0, relative_noise, spread_over_n, spread,
        centre_turn, time_weights, doppler, pair_power, antenna_n0, antenna_scale,
        antenna_relative_noise;
    /// The delay search's per-antenna bin powers and (large FFTs) weighted profiles.
    device_array<float> antenna_bin_power, profile_scratch;
    device_array<size_t> start;
    device_array<float> cfo;
    device_array<float2> rx;
    pinned_buffer<size_t> h_start;
    pinned_buffer<float> h_cfo;
    cuda_event starts_copied; // recorded after the copies from h_start, h_cfo, h_gap
    // estimation across frames: where the last frame lay, its pilot symbols,
    // each batch's gaps, link sums and decisions
    std::unique_ptr<frame_history> history;
    bool last_call_linked = false; ///< whether the last call's `linked` was written
    device_array<float2> last_pilots;
    device_array<float> gap, link_sums, link_theta, link_step_parts, link_sum_parts;
    device_array<int> linked;
    pinned_buffer<float> h_gap;
    // the search
    device_array<float2> preamble, sync_P, q;
    device_array<float> sync_M, matched;
    device_array<int> tile_counts;
    device_array<size_t> run_starts, run_lasts;
    device_array<unsigned long long> run_totals;
    device_array<run_slot> slots;
    pinned_buffer<run_slot> h_slots;

    impl(const ofdm_grid& grid, const ofdm_receiver_config& c, int backoff)
        : config(c),
          rule(grid, c, backoff),
          history(std::make_unique<frame_history>(
              grid, c.across_frames && c.interpolation == time_interpolation::lmmse))
    {
    }
};

cuda_front_end::cuda_front_end(const ofdm_grid& grid,
                               const ofdm_receiver_config& config,
                               int backoff,
                               const std::vector<cfloat>& preamble)
    : m(std::make_unique<impl>(grid, config, backoff))
{
    const int nr = config.nr;
    const time_interpolation interpolation = config.interpolation;
    m->d = { grid.fft_size,
             grid.symbol_samples(),
             grid.used_subcarriers,
             nr,
             grid.nt,
             grid.data_symbols,
             grid.slots,
             grid.frame_symbols(),
             grid.pilot_symbols(),
             layout_of(grid) };
    m->kind = interpolation == time_interpolation::lmmse    ? time_filter_kind::lmmse
              : interpolation == time_interpolation::linear ? time_filter_kind::linear
                                                            : time_filter_kind::hold;
    m->antenna_noise = config.measures_antenna_noise();
    m->symbols_per_second = float(grid.sample_rate / grid.symbol_samples());
    const int U = grid.used_subcarriers, nt = grid.nt;
    std::vector<int> bins(static_cast<size_t>(U)), offsets(static_cast<size_t>(U));
    for (int i = 0; i < U; ++i) {
        bins[size_t(i)] = grid.bin(i);
        offsets[size_t(i)] = grid.offset(i);
    }
    std::vector<cfloat> pilots(size_t(m->d.Q) * U);
    const float boost = std::sqrt(float(nt));
    for (int q = 0; q < m->d.Q; ++q)
        for (int i = 0; i < U; ++i)
            pilots[size_t(q) * U + i] = grid.pilot(q, i) * boost;
    MIMO_CUDA_CHECK(cudaMemcpy(m->bins.reserve(bins.size()),
                               bins.data(),
                               bins.size() * sizeof(int),
                               cudaMemcpyHostToDevice));
    MIMO_CUDA_CHECK(cudaMemcpy(m->offsets.reserve(offsets.size()),
                               offsets.data(),
                               offsets.size() * sizeof(int),
                               cudaMemcpyHostToDevice));
    MIMO_CUDA_CHECK(cudaMemcpy(m->pilots.reserve(pilots.size()),
                               pilots.data(),
                               pilots.size() * sizeof(cfloat),
                               cudaMemcpyHostToDevice));
    // Page-locked allocations synchronise: made before the stream runs (the
    // frame starts' array also holds where y and H go).
    m->h_start.reserve(64 + 2);
    m->h_cfo.reserve(64);
    m->h_gap.reserve(64);
    MIMO_CUDA_CHECK(cudaMemcpy(m->preamble.reserve(preamble.size()),
                               preamble.data(),
                               preamble.size() * sizeof(cfloat),
                               cudaMemcpyHostToDevice));
    for (int t = 0; t < nt;
         ++t) { // the statistics' terms per slot, as the CPU counts them
        for (int i = t; i + 2 * nt < U; i += nt)
            if (grid.offset(i + nt) - grid.offset(i) ==
                grid.offset(i + 2 * nt) - grid.offset(i + nt))
                m->noise_terms += size_t(nr);
    }
    m->profile =
        make_delay_profile_geometry(grid.fft_size, grid.cp_length, U, nt, nr, m->d.Q);
}

cuda_front_end::~cuda_front_end()
{
    for (const auto& p : m->plans)
        cufftDestroy(p.second);
    for (const auto& p : m->profile_plans)
        cufftDestroy(p.second);
}

size_t cuda_front_end::H_per_frame() const
{
    const dims& d = m->d;
    return size_t(d.slots) * d.U * (m->per_symbol() ? d.D : 1) * d.nr * d.nt;
}
size_t cuda_front_end::y_per_frame() const
{
    const dims& d = m->d;
    return size_t(d.slots) * d.U * d.D * d.nr;
}
const cfloat* cuda_front_end::device_H() const
{
    return reinterpret_cast<const cfloat*>(m->H.data());
}
const cfloat* cuda_front_end::device_y() const
{
    return reinterpret_cast<const cfloat*>(m->y.data());
}
const float* cuda_front_end::device_n0() const { return m->n0.data(); }
const float* cuda_front_end::device_spread() const { return m->spread.data(); }
const float* cuda_front_end::device_antenna_n0() const
{
    return m->antenna_noise ? m->antenna_n0.data() : nullptr;
}
const int* cuda_front_end::linked_frames() const
{
    return m->last_call_linked ? m->linked.data() : nullptr;
}
const float* cuda_front_end::device_doppler() const
{
    return m->config.interpolation == time_interpolation::lmmse ? m->doppler.data()
                                                                : nullptr;
}

void cuda_front_end::run_device(const cfloat* d_rx,
                                size_t samples,
                                const size_t* frame_start,
                                const float* cfo,
                                size_t frames,
                                cudaStream_t st,
                                const uint64_t* positions)
{
    const dims& d = m->d;
    const size_t reach = size_t(d.K - 1) * d.SS + size_t(d.N);
    for (size_t f = 0; f < frames; ++f)
        if (frame_start[f] + reach > samples)
            throw std::invalid_argument("mimo_gpu: ofdm_receiver: frame " +
                                        std::to_string(f) +
                                        " does not lie whole in the buffer");
    run_view(sample_view::interleaved(d_rx, d.nr),
             frame_start,
             cfo,
             frames,
             nullptr,
             nullptr,
             st,
             positions);
}

void cuda_front_end::run_view(const sample_view& v,
                              const size_t* frame_start,
                              const float* cfo,
                              size_t frames,
                              cfloat* H_out,
                              cfloat* y_out,
                              cudaStream_t st,
                              const uint64_t* positions,
                              const std::function<void()>& also_enqueue)
{
    const dims& d = m->d;
    if (frames == 0)
        return;
    // The previous call's copies from these pinned arrays may still be queued:
    // wait for them alone (not for the whole stream), and only then may the
    // arrays grow (growing frees the old ones).
    MIMO_CUDA_CHECK(cudaEventSynchronize(m->starts_copied.get()));
    // The frame starts, then where y and H go (emit_kernel reads them from the
    // device: a recorded graph serves calls whose outputs lie elsewhere).
    size_t* hs = m->h_start.reserve(frames + 2);
    float* hc = m->h_cfo.reserve(frames);
    std::copy(frame_start, frame_start + frames, hs);
    std::copy(cfo, cfo + frames, hc);
    hs[frames] = size_t(y_out ? static_cast<void*>(y_out)
                              : static_cast<void*>(m->y.reserve(frames * y_per_frame())));
    hs[frames + 1] =
        size_t(H_out ? static_cast<void*>(H_out)
                     : static_cast<void*>(m->H.reserve(frames * H_per_frame())));
    // Estimation across frames (LMMSE in time): each frame's gap from the one before.
    frame_links links;
    const std::vector<float> gaps = m->history->gaps(positions, frames);
    const bool linking =
        m->config.interpolation == time_interpolation::lmmse &&
        std::any_of(gaps.begin(), gaps.end(), [](float g) { return g >= 0.0f; });
    if (linking) {
        float* hg = m->h_gap.reserve(frames);
        std::copy(gaps.begin(), gaps.end(), hg);
        MIMO_CUDA_CHECK(cudaMemcpyAsync(m->gap.reserve(frames),
                                        hg,
                                        frames * sizeof(float),
                                        cudaMemcpyHostToDevice,
                                        st));
        links.gap = m->gap.data();
        links.last_pilots = m->last_pilots.data();
    }
    m->last_call_linked = linking;
    const size_t* d_start = m->start.reserve(frames + 2);
    MIMO_CUDA_CHECK(cudaMemcpyAsync(
        m->start.data(), hs, (frames + 2) * sizeof(size_t), cudaMemcpyHostToDevice, st));
    MIMO_CUDA_CHECK(cudaMemcpyAsync(
        m->cfo.reserve(frames), hc, frames * sizeof(float), cudaMemcpyHostToDevice, st));
    MIMO_CUDA_CHECK(cudaEventRecord(m->starts_copied.get(), st));
    // The last frame's pilot symbols go to the next call's first (copied at the end).
    m->history->received(positions, frames);
    const bool keep_last = m->history->has_last();
    // Everything from here on is launches on st whose arguments repeat from call
    // to call of a shape: recorded once, then replayed as one graph
    // (replayed_launches; at LTE 20 MHz ~15 launches and copies a call).
    // Buffers reserved in it grow only on a shape's first call (the epoch then
    // changes, and with it every key).
    const std::vector<uint64_t> shape{ uint64_t(frames),
                                       uint64_t(linking),
                                       uint64_t(keep_last),
                                       key_of(v.base),
                                       v.mask,
                                       uint64_t(v.sample_stride),
                                       uint64_t(v.antenna_stride),
                                       allocation_epoch().load() };
    m->demodulation.run(st, shape, [&] {
        const size_t windows = frames * size_t(d.K) * d.nr;
        float2* X = m->X.reserve(windows * d.N);
        const cufftHandle plan = batched_plan(m->plans, d.N, windows, st);
        gather_rotate_kernel<<<blocks_for(windows * d.N), k_threads, 0, st>>>(
            v, m->start.data(), m->cfo.data(), d, frames, X);
        MIMO_CUDA_CHECK(cudaGetLastError());
        fft_in_place(plan, X, CUFFT_FORWARD);
        const size_t grid_elements = frames * size_t(d.K) * d.U * d.nr;
        float2* Y = m->Y.reserve(grid_elements);
        pick_bins_kernel<<<blocks_for(grid_elements), k_threads, 0, st>>>(
            X, m->bins.data(), d, frames, float(1.0 / std::sqrt(double(d.N))), Y);
        MIMO_CUDA_CHECK(cudaGetLastError());
        const size_t fj = frames * d.Q;
        float2* ls = m->ls.reserve(fj * d.U * d.nr);
        float2* Hs = m->H_pilot.reserve(fj * d.U * d.nr * d.nt);
        float* slopes = m->slopes.reserve(fj);
        const dim3 pilot_grid(unsigned(fj), unsigned(pilot_chunks(d)));
        float2* turn = m->turn.reserve(fj * pilot_grid.y);
        pilot_ls_kernel<<<pilot_grid, k_pilot_threads, 0, st>>>(
            Y, m->pilots.data(), m->offsets.data(), d, ls, turn);
        MIMO_CUDA_CHECK(cudaGetLastError());
        // The estimates with the slope out go to flat; ls keeps them as measured.
        float2* flat = m->flat.reserve(fj * d.U * d.nr);
        pilot_sums_kernel<<<pilot_grid, k_pilot_threads, 0, st>>>(
            ls,
            turn,
            m->offsets.data(),
            d,
            flat,
            slopes,
            m->sums.reserve(fj * pilot_grid.y * 2));
        MIMO_CUDA_CHECK(cudaGetLastError());
        const double fixed = m->config.lmmse_delay_spread;
        const bool lmmse = m->config.frequency == frequency_interpolation::lmmse;
        frame_stats_kernel<<<blocks_for(frames), k_threads, 0, st>>>(
            m->sums.data(),
            d,
            frames,
            float(m->noise_terms * d.Q),
            fixed < 0 || !lmmse ? 0.0f : float(fixed / d.N),
            m->n0.reserve(frames),
            m->pair_power.reserve(frames),
            m->relative_noise.reserve(frames),
            m->spread_over_n.reserve(frames),
            m->spread.reserve(frames),
            m->centre_turn.reserve(frames));
        MIMO_CUDA_CHECK(cudaGetLastError());
        if (lmmse && fixed < 0)
            estimate_delay_support(flat, frames, st);
        // Each antenna's LMMSE relative noise, where its frame is whitened.
        const float* own_noise = lmmse && fixed < 0 && m->antenna_noise
                                     ? m->antenna_relative_noise.data()
                                     : nullptr;
        interpolate_kernel<<<blocks_for(fj * d.U * d.nt), k_threads, 0, st>>>(
            flat,
            slopes,
            m->offsets.data(),
            d,
            frames,
            lmmse,
            m->config.lmmse_window,
            m->relative_noise.data(),
            own_noise,
            m->spread_over_n.data(),
            m->centre_turn.data(),
            Hs);
        MIMO_CUDA_CHECK(cudaGetLastError());
        const size_t ye = frames * y_per_frame();
        const float* time_weights = nullptr;
        if (m->config.interpolation == time_interpolation::lmmse) {
            const int chunks =
                int((size_t(d.U) * d.nr * d.nt + k_pair_chunk - 1) / k_pair_chunk);
            double* parts = m->pair_parts.reserve(frames * size_t(d.Q) * chunks * 3);
            if (d.Q > 1) {
                pilot_pair_sums_kernel<<<dim3(unsigned(frames * (d.Q - 1)),
                                              unsigned(chunks)),
                                         k_threads,
                                         0,
                                         st>>>(Hs, d, parts);
                MIMO_CUDA_CHECK(cudaGetLastError());
            }
            if (linking) {
                links.sums = m->link_sums.reserve(frames * size_t(d.Q) * 4);
                links.linked = m->linked.reserve(frames);
                links.theta = m->link_theta.reserve(frames);
                const int link_chunks = (d.U + k_link_chunk - 1) / k_link_chunk;
                const dim3 link_grid(unsigned(frames * d.Q), unsigned(link_chunks));
                float* step_parts =
                    m->link_step_parts.reserve(frames * d.Q * link_chunks * 2);
                float* sum_parts =
                    m->link_sum_parts.reserve(frames * d.Q * link_chunks * 5);
                frame_link_step_kernel<<<link_grid, k_threads, 0, st>>>(
                    Hs, m->offsets.data(), d, links, step_parts);
                MIMO_CUDA_CHECK(cudaGetLastError());
                frame_link_sums_kernel<<<link_grid, k_threads, 0, st>>>(
                    Hs, m->offsets.data(), d, links, step_parts, sum_parts);
                MIMO_CUDA_CHECK(cudaGetLastError());
                frame_link_finish_kernel<<<blocks_for(frames * d.Q), k_threads, 0, st>>>(
                    d, frames, link_chunks, links, step_parts, sum_parts);
                MIMO_CUDA_CHECK(cudaGetLastError());
            }
            const size_t symbols = frames * size_t(d.slots) * d.D * d.nr;
            time_weights_kernel<<<blocks_for(symbols), k_threads, 0, st>>>(
                parts,
                chunks,
                d,
                frames,
                lmmse,
                m->config.lmmse_window,
                m->n0.data(),
                m->relative_noise.data(),
                own_noise,
                m->spread_over_n.data(),
                m->symbols_per_second,
                links,
                m->time_weights.reserve(symbols * 2 * k_time_taps),
                m->doppler.reserve(frames));
            MIMO_CUDA_CHECK(cudaGetLastError());
            time_weights = m->time_weights.data();
        }
        emit_kernel<<<blocks_for(ye), k_threads, 0, st>>>(
            Y,
            Hs,
            d,
            frames,
            m->kind,
            time_weights,
            m->antenna_noise ? m->antenna_scale.data() : nullptr,
            m->offsets.data(),
            links,
            d_start + frames);
        MIMO_CUDA_CHECK(cudaGetLastError());
        if (keep_last) {
            const size_t per_frame = size_t(d.Q) * d.U * d.nr * d.nt;
            MIMO_CUDA_CHECK(cudaMemcpyAsync(m->last_pilots.reserve(per_frame),
                                            Hs + (frames - 1) * per_frame,
                                            per_frame * sizeof(float2),
                                            cudaMemcpyDeviceToDevice,
                                            st));
        }
        if (also_enqueue)
            also_enqueue();
    });
}

void cuda_front_end::estimate_delay_support(const float2* flat,
                                            size_t frames,
                                            cudaStream_t st)
{
    const dims& d = m->d;
    const int A = m->profile.points;
    const size_t count = frames * size_t(m->profile.profiles);
    float* antenna_n0 = m->antenna_noise ? m->antenna_n0.reserve(frames * d.nr) : nullptr;
    float* antenna_scale =
        m->antenna_noise ? m->antenna_scale.reserve(frames * d.nr) : nullptr;
    float* antenna_relative_noise =
        m->antenna_noise ? m->antenna_relative_noise.reserve(frames * d.nr) : nullptr;
    float2* P = m->profiles.reserve(count * A);
    const cufftHandle plan = batched_plan(m->profile_plans, A, count, st);
    delay_profile_gather_kernel<<<blocks_for(count * A), k_threads, 0, st>>>(
        flat, d, frames, A, P);
    MIMO_CUDA_CHECK(cudaGetLastError());
    fft_in_place(plan, P, CUFFT_INVERSE);
    // Each antenna's power per bin, then the search (a block per frame).
    const size_t bins = frames * size_t(d.nr) * size_t(A);
    float* antenna_power = m->antenna_bin_power.reserve(bins);
    antenna_bin_power_kernel<<<blocks_for(bins), k_threads, 0, st>>>(
        P, m->profile.profiles, d.nr, A, frames, antenna_power);
    MIMO_CUDA_CHECK(cudaGetLastError());
    const bool in_shared = A <= k_shared_profile_points;
    float* scratch = in_shared ? nullptr : m->profile_scratch.reserve(frames * size_t(A));
    delay_support_kernel<<<unsigned(frames),
                           k_threads,
                           in_shared ? size_t(A) * sizeof(float) : 0,
                           st>>>(antenna_power,
                                 d,
                                 m->profile,
                                 m->pair_power.data(),
                                 m->n0.data(),
                                 m->relative_noise.data(),
                                 m->spread_over_n.data(),
                                 m->spread.data(),
                                 m->centre_turn.data(),
                                 antenna_n0,
                                 antenna_scale,
                                 antenna_relative_noise,
                                 scratch);
    MIMO_CUDA_CHECK(cudaGetLastError());
}

namespace {
constexpr int k_most_decided = 64; // runs a search decides at once, at most
} // namespace

void cuda_front_end::reserve_search(size_t positions)
{
    const size_t with_lead = positions + k_tile,
                 tiles = (positions + k_tile - 1) / k_tile;
    m->sync_M.reserve(with_lead);
    m->sync_P.reserve(with_lead);
    m->tile_counts.reserve(2 * tiles);
    m->run_starts.reserve(positions / 2 + 1);
    m->run_lasts.reserve(positions / 2 + 1);
    m->run_totals.reserve(2);
    m->slots.reserve(k_most_decided + 1);
    m->h_slots.reserve(k_most_decided + 1);
    m->q.reserve(size_t(k_most_decided) * m->rule.N);
    m->matched.reserve(size_t(k_most_decided) * m->rule.max_span());
}

walk_result cuda_front_end::find_frames(const sample_view& v,
                                        size_t samples_end,
                                        size_t search_begin,
                                        size_t from,
                                        size_t max_frames,
                                        bool ended,
                                        cudaStream_t st)
{
    const sync_rule& rule = m->rule;
    std::vector<run_decision> runs;
    if (samples_end < size_t(rule.N) || search_begin > samples_end - size_t(rule.N) ||
        max_frames == 0)
        return walk_runs(
            runs,
            [](size_t) { return false; },
            rule,
            samples_end,
            search_begin,
            search_begin,
            from,
            max_frames);
    const size_t last = samples_end - size_t(rule.N), count = last + 1 - search_begin;
    // The metric from the tile the search begins in (its sums restart at stream
    // positions that are multiples of the tile), the runs from search_begin.
    // Tiles of 256 positions where tiles of 1024 would not give the GPU four
    // blocks an SM (LTE 20 MHz: ~45 tiles a call, 25 us a frame in session 6;
    // each tile sums its L lags afresh, which costs little against latency).
    const int per_thread = count >= size_t(4) * k_sm_count_guess * k_tile ? 4 : 1;
    const size_t tile = size_t(per_thread) * k_threads;
    const size_t lead = search_begin % tile;
    float* M = m->sync_M.reserve(lead + count) + lead;
    float2* P = m->sync_P.reserve(lead + count) + lead;
    const unsigned metric_blocks = unsigned((lead + count + tile - 1) / tile);
    const size_t tiles =
        (count + k_tile - 1) / k_tile; // of the run search, from search_begin
    int* counts = m->tile_counts.reserve(2 * tiles);
    unsigned long long* totals = m->run_totals.reserve(2);
    // Runs start and end alternately: at most one start per two positions, plus one.
    const size_t most_runs = count / 2 + 1;
    size_t* starts = m->run_starts.reserve(most_runs);
    size_t* lasts = m->run_lasts.reserve(most_runs);
    // The runs the walk can reach, decided a batch at a time (a frame per run,
    // and a few runs it may skip), and one more: where the next run starts.
    const int decided = int(std::min<size_t>(max_frames + 4, k_most_decided)),
              slots = decided + 1;
    run_slot* d_slots = m->slots.reserve(size_t(slots));
    float2* q = m->q.reserve(size_t(decided) * rule.N);
    const int span = rule.max_span();
    float* c = m->matched.reserve(size_t(decided) * span);
    run_slot* h = m->h_slots.reserve(size_t(slots));
    auto decide = [&](size_t k) {
        return runs[k].decided &&
               (ended || rule.samples_to_decide(runs[k].start) <= samples_end);
    };
    const auto metric = per_thread == 4 ? metric_kernel<4> : metric_kernel<1>;
    metric<<<metric_blocks, k_threads, 0, st>>>(
        v, search_begin - lead, lead + count, rule.N / 2, rule.nr, M - lead, P - lead);
    MIMO_CUDA_CHECK(cudaGetLastError());
    run_count_kernel<<<unsigned(tiles), k_threads, 0, st>>>(
        M, count, rule.threshold, counts);
    MIMO_CUDA_CHECK(cudaGetLastError());
    run_scan_kernel<<<1, k_threads, 0, st>>>(counts, tiles, totals);
    MIMO_CUDA_CHECK(cudaGetLastError());
    run_write_kernel<<<unsigned(tiles), k_threads, 0, st>>>(
        M, search_begin, count, rule.threshold, counts, starts, lasts);
    MIMO_CUDA_CHECK(cudaGetLastError());
    for (size_t skip = 0;; skip += size_t(decided)) {
        // A batch of decisions: each run's plateau, the preamble matched around
        // it, the first path; the slots to the host.
        plateau_kernel<<<unsigned(slots), k_threads, 0, st>>>(M,
                                                              P,
                                                              search_begin,
                                                              count,
                                                              starts,
                                                              lasts,
                                                              totals,
                                                              from,
                                                              skip,
                                                              slots,
                                                              rule.N,
                                                              rule.CP,
                                                              d_slots);
        MIMO_CUDA_CHECK(cudaGetLastError());
        rotate_preamble_kernel<<<dim3(unsigned((rule.N + k_threads - 1) / k_threads),
                                      unsigned(decided)),
                                 k_threads,
                                 0,
                                 st>>>(m->preamble.data(), d_slots, rule.N, q);
        MIMO_CUDA_CHECK(cudaGetLastError());
        matched_kernel<<<dim3(unsigned((span + k_matched_positions - 1) /
                                       k_matched_positions),
                              unsigned(decided)),
                         k_matched_threads,
                         0,
                         st>>>(v, d_slots, q, rule.N, rule.nr, span, c);
        MIMO_CUDA_CHECK(cudaGetLastError());
        first_path_kernel<<<unsigned(decided), k_threads, 0, st>>>(
            d_slots, c, span, rule.backoff);
        MIMO_CUDA_CHECK(cudaGetLastError());
        MIMO_CUDA_CHECK(cudaMemcpyAsync(
            h, d_slots, size_t(slots) * sizeof(run_slot), cudaMemcpyDeviceToHost, st));
        MIMO_CUDA_CHECK(cudaStreamSynchronize(st));
        if (!runs.empty() && runs.back().beyond)
            runs.pop_back(); // the earlier batch's mark: this batch starts there
        for (int k = 0; k < slots && h[k].valid; ++k) {
            run_decision r;
            r.start = size_t(h[k].start);
            r.last = size_t(h[k].last);
            r.decided = k < decided;
            r.beyond = k == decided; // the last slot only says that more runs follow
            r.sync.found = true;
            r.sync.frame_start = size_t(h[k].frame_start);
            r.sync.cfo = h[k].cfo;
            r.sync.metric = h[k].metric;
            runs.push_back(r);
        }
        walk_result w = walk_runs(
            runs, decide, rule, samples_end, search_begin, last + 1, from, max_frames);
        // Stopped at the mark with nothing taken (every run of the batch inside
        // the frame before): the next batch, not a search again from the same
        // position (which would list the same runs for ever). Stopped there
        // after frames: the next search goes on from the last one.
        const bool at_mark_with_nothing = w.more && w.frames.empty() && !w.cut.found &&
                                          !runs.empty() && runs.back().beyond;
        if (!at_mark_with_nothing)
            return w;
    }
}

void cuda_front_end::run(const cfloat* rx,
                         size_t samples,
                         const sync_result* syncs,
                         size_t frames,
                         front_end_frame* out,
                         const uint64_t* positions)
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
    MIMO_CUDA_CHECK(cudaMemcpyAsync(
        drx, rx, samples * d.nr * sizeof(cfloat), cudaMemcpyHostToDevice, st));
    run_device(reinterpret_cast<const cfloat*>(drx),
               samples,
               start.data(),
               cfo.data(),
               frames,
               st,
               positions);
    const size_t hn = H_per_frame(), yn = y_per_frame(),
                 sn = size_t(d.Q) * d.U * d.nr * d.nt, ln = size_t(d.Q) * d.U * d.nr;
    std::vector<float> n0(frames), spread(frames), doppler(frames, 0.0f),
        antenna_n0(m->antenna_noise ? frames * d.nr : 0);
    std::vector<int> linked(frames, 0);
    if (linked_frames())
        MIMO_CUDA_CHECK(cudaMemcpyAsync(linked.data(),
                                        linked_frames(),
                                        frames * sizeof(int),
                                        cudaMemcpyDeviceToHost,
                                        st));
    for (size_t f = 0; f < frames; ++f) {
        front_end_frame& o = out[f];
        o.sync = syncs[f];
        o.symbols_per_channel = m->per_symbol() ? 1 : d.D;
        o.channels = size_t(d.slots) * d.U * (m->per_symbol() ? d.D : 1);
        o.H.resize(hn);
        o.y.resize(yn);
        o.pilot_channels.resize(sn);
        o.pilot_ls.resize(ln);
        MIMO_CUDA_CHECK(cudaMemcpyAsync(o.H.data(),
                                        device_H() + f * hn,
                                        hn * sizeof(cfloat),
                                        cudaMemcpyDeviceToHost,
                                        st));
        MIMO_CUDA_CHECK(cudaMemcpyAsync(o.y.data(),
                                        device_y() + f * yn,
                                        yn * sizeof(cfloat),
                                        cudaMemcpyDeviceToHost,
                                        st));
        MIMO_CUDA_CHECK(cudaMemcpyAsync(o.pilot_channels.data(),
                                        m->H_pilot.data() + f * sn,
                                        sn * sizeof(cfloat),
                                        cudaMemcpyDeviceToHost,
                                        st));
        MIMO_CUDA_CHECK(cudaMemcpyAsync(o.pilot_ls.data(),
                                        m->ls.data() + f * ln,
                                        ln * sizeof(cfloat),
                                        cudaMemcpyDeviceToHost,
                                        st));
    }
    MIMO_CUDA_CHECK(cudaMemcpyAsync(
        n0.data(), m->n0.data(), frames * sizeof(float), cudaMemcpyDeviceToHost, st));
    MIMO_CUDA_CHECK(cudaMemcpyAsync(spread.data(),
                                    m->spread.data(),
                                    frames * sizeof(float),
                                    cudaMemcpyDeviceToHost,
                                    st));
    if (m->config.interpolation == time_interpolation::lmmse)
        MIMO_CUDA_CHECK(cudaMemcpyAsync(doppler.data(),
                                        m->doppler.data(),
                                        frames * sizeof(float),
                                        cudaMemcpyDeviceToHost,
                                        st));
    if (m->antenna_noise)
        MIMO_CUDA_CHECK(cudaMemcpyAsync(antenna_n0.data(),
                                        m->antenna_n0.data(),
                                        antenna_n0.size() * sizeof(float),
                                        cudaMemcpyDeviceToHost,
                                        st));
    MIMO_CUDA_CHECK(cudaStreamSynchronize(st));
    for (size_t f = 0; f < frames; ++f) {
        out[f].n0 = n0[f];
        out[f].delay_spread = spread[f];
        out[f].doppler = doppler[f];
        out[f].linked = linked[f] != 0;
        // the kernel's rule again on the same numbers: its decision and scales
        out[f].whitened = report_antenna_noise(
            d.nr,
            n0[f],
            m->antenna_noise ? antenna_n0.data() + f * d.nr : nullptr,
            out[f].antenna_n0,
            out[f].antenna_scale);
    }
}

} // namespace detail
} // namespace mimo_gpu
