// The LTE constituent code's trellis and one MAP window of a half iteration,
// shared by the CPU engine (a loop over windows) and the CUDA kernel (a thread
// per window), so both compute the same float operations in the same order.
//
// Encoder (TS 36.212 5.1.3.2.1): registers r1 r2 r3, feedback a = u ^ r2 ^ r3,
// parity z = a ^ r1 ^ r3, next state (a, r1, r2); state index 4 r1 + 2 r2 + r3.
// LLRs are ln P(0)/P(1); a branch with bit b adds (1 - 2b) L / 2.
#pragma once

#include "../runtime/host_device.h"

#include <mimo_gpu/lte_turbo_decoder.h>

#include <cstdint>
#include <cstring>

namespace mimo_gpu {
namespace detail {

constexpr int k_states = 8;
/// A state metric that is "impossible" but finite, so normalising never gives Inf - Inf.
constexpr float k_impossible = -1.0e30f;

MIMO_HD int next_state(int s, int u)
{
    const int r1 = (s >> 2) & 1, r2 = (s >> 1) & 1, r3 = s & 1;
    const int a = u ^ r2 ^ r3;
    return (a << 2) | (r1 << 1) | r2;
}
MIMO_HD int parity_bit(int s, int u)
{
    const int r1 = (s >> 2) & 1, r2 = (s >> 1) & 1, r3 = s & 1;
    return (u ^ r2 ^ r3) ^ r1 ^ r3;
}
/// The state that input u leads from into state t (each state has one per input).
MIMO_HD int previous_state(int t, int u)
{
    const int a = (t >> 2) & 1, r1 = (t >> 1) & 1, r2 = t & 1;
    return (r1 << 2) | (r2 << 1) | (a ^ u ^ r2);
}
/// The input that drives the feedback to 0 (trellis termination).
MIMO_HD int tail_input(int s) { return ((s >> 1) & 1) ^ (s & 1); }

/// x clamped to [-limit, limit] (x finite: the same result on the CPU and the GPU).
MIMO_HD float saturate(float x, float limit)
{
    return x > limit ? limit : (x < -limit ? -limit : x);
}
/// An input (channel) LLR as the decoder uses it: saturated to k_turbo_llr_limit.
MIMO_HD float channel_llr(float x) { return saturate(x, k_turbo_llr_limit); }
/// The extrinsic LLR written for the other decoder: scaled APP less systematic
/// and a-priori (two_gs, their sum), saturated to k_turbo_extrinsic_limit.
MIMO_HD float extrinsic_llr(float scale, float app, float two_gs)
{
    return saturate(scale * (app - two_gs), k_turbo_extrinsic_limit);
}

/// Whether an input LLR reaches the trellis at all: its branch metric, half the
/// saturated LLR in float, is non-zero (a denormal like 1.4e-45 halves to 0).
MIMO_HD bool carries_information(float x) { return 0.5f * channel_llr(x) != 0.0f; }
/// A bit's hard decision from its APP LLR: 1 below 0, 0 above; false for a tie
/// (APP exactly 0), which the inputs left undecided (turbo_block_result).
MIMO_HD bool hard_decision(float app, uint8_t& bit)
{
    bit = app < 0.0f ? 1 : 0;
    return app != 0.0f;
}
/// A block's K hard decisions; false when any of them is a tie.
inline bool hard_decisions(const float* app, int K, uint8_t* bits)
{
    bool decided = true;
    for (int i = 0; i < K; ++i)
        decided &= hard_decision(app[i], bits[i]);
    return decided;
}

/// ln(1 + e^-x) for x >= 0, from plain float operations (no library exp/log),
/// so CPU and GPU agree to the bit; absolute error below 1e-6.
MIMO_HD float log_map_correction(float x)
{
    if (!(x < 17.0f)) // e^-17 < 4.2e-8: below float resolution of the metrics
        return 0.0f;
    // e^-x = 2^-t, t = x log2(e) = n + f with 0 <= f < 1.
    const float t = x * 1.44269504f;
    const int n = int(t);
    const float f = t - float(n);
    // 2^-f on [0, 1): Taylor of e^(-f ln2) to degree 7 (error < 2e-7).
    const float g = f * 0.693147181f;
    const float p =
        1.0f -
        g * (1.0f -
             g * (0.5f - g * (0.166666667f -
                              g * (0.0416666667f -
                                   g * (0.00833333333f -
                                        g * (0.00138888889f - g * 0.000198412698f))))));
    const float e = p / float(1 << n); // exact scaling by a power of two
    // ln(1 + e) = 2 atanh(e / (2 + e)), e / (2 + e) <= 1/3.
    const float q = e / (2.0f + e), q2 = q * q;
    return 2.0f * q *
           (1.0f + q2 * (0.333333333f +
                         q2 * (0.2f + q2 * (0.142857143f +
                                            q2 * (0.111111111f + q2 * 0.0909090909f)))));
}

/// Bit-exact int <-> float reinterpretation on both sides (the scratch keeps an index
/// among floats).
MIMO_HD float int_bits_as_float(int i)
{
    float f;
    memcpy(&f, &i, sizeof f);
    return f;
}
MIMO_HD int float_bits_as_int(float f)
{
    int i;
    memcpy(&i, &f, sizeof i);
    return i;
}

template <bool LogMap>
MIMO_HD float max_star(float a, float b)
{
    const float m = a > b ? a : b;
    if (!LogMap)
        return m;
    const float d = a > b ? a - b : b - a;
    return m + log_map_correction(d);
}

/// Everything one constituent decoder reads and writes in a half iteration,
/// for one code block. Indices k are trellis stages 0..K-1.
struct half_iteration_io {
    int K;
    /// d0, natural order (read at interleaved index for decoder 2), as given
    const float* systematic;
    /// d1 (decoder 1) or d2 (decoder 2), trellis order, as given
    const float* parity;
    /// x_K, z_K, x_K+1, z_K+1, x_K+2, z_K+2 of this constituent (saturated)
    float tail[6];
    const float* apriori; ///< extrinsic of the other decoder, natural order
    float* extrinsic;     ///< written, natural order, scaled
    float* app;           ///< written when not null, natural order
    /// The parity bits' a-posteriori LLRs, trellis order (map_window<_, true>).
    float* parity_app;
    const int32_t* pi; ///< stage -> natural index (nullptr: identity, decoder 1)
    float extrinsic_scale;
};

/// Backward metrics at stage K from the three termination stages (the encoder
/// ends in state 0), with no a-priori information.
template <bool LogMap>
MIMO_HD void tail_beta(const float (&tail)[6], float (&beta)[k_states])
{
    float next[k_states];
    for (int s = 0; s < k_states; ++s)
        next[s] = s == 0 ? 0.0f : k_impossible;
    for (int j = 2; j >= 0; --j) {
        const float gx = 0.5f * tail[2 * j], gz = 0.5f * tail[2 * j + 1];
        for (int s = 0; s < k_states; ++s) {
            const int u = tail_input(s), z = parity_bit(s, u);
            beta[s] = next[next_state(s, u)] + (u ? -gx : gx) + (z ? -gz : gz);
        }
        const float norm = beta[0];
        for (int s = 0; s < k_states; ++s)
            next[s] = beta[s] - norm;
    }
    for (int s = 0; s < k_states; ++s)
        beta[s] = next[s];
}

/// Per-stage values the forward pass keeps for the backward pass: the 8
/// forward metrics, the two branch inputs and the natural index. Element e of
/// stage i lives at base[(i * k_stage_words + e) * stride]: with consecutive
/// windows at consecutive bases (stride = number of windows), a warp's threads
/// touch consecutive words (coalesced on the GPU); the CPU uses the same layout.
constexpr int k_stage_words = k_states + 3;

struct stage_scratch {
    float* base;
    size_t stride;
    MIMO_HD float& at(int stage, int element) const
    {
        return base[(size_t(stage) * k_stage_words + element) * stride];
    }
};

/// One forward trellis step: alpha of stage i + 1 from alpha of stage i,
/// normalised so that state 0 is 0.
template <bool LogMap>
MIMO_HD void forward_step(const float (&alpha)[k_states],
                          float gs,
                          float gp,
                          float (&next_alpha)[k_states])
{
    float next[k_states];
    for (int t = 0; t < k_states; ++t) {
        const int s0 = previous_state(t, 0), s1 = previous_state(t, 1);
        const float m0 = alpha[s0] + gs + (parity_bit(s0, 0) ? -gp : gp);
        const float m1 = alpha[s1] - gs + (parity_bit(s1, 1) ? -gp : gp);
        next[t] = max_star<LogMap>(m0, m1);
    }
    const float norm = next[0];
    for (int s = 0; s < k_states; ++s)
        next_alpha[s] = next[s] - norm;
}

/// One backward trellis step without outputs (a training stage): beta of stage i
/// from beta of stage i + 1, normalised so that state 0 is 0; the same operations
/// as map_window's backward pass.
template <bool LogMap>
MIMO_HD void backward_step(const float (&beta)[k_states],
                           float gs,
                           float gp,
                           float (&prev_beta)[k_states])
{
    float prev[k_states];
    for (int s = 0; s < k_states; ++s) {
        const float to0 = gs + (parity_bit(s, 0) ? -gp : gp) + beta[next_state(s, 0)];
        const float to1 = -gs + (parity_bit(s, 1) ? -gp : gp) + beta[next_state(s, 1)];
        prev[s] = max_star<LogMap>(to0, to1);
    }
    const float norm = prev[0];
    for (int s = 0; s < k_states; ++s)
        prev_beta[s] = prev[s] - norm;
}

/// Stages per chunk: map_window issues a chunk's independent loads a chunk
/// before the recursion uses them, so the GPU has up to this many in flight per
/// thread instead of waiting for two dependent loads at every stage. Values stay
/// in registers (arrays indexed by unrolled constants).
constexpr int k_chunk = 8;

/// Natural indices n of the stages c + j < end of a chunk (the interleaver's, or
/// the stage itself).
MIMO_HD void load_indices(const half_iteration_io& io, int c, int end, int (&n)[k_chunk])
{
    MIMO_UNROLL
    for (int j = 0; j < k_chunk; ++j)
        if (c + j < end)
            n[j] = io.pi ? io.pi[c + j] : c + j;
}

/// The inputs of the stages c + j < end of a chunk whose natural indices are n,
/// as loaded: systematic, a-priori and parity LLRs. Kept raw so that a load runs
/// ahead of its use: the GPU waits for a load at the first instruction reading it.
struct raw_inputs {
    float systematic[k_chunk], apriori[k_chunk], parity[k_chunk];
};
MIMO_HD void load_raw(
    const half_iteration_io& io, int c, int end, const int (&n)[k_chunk], raw_inputs& raw)
{
    MIMO_UNROLL
    for (int j = 0; j < k_chunk; ++j)
        if (c + j < end) {
            raw.systematic[j] = io.systematic[n[j]];
            raw.apriori[j] = io.apriori[n[j]];
            raw.parity[j] = io.parity[c + j];
        }
}

/// Branch inputs from raw inputs: gs = (systematic + a-priori) / 2, gp = parity / 2.
MIMO_HD void
branch_inputs(const raw_inputs& raw, float (&gs)[k_chunk], float (&gp)[k_chunk])
{
    MIMO_UNROLL
    for (int j = 0; j < k_chunk; ++j) {
        gs[j] = 0.5f * (channel_llr(raw.systematic[j]) + raw.apriori[j]);
        gp[j] = 0.5f * channel_llr(raw.parity[j]);
    }
}

/// Branch inputs of the stages c + j < end of a chunk: natural index n, gs, gp.
/// All index loads are issued before the value loads that need them.
MIMO_HD void load_chunk(const half_iteration_io& io,
                        int c,
                        int end,
                        int (&n)[k_chunk],
                        float (&gs)[k_chunk],
                        float (&gp)[k_chunk])
{
    load_indices(io, c, end, n);
    raw_inputs raw = {};
    load_raw(io, c, end, n, raw);
    branch_inputs(raw, gs, gp);
}

/// What the backward pass reads back of a chunk's stages from the scratch: the
/// branch inputs, the natural indices and the even stages' forward metrics.
struct scratch_chunk {
    int n[k_chunk];
    float gs[k_chunk], gp[k_chunk];
    float even_alpha[k_chunk / 2][k_states];
};

/// The scratch of the stages c + j < len of a chunk (c even).
MIMO_HD void
load_scratch(const stage_scratch& scratch, int c, int len, scratch_chunk& out)
{
    MIMO_UNROLL
    for (int j = 0; j < k_chunk; ++j)
        if (c + j < len) {
            out.gs[j] = scratch.at(c + j, k_states);
            out.gp[j] = scratch.at(c + j, k_states + 1);
            out.n[j] = float_bits_as_int(scratch.at(c + j, k_states + 2));
            if (j % 2 == 0) {
                out.even_alpha[j / 2][0] = 0.0f;
                for (int s = 1; s < k_states; ++s)
                    out.even_alpha[j / 2][s] = scratch.at(c + j, s);
            }
        }
}

/// Stage k (natural index n) of the backward pass with its outputs, as every
/// max-log / log-MAP window computes it: from the forward metrics a of the stage
/// and beta, the backward metrics of stage k + 1, the stage's APP LLR (the
/// branches of input 0 against those of input 1, states in order), its
/// extrinsic LLR (and APP, and with ParityApp the parity bit's APP) written out,
/// and beta stepped back to stage k (backward_step's operations).
template <bool LogMap, bool ParityApp>
MIMO_HD void output_stage(const half_iteration_io& io,
                          int k,
                          int n,
                          const float (&a)[k_states],
                          float gs,
                          float gp,
                          float (&beta)[k_states])
{
    float metric[2] = { 0.0f, 0.0f }, prev[k_states];
    float parity_metric[2] = { 0.0f, 0.0f };
    bool parity_seen[2] = { false, false };
    for (int s = 0; s < k_states; ++s) {
        const float to0 = gs + (parity_bit(s, 0) ? -gp : gp) + beta[next_state(s, 0)];
        const float to1 = -gs + (parity_bit(s, 1) ? -gp : gp) + beta[next_state(s, 1)];
        prev[s] = max_star<LogMap>(to0, to1);
        metric[0] = s == 0 ? a[s] + to0 : max_star<LogMap>(metric[0], a[s] + to0);
        metric[1] = s == 0 ? a[s] + to1 : max_star<LogMap>(metric[1], a[s] + to1);
        if (ParityApp)
            for (int u = 0; u < 2; ++u) {
                const int q = parity_bit(s, u);
                const float m = a[s] + (u ? to1 : to0);
                parity_metric[q] =
                    parity_seen[q] ? max_star<LogMap>(parity_metric[q], m) : m;
                parity_seen[q] = true;
            }
    }
    if (ParityApp)
        io.parity_app[k] = parity_metric[0] - parity_metric[1];
    const float app = metric[0] - metric[1];
    // systematic + a-priori = 2 gs exactly (scaling by 2 is exact in float)
    io.extrinsic[n] = extrinsic_llr(io.extrinsic_scale, app, 2.0f * gs);
    if (io.app)
        io.app[n] = app;
    const float norm = prev[0];
    for (int s = 0; s < k_states; ++s)
        beta[s] = prev[s] - norm;
}

/// The stages one window's recursions run. The window [start, start + len)
/// writes the outputs. Its forward recursion starts at stage first <= start and
/// its backward recursion at last >= start + len: the stages in between are a
/// training (acquisition) prefix, run to bring the neighbour's stale metrics
/// closer to the true ones, neither stored nor output. The forward metrics at
/// stage boundary alpha_at and the backward ones at beta_at are written out: the
/// right neighbour's first and the left neighbour's last in the next iteration
/// (-1: no neighbour starts there).
struct window_span {
    int start, len;
    int first, last;
    int alpha_at, beta_at;
};

/// Forward recursion over the training stages [from, to): metrics only; the
/// metrics at boundary `record` (if in [from, to)) are copied to `out`.
template <bool LogMap>
MIMO_HD void forward_training(const half_iteration_io& io,
                              int from,
                              int to,
                              int record,
                              float (&alpha)[k_states],
                              float* out)
{
    for (int c = from; c < to; c += k_chunk) {
        int n[k_chunk] = {};
        float gs[k_chunk] = {}, gp[k_chunk] = {};
        load_chunk(io, c, to, n, gs, gp);
        MIMO_UNROLL
        for (int j = 0; j < k_chunk; ++j)
            if (c + j < to) {
                if (c + j == record)
                    for (int s = 0; s < k_states; ++s)
                        out[s] = alpha[s];
                forward_step<LogMap>(alpha, gs[j], gp[j], alpha);
            }
    }
}

/// Backward recursion over the training stages [from, to), from stage to - 1
/// down: metrics only; the metrics at boundary `record` (if in (from, to]) are
/// copied to `out`.
template <bool LogMap>
MIMO_HD void backward_training(const half_iteration_io& io,
                               int from,
                               int to,
                               int record,
                               float (&beta)[k_states],
                               float* out)
{
    for (int hi = to; hi > from; hi -= k_chunk) {
        const int c = hi - k_chunk > from ? hi - k_chunk : from;
        int n[k_chunk] = {};
        float gs[k_chunk] = {}, gp[k_chunk] = {};
        load_chunk(io, c, hi, n, gs, gp);
        MIMO_UNROLL
        for (int j = k_chunk - 1; j >= 0; --j)
            if (c + j < hi) {
                if (c + j + 1 == record)
                    for (int s = 0; s < k_states; ++s)
                        out[s] = beta[s];
                backward_step<LogMap>(beta, gs[j], gp[j], beta);
            }
    }
}

/// A recursion's inputs, loaded a chunk ahead of their use and the
/// interleaver's indices two: a load lands while the chunk before is computed.
struct input_pipeline {
    int n_next[k_chunk] = {}, n_after[k_chunk] = {};
    raw_inputs raw_next = {};

