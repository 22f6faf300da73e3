// nr_transport_block_decoder::decode_device: NR transport blocks from device
// LLRs to device bits. Three steps on the caller's stream:
//  1. a gather per code block: each codeword LLR is the soft buffer's value
//     (HARQ, or 0) plus its received copies in transmission order, float op for
//     float op what nr_rate_matcher::dematch adds on the host; filler bits
//     known, the 2 Zc punctured bits 0; the non-zero values counted (a code
//     block without information fails, as on the host); then the sums go back
//     into the soft buffers, unless a block of the batch had a NaN or Inf
//     (the batch is refused, as on the host, and changes nothing);
//  2. the LDPC decoder's device path;
//  3. desegmentation and the CRCs as remainders: each decoded 1 bit XORs its
//     x^n mod g into its code block's CRC24B and its transport block's
//     CRC24A/CRC16 remainder (zero when the CRC passes).
// The verdicts are assembled on the host from a few bytes per block.
#include "../runtime/cuda_buffers.h"
#include "../runtime/cuda_check.h"
#include "../turbo/dematch_gather.h" // bounded_copy
#include "../turbo/turbo_engine.h"   // crc_powers
#include "ldpc_engine.h"
#include "nr_transport_block_device.h"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>

namespace mimo_gpu {
namespace detail {

namespace {

constexpr int k_threads = 256;
constexpr unsigned k_max_grid_y = 65535;

/// One code block's share of the gather: its table and its received bits.
struct gather_block {
    int start;    ///< its table's first entry in `starts` (N + 1 of them)
    int list;     ///< its table's first entry in `lists` (and in `positions`)
    int e_offset; ///< its first received bit in the transport block's G
    int E;        ///< its received bits
};

struct gather_args {
    const float* llr;
    const int8_t* llr8;
    float scale;
    const float* soft; ///< may be null: count * C * N
    float* x;          ///< count * C * n codeword LLRs
    int* nonzero;      ///< per code block
    int* nonfinite; ///< per transport block: a NaN or Inf received or summed; then one:
                    ///< any
    const gather_block* blocks; ///< C
    const int* starts;          ///< per table: N + 1 offsets into its list
    const int* lists;           ///< per table: f indices by buffer position, ascending
    int C, N, n, Zc, G, filler_begin, filler_end;
    size_t codeblocks;
};

__device__ inline float received(const gather_args& g, size_t i)
{
    return g.llr8 ? g.scale * float(g.llr8[i]) : g.llr[i];
}


__global__ void __launch_bounds__(k_threads) gather_kernel(const gather_args g)
{
    const size_t count = g.codeblocks / size_t(g.C);
    for (size_t cb = blockIdx.y; cb < g.codeblocks; cb += gridDim.y) {
        const size_t t = cb / size_t(g.C);
        const int r = int(cb % size_t(g.C));
        const gather_block b = g.blocks[r];
        const int v = int(blockIdx.x) * k_threads + int(threadIdx.x);
        int nonzero = 0;
        bool bad = false;
        if (v < g.n) {
            float value = 0.0f;
            const int k = v - 2 * g.Zc;
            if (k >= 0 && k >= g.filler_begin && k < g.filler_end) {
                value = k_ldpc_known_bit_llr;
            } else if (k >= 0) {
                float sum = g.soft ? g.soft[cb * size_t(g.N) + size_t(k)] : 0.0f;
                const size_t tb = t * size_t(g.G) + size_t(b.e_offset);
                for (int i = g.starts[b.start + k]; i < g.starts[b.start + k + 1]; ++i)
                    sum += bounded_copy(received(g, tb + size_t(g.lists[b.list + i])));
                bad = !isfinite(sum); // a NaN or Inf, or a caller's buffer that overflows
                value = sum;
                nonzero = sum != 0.0f;
            }
            g.x[cb * size_t(g.n) + size_t(v)] = value;
        }
        nonzero = __syncthreads_count(nonzero);
        if (threadIdx.x == 0 && nonzero)
            atomicAdd(g.nonzero + cb, nonzero);
        if (bad) {
            atomicOr(g.nonfinite + t, 1);
            atomicOr(g.nonfinite + count, 1);
        }
    }
}

/// The sums back into the caller's soft buffers, when no block of the batch
/// was refused.
__global__ void __launch_bounds__(k_threads)
    commit_kernel(const gather_args g, float* soft)
{
    if (g.nonfinite[g.codeblocks / size_t(g.C)])
        return;
    for (size_t cb = blockIdx.y; cb < g.codeblocks; cb += gridDim.y) {
        const int k = int(blockIdx.x) * k_threads + int(threadIdx.x);
        if (k < g.N && !(k >= g.filler_begin && k < g.filler_end))
            soft[cb * size_t(g.N) + size_t(k)] =
                g.x[cb * size_t(g.n) + 2 * size_t(g.Zc) + size_t(k)];
    }
}

struct extrinsic_args {
    const float* llr;
    const int8_t* llr8;
    float scale;
    const float* app;           ///< count * C * n a-posteriori LLRs
    const int* nonzero;         ///< per code block
    const gather_block* blocks; ///< C
    const int* positions;       ///< per table: each received bit's buffer position
    float* extrinsic;           ///< count * G
    int C, n, Zc, G, K_prime, max_E;
    size_t codeblocks;
};

/// Each received bit's a-posteriori LLR less its received LLR, in the
/// received order (nr_transport_block_decoder::decode's extrinsic, float op for
/// float op); 0 for a code block without information.
__global__ void __launch_bounds__(k_threads) extrinsic_kernel(const extrinsic_args x)
{
    for (size_t cb = blockIdx.y; cb < x.codeblocks; cb += gridDim.y) {
        const size_t t = cb / size_t(x.C);
        const gather_block b = x.blocks[int(cb % size_t(x.C))];
        const int j = int(blockIdx.x) * k_threads + int(threadIdx.x);
        if (j >= b.E)
            continue;
        const size_t at = t * size_t(x.G) + size_t(b.e_offset) + size_t(j);
        float e = 0.0f;
        if (x.nonzero[cb] >= x.K_prime) {
            const float received = x.llr8 ? x.scale * float(x.llr8[at]) : x.llr[at];
            e = ldpc_clamp(x.app[cb * size_t(x.n) + 2 * size_t(x.Zc) +
                                 size_t(x.positions[b.list + j])] -
                           received);
        }
        x.extrinsic[at] = e;
    }
}

struct crc_args {
    const uint8_t* bits;       ///< count * C * K decoded bits
    uint8_t* a;                ///< count * A
    uint32_t* cb_remainder;    ///< per code block (CRC24B, C > 1)
    uint32_t* tb_remainder;    ///< per transport block
    const uint32_t* cb_powers; ///< x^n mod g24B, n < K'
    const uint32_t* tb_powers; ///< x^n mod g (CRC24A or CRC16), n < B
    int C, K, K_prime, data, A, B;
    bool cb_crc;
    size_t codeblocks;
};

/// A thread per decoded bit i < K' of a code block: its data bit's place in
/// the transport block, and its share of both remainders.
__global__ void __launch_bounds__(k_threads) crc_kernel(const crc_args c)
{
    for (size_t cb = blockIdx.y; cb < c.codeblocks; cb += gridDim.y) {
        const size_t t = cb / size_t(c.C);
        const int r = int(cb % size_t(c.C));
        const int i = int(blockIdx.x) * k_threads + int(threadIdx.x);
        uint32_t own = 0, whole = 0;
        if (i < c.K_prime && c.bits[cb * size_t(c.K) + size_t(i)]) {
            if (c.cb_crc)
                own = c.cb_powers[c.K_prime - 1 - i];
            if (i < c.data) {
                const int p = r * c.data + i; // its place in b (A bits, then the CRC)
                whole = c.tb_powers[c.B - 1 - p];
            }
        }
        if (i < c.data) {
            const int p = r * c.data + i;
            if (p < c.A)
                c.a[t * size_t(c.A) + size_t(p)] = c.bits[cb * size_t(c.K) + size_t(i)];
        }
        for (int offset = 16; offset > 0; offset /= 2) {
            own ^= __shfl_xor_sync(0xffffffffu, own, offset);
            whole ^= __shfl_xor_sync(0xffffffffu, whole, offset);
        }
        if (threadIdx.x % 32 == 0) {
            if (own)
                atomicXor(c.cb_remainder + cb, own);
            if (whole)
                atomicXor(c.tb_remainder + t, whole);
        }
    }
}

template <typename T>
void upload(device_array<T>& dev, const std::vector<T>& host)
{
    MIMO_CUDA_CHECK(cudaMemcpy(dev.reserve(std::max<size_t>(host.size(), 1)),
                               host.data(),
                               host.size() * sizeof(T),
                               cudaMemcpyHostToDevice));
}

/// The gather tables of one rv: code blocks of equal E share one.
struct gather_tables {
    device_array<gather_block> blocks;
    device_array<int> starts, lists, positions;
    int max_E = 0;
};

class cuda_nr_transport_block_device final : public nr_transport_block_device
{
public:
    cuda_nr_transport_block_device(const nr_transport_block_format& format,
                                   const std::vector<nr_rate_matcher>& matchers)
        : m_format(format), m_seg(format.segmentation()), m_matchers(matchers)
    {
        upload(m_cb_powers, crc_powers(crc_type::crc24b, size_t(m_seg.K_prime)));
        upload(m_tb_powers,
               crc_powers(m_seg.tb_crc == 24 ? crc_type::crc24a : crc_type::crc16,
                          size_t(m_seg.B)));
    }

