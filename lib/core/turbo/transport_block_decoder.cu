// transport_block_decoder::decode_device: transport blocks from device LLRs to
// device bits on the caller's stream. A gather kernel de-rate-matches every
// code block of every transport block (dematch_gather.h, a thread per decoder
// input), the turbo decoder's device path decodes them in one batch, and a
// thread block per transport block desegments its code blocks, checks CRC24A
// and gathers its code blocks' results into a small record.
#include "../runtime/cuda_staging.h"
#include "dematch_gather.h"
#include "transport_block_device.h"
#include "turbo_engine.h"

#include <algorithm>
#include <array>
#include <vector>

namespace mimo_gpu {
namespace detail {

namespace {

constexpr int k_threads = 256;
constexpr unsigned k_max_grid_y = 65535;

/// Grid: x over a code block's decoder inputs, y over the code blocks of the batch.
template <class Llrs>
__global__ void dematch_kernel(Llrs e,
                               int64_t G,
                               const dematch_block* __restrict__ blocks,
                               int C,
                               const int32_t* __restrict__ tables,
                               size_t code_blocks,
                               int64_t outputs_per_tb,
                               float* __restrict__ d)
{
    for (size_t cb = blockIdx.y; cb < code_blocks; cb += gridDim.y) {
        const size_t t = cb / size_t(C);
        const dematch_block b = blocks[cb % size_t(C)];
        Llrs tb = e;
        tb.e += int64_t(t) * G;
        float* out = d + int64_t(t) * outputs_per_tb + b.d_offset;
        for (int s = blockIdx.x * blockDim.x + threadIdx.x; s < b.outputs;
             s += gridDim.x * blockDim.x)
            out[s] = dematch_gather(tables, b, s, tb);
    }
}

/// Grid: x over a code block's coded bits, y over the code blocks of the batch:
/// each transmitted bit's extrinsic LLR (coded_bit_extrinsic).
template <class Llrs>
__global__ void extrinsic_kernel(Llrs e,
                                 int64_t G,
                                 const dematch_block* __restrict__ blocks,
                                 int C,
                                 const int32_t* __restrict__ inputs,
                                 const int32_t* __restrict__ offsets,
                                 size_t code_blocks,
                                 int64_t outputs_per_tb,
                                 const float* __restrict__ d,
                                 const float* __restrict__ coded_extrinsic,
                                 const uint8_t* __restrict__ no_information,
                                 float* __restrict__ extrinsic)
{
    for (size_t cb = blockIdx.y; cb < code_blocks; cb += gridDim.y) {
        const size_t t = cb / size_t(C);
        const int r = int(cb % size_t(C));
        const dematch_block b = blocks[r];
        Llrs tb = e;
        tb.e += int64_t(t) * G;
        const int64_t first = int64_t(t) * outputs_per_tb;
        float* out = extrinsic + int64_t(t) * G;
        for (int64_t j = blockIdx.x * blockDim.x + threadIdx.x; j < b.E;
             j += int64_t(gridDim.x) * blockDim.x)
            out[b.e_offset + j] = coded_bit_extrinsic(inputs,
                                                      offsets[r],
                                                      b,
                                                      j,
                                                      tb,
                                                      d + first,
                                                      coded_extrinsic + first,
                                                      no_information[cb] != 0);
    }
}

/// What the transport block kernel needs of the segmentation.
struct tb_layout {
    int A, B, C, F, L;
    int K_minus, K_plus, C_minus;
    int bits_per_tb; ///< decoded bits of its code blocks
    int iterations;  ///< when the decoder reports none per block
};

/// Per transport block: crc_ok, code blocks crc_ok, without information, max iterations.
constexpr int k_record_words = 4;

/// Bits per thread block of the desegmentation: a transport block of NR 100 MHz
/// (681 384 bits) spreads over ~330 blocks (with 8192 bits a block, its ~80
/// blocks took 26 us on the H100).
constexpr int k_bits_per_chunk = 2048;

/// Chunk blockIdx.x of transport block t: its share of the A bits out of the
/// code blocks' data bits (desegmentation: filler and CRC24B dropped), and its
/// share of the remainder of the B bits by the CRC24A generator, from the table
/// x^n mod g, XORed into remainders[t].
__device__ void desegment_chunk(const uint8_t* __restrict__ bits,
                                const tb_layout& g,
                                const uint32_t* __restrict__ powers,
                                size_t t,
                                uint8_t* __restrict__ a,
                                uint32_t* __restrict__ remainders,
                                uint32_t* partial)
{
    const uint8_t* c = bits + t * size_t(g.bits_per_tb);
    uint8_t* out = a + t * size_t(g.A);
    const int minus_bits = g.C_minus * g.K_minus;
    const int first = int(blockIdx.x) * k_bits_per_chunk;
    const int last = min(g.bits_per_tb, first + k_bits_per_chunk);
    uint32_t r = 0;
    for (int p = first + int(threadIdx.x); p < last; p += blockDim.x) {
        const int block =
            p < minus_bits ? p / g.K_minus : g.C_minus + (p - minus_bits) / g.K_plus;
        const int K = block < g.C_minus ? g.K_minus : g.K_plus;
        const int start = block < g.C_minus ? block * g.K_minus
                                            : minus_bits + (block - g.C_minus) * g.K_plus;
        const int within = p - start;
        if (within < (block == 0 ? g.F : 0) || within >= K - g.L)
            continue;                        // filler or the code block's CRC24B
        const int i = p - block * g.L - g.F; // its place in b
        const uint8_t bit = c[p];
        if (i < g.A)
            out[i] = bit;
        if (bit)
            r ^= powers[g.B - 1 - i];
    }
    for (int offset = 16; offset > 0; offset /= 2)
        r ^= __shfl_xor_sync(0xffffffffu, r, offset);
    if (threadIdx.x % 32 == 0)
        partial[threadIdx.x / 32] = r;
    __syncthreads();
    if (threadIdx.x == 0) {
        uint32_t total = 0;
        for (int w = 0; w < k_threads / 32; ++w)
            total ^= partial[w];
        if (total)
            atomicXor(remainders + t, total);
    }
    __syncthreads(); // partial[] is reused for the next transport block
}

/// A thread block per (chunk of k_bits_per_chunk decoded bits, transport block).
__global__ void __launch_bounds__(k_threads)
    desegment_kernel(const uint8_t* __restrict__ bits,
                     tb_layout g,
                     const uint32_t* __restrict__ powers,
                     size_t count,
                     uint8_t* __restrict__ a,
                     uint32_t* __restrict__ remainders)
{
    __shared__ uint32_t partial[k_threads / 32];
    for (size_t t = blockIdx.y; t < count; t += gridDim.y)
        desegment_chunk(bits, g, powers, t, a, remainders, partial);
}

/// A thread block per transport block: the CRC24A verdict from its remainder,
/// and its code blocks' results, into a small record.
__global__ void __launch_bounds__(k_threads)
    transport_block_kernel(tb_layout g,
                           const uint32_t* __restrict__ remainders,
                           const int* __restrict__ iterations,
                           const uint8_t* __restrict__ crc_ok,
                           const uint8_t* __restrict__ no_information,
                           int* __restrict__ records)
{
    __shared__ int blocks_ok, blocks_empty, most_iterations;
    if (threadIdx.x == 0)
        blocks_ok = blocks_empty = most_iterations = 0;
    __syncthreads();
    const size_t t = blockIdx.x;
    int ok = 0, empty = 0, most = 0;
    for (int b = threadIdx.x; b < g.C; b += blockDim.x) {
        const size_t cb = t * size_t(g.C) + size_t(b);
        ok += crc_ok[cb];
        empty += no_information[cb];
        most = max(most, iterations ? iterations[cb] : g.iterations);
    }
    if (ok)
        atomicAdd(&blocks_ok, ok);
    if (empty)
        atomicAdd(&blocks_empty, empty);
    if (most)
        atomicMax(&most_iterations, most);
    __syncthreads();
    if (threadIdx.x == 0) {
        int* rec = records + t * k_record_words;
        // A code block without information decodes to (mostly) zeros, which can
        // pass CRC24A with the rest: never a pass (as decode()).
        rec[0] = remainders[t] == 0 && blocks_empty == 0;
        rec[1] = blocks_ok;
        rec[2] = blocks_empty;
        rec[3] = most_iterations;
    }
}

template <typename T>
void upload(device_array<T>& dev, const std::vector<T>& host)
{
    // once per format (or rv), before any batch uses the buffer
    MIMO_CUDA_CHECK(cudaMemcpy(dev.reserve(host.size()),
                               host.data(),
                               host.size() * sizeof(T),
                               cudaMemcpyHostToDevice));
}

class cuda_transport_block_engine final : public transport_block_device_engine
{
public:
    explicit cuda_transport_block_engine(const transport_block_format& format)
        : m_format(format), m_seg(format.segmentation()), m_E(format.rate_matched_sizes())
    {
        const dematch_plan plan = make_dematch_plan(m_seg, m_E, format.rv);
        upload(m_blocks, plan.blocks);
        m_outputs = plan.outputs;
        m_max_outputs = 0;
        for (const dematch_block& b : plan.blocks) {
            m_max_outputs = std::max(m_max_outputs, b.outputs);
            m_max_E = std::max(m_max_E, b.E);
        }
        upload(m_powers, crc_powers(crc_type::crc24a, size_t(m_seg.B)));
        for (int k : m_seg.K)
            m_bits_per_tb += k;
    }

