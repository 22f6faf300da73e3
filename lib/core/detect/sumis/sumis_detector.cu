// CUDA engine of SUMIS (double precision, as the CPU engine): a block per
// channel chooses the partitions, a block per factor item (a channel for
// stage I without priors, else a vector) builds and factors Q_f and W = L^-1 H
// and the partitions' subspace Gram matrices, a block per vector forms
// g = W^T L^-1 (y - H m), and a block per (vector, partition) enumerates the
// hypotheses with a log-sum-exp reduction. Work is done in chunks of vectors
// whose scratch fits k_sumis_scratch_budget.
#include <mimo_gpu/constellation.h>

#include "../../runtime/cuda_buffers.h"
#include "../../runtime/fault_flags.h"
#include "sumis_engine.h"

#include <algorithm>
#include <vector>

namespace mimo_gpu {
namespace detail {

namespace {

constexpr int k_threads = 256;
constexpr size_t k_sumis_scratch_budget = size_t(1) << 30;

struct sumis_dims {
    int nr, nt, m, n, ns, S, L, nb, Q;
    double sigma2, energy;
};

/// Faults per vector: OR of fault_bit() words, read back as the CPU's flags.
__device__ inline void flag(unsigned* faults, size_t v, problem_fault f) { atomicOr(faults + v, fault_bit(f)); }

/// A block per channel: thread i picks partition i (symbol i and the ns - 1
/// largest |(H^T H)_ij|, ties to the lower index), summing in the CPU's order.
__global__ void sumis_partition_choice_kernel(const float* H, size_t channels, sumis_dims d, int* parts,
                                              unsigned* faults)
{
    const size_t c = blockIdx.x;
    const float* Hc = H + c * size_t(d.nr) * d.nt * 2;
    __shared__ int bad;
    if (threadIdx.x == 0)
        bad = 0;
    __syncthreads();
    for (int e = threadIdx.x; e < d.nr * d.nt * 2; e += blockDim.x)
        if (!isfinite(Hc[e]))
            bad = 1;
    __syncthreads();
    if (bad) {
        for (int s = threadIdx.x; s < d.S; s += blockDim.x)
            flag(faults, c * d.S + s, problem_fault::non_finite);
        return;
    }
    for (int i = threadIdx.x; i < d.n; i += blockDim.x) {
        int best[k_sumis_max_ns];
        double val[k_sumis_max_ns];
        int count = 0;
        for (int j = 0; j < d.n; ++j) {
            if (j == i)
                continue;
            double s = 0;
            for (int a = 0; a < d.m; ++a)
                s += sumis_real_h(Hc, d.nr, d.nt, a, i) * sumis_real_h(Hc, d.nr, d.nt, a, j);
            s = fabs(s);
            // insert keeping the ns - 1 largest, earlier index first among equals
            int pos = count;
            while (pos > 0 && s > val[pos - 1])
                --pos;
            if (pos < d.ns - 1) {
                const int last = count < d.ns - 1 ? count : d.ns - 2;
                for (int q = last; q > pos; --q) {
                    val[q] = val[q - 1];
                    best[q] = best[q - 1];
                }
                val[pos] = s;
                best[pos] = j;
                if (count < d.ns - 1)
                    ++count;
            }
        }
        int* out = parts + (c * d.n + i) * d.ns;
        out[0] = i;
        for (int k = 1; k < d.ns; ++k)
            out[k] = best[k - 1];
    }
}

/// A block per factor item: Q_f = H diag(var) H^T + sigma2 I, its Cholesky
/// factor L (left-looking, in the CPU's order), W = L^-1 H, and each
/// partition's F = (W^T W)_SS. var: per item (n values), or null for the
/// constant per-symbol energy.
__global__ void sumis_factor_kernel(const float* H, sumis_dims d, bool per_channel, size_t first_vector,
                                    const double* var, const int* parts, double* Ls, double* Ws, double* Fs,
                                    unsigned* faults, int* item_bad)
{
    extern __shared__ double col[]; // m values
    const size_t k = blockIdx.x;
    const size_t c = per_channel ? first_vector / d.S + k : (first_vector + k) / d.S; // absolute channel
    const size_t v = first_vector + k;                             // vector (per-vector items)
    const int m = d.m, n = d.n;
    if (!per_channel && faults[v]) {
        if (threadIdx.x == 0)
            item_bad[k] = 1;
        return;
    }
    const float* Hc = H + c * size_t(d.nr) * d.nt * 2;
    double* L = Ls + k * size_t(m) * m;
    double* W = Ws + k * size_t(m) * n;
    const double* vk = var ? var + k * size_t(n) : nullptr;
    for (int e = threadIdx.x; e < m * m; e += blockDim.x) {
        const int a = e / m, b = e % m;
        if (b > a)
            continue;
        double s = a == b ? d.sigma2 : 0.0;
        for (int j = 0; j < n; ++j)
            s += sumis_real_h(Hc, d.nr, d.nt, a, j) * (vk ? vk[j] : d.energy) * sumis_real_h(Hc, d.nr, d.nt, b, j);
        L[a * m + b] = s;
    }
    __shared__ int failed;
    if (threadIdx.x == 0)
        failed = 0;
    __syncthreads();
    for (int j = 0; j < m; ++j) {
        for (int i = j + threadIdx.x; i < m; i += blockDim.x) {
            double s = L[i * m + j];
            for (int q = 0; q < j; ++q)
                s -= L[i * m + q] * L[j * m + q];
            col[i] = s;
        }
        __syncthreads();
        const double dj = col[j];
        if (!(dj > 0.0) || !isfinite(dj)) {
            if (threadIdx.x == 0)
                failed = 1;
            break; // uniform: every thread read the same col[j]
        }
        const double ljj = sqrt(dj);
        for (int i = j + threadIdx.x; i < m; i += blockDim.x)
            L[i * m + j] = i == j ? ljj : col[i] / ljj;
        __syncthreads();
    }
    __syncthreads();
    if (failed) {
        if (threadIdx.x == 0)
            item_bad[k] = 1;
        return;
    }
    for (int j = threadIdx.x; j < n; j += blockDim.x) // W = L^-1 H, a column per thread
        for (int a = 0; a < m; ++a) {
            double w = sumis_real_h(Hc, d.nr, d.nt, a, j);
            for (int q = 0; q < a; ++q)
                w -= L[a * m + q] * W[q * n + j];
            W[a * n + j] = w * (1.0 / L[a * m + a]);
        }
    __syncthreads();
    const int* pc = parts + c * size_t(n) * d.ns;
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        sumis_subspace_gram(d.ns, pc + size_t(i) * d.ns, W, m, n, Fs + (k * n + i) * d.ns * d.ns);
    if (threadIdx.x == 0)
        item_bad[k] = 0;
}

/// A block per vector: g = W^T L^-1 (y - H mean) with its item's factor.
__global__ void sumis_matched_kernel(const float* H, const float* y, sumis_dims d, size_t first_vector,
                                     bool per_channel_items, size_t first_item, const double* mean,
                                     const double* Ls, const double* Ws, const int* item_bad, double* gs,
                                     double* ws, unsigned* faults)
{
    const size_t k = blockIdx.x, v = first_vector + k;
    const size_t c = v / d.S;
    const size_t item = per_channel_items ? c - first_item : k;
    const int m = d.m, n = d.n;
    if (faults[v])
        return;
    if (item_bad[item]) {
        if (threadIdx.x == 0)
            flag(faults, v, problem_fault::singular);
        return;
    }
    const float* yc = y + v * size_t(d.nr) * 2;
    __shared__ int bad;
    if (threadIdx.x == 0)
        bad = 0;
    __syncthreads();
    for (int e = threadIdx.x; e < 2 * d.nr; e += blockDim.x)
        if (!isfinite(yc[e]))
            bad = 1;
    __syncthreads();
    if (bad) {
        if (threadIdx.x == 0)
            flag(faults, v, problem_fault::non_finite);
        return;
    }
    const float* Hc = H + c * size_t(d.nr) * d.nt * 2;
    const double* L = Ls + item * size_t(m) * m;
    const double* W = Ws + item * size_t(m) * n;
    const double* mk = mean + k * size_t(n);
    double* w = ws + k * size_t(m);
    for (int a = threadIdx.x; a < m; a += blockDim.x) { // r = y - H mean
        double s = sumis_real_y(yc, d.nr, a);
        for (int j = 0; j < n; ++j)
            s -= sumis_real_h(Hc, d.nr, d.nt, a, j) * mk[j];
        w[a] = s;
    }
    __syncthreads();
    if (threadIdx.x == 0) // forward substitution in the CPU's order
        for (int a = 0; a < m; ++a) {
            double s = w[a];
            for (int q = 0; q < a; ++q)
                s -= L[a * m + q] * w[q];
            w[a] = s / L[a * m + a];
        }
    __syncthreads();
    double* g = gs + k * size_t(n);
    for (int j = threadIdx.x; j < n; j += blockDim.x) {
        double s = 0;
        for (int a = 0; a < m; ++a)
            s += W[a * n + j] * w[a];
        g[j] = s;
    }
}

/// A block per (partition, vector): the system, then the hypotheses spread
/// over the threads, log-sums merged in a tree, LLRs of the partition's symbol.
__global__ void sumis_enumerate_kernel(const __grid_constant__ pam_table pam, sumis_dims d, size_t first_vector,
                                       bool per_channel_items, size_t first_item, const int* parts,
                                       const double* Fs, const double* gs, const double* mean, const double* var,
                                       const double* log_prior, double* lam, unsigned* faults)
{
    const int i = blockIdx.x;
    const size_t k = blockIdx.y, v = first_vector + k, c = v / d.S;
    if (faults[v])
        return;
    const size_t item = per_channel_items ? c - first_item : k;
    const int n = d.n, ns = d.ns, Lv = d.L, nb = d.nb;
    const int* S = parts + (c * n + i) * ns;
    __shared__ double B[k_sumis_max_ns * k_sumis_max_ns], z[k_sumis_max_ns];
    __shared__ double prior_S[k_sumis_max_ns * k_max_pam_levels];
    __shared__ int ok;
    __shared__ log_sum part[k_threads / 32];
    if (threadIdx.x == 0) {
        double Bl[k_sumis_max_ns * k_sumis_max_ns], zl[k_sumis_max_ns];
        ok = sumis_partition_system(ns, S, Fs + (item * n + i) * ns * ns, gs + k * n, mean + k * n, var + k * n,
                                    Bl, zl);
        for (int a = 0; a < ns * ns; ++a)
            B[a] = Bl[a];
        for (int a = 0; a < ns; ++a)
            z[a] = zl[a];
        if (log_prior)
            for (int a = 0; a < ns; ++a)
                for (int l = 0; l < Lv; ++l)
                    prior_S[a * Lv + l] = log_prior[(k * n + S[a]) * Lv + l];
    }
    __syncthreads();
    if (!ok) {
        if (threadIdx.x == 0)
            flag(faults, v, problem_fault::singular);
        return;
    }
    long long rest = 1;
    for (int a = 1; a < ns; ++a)
        rest *= Lv;
    __shared__ double level_lse[k_max_pam_levels];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    int level[k_sumis_max_ns];
    for (int l0 = 0; l0 < Lv; ++l0) { // a log-sum per level of the symbol of interest
        log_sum acc;
        for (long long h = threadIdx.x; h < rest; h += blockDim.x) {
            sumis_levels(l0 * rest + h, ns, Lv, level);
            acc.add(sumis_metric(ns, level, B, z, pam, log_prior ? prior_S : nullptr));
        }
        for (int o = 16; o > 0; o >>= 1) { // warp tree
            log_sum other;
            other.max = __shfl_xor_sync(0xffffffffu, acc.max, o);
            other.sum = __shfl_xor_sync(0xffffffffu, acc.sum, o);
            acc.merge(other);
        }
        if (lane == 0)
            part[warp] = acc;
        __syncthreads();
        if (threadIdx.x == 0) {
            for (int w = 1; w < int(blockDim.x / 32); ++w)
                part[0].merge(part[w]);
            level_lse[l0] = part[0].value();
        }
        __syncthreads();
    }
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
__global__ void sumis_soft_kernel(const __grid_constant__ pam_table pam, sumis_dims d, size_t first_vector,
                                  size_t count, const float* priors, const double* lam, double* log_prior,
                                  double* mean, double* var, unsigned* faults)
{
    const size_t e = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (e >= count * d.n)
        return;
    const size_t k = e / d.n, v = first_vector + k;
    const int dim = int(e % d.n), nb = d.nb;
    float bits[k_sumis_max_bits_per_dim];
    for (int b = 0; b < nb; ++b)
        bits[b] = priors ? priors[v * size_t(d.nt) * d.Q + sumis_output_index_hd(dim, b, d.nt, d.Q)]
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
__global__ void sumis_output_kernel(sumis_dims d, size_t first_vector, size_t count, const double* lam,
                                    const float* priors, float clip, const unsigned* faults, float* llr)
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
        const float f = float(x);
        const float bound = clip > 0 ? clip : k_llr_limit;
        out = f > bound ? bound : (f < -bound ? -bound : f);
    }
    llr[v * size_t(d.nt) * d.Q + o] = out;
}

unsigned blocks(size_t n) { return unsigned((n + k_threads - 1) / k_threads); }

class cuda_sumis_engine final : public sumis_engine
{
public:
    explicit cuda_sumis_engine(const sumis_config& config)
        : m_config(config), m_pam(make_pam_table(constellation(config.mod)))
    {
    }
    backend kind() const override { return backend::cuda; }

