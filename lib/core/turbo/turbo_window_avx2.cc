// map_window_avx2 (turbo_window_avx2.h). Only the functions below the target
// pragma are built for AVX2: the inline functions of the headers above it are
// not (compiled with -mavx2, this file's copies of them could be the ones the
// linker keeps for the scalar code too); it is called only where cpu_has_avx2().
// Every operation mirrors map_window<false>: m0 = (alpha[s0] + gs) + (+-gp),
// m1 = (alpha[s1] - gs) + (+-gp) (+-gp is gp times +-1, exact), max as
// "a > b ? a : b" (MAXPS returns its second operand otherwise, as the ternary
// does), normalisation by state 0; backward to0 = (gs + (+-gp)) + beta[next],
// to1 = (-gs + (+-gp)) + beta[next] (the sign flipped by XOR, as negation
// does), and the APP maxima over the states taken in state order.
#include "turbo_window_avx2.h"

#include <immintrin.h>

#include <algorithm>

#pragma GCC push_options
#pragma GCC target("avx2")

namespace mimo_gpu {
namespace detail {

namespace {

struct trellis_vectors {
    __m256i prev0, prev1, next0, next1, zero;
    __m256 fsign0, fsign1, bsign0, bsign1, negate;
};

trellis_vectors make_vectors()
{
    alignas(32) int p0[k_states], p1[k_states], n0[k_states], n1[k_states];
    alignas(32) float f0[k_states], f1[k_states], b0[k_states], b1[k_states];
    for (int s = 0; s < k_states; ++s) {
        p0[s] = previous_state(s, 0);
        p1[s] = previous_state(s, 1);
        f0[s] = parity_bit(p0[s], 0) ? -1.0f : 1.0f;
        f1[s] = parity_bit(p1[s], 1) ? -1.0f : 1.0f;
        n0[s] = next_state(s, 0);
        n1[s] = next_state(s, 1);
        b0[s] = parity_bit(s, 0) ? -1.0f : 1.0f;
        b1[s] = parity_bit(s, 1) ? -1.0f : 1.0f;
    }
    trellis_vectors v;
    v.prev0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(p0));
    v.prev1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(p1));
    v.next0 = _mm256_load_si256(reinterpret_cast<const __m256i*>(n0));
    v.next1 = _mm256_load_si256(reinterpret_cast<const __m256i*>(n1));
    v.zero = _mm256_setzero_si256();
    v.fsign0 = _mm256_load_ps(f0);
    v.fsign1 = _mm256_load_ps(f1);
    v.bsign0 = _mm256_load_ps(b0);
    v.bsign1 = _mm256_load_ps(b1);
    v.negate = _mm256_set1_ps(-0.0f);
    return v;
}

const trellis_vectors& vectors()
{
    static const trellis_vectors v = make_vectors();
    return v;
}

/// forward_step<false>
inline __m256 forward(__m256 alpha, float gs, float gp, const trellis_vectors& T)
{
    const __m256 g = _mm256_set1_ps(gs), p = _mm256_set1_ps(gp);
    const __m256 m0 =
        _mm256_add_ps(_mm256_add_ps(_mm256_permutevar8x32_ps(alpha, T.prev0), g),
                      _mm256_mul_ps(p, T.fsign0));
    const __m256 m1 =
        _mm256_add_ps(_mm256_sub_ps(_mm256_permutevar8x32_ps(alpha, T.prev1), g),
                      _mm256_mul_ps(p, T.fsign1));
    const __m256 next = _mm256_max_ps(m0, m1);
    return _mm256_sub_ps(next, _mm256_permutevar8x32_ps(next, T.zero));
}

/// The branch metrics into beta: to0 and to1 of every state.
inline void branches(
    __m256 beta, float gs, float gp, const trellis_vectors& T, __m256& to0, __m256& to1)
{
    const __m256 g = _mm256_set1_ps(gs), p = _mm256_set1_ps(gp);
    to0 = _mm256_add_ps(_mm256_add_ps(g, _mm256_mul_ps(p, T.bsign0)),
                        _mm256_permutevar8x32_ps(beta, T.next0));
    to1 = _mm256_add_ps(
        _mm256_add_ps(_mm256_xor_ps(g, T.negate), _mm256_mul_ps(p, T.bsign1)),
        _mm256_permutevar8x32_ps(beta, T.next1));
}

/// backward_step<false>
inline __m256 backward(__m256 beta, float gs, float gp, const trellis_vectors& T)
{
    __m256 to0, to1;
    branches(beta, gs, gp, T, to0, to1);
    const __m256 prev = _mm256_max_ps(to0, to1);
    return _mm256_sub_ps(prev, _mm256_permutevar8x32_ps(prev, T.zero));
}

/// The largest of the eight values as map_window finds it, state after state.
/// Any order gives the same value but for the sign of a zero (a tie of +0 and
/// -0): a tree of MAXPS, and the sequence only where the maximum is zero.
inline float max_in_order(__m256 v)
{
    __m256 m = _mm256_max_ps(v, _mm256_permute2f128_ps(v, v, 1));
    m = _mm256_max_ps(m, _mm256_shuffle_ps(m, m, _MM_SHUFFLE(1, 0, 3, 2)));
    m = _mm256_max_ps(m, _mm256_shuffle_ps(m, m, _MM_SHUFFLE(2, 3, 0, 1)));
    const float tree = _mm256_cvtss_f32(m);
    if (tree != 0.0f)
        return tree;
    alignas(32) float x[k_states];
    _mm256_store_ps(x, v);
    float seq = x[0];
    for (int s = 1; s < k_states; ++s)
        seq = seq > x[s] ? seq : x[s];
    return seq;
}

/// max_in_order(x) and max_in_order(y) at once: the same tree (lane i against
/// lane i + 4, then within each half), x's in the low half, y's in the high one.
inline void max_in_order_pair(__m256 x, __m256 y, float& mx, float& my)
{
    __m256 m = _mm256_max_ps(_mm256_permute2f128_ps(x, y, 0x20),
                             _mm256_permute2f128_ps(x, y, 0x31));
    m = _mm256_max_ps(m, _mm256_shuffle_ps(m, m, _MM_SHUFFLE(1, 0, 3, 2)));
    m = _mm256_max_ps(m, _mm256_shuffle_ps(m, m, _MM_SHUFFLE(2, 3, 0, 1)));
    mx = _mm256_cvtss_f32(m);
    my = _mm_cvtss_f32(_mm256_extractf128_ps(m, 1));
    if (mx == 0.0f) // a tie of +0 and -0 keeps the sequence's sign (max_in_order)
        mx = max_in_order(x);
    if (my == 0.0f)
        my = max_in_order(y);
}

/// A stage's branch inputs, as load_chunk makes them.
inline void stage_inputs(const half_iteration_io& io, int c, int& n, float& gs, float& gp)
{
    n = io.pi ? io.pi[c] : c;
    gs = 0.5f * (channel_llr(io.systematic[n]) + io.apriori[n]);
    gp = 0.5f * channel_llr(io.parity[c]);
}

} // namespace

