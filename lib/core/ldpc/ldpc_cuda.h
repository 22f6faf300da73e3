// What the CUDA engine of ldpc_decoder hands its kernels (CUDA sources only):
// the lifted graph as a kernel parameter (uniform reads from the constant
// bank), the batch and its outputs.
#pragma once

#include "../runtime/cuda_check.h"
#include "ldpc_engine.h"

#include <cuda_runtime.h>

#include <initializer_list>
#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace mimo_gpu {
namespace detail {

constexpr int k_ldpc_max_edges = 316; // BG1
constexpr int k_ldpc_max_rows = 46;   // BG1

/// Per edge, row by row: (column * Zc) | (shift << 16); row r's edges are
/// [row_start[r], row_start[r + 1]).
struct ldpc_device_graph {
    uint32_t edge[k_ldpc_max_edges];
    uint16_t row_start[k_ldpc_max_rows + 1];
    static ldpc_device_graph of(const ldpc_code& code);
};

/// Lets each kernel take as much dynamic shared memory as the device's opt-in
/// `limit` leaves beside its static shared memory, and returns the least of
/// these allowances. The attribute belongs to a kernel, not to a decoder:
/// setting a decoder's own need would cap another decoder's larger code.
inline size_t allow_dynamic_shared_memory(std::initializer_list<const void*> kernels,
                                          int limit)
{
    size_t allowed = size_t(limit);
    for (const void* kernel : kernels) {
        cudaFuncAttributes attributes{};
        MIMO_CUDA_CHECK(cudaFuncGetAttributes(&attributes, kernel));
        const int bytes = limit - int(attributes.sharedSizeBytes);
        MIMO_CUDA_CHECK(cudaFuncSetAttribute(
            kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
        allowed = std::min(allowed, size_t(bytes));
    }
    return allowed;
}

/// One batch: LLRs of count code blocks in device memory (float, or int8 read
/// as scale * value when llr8 is set), every output per block.
struct ldpc_batch {
    const float* llr = nullptr;
    const int8_t* llr8 = nullptr;
    float scale = 1.0f;
    size_t count = 0;
    uint8_t* bits = nullptr; ///< count * K
    float* app = nullptr;    ///< count * n, may be null
    int* iterations = nullptr;
    uint8_t* parity_ok = nullptr;
    uint8_t* nonfinite = nullptr; ///< 1: the block had a NaN or Inf LLR
    void* messages = nullptr;     ///< the kernel's check-to-variable messages
    int rows = 0, Zc = 0, n = 0, K = 0, info_columns = 0;
    ldpc_decoder_config rule;
};

/// Min-sum (normalized, offset) in half precision, two code blocks per thread
/// (ldpc_min_sum.cu). Message memory: ldpc_min_sum_message_bytes.
size_t ldpc_min_sum_message_bytes(const ldpc_code& code, size_t count);
/// Dynamic shared memory of one thread block of the min-sum kernel.
size_t ldpc_min_sum_shared_bytes(const ldpc_code& code);
/// allow_dynamic_shared_memory for the min-sum kernels (once per engine, not
/// per launch).
size_t allow_ldpc_min_sum_shared_memory(int limit);
void launch_ldpc_min_sum(const ldpc_batch& batch,
                         const ldpc_device_graph& graph,
                         cudaStream_t stream);

} // namespace detail
} // namespace mimo_gpu