    void decode(const float* d_llr,
                size_t count,
                int rv,
                uint8_t* d_a,
                lte_turbo_decoder& decoder,
                cuda_stream_t stream,
                float* d_extrinsic) override
    {
        run(float_llrs{ d_llr }, count, rv, d_a, decoder, stream, d_extrinsic);
    }

    void decode(const int8_t* d_llr,
                float scale,
                size_t count,
                int rv,
                uint8_t* d_a,
                lte_turbo_decoder& decoder,
                cuda_stream_t stream,
                float* d_extrinsic) override
    {
        run(int8_llrs{ d_llr, scale }, count, rv, d_a, decoder, stream, d_extrinsic);
    }

    std::vector<transport_block_result> results(lte_turbo_decoder& decoder,
                                                cuda_stream_t stream) override
    {
        const cudaStream_t s = stream;
        if (m_count == 0)
            return {};
        MIMO_CUDA_CHECK(cudaMemcpyAsync(m_records_host.data(),
                                        m_records.data(),
                                        m_count * k_record_words * sizeof(int),
                                        cudaMemcpyDeviceToHost,
                                        s));
        decoder.check_device_status(stream); // waits for the stream; throws on bad input
        std::vector<transport_block_result> out(m_count);
        for (size_t t = 0; t < m_count; ++t) {
            const int* rec = m_records_host.data() + t * k_record_words;
            out[t].crc_ok = rec[0] != 0;
            out[t].code_blocks = m_seg.C;
            out[t].code_blocks_crc_ok = rec[1];
            out[t].code_blocks_no_information = rec[2];
            out[t].max_iterations = rec[3];
        }
        return out;
    }

private:
    template <class Llrs>
    void run(Llrs e,
             size_t count,
             int rv,
             uint8_t* d_a,
             lte_turbo_decoder& decoder,
             cuda_stream_t stream,
             float* d_extrinsic = nullptr)
    {
        m_count = count;
        if (count == 0)
            return;
        const cudaStream_t s = stream;
        // A call on another stream must not overwrite buffers the previous one
        // still uses.
        MIMO_CUDA_CHECK(cudaStreamWaitEvent(s, m_previous.get(), 0));
        device_array<int32_t>& tables = m_tables[size_t(rv)];
        if (!tables.data())
            upload(tables, make_dematch_plan(m_seg, m_E, rv).tables);
        const size_t code_blocks = count * size_t(m_seg.C);
        if (m_K.size() != code_blocks) { // the turbo decoder keeps its plan while K stays
            m_K.clear();
            for (size_t t = 0; t < count; ++t)
                m_K.insert(m_K.end(), m_seg.K.begin(), m_seg.K.end());
        }
        float* d = m_llr.reserve(count * m_outputs);
        uint8_t* bits = m_bits.reserve(count * size_t(m_bits_per_tb));
        int* records = m_records.reserve(count * k_record_words);
        m_records_host.reserve(count * k_record_words);

        const dim3 grid(unsigned((m_max_outputs + k_threads - 1) / k_threads),
                        unsigned(std::min<size_t>(code_blocks, k_max_grid_y)));
        dematch_kernel<<<grid, k_threads, 0, s>>>(e,
                                                  int64_t(m_format.G),
                                                  m_blocks.data(),
                                                  m_seg.C,
                                                  tables.data(),
                                                  code_blocks,
                                                  int64_t(m_outputs),
                                                  d);
        MIMO_CUDA_CHECK_LAUNCH("dematch_kernel");

        float* coded_extrinsic =
            d_extrinsic ? m_coded_extrinsic.reserve(count * m_outputs) : nullptr;
        decoder.decode_device(m_K, d, bits, nullptr, stream, coded_extrinsic);
        const lte_turbo_decoder::device_block_results blocks = decoder.device_results();
        if (d_extrinsic) {
            device_array<int32_t>& inverse = m_inverse[size_t(rv)];
            if (!inverse.data()) {
                const dematch_inverse made =
                    invert_dematch_plan(make_dematch_plan(m_seg, m_E, rv));
                upload(inverse, made.inputs);
                upload(m_inverse_offsets[size_t(rv)], made.offsets);
            }
            const dim3 coded(unsigned((m_max_E + k_threads - 1) / k_threads),
                             unsigned(std::min<size_t>(code_blocks, k_max_grid_y)));
            extrinsic_kernel<<<coded, k_threads, 0, s>>>(
                e,
                int64_t(m_format.G),
                m_blocks.data(),
                m_seg.C,
                inverse.data(),
                m_inverse_offsets[size_t(rv)].data(),
                code_blocks,
                int64_t(m_outputs),
                d,
                coded_extrinsic,
                blocks.no_information,
                d_extrinsic);
            MIMO_CUDA_CHECK_LAUNCH("extrinsic_kernel");
        }

        const tb_layout g{ m_format.A,    m_seg.B,
                           m_seg.C,       m_seg.F,
                           m_seg.L,       m_seg.K_minus,
                           m_seg.K_plus,  m_seg.C_minus,
                           m_bits_per_tb, decoder.config().iterations };
        uint32_t* remainders = m_remainders.reserve(count);
        MIMO_CUDA_CHECK(cudaMemsetAsync(remainders, 0, count * sizeof(uint32_t), s));
        const dim3 chunks(
            unsigned((m_bits_per_tb + k_bits_per_chunk - 1) / k_bits_per_chunk),
            unsigned(std::min<size_t>(count, k_max_grid_y)));
        desegment_kernel<<<chunks, k_threads, 0, s>>>(
            bits, g, m_powers.data(), count, d_a, remainders);
        MIMO_CUDA_CHECK_LAUNCH("desegment_kernel");
        transport_block_kernel<<<unsigned(count), k_threads, 0, s>>>(
            g,
            remainders,
            blocks.iterations,
            blocks.crc_ok,
            blocks.no_information,
            records);
        MIMO_CUDA_CHECK_LAUNCH("transport_block_kernel");
        MIMO_CUDA_CHECK(cudaEventRecord(m_previous.get(), s));
    }

