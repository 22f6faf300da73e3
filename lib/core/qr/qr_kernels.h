// Launchers of the QR kernel, shared by the QR engine and the fused N-way path.
#pragma once

#include "../runtime/problem_status.h"

#include <mimo_gpu/types.h>

#include <cuda_runtime_api.h>

namespace mimo_gpu {
namespace detail {

/// Enqueues the MGS QR of `batch` problems for `orders` orders on `stream`.
void launch_mgs_qr(mimo_shape shape, int orders, const cfloat* d_H, const cfloat* d_y, size_t batch,
                   float* d_items, problem_status* d_status, cudaStream_t stream);

} // namespace detail
} // namespace mimo_gpu
