// The CUDA engine of ldpc_decoder: min-sum runs the half2 kernel
// (ldpc_min_sum.cu); sum-product, the exact reference rule, this plain float
// kernel: a thread block per code block, its a-posteriori LLRs in shared
// memory, a thread per lifted check of the current layer (a layer's Zc checks
// touch distinct variables), the check-to-variable messages whole in device
// memory. Its rule is ldpc_check (ldpc_engine.h), shared with the CPU engine.
#include "../runtime/cuda_buffers.h"
#include "../runtime/cuda_check.h"
#include "../turbo/dematch_gather.h" // float_llrs, int8_llrs: the received LLRs
#include "ldpc_cuda.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace mimo_gpu {
namespace detail {

ldpc_device_graph ldpc_device_graph::of(const ldpc_code& code)
{
    const ldpc_layers layers = ldpc_layers::of(code);
    ldpc_device_graph g{};
    for (size_t e = 0; e < layers.column.size(); ++e)
        g.edge[e] =
            uint32_t(layers.column[e] * code.Zc) | (uint32_t(layers.shift[e]) << 16);
    for (size_t r = 0; r < layers.row_start.size(); ++r)
        g.row_start[r] = uint16_t(layers.row_start[r]);
    for (size_t r = 0; r + 1 < layers.row_start.size(); ++r) {
        const int degree = layers.row_start[r + 1] - layers.row_start[r];
        if (degree < 3 || (degree > 10 && degree != 19)) // the min-sum kernel's cases
            throw std::logic_error("mimo_gpu: LDPC: a base graph row of degree " +
                                   std::to_string(degree));
    }
    return g;
}

namespace {

struct ldpc_kernel_args {
    ldpc_batch batch; ///< messages: per code block edges * Zc floats, zero at the start
    const int* row_start;
    const int* column;
    const int* shift;
    int edges;
};

/// The variable of edge e for lifted check z.
__device__ inline int ldpc_variable(const ldpc_kernel_args& a, int e, int z)
{
    return a.column[e] * a.batch.Zc + (z + a.shift[e]) % a.batch.Zc;
}

template <class Input>
__global__ void ldpc_layered_kernel(const __grid_constant__ ldpc_kernel_args a,
                                    const Input in)
{
    extern __shared__ float L[]; // the block's a-posteriori LLRs
    __shared__ int last_column, bad;
    const ldpc_batch& c = a.batch;
    const size_t b = blockIdx.x;
    const int tid = threadIdx.x, threads = blockDim.x;
    if (tid == 0)
        last_column = -1, bad = 0;
    __syncthreads();
    int last = -1;
    bool nonfinite = false;
    for (int v = tid; v < c.n; v += threads) {
        const float x = in(b * size_t(c.n) + size_t(v));
        nonfinite |= !isfinite(x);
        last = x != 0.0f ? v : last;
        L[v] = ldpc_clamp(isfinite(x) ? x : 0.0f);
    }
    if (last >= 0)
        atomicMax(&last_column, last / c.Zc);
    if (nonfinite)
        atomicOr(&bad, 1);
    float* R = static_cast<float*>(c.messages) + b * size_t(a.edges) * size_t(c.Zc);
    __syncthreads();
    const int rows = ldpc_active_rows(last_column, c.info_columns, c.rows);
    int done = 0;
    bool ok = false;
    for (int it = 1; it <= c.rule.iterations; ++it) {
        for (int r = 0; r < rows; ++r) {
            const int first = a.row_start[r], degree = a.row_start[r + 1] - first;
            for (int z = tid; z < c.Zc; z += threads) {
                float q[k_ldpc_max_row_degree];
                ldpc_check check;
                for (int k = 0; k < degree; ++k) {
                    const int e = first + k;
                    q[k] = L[ldpc_variable(a, e, z)] - R[size_t(e) * c.Zc + z];
                    check.add(q[k], k, true);
                }
                for (int k = 0; k < degree; ++k) {
                    const int e = first + k;
                    const float message = check.message(q[k], k, c.rule);
                    R[size_t(e) * c.Zc + z] = message;
                    L[ldpc_variable(a, e, z)] = ldpc_clamp(q[k] + message);
                }
            }
            __syncthreads();
        }
        done = it;
        if (!c.rule.early_termination && it < c.rule.iterations)
            continue;
        bool fail = false; // the hard decisions against every lifted check
        for (int r = 0; r < rows && !fail; ++r) {
            const int first = a.row_start[r], degree = a.row_start[r + 1] - first;
            for (int z = tid; z < c.Zc; z += threads) {
                bool parity = false;
                for (int k = 0; k < degree; ++k)
                    parity ^= L[ldpc_variable(a, first + k, z)] < 0.0f;
                fail |= parity;
            }
        }
        ok = !__syncthreads_or(fail);
        if (ok && c.rule.early_termination)
            break;
    }
    for (int v = tid; v < c.K; v += threads)
        c.bits[b * size_t(c.K) + v] = L[v] < 0.0f;
    if (c.app)
        for (int v = tid; v < c.n; v += threads)
            c.app[b * size_t(c.n) + v] = L[v];
    if (tid == 0) {
        c.iterations[b] = done;
        c.parity_ok[b] = ok && !bad;
        c.nonfinite[b] = uint8_t(bad);
    }
}

class cuda_ldpc_engine final : public ldpc_engine
{
public:
    cuda_ldpc_engine(const ldpc_code& code, const ldpc_decoder_config& config)
        : m_code(code), m_config(config), m_graph(ldpc_device_graph::of(code))
    {
        const ldpc_layers layers = ldpc_layers::of(code);
        m_edges = int(layers.column.size());
        int device = 0, limit = 0;
        MIMO_CUDA_CHECK(cudaGetDevice(&device));
        MIMO_CUDA_CHECK(cudaDeviceGetAttribute(
            &limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
        if (config.algorithm != ldpc_algorithm::sum_product) {
            const size_t allowed = allow_ldpc_min_sum_shared_memory(limit);
            if (ldpc_min_sum_shared_bytes(code) > allowed)
                throw std::invalid_argument(
                    "mimo_gpu: LDPC decoder: BG" + std::to_string(code.base_graph) +
                    " Zc " + std::to_string(code.Zc) + " needs " +
                    std::to_string(ldpc_min_sum_shared_bytes(code)) +
                    " bytes of shared memory per thread block, this GPU allows " +
                    std::to_string(allowed) + " (use the CPU backend)");
            return;
        }
        upload(m_row_start, layers.row_start);
        upload(m_column, layers.column);
        upload(m_shift, layers.shift);
        m_shared = size_t(code.codeword_bits()) * sizeof(float);
        const size_t allowed =
            allow_dynamic_shared_memory({ (const void*)ldpc_layered_kernel<float_llrs>,
                                          (const void*)ldpc_layered_kernel<int8_llrs> },
                                        limit);
        if (m_shared > allowed)
            throw std::invalid_argument(
                "mimo_gpu: LDPC decoder: a code block of " +
                std::to_string(code.codeword_bits()) +
                " bits needs more shared memory than this GPU has");
    }
    backend kind() const override { return backend::cuda; }

    /// From host memory: the batch in chunks on two streams, so that with
    /// pinned host memory one chunk's LLRs cross PCIe while the one before
    /// decodes (the float codewords take longer than decoding them:
    /// docs/ldpc.md, "Speed"); pageable memory makes the copies synchronous,
    /// and the chunks then follow each other.
    void decode(const float* llr,
                size_t count,
                uint8_t* bits,
                float* app,
                ldpc_block_result* results) override
    {
        const size_t n = size_t(m_code.codeword_bits()), K = size_t(m_code.K());
        float* d_llr = m_llr.reserve(count * n);
        uint8_t* d_bits = m_bits.reserve(count * K);
        float* d_app = app ? m_app.reserve(count * n) : nullptr;
        reserve(count);
        // Chunks of at least 256 blocks (128 pairs: half the H100's thread
        // block slots, the other half for the chunk beside), even.
        const size_t chunk =
            count <= 512 ? count : std::max<size_t>(256, (count / 4 + 1) & ~size_t(1));
        const cudaStream_t streams[2] = { m_stream.get(), m_stream2.get() };
        size_t turn = 0;
        for (size_t first = 0; first < count; first += chunk, ++turn) {
            const size_t c = std::min(chunk, count - first);
            const cudaStream_t s = streams[turn % 2];
            MIMO_CUDA_CHECK(cudaMemcpyAsync(d_llr + first * n,
                                            llr + first * n,
                                            c * n * sizeof(float),
                                            cudaMemcpyHostToDevice,
                                            s));
            enqueue(d_llr + first * n,
                    nullptr,
                    1.0f,
                    first,
                    c,
                    d_bits + first * K,
                    d_app ? d_app + first * n : nullptr,
                    s);
            MIMO_CUDA_CHECK(cudaMemcpyAsync(
                bits + first * K, d_bits + first * K, c * K, cudaMemcpyDeviceToHost, s));
            if (app)
                MIMO_CUDA_CHECK(cudaMemcpyAsync(app + first * n,
                                                d_app + first * n,
                                                c * n * sizeof(float),
                                                cudaMemcpyDeviceToHost,
                                                s));
        }
        m_count = count;
        m_stream2.synchronize();
        const std::vector<ldpc_block_result> r = device_results(m_stream.get());
        std::copy(r.begin(), r.end(), results);
    }

    void decode_device(const float* d_llr,
                       const int8_t* d_llr8,
                       float scale,
                       size_t count,
                       uint8_t* d_bits,
                       float* d_app,
                       cuda_stream_t stream) override
    {
        m_count = count;
        if (count == 0)
            return;
        reserve(count);
        enqueue(d_llr, d_llr8, scale, 0, count, d_bits, d_app, stream);
    }

    std::vector<ldpc_block_result> device_results(cuda_stream_t stream) override
    {
        const size_t count = m_count;
        const cudaStream_t s = stream;
        m_results_host.reserve(count);
        m_ok_host.reserve(2 * count);
        MIMO_CUDA_CHECK(cudaMemcpyAsync(m_results_host.data(),
                                        m_iterations.data(),
                                        count * sizeof(int),
                                        cudaMemcpyDeviceToHost,
                                        s));
        MIMO_CUDA_CHECK(cudaMemcpyAsync(
            m_ok_host.data(), m_parity_ok.data(), count, cudaMemcpyDeviceToHost, s));
        MIMO_CUDA_CHECK(cudaMemcpyAsync(m_ok_host.data() + count,
                                        m_nonfinite.data(),
                                        count,
                                        cudaMemcpyDeviceToHost,
                                        s));
        MIMO_CUDA_CHECK(cudaStreamSynchronize(s));
        std::vector<ldpc_block_result> r(count);
        for (size_t b = 0; b < count; ++b) {
            if (m_ok_host.data()[count + b])
                throw std::invalid_argument("mimo_gpu: LDPC decoder: code block " +
                                            std::to_string(b) + " has a non-finite LLR");
            r[b] = { m_results_host.data()[b], m_ok_host.data()[b] != 0 };
        }
        return r;
    }

private:
    /// Room for the per-block results and messages of `count` blocks.
    void reserve(size_t count)
    {
        m_iterations.reserve(count);
        m_parity_ok.reserve(count);
        m_nonfinite.reserve(count);
        if (m_config.algorithm != ldpc_algorithm::sum_product)
            m_messages.reserve(ldpc_min_sum_message_bytes(m_code, count));
        else
            m_R.reserve(count * size_t(m_edges) * size_t(m_code.Zc));
    }

    /// Blocks [first, first + count) of the reserved batch (first even: the
    /// min-sum kernel's messages are per pair), inputs and outputs given.
    void enqueue(const float* d_llr,
                 const int8_t* d_llr8,
                 float scale,
                 size_t first,
                 size_t count,
                 uint8_t* d_bits,
                 float* d_app,
                 cudaStream_t s)
    {
        ldpc_batch a;
        a.llr = d_llr;
        a.llr8 = d_llr8;
        a.scale = scale;
        a.count = count;
        a.bits = d_bits;
        a.app = d_app;
        a.iterations = m_iterations.data() + first;
        a.parity_ok = m_parity_ok.data() + first;
        a.nonfinite = m_nonfinite.data() + first;
        a.rows = m_code.rows();
        a.Zc = m_code.Zc;
        a.n = m_code.codeword_bits();
        a.K = m_code.K();
        a.info_columns = m_code.info_columns();
        a.rule = m_config;
        if (m_config.algorithm != ldpc_algorithm::sum_product) {
            a.messages = m_messages.data() + ldpc_min_sum_message_bytes(m_code, first);
            launch_ldpc_min_sum(a, m_graph, s);
            return;
        }
        const size_t per_block = size_t(m_edges) * size_t(m_code.Zc);
        a.messages = m_R.data() + first * per_block;
        MIMO_CUDA_CHECK(
            cudaMemsetAsync(a.messages, 0, count * per_block * sizeof(float), s));
        ldpc_kernel_args k;
        k.batch = a;
        k.row_start = m_row_start.data();
        k.column = m_column.data();
        k.shift = m_shift.data();
        k.edges = m_edges;
        const int threads = std::min(384, (m_code.Zc + 31) / 32 * 32);
        if (d_llr8)
            ldpc_layered_kernel<<<unsigned(count), threads, m_shared, s>>>(
                k, int8_llrs{ d_llr8, scale });
        else
            ldpc_layered_kernel<<<unsigned(count), threads, m_shared, s>>>(
                k, float_llrs{ d_llr });
        MIMO_CUDA_CHECK_LAUNCH("ldpc_layered_kernel");
    }

    template <typename T>
    static void upload(device_array<T>& d, const std::vector<T>& h)
    {
        MIMO_CUDA_CHECK(cudaMemcpy(
            d.reserve(h.size()), h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
    }

    ldpc_code m_code;
    ldpc_decoder_config m_config;
    ldpc_device_graph m_graph;
    int m_edges = 0;
    size_t m_shared = 0, m_count = 0;
    cuda_stream m_stream, m_stream2;
    device_array<int> m_row_start, m_column, m_shift;
    device_array<float> m_llr, m_app, m_R;
    device_array<unsigned char> m_messages;
    device_array<uint8_t> m_bits, m_parity_ok, m_nonfinite;
    device_array<int> m_iterations;
    pinned_buffer<int> m_results_host;
    pinned_buffer<uint8_t> m_ok_host;
};

} // namespace

std::unique_ptr<ldpc_engine> make_cuda_ldpc_engine(const ldpc_code& code,
                                                   const ldpc_decoder_config& config)
{
    return std::make_unique<cuda_ldpc_engine>(code, config);
}

} // namespace detail
} // namespace mimo_gpu
