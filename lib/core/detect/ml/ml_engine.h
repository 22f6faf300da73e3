// The engines behind the exhaustive ML detector (one CPU, one CUDA).
#pragma once

#include <mimo_gpu/ml_detector.h>

#include "../engine/detector_engine.h"

#include <memory>

namespace mimo_gpu {
namespace detail {

struct ml_config {
    mimo_shape shape;
    modulation mod;
};

std::unique_ptr<detector_engine> make_cpu_ml_engine(const ml_config& config);
std::unique_ptr<detector_engine>
make_cuda_ml_engine(const ml_config& config); // the .cu (CUDA builds only)

} // namespace detail
} // namespace mimo_gpu
