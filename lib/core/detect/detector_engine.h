// What the families made of one engine share (MTT/OT, FSD/SFSD, K-best): the
// engine interface (one CPU and one CUDA implementation per family, chosen by
// backend), and the detector that runs one, its LLR clip the family's
// `llr_clip` parameter. A family then writes its engines' per-problem work and
// its checks, nothing else.
#pragma once

#include <mimo_gpu/detector.h>

#include "../runtime/engine_choice.h"

#include <memory>
#include <stdexcept>
#include <utility>

namespace mimo_gpu {
namespace detail {

/// One H per problem in, LLRs out (nt * Q per problem), bad problems erased
/// (LLRs 0) and reported (fault_flags.h).
class detector_engine
{
public:
    virtual ~detector_engine() = default;
    virtual backend kind() const = 0;
    /// Host memory. clip: the family's llr_clip.
    virtual detection_report
    detect(const cfloat* H, const cfloat* y, size_t batch, float n0, float clip, float* llr) = 0;
    /// Device memory, asynchronous on `stream` (CUDA engines).
    virtual void detect_device(const cfloat*, const cfloat*, size_t, float, float, float*, cuda_stream_t)
    {
        throw std::logic_error("mimo_gpu: detect_device needs the CUDA backend");
    }
    /// The report of the detect_device calls since the last check (waits for `stream`).
    virtual detection_report check_device_status(cuda_stream_t) { return {}; }
    /// Scratch bytes per problem of a batch (device items, input copies, ...).
    virtual size_t scratch_per_problem() const { return 0; }
};

/// A detector that hands its work to one engine.
class engine_detector : public detector
{
public:
    backend active_backend() const override { return m_engine->kind(); }

protected:
    using detector::detector;

    /// Called once from the family's constructor: make_cpu() or make_cuda() by `requested`.
    template <typename MakeCpu, typename MakeCuda>
    void choose(backend requested, MakeCpu make_cpu, MakeCuda make_cuda)
    {
        m_engine = choose_engine(requested, std::move(make_cpu), std::move(make_cuda));
    }

    detection_report run(const detector_input& in, float* llr) override
    {
        return m_engine->detect(in.H, in.y, in.channels, in.n0, clip(), llr);
    }
    void run_device(const detector_input& in, float* d_llr, cuda_stream_t stream) override
    {
        m_engine->detect_device(in.H, in.y, in.channels, in.n0, clip(), d_llr, stream);
    }
    detection_report device_status(cuda_stream_t stream) override
    {
        return m_engine->check_device_status(stream);
    }
    size_t family_scratch_per_problem() const override { return m_engine->scratch_per_problem(); }

private:
    float clip() const { return float(parameter("llr_clip")); }

    std::unique_ptr<detector_engine> m_engine;
};

} // namespace detail
} // namespace mimo_gpu
