// CUDA engine of lte_turbo_decoder: all windows of all code blocks of the batch in
// one launch per half iteration (a thread per window running the CPU's
// decode_window, two warps per 32 windows whose recursions meet in the middle, or
// 8 lanes per window: choose_window_kernel); after each iteration one thread
// block per code block checks its CRC for early termination.
#include "../runtime/cuda_graph.h"
#include "../runtime/cuda_staging.h"
#include "turbo_engine.h"

#include <type_traits>
#include <algorithm>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace mimo_gpu {
namespace detail {

namespace {

constexpr int k_block_threads = 256;
/// check_input_kernel's threads: a code block (up to 18 444 LLRs) a thread
/// block, so that a transport block's ~100 code blocks keep the GPU busy
/// (256 threads took 19 us for an NR 100 MHz transport block on the H100).
constexpr int k_check_threads = 1024;

/// One thread block per code block: reports a non-finite input LLR (the CPU's
/// check_input) and sets no_information[b] when fewer than K of its input LLRs
/// reach the trellis (carries_information).
__global__ void check_input_kernel(const float* __restrict__ llr,
                                   const turbo_block_desc* blocks,
                                   problem_status* status,
                                   uint8_t* no_information)
{
    __shared__ int non_zero;
    if (threadIdx.x == 0)
        non_zero = 0;
    __syncthreads();
    const turbo_block_desc d = blocks[blockIdx.x];
    const float* x = llr + d.llr_offset;
    int count = 0;
    for (int i = threadIdx.x; i < 3 * (d.K + 4); i += blockDim.x) {
        if (!isfinite(x[i])) {
            atomicMin(status, make_status(blockIdx.x, problem_fault::non_finite));
            break;
        }
        count += carries_information(x[i]);
    }
    atomicAdd(&non_zero, count);
    __syncthreads();
    if (threadIdx.x == 0)
        no_information[blockIdx.x] = non_zero < d.K;
}

/// A thread per window, its per-stage values in the batch's device scratch.
template <bool LogMap, bool ParityApp>
__global__ void __launch_bounds__(64)
    window_per_thread_kernel(const __grid_constant__ turbo_batch_view v,
                             int decoder,
                             int iteration)
{
    const size_t w = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (w < v.n_windows)
        decode_window<LogMap, ParityApp>(v, w, decoder, iteration, v.scratch_of(w));
}

/// The coded bits' extrinsic LLRs (detail::coded_extrinsic), a block per code
/// block; 0 for a block without information.
__global__ void coded_extrinsic_kernel(const turbo_block_desc* __restrict__ blocks,
                                       const float* __restrict__ llr,
                                       const float* __restrict__ app,
                                       const float* __restrict__ parity_app,
                                       const uint8_t* __restrict__ no_information,
                                       float* __restrict__ out)
{
    const turbo_block_desc d = blocks[blockIdx.x];
    const int n = 3 * (d.K + 4);
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        out[d.llr_offset + size_t(i)] = no_information[blockIdx.x]
                                            ? 0.0f
                                            : coded_extrinsic(d, llr, app, parity_app, i);
}

// ---- state-parallel kernel (thesis 5.1.2-5.1.3) ------------------------------
// Eight lanes per window, lane s holding state s; the window's per-stage values
// live in shared memory. It performs, state by state, the same operations in
// the same order as map_window (so results stay bit-identical to the CPU): the
// predecessor and successor metrics come by shuffles, and the per-stage APP
// reduction over the 8 states runs sequentially, one stage per lane, over a
// ring of the last 8 stages (thesis Algorithm 6). The training prefixes' branch
// inputs (2 words a stage) follow the ring.

constexpr int k_windows_per_block = 8;
constexpr int k_state_parallel_threads = k_windows_per_block * k_states;
constexpr int k_ring_floats = k_states /*stages*/ * 2 /*u*/ * k_states;
/// Per stage in shared memory: the 8 forward metrics, gs, gp and the natural index.
constexpr int k_shared_stage_words = k_states + 3;

/// Shared memory of one window: its stages, the ring, its training stages.
MIMO_HD size_t state_parallel_window_floats(int max_window, int max_training)
{
    return size_t(max_window) * k_shared_stage_words + k_ring_floats +
           2 * size_t(max_training);
}
size_t state_parallel_shared_floats(int max_window, int max_training)
{
    return k_windows_per_block * state_parallel_window_floats(max_window, max_training);
}
// no opt-in needed: windows up to ~130 stages without training, ~120 with T = 16
constexpr size_t k_state_parallel_max_shared = 48 * 1024;

/// Lane s of a window's group in state_parallel_kernel: its state, the
/// group's shuffle mask, and the window's shared memory and extent.
struct state_lane {
    unsigned mask;
    int s;
    float* sc;    ///< the window's stages (k_shared_stage_words each)
    float* ring;  ///< the last 8 stages' branch metrics, for the APP reduction
    float* train; ///< the training stages' gs, gp
    int len, end, ahead, behind;
};

/// The window's branch inputs into shared memory, the lanes sharing the stages.
__device__ __forceinline__ void state_parallel_inputs(const window_job& job,
                                                      const state_lane& l)
{
    const half_iteration_io& io = job.io;
    const window_span& span = job.span;
    const int s = l.s, len = l.len, end = l.end, ahead = l.ahead, behind = l.behind;
    float* sc = l.sc;
    float* train = l.train;
    for (int i = s; i < len; i += k_states) { // branch inputs, lanes sharing the stages
        const int k = span.start + i;
        const int n = io.pi ? io.pi[k] : k;
        sc[i * k_shared_stage_words + k_states] =
            0.5f * (channel_llr(io.systematic[n]) + io.apriori[n]);
        sc[i * k_shared_stage_words + k_states + 1] = 0.5f * channel_llr(io.parity[k]);
        sc[i * k_shared_stage_words + k_states + 2] = int_bits_as_float(n);
    }
    for (int i = s; i < ahead + behind; i += k_states) { // training: gs, gp
        const int k = i < ahead ? span.first + i : end + (i - ahead);
        const int n = io.pi ? io.pi[k] : k;
        train[2 * i] = 0.5f * (channel_llr(io.systematic[n]) + io.apriori[n]);
        train[2 * i + 1] = 0.5f * channel_llr(io.parity[k]);
    }
}

/// The forward recursion (training, then the window's stages, their alphas kept).
template <bool LogMap>
__device__ __forceinline__ void state_parallel_forward(window_job& job,
                                                       const state_lane& l)
{
    const window_span& span = job.span;
    const unsigned mask = l.mask;
    const int s = l.s, len = l.len, end = l.end, ahead = l.ahead;
    float* sc = l.sc;
    const float* train = l.train;
    const int s0 = previous_state(s, 0), s1 = previous_state(s, 1);
    const float p0 = parity_bit(s0, 0) ? -1.0f : 1.0f,
                p1 = parity_bit(s1, 1) ? -1.0f : 1.0f;
    // forward_step, lane s computing state s
    auto forward = [&](float alpha, float gs, float gp) {
        const float a0 = __shfl_sync(mask, alpha, s0, k_states),
                    a1 = __shfl_sync(mask, alpha, s1, k_states);
        const float m0 = a0 + gs + (p0 < 0.0f ? -gp : gp);
        const float m1 = a1 - gs + (p1 < 0.0f ? -gp : gp);
        const float next = max_star<LogMap>(m0, m1);
        return next - __shfl_sync(mask, next, 0, k_states);
    };
    float alpha = job.alpha_start[s];
    for (int i = 0; i < ahead; ++i) { // training
        if (span.first + i == span.alpha_at)
            job.alpha_out[s] = alpha;
        alpha = forward(alpha, train[2 * i], train[2 * i + 1]);
    }
    for (int i = 0; i < len; ++i) {
        const float gs = sc[i * k_shared_stage_words + k_states],
                    gp = sc[i * k_shared_stage_words + k_states + 1];
        if (span.start + i == span.alpha_at)
            job.alpha_out[s] = alpha;
        sc[i * k_shared_stage_words + s] = alpha;
        alpha = forward(alpha, gs, gp);
    }
    if (end == span.alpha_at)
        job.alpha_out[s] = alpha;
}

/// The backward recursion (training, then the window's stages), each stage's
/// APP reduced over the 8 states from the ring, extrinsic LLRs out.
template <bool LogMap>
__device__ __forceinline__ void state_parallel_backward(window_job& job,
                                                        const state_lane& l)
{
    const half_iteration_io& io = job.io;
    const window_span& span = job.span;
    const unsigned mask = l.mask;
    const int s = l.s, len = l.len, end = l.end, ahead = l.ahead, behind = l.behind;
    const float* sc = l.sc;
    float* ring = l.ring;
    const float* train = l.train;
    const int t0 = next_state(s, 0), t1 = next_state(s, 1);
    const bool q0 = parity_bit(s, 0), q1 = parity_bit(s, 1);
    float beta = job.beta_end[s];
    for (int i = behind - 1; i >= 0; --i) { // training: backward_step
        if (end + i + 1 == span.beta_at)
            job.beta_out[s] = beta;
        const float gs = train[2 * (ahead + i)], gp = train[2 * (ahead + i) + 1];
        const float b0 = __shfl_sync(mask, beta, t0, k_states),
                    b1 = __shfl_sync(mask, beta, t1, k_states);
        const float prev =
            max_star<LogMap>(gs + (q0 ? -gp : gp) + b0, -gs + (q1 ? -gp : gp) + b1);
        beta = prev - __shfl_sync(mask, prev, 0, k_states);
    }
    for (int i = len - 1; i >= 0; --i) {
        if (span.start + i + 1 == span.beta_at)
            job.beta_out[s] = beta;
        const float gs = sc[i * k_shared_stage_words + k_states],
                    gp = sc[i * k_shared_stage_words + k_states + 1];
        const float a = sc[i * k_shared_stage_words + s];
        const float b0 = __shfl_sync(mask, beta, t0, k_states),
                    b1 = __shfl_sync(mask, beta, t1, k_states);
        const float to0 = gs + (q0 ? -gp : gp) + b0;
        const float to1 = -gs + (q1 ? -gp : gp) + b1;
        const float prev = max_star<LogMap>(to0, to1);
        ring[((i % k_states) * 2 + 0) * k_states + s] = a + to0;
        ring[((i % k_states) * 2 + 1) * k_states + s] = a + to1;
        // stages i .. i+7 are in the ring: lane s finishes stage i + s
        if (i % k_states == 0) {
            __syncwarp(mask);
            const int stage = i + s;
            if (stage < len) {
                const float* r0 = ring + (s * 2 + 0) * k_states;
                const float* r1 = ring + (s * 2 + 1) * k_states;
                float metric0 = r0[0], metric1 = r1[0];
                for (int t = 1; t < k_states; ++t) {
                    metric0 = max_star<LogMap>(metric0, r0[t]);
                    metric1 = max_star<LogMap>(metric1, r1[t]);
                }
                const float app = metric0 - metric1;
                const int n =
                    float_bits_as_int(sc[stage * k_shared_stage_words + k_states + 2]);
                io.extrinsic[n] =
                    extrinsic_llr(io.extrinsic_scale,
                                  app,
                                  2.0f * sc[stage * k_shared_stage_words + k_states]);
                if (io.app)
                    io.app[n] = app;
            }
            __syncwarp(mask);
        }
        beta = prev - __shfl_sync(mask, prev, 0, k_states);
    }
    if (span.start == span.beta_at)
        job.beta_out[s] = beta;
}

template <bool LogMap>
__global__ void __launch_bounds__(k_state_parallel_threads)
    state_parallel_kernel(const __grid_constant__ turbo_batch_view v,
                          int decoder,
                          int iteration,
                          int max_window,
                          int max_training)
{
    extern __shared__ float smem[];
    const int group = threadIdx.x / k_states, s = threadIdx.x % k_states;
    const size_t w = size_t(blockIdx.x) * k_windows_per_block + group;
    window_job job;
    if (w >= v.n_windows || !prepare_window<LogMap>(v, w, decoder, iteration, job))
        return; // the whole group of 8 leaves together
    state_lane l;
    l.mask = 0xffu << ((threadIdx.x % 32) / k_states * k_states);
    l.s = s;
    l.sc = smem + group * state_parallel_window_floats(max_window, max_training);
    l.ring = l.sc + size_t(max_window) * k_shared_stage_words;
    l.train = l.ring + k_ring_floats;
    l.len = job.span.len;
    l.end = job.span.start + l.len;
    l.ahead = job.span.start - job.span.first;
    l.behind = job.span.last - l.end;

    state_parallel_inputs(job, l);
    __syncwarp(l.mask);
    state_parallel_forward<LogMap>(job, l);
    __syncwarp(l.mask);
    state_parallel_backward<LogMap>(job, l);
}

// ---- crossed kernel: a window's two recursions in two warps -------------------
// The forward and the backward recursion of a window run at once in two warps of
// a thread block (lane l of each: the block's window l), meeting in the middle:
// the forward warp runs its training and the window's first half, storing the
// alphas; the backward warp its training and the second half, storing the betas;
// each stores the branch inputs it gathered. After a barrier each finishes the
// other half with the stages' outputs (output_stage), from the other warp's
// stored metrics and inputs. The same operations as map_window in the same
// order, so the results are bit-identical; a window's chain of dependent steps
// is about half as long, and twice the threads hide more latency: what a small
// batch (an LTE 20 MHz frame's ten code blocks) waits on. Beyond ~80 code blocks
// the memory pipeline limits both and the thread per window wins
// (choose_window_kernel).
//
// The rows keep the metrics of states 1..7 only: every metric vector the
// recursions hold has state 0's at +0 (each step normalises by it, x - x = +0;
// the encoder's start, the tail's metrics and the boundaries, zeroed before the
// first iteration, too), as map_window's even-stage scratch assumes.

constexpr int k_crossed_windows = 32; ///< a warp's lanes: a block's windows
constexpr int k_crossed_threads = 2 * k_crossed_windows;
/// Scratch rows a warp reads a chunk ahead in its second half.
constexpr int k_row_chunk = 4;

/// What one recursion leaves the other at stage i (stage_scratch layout): its
/// metrics of states 1..7 (state 0's is 0: normalised), gs, gp and the natural index.
struct crossed_row {
    float m[k_states];
    float gs, gp;
    int n;
};

__device__ __forceinline__ void store_row(
    const stage_scratch& sc, int i, const float (&m)[k_states], float gs, float gp, int n)
{
    for (int s = 1; s < k_states; ++s)
        sc.at(i, s) = m[s];
    sc.at(i, k_states) = gs;
    sc.at(i, k_states + 1) = gp;
    sc.at(i, k_states + 2) = int_bits_as_float(n);
}

/// Rows lo + j < hi.
__device__ __forceinline__ void
load_rows(const stage_scratch& sc, int lo, int hi, crossed_row (&r)[k_row_chunk])
{
    MIMO_UNROLL
    for (int j = 0; j < k_row_chunk; ++j)
        if (lo + j < hi) {
            r[j].m[0] = 0.0f;
            for (int s = 1; s < k_states; ++s)
                r[j].m[s] = sc.at(lo + j, s);
            r[j].gs = sc.at(lo + j, k_states);
            r[j].gp = sc.at(lo + j, k_states + 1);
            r[j].n = float_bits_as_int(sc.at(lo + j, k_states + 2));
        }
}

/// The forward warp's first part: training, then stages [0, half), their alphas
/// and inputs stored.
template <bool LogMap>
__device__ __forceinline__ void crossed_forward_first(const window_job& job,
                                                      const stage_scratch& sc,
                                                      int half,
                                                      float (&alpha)[k_states])
{
    for (int s = 0; s < k_states; ++s)
        alpha[s] = job.alpha_start[s];
    forward_pass<LogMap>(
        job.io,
        job.span,
        half,
        alpha,
        job.alpha_out,
        [&](int c, int j, const float(&a)[k_states], float gs, float gp, int n) {
            store_row(sc, c + j, a, gs, gp, n);
        });
}

/// Calls visit(i, row) for the scratch rows i of [lo, hi), ascending or
/// descending, each chunk of rows loaded a chunk ahead of its use.
template <bool Ascending, typename Visit>
__device__ __forceinline__ void
visit_rows(const stage_scratch& sc, int lo, int hi, Visit&& visit)
{
    // chunk k: [a, b), from lo upwards or from hi downwards
    const auto bounds = [lo, hi](int k, int& a, int& b) {
        if (Ascending) {
            a = lo + k * k_row_chunk;
            b = a + k_row_chunk < hi ? a + k_row_chunk : hi;
        } else {
            b = hi - k * k_row_chunk;
            a = b - k_row_chunk > lo ? b - k_row_chunk : lo;
        }
    };
    const int chunks = hi > lo ? (hi - lo + k_row_chunk - 1) / k_row_chunk : 0;
    crossed_row next[k_row_chunk] = {};
    int a = 0, b = 0;
    if (chunks > 0) {
        bounds(0, a, b);
        load_rows(sc, a, b, next);
    }
    for (int k = 0; k < chunks; ++k) {
        bounds(k, a, b);
        crossed_row rows[k_row_chunk] = {};
        MIMO_UNROLL
        for (int j = 0; j < k_row_chunk; ++j)
            rows[j] = next[j];
        if (k + 1 < chunks) {
            int a1, b1;
            bounds(k + 1, a1, b1);
            load_rows(sc, a1, b1, next);
        }
        MIMO_UNROLL
        for (int t = 0; t < k_row_chunk; ++t) {
            const int j = Ascending ? t : k_row_chunk - 1 - t;
            if (a + j < b)
                visit(a + j, rows[j]);
        }
    }
}

/// The forward warp's second part: stages [half, len) with their outputs, from
/// the backward warp's rows.
template <bool LogMap, bool ParityApp>
__device__ __forceinline__ void crossed_forward_second(const window_job& job,
                                                       const stage_scratch& sc,
                                                       int half,
                                                       float (&alpha)[k_states])
{
    const half_iteration_io& io = job.io;
    const window_span& span = job.span;
    const int start = span.start, end = start + span.len;
    visit_rows<true>(sc, half, span.len, [&](int i, const crossed_row& row) {
        if (start + i == span.alpha_at)
            for (int s = 0; s < k_states; ++s)
                job.alpha_out[s] = alpha[s];
        // the row's betas are those of stage i + 1; stepped in a copy
        float beta[k_states];
        for (int s = 0; s < k_states; ++s)
            beta[s] = row.m[s];
        output_stage<LogMap, ParityApp>(
            io, start + i, row.n, alpha, row.gs, row.gp, beta);
        forward_step<LogMap>(alpha, row.gs, row.gp, alpha);
    });
    if (end == span.alpha_at)
        for (int s = 0; s < k_states; ++s)
            job.alpha_out[s] = alpha[s];
}

/// The backward warp's first part: training, then stages len - 1 down to half,
/// their betas (those of the stage after) and inputs stored.
template <bool LogMap>
__device__ __forceinline__ void crossed_backward_first(const window_job& job,
                                                       const stage_scratch& sc,
                                                       int half,
                                                       float (&beta)[k_states])
{
    const half_iteration_io& io = job.io;
    const window_span& span = job.span;
    const int start = span.start, len = span.len, end = start + len;
    for (int s = 0; s < k_states; ++s)
        beta[s] = job.beta_end[s];
    // Chunks [lo, hi) from the window's end down to half, each loaded a chunk
    // ahead (its indices two), the first during the training.
    const auto low = [half](int top) {
        return top - k_chunk > half ? top - k_chunk : half;
    };
    int hi = len, lo = low(len);
    input_pipeline inputs;
    inputs.start(io, start + lo, start + hi, start + low(lo), start + lo);
    backward_training<LogMap>(io, end, span.last, span.beta_at, beta, job.beta_out);
    while (hi > half) {
        int n[k_chunk];
        float gs[k_chunk], gp[k_chunk];
        const int lo1 = low(lo), lo2 = low(lo1);
        inputs.take(io, start + lo1, start + lo, start + lo2, start + lo1, n, gs, gp);
        MIMO_UNROLL
        for (int j = k_chunk - 1; j >= 0; --j)
            if (lo + j < hi) {
                if (start + lo + j + 1 == span.beta_at)
                    for (int s = 0; s < k_states; ++s)
                        job.beta_out[s] = beta[s];
                store_row(sc, lo + j, beta, gs[j], gp[j], n[j]);
                backward_step<LogMap>(beta, gs[j], gp[j], beta);
            }
        hi = lo;
        lo = lo1;
    }
}

/// The backward warp's second part: stages half - 1 down to 0 with their
/// outputs, from the forward warp's rows.
template <bool LogMap, bool ParityApp>
__device__ __forceinline__ void crossed_backward_second(const window_job& job,
                                                        const stage_scratch& sc,
                                                        int half,
                                                        float (&beta)[k_states])
{
    const half_iteration_io& io = job.io;
    const window_span& span = job.span;
    const int start = span.start;
    visit_rows<false>(sc, 0, half, [&](int i, const crossed_row& row) {
        if (start + i + 1 == span.beta_at)
            for (int s = 0; s < k_states; ++s)
                job.beta_out[s] = beta[s];
        output_stage<LogMap, ParityApp>(
            io, start + i, row.n, row.m, row.gs, row.gp, beta);
    });
    if (start == span.beta_at)
        for (int s = 0; s < k_states; ++s)
            job.beta_out[s] = beta[s];
}

template <bool LogMap, bool ParityApp>
__global__ void __launch_bounds__(k_crossed_threads)
    crossed_kernel(const __grid_constant__ turbo_batch_view v, int decoder, int iteration)
{
    const int lane = threadIdx.x % k_crossed_windows;
    const size_t w = size_t(blockIdx.x) * k_crossed_windows + lane;
    window_job job;
    const bool active =
        w < v.n_windows && prepare_window<LogMap>(v, w, decoder, iteration, job);
    const bool forward = threadIdx.x < k_crossed_windows;
    const stage_scratch sc = v.scratch_of(active ? w : 0);
    const int half = active ? job.span.len / 2 : 0;
    float metrics[k_states]; // the warp's recursion: alpha or beta
    if (active) {
        if (forward)
            crossed_forward_first<LogMap>(job, sc, half, metrics);
        else
            crossed_backward_first<LogMap>(job, sc, half, metrics);
    }
    __syncthreads(); // each warp's rows are stored
    if (active) {
        if (forward)
            crossed_forward_second<LogMap, ParityApp>(job, sc, half, metrics);
        else
            crossed_backward_second<LogMap, ParityApp>(job, sc, half, metrics);
    }
}

/// Which kernel a half iteration runs; all give bit-identical results.
/// H100, K = 6144, W = 64, T = 16, kernel ms of one iteration (max-log-MAP /
/// log-MAP; docs/turbo.md, session 17):
///
///   code blocks   thread per window   crossed         state-parallel
///   10            0.090 / 1.120       0.063 / 0.588   0.072 / 0.166
///   60            0.098               0.090
///   80            0.101               0.101
///   111           0.132 / 1.128       0.138 / 0.713   0.200 / 0.355
///   222           0.226 / 1.232       0.249 / 0.799   0.348 / 0.574
///   1332          1.254 / 4.498       1.277 / 3.649   1.780 / 3.091
///
/// max-log-MAP: the crossed kernel while the batch is small (its windows' serial
/// chain is the time), a thread per window beyond (the memory traffic is: the
/// crossed kernel's scratch rows are larger); log-MAP: state-parallel (more
/// arithmetic per shuffle) where its shared memory holds the windows, else crossed.
constexpr size_t k_crossed_max_windows = 6144;

enum class window_kernel : uint8_t { thread_per_window, state_parallel, crossed };

bool state_parallel_fits(const turbo_batch_plan& plan, bool parity_app)
{
    // its lanes compute no parity APPs
    return !parity_app && sizeof(float) * state_parallel_shared_floats(
                                              plan.max_window, plan.max_training) <=
                              k_state_parallel_max_shared;
}

/// MIMO_GPU_TURBO_KERNEL = thread, state_parallel or crossed forces that kernel
/// where it can run (to compare them; the results are the same): state_parallel
/// runs neither parity APPs nor windows beyond its shared memory, which take the
/// default. Another value is an error.
window_kernel
choose_window_kernel(bool log_map, const turbo_batch_plan& plan, bool parity_app)
{
    const bool state_parallel = state_parallel_fits(plan, parity_app);
    if (const char* forced = std::getenv("MIMO_GPU_TURBO_KERNEL")) {
        const std::string name(forced);
        if (name == "thread")
            return window_kernel::thread_per_window;
        if (name == "crossed")
            return window_kernel::crossed;
        if (name == "state_parallel" && state_parallel)
            return window_kernel::state_parallel;
        if (name != "state_parallel" && !name.empty())
            throw std::invalid_argument(
                "mimo_gpu::lte_turbo_decoder: MIMO_GPU_TURBO_KERNEL must be thread, "
                "crossed or state_parallel, got '" +
                name + "'");
    }
    if (log_map)
        return state_parallel ? window_kernel::state_parallel : window_kernel::crossed;
    return plan.windows.size() <= k_crossed_max_windows
               ? window_kernel::crossed
               : window_kernel::thread_per_window;
}

template <bool LogMap, bool ParityApp>
void launch_window_kernel(window_kernel kernel,
                          const turbo_batch_view& v,
                          const turbo_batch_plan& plan,
                          int decoder,
                          int iteration,
                          cudaStream_t s)
{
    switch (kernel) {
    case window_kernel::state_parallel: {
        const size_t shared = sizeof(float) * state_parallel_shared_floats(
                                                  plan.max_window, plan.max_training);
        const unsigned blocks =
            unsigned((v.n_windows + k_windows_per_block - 1) / k_windows_per_block);
        state_parallel_kernel<LogMap><<<blocks, k_state_parallel_threads, shared, s>>>(
            v, decoder, iteration, plan.max_window, plan.max_training);
        break;
    }
    case window_kernel::crossed: {
        const unsigned blocks =
            unsigned((v.n_windows + k_crossed_windows - 1) / k_crossed_windows);
        crossed_kernel<LogMap, ParityApp>
            <<<blocks, k_crossed_threads, 0, s>>>(v, decoder, iteration);
        break;
    }
    case window_kernel::thread_per_window:
        window_per_thread_kernel<LogMap, ParityApp>
            <<<unsigned((v.n_windows + 63) / 64), 64, 0, s>>>(v, decoder, iteration);
        break;
    }
    MIMO_CUDA_CHECK_LAUNCH("half_iteration kernel");
}

void launch_half_iteration(window_kernel kernel,
                           bool log_map,
                           const turbo_batch_view& v,
                           const turbo_batch_plan& plan,
                           int decoder,
                           int iteration,
                           cudaStream_t s)
{
    const bool parity_app = v.parity_app != nullptr;
    if (log_map && parity_app)
        launch_window_kernel<true, true>(kernel, v, plan, decoder, iteration, s);
    else if (log_map)
        launch_window_kernel<true, false>(kernel, v, plan, decoder, iteration, s);
    else if (parity_app)
        launch_window_kernel<false, true>(kernel, v, plan, decoder, iteration, s);
    else
        launch_window_kernel<false, false>(kernel, v, plan, decoder, iteration, s);
}

/// Remainder of the block's hard decisions divided by the CRC generator, from
/// the table x^n mod g (n = K - 1 - i for bit i): zero when the CRC passes.
__global__ void crc_kernel(const turbo_block_desc* blocks,
                           const float* __restrict__ app,
                           const uint32_t* __restrict__ powers,
                           const uint8_t* __restrict__ no_information,
                           uint8_t* done,
                           int* iterations,
                           uint8_t* crc_ok,
                           int iteration)
{
    __shared__ uint32_t partial[k_block_threads / 32];
    const int b = blockIdx.x;
    if (done[b])
        return;
    const turbo_block_desc d = blocks[b];
    uint32_t r = 0;
    bool decided = true;
    for (int i = threadIdx.x; i < d.K; i += blockDim.x) {
        uint8_t bit;
        decided &= hard_decision(app[d.bit_offset + i], bit);
        if (bit)
            r ^= powers[d.K - 1 - i];
    }
    decided = __syncthreads_and(decided);
    for (int offset = 16; offset > 0; offset /= 2)
        r ^= __shfl_xor_sync(0xffffffffu, r, offset);
    if (threadIdx.x % 32 == 0)
        partial[threadIdx.x / 32] = r;
    __syncthreads();
    if (threadIdx.x == 0) {
        uint32_t total = 0;
        for (int i = 0; i < k_block_threads / 32; ++i)
            total ^= partial[i];
        iterations[b] = iteration + 1;
        // a block without information, or with a tie, never passes
        if (total == 0 && decided && !no_information[b]) {
            crc_ok[b] = 1;
            done[b] = 1;
        }
    }
}

/// One thread block per code block: its hard decisions (and APP LLRs when asked);
/// a tie marks the block no_information (turbo_block_result).
__global__ void hard_decision_kernel(const turbo_block_desc* blocks,
                                     const float* __restrict__ app,
                                     uint8_t* bits,
                                     float* app_out,
                                     uint8_t* no_information)
{
    const turbo_block_desc d = blocks[blockIdx.x];
    bool decided = true;
    for (int i = threadIdx.x; i < d.K; i += blockDim.x) {
        const size_t n = d.bit_offset + size_t(i);
        const float x = app[n];
        decided &= hard_decision(x, bits[n]);
        if (app_out)
            app_out[n] = x;
    }
    if (!__syncthreads_and(decided) && threadIdx.x == 0)
        no_information[blockIdx.x] = 1;
}

template <typename T>
const T* to_device(
    device_array<T>& dev, host_input<T>& staging, const T* host, size_t n, cudaStream_t s)
{
    T* d = dev.reserve(n);
    MIMO_CUDA_CHECK(cudaMemcpyAsync(
        d, staging.device_view(host, n), n * sizeof(T), cudaMemcpyHostToDevice, s));
    return d;
}

class cuda_turbo_engine final : public turbo_engine
{
public:
    explicit cuda_turbo_engine(const turbo_decoder_config& config) : m_config(config)
    {
        if (config.early_termination != crc_type::none) {
            // x^n mod g up to the largest K
            const std::vector<uint32_t> powers =
                crc_powers(config.early_termination, 6144);
            MIMO_CUDA_CHECK(cudaMemcpy(m_crc_powers.reserve(powers.size()),
                                       powers.data(),
                                       powers.size() * sizeof(uint32_t),
                                       cudaMemcpyHostToDevice));
        }
    }
    backend kind() const override { return backend::cuda; }

