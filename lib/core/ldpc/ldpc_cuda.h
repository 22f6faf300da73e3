// What the CUDA engine of ldpc_decoder hands its kernels (CUDA sources only):
// the lifted graph as a kernel parameter (uniform reads from the constant
// bank), the batch and its outputs.
#pragma once

#include "ldpc_engine.h"

#include <cuda_runtime.h>

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
/// Lets the kernels take up to `bytes` of dynamic shared memory (the device's
/// opt-in limit; once per engine, not per launch).
void allow_ldpc_min_sum_shared_memory(int bytes);
void launch_ldpc_min_sum(const ldpc_batch& batch,
                         const ldpc_device_graph& graph,
                         cudaStream_t stream);

} // namespace detail
} // namespace mimo_gpu