    detection_report run(const detector_input& in, float clip, float* llr) override
    {
        const size_t C = in.channels, S = size_t(in.symbols_per_channel), P = in.problems();
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
        MIMO_CUDA_CHECK(cudaMemcpyAsync(H, in.H, C * nrnt2 * sizeof(float), cudaMemcpyHostToDevice, s));
        MIMO_CUDA_CHECK(cudaMemcpyAsync(y, in.y, P * 2 * d.nr * sizeof(float), cudaMemcpyHostToDevice, s));
        const float* priors = nullptr;
        if (in.priors) {
            float* p = m_priors.reserve(P * llrs);
            MIMO_CUDA_CHECK(cudaMemcpyAsync(p, in.priors, P * llrs * sizeof(float), cudaMemcpyHostToDevice, s));
            priors = p;
        }
        unsigned* faults = m_faults.reserve(P);
        MIMO_CUDA_CHECK(cudaMemsetAsync(faults, 0, P * sizeof(unsigned), s));
        int* parts = m_parts.reserve(C * d.n * d.ns);
        sumis_partition_choice_kernel<<<unsigned(C), k_threads, 0, s>>>(H, C, d, parts, faults);
        MIMO_CUDA_CHECK(cudaGetLastError());
        float* dllr = m_llr.reserve(P * llrs);

        // Chunks of whole channels whose per-vector factor items fit the budget.
        const size_t item_bytes = (size_t(d.m) * d.m + size_t(d.m) * d.n + size_t(d.n) * d.ns * d.ns) * sizeof(double);
        const size_t per_vector = item_bytes + (size_t(d.n) * (4 + d.L + d.nb * 2) + d.m) * sizeof(double);
        // (also at most 65535 vectors: the enumeration grid's second dimension)
        const size_t channels_per_chunk =
            std::max<size_t>(1, std::min(k_sumis_scratch_budget / (per_vector * S), 65535 / S));
        for (size_t c0 = 0; c0 < C; c0 += channels_per_chunk) {
            const size_t cc = std::min(channels_per_chunk, C - c0), v0 = c0 * S, count = cc * S;
            chunk(d, H, y, priors, parts, faults, c0, cc, v0, count, clip, dllr);
        }
        MIMO_CUDA_CHECK(cudaMemcpyAsync(llr, dllr, P * llrs * sizeof(float), cudaMemcpyDeviceToHost, s));
        std::vector<unsigned> flags(P);
        MIMO_CUDA_CHECK(cudaMemcpyAsync(flags.data(), faults, P * sizeof(unsigned), cudaMemcpyDeviceToHost, s));
        MIMO_CUDA_CHECK(cudaStreamSynchronize(s));
        return report_from_flags(flags.data(), P);
    }

private:
    void chunk(const sumis_dims& d, const float* H, const float* y, const float* priors, const int* parts,
               unsigned* faults, size_t c0, size_t cc, size_t v0, size_t count, float clip, float* dllr)
    {
        const cudaStream_t s = m_stream.get();
        const size_t m = d.m, n = d.n;
        const size_t items = count; // at most one factor item per vector
        double* Ls = m_L.reserve(items * m * m);
        double* Ws = m_W.reserve(items * m * n);
        double* Fs = m_F.reserve(items * n * d.ns * d.ns);
        int* bad = m_bad.reserve(items);
        double* mean = m_mean.reserve(count * n);
        double* var = m_var.reserve(count * n);
        double* log_prior = priors ? m_log_prior.reserve(count * n * d.L) : nullptr;
        double* g = m_g.reserve(count * n);
        double* w = m_w.reserve(count * m);
        double* lam = m_lam.reserve(count * n * d.nb);
        const size_t factor_smem = m * sizeof(double);
        const dim3 enumerate_grid{ unsigned(n), unsigned(count), 1u };
        // Stage I
        bool per_channel = !priors;
        if (priors) {
            sumis_soft_kernel<<<blocks(count * n), k_threads, 0, s>>>(m_pam, d, v0, count, priors, nullptr,
                                                                      log_prior, mean, var, faults);
            sumis_factor_kernel<<<unsigned(count), k_threads, factor_smem, s>>>(H, d, false, v0, var, parts, Ls, Ws,
                                                                               Fs, faults, bad);
        } else {
            fill(mean, count * n, 0.0);
            fill(var, count * n, d.energy);
            sumis_factor_kernel<<<unsigned(cc), k_threads, factor_smem, s>>>(H, d, true, v0, nullptr, parts, Ls, Ws,
                                                                            Fs, faults, bad);
        }
        MIMO_CUDA_CHECK(cudaGetLastError());
        sumis_matched_kernel<<<unsigned(count), k_threads, 0, s>>>(H, y, d, v0, per_channel, c0, mean, Ls, Ws, bad, g,
                                                                   w, faults);
        sumis_enumerate_kernel<<<enumerate_grid, k_threads, 0, s>>>(m_pam, d, v0, per_channel, c0, parts, Fs, g,
                                                                    mean, var, log_prior, lam, faults);
        MIMO_CUDA_CHECK(cudaGetLastError());
        if (m_config.stage2) {
            // conditional means and variances from stage I, then stage II per vector
            sumis_soft_kernel<<<blocks(count * n), k_threads, 0, s>>>(m_pam, d, v0, count, nullptr, lam, nullptr,
                                                                      mean, var, faults);
            sumis_factor_kernel<<<unsigned(count), k_threads, factor_smem, s>>>(H, d, false, v0, var, parts, Ls, Ws,
                                                                               Fs, faults, bad);
            sumis_matched_kernel<<<unsigned(count), k_threads, 0, s>>>(H, y, d, v0, false, 0, mean, Ls, Ws, bad, g,
                                                                       w, faults);
            sumis_enumerate_kernel<<<enumerate_grid, k_threads, 0, s>>>(m_pam, d, v0, false, 0, parts, Fs, g, mean,
                                                                        var, log_prior, lam, faults);
            MIMO_CUDA_CHECK(cudaGetLastError());
        }
        sumis_output_kernel<<<blocks(count * n * d.nb), k_threads, 0, s>>>(d, v0, count, lam, priors, clip, faults,
                                                                            dllr);
        MIMO_CUDA_CHECK(cudaGetLastError());
    }

    void fill(double* p, size_t count, double value);

    sumis_config m_config;
    pam_table m_pam;
    cuda_stream m_stream;
    device_buffer<float> m_H, m_y, m_priors, m_llr;
    device_buffer<unsigned> m_faults;
    device_buffer<int> m_parts, m_bad;
    device_buffer<double> m_L, m_W, m_F, m_mean, m_var, m_log_prior, m_g, m_w, m_lam;
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

std::unique_ptr<sumis_engine> make_cuda_sumis_engine(const sumis_config& config)
{
    return std::make_unique<cuda_sumis_engine>(config);
}

} // namespace detail
} // namespace mimo_gpu
