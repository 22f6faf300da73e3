// CUDA engine of SUMIS (double precision, as the CPU engine): a batched DGEMM
// forms H^T H per channel and a thread per real symbol chooses its partition;
// per factor item (a channel for stage I
// without priors, else a vector) cuBLAS and cuSOLVER batched calls build and
// factor Q_f and give W = L^-1 H and g = W^T L^-1 (y - H m); a block per item
// forms the partitions' subspace Gram matrices; a block per (vector,
// partition) enumerates the hypotheses with a log-sum-exp reduction. Work is done in
// chunks of vectors whose scratch fits k_sumis_scratch_budget.
#include <mimo_gpu/constellation.h>

#include "../../runtime/cuda_buffers.h"
#include "../../runtime/fault_flags.h"
#include "sumis_engine.h"

#include <cublas_v2.h>
#include <cusolverDn.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

namespace mimo_gpu {
namespace detail {

namespace {

constexpr int k_threads = 256;
constexpr size_t k_sumis_scratch_budget = size_t(1) << 30;
/// Up to this many factor items go through the single-matrix routines, one by one.
constexpr size_t k_unbatched_items = 4;

struct sumis_dims {
    int nr, nt, m, n, ns, S, L, nb, Q;
    double sigma2, energy;
};

/// Faults per vector: OR of fault_bit() words, read back as the CPU's flags.
__device__ inline void flag(unsigned* faults, size_t v, problem_fault f)
{
    atomicOr(faults + v, fault_bit(f));
}

/// A block per channel: its real model H (column-major, m rows), and the
/// channel's vectors flagged when H is not finite.
__global__ void sumis_real_model_kernel(
    const float* H, sumis_dims d, size_t c0, double* Hr, unsigned* faults)
{
    const size_t k = blockIdx.x, c = c0 + k;
    const float* Hc = H + c * size_t(d.nr) * d.nt * 2;
    __shared__ int bad;
    if (threadIdx.x == 0)
        bad = 0;
    __syncthreads();
    for (int e = threadIdx.x; e < d.m * d.n; e += blockDim.x) {
        const double h = sumis_real_h(Hc, d.nr, d.nt, e % d.m, e / d.m);
        if (!isfinite(h))
            bad = 1;
        Hr[k * size_t(d.m) * d.n + e] = h;
    }
    __syncthreads();
    if (bad)
        for (int s = threadIdx.x; s < d.S; s += blockDim.x)
            flag(faults, c * d.S + s, problem_fault::non_finite);
}

/// A thread per (channel, real symbol i): partition i is i and the ns - 1
/// largest |(H^T H)_ij| (G column-major, n x n per channel), earlier index
/// first among equals.
__global__ void sumis_partition_choice_kernel(
    const double* G, size_t channels, size_t c0, sumis_dims d, int* parts)
{
    const size_t e = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (e >= channels * d.n)
        return;
    const size_t k = e / d.n;
    const int i = int(e % d.n);
    const double* col = G + k * size_t(d.n) * d.n + size_t(i) * d.n;
    int best[k_sumis_max_ns];
    double val[k_sumis_max_ns];
    int count = 0;
    for (int j = 0; j < d.n; ++j) {
        if (j == i)
            continue;
        const double v = fabs(col[j]);
        int pos = count;
        while (pos > 0 && v > val[pos - 1])
            --pos;
        if (pos < d.ns - 1) {
            const int last = count < d.ns - 1 ? count : d.ns - 2;
            for (int q = last; q > pos; --q) {
                val[q] = val[q - 1];
                best[q] = best[q - 1];
            }
            val[pos] = v;
            best[pos] = j;
            if (count < d.ns - 1)
                ++count;
        }
    }
    int* out = parts + ((c0 + k) * d.n + i) * d.ns;
    out[0] = i;
    for (int q = 1; q < d.ns; ++q)
        out[q] = best[q - 1];
}

/// A block per factor item (a channel in stage I without priors, else a
/// vector): K = H diag(sqrt(var)) and Q = (N0/2) I for Q_f = K K^T + Q, and the
/// right-hand sides [H | r_1 .. r_s] (column-major, m rows) whose solve by L
/// gives W = L^-1 H and L^-1 r, r = y - H mean for each of the item's vectors.
__global__ void sumis_build_kernel(const float* H,
                                   const float* y,
                                   sumis_dims d,
                                   bool per_channel,
                                   size_t c0,
                                   size_t v0,
                                   const double* var,
                                   const double* mean,
                                   double* Ks,
                                   double* Qs,
                                   double* Rs,
                                   unsigned* faults)
{
    const size_t k = blockIdx.x;
    const int m = d.m, n = d.n, vectors = per_channel ? d.S : 1;
    const size_t c = per_channel ? c0 + k : (v0 + k) / d.S;
    const size_t first =
        per_channel ? c * d.S : v0 + k; // absolute index of the item's first vector
    const float* Hc = H + c * size_t(d.nr) * d.nt * 2;
    double* K = Ks + k * size_t(m) * n;
    double* Q = Qs + k * size_t(m) * m;
    double* R = Rs + k * size_t(m) * (n + vectors);
    for (int e = threadIdx.x; e < m * n; e += blockDim.x) {
        const int a = e % m, j = e / m;
        const double h = sumis_real_h(Hc, d.nr, d.nt, a, j);
        K[e] = h * sqrt(var ? var[k * n + j] : d.energy);
        R[e] = h;
    }
    for (int e = threadIdx.x; e < m * m; e += blockDim.x)
        Q[e] = (e % m == e / m) ? d.sigma2 : 0.0;
    for (int e = threadIdx.x; e < m * vectors; e += blockDim.x) {
        const int a = e % m, s = e / m;
        const size_t v = first + s;
        const double* mv = mean ? mean + (v - v0) * n : nullptr;
        double r = sumis_real_y(y + v * size_t(d.nr) * 2, d.nr, a);
        if (!isfinite(r))
            flag(faults, v, problem_fault::non_finite);
        if (mv)
            for (int j = 0; j < n; ++j)
                r -= sumis_real_h(Hc, d.nr, d.nt, a, j) * mv[j];
        R[size_t(m) * n + e] = r;
    }
}

/// A block per factor item: each partition's F = (W^T W)_SS from W = L^-1 H
/// (column-major, m rows).
__global__ void sumis_gram_kernel(sumis_dims d,
                                  bool per_channel,
                                  size_t c0,
                                  size_t v0,
                                  const int* parts,
                                  const double* Rs,
                                  int vectors,
                                  double* Fs)
{
    const size_t k = blockIdx.x;
    const int m = d.m, n = d.n, ns = d.ns;
    const size_t c = per_channel ? c0 + k : (v0 + k) / d.S;
    const double* W = Rs + k * size_t(m) * (n + vectors);
    const int* pc = parts + c * size_t(n) * ns;
    for (int e = threadIdx.x; e < n * ns * ns; e += blockDim.x) {
        const int i = e / (ns * ns), a = e / ns % ns, b = e % ns;
        const double* wa = W + size_t(pc[i * ns + a]) * m;
        const double* wb = W + size_t(pc[i * ns + b]) * m;
        double f = 0;
        for (int r = 0; r < m; ++r)
            f += wa[r] * wb[r];
        Fs[(k * n + i) * ns * ns + a * ns + b] = f;
    }
}

__global__ void
sumis_pointers_kernel(double* base, size_t stride, size_t count, double** out)
{
    const size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < count)
        out[i] = base + i * stride;
}

/// A block per (vector, partition), flattened in x (blockIdx.x = k * n + i, so
/// any chunk size launches): the system, then the hypotheses spread over the
/// threads, log-sums merged in a tree, LLRs of the partition's symbol.
__global__ void sumis_enumerate_kernel(const __grid_constant__ pam_table pam,
                                       sumis_dims d,
                                       size_t first_vector,
                                       bool per_channel_items,
                                       size_t first_item,
                                       const int* parts,
                                       const int* item_info,
                                       const double* Fs,
                                       const double* gs,
                                       const double* mean,
                                       const double* var,
                                       const double* log_prior,
                                       double* lam,
                                       unsigned* faults)
{
    const int n = d.n, ns = d.ns, Lv = d.L, nb = d.nb;
    const int i = int(blockIdx.x % unsigned(n));
    const size_t k = blockIdx.x / unsigned(n), v = first_vector + k, c = v / d.S;
    const size_t item = per_channel_items ? c - first_item : k;
    const int* S = parts + (c * n + i) * ns;
    __shared__ double B[k_sumis_max_ns * k_sumis_max_ns], z[k_sumis_max_ns];
    __shared__ double prior_S[k_sumis_max_ns * k_max_pam_levels];
    // Decided by thread 0 alone and shared: other partitions' blocks may flag
    // faults[v] meanwhile, and every thread must take the same way past the barrier.
    __shared__ int ok;
    if (threadIdx.x == 0) {
        ok = 0;
        if (faults[v] != 0) {
            // erased already: nothing to do
        } else if (item_info[item] != 0) { // Q_f not positive definite (potrf's info)
            flag(faults, v, problem_fault::singular);
        } else {
            double Bl[k_sumis_max_ns * k_sumis_max_ns], zl[k_sumis_max_ns];
            ok = sumis_partition_system(ns,
                                        S,
                                        Fs + (item * n + i) * ns * ns,
                                        gs + k * n,
                                        mean + k * n,
                                        var + k * n,
                                        Bl,
                                        zl);
            if (!ok)
                flag(faults, v, problem_fault::singular);
            for (int a = 0; a < ns * ns; ++a)
                B[a] = Bl[a];
            for (int a = 0; a < ns; ++a)
                z[a] = zl[a];
            if (log_prior)
                for (int a = 0; a < ns; ++a)
                    for (int l = 0; l < Lv; ++l)
                        prior_S[a * Lv + l] = log_prior[(k * n + S[a]) * Lv + l];
        }
    }
    __syncthreads();
    if (!ok)
        return;
    long long rest = 1;
    for (int a = 1; a < ns; ++a)
        rest *= Lv;
    __shared__ double level_lse[k_max_pam_levels];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    int level[k_sumis_max_ns];
    // A warp per level of the symbol of interest (in turn), its lanes over the
    // other symbols' levels, consecutive hypotheses per lane (the levels
    // advance as an odometer); a warp tree per level, one barrier in all.
    for (int l0 = warp; l0 < Lv; l0 += int(blockDim.x / 32)) {
        log_sum acc;
        const long long per = (rest + 31) / 32;
        const long long h0 = lane * per, h1 = h0 + per < rest ? h0 + per : rest;
        if (h0 < h1)
            sumis_levels(l0 * rest + h0, ns, Lv, level);
        for (long long h = h0; h < h1; ++h) {
            acc.add(sumis_metric(ns, level, B, z, pam, log_prior ? prior_S : nullptr));
            for (int a = ns - 1; a > 0; --a) {
                if (++level[a] < Lv)
                    break;
                level[a] = 0;
            }
        }
        for (int o = 16; o > 0; o >>= 1) {
            log_sum other;
            other.max = __shfl_xor_sync(0xffffffffu, acc.max, o);
            other.sum = __shfl_xor_sync(0xffffffffu, acc.sum, o);
            acc.merge(other);
        }
        if (lane == 0)
            level_lse[l0] = acc.value();
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        double out[k_sumis_max_bits_per_dim];
        sumis_bit_llrs(level_lse, pam, out);
        bool finite = true;
        for (int b = 0; b < nb; ++b) {
            finite &= isfinite(out[b]);
            lam[(k * n + i) * nb + b] = out[b];
        }
        if (!finite)
            flag(faults, v, problem_fault::singular);
    }
}

/// A thread per (vector, real symbol): a-priori level log probabilities, mean
/// and variance (priors given), or the conditional mean and variance from the
/// stage-I LLRs (lam given).
__global__ void sumis_soft_kernel(const __grid_constant__ pam_table pam,
                                  sumis_dims d,
                                  size_t first_vector,
                                  size_t count,
                                  const float* priors,
                                  const double* lam,
                                  double* log_prior,
                                  double* mean,
                                  double* var,
                                  unsigned* faults)
{
    const size_t e = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (e >= count * d.n)
        return;
    const size_t k = e / d.n, v = first_vector + k;
    const int dim = int(e % d.n), nb = d.nb;
    float bits[k_sumis_max_bits_per_dim];
    for (int b = 0; b < nb; ++b)
        bits[b] = priors ? priors[v * size_t(d.nt) * d.Q +
                                  sumis_output_index_hd(dim, b, d.nt, d.Q)]
                         : float(lam[(k * d.n + dim) * nb + b]);
    if (priors)
        for (int b = 0; b < nb; ++b)
            if (!isfinite(bits[b]))
                flag(faults, v, problem_fault::non_finite);
    double lp[k_max_pam_levels];
    sumis_level_log_probs(bits, pam, lp);
    if (log_prior)
        for (int l = 0; l < d.L; ++l)
            log_prior[(k * d.n + dim) * d.L + l] = lp[l];
    sumis_soft_symbol(lp, pam, mean + k * d.n + dim, var + k * d.n + dim);
}

/// A thread per output LLR: extrinsic (with priors), saturated or clipped, 0 if erased.
__global__ void sumis_output_kernel(sumis_dims d,
                                    size_t first_vector,
                                    size_t count,
                                    const double* lam,
                                    const float* priors,
                                    float clip,
                                    const unsigned* faults,
                                    float* llr)
{
    const size_t e = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (e >= count * d.n * d.nb)
        return;
    const size_t k = e / (size_t(d.n) * d.nb), v = first_vector + k;
    const int dim = int(e / d.nb % d.n), b = int(e % d.nb);
    const int o = sumis_output_index_hd(dim, b, d.nt, d.Q);
    float out = 0.0f;
    if (!faults[v]) {
        double x = lam[(k * d.n + dim) * d.nb + b];
        if (priors)
            x -= priors[v * size_t(d.nt) * d.Q + o];
        out = saturate_llr(float(x), clip);
    }
    llr[v * size_t(d.nt) * d.Q + o] = out;
}

unsigned blocks(size_t n) { return unsigned((n + k_threads - 1) / k_threads); }

class cuda_sumis_engine final : public detector_engine
{
public:
    explicit cuda_sumis_engine(const sumis_config& config)
        : m_config(config), m_pam(make_pam_table(constellation(config.mod)))
    {
        check(cublasCreate(&m_blas), "cublasCreate");
        if (cusolverDnCreate(&m_solver) != CUSOLVER_STATUS_SUCCESS) {
            cublasDestroy(m_blas);
            throw std::runtime_error("mimo_gpu: cusolverDnCreate failed");
        }
    }
    ~cuda_sumis_engine() override
    {
        cusolverDnDestroy(m_solver);
        cublasDestroy(m_blas);
    }
    backend kind() const override { return backend::cuda; }