    transport_block_format m_format;
    code_block_segmentation m_seg;
    std::vector<int> m_E;
    size_t m_outputs = 0; ///< decoder input floats per transport block
    int m_max_outputs = 0;
    int m_max_E = 0; ///< coded bits of the largest code block
    int m_bits_per_tb = 0;
    size_t m_count = 0; ///< transport blocks of the last call
    std::vector<int> m_K;
    device_array<dematch_block> m_blocks;
    std::array<device_array<int32_t>, 4> m_tables; ///< per rv, made when first used
    device_array<uint32_t> m_powers;               ///< x^n mod g of CRC24A, n < B
    std::array<device_array<int32_t>, 4> m_inverse, m_inverse_offsets; ///< per rv
    device_array<float> m_llr;
    device_array<float> m_coded_extrinsic; ///< the decoder's, in its input's layout
    device_array<uint8_t> m_bits;
    device_array<int> m_records;
    device_array<uint32_t> m_remainders; ///< CRC24A remainder per transport block
    pinned_buffer<int> m_records_host;
    cuda_event m_previous;
};

} // namespace

std::unique_ptr<transport_block_device_engine>
make_transport_block_device_engine(const transport_block_format& format)
{
    return std::make_unique<cuda_transport_block_engine>(format);
}

} // namespace detail
} // namespace mimo_gpu