    /// Loads the first chunk, stages [c0, e0), and the second's [c1, e1) indices.
    MIMO_HD void start(const half_iteration_io& io, int c0, int e0, int c1, int e1)
    {
        load_indices(io, c0, e0, n_next);
        load_indices(io, c1, e1, n_after);
        load_raw(io, c0, e0, n_next, raw_next);
    }
    /// The loaded chunk's branch inputs and natural indices; then loads the next
    /// chunk's values ([c1, e1)) and the one after's indices ([c2, e2)).
    MIMO_HD void take(const half_iteration_io& io,
                      int c1,
                      int e1,
                      int c2,
                      int e2,
                      int (&n)[k_chunk],
                      float (&gs)[k_chunk],
                      float (&gp)[k_chunk])
    {
        branch_inputs(raw_next, gs, gp);
        MIMO_UNROLL
        for (int j = 0; j < k_chunk; ++j) {
            n[j] = n_next[j];
            n_next[j] = n_after[j];
        }
        load_raw(io, c1, e1, n_next, raw_next);
        load_indices(io, c2, e2, n_after);
    }
};

/// The forward recursion of a window: its training from span.first (alpha
/// holds the metrics there), then its stages [0, stages) (stages <= span.len).
/// Before the step of stage c + j (c a multiple of k_chunk, j the unrolled
/// position in the chunk), keep(c, j, alpha, gs, gp, n) stores what the window's
/// backward recursion will need; the metrics at span.alpha_at go to alpha_out
/// (but at the window's end: the caller's). The inputs come through an
/// input_pipeline: with a thread per window and few windows, a GPU thread
/// otherwise waits for memory at every chunk (H100: 55-71 % of the cycles). The
/// first chunk's land during the training.
template <bool LogMap, typename Keep>
MIMO_HD void forward_pass(const half_iteration_io& io,
                          const window_span& span,
                          int stages,
                          float (&alpha)[k_states],
                          float* alpha_out,
                          Keep&& keep)
{
    const int start = span.start, stop = start + stages;
    input_pipeline inputs;
    inputs.start(io, start, stop, start + k_chunk, stop);
    forward_training<LogMap>(io, span.first, start, span.alpha_at, alpha, alpha_out);
    for (int c = 0; c < stages; c += k_chunk) {
        int n[k_chunk];
        float gs[k_chunk], gp[k_chunk];
        inputs.take(
            io, start + c + k_chunk, stop, start + c + 2 * k_chunk, stop, n, gs, gp);
        MIMO_UNROLL
        for (int j = 0; j < k_chunk; ++j)
            if (c + j < stages) {
                if (start + c + j == span.alpha_at)
                    for (int s = 0; s < k_states; ++s)
                        alpha_out[s] = alpha[s];
                keep(c, j, alpha, gs[j], gp[j], n[j]);
                forward_step<LogMap>(alpha, gs[j], gp[j], alpha);
            }
    }
}

/// One window of one half iteration: forward recursion from alpha_start at
/// span.first (training up to span.start), backward recursion from beta_end at
/// span.last (training down to the window's end), extrinsic (and APP) outputs
/// for the window's stages. Writes the metrics at span.alpha_at to alpha_out
/// and at span.beta_at to beta_out: the neighbours' starting points in the next
/// iteration.
///
/// To halve the scratch traffic, the forward metrics are kept for even stages
/// only (and without state 0's, which normalisation makes 0; window starts are
/// normalised too); the backward pass recomputes an odd stage's metrics from
/// the even one before it with the same forward_step, so nothing changes.
/// ParityApp: also the parity bits' a-posteriori LLRs (io.parity_app), the
/// stage's 16 branch metrics split by their parity bit instead of their input
/// (the decoder's extrinsic output for iterative receivers).
template <bool LogMap, bool ParityApp = false>
MIMO_HD void map_window(const half_iteration_io& io,
                        const window_span& span,
                        const float* alpha_start,
                        const float* beta_end,
                        float* alpha_out,
                        float* beta_out,
                        const stage_scratch& scratch)
{
    const int start = span.start, len = span.len;
    float alpha[k_states];
    for (int s = 0; s < k_states; ++s)
        alpha[s] = alpha_start[s];
    forward_pass<LogMap>(
        io,
        span,
        len,
        alpha,
        alpha_out,
        [&](int c, int j, const float(&a)[k_states], float gs, float gp, int n) {
            const int i = c + j;
            if (j % 2 == 0) // c is even, so i is even exactly when j is
                for (int s = 1; s < k_states; ++s)
                    scratch.at(i, s) = a[s];
            scratch.at(i, k_states) = gs;
            scratch.at(i, k_states + 1) = gp;
            scratch.at(i, k_states + 2) = int_bits_as_float(n);
        });
    if (start + len == span.alpha_at)
        for (int s = 0; s < k_states; ++s)
            alpha_out[s] = alpha[s];

    float beta[k_states];
    for (int s = 0; s < k_states; ++s)
        beta[s] = beta_end[s];
    // The scratch's loads a chunk ahead too, the first chunk's during the training.
    const int last_chunk = (len - 1) / k_chunk * k_chunk;
    scratch_chunk next = {};
    if (len > 0)
        load_scratch(scratch, last_chunk, len, next);
    backward_training<LogMap>(io, start + len, span.last, span.beta_at, beta, beta_out);
    for (int c = last_chunk; c >= 0; c -= k_chunk) {
        const scratch_chunk chunk = next;
        if (c >= k_chunk)
            load_scratch(scratch, c - k_chunk, len, next);
        const int(&n)[k_chunk] = chunk.n;
        const float(&gs)[k_chunk] = chunk.gs;
        const float(&gp)[k_chunk] = chunk.gp;
        const float(&even_alpha)[k_chunk / 2][k_states] = chunk.even_alpha;
        MIMO_UNROLL
        for (int j = k_chunk - 1; j >= 0; --j) {
            if (c + j >= len)
                continue;
            if (start + c + j + 1 == span.beta_at)
                for (int s = 0; s < k_states; ++s)
                    beta_out[s] = beta[s];
            float a[k_states];
            if (j % 2 == 0)
                for (int s = 0; s < k_states; ++s)
                    a[s] = even_alpha[j / 2][s];
            else
                forward_step<LogMap>(even_alpha[j / 2], gs[j - 1], gp[j - 1], a);
            output_stage<LogMap, ParityApp>(
                io, start + c + j, n[j], a, gs[j], gp[j], beta);
        }
    }
    if (start == span.beta_at)
        for (int s = 0; s < k_states; ++s)
            beta_out[s] = beta[s];
}

} // namespace detail
} // namespace mimo_gpu
