// CUDA engine of nway_ssfe_detector. Each (problem, pass, candidate) gets a thread
// running the same ssfe_candidate as the CPU engine; the candidates of a
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

/// How a block's threads are shared out: `lanes` threads per problem, `problems` per
/// block.
struct search_shape {
    int lanes, problems;
    __host__ __device__ static search_shape of(int slots)
    {
        const int lanes = slots < k_search_threads ? slots : k_search_threads;
        return { lanes, k_search_threads / lanes };
    }
};

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

/// The search and LLR phases for the block's problems [first, first + problems),
/// whose QR items lie contiguously at `items` (global or shared memory).
/// `dmin` is shared scratch of problems * search_scratch_floats floats: the
/// minima tables, their axis minima, the reciprocals, the singular flags.
template <int NT>
__device__ void search_block(const float* items,
                             size_t first,
                             size_t batch,
                             int passes,
                             const pam_table& pam,
                             float n0,
                             float clip,
                             float* __restrict__ llr,
                             fault_sink faults,
                             float* dmin)
{
    constexpr int per_order = floats_per_order<NT>();
    const int M = pam.order(), slots = passes * M;
    const search_shape sh = search_shape::of(slots);
    const int local = threadIdx.x / sh.lanes, lane = threadIdx.x % sh.lanes;
    const float inf = k_infinity;

    for (int i = threadIdx.x; i < sh.problems * NT * M; i += blockDim.x)
        dmin[i] = inf;
    __syncthreads(); // also orders the caller's stores of the items

    // As on the CPU: an item that is no full-rank QR (R's diagonal not > 0) is
    // erased, unless its QR already reported the problem (the cause stays the QR's).
    // A problem's first lane checks for all of them; every flag is read before
    // any lane reports.
    float* s_inverse = dmin + sh.problems * minima_floats(NT, pam);
    int* s_singular = reinterpret_cast<int*>(s_inverse + sh.problems * passes * 2 * NT);
    const bool valid = local < sh.problems && first + local < batch;
    if (valid && lane == 0)
        s_singular[local] =
            qr_item_singular<NT>(items + size_t(local) * passes * per_order, passes) &&
            !faults.flagged(first + local);
    // Each order's diagonal reciprocals, a thread each (one thread an order
    // doing 2NT divisions in a row cost N-way 10 % at 256-QAM).
    const int present = int(first + sh.problems <= batch ? sh.problems : batch - first);
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
        for (int s = singular ? slots : lane; s < slots; s += sh.lanes) {
            const int o = pam.parent_of(s), c = pam.symbol_of(s); // s = o * M + c
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
            for (int j = 0; j < NT; ++j)
                atomicMin(mine + qr_layout::stream_at(j, o, NT) * M +
                              symbol_index<NT>(level, j, pam),
                          __float_as_int(d));
        }
    }
    __syncthreads();

    // Each table's axis minima, then each LLR from its axis's L of them: L + L
    // steps a thread where a bit from its table took L^2 (256-QAM: 32 against 256).
    const int problems = int(first + sh.problems <= batch ? sh.problems : batch - first);
    block_llrs_from_symbol_minima(dmin,
                                  dmin + sh.problems * NT * M,
                                  problems,
                                  NT,
                                  pam,
                                  n0,
                                  clip,
                                  k_unreached_llr,
                                  llr + first * NT * pam.bits_per_symbol());
}

template <int NT>
__global__ void __launch_bounds__(k_search_threads)
    ssfe_search_kernel(const float* __restrict__ items,
                       size_t batch,
                       int passes,
                       const __grid_constant__ pam_table pam,
                       float n0,
                       float clip,
                       float* __restrict__ llr,
                       fault_sink faults)
{
    // the block's QR items, then dmin [problems][NT][M] and its axis minima
    extern __shared__ float smem[];
    const search_shape sh = search_shape::of(passes * pam.order());
    const size_t first = size_t(blockIdx.x) * sh.problems;
    const int n_problems =
        int(first + sh.problems <= batch ? sh.problems : batch - first);
    const int item_floats = passes * floats_per_order<NT>();
    // Every candidate thread reads its problem's whole item: load it once, coalesced
    // (the items may be host memory read over PCIe).
    float* s_items = smem;
    for (int i = threadIdx.x; i < n_problems * item_floats; i += blockDim.x)
        s_items[i] = items[first * item_floats + i];
    // search_block's first barrier orders these stores before the search reads them.
    search_block<NT>(s_items,
                     first,
                     batch,
                     passes,
                     pam,
                     n0,
                     clip,
                     llr,
                     faults,
                     s_items + sh.problems * item_floats);
}

