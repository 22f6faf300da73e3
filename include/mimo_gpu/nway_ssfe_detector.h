// N-way parallel SSFE soft-output MIMO detector (paper: nway-mimo-detector-gpu,
// Alg. 2 and 3): N search passes, each with its own detection order, whose
// hypotheses are merged by minimum.
#pragma once

#include <mimo_gpu/backend.h>
#include <mimo_gpu/batched_qr.h>
#include <mimo_gpu/constellation.h>
#include <mimo_gpu/detector.h>
#include <mimo_gpu/types.h>

#include <memory>

namespace mimo_gpu {

struct nway_config {
    mimo_shape shape;
    modulation mod = modulation::qam16;
    int passes = 1; ///< N, 1..nt
    float llr_clip =
        k_default_llr_clip; ///< > 0: LLRs are clipped to [-clip, clip]; 0: no clipping
    void validate() const;  ///< throws std::invalid_argument
};

/// LLRs: L = (min_{b=1} d - min_{b=0} d) / N0 over the candidate lists of all
/// passes, d = |y - Hs|^2; output nt*Q floats per problem, stream t's bits at
/// [t*Q, t*Q+Q) in 3GPP label order. detect(H, y) runs QR and search in one
/// pipeline (fused on the device); detect_qr takes batched_qr's items.
/// The registry's "nway" family (parameters passes, llr_clip); this class adds
/// the QR-item entry points.
class nway_ssfe_detector final : public detector
{
public:
    explicit nway_ssfe_detector(const nway_config& config,
                                backend requested = backend::automatic);

    /// The configuration, llr_clip as currently set.
    nway_config config() const;
    qr_layout input_layout() const { return { shape().nt, m_passes }; }

    void set_llr_clip(float clip) { set_parameter("llr_clip", clip); } ///< >= 0, finite

    using detector::detect;
    using detector::detect_device;

    /// From QR items (layout input_layout()), host memory. n0 > 0 and finite.
    /// A problem with a non-finite item (batched_qr's erased items are NaN)
    /// gets LLRs 0 and follows the bad-problem policy (erasures.h).
    detection_report detect_qr(const float* items, size_t batch, float n0, float* llr);

    /// Device memory, asynchronous on `stream` (CUDA backend only, else
    /// std::logic_error). Bad problems are erased on the device and reported by the next
    /// check_device_status.
    void detect_qr_device(
        const float* d_items, size_t batch, float n0, float* d_llr, cuda_stream_t stream);
    /// (H, y) in device memory: QR and search fused in one kernel (S = 1).
    void detect_device(const cfloat* d_H,
                       const cfloat* d_y,
                       size_t batch,
                       float n0,
                       float* d_llr,
                       cuda_stream_t stream);

private:
    int m_passes;
};

} // namespace mimo_gpu
