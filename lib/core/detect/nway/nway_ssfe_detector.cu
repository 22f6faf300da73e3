// CUDA engine of nway_ssfe_detector. A problem's (pass, candidate) pairs are
// shared out over its lanes (search_shape), each running the same
// ssfe_candidate as the CPU engine; the candidates of a
// problem meet in shared memory as per-symbol minima (an atomicMin on the
// float's bits, valid for the non-negative distances); then each table's axis
// minima, a thread per (stream, axis, level), and the LLRs, a thread per bit.
//
// detect(H, y) runs, for light searches, one fused kernel with the QR items in
// shared memory (with the input in host memory its blocks overlap PCIe reads,
// arithmetic and writes), else the QR kernel and the search kernel with the
// items kept on the device (see fused_pays; measured in docs/benchmarks.md).
//
// Host memory is used in place when it is pinned (zero copy): the kernels read
// H and y and write the LLRs over PCIe with coalesced accesses, which saves the
// separate copy operations; pageable memory goes through pinned staging first.
#include "../../qr/mgs_qr.h"
#include "../../qr/qr_kernels.h"
#include "../../runtime/shape_dispatch.h"
#include "../engine/cuda_detector_engine.h"
#include "../pam_table.h"
#include "nway_engine.h"
#include "ssfe_search.h"