    detection_report detect(const detector_input& in, float clip, float* llr) override
    {
        const size_t C = in.channels, S = size_t(in.symbols_per_channel),
                     P = in.problems();
        if (P == 0)
            return {};
        sumis_dims d;
        d.nr = m_config.shape.nr;
        d.nt = m_config.shape.nt;
        d.m = 2 * d.nr;
        d.n = 2 * d.nt;
        d.ns = m_config.ns;
        d.S = int(S);
        d.L = m_pam.levels;
        d.nb = m_pam.bits_per_dim;
        d.Q = m_pam.bits_per_symbol();
        d.sigma2 = 0.5 * double(in.n0);
        d.energy = sumis_dimension_energy(m_pam);
        const cudaStream_t s = m_stream.get();
        const size_t nrnt2 = size_t(d.nr) * d.nt * 2, llrs = size_t(d.nt) * d.Q;
        float* H = m_H.reserve(C * nrnt2);
        float* y = m_y.reserve(P * 2 * d.nr);
        MIMO_CUDA_CHECK(cudaMemcpyAsync(
            H, in.H, C * nrnt2 * sizeof(float), cudaMemcpyHostToDevice, s));
        MIMO_CUDA_CHECK(cudaMemcpyAsync(
            y, in.y, P * 2 * d.nr * sizeof(float), cudaMemcpyHostToDevice, s));
        const float* priors = nullptr;
        // All-zero priors (the whole call's) are no priors, exactly as on the CPU;
        // a batch that mixes zero and other priors agrees with the CPU to rounding.
        bool all_zero = true;
        for (size_t i = 0; in.priors && all_zero && i < P * llrs; ++i)
            all_zero = in.priors[i] == 0.0f;
        if (in.priors && !all_zero) {
            float* p = m_priors.reserve(P * llrs);
            MIMO_CUDA_CHECK(cudaMemcpyAsync(
                p, in.priors, P * llrs * sizeof(float), cudaMemcpyHostToDevice, s));
            priors = p;
        }
        unsigned* faults = m_faults.reserve(P);
        MIMO_CUDA_CHECK(cudaMemsetAsync(faults, 0, P * sizeof(unsigned), s));
        int* parts = m_parts.reserve(C * d.n * d.ns);
        choose_partitions(d, H, C, parts, faults);
        float* dllr = m_llr.reserve(P * llrs);

        // Chunks of whole channels whose per-vector factor items fit the budget.
        const size_t item_bytes = (size_t(d.m) * d.m + 2 * size_t(d.m) * d.n +
                                   size_t(d.m) * S + size_t(d.n) * d.ns * d.ns) *
                                  sizeof(double);
        const size_t per_vector =
            item_bytes + (size_t(d.n) * (4 + d.L + d.nb * 2) + d.m) * sizeof(double);
        // (also at most 2^31 - 1 enumeration blocks, a block per vector and real symbol)
        const size_t max_blocks = size_t(INT32_MAX);
        if (S * size_t(d.n) > max_blocks)
            throw std::invalid_argument(
                "mimo_gpu: sumis: " + std::to_string(S) +
                " symbols per channel do not fit one launch; use fewer");
        const size_t channels_per_chunk =
            std::max<size_t>(1,
                             std::min(k_sumis_scratch_budget / (per_vector * S),
                                      max_blocks / (S * size_t(d.n))));
        for (size_t c0 = 0; c0 < C; c0 += channels_per_chunk) {
            const size_t cc = std::min(channels_per_chunk, C - c0), v0 = c0 * S,
                         count = cc * S;
            chunk(d, H, y, priors, parts, faults, c0, cc, v0, count, clip, dllr);
        }
        MIMO_CUDA_CHECK(cudaMemcpyAsync(
            llr, dllr, P * llrs * sizeof(float), cudaMemcpyDeviceToHost, s));
        std::vector<unsigned> flags(P);
        MIMO_CUDA_CHECK(cudaMemcpyAsync(
            flags.data(), faults, P * sizeof(unsigned), cudaMemcpyDeviceToHost, s));
        MIMO_CUDA_CHECK(cudaStreamSynchronize(s));
        return report_from_flags(flags.data(), P);
    }

private:
    /// The partitions of every channel: H^T H by a batched DGEMM over groups of
    /// channels, then a thread per real symbol picks its subspace.
    void choose_partitions(
        const sumis_dims& d, const float* H, size_t C, int* parts, unsigned* faults)
    {
        const cudaStream_t s = m_stream.get();
        const size_t group = 64, m = d.m, n = d.n;
        double* Hr = m_K.reserve(std::min(group, C) * m * n);
        double* G = m_Q.reserve(std::min(group, C) * n * n);
        const double one = 1.0, zero = 0.0;
        check(cublasSetStream(m_blas, s), "cublasSetStream");
        for (size_t c0 = 0; c0 < C; c0 += group) {
            const size_t cc = std::min(group, C - c0);
            sumis_real_model_kernel<<<unsigned(cc), k_threads, 0, s>>>(
                H, d, c0, Hr, faults);
            MIMO_CUDA_CHECK(cudaGetLastError());
            check(cublasDgemmStridedBatched(m_blas,
                                            CUBLAS_OP_T,
                                            CUBLAS_OP_N,
                                            int(n),
                                            int(n),
                                            int(m),
                                            &one,
                                            Hr,
                                            int(m),
                                            (long long)(m * n),
                                            Hr,
                                            int(m),
                                            (long long)(m * n),
                                            &zero,
                                            G,
                                            int(n),
                                            (long long)(n * n),
                                            int(cc)),
                  "cublasDgemmStridedBatched (H^T H)");
            sumis_partition_choice_kernel<<<blocks(cc * n), k_threads, 0, s>>>(
                G, cc, c0, d, parts);
            MIMO_CUDA_CHECK(cudaGetLastError());
        }
    }

