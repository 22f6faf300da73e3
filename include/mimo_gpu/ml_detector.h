// Exhaustive max-log ML soft detector: the exact reference for every other detector.
#pragma once

#include <mimo_gpu/backend.h>
#include <mimo_gpu/constellation.h>
#include <mimo_gpu/detector.h>
#include <mimo_gpu/types.h>

#include <memory>

namespace mimo_gpu {

/// Largest candidate count M^nt the ML detector accepts (4x4 64-QAM is 2^24).
constexpr uint64_t k_ml_max_candidates = uint64_t(1) << 24;

/// L = (min_{s: b=1} |y - Hs|^2 - min_{s: b=0} |y - Hs|^2) / N0 over all M^nt vectors.
/// The registry's "ml" family; this class makes it without a name.
class ml_detector final : public detector
{
public:
    /// Throws std::invalid_argument when M^nt > k_ml_max_candidates.
    ml_detector(mimo_shape shape, modulation mod, backend requested = backend::automatic);
};

} // namespace mimo_gpu