    std::vector<turbo_block_result>
    decode(const float* llr, uint8_t* bits, float* app_llr, float* coded_ext) override
    {
        const cudaStream_t s = m_stream.get();
        const size_t nb = plan.blocks.size(), nbits = plan.total_bits;
        MIMO_CUDA_CHECK(
            cudaStreamWaitEvent(s, m_previous_batch.get(), 0)); // m_llr may be in use
        const float* d_llr = to_device(m_llr, m_llr_in, llr, plan.total_llr, s);
        enqueue(d_llr,
                m_bits.device_view(bits, nbits),
                app_llr ? m_app_out.device_view(app_llr, nbits) : nullptr,
                coded_ext ? m_coded_out.device_view(coded_ext, plan.total_llr) : nullptr,
                s);

        const bool early = m_config.early_termination != crc_type::none;
        m_iterations_host.resize(nb);
        m_crc_ok_host.resize(nb);
        m_no_information_host.resize(nb);
        MIMO_CUDA_CHECK(cudaMemcpyAsync(m_no_information_host.data(),
                                        m_no_information.data(),
                                        nb,
                                        cudaMemcpyDeviceToHost,
                                        s));
        if (early) {
            MIMO_CUDA_CHECK(cudaMemcpyAsync(m_iterations_host.data(),
                                            m_iterations.data(),
                                            nb * sizeof(int),
                                            cudaMemcpyDeviceToHost,
                                            s));
            MIMO_CUDA_CHECK(cudaMemcpyAsync(
                m_crc_ok_host.data(), m_crc_ok.data(), nb, cudaMemcpyDeviceToHost, s));
        }
        m_status.check("turbo_decoder", s, "code block");
        m_bits.finish();
        if (app_llr)
            m_app_out.finish();
        if (coded_ext)
            m_coded_out.finish();
        std::vector<turbo_block_result> results(nb);
        for (size_t b = 0; b < nb; ++b) {
            results[b].iterations = early ? m_iterations_host[b] : m_config.iterations;
            results[b].crc_ok = early && m_crc_ok_host[b];
            results[b].no_information = m_no_information_host[b];
        }
        return results;
    }