void map_window_avx2(const half_iteration_io& io,
                     const window_span& span,
                     const float* alpha_start,
                     const float* beta_end,
                     float* alpha_out,
                     float* beta_out,
                     float* scratch)
{
    // The forward and the backward recursion run side by side, one stage of
    // each per step: each is a chain of dependent instructions (permute, add,
    // max, normalise: ~22 cycles a stage) that alone leaves the core mostly
    // idle (a single window: 13.0 -> 10.7 ns a stage, one core). A stage's APP
    // is computed by whichever recursion reaches it second: the backward one
    // in the window's first half (from the alpha the forward one stored), the
    // forward one in the second half (from the branch metrics the backward one
    // stored). Every value comes from the same operations as map_window's, so
    // the results are identical.
    const trellis_vectors& T = vectors();
    const int start = span.start, len = span.len;
    __m256 alpha = _mm256_loadu_ps(alpha_start);
    __m256 beta = _mm256_loadu_ps(beta_end);

    // Training: forward over [first, start), backward over [start + len, last).
    const int forward_training = start - span.first;
    const int backward_training = span.last - (start + len);
    for (int k = 0; k < std::max(forward_training, backward_training); ++k) {
        if (k < forward_training) {
            const int c = span.first + k;
            int n;
            float gs, gp;
            stage_inputs(io, c, n, gs, gp);
            if (c == span.alpha_at)
                _mm256_storeu_ps(alpha_out, alpha);
            alpha = forward(alpha, gs, gp, T);
        }
        if (k < backward_training) {
            const int c = span.last - 1 - k;
            int n;
            float gs, gp;
            stage_inputs(io, c, n, gs, gp);
            if (c + 1 == span.beta_at)
                _mm256_storeu_ps(beta_out, beta);
            beta = backward(beta, gs, gp, T);
        }
    }

    // Step k takes the forward recursion through stage k and the backward one
    // through stage len - 1 - k. Scratch per stage: alpha, then to0 and to1.
    constexpr int words = k_avx2_stage_words;
    const auto app_of = [&](__m256 a, __m256 to0, __m256 to1, float gs, int n) {
        float m0, m1;
        max_in_order_pair(_mm256_add_ps(a, to0), _mm256_add_ps(a, to1), m0, m1);
        const float app = m0 - m1;
        // systematic + a-priori = 2 gs exactly (scaling by 2 is exact in float)
        io.extrinsic[n] = extrinsic_llr(io.extrinsic_scale, app, 2.0f * gs);
        if (io.app)
            io.app[n] = app;
    };
    for (int k = 0; k < len; ++k) {
        { // forward, stage k: its APP here where the backward one came first
            int n;
            float gs, gp;
            stage_inputs(io, start + k, n, gs, gp);
            if (start + k == span.alpha_at)
                _mm256_storeu_ps(alpha_out, alpha);
            float* st = scratch + size_t(k) * words;
            if (len - 1 - k < k)
                app_of(alpha,
                       _mm256_loadu_ps(st + k_states),
                       _mm256_loadu_ps(st + 2 * k_states),
                       gs,
                       n);
            else
                _mm256_storeu_ps(st, alpha);
            alpha = forward(alpha, gs, gp, T);
        }
        { // backward, stage j: its APP here once alpha_j is stored
            const int j = len - 1 - k;
            int n;
            float gs, gp;
            stage_inputs(io, start + j, n, gs, gp);
            if (start + j + 1 == span.beta_at)
                _mm256_storeu_ps(beta_out, beta);
            float* st = scratch + size_t(j) * words;
            __m256 to0, to1;
            branches(beta, gs, gp, T, to0, to1);
            if (j <= k) {
                app_of(_mm256_loadu_ps(st), to0, to1, gs, n);
            } else {
                _mm256_storeu_ps(st + k_states, to0);
                _mm256_storeu_ps(st + 2 * k_states, to1);
            }
            const __m256 prev = _mm256_max_ps(to0, to1);
            beta = _mm256_sub_ps(prev, _mm256_permutevar8x32_ps(prev, T.zero));
        }
    }
    if (start + len == span.alpha_at)
        _mm256_storeu_ps(alpha_out, alpha);
    if (start == span.beta_at)
        _mm256_storeu_ps(beta_out, beta);
}

} // namespace detail
} // namespace mimo_gpu

#pragma GCC pop_options
