// ldpc_min_sum_rows_avx2 (ldpc_min_sum_avx2.h). Only the functions below the
// target pragma are built for AVX2 and F16C; they are called only where
// cpu_has_avx2_f16c(). Lane for lane as the scalar layer: Q = half(L - R);
// |Q| by clearing the sign; the least two as min2 = min(min2, max(min1, a)),
// min1 = min(min1, a) (the scalar "if a < least ... else if a < second" gives
// the same pair); the edge of the least where a < min1; the signs' XOR;
// magnitudes half(least - offset) floored at 0 or half(scale * least), at most
// the limit; message = magnitude with the sign of the others (an XOR of the
// sign bit, as negation); L = clamp(half(Q + message)).
#include "ldpc_min_sum_avx2.h"

#include "ldpc_engine.h"

#include <immintrin.h>

#pragma GCC push_options
#pragma GCC target("avx2,f16c")

namespace mimo_gpu {
namespace detail {

namespace {

inline __m256 to_half(__m256 x)
{
    return _mm256_cvtph_ps(
        _mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
}

/// The eight variables of edge e for checks z0 .. z0 + 7: contiguous unless
/// the cyclic shift wraps inside them.
struct edge_access {
    float* row; ///< the edge's column of L
    int start;  ///< (z0 + shift) mod Zc
    bool wraps;
    __m256i index;

    edge_access(float* L, const ldpc_row_view& v, int e, int z0)
    {
        row = L + size_t(v.column[e]) * size_t(v.Zc);
        start = z0 + v.shift[e];
        start -= start >= v.Zc ? v.Zc : 0;
        wraps = start + 8 > v.Zc;
        if (wraps) {
            const __m256i lanes = _mm256_add_epi32(
                _mm256_set1_epi32(start), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
            const __m256i over = _mm256_cmpgt_epi32(lanes, _mm256_set1_epi32(v.Zc - 1));
            index =
                _mm256_sub_epi32(lanes, _mm256_and_si256(over, _mm256_set1_epi32(v.Zc)));
        }
    }
    __m256 load() const
    {
        return wraps ? _mm256_i32gather_ps(row, index, 4) : _mm256_loadu_ps(row + start);
    }
    void store(__m256 x) const
    {
        if (!wraps) {
            _mm256_storeu_ps(row + start, x);
            return;
        }
        alignas(32) float lane[8];
        alignas(32) int at[8];
        _mm256_store_ps(lane, x);
        _mm256_store_si256(reinterpret_cast<__m256i*>(at), index);
        for (int i = 0; i < 8; ++i)
            row[at[i]] = lane[i];
    }
};

} // namespace

void ldpc_min_sum_rows_avx2(const ldpc_row_view& v, float* L, float* R)
{
    const __m256 sign = _mm256_set1_ps(-0.0f), zero = _mm256_setzero_ps();
    const __m256 limit = _mm256_set1_ps(k_ldpc_half_limit),
                 negative_limit = _mm256_set1_ps(-k_ldpc_half_limit);
    const __m256 infinity = _mm256_set1_ps(k_infinity),
                 rule = _mm256_set1_ps(v.rule_value);
    __m256 q[k_ldpc_max_row_degree];
    for (int z0 = 0; z0 + 8 <= v.Zc; z0 += 8) {
        __m256 min1 = infinity, min2 = infinity, least_edge = zero, negative = zero;
        for (int k = 0; k < v.degree; ++k) {
            const int e = v.first + k;
            const edge_access x(L, v, e, z0);
            const __m256 Rk = _mm256_loadu_ps(R + size_t(e) * size_t(v.Zc) + size_t(z0));
            q[k] = to_half(_mm256_sub_ps(x.load(), Rk));
            const __m256 a = _mm256_andnot_ps(sign, q[k]);
            const __m256 less = _mm256_cmp_ps(a, min1, _CMP_LT_OQ);
            min2 = _mm256_min_ps(min2, _mm256_max_ps(min1, a));
            min1 = _mm256_min_ps(min1, a);
            least_edge = _mm256_blendv_ps(least_edge, _mm256_set1_ps(float(k)), less);
            negative = _mm256_xor_ps(negative, q[k]);
        }
        __m256 to_others, to_least;
        if (v.offset_rule) {
            to_others = _mm256_max_ps(to_half(_mm256_sub_ps(min1, rule)), zero);
            to_least = _mm256_max_ps(to_half(_mm256_sub_ps(min2, rule)), zero);
        } else {
            to_others = to_half(_mm256_mul_ps(rule, min1));
            to_least = to_half(_mm256_mul_ps(rule, min2));
        }
        to_others = _mm256_min_ps(to_others, limit);
        to_least = _mm256_min_ps(to_least, limit);
        for (int k = 0; k < v.degree; ++k) {
            const int e = v.first + k;
            const __m256 second =
                _mm256_cmp_ps(least_edge, _mm256_set1_ps(float(k)), _CMP_EQ_OQ);
            const __m256 magnitude = _mm256_blendv_ps(to_others, to_least, second);
            const __m256 message = _mm256_xor_ps(
                magnitude, _mm256_and_ps(_mm256_xor_ps(negative, q[k]), sign));
            _mm256_storeu_ps(R + size_t(e) * size_t(v.Zc) + size_t(z0), message);
            const __m256 sum = to_half(_mm256_add_ps(q[k], message));
            edge_access(L, v, e, z0)
                .store(_mm256_min_ps(_mm256_max_ps(sum, negative_limit), limit));
        }
    }
}

} // namespace detail
} // namespace mimo_gpu

#pragma GCC pop_options