    void decode_device(const float* d_llr,
                       uint8_t* d_bits,
                       float* d_app_llr,
                       float* d_coded_ext,
                       cuda_stream_t stream) override
    {
        enqueue(d_llr, d_bits, d_app_llr, d_coded_ext, stream);
    }

    void check_device_status(cuda_stream_t stream) override
    {
        m_status.check("turbo_decoder", stream, "code block");
    }

    lte_turbo_decoder::device_block_results device_results() const override
    {
        // enqueue() writes them for every batch (iterations only with early termination)
        const bool early = m_config.early_termination != crc_type::none;
        return { early ? m_iterations.data() : nullptr,
                 m_crc_ok.data(),
                 m_no_information.data() };
    }

private:
    /// A plan's descriptors on the device, and its kernels' launch sequence
    /// recorded as a graph: a stream of batches of a few sizes (a flowgraph's
    /// calls take the transport blocks there are) switches between kept plans
    /// without uploading or waiting.
    struct device_plan {
        std::vector<int> K;
        int window = 0, training = 0;
        device_array<turbo_block_desc> blocks;
        device_array<turbo_window_desc> windows;
        device_array<int32_t> pi;
        replayed_launches launches;
        uint64_t last_used = 0;
    };
    static constexpr size_t k_kept_plans = 8;

