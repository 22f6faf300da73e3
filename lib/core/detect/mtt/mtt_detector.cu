// CUDA engine of the MTT/OT detector (thesis section 4.1): a thread per trellis
// vertex, M threads per problem and 256/M problems per block. A block loads
// its problems' H and y (coalesced: the input may be pinned host memory read
// over PCIe), one thread per problem computes the QR into shared memory, then
// the lanes run the same steps as the CPU engine (mtt_search.h): the
// reductions meet in shared memory, each lane extends its own path in
// registers, and full paths fold into per-symbol minima (atomicMin on the
// float bits, valid for non-negative distances) that give the LLRs.
#include "../../qr/mgs_qr.h"
#include "../../runtime/cuda_staging.h"
#include "../../runtime/shape_dispatch.h"
#include "../pam_table.h"
#include "mtt_engine.h"
#include "mtt_search.h"

#include <mimo_gpu/nway_detector.h> // k_unreached_llr

namespace mimo_gpu {
namespace detail {

namespace {

constexpr int k_mtt_threads = 256;

template <int NR, int NT>
struct mtt_smem {
    int problems, M;
    __host__ __device__ size_t h_floats() const { return size_t(problems) * 2 * NR * NT; }
    __host__ __device__ size_t y_floats() const { return size_t(problems) * 2 * NR; }
    __host__ __device__ size_t e_floats() const { return size_t(problems) * 2 * NT * mtt_width<NT>(); }
    __host__ __device__ size_t lane_floats() const { return size_t(problems) * M; }
    __host__ __device__ size_t bytes() const
    {
        return sizeof(float) * (h_floats() + y_floats() + e_floats() + 3 * lane_floats() + NT * lane_floats()) +
               sizeof(int) * NT * lane_floats();
    }
};

/// Folds a full path (after extension from a_last) into the symbol minima.
template <int NT>
__device__ __forceinline__ void record_candidate(const float* E, const pam_table& pam, int a_last, const int (&sym)[NT],
                                                 const float (&p)[2 * NT], float d, int* dmin)
{
    int s[NT];
    float q[2 * NT];
    MIMO_UNROLL
    for (int i = 0; i < NT; ++i)
        s[i] = sym[i];
    MIMO_UNROLL
    for (int i = 0; i < 2 * NT; ++i)
        q[i] = p[i];
    const float full = mtt_extend<NT>(E, a_last, pam, q, s, d);
    const int M = pam.order();
    MIMO_UNROLL
    for (int t = 0; t < NT; ++t)
        atomicMin(dmin + t * M + s[t], __float_as_int(full));
}

template <int NR, int NT>
__global__ void __launch_bounds__(k_mtt_threads)
    mtt_kernel(const float* __restrict__ H, const float* __restrict__ y, size_t batch, const __grid_constant__ pam_table pam,
               bool multipass, float n0, float clip, float* __restrict__ llr, problem_status* status)
{
    constexpr int W = mtt_width<NT>(), h_floats = 2 * NR * NT, y_floats = 2 * NR, e_floats = 2 * NT * W;
    const int M = pam.order(), P = blockDim.x / M;
    const mtt_smem<NR, NT> layout{P, M};
    extern __shared__ float smem[];
    float* sH = smem;
    float* sy = sH + layout.h_floats();
    float* sE = sy + layout.y_floats();
    float* sd = sE + layout.e_floats();
    float* sb0 = sd + layout.lane_floats();
    float* sb1 = sb0 + layout.lane_floats();
    int* dmin = reinterpret_cast<int*>(sb1 + layout.lane_floats()); // [P][NT][M]
    int* ssym = dmin + NT * layout.lane_floats();                     // [P][M][NT]

    const size_t first = size_t(blockIdx.x) * P;
    const int n_problems = int(first + P <= batch ? P : batch - first);
    for (int i = threadIdx.x; i < n_problems * h_floats; i += blockDim.x)
        sH[i] = H[first * h_floats + i];
    for (int i = threadIdx.x; i < n_problems * y_floats; i += blockDim.x)
        sy[i] = y[first * y_floats + i];
    for (int i = threadIdx.x; i < P * NT * M; i += blockDim.x)
        dmin[i] = __float_as_int(k_infinity);
    __syncthreads();
    if (int(threadIdx.x) < n_problems) {
        const problem_fault fault =
            mgs_qr_order<NR, NT>(sH + threadIdx.x * h_floats, sy + threadIdx.x * y_floats, 0, sE + threadIdx.x * e_floats);
        if (fault != problem_fault::none)
            atomicMin(status, make_status(first + threadIdx.x, fault));
    }
    __syncthreads();

    const int local = threadIdx.x / M, lane = threadIdx.x % M;
    const bool valid = local < n_problems;
    const float* E = sE + local * e_floats;
    int* my_dmin = dmin + local * NT * M;
    float* pd = sd + local * M;
    float* pb0 = sb0 + local * M;
    float* pb1 = sb1 + local * M;
    int* psym = ssym + local * M * NT;

    int sym[NT];
    float p[2 * NT];
    float d = 0.0f;
    if (valid) { // stage 0: stream NT-1 alone
        float b0, b1;
        mtt_residual<NT>(E, NT - 1, p, b0, b1);
        mtt_assign<NT>(NT - 1, lane, pam, p, sym);
        d = mtt_weight<NT>(E, NT - 1, b0, b1, p[2 * (NT - 1)], p[2 * (NT - 1) + 1]);
        psym[lane * NT + NT - 1] = lane;
        if (multipass || NT == 1)
            record_candidate<NT>(E, pam, NT - 1, sym, p, d, my_dmin);
    }
    MIMO_UNROLL
    for (int t = 1; t < NT; ++t) {
        const int a = NT - 1 - t;
        if (valid) {
            float b0, b1;
            mtt_residual<NT>(E, a, p, b0, b1);
            pb0[lane] = b0;
            pb1[lane] = b1;
            pd[lane] = d;
        }
        __syncthreads();
        int from_sym[NT];
        float next_d = 0.0f;
        if (valid) {
            const int k = mtt_best_incoming<NT>(E, a, pam, lane, pd, pb0, pb1, next_d);
            MIMO_UNROLL
            for (int s = a + 1; s < NT; ++s)
                from_sym[s] = psym[k * NT + s];
        }
        __syncthreads();
        if (valid) {
            MIMO_UNROLL
            for (int s = a + 1; s < NT; ++s) {
                mtt_assign<NT>(s, from_sym[s], pam, p, sym);
                psym[lane * NT + s] = from_sym[s];
            }
            mtt_assign<NT>(a, lane, pam, p, sym);
            psym[lane * NT + a] = lane;
            d = next_d;
            if (multipass || t == NT - 1)
                record_candidate<NT>(E, pam, a, sym, p, d, my_dmin);
        }
    }
    __syncthreads();

    const int Q = pam.bits_per_symbol(), per_problem = NT * Q;
    for (int i = threadIdx.x; i < n_problems * per_problem; i += blockDim.x) {
        const int lp = i / per_problem, b = i % per_problem;
        llr[(first + lp) * per_problem + b] =
            llr_from_symbol_minima(reinterpret_cast<const float*>(dmin) + (lp * NT + b / Q) * M, pam, b % Q, n0,
                                   clip, k_unreached_llr);
    }
}

class cuda_mtt_engine final : public mtt_engine
{
public:
    explicit cuda_mtt_engine(const mtt_config& config)
        : m_config(config), m_pam(make_pam_table(constellation(config.mod)))
    {
    }
    backend kind() const override { return backend::cuda; }