/// QR and search of a block's problems in one kernel, the QR items in shared
/// memory. Used where (H, y) may be host memory read over PCIe: the blocks
/// then overlap their reads, arithmetic and LLR writes.
template <int NR, int NT>
__global__ void __launch_bounds__(k_search_threads)
    fused_nway_kernel(const float* __restrict__ H,
                      const float* __restrict__ y,
                      size_t batch,
                      int passes,
                      const __grid_constant__ pam_table pam,
                      float n0,
                      float clip,
                      float* __restrict__ llr,
                      fault_sink faults)
{
    constexpr int h_floats = 2 * NR * NT, y_floats = 2 * NR,
                  per_order = floats_per_order<NT>();
    extern __shared__ float smem[];
    const search_shape sh = search_shape::of(passes * pam.order());
    const size_t first = size_t(blockIdx.x) * sh.problems;
    const int n_problems =
        int(first + sh.problems <= batch ? sh.problems : batch - first);
    float* sE = smem;
    float* dmin = sE + sh.problems * passes * per_order;
    float* sH = dmin + sh.problems * search_scratch_floats(NT, passes, pam);
    float* sy = sH + sh.problems * h_floats;

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
    search_block<NT>(sE, first, batch, passes, pam, n0, clip, llr, faults, dmin);
}

size_t fused_shared_bytes(const nway_config& cfg, const pam_table& pam)
{
    const search_shape sh = search_shape::of(cfg.passes * pam.order());
    const size_t item_floats = qr_layout{ cfg.shape.nt, cfg.passes }.floats_per_item();
    return sizeof(float) * sh.problems *
           (item_floats + search_scratch_floats(cfg.shape.nt, cfg.passes, pam) +
            2 * cfg.shape.nr * cfg.shape.nt + 2 * cfg.shape.nr);
}

size_t search_shared_bytes(const nway_config& cfg, const pam_table& pam)
{
    const search_shape sh = search_shape::of(cfg.passes * pam.order());
    const size_t item_floats = qr_layout{ cfg.shape.nt, cfg.passes }.floats_per_item();
    return sizeof(float) * sh.problems *
           (search_scratch_floats(cfg.shape.nt, cfg.passes, pam) + item_floats);
}

unsigned search_blocks(const nway_config& cfg, const pam_table& pam, size_t batch)
{
    const search_shape sh = search_shape::of(cfg.passes * pam.order());
    return unsigned((batch + sh.problems - 1) / sh.problems);
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
        dispatch_shape(m_config.shape.nr, m_config.shape.nt, [&](auto nr_c, auto nt_c) {
            constexpr int NR = decltype(nr_c)::value, NT = decltype(nt_c)::value;
            allow_shared(fused_nway_kernel<NR, NT>, shared);
            fused_nway_kernel<NR, NT><<<search_blocks(m_config, m_pam, batch),
                                        k_search_threads,
                                        shared,
                                        stream>>>(reinterpret_cast<const float*>(d_H),
                                                  reinterpret_cast<const float*>(d_y),
                                                  batch,
                                                  m_config.passes,
                                                  m_pam,
                                                  n0,
                                                  clip,
                                                  d_llr,
                                                  faults);
        });
        MIMO_CUDA_CHECK_LAUNCH("fused_nway_kernel");
    }

    /// The fused kernel wins while a block holds at least 8 problems (passes * M <= 32),
    /// e.g. 16-QAM with N <= 2; beyond that its QR phase keeps too few threads
    /// busy and the two kernels win (H100 measurements, docs/benchmarks.md).
    bool fused_pays() const
    {
        return search_shape::of(m_config.passes * m_pam.order()).problems >= 8;
    }

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
        dispatch_nt(m_config.shape.nt, [&](auto nt_c) {
            constexpr int NT = decltype(nt_c)::value;
            allow_shared(ssfe_search_kernel<NT>, shared);
            ssfe_search_kernel<NT>
                <<<search_blocks(m_config, m_pam, batch), k_search_threads, shared, s>>>(
                    d_items, batch, m_config.passes, m_pam, n0, clip, d_llr, faults);
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
