// Layered min-sum LDPC decoding at GPU speed: IEEE half precision, two code
// blocks per thread (one in each half of a half2, so every instruction works on
// both), a thread per lifted check of the current layer, the blocks'
// a-posteriori LLRs in shared memory and each check's messages compressed to
// 16 bytes in device memory (the two magnitudes it sends, which edge gets the
// second, and each edge's sign), read and written once per layer and
// iteration. Only the layers a block needs run (ldpc_active_rows). The CPU
// engine computes the same numbers (ldpc_half.h): equal bit for bit.
//
// Why this shape: at BG1 Zc = 384 rate 1/2 a block is 24 layers x 210 edges x
// 384 checks, ~80 000 edge updates an iteration; at 10 Gbit/s (1.18 M blocks/s)
// that is 9.5e11 edge updates/s, so the instructions per edge decide the
// speed (docs/ldpc.md, "Speed"). half2 halves them; the compressed messages
// keep their traffic (~1.8 TB/s at that rate) mostly in L2.
#include "../runtime/cuda_check.h"
#include "../turbo/dematch_gather.h" // float_llrs, int8_llrs: the received LLRs
#include "ldpc_cuda.h"

#include <cuda_fp16.h>

#include <algorithm>
#include <cstring>

namespace mimo_gpu {
namespace detail {

namespace {

constexpr int k_max_pairs = 8;     // code block pairs per thread block (small Zc)
constexpr int k_max_threads = 384; // Zc <= 384

__device__ __forceinline__ uint32_t bits_of(__half2 h)
{
    uint32_t u;
    memcpy(&u, &h, sizeof u);
    return u;
}
__device__ __forceinline__ __half2 half2_of(uint32_t u)
{
    __half2 h;
    memcpy(&h, &u, sizeof h);
    return h;
}

constexpr int ilog2(int k) { return k < 2 ? 0 : 1 + ilog2(k / 2); }
/// Both halves of a half2 holding the small integer k (< 32): its low 6 bits
/// are 0, which leaves room for 3 sign bits per half beside it in a message.
constexpr uint32_t half2_int(int k)
{
    return k == 0 ? 0u
                  : ((uint32_t(15 + ilog2(k)) << 10) |
                     ((uint32_t(k) << (10 - ilog2(k))) & 0x3ffu)) *
                        0x00010001u;
}
constexpr uint32_t k_sign_bits = 0x80008000u;
constexpr uint32_t k_edge_index_bits = 0xffc0ffc0u;

/// An input LLR as ldpc_half_input (ldpc_half.h) rounds it.
__device__ __forceinline__ __half half_input(float x)
{
    x = x == 0.0f ? 0.0f : fminf(fmaxf(x, -k_ldpc_half_limit), k_ldpc_half_limit);
    const __half h = __float2half_rn(x);
    if (__half2float(h) == 0.0f && x != 0.0f)
        return __float2half_rn(x < 0.0f ? -k_ldpc_half_tiny : k_ldpc_half_tiny);
    return h;
}

struct kernel_shape {
    int zc_pad; ///< threads per code block pair: Zc rounded up to a warp
    int pairs;  ///< pairs per thread block
};

/// One layer for lifted check z of a pair: the edges' Q = L - R (R rebuilt
/// from m, the check's message of the last iteration), the two least |Q| and
/// the signs, then the new messages and L = Q + R; returns the new message.
/// keep: the halves whose block is still decoding. Degree: the row's degree,
/// fixed so the loops unroll without guards (0: any, `degree` at run time).
template <int Degree, bool Offset, bool Stop>
__device__ __forceinline__ uint4 layer(const ldpc_batch& a,
                                       const ldpc_device_graph& g,
                                       uint32_t* L,
                                       const uint4 m,
                                       int first,
                                       int degree,
                                       int z,
                                       uint32_t keep)
{
    constexpr int most = Degree ? Degree : k_ldpc_max_row_degree;
    const __half2 old_edge = half2_of(m.w & k_edge_index_bits);
    uint32_t q[most], old_L[most];
    int at[most];
    const __half2 infinity = half2_of(0x7c007c00u);
    __half2 min1 = infinity, min2 = infinity;
    uint32_t least_edge = 0, negative = 0;
#pragma unroll
    for (int k = 0; k < most; ++k) {
        if (Degree || k < degree) {
            const uint32_t e = g.edge[first + k];
            int v = z + int(e >> 16);
            v -= v >= a.Zc ? a.Zc : 0;
            at[k] = int(e & 0xffffu) + v;
            const uint32_t Lk = L[at[k]];
            if (Stop)
                old_L[k] = Lk;
            const uint32_t second = __heq2_mask(old_edge, half2_of(half2_int(k)));
            const uint32_t sign =
                (k < 16 ? m.z << (15 - k) : m.w << (31 - k)) & k_sign_bits;
            const uint32_t R = ((m.y & second) | (m.x & ~second)) ^ sign;
            q[k] = bits_of(__hsub2(half2_of(Lk), half2_of(R)));
            const __half2 magnitude = __habs2(half2_of(q[k]));
            const uint32_t less = __hlt2_mask(magnitude, min1);
            min2 = __hmin2(min2, __hmax2(min1, magnitude));
            min1 = __hmin2(min1, magnitude);
            least_edge = (least_edge & ~less) | (half2_int(k) & less);
            negative ^= q[k];
        }
    }
    const __half2 limit = __float2half2_rn(k_ldpc_half_limit);
    __half2 to_others, to_least;
    if (Offset) {
        const __half2 offset = __float2half2_rn(a.rule.offset),
                      zero = __float2half2_rn(0.0f);
        to_others = __hmax2(__hsub2(min1, offset), zero);
        to_least = __hmax2(__hsub2(min2, offset), zero);
    } else {
        const __half2 scale = __float2half2_rn(a.rule.scale);
        to_others = __hmul2(min1, scale);
        to_least = __hmul2(min2, scale);
    }
    const uint32_t others = bits_of(__hmin2(to_others, limit)),
                   least = bits_of(__hmin2(to_least, limit));
    uint32_t signs_low = 0, signs_high = 0;
#pragma unroll
    for (int k = 0; k < most; ++k) {
        if (Degree || k < degree) {
            const uint32_t second =
                __heq2_mask(half2_of(least_edge), half2_of(half2_int(k)));
            const uint32_t sign = (negative ^ q[k]) & k_sign_bits;
            const uint32_t R = ((least & second) | (others & ~second)) ^ sign;
            const __half2 x = __hadd2(half2_of(q[k]), half2_of(R));
            uint32_t Ln = bits_of(__hmax2(__hmin2(x, limit), __hneg2(limit)));
            if (Stop)
                Ln = (Ln & keep) | (old_L[k] & ~keep);
            L[at[k]] = Ln;
            if (k < 16)
                signs_low |= sign >> (15 - k);
            else
                signs_high |= sign >> (31 - k);
        }
    }
    return make_uint4(others, least, signs_low, least_edge | signs_high);
}

/// Layer r, at the degree of its row: 38.212's rows have 3..10 edges, or 19
/// (BG1's four core rows).
template <bool Offset, bool Stop>
__device__ __forceinline__ uint4 layer_of_row(const ldpc_batch& a,
                                              const ldpc_device_graph& g,
                                              uint32_t* L,
                                              const uint4 m,
                                              int r,
                                              int z,
                                              uint32_t keep)
{
    const int first = g.row_start[r], degree = g.row_start[r + 1] - first;
    switch (degree) {
    case 3:
        return layer<3, Offset, Stop>(a, g, L, m, first, degree, z, keep);
    case 4:
        return layer<4, Offset, Stop>(a, g, L, m, first, degree, z, keep);
    case 5:
        return layer<5, Offset, Stop>(a, g, L, m, first, degree, z, keep);
    case 6:
        return layer<6, Offset, Stop>(a, g, L, m, first, degree, z, keep);
    case 7:
        return layer<7, Offset, Stop>(a, g, L, m, first, degree, z, keep);
    case 8:
        return layer<8, Offset, Stop>(a, g, L, m, first, degree, z, keep);
    case 9:
        return layer<9, Offset, Stop>(a, g, L, m, first, degree, z, keep);
    case 10:
        return layer<10, Offset, Stop>(a, g, L, m, first, degree, z, keep);
    default: // 19: ldpc_device_graph::of admits no other degree
        return layer<19, Offset, Stop>(a, g, L, m, first, degree, z, keep);
    }
}

/// Per lane (half) of a half2, whether any of the lifted check z's rows
/// r < rows_lane fails on the hard decisions.
__device__ __forceinline__ uint32_t failing_checks(
    const ldpc_device_graph& g, const uint32_t* L, int Zc, int z, int rows0, int rows1)
{
    const __half2 zero = __float2half2_rn(0.0f);
    uint32_t failing = 0;
    const int rows = max(rows0, rows1);
    for (int r = 0; r < rows; ++r) {
        uint32_t parity = 0;
        for (int e = g.row_start[r]; e < g.row_start[r + 1]; ++e) {
            int v = z + int(g.edge[e] >> 16);
            v -= v >= Zc ? Zc : 0;
            parity ^= __hlt2_mask(half2_of(L[int(g.edge[e] & 0xffffu) + v]), zero);
        }
        failing |=
            parity & ((r < rows0 ? 0x0000ffffu : 0u) | (r < rows1 ? 0xffff0000u : 0u));
    }
    return failing;
}

template <bool Offset, bool Stop, class Input>
__global__ void __launch_bounds__(k_max_threads, 2) // two per SM: <= 85 registers
    ldpc_min_sum_kernel(const __grid_constant__ ldpc_batch a,
                        const __grid_constant__ ldpc_device_graph g,
                        const kernel_shape shape,
                        const Input in)
{
    extern __shared__ uint32_t shared_L[]; // per pair: n half2 a-posteriori LLRs
    __shared__ int last_column[k_max_pairs][2], failed[k_max_pairs][2],
        nonfinite[k_max_pairs][2];
    __shared__ int rows_of_block;
    const int t = int(threadIdx.x), p = t / shape.zc_pad, z = t - p * shape.zc_pad;
    const int Zc = a.Zc, n = a.n;
    const size_t pair = size_t(blockIdx.x) * size_t(shape.pairs) + size_t(p);
    const size_t b0 = 2 * pair, b1 = b0 + 1;
    const bool have0 = b0 < a.count, have1 = b1 < a.count;
    uint32_t* L = shared_L + size_t(p) * size_t(n);
    if (t < 2 * k_max_pairs) {
        last_column[t / 2][t % 2] = -1;
        failed[t / 2][t % 2] = 0;
        nonfinite[t / 2][t % 2] = 0;
    }
    if (t == 0)
        rows_of_block = 0;
    __syncthreads();

    int last0 = -1, last1 = -1;
    bool bad0 = false, bad1 = false;
    for (int v = z; v < n; v += shape.zc_pad) {
        const float x0 = have0 ? in(b0 * size_t(n) + size_t(v)) : 0.0f;
        const float x1 = have1 ? in(b1 * size_t(n) + size_t(v)) : 0.0f;
        bad0 |= !isfinite(x0);
        bad1 |= !isfinite(x1);
        last0 = x0 != 0.0f ? v : last0;
        last1 = x1 != 0.0f ? v : last1;
        L[v] = bits_of(__halves2half2(half_input(x0), half_input(x1)));
    }
    if (last0 >= 0)
        atomicMax(&last_column[p][0], last0 / Zc);
    if (last1 >= 0)
        atomicMax(&last_column[p][1], last1 / Zc);
    if (bad0)
        atomicOr(&nonfinite[p][0], 1);
    if (bad1)
        atomicOr(&nonfinite[p][1], 1);
    __syncthreads();
    const int rows0 = ldpc_active_rows(last_column[p][0], a.info_columns, a.rows);
    const int rows1 = ldpc_active_rows(last_column[p][1], a.info_columns, a.rows);
    const int rows_pair = max(have0 ? rows0 : 0, have1 ? rows1 : 0);
    if (z == 0)
        atomicMax(&rows_of_block, rows_pair);
    __syncthreads();
    const int rows_block = rows_of_block;

    uint4* M = static_cast<uint4*>(a.messages) + pair * size_t(a.rows) * size_t(Zc);
    bool run0 = have0, run1 = have1, ok0 = false, ok1 = false;
    int it0 = 0, it1 = 0;
    for (int it = 1; it <= a.rule.iterations; ++it) {
        const uint32_t keep = (run0 ? 0x0000ffffu : 0u) | (run1 ? 0xffff0000u : 0u);
        const bool work = z < Zc && keep != 0;
        // Each row's message of the last iteration is loaded a row ahead, so
        // its latency hides behind the row before (none in the first).
        const bool stored = it > 1 && work;
        uint4 next = stored ? M[z] : make_uint4(0, 0, 0, 0);
        for (int r = 0; r < rows_block; ++r) {
            const uint4 m = next;
            if (stored && r + 1 < rows_pair)
                next = M[size_t(r + 1) * size_t(Zc) + size_t(z)];
            if (work && r < rows_pair)
                M[size_t(r) * size_t(Zc) + size_t(z)] =
                    layer_of_row<Offset, Stop>(a, g, L, m, r, z, keep);
            __syncthreads();
        }
        if (!Stop && it < a.rule.iterations)
            continue;
        if (work) {
            const uint32_t failing = failing_checks(g, L, Zc, z, rows0, rows1) & keep;
            if (failing & 0x0000ffffu)
                atomicOr(&failed[p][0], 1);
            if (failing & 0xffff0000u)
                atomicOr(&failed[p][1], 1);
        }
        __syncthreads();
        const bool f0 = failed[p][0] != 0, f1 = failed[p][1] != 0;
        if (run0) {
            it0 = it;
            ok0 = !f0;
            run0 = !(Stop && ok0);
        }
        if (run1) {
            it1 = it;
            ok1 = !f1;
            run1 = !(Stop && ok1);
        }
        const bool more = __syncthreads_or(run0 || run1);
        if (t < 2 * k_max_pairs)
            failed[t / 2][t % 2] =
                0; // read by all above; next written after a layer's barrier
        if (!more)
            break;
    }

    const int K = a.K;
    for (int v = z; v < n; v += shape.zc_pad) {
        const __half2 h = half2_of(L[v]);
        if (v < K) {
            if (have0)
                a.bits[b0 * size_t(K) + size_t(v)] =
                    __hlt(__low2half(h), __float2half(0.0f));
            if (have1)
                a.bits[b1 * size_t(K) + size_t(v)] =
                    __hlt(__high2half(h), __float2half(0.0f));
        }
        if (a.app) {
            // Beyond its own layers' columns a block's LLRs are its inputs (a
            // layer run only for the other block of the pair changed them).
            const int column = v / Zc;
            if (have0)
                a.app[b0 * size_t(n) + size_t(v)] =
                    column < a.info_columns + rows0
                        ? __low2float(h)
                        : __half2float(half_input(in(b0 * size_t(n) + size_t(v))));
            if (have1)
                a.app[b1 * size_t(n) + size_t(v)] =
                    column < a.info_columns + rows1
                        ? __high2float(h)
                        : __half2float(half_input(in(b1 * size_t(n) + size_t(v))));
        }
    }
    if (z == 0) {
        if (have0) {
            a.iterations[b0] = it0;
            a.parity_ok[b0] = ok0 && !nonfinite[p][0];
            a.nonfinite[b0] = uint8_t(nonfinite[p][0]);
        }
        if (have1) {
            a.iterations[b1] = it1;
            a.parity_ok[b1] = ok1 && !nonfinite[p][1];
            a.nonfinite[b1] = uint8_t(nonfinite[p][1]);
        }
    }
}

kernel_shape shape_of(int Zc)
{
    kernel_shape s;
    s.zc_pad = (Zc + 31) / 32 * 32;
    s.pairs = std::max(1, std::min(k_max_pairs, 256 / s.zc_pad));
    return s;
}

template <bool Offset, bool Stop, class Input>
void launch(const ldpc_batch& a,
            const ldpc_device_graph& g,
            const Input& in,
            cudaStream_t s)
{
    const kernel_shape shape = shape_of(a.Zc);
    const size_t pairs = (a.count + 1) / 2;
    const unsigned blocks =
        unsigned((pairs + size_t(shape.pairs) - 1) / size_t(shape.pairs));
    const size_t shared = size_t(shape.pairs) * size_t(a.n) * sizeof(uint32_t);
    ldpc_min_sum_kernel<Offset, Stop, Input>
        <<<blocks, unsigned(shape.pairs * shape.zc_pad), shared, s>>>(a, g, shape, in);
    MIMO_CUDA_CHECK_LAUNCH("ldpc_min_sum_kernel");
}

template <class Input>
void launch_rule(const ldpc_batch& a,
                 const ldpc_device_graph& g,
                 const Input& in,
                 cudaStream_t s)
{
    const bool offset = a.rule.algorithm == ldpc_algorithm::offset_min_sum;
    if (offset && a.rule.early_termination)
        launch<true, true>(a, g, in, s);
    else if (offset)
        launch<true, false>(a, g, in, s);
    else if (a.rule.early_termination)
        launch<false, true>(a, g, in, s);
    else
        launch<false, false>(a, g, in, s);
}

} // namespace

size_t ldpc_min_sum_shared_bytes(const ldpc_code& code)
{
    return size_t(shape_of(code.Zc).pairs) * size_t(code.codeword_bits()) *
           sizeof(uint32_t);
}

size_t ldpc_min_sum_message_bytes(const ldpc_code& code, size_t count)
{
    return (count + 1) / 2 * size_t(code.rows()) * size_t(code.Zc) * sizeof(uint4);
}

size_t allow_ldpc_min_sum_shared_memory(int limit)
{
    return allow_dynamic_shared_memory(
        { (const void*)ldpc_min_sum_kernel<true, true, float_llrs>,
          (const void*)ldpc_min_sum_kernel<true, false, float_llrs>,
          (const void*)ldpc_min_sum_kernel<false, true, float_llrs>,
          (const void*)ldpc_min_sum_kernel<false, false, float_llrs>,
          (const void*)ldpc_min_sum_kernel<true, true, int8_llrs>,
          (const void*)ldpc_min_sum_kernel<true, false, int8_llrs>,
          (const void*)ldpc_min_sum_kernel<false, true, int8_llrs>,
          (const void*)ldpc_min_sum_kernel<false, false, int8_llrs> },
        limit);
}

void launch_ldpc_min_sum(const ldpc_batch& batch,
                         const ldpc_device_graph& graph,
                         cudaStream_t stream)
{
    if (batch.llr8)
        launch_rule(batch, graph, int8_llrs{ batch.llr8, batch.scale }, stream);
    else
        launch_rule(batch, graph, float_llrs{ batch.llr }, stream);
}

} // namespace detail
} // namespace mimo_gpu