    /// The kept device plan of `plan`, uploaded (on s, before the batch's
    /// kernels) if there is none.
    device_plan& device_plan_of(const turbo_batch_plan& p, cudaStream_t s)
    {
        for (auto& d : m_plans)
            if (d->K == p.block_sizes() && d->window == p.window() &&
                d->training == p.training()) {
                d->last_used = ++m_uses;
                return *d;
            }
        if (m_plans.size() >= k_kept_plans) {
            // The least recently used goes; the previous batch may still read it.
            MIMO_CUDA_CHECK(cudaEventSynchronize(m_previous_batch.get()));
            m_plans.erase(std::min_element(
                m_plans.begin(), m_plans.end(), [](const auto& a, const auto& b) {
                    return a->last_used < b->last_used;
                }));
        }
        auto d = std::make_unique<device_plan>();
        d->K = p.block_sizes();
        d->window = p.window();
        d->training = p.training();
        // From the plan's own (pageable) vectors: staged before the call returns,
        // and on s, so the batch's kernels read them complete. A new plan is
        // rare once a stream runs.
        const auto upload = [s](auto& dev, const auto& host) {
            using T = typename std::decay_t<decltype(host)>::value_type;
            MIMO_CUDA_CHECK(cudaMemcpyAsync(dev.reserve(host.size()),
                                            host.data(),
                                            host.size() * sizeof(T),
                                            cudaMemcpyHostToDevice,
                                            s));
        };
        upload(d->blocks, p.blocks);
        upload(d->windows, p.windows);
        upload(d->pi, p.permutations);
        d->last_used = ++m_uses;
        m_plans.push_back(std::move(d));
        return *m_plans.back();
    }

