// CUDA engine of SUMIS: not yet written; the CPU engine serves the CUDA backend
// request with an error until it is (docs/detectors.md, "SUMIS").
#include "sumis_engine.h"

#include <stdexcept>

namespace mimo_gpu {
namespace detail {

std::unique_ptr<sumis_engine> make_cuda_sumis_engine(const sumis_config&)
{
    throw std::runtime_error("mimo_gpu: detector 'sumis' has no CUDA engine yet; use backend cpu");
}

} // namespace detail
} // namespace mimo_gpu
