// Error vector magnitude (EVM) of equalised symbols: how far a receiver's
// symbols lie from the ones sent, relative to their power, per stream. The
// measure radio engineers read beside BLER (docs/front_end.md, "EVM").
#pragma once

#include <mimo_gpu/constellation.h>

#include <cstddef>
#include <vector>

namespace mimo_gpu {

struct evm_measurement {
    /// Per stream u: sqrt(sum_p |z_pu - x_pu|^2 / sum_p |x_pu|^2) over the
    /// symbols measured, a fraction (0.05 = 5 %); NaN where none was measured.
    std::vector<double> per_stream;
    double overall = 0;  ///< the same over every stream's symbols (NaN: none)
    size_t measured = 0; ///< symbols in the sums
    size_t left_out = 0; ///< symbols whose z was not finite (erased elements)
};

/// EVM of `problems` resource elements of nt streams: z the receiver's unbiased
/// equalised symbols (e.g. mmse_detector::equalize), x the symbols sent, both
/// at [p * nt + u]. With x null the reference is the constellation point
/// nearest to z (decision-directed, blind: it equals the data-aided EVM while no
/// symbol crosses a decision boundary, and falls below it after). A symbol whose
/// z is not finite is left out and counted. Throws std::invalid_argument for a
/// null z with problems > 0 or nt < 1.
evm_measurement measure_evm(
    const cfloat* z, const cfloat* x, size_t problems, int nt, const constellation& c);

} // namespace mimo_gpu
