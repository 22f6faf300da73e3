// Launchers of the QR kernel, shared by the QR engine and the fused N-way path.
#pragma once

#include "../runtime/fault_flags.h"

#include <mimo_gpu/types.h>

#include <cuda_runtime_api.h>

namespace mimo_gpu {
namespace detail {

/// Enqueues the MGS QR of `batch` problems for `orders` orders on `stream`;
/// bad problems are reported into `faults` (their items are left as computed).
void launch_mgs_qr(mimo_shape shape,
                   int orders,
                   const cfloat* d_H,
                   const cfloat* d_y,
                   size_t batch,
                   float* d_items,
                   fault_sink faults,
                   cudaStream_t stream);

} // namespace detail
} // namespace mimo_gpu
