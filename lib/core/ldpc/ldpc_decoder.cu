// The CUDA engine of ldpc_decoder: a thread block per code block, its
// a-posteriori LLRs in shared memory, a thread per lifted check of the current
// layer (a layer's Zc checks touch distinct variables), the check-to-variable
// messages in device memory. The rule is ldpc_check (ldpc_engine.h), shared
// with the CPU engine. A first, plain kernel: the messages are stored whole
// (4 bytes per edge and lifted check), not compressed.
#include "../runtime/cuda_buffers.h"
#include "../runtime/cuda_check.h"
#include "ldpc_engine.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace mimo_gpu {
namespace detail {

namespace {

struct ldpc_kernel_args {
    const float* llr;
    uint8_t* bits;
    float* app; ///< may be null
    int* iterations;
    uint8_t* parity_ok;
    float* R; ///< per code block: edges * Zc messages, zero at the start
    const int* row_start;
    const int* column;
    const int* shift;
    int rows, Zc, n, K, edges;
    ldpc_decoder_config rule;
};

/// The variable of edge e for lifted check z.
__device__ inline int ldpc_variable(const ldpc_kernel_args& a, int e, int z)
{
    return a.column[e] * a.Zc + (z + a.shift[e]) % a.Zc;
}

__global__ void ldpc_layered_kernel(const __grid_constant__ ldpc_kernel_args a)
{
    extern __shared__ float L[]; // the block's a-posteriori LLRs
    const size_t b = blockIdx.x;
    const int tid = threadIdx.x, threads = blockDim.x;
    const float* in = a.llr + b * size_t(a.n);
    for (int v = tid; v < a.n; v += threads)
        L[v] = ldpc_clamp(in[v]);
    float* R = a.R + b * size_t(a.edges) * size_t(a.Zc);
    __syncthreads();
    const bool sum_product = a.rule.algorithm == ldpc_algorithm::sum_product;
    int done = 0;
    bool ok = false;
    for (int it = 1; it <= a.rule.iterations; ++it) {
        for (int r = 0; r < a.rows; ++r) {
            const int first = a.row_start[r], degree = a.row_start[r + 1] - first;
            for (int z = tid; z < a.Zc; z += threads) {
                float q[k_ldpc_max_row_degree];
                ldpc_check check;
                for (int k = 0; k < degree; ++k) {
                    const int e = first + k;
                    q[k] = L[ldpc_variable(a, e, z)] - R[size_t(e) * a.Zc + z];
                    check.add(q[k], k, sum_product);
                }
                for (int k = 0; k < degree; ++k) {
                    const int e = first + k;
                    const float message = check.message(q[k], k, a.rule);
                    R[size_t(e) * a.Zc + z] = message;
                    L[ldpc_variable(a, e, z)] = ldpc_clamp(q[k] + message);
                }
            }
            __syncthreads();
        }
        done = it;
        bool fail = false; // the hard decisions against every lifted check
        for (int r = 0; r < a.rows && !fail; ++r) {
            const int first = a.row_start[r], degree = a.row_start[r + 1] - first;
            for (int z = tid; z < a.Zc; z += threads) {
                bool parity = false;
                for (int k = 0; k < degree; ++k)
                    parity ^= L[ldpc_variable(a, first + k, z)] < 0.0f;
                fail |= parity;
            }
        }
        ok = !__syncthreads_or(fail);
        if (ok && a.rule.early_termination)
            break;
    }
    for (int v = tid; v < a.K; v += threads)
        a.bits[b * size_t(a.K) + v] = L[v] < 0.0f;
    if (a.app)
        for (int v = tid; v < a.n; v += threads)
            a.app[b * size_t(a.n) + v] = L[v];
    if (tid == 0) {
        a.iterations[b] = done;
        a.parity_ok[b] = ok;
    }
}

class cuda_ldpc_engine final : public ldpc_engine
{
public:
    cuda_ldpc_engine(const ldpc_code& code, const ldpc_decoder_config& config)
        : m_code(code), m_config(config)
    {
        const ldpc_layers layers = ldpc_layers::of(code);
        m_edges = int(layers.column.size());
        upload(m_row_start, layers.row_start);
        upload(m_column, layers.column);
        upload(m_shift, layers.shift);
        m_shared = size_t(code.codeword_bits()) * sizeof(float);
        int device = 0, limit = 0;
        MIMO_CUDA_CHECK(cudaGetDevice(&device));
        MIMO_CUDA_CHECK(cudaDeviceGetAttribute(
            &limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
        if (m_shared > size_t(limit))
            throw std::invalid_argument(
                "mimo_gpu: LDPC decoder: a code block of " +
                std::to_string(code.codeword_bits()) +
                " bits needs more shared memory than this GPU has");
        MIMO_CUDA_CHECK(cudaFuncSetAttribute(ldpc_layered_kernel,
                                             cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             int(m_shared)));
    }
    backend kind() const override { return backend::cuda; }

    void decode(const float* llr,
                size_t count,
                uint8_t* bits,
                float* app,
                ldpc_block_result* results) override
    {
        const size_t n = size_t(m_code.codeword_bits()), K = size_t(m_code.K());
        const cudaStream_t s = m_stream.get();
        ldpc_kernel_args a;
        a.llr = m_llr.reserve(count * n);
        a.bits = m_bits.reserve(count * K);
        a.app = app ? m_app.reserve(count * n) : nullptr;
        a.iterations = m_iterations.reserve(count);
        a.parity_ok = m_parity_ok.reserve(count);
        a.R = m_R.reserve(count * size_t(m_edges) * size_t(m_code.Zc));
        a.row_start = m_row_start.data();
        a.column = m_column.data();
        a.shift = m_shift.data();
        a.rows = m_code.rows();
        a.Zc = m_code.Zc;
        a.n = int(n);
        a.K = int(K);
        a.edges = m_edges;
        a.rule = m_config;
        MIMO_CUDA_CHECK(cudaMemcpyAsync(const_cast<float*>(a.llr),
                                        llr,
                                        count * n * sizeof(float),
                                        cudaMemcpyHostToDevice,
                                        s));
        MIMO_CUDA_CHECK(cudaMemsetAsync(
            a.R, 0, count * size_t(m_edges) * size_t(m_code.Zc) * sizeof(float), s));
        const int threads = std::min(384, (m_code.Zc + 31) / 32 * 32);
        ldpc_layered_kernel<<<unsigned(count), threads, m_shared, s>>>(a);
        MIMO_CUDA_CHECK_LAUNCH("ldpc_layered_kernel");
        MIMO_CUDA_CHECK(
            cudaMemcpyAsync(bits, a.bits, count * K, cudaMemcpyDeviceToHost, s));
        if (app)
            MIMO_CUDA_CHECK(cudaMemcpyAsync(
                app, a.app, count * n * sizeof(float), cudaMemcpyDeviceToHost, s));
        std::vector<int> iterations(count);
        std::vector<uint8_t> ok(count);
        MIMO_CUDA_CHECK(cudaMemcpyAsync(iterations.data(),
                                        a.iterations,
                                        count * sizeof(int),
                                        cudaMemcpyDeviceToHost,
                                        s));
        MIMO_CUDA_CHECK(
            cudaMemcpyAsync(ok.data(), a.parity_ok, count, cudaMemcpyDeviceToHost, s));
        m_stream.synchronize();
        for (size_t b = 0; b < count; ++b)
            results[b] = { iterations[b], ok[b] != 0 };
    }

private:
    template <typename T>
    static void upload(device_array<T>& d, const std::vector<T>& h)
    {
        MIMO_CUDA_CHECK(cudaMemcpy(
            d.reserve(h.size()), h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
    }

    ldpc_code m_code;
    ldpc_decoder_config m_config;
    int m_edges = 0;
    size_t m_shared = 0;
    cuda_stream m_stream;
    device_array<int> m_row_start, m_column, m_shift;
    device_array<float> m_llr, m_app, m_R;
    device_array<uint8_t> m_bits, m_parity_ok;
    device_array<int> m_iterations;
};

} // namespace

std::unique_ptr<ldpc_engine> make_cuda_ldpc_engine(const ldpc_code& code,
                                                   const ldpc_decoder_config& config)
{
    return std::make_unique<cuda_ldpc_engine>(code, config);
}

} // namespace detail
} // namespace mimo_gpu
