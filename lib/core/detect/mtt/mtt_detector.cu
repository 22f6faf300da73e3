// CUDA engine of the MTT/OT detector (thesis section 4.1). Two kernels run the
// steps of mtt_search.h, the CPU engine's steps, so the results are the same
// to the bit:
//   - mtt_lanes_kernel (16- and 64-QAM): a thread per trellis vertex, M
//     threads per problem, 16 (16-QAM) or 4 (64-QAM) problems per block. The
//     reductions meet in shared memory: for MTT, the M x M edge weights that
//     the first extension step of the previous list computes anyway (the
//     thesis' shared reduction and extension, section 4.1), for OT one 16-byte
//     load of distance and residuals per incoming path. Each lane extends its
//     own path in registers, and full paths fold into per-symbol minima
//     (atomicMin on the float bits, valid for non-negative distances).
//   - mtt_serial_kernel (QPSK): a thread per problem running the CPU engine's
//     mtt_search_serial; with M = 4 a thread per vertex would leave most of a
//     block waiting at barriers.
// Both load their problems' H and y into shared memory with coalesced reads
// (the input may be pinned host memory read over PCIe), and one thread per
// problem computes the QR.
#include "../../qr/mgs_qr.h"
#include "../engine/cuda_detector_engine.h"
#include "../pam_table.h"
#include "mtt_engine.h"
#include "mtt_search.h"

#include <mimo_gpu/detector.h> // k_unreached_llr