    /// Factors `items` items (channels c0.. or vectors v0..) with cuBLAS and
    /// cuSOLVER batched calls in double precision: Q_f = K K^T + (N0/2) I
    /// (DGEMM), L (DPOTRF), [W | L^-1 r] = L^-1 [H | r] (DTRSM), g = W^T L^-1 r
    /// (DGEMM), then each partition's F. info[item] != 0: Q_f not positive definite.
    void factor(const sumis_dims& d,
                const float* H,
                const float* y,
                const int* parts,
                unsigned* faults,
                bool per_channel,
                size_t c0,
                size_t v0,
                size_t items,
                const double* var,
                const double* mean,
                double* Fs,
                double* g,
                int* info)
    {
        const cudaStream_t s = m_stream.get();
        const int m = d.m, n = d.n, vectors = per_channel ? d.S : 1, cols = n + vectors;
        double* K = m_K.reserve(items * size_t(m) * n);
        double* Q = m_Q.reserve(items * size_t(m) * m);
        double* R = m_R.reserve(items * size_t(m) * cols);
        double** ptr = m_ptr.reserve(2 * items);
        sumis_build_kernel<<<unsigned(items), k_threads, 0, s>>>(
            H, y, d, per_channel, c0, v0, var, mean, K, Q, R, faults);
        sumis_pointers_kernel<<<blocks(items), k_threads, 0, s>>>(
            Q, size_t(m) * m, items, ptr);
        sumis_pointers_kernel<<<blocks(items), k_threads, 0, s>>>(
            R, size_t(m) * cols, items, ptr + items);
        MIMO_CUDA_CHECK(cudaGetLastError());
        const double one = 1.0, zero = 0.0;
        check(cublasSetStream(m_blas, s), "cublasSetStream");
        check(cublasDgemmStridedBatched(m_blas,
                                        CUBLAS_OP_N,
                                        CUBLAS_OP_T,
                                        m,
                                        m,
                                        n,
                                        &one,
                                        K,
                                        m,
                                        (long long)m * n,
                                        K,
                                        m,
                                        (long long)m * n,
                                        &one,
                                        Q,
                                        m,
                                        (long long)m * m,
                                        int(items)),
              "cublasDgemmStridedBatched (Q_f)");
        check(cusolverDnSetStream(m_solver, s), "cusolverDnSetStream");
        if (items <= k_unbatched_items) {
            // A few large matrices: the blocked single-matrix routines use the
            // whole GPU; the batched ones are made for many small matrices.
            int lwork = 0;
            check(cusolverDnDpotrf_bufferSize(
                      m_solver, CUBLAS_FILL_MODE_LOWER, m, Q, m, &lwork),
                  "cusolverDnDpotrf_bufferSize");
            double* work = m_work.reserve(size_t(std::max(lwork, 1)));
            for (size_t k = 0; k < items; ++k) {
                check(cusolverDnDpotrf(m_solver,
                                       CUBLAS_FILL_MODE_LOWER,
                                       m,
                                       Q + k * size_t(m) * m,
                                       m,
                                       work,
                                       lwork,
                                       info + k),
                      "cusolverDnDpotrf");
                check(cublasDtrsm(m_blas,
                                  CUBLAS_SIDE_LEFT,
                                  CUBLAS_FILL_MODE_LOWER,
                                  CUBLAS_OP_N,
                                  CUBLAS_DIAG_NON_UNIT,
                                  m,
                                  cols,
                                  &one,
                                  Q + k * size_t(m) * m,
                                  m,
                                  R + k * size_t(m) * cols,
                                  m),
                      "cublasDtrsm (L^-1 [H | r])");
            }
        } else {
            check(cusolverDnDpotrfBatched(
                      m_solver, CUBLAS_FILL_MODE_LOWER, m, ptr, m, info, int(items)),
                  "cusolverDnDpotrfBatched");
            check(cublasDtrsmBatched(m_blas,
                                     CUBLAS_SIDE_LEFT,
                                     CUBLAS_FILL_MODE_LOWER,
                                     CUBLAS_OP_N,
                                     CUBLAS_DIAG_NON_UNIT,
                                     m,
                                     cols,
                                     &one,
                                     ptr,
                                     m,
                                     ptr + items,
                                     m,
                                     int(items)),
                  "cublasDtrsmBatched (L^-1 [H | r])");
        }
        check(cublasDgemmStridedBatched(m_blas,
                                        CUBLAS_OP_T,
                                        CUBLAS_OP_N,
                                        n,
                                        vectors,
                                        m,
                                        &one,
                                        R,
                                        m,
                                        (long long)m * cols,
                                        R + size_t(m) * n,
                                        m,
                                        (long long)m * cols,
                                        &zero,
                                        g,
                                        n,
                                        (long long)n * vectors,
                                        int(items)),
              "cublasDgemmStridedBatched (g)");
        sumis_gram_kernel<<<unsigned(items), k_threads, 0, s>>>(
            d, per_channel, c0, v0, parts, R, vectors, Fs);
        MIMO_CUDA_CHECK(cudaGetLastError());
    }