    void detect(const cfloat* H, const cfloat* y, size_t batch, float n0, float clip, float* llr) override
    {
        const int nr = m_config.shape.nr, nt = m_config.shape.nt;
        const size_t n_llr = batch * nt * m_pam.bits_per_symbol();
        detect_device(m_H.device_view(H, batch * nr * nt), m_y.device_view(y, batch * nr), batch, n0, clip,
                      m_llr.device_view(llr, n_llr), m_stream.get());
        m_status.check(name(), m_stream.get());
        m_llr.finish();
    }

    void detect_device(const cfloat* d_H, const cfloat* d_y, size_t batch, float n0, float clip, float* d_llr,
                       cuda_stream_t stream) override
    {
        if (batch == 0)
            return;
        const int M = m_pam.order(), P = k_mtt_threads / M;
        dispatch_shape(m_config.shape.nr, m_config.shape.nt, [&](auto nr_c, auto nt_c) {
            constexpr int NR = decltype(nr_c)::value, NT = decltype(nt_c)::value;
            const size_t shared = mtt_smem<NR, NT>{P, M}.bytes();
            if (shared > 48 * 1024)
                MIMO_CUDA_CHECK(cudaFuncSetAttribute(mtt_kernel<NR, NT>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                     int(shared)));
            mtt_kernel<NR, NT><<<unsigned((batch + P - 1) / P), P * M, shared, stream>>>(
                reinterpret_cast<const float*>(d_H), reinterpret_cast<const float*>(d_y), batch, m_pam,
                m_config.multipass, n0, clip, d_llr, m_status.word());
        });
        MIMO_CUDA_CHECK_LAUNCH("mtt_kernel");
    }

    void check_device_status(cuda_stream_t stream) override { m_status.check(name(), stream); }

private:
    const char* name() const { return m_config.multipass ? "mtt_detector" : "ot_detector"; }

    mtt_config m_config;
    pam_table m_pam;
    cuda_stream m_stream;
    host_input<cfloat> m_H, m_y;
    host_output<float> m_llr;
    device_status m_status;
};

} // namespace

std::unique_ptr<mtt_engine> make_cuda_mtt_engine(const mtt_config& config)
{
    return std::make_unique<cuda_mtt_engine>(config);
}

} // namespace detail
} // namespace mimo_gpu