    void decode(const float* d_llr,
                const int8_t* d_llr8,
                float scale,
                size_t count,
                int rv,
                uint8_t* d_a,
                float* d_soft,
                ldpc_decoder& decoder,
                cuda_stream_t stream,
                float* d_extrinsic) override
    {
        const cudaStream_t s = stream;
        const nr_segmentation& seg = m_seg;
        const size_t codeblocks = count * size_t(seg.C);
        const int n = seg.code().codeword_bits();
        m_count = count;
        if (count == 0)
            return;
        const gather_tables& tables = tables_of(rv);
        gather_args g;
        g.llr = d_llr;
        g.llr8 = d_llr8;
        g.scale = scale;
        g.soft = d_soft;
        g.x = m_x.reserve(codeblocks * size_t(n));
        g.nonzero = m_nonzero.reserve(codeblocks);
        g.nonfinite = m_nonfinite.reserve(count + 1);
        g.blocks = tables.blocks.data();
        g.starts = tables.starts.data();
        g.lists = tables.lists.data();
        g.C = seg.C;
        g.N = seg.N;
        g.n = n;
        g.Zc = seg.Zc;
        g.G = m_format.G;
        g.filler_begin = seg.K_prime - 2 * seg.Zc;
        g.filler_end = seg.K - 2 * seg.Zc;
        g.codeblocks = codeblocks;
        MIMO_CUDA_CHECK(cudaMemsetAsync(g.nonzero, 0, codeblocks * sizeof(int), s));
        MIMO_CUDA_CHECK(cudaMemsetAsync(g.nonfinite, 0, (count + 1) * sizeof(int), s));
        const unsigned grid_y = unsigned(std::min<size_t>(codeblocks, k_max_grid_y));
        gather_kernel<<<dim3(unsigned((n + k_threads - 1) / k_threads), grid_y),
                        k_threads,
                        0,
                        s>>>(g);
        MIMO_CUDA_CHECK_LAUNCH("nr gather_kernel");
        if (d_soft) {
            commit_kernel<<<dim3(unsigned((seg.N + k_threads - 1) / k_threads), grid_y),
                            k_threads,
                            0,
                            s>>>(g, d_soft);
            MIMO_CUDA_CHECK_LAUNCH("nr commit_kernel");
        }

        uint8_t* bits = m_bits.reserve(codeblocks * size_t(seg.K));
        float* app = d_extrinsic ? m_app.reserve(codeblocks * size_t(n)) : nullptr;
        decoder.decode_device(g.x, codeblocks, bits, stream, app);
        if (d_extrinsic) {
            extrinsic_args x;
            x.llr = d_llr;
            x.llr8 = d_llr8;
            x.scale = scale;
            x.app = app;
            x.nonzero = g.nonzero;
            x.blocks = tables.blocks.data();
            x.positions = tables.positions.data();
            x.extrinsic = d_extrinsic;
            x.C = seg.C;
            x.n = n;
            x.Zc = seg.Zc;
            x.G = m_format.G;
            x.K_prime = seg.K_prime;
            x.max_E = tables.max_E;
            x.codeblocks = codeblocks;
            extrinsic_kernel<<<dim3(unsigned((tables.max_E + k_threads - 1) / k_threads),
                                    grid_y),
                               k_threads,
                               0,
                               s>>>(x);
            MIMO_CUDA_CHECK_LAUNCH("nr extrinsic_kernel");
        }

        crc_args c;
        c.bits = bits;
        c.a = d_a;
        c.cb_remainder = m_cb_remainder.reserve(codeblocks);
        c.tb_remainder = m_tb_remainder.reserve(count);
        c.cb_powers = m_cb_powers.data();
        c.tb_powers = m_tb_powers.data();
        c.C = seg.C;
        c.K = seg.K;
        c.K_prime = seg.K_prime;
        c.data = seg.K_prime - seg.cb_crc;
        c.A = seg.A;
        c.B = seg.B;
        c.cb_crc = seg.cb_crc > 0;
        c.codeblocks = codeblocks;
        MIMO_CUDA_CHECK(
            cudaMemsetAsync(c.cb_remainder, 0, codeblocks * sizeof(uint32_t), s));
        MIMO_CUDA_CHECK(cudaMemsetAsync(c.tb_remainder, 0, count * sizeof(uint32_t), s));
        crc_kernel<<<dim3(unsigned((seg.K_prime + k_threads - 1) / k_threads), grid_y),
                     k_threads,
                     0,
                     s>>>(c);
        MIMO_CUDA_CHECK_LAUNCH("nr crc_kernel");
    }

