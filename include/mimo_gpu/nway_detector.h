// N-way parallel SSFE soft-output MIMO detector (paper: nway-mimo-detector-gpu,
// Alg. 2 and 3): N search passes, each with its own detection order, whose
// hypotheses are merged by minimum.
#pragma once

#include <mimo_gpu/backend.h>
#include <mimo_gpu/constellation.h>
#include <mimo_gpu/qr_decomposition.h>
#include <mimo_gpu/types.h>

#include <memory>

namespace mimo_gpu {

/// LLR magnitude given to a bit whose hypothesis or counter-hypothesis no
/// candidate reached, when clipping is off (with clipping: the clip value).
constexpr float k_unreached_llr = 1000.0f;

struct nway_config {
    mimo_shape shape;
    modulation mod = modulation::qam16;
    int passes = 1;        ///< N, 1..nt
    float llr_clip = 0.0f; ///< > 0: LLRs are clipped to [-clip, clip]; 0: no clipping
    void validate() const; ///< throws std::invalid_argument
};

class nway_engine; // implementation interface (CPU or CUDA), lib/core/detect/

/// LLRs: L = (min_{b=1} d - min_{b=0} d) / N0 over the candidate lists of all
/// passes, d = |y - Hs|^2; output nt*Q floats per problem, stream t's bits at
/// [t*Q, t*Q+Q) in 3GPP label order.
class nway_detector
{
public:
    explicit nway_detector(const nway_config& config, backend requested = backend::automatic);
    ~nway_detector();
    nway_detector(nway_detector&&) noexcept;
    nway_detector& operator=(nway_detector&&) noexcept;

    const nway_config& config() const { return m_config; }
    backend active_backend() const;
    qr_layout input_layout() const { return {m_config.shape.nt, m_config.passes}; }
    int llrs_per_problem() const;

    void set_llr_clip(float clip); ///< >= 0, finite

    /// From QR items (layout input_layout()), host memory. n0 > 0 and finite.
    /// Throws std::invalid_argument on non-finite items, naming the first bad problem.
    void detect_qr(const float* items, size_t batch, float n0, float* llr);

    /// From (H, y), host memory: QR and search in one pipeline (on the device
    /// for CUDA, with no host round trip between them).
    void detect(const cfloat* H, const cfloat* y, size_t batch, float n0, float* llr);

    /// Device memory, asynchronous on `stream` (CUDA backend only, else std::logic_error).
    /// Input errors are reported by the next check_device_status.
    void detect_qr_device(const float* d_items, size_t batch, float n0, float* d_llr, cuda_stream_t stream);
    /// (H, y) in device memory: QR and search fused in one kernel.
    void detect_device(const cfloat* d_H, const cfloat* d_y, size_t batch, float n0, float* d_llr,
                       cuda_stream_t stream);
    void check_device_status(cuda_stream_t stream);

private:
    nway_config m_config;
    std::unique_ptr<nway_engine> m_engine;
};

} // namespace mimo_gpu
