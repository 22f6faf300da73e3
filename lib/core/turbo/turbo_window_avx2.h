// The CPU engine's max-log-MAP window with the eight trellis states in one AVX2
// register: the same float operations, in the same order, as map_window
// (turbo_trellis.h), which the CUDA kernels run, so the results are identical
// to the bit; three to four times fewer instructions a trellis stage. Used where
// the processor has AVX2 (decided at run time); map_window otherwise, and for
// log-MAP (whose max* is not associative: the scalar order is kept there).
#pragma once

#include "../runtime/cpu_features.h"
#include "turbo_trellis.h"

namespace mimo_gpu {
namespace detail {

/// Floats of map_window_avx2's scratch per stage of a window: alpha and the
/// two branch metrics.
constexpr int k_avx2_stage_words = 3 * k_states;

/// map_window<false> (max-log-MAP) for one window, its forward and backward
/// recursions side by side. scratch: k_avx2_stage_words floats per stage of
/// the window (this call's own: any layout map_window's callers use is left
/// alone).
void map_window_avx2(const half_iteration_io& io,
                     const window_span& span,
                     const float* alpha_start,
                     const float* beta_end,
                     float* alpha_out,
                     float* beta_out,
                     float* scratch);

} // namespace detail
} // namespace mimo_gpu
