// The CUDA side the two MMSE implementations share (CUDA builds only): the
// host path (inputs copied to the device by DMA, outputs back) and the device
// path, with the fault bookkeeping of every engine. An implementation, the
// hand kernels (mmse_detector.cu) or the cuBLAS/cuSOLVER calls
// (mmse_library.cu), writes enqueue() alone.
#pragma once

#include "../engine/cuda_detector_engine.h"
#include "../pam_table.h"
#include "mmse_engine.h"

#include <vector>

namespace mimo_gpu {
namespace detail {

/// One call's device pointers and values: C channels, S symbols each.
struct mmse_launch {
    const float2* H;
    const float2* y;
    size_t channels;
    int S;
    float n0, clip;
    float* llr;                    ///< may be null
    float2* z;                     ///< may be null
    float* sinr;                   ///< may be null
    const float* priors = nullptr; ///< MMSE-PIC's a-priori LLRs (then z, sinr null)
};

/// The hand kernel's shared memory (mmse_detector.cu): offsets in float2 units.
struct mmse_smem_layout {
    int warps, H, A, X, G, y, pic, floats;
    size_t bytes;
    static mmse_smem_layout of(int B, int U, int warps, bool priors);
};

class cuda_mmse_engine : public cuda_detector_engine, public mmse_equalizer
{
public:
    /// scratch_per_channel: the implementation's device scratch per channel
    /// (counted per problem: S = 1 at worst).
    explicit cuda_mmse_engine(const mmse_config& config, size_t scratch_per_channel = 0);
    detection_report equalize(const detector_input& in, const mmse_outputs& out) final;

protected:
    /// Enqueues one call on `stream`; bad problems are reported into `sink` and
    /// their outputs written as 0.
    virtual void enqueue(const mmse_launch& l, fault_sink sink, cudaStream_t stream) = 0;
    /// The hand kernels: a thread per problem for at most four users without
    /// priors, else a block per channel (the only kernel with priors).
    void enqueue_hand(const mmse_launch& l, fault_sink sink, cudaStream_t stream);
    const mmse_config m_config;
    /// Without priors 8 warps a block; with priors as many as fit (>= 1, or
    /// pic_warps = 0: the shape's MMSE-PIC needs more shared memory than the GPU has).
    mmse_smem_layout m_plain, m_with_priors;
    size_t m_shared_limit = 0;

private:
    void launch(const detector_input& in,
                float clip,
                float* d_llr,
                fault_sink sink,
                cudaStream_t stream) final;

    device_array<cfloat> m_z;
    device_array<float> m_sinr;
};

std::unique_ptr<detector_engine>
make_library_mmse_engine(const mmse_config& config); // mmse_library.cu

} // namespace detail
} // namespace mimo_gpu
