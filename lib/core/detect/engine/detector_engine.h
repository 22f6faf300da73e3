// The engine layer under every detector family (docs/architecture.md). A
// family is a registry entry (name, capabilities, parameters: stated once)
// and one engine per backend behind this interface; the detector base class
// (include/mimo_gpu/detector.h) checks inputs, splits large calls, repeats
// channels for families that work per symbol, applies the bad-problem policy
// and hands each part to its engine. The CPU and CUDA shells
// (cpu_detector_engine.h, cuda_detector_engine.h) hold what every engine
// shares: fault bookkeeping, host staging, the device path's erasures.
#pragma once

#include <mimo_gpu/detector.h>

#include "../../runtime/engine_choice.h"

#include <memory>
#include <stdexcept>
#include <utility>

#ifdef MIMO_GPU_HAVE_CUDA
#define MIMO_GPU_CUDA_ENGINE(factory) (factory)
#else
#define MIMO_GPU_CUDA_ENGINE(factory) (nullptr)
#endif

namespace mimo_gpu {
namespace detail {

/// One family's work on one backend. Inputs are checked by the detector;
/// in.symbols_per_channel is 1 unless the family reuses channels. Bad problems
/// get LLRs 0 and are reported (fault_flags.h).
class detector_engine
{
public:
    virtual ~detector_engine() = default;
    virtual backend kind() const = 0;
    /// Host memory. clip: the family's llr_clip (0 for a family without one).
    virtual detection_report detect(const detector_input& in, float clip, float* llr) = 0;
    /// Device memory, asynchronous on `stream` (CUDA engines with a device path).
    virtual void detect_device(const detector_input&, float, float*, cuda_stream_t)
    {
        throw std::logic_error("mimo_gpu: this detector has no device-memory path");
    }
    /// The report of the detect_device calls since the last check (waits for `stream`).
    virtual detection_report check_device_status(cuda_stream_t) { return {}; }
    /// Scratch bytes per problem of a call (device items, input copies, ...).
    virtual size_t scratch_per_problem() const { return 0; }
};

/// The engine of a family's extension (nway's detect_qr, MMSE's equalize):
/// every engine the family makes implements Extension beside detector_engine.
template <typename Extension>
Extension& engine_extension(detector_engine& engine)
{
    auto* extension = dynamic_cast<Extension*>(&engine);
    if (!extension)
        throw std::logic_error(
            "mimo_gpu: a detector engine lacks its family's extension");
    return *extension;
}

/// The detector of a family that needs nothing beyond its engines (most
/// families): the registry's entry and a CPU and a CUDA engine factory.
class engine_detector final : public detector
{
public:
    template <typename MakeCpu, typename MakeCuda>
    engine_detector(const detector_family& family,
                    const detector_config& config,
                    backend requested,
                    MakeCpu make_cpu,
                    MakeCuda make_cuda)
        : detector(family, config)
    {
        use_engine(choose_engine(requested, std::move(make_cpu), std::move(make_cuda)));
    }
};

template <typename T>
struct non_deduced {
    using type = T;
};

/// A registry entry's factory for an engine_detector whose engines are made
/// from `engine_config(config)` by make_cpu / make_cuda. Pass the CUDA factory
/// as MIMO_GPU_CUDA_ENGINE(f): it is defined in the family's .cu, which only
/// CUDA builds compile.
template <typename EngineConfig, typename MakeConfig>
auto engine_factory(
    MakeConfig engine_config,
    std::unique_ptr<detector_engine> (*make_cpu)(const EngineConfig&),
    typename non_deduced<std::unique_ptr<detector_engine> (*)(const EngineConfig&)>::type
        make_cuda)
{
    return [=](const detector_family& family,
               const detector_config& config,
               backend requested) -> std::unique_ptr<detector> {
        const EngineConfig e = engine_config(config);
        return std::make_unique<engine_detector>(
            family,
            config,
            requested,
            [&] { return make_cpu(e); },
            [&] { return make_cuda(e); });
    };
}

} // namespace detail
} // namespace mimo_gpu
