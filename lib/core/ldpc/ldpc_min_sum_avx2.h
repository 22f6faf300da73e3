// The CPU engine's half-precision min-sum layer, eight lifted checks at a time
// in AVX2 registers, rounding to half with F16C's conversions (round to
// nearest even, subnormals kept): lane for lane the operations of the scalar
// layer (ldpc_decoder.cc, ldpc_half.h), so the results are identical to the
// bit. Used where the processor has AVX2 and F16C (decided at run time).
#pragma once

#include "../runtime/cpu_features.h"

#include <mimo_gpu/nr_ldpc.h>

namespace mimo_gpu {
namespace detail {

/// One row of the layered schedule for the checks z in [0, Zc - Zc % 8):
/// L (the block's a-posteriori LLRs, half values in floats) and R (the row's
/// messages, edge-major: R[e * Zc + z]) updated in place. column, shift: per
/// edge of the row (first .. first + degree - 1).
struct ldpc_row_view {
    const int* column;
    const int* shift;
    int first, degree, Zc;
    bool offset_rule; ///< offset min-sum; else normalized
    float rule_value; ///< the offset or the scale, already a half value
};
void ldpc_min_sum_rows_avx2(const ldpc_row_view& row, float* L, float* R);

} // namespace detail
} // namespace mimo_gpu
