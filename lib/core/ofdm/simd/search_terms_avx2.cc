// sample_terms_avx2 (search_terms_avx2.h). Only the functions below the target
// pragma are built for AVX2. Each operation mirrors frame_search.cc's scalar
// sample_terms: a sample counts as zero unless both its parts are finite (v - v
// == 0, then the parts ANDed with the mask: +0.0 as the scalar's "ok ? v : 0.0");
// float to double is exact; per antenna re*re + im*im, ar*br + ai*bi and ar*bi -
// ai*br (HADDPD / HSUBPD add the first of a pair to the second, as written), the
// antennas summed in order from +0 (no FMA: the target is AVX2 alone and the
// library is built with -ffp-contract=off). Plain loads and in-register
// shuffles: gathers cost several times more where microcode guards them.
#include "search_terms_avx2.h"

#include <immintrin.h>

#include <algorithm>
#include <vector>

#pragma GCC push_options
#pragma GCC target("avx2")

namespace mimo_gpu {
namespace detail {

namespace {

/// Four floats (two complex values) to double, a value zeroed unless both its
/// parts are finite (v - v == 0).
inline __m256d finite_to_double(const float* p)
{
    const __m128 v = _mm_loadu_ps(p);
    __m128 ok = _mm_cmp_ps(_mm_sub_ps(v, v), _mm_setzero_ps(), _CMP_EQ_OQ);
    ok = _mm_and_ps(ok, _mm_permute_ps(ok, _MM_SHUFFLE(2, 3, 0, 1)));
    return _mm256_cvtps_pd(_mm_and_ps(v, ok));
}

/// hadd/hsub leave the four complex values' results as [0, 2, 1, 3].
inline __m256d in_order(__m256d h)
{
    return _mm256_permute4x64_pd(h, _MM_SHUFFLE(3, 1, 2, 0));
}

/// re^2 + im^2 of the four complex values at p.
inline __m256d norms(const float* p)
{
    const __m256d a = finite_to_double(p), b = finite_to_double(p + 4);
    return in_order(_mm256_hadd_pd(_mm256_mul_pd(a, a), _mm256_mul_pd(b, b)));
}

/// conj(a) b of the four complex values at pa and pb: ar br + ai bi and ar bi - ai br.
inline void products(const float* pa, const float* pb, __m256d& re, __m256d& im)
{
    const __m256d a0 = finite_to_double(pa), a1 = finite_to_double(pa + 4);
    const __m256d b0 = finite_to_double(pb), b1 = finite_to_double(pb + 4);
    re = in_order(_mm256_hadd_pd(_mm256_mul_pd(a0, b0), _mm256_mul_pd(a1, b1)));
    const __m256d s0 = _mm256_permute_pd(b0, 0b0101), s1 = _mm256_permute_pd(b1, 0b0101);
    im = in_order(_mm256_hsub_pd(_mm256_mul_pd(a0, s0), _mm256_mul_pd(a1, s1)));
}

/// out[j] = ((0 + t[j nr]) + t[j nr + 1]) + ... for j < count (a multiple of
/// four): each sample's antennas summed in order from a positive zero, as the
/// scalar loop's "sum = 0; sum += term" (0 + -0 is +0 there too).
void sum_antennas(const double* t, int nr, size_t count, double* out)
{
    const __m256d zero = _mm256_setzero_pd();
    for (size_t j = 0; j < count; j += 4) {
        const double* q = t + j * size_t(nr);
        __m256d sum;
        if (nr == 1) {
            sum = _mm256_add_pd(zero, _mm256_loadu_pd(q));
        } else if (nr == 2) { // [s0a0 s0a1 s1a0 s1a1], [s2a0 s2a1 s3a0 s3a1]
            const __m256d lo = _mm256_loadu_pd(q), hi = _mm256_loadu_pd(q + 4);
            sum = in_order(_mm256_add_pd(_mm256_add_pd(zero, _mm256_unpacklo_pd(lo, hi)),
                                         _mm256_unpackhi_pd(lo, hi)));
        } else if (nr == 4) { // a 4x4 transpose: one register an antenna
            const __m256d t0 = _mm256_loadu_pd(q), t1 = _mm256_loadu_pd(q + 4),
                          t2 = _mm256_loadu_pd(q + 8), t3 = _mm256_loadu_pd(q + 12);
            const __m256d u0 = _mm256_unpacklo_pd(t0, t1),
                          u1 = _mm256_unpackhi_pd(t0, t1),
                          u2 = _mm256_unpacklo_pd(t2, t3),
                          u3 = _mm256_unpackhi_pd(t2, t3);
            sum = _mm256_add_pd(zero, _mm256_permute2f128_pd(u0, u2, 0x20));
            sum = _mm256_add_pd(sum, _mm256_permute2f128_pd(u1, u3, 0x20));
            sum = _mm256_add_pd(sum, _mm256_permute2f128_pd(u0, u2, 0x31));
            sum = _mm256_add_pd(sum, _mm256_permute2f128_pd(u1, u3, 0x31));
        } else {
            for (size_t k = 0; k < 4; ++k) {
                double s = 0;
                for (int r = 0; r < nr; ++r)
                    s += q[k * size_t(nr) + size_t(r)];
                out[j + k] = s;
            }
            continue;
        }
        _mm256_storeu_pd(out + j, sum);
    }
}

/// Samples per block: the block's per-antenna terms stay in L1.
constexpr size_t k_block = 128;

} // namespace

terms_done sample_terms_avx2(const cfloat* x,
                             int nr,
                             int L,
                             size_t begin,
                             size_t end,
                             size_t terms,
                             double* cr,
                             double* ci,
                             double* e)
{
    // Each complex value's term first (four values at a time, in the
    // interleaved order the samples come in), then each sample's antennas summed.
    const float* f = reinterpret_cast<const float*>(x);
    const size_t floats_per_sample = 2 * size_t(nr);
    const size_t lag = size_t(L) * floats_per_sample;
    thread_local std::vector<double> t_re, t_im;
    t_re.resize(k_block * size_t(nr));
    t_im.resize(k_block * size_t(nr));
    const size_t energy_end = begin + (end > begin ? (end - begin) / 4 * 4 : 0);
    for (size_t m0 = begin; m0 < energy_end; m0 += k_block) {
        const size_t count = std::min(k_block, energy_end - m0);
        const float* p = f + m0 * floats_per_sample;
        for (size_t k = 0; k < count * size_t(nr); k += 4)
            _mm256_storeu_pd(t_re.data() + k, norms(p + 2 * k));
        sum_antennas(t_re.data(), nr, count, e + m0);
    }
    const size_t stop = std::min(end, terms);
    const size_t product_end = begin + (stop > begin ? (stop - begin) / 4 * 4 : 0);
    for (size_t m0 = begin; m0 < product_end; m0 += k_block) {
        const size_t count = std::min(k_block, product_end - m0);
        const float* p = f + m0 * floats_per_sample;
        for (size_t k = 0; k < count * size_t(nr); k += 4) {
            __m256d re, im;
            products(p + 2 * k, p + 2 * k + lag, re, im);
            _mm256_storeu_pd(t_re.data() + k, re);
            _mm256_storeu_pd(t_im.data() + k, im);
        }
        sum_antennas(t_re.data(), nr, count, cr + m0);
        sum_antennas(t_im.data(), nr, count, ci + m0);
    }
    return { energy_end, product_end };
}

} // namespace detail
} // namespace mimo_gpu

#pragma GCC pop_options