namespace mimo_gpu {
namespace detail {

namespace {

constexpr int k_search_threads = 256;
/// Lanes a problem at most: beyond 64 candidates a problem (256-QAM and up,
/// 64-QAM or 16-QAM with several passes) a lane runs several, which shares each warp's
/// fixed work (the shape, the item's loads, the barriers' waits) among more of them:
/// H100, 4x4 256-QAM N = 1, 0.461 ms with 256 lanes, 0.456 with 128, 0.424
/// with 64; 64-QAM N = 4 0.440 / 0.374 / 0.348 ms.
constexpr int k_max_lanes = 64;
/// The largest modulation (bits per dimension) that fused_pays can choose the
/// fused kernel for: 8 problems of 256 threads need passes * M <= 32.
constexpr int k_fused_max_bits_per_dim = 2;
static_assert(k_max_lanes >= 64,
              "fewer lanes would give 64-QAM 8 problems a block: the fused kernel");

/// How a block's threads are shared out: 2^lane_bits lanes per problem (its
/// passes * M candidates rounded up to a power of two, at most k_max_lanes;
/// lane l runs candidates l, l + lanes, ...) and 256 >> lane_bits problems. Powers of
/// two, so that a thread's problem and lane are a shift and a mask (the divisions by a
/// lane count cost 256-QAM a fifth of its instructions).
struct search_shape {
    int lane_bits;
    MIMO_HD int lanes() const { return 1 << lane_bits; }
    MIMO_HD int problems() const { return k_search_threads >> lane_bits; }
    static search_shape of(int passes, const pam_table& pam)
    {
        const int slots = passes << (2 * pam.bits_per_dim);
        int bits = 0;
        while ((1 << bits) < slots && (1 << bits) < k_max_lanes)
            ++bits;
        return { bits };
    }
};

/// The block's problems: the shape's, or fewer in the batch's last block.
__device__ int problems_in_block(search_shape shape, size_t first, size_t batch)
{
    const int P = shape.problems();
    return int(first + P <= batch ? P : batch - first);
}

/// Floats rounded up to a multiple of 4: the scratch after the QR items starts
/// 16-byte aligned (dmin's float4 stores), and the items themselves stay at the
/// block's aligned start (their rows load as 64- and 128-bit words).
MIMO_HD int aligned_floats(int floats) { return (floats + 3) & ~3; }

template <int NT>
constexpr int floats_per_order()
{
    return 2 * NT * (2 * NT + 1);
}

/// Shared floats per problem for its symbol minima (NT tables of M) and their
/// axis minima (NT x 2 axes x L levels).
MIMO_HD int minima_floats(int nt, const pam_table& pam)
{
    return nt * (pam.order() + 2 * pam.levels);
}

/// Shared floats per problem of search_block's scratch: the minima, each
/// order's diagonal reciprocals, and its singular flag.
MIMO_HD int search_scratch_floats(int nt, int passes, const pam_table& pam)
{
    return minima_floats(nt, pam) + passes * 2 * nt + 1;
}

/// Shared memory a block of the search kernel aims to stay within, where fewer
/// problems a block allow it (search_shape_for).
constexpr size_t k_search_shared_target = 48 * 1024;

/// The search's shape for a configuration: search_shape::of's, with more lanes
/// (fewer problems a block, up to as many lanes as candidates) while a block's
/// items and scratch would pass 48 KB. The cap of 64 lanes then asks no block
/// for more shared memory than a lane per candidate did (8x8 1024-QAM, 8
/// passes: 44 KB, not 176 KB); GPUs before Hopper allow 64-164 KB a block.
search_shape search_shape_for(const nway_config& cfg, const pam_table& pam)
{
    search_shape sh = search_shape::of(cfg.passes, pam);
    const int slots = cfg.passes * pam.order();
    const size_t per_problem =
        sizeof(float) * size_t(qr_layout{ cfg.shape.nt, cfg.passes }.floats_per_item() +
                               search_scratch_floats(cfg.shape.nt, cfg.passes, pam));
    while (sh.lanes() < slots && sh.problems() > 1 &&
           size_t(sh.problems()) * per_problem > k_search_shared_target)
        ++sh.lane_bits;
    return sh;
}

/// The search and LLR phases for the block's problems [first, first + problems),
/// whose QR items lie contiguously at `items` (global or shared memory).
/// `dmin` is shared scratch of problems * search_scratch_floats floats, 16-byte
/// aligned: the minima tables, their axis minima, the reciprocals, the singular
/// flags.
template <int NT, int LBITS>
__device__ void search_block(const float* items,
                             size_t first,
                             size_t batch,
                             int passes,
                             search_shape shape,
                             const pam_table& pam,
                             float n0,
                             float clip,
                             float* __restrict__ llr,
                             fault_sink faults,
                             float* dmin)
{
    constexpr int per_order = floats_per_order<NT>(), L = 1 << LBITS, M = L * L;
    const int local = int(threadIdx.x) >> shape.lane_bits,
              lane = int(threadIdx.x) & (shape.lanes() - 1);
    const float inf = k_infinity;

    // NT * M floats a problem: a multiple of 4.
    for (int i = threadIdx.x; i < shape.problems() * NT * M / 4; i += blockDim.x)
        reinterpret_cast<float4*>(dmin)[i] = make_float4(inf, inf, inf, inf);
    __syncthreads(); // also orders the caller's stores of the items

    // As on the CPU: an item that is no full-rank QR (R's diagonal not > 0) is
    // erased, unless its QR already reported the problem (the cause stays the QR's).
    // A problem's first lane checks for all of them; every flag is read before
    // any lane reports.
    float* s_inverse = dmin + shape.problems() * minima_floats(NT, pam);
    int* s_singular =
        reinterpret_cast<int*>(s_inverse + shape.problems() * passes * 2 * NT);
    const int present = problems_in_block(shape, first, batch);
    const bool valid = local < present;
    if (valid && lane == 0)
        s_singular[local] =
            qr_item_singular<NT>(items + size_t(local) * passes * per_order, passes) &&
            !faults.flagged(first + local);
    // Each order's diagonal reciprocals, a thread each (one thread an order
    // doing 2NT divisions in a row cost N-way 10 % at 256-QAM).
    for (int i = threadIdx.x; i < present * passes * 2 * NT; i += blockDim.x)
        s_inverse[i] = ssfe_inverse_diagonal<NT>(items + size_t(i / (2 * NT)) * per_order,
                                                 i % (2 * NT));
    __syncthreads();
    const bool singular = valid && s_singular[local] != 0;
    if (valid) {
        const float* item = items + size_t(local) * passes * per_order;
        int* mine = reinterpret_cast<int*>(dmin + local * NT * M);
        if (singular && lane == 0)
            faults.report(first + local,
                          isnan(item[0]) ? problem_fault::non_finite
                                         : problem_fault::singular);
        const int slots = passes * M;
        for (int s = singular ? slots : lane; s < slots; s += shape.lanes()) {
            const int o = s >> (2 * LBITS), c = s & (M - 1); // s = o * M + c
            int level[2 * NT];
            const float d = ssfe_candidate<NT>(item + o * per_order,
                                               s_inverse + (local * passes + o) * 2 * NT,
                                               c,
                                               pam,
                                               level);
            if (!(d < inf)) {
                faults.report(first + local, problem_fault::non_finite);
                continue;
            }
            MIMO_UNROLL
            for (int j = 0; j < NT; ++j) {
                // qr_layout::stream_at(j, o, NT) without the modulo (o < passes <= NT)
                const int stream = j + o < NT ? j + o : j + o - NT;
                atomicMin(mine + stream * M + (level[2 * j] << LBITS) + level[2 * j + 1],
                          __float_as_int(d));
            }
        }
    }
    __syncthreads();

    // Each table's axis minima, then each LLR from its axis's L of them: L + L
    // steps a thread where a bit from its table took L^2 (256-QAM: 32 against 256).
    block_llrs_from_symbol_minima<NT, LBITS>(dmin,
                                             dmin + shape.problems() * NT * M,
                                             present,
                                             pam,
                                             n0,
                                             clip,
                                             k_unreached_llr,
                                             llr + first * NT * pam.bits_per_symbol());
}

template <int NT, int LBITS>
__global__ void __launch_bounds__(k_search_threads)
    ssfe_search_kernel(const float* __restrict__ items,
                       size_t batch,
                       int passes,
                       search_shape shape,
                       const __grid_constant__ pam_table pam,
                       float n0,
                       float clip,
                       float* __restrict__ llr,
                       fault_sink faults)
{
    // the block's QR items, then dmin [problems][NT][M], its axis minima and the
    // rest of search_block's scratch
    extern __shared__ float4 smem4[];
    float* s_items = reinterpret_cast<float*>(smem4);
    const size_t first = size_t(blockIdx.x) * shape.problems();
    const int n_problems = problems_in_block(shape, first, batch);
    const int item_floats = passes * floats_per_order<NT>();
    float* dmin = s_items + aligned_floats(shape.problems() * item_floats);
    // Every candidate thread reads its problem's whole item: load it once, coalesced
    // (the items may be host memory read over PCIe).
    for (int i = threadIdx.x; i < n_problems * item_floats; i += blockDim.x)
        s_items[i] = items[first * item_floats + i];
    // search_block's first barrier orders these stores before the search reads them.
    search_block<NT, LBITS>(
        s_items, first, batch, passes, shape, pam, n0, clip, llr, faults, dmin);
}

/// QR and search of a block's problems in one kernel, the QR items in shared
/// memory. Used where (H, y) may be host memory read over PCIe: the blocks
/// then overlap their reads, arithmetic and LLR writes.
template <int NR, int NT, int LBITS>
__global__ void __launch_bounds__(k_search_threads)
    fused_nway_kernel(const float* __restrict__ H,
                      const float* __restrict__ y,
                      size_t batch,
                      int passes,
                      search_shape shape,
                      const __grid_constant__ pam_table pam,
                      float n0,
                      float clip,
                      float* __restrict__ llr,
                      fault_sink faults)
{
    constexpr int h_floats = 2 * NR * NT, y_floats = 2 * NR,
                  per_order = floats_per_order<NT>();
    extern __shared__ float4 smem4[];
    const int problems = shape.problems();
    const size_t first = size_t(blockIdx.x) * problems;
    const int n_problems = problems_in_block(shape, first, batch);
    // the QR items, dmin and the rest of search_block's scratch, H and y
    float* sE = reinterpret_cast<float*>(smem4);
    float* dmin = sE + aligned_floats(problems * passes * per_order);
    float* sH = dmin + problems * search_scratch_floats(NT, passes, pam);
    float* sy = sH + problems * h_floats;

    for (int i = threadIdx.x; i < n_problems * h_floats; i += blockDim.x) // coalesced
        sH[i] = H[first * h_floats + i];
    for (int i = threadIdx.x; i < n_problems * y_floats; i += blockDim.x)
        sy[i] = y[first * y_floats + i];
    __syncthreads();
    if (int(threadIdx.x) < n_problems * passes) {
        const int lp = threadIdx.x / passes, o = threadIdx.x % passes;
        const problem_fault fault = mgs_qr_order<NR, NT>(
            sH + lp * h_floats, sy + lp * y_floats, o, sE + threadIdx.x * per_order);
        if (fault != problem_fault::none)
            faults.report(first + lp, fault);
    }
    // search_block's first barrier orders the QR items before the search reads them.
    search_block<NT, LBITS>(
        sE, first, batch, passes, shape, pam, n0, clip, llr, faults, dmin);
}

size_t search_shared_bytes(const nway_config& cfg, const pam_table& pam)
{
    const int problems = search_shape_for(cfg, pam).problems();
    const int item_floats = qr_layout{ cfg.shape.nt, cfg.passes }.floats_per_item();
    return sizeof(float) *
           size_t(aligned_floats(problems * item_floats) +
                  problems * search_scratch_floats(cfg.shape.nt, cfg.passes, pam));
}

size_t fused_shared_bytes(const nway_config& cfg, const pam_table& pam)
{
    const int problems = search_shape_for(cfg, pam).problems();
    return search_shared_bytes(cfg, pam) +
           sizeof(float) * size_t(problems) *
               (2 * cfg.shape.nr * cfg.shape.nt + 2 * cfg.shape.nr);
}

unsigned search_blocks(search_shape shape, size_t batch)
{
    return unsigned((batch + shape.problems() - 1) / shape.problems());
}

/// Raises a kernel's dynamic shared memory limit when it needs more than 48 KB.
template <typename Kernel>
void allow_shared(Kernel kernel, size_t bytes)
{
    if (bytes > 48 * 1024)
        MIMO_CUDA_CHECK(cudaFuncSetAttribute(
            kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
}

class cuda_nway_engine final : public cuda_detector_engine, public nway_qr_search
{
public:
    explicit cuda_nway_engine(const nway_config& config)
        : cuda_detector_engine(
              config.shape,
              config.mod,
              {}, // kernels read H, y and write LLRs in place (zero copy)
              qr_layout{ config.shape.nt, config.passes }.floats_per_item() *
                  sizeof(float)),
          m_config(config)
    {
    }

    detection_report
    detect_qr(const float* items, size_t batch, float n0, float clip, float* llr) override
    {
        return host_call(batch, llr, [&](fault_sink sink, cudaStream_t s) {
            launch_search(m_items_in.device_view(items, batch * item_floats()),
                          batch,
                          n0,
                          clip,
                          device_llrs(llr, batch, s),
                          sink,
                          s);
        });
    }

    void detect_qr_device(const float* d_items,
                          size_t batch,
                          float n0,
                          float clip,
                          float* d_llr,
                          cuda_stream_t stream) override
    {
        device_call(batch, d_llr, stream, [&](fault_sink sink) {
            launch_search(d_items, batch, n0, clip, d_llr, sink, stream);
        });
    }

private:
    void launch(const detector_input& in,
                float clip,
                float* d_llr,
                fault_sink sink,
                cudaStream_t stream) override
    {
        launch_detect(in.H, in.y, in.problems(), in.n0, clip, d_llr, sink, stream);
    }

    void launch_detect(const cfloat* d_H,
                       const cfloat* d_y,
                       size_t batch,
                       float n0,
                       float clip,
                       float* d_llr,
                       fault_sink faults,
                       cudaStream_t stream)
    {
        if (!fused_pays()) {
            float* d_items = m_items.reserve(batch * item_floats());
            launch_mgs_qr(m_config.shape,
                          m_config.passes,
                          d_H,
                          d_y,
                          batch,
                          d_items,
                          faults,
                          stream);
            launch_search(d_items, batch, n0, clip, d_llr, faults, stream);
            return;
        }
        const size_t shared = fused_shared_bytes(m_config, m_pam);
        const search_shape shape = search_shape_for(m_config, m_pam);
        dispatch_bits_per_dim<5>(m_pam.bits_per_dim, [&](auto bits_c) {
            constexpr int LBITS = decltype(bits_c)::value;
            // Instantiated only for the modulations fused_pays can choose it for.
            if constexpr (LBITS <= k_fused_max_bits_per_dim)
                dispatch_shape(
                    m_config.shape.nr, m_config.shape.nt, [&](auto nr_c, auto nt_c) {
                        constexpr int NR = decltype(nr_c)::value,
                                      NT = decltype(nt_c)::value;
                        const auto kernel = fused_nway_kernel<NR, NT, LBITS>;
                        allow_shared(kernel, shared);
                        kernel<<<search_blocks(shape, batch),
                                 k_search_threads,
                                 shared,
                                 stream>>>(reinterpret_cast<const float*>(d_H),
                                           reinterpret_cast<const float*>(d_y),
                                           batch,
                                           m_config.passes,
                                           shape,
                                           m_pam,
                                           n0,
                                           clip,
                                           d_llr,
                                           faults);
                    });
            else // fused_pays: 8 problems a block need passes * M <= 32
                throw std::logic_error("mimo_gpu: nway: no fused kernel beyond 16-QAM");
        });
        MIMO_CUDA_CHECK_LAUNCH("fused_nway_kernel");
    }

    /// The fused kernel wins while a block holds at least 8 problems (passes * M <= 32),
    /// e.g. 16-QAM with N <= 2; beyond that its QR phase keeps too few threads
    /// busy and the two kernels win (H100 measurements, docs/benchmarks.md).
    bool fused_pays() const { return search_shape_for(m_config, m_pam).problems() >= 8; }

    size_t item_floats() const
    {
        return qr_layout{ m_config.shape.nt, m_config.passes }.floats_per_item();
    }

    void launch_search(const float* d_items,
                       size_t batch,
                       float n0,
                       float clip,
                       float* d_llr,
                       fault_sink faults,
                       cudaStream_t s)
    {
        if (batch == 0)
            return;
        const size_t shared = search_shared_bytes(m_config, m_pam);
        dispatch_bits_per_dim<5>(m_pam.bits_per_dim, [&](auto bits_c) {
            dispatch_nt(m_config.shape.nt, [&](auto nt_c) {
                constexpr int NT = decltype(nt_c)::value, LBITS = decltype(bits_c)::value;
                const auto kernel = ssfe_search_kernel<NT, LBITS>;
                allow_shared(kernel, shared);
                const search_shape shape = search_shape_for(m_config, m_pam);
                kernel<<<search_blocks(shape, batch), k_search_threads, shared, s>>>(
                    d_items,
                    batch,
                    m_config.passes,
                    shape,
                    m_pam,
                    n0,
                    clip,
                    d_llr,
                    faults);
            });
        });
        MIMO_CUDA_CHECK_LAUNCH("ssfe_search_kernel");
    }

    nway_config m_config;
    host_input<float> m_items_in;
    device_array<float>
        m_items; // QR items between the two kernels: they never leave the device
};

} // namespace

std::unique_ptr<detector_engine> make_cuda_nway_engine(const nway_config& config)
{
    return std::make_unique<cuda_nway_engine>(config);
}

} // namespace detail
} // namespace mimo_gpu
