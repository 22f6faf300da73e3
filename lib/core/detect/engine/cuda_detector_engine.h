// The CUDA shell every family's CUDA engine shares (CUDA builds only): the
// host path (the caller's memory seen from the device, or copied to it; the
// report collected; the bad problems' LLRs zeroed) and the device path
// (asynchronous, bad problems erased on the device, reported by the next
// check). A family's CUDA engine implements launch() alone; an extension
// (detect_qr, equalize) runs its own launches through host_call/device_call.
#pragma once

#include "../../runtime/cuda_staging.h"
#include "../../runtime/device_faults.h"
#include "../pam_table.h"
#include "detector_engine.h"

#include <vector>

namespace mimo_gpu {
namespace detail {

/// How a family's kernels want their data.
struct cuda_engine_options {
    /// false: kernels read H, y (and priors) in place (pinned memory) or from a
    /// pinned staging copy, over PCIe. true: the host path first copies them to
    /// the device (DMA at full PCIe speed): for kernels that read their input
    /// more than once or in a short first phase, where in-place reads would not
    /// overlap with work.
    bool copy_inputs = false;
    /// false: kernels write the LLRs into pinned (mapped) host memory. true: into
    /// device memory, copied back after the kernels.
    bool copy_outputs = false;
    /// true: the kernels write 0 for every problem they report bad, so the
    /// device path needs no erasing pass after them.
    bool kernels_zero_bad_problems = false;
};

class cuda_detector_engine : public detector_engine
{
public:
    backend kind() const final { return backend::cuda; }
    size_t scratch_per_problem() const final;

    detection_report detect(const detector_input& in, float clip, float* llr) final;
    void detect_device(const detector_input& in,
                       float clip,
                       float* d_llr,
                       cuda_stream_t stream) final;
    detection_report check_device_status(cuda_stream_t stream) final;

protected:
    /// nt * Q LLRs per problem; item_bytes: the family's own device scratch
    /// per problem (for scratch_per_problem); m_pam: the constellation's tables.
    cuda_detector_engine(mimo_shape shape,
                         modulation mod,
                         cuda_engine_options options = {},
                         size_t item_bytes = 0);

    /// Enqueues the detection of in.problems() (> 0) problems whose inputs
    /// (device pointers) and LLRs are in `in` and at d_llr, on `stream`, bad
    /// problems reported into `sink`.
    virtual void launch(const detector_input& in,
                        float clip,
                        float* d_llr,
                        fault_sink sink,
                        cudaStream_t stream) = 0;

    /// The host path of any call of `problems` problems: enqueue(sink, stream)
    /// on the engine's stream, then wait, report, and zero the bad problems'
    /// LLRs at `llr` (may be null: the call writes no LLRs).
    template <typename Enqueue>
    detection_report host_call(size_t problems, float* llr, Enqueue enqueue)
    {
        if (problems == 0)
            return {};
        const cudaStream_t s = m_stream.get();
        try {
            enqueue(m_host_faults.sink(problems, s), s);
        } catch (...) {
            m_host_faults.abandon(s); // the next call reports its own problems only
            throw;
        }
        return finish_host_call(llr);
    }
    /// The device path of any call: enqueue(sink) on `stream`, then the bad
    /// problems' LLRs at d_llr erased on the device.
    template <typename Enqueue>
    void device_call(size_t problems, float* d_llr, cudaStream_t stream, Enqueue enqueue)
    {
        if (problems == 0)
            return;
        try {
            enqueue(m_faults.sink(problems, stream));
        } catch (...) {
            m_faults.forget_last_batch();
            throw;
        }
        if (!m_options.kernels_zero_bad_problems)
            m_faults.erase(d_llr, m_llrs, 0.0f, stream);
    }
    /// The device view of a host call's inputs (H, y, priors), by the options.
    detector_input device_inputs(const detector_input& in, cudaStream_t stream);
    /// The device view of a host call's LLRs (finished by host_call).
    float* device_llrs(float* llr, size_t problems, cudaStream_t stream);

    const mimo_shape& shape() const { return m_shape; }
    size_t llrs_per_problem() const { return m_llrs; }

    const pam_table m_pam;

private:
    detection_report finish_host_call(float* llr);

    mimo_shape m_shape;
    size_t m_llrs;
    cuda_engine_options m_options;
    size_t m_item_bytes;
    cuda_stream m_stream;
    device_array<cfloat> m_dH, m_dy; // copied inputs (copy_inputs)
    device_array<float> m_dpriors;
    device_array<float> m_dllr; // LLRs before the copy back (copy_outputs)
    host_input<cfloat> m_H, m_y;
    host_input<float> m_priors;
    host_output<float> m_llr;
    float* m_copy_back = nullptr; // the caller's LLRs (copy_outputs)
    size_t m_copy_back_count = 0;
    device_faults m_host_faults; // the host path's, apart from device calls still pending
    device_faults m_faults;      // the device path's, collected by check_device_status
    std::vector<fault_word> m_flags; // every flag of a batch with many erasures
};

} // namespace detail
} // namespace mimo_gpu