    void chunk(const sumis_dims& d,
               const float* H,
               const float* y,
               const float* priors,
               const int* parts,
               unsigned* faults,
               size_t c0,
               size_t cc,
               size_t v0,
               size_t count,
               float clip,
               float* dllr)
    {
        const cudaStream_t s = m_stream.get();
        const size_t n = d.n;
        double* Fs = m_F.reserve(count * n * d.ns * d.ns);
        int* info = m_info.reserve(count);
        double* mean = m_mean.reserve(count * n);
        double* var = m_var.reserve(count * n);
        double* log_prior = priors ? m_log_prior.reserve(count * n * d.L) : nullptr;
        double* g = m_g.reserve(count * n);
        double* lam = m_lam.reserve(count * n * d.nb);
        const unsigned enumerate_grid =
            unsigned(count * n); // < 2^31: count is bounded by the scratch budget
        // Stage I: without priors the factor is the channel's, shared by its S vectors.
        const bool per_channel = !priors;
        if (priors) {
            sumis_soft_kernel<<<blocks(count * n), k_threads, 0, s>>>(
                m_pam, d, v0, count, priors, nullptr, log_prior, mean, var, faults);
            MIMO_CUDA_CHECK(cudaGetLastError());
            factor(d, H, y, parts, faults, false, c0, v0, count, var, mean, Fs, g, info);
        } else {
            fill(mean, count * n, 0.0);
            fill(var, count * n, d.energy);
            factor(
                d, H, y, parts, faults, true, c0, v0, cc, nullptr, nullptr, Fs, g, info);
        }
        sumis_enumerate_kernel<<<enumerate_grid, k_threads, 0, s>>>(m_pam,
                                                                    d,
                                                                    v0,
                                                                    per_channel,
                                                                    c0,
                                                                    parts,
                                                                    info,
                                                                    Fs,
                                                                    g,
                                                                    mean,
                                                                    var,
                                                                    log_prior,
                                                                    lam,
                                                                    faults);
        MIMO_CUDA_CHECK(cudaGetLastError());
        if (m_config.stage2) {
            // conditional means and variances from stage I, then stage II per vector
            sumis_soft_kernel<<<blocks(count * n), k_threads, 0, s>>>(
                m_pam, d, v0, count, nullptr, lam, nullptr, mean, var, faults);
            MIMO_CUDA_CHECK(cudaGetLastError());
            factor(d, H, y, parts, faults, false, c0, v0, count, var, mean, Fs, g, info);
            sumis_enumerate_kernel<<<enumerate_grid, k_threads, 0, s>>>(m_pam,
                                                                        d,
                                                                        v0,
                                                                        false,
                                                                        0,
                                                                        parts,
                                                                        info,
                                                                        Fs,
                                                                        g,
                                                                        mean,
                                                                        var,
                                                                        log_prior,
                                                                        lam,
                                                                        faults);
            MIMO_CUDA_CHECK(cudaGetLastError());
        }
        sumis_output_kernel<<<blocks(count * n * d.nb), k_threads, 0, s>>>(
            d, v0, count, lam, priors, clip, faults, dllr);
        MIMO_CUDA_CHECK(cudaGetLastError());
    }

