// Backend selection: which implementation (CPU or CUDA) a core object runs.
#pragma once

#include <string>

namespace mimo_gpu {

enum class backend {
    automatic, ///< CUDA when a usable device exists, else CPU (MIMO_GPU_BACKEND
               ///< overrides)
    cpu,       ///< the reference implementation, always available
    cuda,      ///< CUDA; an error if no usable device exists
};

/// True when the library was built with CUDA and a usable device is present.
bool cuda_available();

/// Why CUDA is not available ("" when it is): not built, no driver, no device.
std::string cuda_unavailable_reason();

/// Resolves `requested` to cpu or cuda.
///  - automatic: honours MIMO_GPU_BACKEND=cpu|cuda, else CUDA if available,
///    else CPU (logging one line to stderr the first time it falls back).
///  - cuda: throws std::runtime_error naming the reason when CUDA is unavailable.
///  - an unknown MIMO_GPU_BACKEND value throws std::invalid_argument.
backend resolve_backend(backend requested);

/// "auto" | "cpu" | "cuda" (also "automatic"); anything else throws
/// std::invalid_argument.
backend backend_from_string(const std::string& name);
std::string to_string(backend b);

} // namespace mimo_gpu
