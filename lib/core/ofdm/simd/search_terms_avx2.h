// The search metric's per-sample terms (frame_search.cc's sample_terms) four
// samples at a time in AVX2 registers: built for AVX2 alone (a target pragma,
// as turbo_window_avx2.cc) and called only where the processor has it. The
// same double operations in the same order as the scalar loop, so every term,
// and with it every metric value and frame the search finds, is identical to
// the bit: the scalar loop does scalar double arithmetic one sample at a time
// (about 14 ns a sample with two antennas, the search's largest cost on the
// CPU); this one converts and masks four samples per instruction. Called only
// where cpu_has_avx2() (runtime/cpu_features.h).
#pragma once

#include <mimo_gpu/types.h>

#include "../../runtime/cpu_features.h"

#include <cstddef>

namespace mimo_gpu {
namespace detail {

/// For m in [begin, begin + 4 * quads): e[m] = sum_r |x_r[m]|^2 and, for m <
/// terms, c[m] = sum_r conj(x_r[m]) x_r[m + L] (real parts to cr, imaginary to
/// ci), in double, the antennas summed in order r = 0, 1, ...; a sample with a
/// non-finite part counts as zero. x: nr antennas a sample, interleaved.
/// Does a multiple of four samples of each; the caller's scalar loop does the
/// rest, from the positions returned.
struct terms_done {
    size_t energy_end = 0, product_end = 0;
};
terms_done sample_terms_avx2(const cfloat* x,
                             int nr,
                             int L,
                             size_t begin,
                             size_t end,
                             size_t terms,
                             double* cr,
                             double* ci,
                             double* e);

} // namespace detail
} // namespace mimo_gpu