    static void check(cublasStatus_t st, const char* what)
    {
        if (st != CUBLAS_STATUS_SUCCESS)
            throw std::runtime_error(std::string("mimo_gpu: ") + what +
                                     " failed (cuBLAS status " + std::to_string(int(st)) +
                                     ")");
    }
    static void check(cusolverStatus_t st, const char* what)
    {
        if (st != CUSOLVER_STATUS_SUCCESS)
            throw std::runtime_error(std::string("mimo_gpu: ") + what +
                                     " failed (cuSOLVER status " +
                                     std::to_string(int(st)) + ")");
    }

    void fill(double* p, size_t count, double value);

    sumis_config m_config;
    pam_table m_pam;
    cuda_stream m_stream;
    device_array<float> m_H, m_y, m_priors, m_llr;
    device_array<unsigned> m_faults;
    device_array<int> m_parts, m_info;
    device_array<double> m_K, m_Q, m_R, m_F, m_mean, m_var, m_log_prior, m_g, m_lam;
    device_array<double*> m_ptr;
    device_array<double> m_work; // cusolverDnDpotrf's workspace
    cublasHandle_t m_blas = nullptr;
    cusolverDnHandle_t m_solver = nullptr;
};

__global__ void fill_kernel(double* p, size_t count, double value)
{
    const size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < count)
        p[i] = value;
}

void cuda_sumis_engine::fill(double* p, size_t count, double value)
{
    fill_kernel<<<blocks(count), k_threads, 0, m_stream.get()>>>(p, count, value);
    MIMO_CUDA_CHECK(cudaGetLastError());
}

} // namespace

std::unique_ptr<detector_engine> make_cuda_sumis_engine(const sumis_config& config)
{
    return std::make_unique<cuda_sumis_engine>(config);
}

} // namespace detail
} // namespace mimo_gpu