    std::vector<transport_block_result> results(ldpc_decoder& decoder,
                                                cuda_stream_t stream) override
    {
        const cudaStream_t s = stream;
        const size_t count = m_count, codeblocks = count * size_t(m_seg.C);
        if (count == 0)
            return {};
        std::vector<int> nonfinite(count), nonzero(codeblocks);
        std::vector<uint32_t> cb_remainder(codeblocks), tb_remainder(count);
        MIMO_CUDA_CHECK(cudaMemcpyAsync(nonfinite.data(),
                                        m_nonfinite.data(),
                                        count * sizeof(int),
                                        cudaMemcpyDeviceToHost,
                                        s));
        MIMO_CUDA_CHECK(cudaMemcpyAsync(nonzero.data(),
                                        m_nonzero.data(),
                                        codeblocks * sizeof(int),
                                        cudaMemcpyDeviceToHost,
                                        s));
        MIMO_CUDA_CHECK(cudaMemcpyAsync(cb_remainder.data(),
                                        m_cb_remainder.data(),
                                        codeblocks * sizeof(uint32_t),
                                        cudaMemcpyDeviceToHost,
                                        s));
        MIMO_CUDA_CHECK(cudaMemcpyAsync(tb_remainder.data(),
                                        m_tb_remainder.data(),
                                        count * sizeof(uint32_t),
                                        cudaMemcpyDeviceToHost,
                                        s));
        MIMO_CUDA_CHECK(cudaStreamSynchronize(s));
        for (size_t t = 0; t < count; ++t)
            if (nonfinite[t])
                throw std::invalid_argument(
                    "mimo_gpu: NR transport block: decode_device: transport block " +
                    std::to_string(t) +
                    " has a non-finite LLR (or its soft buffer plus this transmission "
                    "is not finite); the batch changed no soft buffer");
        const std::vector<ldpc_block_result> blocks = decoder.device_results(stream);
        const nr_segmentation& seg = m_seg;
        std::vector<transport_block_result> results(count);
        for (size_t t = 0; t < count; ++t) { // the host decoder's rules
            transport_block_result& res = results[t];
            res.code_blocks = seg.C;
            bool codewords = true;
            for (int r = 0; r < seg.C; ++r) {
                const size_t k = t * size_t(seg.C) + size_t(r);
                res.max_iterations = std::max(res.max_iterations, blocks[k].iterations);
                codewords &= blocks[k].parity_ok;
                if (nonzero[k] < seg.K_prime)
                    ++res.code_blocks_no_information;
                else if (seg.C > 1 && blocks[k].parity_ok && cb_remainder[k] == 0)
                    ++res.code_blocks_crc_ok;
            }
            res.crc_ok = tb_remainder[t] == 0 && codewords &&
                         res.code_blocks_no_information == 0 &&
                         (seg.C == 1 || res.code_blocks_crc_ok == seg.C);
            if (seg.C == 1 && res.crc_ok)
                res.code_blocks_crc_ok = 1;
        }
        return results;
    }

private:
    /// Per buffer position of each distinct E: the f indices that land on it,
    /// ascending (the order dematch adds them in).
    const gather_tables& tables_of(int rv)
    {
        auto it = m_tables.find(rv);
        if (it != m_tables.end())
            return it->second;
        std::vector<gather_block> blocks;
        std::vector<int> starts, lists, positions;
        int max_E = 0;
        std::map<int, std::pair<int, int>> by_E; // E -> (start, list)
        int e_offset = 0;
        for (const nr_rate_matcher& m : m_matchers) {
            auto known = by_E.find(m.E());
            if (known == by_E.end()) {
                const std::vector<int>& to = m.positions(rv);
                std::vector<int> per(size_t(m_seg.N) + 1, 0);
                for (int k : to)
                    ++per[size_t(k) + 1];
                for (size_t k = 1; k < per.size(); ++k)
                    per[k] += per[k - 1];
                std::vector<int> list(to.size()), fill(per.begin(), per.end() - 1);
                for (size_t j = 0; j < to.size(); ++j) // ascending j per position
                    list[size_t(fill[size_t(to[j])]++)] = int(j);
                known =
                    by_E.emplace(m.E(),
                                 std::make_pair(int(starts.size()), int(lists.size())))
                        .first;
                starts.insert(starts.end(), per.begin(), per.end());
                lists.insert(lists.end(), list.begin(), list.end());
                positions.insert(positions.end(), to.begin(), to.end());
            }
            blocks.push_back(
                { known->second.first, known->second.second, e_offset, m.E() });
            e_offset += m.E();
            max_E = std::max(max_E, m.E());
        }
        gather_tables& t = m_tables[rv];
        upload(t.blocks, blocks);
        upload(t.starts, starts);
        upload(t.lists, lists);
        upload(t.positions, positions);
        t.max_E = max_E;
        return t;
    }

    nr_transport_block_format m_format;
    nr_segmentation m_seg;
    std::vector<nr_rate_matcher> m_matchers;
    std::map<int, gather_tables> m_tables;
    size_t m_count = 0;
    device_array<uint32_t> m_cb_powers, m_tb_powers, m_cb_remainder, m_tb_remainder;
    device_array<float> m_x, m_app;
    device_array<uint8_t> m_bits;
    device_array<int> m_nonzero, m_nonfinite;
};

} // namespace

std::unique_ptr<nr_transport_block_device>
make_nr_transport_block_device(const nr_transport_block_format& format,
                               const std::vector<nr_rate_matcher>& matchers)
{
    return std::make_unique<cuda_nr_transport_block_device>(format, matchers);
}

} // namespace detail
} // namespace mimo_gpu
