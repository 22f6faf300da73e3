// Every CUDA call and launch goes through these: a failure becomes an exception
// naming the call, never a line on stderr that the caller ignores.
#pragma once

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace mimo_gpu {
namespace detail {

[[noreturn]] inline void
throw_cuda_error(cudaError_t err, const char* what, const char* file, int line)
{
    throw std::runtime_error(std::string("mimo_gpu: CUDA error in ") + what + " (" +
                             file + ":" + std::to_string(line) + "): " +
                             cudaGetErrorName(err) + ": " + cudaGetErrorString(err));
}

} // namespace detail
} // namespace mimo_gpu

#define MIMO_CUDA_CHECK(call)                                                           \
    do {                                                                                \
        const cudaError_t mimo_err_ = (call);                                           \
        if (mimo_err_ != cudaSuccess)                                                   \
            ::mimo_gpu::detail::throw_cuda_error(mimo_err_, #call, __FILE__, __LINE__); \
    } while (0)

/// After a kernel launch: reports launch-configuration errors at once.
#define MIMO_CUDA_CHECK_LAUNCH(kernel_name)                               \
    do {                                                                  \
        const cudaError_t mimo_err_ = cudaGetLastError();                 \
        if (mimo_err_ != cudaSuccess)                                     \
            ::mimo_gpu::detail::throw_cuda_error(                         \
                mimo_err_, "launch of " kernel_name, __FILE__, __LINE__); \
    } while (0)
