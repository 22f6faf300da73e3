// Exhaustive max-log ML soft detector: the exact reference for every other detector.
#pragma once

#include <mimo_gpu/backend.h>
#include <mimo_gpu/constellation.h>
#include <mimo_gpu/types.h>

#include <memory>

namespace mimo_gpu {

/// Largest candidate count M^nt the ML detector accepts (4x4 64-QAM is 2^24).
constexpr uint64_t k_ml_max_candidates = uint64_t(1) << 24;

class ml_engine; // implementation interface (CPU or CUDA), lib/core/detect/

/// L = (min_{s: b=1} |y - Hs|^2 - min_{s: b=0} |y - Hs|^2) / N0 over all M^nt vectors.
class ml_detector
{
public:
    /// Throws std::invalid_argument when M^nt > k_ml_max_candidates.
    ml_detector(mimo_shape shape, modulation mod, backend requested = backend::automatic);
    ~ml_detector();
    ml_detector(ml_detector&&) noexcept;
    ml_detector& operator=(ml_detector&&) noexcept;

    const mimo_shape& shape() const { return m_shape; }
    modulation mod() const { return m_mod; }
    backend active_backend() const;
    int llrs_per_problem() const;

    /// Host memory: H batch*nr*nt, y batch*nr, llr batch*nt*Q. n0 > 0 and finite.
    /// Non-finite H or y throws std::invalid_argument naming the first bad problem.
    void detect(const cfloat* H, const cfloat* y, size_t batch, float n0, float* llr);

private:
    mimo_shape m_shape;
    modulation m_mod;
    std::unique_ptr<ml_engine> m_engine;
};

} // namespace mimo_gpu