namespace mimo_gpu {
namespace detail {

namespace {

constexpr int k_serial_threads = 128;

/// Threads per block of the lanes kernel. (512 for 16-QAM, so that 32 problems
/// fill the warp that computes their QRs, measured slower on the H100: 62 vs 59 us
/// for 2x2, 167 vs 152 us for 4x4.)
constexpr int k_lanes_threads = 256;
// Resident threads per SM of the architecture being compiled (Turing 1024,
// Ampere consumer and Ada 1536, the others 2048): the lanes kernel asks for as
// many resident blocks as fit, which ptxas refused with a warning where 8
// blocks of 256 exceed the SM.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 750
constexpr int k_threads_per_sm = 1024;
#elif defined(__CUDA_ARCH__) && \
    (__CUDA_ARCH__ == 860 || __CUDA_ARCH__ == 870 || __CUDA_ARCH__ == 890)
constexpr int k_threads_per_sm = 1536;
#else
constexpr int k_threads_per_sm = 2048;
#endif
constexpr int k_lanes_min_blocks = k_threads_per_sm / k_lanes_threads;

/// Coalesced copy of `problems` items of ITEM floats each from global (or
/// mapped host) memory into shared memory, interleaved: element e of problem p
/// at dst[e * PITCH + p] (PITCH odd, so neither the copy nor a thread per
/// problem reading its own item meets bank conflicts).
template <int ITEM, int PITCH>
__device__ __forceinline__ void
load_interleaved(float* dst, const float* __restrict__ src, int problems)
{
    for (int i = threadIdx.x; i < problems * ITEM; i += blockDim.x)
        dst[(i % ITEM) * PITCH + i / ITEM] = src[i];
}

// For nt <= 2, 32 registers let 8 blocks share an SM (40 did 6): the blocks'
// QR and barrier waits overlap better (H100: 2x2 16-QAM 59 -> 57 us, 64-QAM
// 560 -> 536 us; the QPSK kernel got slower the same way, 22.7 -> 24.0 us).
template <int NR, int NT, int L>
__global__ void __launch_bounds__(k_lanes_threads, NT <= 2 ? k_lanes_min_blocks : 1)
    mtt_lanes_kernel(const float* __restrict__ H,
                     const float* __restrict__ y,
                     size_t batch,
                     const __grid_constant__ pam_table pam,
                     bool multipass,
                     bool shared_weights,
                     float n0,
                     float clip,
                     float* __restrict__ llr,
                     fault_sink faults)
{
    constexpr int M = L * L, P = k_lanes_threads / M, W = mtt_width<NT>(), PITCH = P + 1;
    constexpr int h_floats = 2 * NR * NT, y_floats = 2 * NR, e_floats = 2 * NT * W;
    __shared__ float sH[PITCH * h_floats], sy[PITCH * y_floats], sE[P * e_floats];
    __shared__ float4
        s_lane[P * M]; // (distance, residual 0, residual 1, -) of each lane's path
    __shared__ int s_sym[P * M * NT];
    __shared__ int s_dmin[P * NT * M];
    // MTT only: each problem's M x M edge weights of the current stage (rows of
    // M + 1 floats, no bank conflicts), then its lanes' path distances.
    extern __shared__ float s_weights[];
    constexpr int row = M + 1;

    const size_t first = size_t(blockIdx.x) * P;
    const int n_problems = int(first + P <= batch ? P : batch - first);
    load_interleaved<h_floats, PITCH>(sH, H + first * h_floats, n_problems);
    load_interleaved<y_floats, PITCH>(sy, y + first * y_floats, n_problems);
    for (int i = threadIdx.x; i < P * NT * M; i += blockDim.x)
        s_dmin[i] = __float_as_int(k_infinity);
    __syncthreads();
    if (int(threadIdx.x) < n_problems) {
        const problem_fault fault = mgs_qr_order<NR, NT, PITCH>(
            sH + threadIdx.x, sy + threadIdx.x, 0, sE + threadIdx.x * e_floats);
        if (fault != problem_fault::none)
            faults.report(first + threadIdx.x, fault);
    }
    __syncthreads();

    const mtt_levels<L> lv(pam);
    const int local = threadIdx.x / M, lane = threadIdx.x % M;
    const bool valid = local < n_problems;
    const float* E = sE + local * e_floats;
    int* dmin = s_dmin + local * NT * M;
    float4* lanes = s_lane + local * M;
    int* syms = s_sym + local * M * NT;
    auto keep_min = [dmin](int i, float d) { atomicMin(dmin + i, __float_as_int(d)); };
    auto record = [&](const mtt_path<NT>& path, int a_last) {
        mtt_path<NT> full = path;
        full.d = mtt_extend<NT, L>(E, a_last, lv, full.p, full.sym, path.d);
        mtt_record<NT, M>(full.sym, full.d, keep_min);
    };

    float* weights = s_weights + local * M * row;
    float* distances = s_weights + P * M * row + local * M;

    mtt_path<NT> path;
    if (valid) { // stage 0: stream NT-1 alone
        float b0, b1;
        mtt_residual<NT>(E, NT - 1, path.p, b0, b1);
        mtt_assign<NT, L>(NT - 1, lane, lv, path.p, path.sym);
        path.d = mtt_vertex<NT, L>(E, NT - 1, lv, lane).total(0.0f, b0, b1);
        syms[lane * NT + NT - 1] = lane;
        if (NT == 1 || (multipass && !shared_weights))
            record(path, NT - 1);
    }
    MIMO_UNROLL
    for (int t = 1; t < NT; ++t) {
        const int a = NT - 1 - t;
        if (valid) {
            float b0, b1;
            mtt_residual<NT>(E, a, path.p, b0, b1);
            if (shared_weights) {
                // The first extension step of list t-1's path `lane` weighs the
                // same M edges as the reduction into stage t: keep them as row
                // `lane`, record the list's path, and reduce over the columns.
                float* my_row = weights + lane * row;
                float w;
                const int v = mtt_scan_points<NT, L>(
                    E, a, lv, b0, b1, w, [my_row](int point, float wp) {
                        my_row[point] = wp;
                    });
                distances[lane] = path.d;
                mtt_path<NT> full = path;
                mtt_assign<NT, L>(a, v, lv, full.p, full.sym);
                full.d = mtt_extend<NT, L>(E, a, lv, full.p, full.sym, path.d + w);
                mtt_record<NT, M>(full.sym, full.d, keep_min);
            } else {
                lanes[lane] = make_float4(path.d, b0, b1, 0.0f);
            }
        }
        __syncthreads();
        int from[NT];
        float best = k_infinity;
        if (valid) {
            int best_k = 0;
            if (shared_weights) {
                // d_k + w(k, lane): the same floats as mtt_vertex::total.
                for (int k = 0; k < M; ++k) {
                    const float total = distances[k] + weights[k * row + lane];
                    if (total < best) {
                        best = total;
                        best_k = k;
                    }
                }
            } else {
                const mtt_vertex<NT, L> vertex(E, a, lv, lane);
                for (int k = 0; k < M; ++k) {
                    const float4 in = lanes[k];
                    const float total = vertex.total(in.x, in.y, in.z);
                    if (total < best) {
                        best = total;
                        best_k = k;
                    }
                }
            }
            MIMO_UNROLL
            for (int s = a + 1; s < NT; ++s)
                from[s] = syms[best_k * NT + s];
        }
        __syncthreads();
        if (valid) {
            MIMO_UNROLL
            for (int s = a + 1; s < NT; ++s) {
                mtt_assign<NT, L>(s, from[s], lv, path.p, path.sym);
                syms[lane * NT + s] = from[s];
            }
            mtt_assign<NT, L>(a, lane, lv, path.p, path.sym);
            syms[lane * NT + a] = lane;
            path.d = best;
            // List t, extended to the end (with shared weights: only the last
            // list, complete paths; the others were recorded in the next stage).
            if (t == NT - 1 || (multipass && !shared_weights))
                record(path, a);
        }
    }
    __syncthreads();

    constexpr int LBITS = L == 2 ? 1 : (L == 4 ? 2 : 3), Q = 2 * LBITS;
    block_llrs_from_symbol_minima<NT, LBITS>(
        reinterpret_cast<const float*>(s_dmin),
        // The axis minima where the paths' symbols were
        // (unread after the last barrier; M >= 2 L).
        reinterpret_cast<float*>(s_sym),
        n_problems,
        pam,
        n0,
        clip,
        k_unreached_llr,
        llr + first * NT * Q);
}

template <int NR, int NT, int L>
__global__ void __launch_bounds__(k_serial_threads)
    mtt_serial_kernel(const float* __restrict__ H,
                      const float* __restrict__ y,
                      size_t batch,
                      const __grid_constant__ pam_table pam,
                      bool multipass,
                      float n0,
                      float clip,
                      float* __restrict__ llr,
                      fault_sink faults)
{
    constexpr int M = L * L, P = k_serial_threads, W = mtt_width<NT>(), PITCH = P + 1;
    constexpr int h_floats = 2 * NR * NT, y_floats = 2 * NR;
    constexpr int Q = 2 * (L == 2 ? 1 : (L == 4 ? 2 : 3)), per_problem = NT * Q;
    // H and y in, then (after the QR) the block's LLRs out, through the same shared
    // memory.
    constexpr int in_floats = PITCH * (h_floats + y_floats),
                  out_floats = PITCH * per_problem;
    __shared__ float s_io[in_floats > out_floats ? in_floats : out_floats];

    const size_t first = size_t(blockIdx.x) * P;
    const int n_problems = int(first + P <= batch ? P : batch - first);
    float* sH = s_io;
    float* sy = s_io + PITCH * h_floats;
    load_interleaved<h_floats, PITCH>(sH, H + first * h_floats, n_problems);
    load_interleaved<y_floats, PITCH>(sy, y + first * y_floats, n_problems);
    __syncthreads();

    const bool valid = int(threadIdx.x) < n_problems;
    float E[2 * NT * W];
    bool good = false;
    if (valid) {
        const problem_fault fault =
            mgs_qr_order<NR, NT, PITCH>(sH + threadIdx.x, sy + threadIdx.x, 0, E);
        if (fault != problem_fault::none)
            faults.report(first + threadIdx.x, fault);
        good = fault == problem_fault::none;
    }
    float dmin[NT * M];
    if (good)
        mtt_search_serial<NT, L>(E, mtt_levels<L>(pam), multipass, dmin);
    __syncthreads(); // everyone is done reading H and y
    if (valid)
        for (int b = 0; b < per_problem;
             ++b) // interleaved, as the input: no bank conflicts
            s_io[b * PITCH + threadIdx.x] =
                good ? llr_from_symbol_minima(
                           dmin + (b / Q) * M, pam, b % Q, n0, clip, k_unreached_llr)
                     : 0.0f;
    __syncthreads();
    for (int i = threadIdx.x; i < n_problems * per_problem; i += blockDim.x)
        llr[first * per_problem + i] = s_io[(i % per_problem) * PITCH + i / per_problem];
}

class cuda_mtt_engine final : public cuda_detector_engine
{
public:
    explicit cuda_mtt_engine(const mtt_config& config)
        : cuda_detector_engine(config.shape, config.mod), m_config(config)
    {
    }

protected:
    void launch(const detector_input& in,
                float clip,
                float* d_llr,
                fault_sink sink,
                cudaStream_t stream) override
    {
        const auto* h = reinterpret_cast<const float*>(in.H);
        const auto* yy = reinterpret_cast<const float*>(in.y);
        const size_t batch = in.problems();
        const float n0 = in.n0;
        dispatch_mtt_shape(
            m_config.shape.nr, m_config.shape.nt, [&](auto nr_c, auto nt_c) {
                constexpr int NR = decltype(nr_c)::value, NT = decltype(nt_c)::value;
                dispatch_levels(m_pam.levels, [&](auto l_c) {
                    constexpr int L = decltype(l_c)::value;
                    if constexpr (L == 2) {
                        mtt_serial_kernel<NR, NT, L>
                            <<<unsigned((batch + k_serial_threads - 1) /
                                        k_serial_threads),
                               k_serial_threads,
                               0,
                               stream>>>(h,
                                         yy,
                                         batch,
                                         m_pam,
                                         m_config.multipass,
                                         n0,
                                         clip,
                                         d_llr,
                                         sink);
                    } else {
                        constexpr int threads = k_lanes_threads, M = L * L,
                                      P = threads / M;
                        // MTT's edge weights and distances in shared memory (OT needs
                        // none). Not for 2x2 64-QAM, whose 67 KB cost more occupancy
                        // than they save (H100: kernel 536 -> 542 us, end to end 578 ->
                        // 693 us; 4x4 64-QAM 1171 -> 1008 us, 16-QAM 152 -> 140 us).
                        const bool shared_weights =
                            m_config.multipass && (NT > 2 || L < 8);
                        const size_t weights =
                            shared_weights ? sizeof(float) * P * M * (M + 2) : 0;
                        if (weights > 48 * 1024)
                            MIMO_CUDA_CHECK(cudaFuncSetAttribute(
                                mtt_lanes_kernel<NR, NT, L>,
                                cudaFuncAttributeMaxDynamicSharedMemorySize,
                                int(weights)));
                        mtt_lanes_kernel<NR, NT, L>
                            <<<unsigned((batch + P - 1) / P), threads, weights, stream>>>(
                                h,
                                yy,
                                batch,
                                m_pam,
                                m_config.multipass,
                                shared_weights,
                                n0,
                                clip,
                                d_llr,
                                sink);
                    }
                });
            });
        MIMO_CUDA_CHECK_LAUNCH("mtt kernel");
    }

private:
    mtt_config m_config;
};

} // namespace

std::unique_ptr<detector_engine> make_cuda_mtt_engine(const mtt_config& config)
{
    return std::make_unique<cuda_mtt_engine>(config);
}

} // namespace detail
} // namespace mimo_gpu