    /// Enqueues every kernel of the batch on `s`: the plan's launch sequence,
    /// replayed as one graph while the plan and the buffers stay.
    void enqueue(const float* d_llr,
                 uint8_t* d_bits,
                 float* d_app_out,
                 float* d_coded_out,
                 cudaStream_t s)
    {
        const size_t nb = plan.blocks.size(), nw = plan.windows.size(),
                     nbits = plan.total_bits;
        // A batch on another stream must not overlap the previous one: they share the
        // work buffers.
        MIMO_CUDA_CHECK(cudaStreamWaitEvent(s, m_previous_batch.get(), 0));
        device_plan& dp = device_plan_of(plan, s);
        const turbo_block_desc* blocks = dp.blocks.data();
        const turbo_window_desc* windows = dp.windows.data();
        const int32_t* pi = dp.pi.data();

        uint8_t* no_information = m_no_information.reserve(nb);
        float* e1 = m_extrinsic1.reserve(nbits);
        float* e2 = m_extrinsic2.reserve(nbits);
        float* app = m_app.reserve(nbits);
        float* boundaries = m_boundaries.reserve(nw * k_boundary_floats);
        uint8_t* done = m_done.reserve(nb);
        uint8_t* crc_ok = m_crc_ok.reserve(nb);
        int* iterations = m_iterations.reserve(nb);
        const bool log_map = m_config.algorithm == map_algorithm::log_map;
        float* parity_app = d_coded_out ? m_parity_app.reserve(2 * nbits) : nullptr;
        const window_kernel kernel = choose_window_kernel(log_map, plan, parity_app);
        float* scratch = kernel == window_kernel::state_parallel
                             ? nullptr
                             : m_scratch.reserve(plan.scratch_floats());
        const bool early = m_config.early_termination != crc_type::none;
        const turbo_batch_view v{ blocks,
                                  windows,
                                  nw,
                                  d_llr,
                                  pi,
                                  e1,
                                  e2,
                                  app,
                                  scratch,
                                  boundaries,
                                  done,
                                  log_map ? 1.0f : m_config.extrinsic_scale,
                                  m_config.iterations - 1,
                                  early,
                                  parity_app };
        // Everything the launches read as arguments that can change between calls
        // of this plan (its descriptors are its own: each plan has its graphs;
        // the configuration and m_crc_powers are fixed).
        const std::vector<uint64_t> key{ key_of(d_llr),
                                         key_of(d_bits),
                                         key_of(d_app_out),
                                         key_of(d_coded_out),
                                         key_of(no_information),
                                         key_of(e1),
                                         key_of(e2),
                                         key_of(app),
                                         key_of(boundaries),
                                         key_of(done),
                                         key_of(crc_ok),
                                         key_of(iterations),
                                         key_of(parity_app),
                                         key_of(scratch),
                                         key_of(m_status.word()),
                                         uint64_t(kernel) };
        dp.launches.run(s, key, [&] {
            check_input_kernel<<<unsigned(nb), k_check_threads, 0, s>>>(
                d_llr, blocks, m_status.word(), no_information);
            MIMO_CUDA_CHECK_LAUNCH("check_input_kernel");
            MIMO_CUDA_CHECK(cudaMemsetAsync(e2, 0, nbits * sizeof(float), s));
            MIMO_CUDA_CHECK(cudaMemsetAsync(
                boundaries, 0, nw * k_boundary_floats * sizeof(float), s));
            MIMO_CUDA_CHECK(cudaMemsetAsync(done, 0, nb, s));
            MIMO_CUDA_CHECK(cudaMemsetAsync(crc_ok, 0, nb, s));
            if (parity_app)
                MIMO_CUDA_CHECK(
                    cudaMemsetAsync(parity_app, 0, 2 * nbits * sizeof(float), s));
            for (int it = 0; it < m_config.iterations; ++it) {
                for (int decoder = 0; decoder < 2; ++decoder)
                    launch_half_iteration(kernel, log_map, v, plan, decoder, it, s);
                if (early) {
                    crc_kernel<<<unsigned(nb), k_block_threads, 0, s>>>(
                        blocks,
                        app,
                        m_crc_powers.data(),
                        no_information,
                        done,
                        iterations,
                        crc_ok,
                        it);
                    MIMO_CUDA_CHECK_LAUNCH("crc_kernel");
                }
            }
            hard_decision_kernel<<<unsigned(nb), k_block_threads, 0, s>>>(
                blocks, app, d_bits, d_app_out, no_information);
            MIMO_CUDA_CHECK_LAUNCH("hard_decision_kernel");
            if (d_coded_out) {
                coded_extrinsic_kernel<<<unsigned(nb), k_block_threads, 0, s>>>(
                    blocks, d_llr, app, parity_app, no_information, d_coded_out);
                MIMO_CUDA_CHECK_LAUNCH("coded_extrinsic_kernel");
            }
        });
        MIMO_CUDA_CHECK(cudaEventRecord(m_previous_batch.get(), s));
    }

    turbo_decoder_config m_config;
    cuda_stream m_stream;
    device_status m_status;
    cuda_event m_previous_batch;
    std::vector<std::unique_ptr<device_plan>> m_plans; ///< at most k_kept_plans
    uint64_t m_uses = 0;
    host_input<float> m_llr_in;
    device_array<float> m_llr, m_extrinsic1, m_extrinsic2, m_app, m_parity_app, m_scratch,
        m_boundaries;
    device_array<uint8_t> m_done, m_crc_ok, m_no_information;
    device_array<int> m_iterations;
    device_array<uint32_t> m_crc_powers;
    host_output<uint8_t> m_bits;
    host_output<float> m_app_out, m_coded_out;
    std::vector<int> m_iterations_host;
    std::vector<uint8_t> m_crc_ok_host, m_no_information_host;
};

} // namespace

std::unique_ptr<turbo_engine> make_cuda_turbo_engine(const turbo_decoder_config& config)
{
    return std::make_unique<cuda_turbo_engine>(config);
}

} // namespace detail
} // namespace mimo_gpu
