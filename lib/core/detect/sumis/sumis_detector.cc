// The SUMIS soft detector on the detector interface ("sumis"; Cirkic and
// Larsson's subspace marginalisation with interference suppression, as the
// parallel SUMIS paper runs it) and its CPU engine, the reference of the CUDA
// tests. docs/detectors.md, "SUMIS".
#include <mimo_gpu/detector_registry.h>

#include "../../runtime/parallel_for.h"
#include "../engine/cpu_detector_engine.h"
#include "sumis_engine.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

namespace mimo_gpu {
namespace detail {

namespace {

/// One channel's work on the CPU, double precision throughout: the real
/// model, the partitions, and for given symbol variances the factor of Q_f
/// (L, and W = L^-1 H, whose columns give G' = W^T W where a partition needs
/// it), reused by every vector that shares it.
class sumis_channel_cpu
{
public:
    sumis_channel_cpu(const sumis_config& c, const pam_table& pam)
        : m(2 * c.shape.nr),
          n(2 * c.shape.nt),
          ns(c.ns),
          nr(c.shape.nr),
          nt(c.shape.nt),
          m_pam(pam),
          Hr(size_t(m) * n),
          parts(size_t(n) * ns),
          L(size_t(m) * m),
          W(size_t(m) * n),
          w(m)
    {
    }

    /// The real model of H and the partitions; false if H is not finite.
    bool prepare(const cfloat* H)
    {
        const float* h = reinterpret_cast<const float*>(H);
        for (int a = 0; a < m; ++a)
            for (int j = 0; j < n; ++j) {
                Hr[size_t(a) * n + j] = sumis_real_h(h, nr, nt, a, j);
                if (!std::isfinite(Hr[size_t(a) * n + j]))
                    return false;
            }
        std::vector<double> row(n);
        std::vector<int> order(n);
        for (int i = 0; i < n; ++i) {
            for (int j = 0; j < n; ++j) {
                double s = 0;
                for (int a = 0; a < m; ++a)
                    s += Hr[size_t(a) * n + i] * Hr[size_t(a) * n + j];
                row[j] = std::abs(s);
            }
            order.resize(n);
            std::iota(order.begin(), order.end(), 0);
            order.erase(order.begin() + i);
            // the n_s - 1 most correlated, ties to the lower index
            std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
                return row[a] > row[b];
            });
            parts[size_t(i) * ns] = i;
            for (int k = 1; k < ns; ++k)
                parts[size_t(i) * ns + k] = order[k - 1];
        }
        return true;
    }

    /// Factors Q_f = H diag(var) H^T + (N0/2) I; false if it cannot be factored.
    bool factor(const double* var, double sigma2)
    {
        for (int a = 0; a < m; ++a)
            for (int b = 0; b <= a; ++b) {
                double s = a == b ? sigma2 : 0.0;
                const double* ha = &Hr[size_t(a) * n];
                const double* hb = &Hr[size_t(b) * n];
                for (int j = 0; j < n; ++j)
                    s += ha[j] * var[j] * hb[j];
                L[size_t(a) * m + b] = s;
            }
        for (int j = 0; j < m; ++j) { // Cholesky, lower, in place
            double d = L[size_t(j) * m + j];
            for (int k = 0; k < j; ++k)
                d -= L[size_t(j) * m + k] * L[size_t(j) * m + k];
            if (!(d > 0.0) || !std::isfinite(d))
                return false;
            const double ljj = std::sqrt(d);
            L[size_t(j) * m + j] = ljj;
            for (int i = j + 1; i < m; ++i) {
                double s = L[size_t(i) * m + j];
                for (int k = 0; k < j; ++k)
                    s -= L[size_t(i) * m + k] * L[size_t(j) * m + k];
                L[size_t(i) * m + j] = s / ljj;
            }
        }
        for (int a = 0; a < m; ++a) { // W = L^-1 H, row by row
            double* wa = &W[size_t(a) * n];
            for (int j = 0; j < n; ++j)
                wa[j] = Hr[size_t(a) * n + j];
            for (int k = 0; k < a; ++k) {
                const double l = L[size_t(a) * m + k];
                const double* wk = &W[size_t(k) * n];
                for (int j = 0; j < n; ++j)
                    wa[j] -= l * wk[j];
            }
            const double inv = 1.0 / L[size_t(a) * m + a];
            for (int j = 0; j < n; ++j)
                wa[j] *= inv;
        }
        return true;
    }

    /// g = W^T L^-1 (y - H mean).
    void matched(const cfloat* y, const double* mean, double* g)
    {
        const float* yc = reinterpret_cast<const float*>(y);
        for (int a = 0; a < m; ++a) {
            double s = sumis_real_y(yc, nr, a);
            for (int j = 0; j < n; ++j)
                s -= Hr[size_t(a) * n + j] * mean[j];
            for (int k = 0; k < a; ++k)
                s -= L[size_t(a) * m + k] * w[k];
            w[a] = s / L[size_t(a) * m + a];
        }
        for (int j = 0; j < n; ++j)
            g[j] = 0;
        for (int a = 0; a < m; ++a)
            for (int j = 0; j < n; ++j)
                g[j] += W[size_t(a) * n + j] * w[a];
    }

    /// Partition i's posterior LLRs (bits of its symbol) by full enumeration;
    /// log_prior: n x L a-priori level log probabilities, or null.
    bool partition_llrs(int i,
                        const double* g,
                        const double* mean,
                        const double* var,
                        const double* log_prior,
                        double* llr)
    {
        const int* S = &parts[size_t(i) * ns];
        double B[k_sumis_max_ns * k_sumis_max_ns], z[k_sumis_max_ns],
            F[k_sumis_max_ns * k_sumis_max_ns];
        sumis_subspace_gram(ns, S, W.data(), m, n, F);
        if (!sumis_partition_system(ns, S, F, g, mean, var, B, z))
            return false;
        const int Lv = m_pam.levels, nb = m_pam.bits_per_dim;
        double prior_S[k_sumis_max_ns * k_max_pam_levels];
        if (log_prior)
            for (int a = 0; a < ns; ++a)
                for (int l = 0; l < Lv; ++l)
                    prior_S[a * Lv + l] = log_prior[size_t(S[a]) * Lv + l];
        // Hypotheses in blocks of one level of the symbol of interest: a
        // log-sum per level (one exp per hypothesis), then the bits' LLRs.
        long long rest = 1;
        for (int a = 1; a < ns; ++a)
            rest *= Lv;
        double level_lse[k_max_pam_levels];
        int level[k_sumis_max_ns];
        for (int l0 = 0; l0 < Lv; ++l0) {
            log_sum acc;
            for (long long h = 0; h < rest; ++h) {
                sumis_levels(l0 * rest + h, ns, Lv, level);
                acc.add(
                    sumis_metric(ns, level, B, z, m_pam, log_prior ? prior_S : nullptr));
            }
            level_lse[l0] = acc.value();
        }
        sumis_bit_llrs(level_lse, m_pam, llr);
        for (int b = 0; b < nb; ++b)
            if (!std::isfinite(llr[b]))
                return false;
        return true;
    }

    const int m, n, ns, nr, nt;

private:
    const pam_table& m_pam;
    std::vector<double> Hr;
    std::vector<int> parts;
    std::vector<double> L, W, w;
};

class cpu_sumis_engine final : public cpu_detector_engine
{
public:
    explicit cpu_sumis_engine(const sumis_config& config)
        : cpu_detector_engine(config.shape, config.mod), m_config(config)
    {
    }

private:
    void detect_problems(const detector_input& in,
                         float clip,
                         float* llr,
                         fault_word* flags) override
    {
        const size_t S = size_t(in.symbols_per_channel), nr = size_t(m_config.shape.nr);
        const int nt = m_config.shape.nt, Q = m_pam.bits_per_symbol(), n = 2 * nt,
                  Lv = m_pam.levels, nb = m_pam.bits_per_dim;
        const size_t llrs = size_t(nt) * Q;
        const double sigma2 = 0.5 * double(in.n0), energy = sumis_dimension_energy(m_pam);
        parallel_for(
            in.problems(), std::max<size_t>(1, S), [&](size_t begin, size_t end) {
                sumis_channel_cpu ch(m_config, m_pam);
                std::vector<double> var0(n, energy), mean0(n, 0.0), g(n),
                    lam(size_t(n) * nb);
                std::vector<double> mean1(n), var1(n), prior(size_t(n) * Lv), lp(Lv);
                size_t prepared = size_t(-1);
                bool channel_ok = false, shared_factor = false;
                for (size_t p = begin; p < end; ++p) {
                    const size_t c = p / S;
                    if (c != prepared) { // per channel: real model, partitions, stage I's
                                         // factor without priors
                        prepared = c;
                        channel_ok = ch.prepare(in.H + c * nr * nt);
                        shared_factor = false;
                    }
                    float* out = llr + p * llrs;
                    const problem_fault f = detect_one(ch,
                                                       channel_ok,
                                                       shared_factor,
                                                       in,
                                                       p,
                                                       sigma2,
                                                       energy,
                                                       var0,
                                                       mean0,
                                                       g,
                                                       lam,
                                                       mean1,
                                                       var1,
                                                       prior,
                                                       lp,
                                                       out);
                    if (f != problem_fault::none)
                        report_fault(flags, p, f);
                    else
                        for (size_t k = 0; k < llrs; ++k)
                            out[k] = saturate_llr(out[k], clip);
                }
            });
    }

private:
    problem_fault detect_one(sumis_channel_cpu& ch,
                             bool channel_ok,
                             bool& shared_factor,
                             const detector_input& in,
                             size_t p,
                             double sigma2,
                             double energy,
                             std::vector<double>& var0,
                             std::vector<double>& mean0,
                             std::vector<double>& g,
                             std::vector<double>& lam,
                             std::vector<double>& mean1,
                             std::vector<double>& var1,
                             std::vector<double>& prior,
                             std::vector<double>& lp,
                             float* out)
    {
        const int nt = m_config.shape.nt, Q = m_pam.bits_per_symbol(), n = 2 * nt,
                  Lv = m_pam.levels, nb = m_pam.bits_per_dim;
        if (!channel_ok)
            return problem_fault::non_finite;
        const size_t nr = size_t(m_config.shape.nr);
        const cfloat* y = in.y + p * nr;
        for (size_t a = 0; a < nr; ++a)
            if (!std::isfinite(y[a].real()) || !std::isfinite(y[a].imag()))
                return problem_fault::non_finite;
        const float* pr = in.priors ? in.priors + p * size_t(nt) * Q : nullptr;
        if (pr) { // non-finite priors erase; all-zero ones are no priors, exactly
            bool all_zero = true;
            for (int i = 0; i < nt * Q; ++i) {
                if (!std::isfinite(pr[i]))
                    return problem_fault::non_finite;
                all_zero &= pr[i] == 0.0f;
            }
            if (all_zero)
                pr = nullptr;
        }
        if (pr) { // a-priori level probabilities, means and variances of every real
                  // symbol
            for (int d = 0; d < n; ++d) {
                float bits[k_sumis_max_bits_per_dim];
                for (int b = 0; b < nb; ++b) {
                    bits[b] = pr[sumis_output_index(d, b, nt, Q)];
                    if (!std::isfinite(bits[b]))
                        return problem_fault::non_finite;
                }
                sumis_level_log_probs(bits, m_pam, &prior[size_t(d) * Lv]);
                sumis_soft_symbol(&prior[size_t(d) * Lv], m_pam, &mean0[d], &var0[d]);
            }
            if (!ch.factor(var0.data(), sigma2))
                return problem_fault::singular;
            shared_factor = false;
        } else if (!shared_factor) {
            std::fill(var0.begin(), var0.end(), energy);
            std::fill(mean0.begin(), mean0.end(), 0.0);
            if (!ch.factor(var0.data(), sigma2))
                return problem_fault::singular;
            shared_factor = !m_config.stage2; // stage II refactors per vector
        }
        const double* log_prior = pr ? prior.data() : nullptr;
        // Stage I: every partition's approximate LLRs
        ch.matched(y, mean0.data(), g.data());
        for (int i = 0; i < n; ++i)
            if (!ch.partition_llrs(i,
                                   g.data(),
                                   mean0.data(),
                                   var0.data(),
                                   log_prior,
                                   &lam[size_t(i) * nb]))
                return problem_fault::singular;
        const double* final_llr = lam.data();
        std::vector<double> lam2;
        if (m_config.stage2) {
            // conditional means and variances of every real symbol from its stage-I LLRs
            for (int d = 0; d < n; ++d) {
                float bits[k_sumis_max_bits_per_dim];
                for (int b = 0; b < nb; ++b)
                    bits[b] = float(lam[size_t(d) * nb + b]);
                sumis_level_log_probs(bits, m_pam, lp.data());
                sumis_soft_symbol(lp.data(), m_pam, &mean1[d], &var1[d]);
            }
            if (!ch.factor(var1.data(), sigma2))
                return problem_fault::singular;
            ch.matched(y, mean1.data(), g.data());
            lam2.resize(lam.size());
            for (int i = 0; i < n; ++i)
                if (!ch.partition_llrs(i,
                                       g.data(),
                                       mean1.data(),
                                       var1.data(),
                                       log_prior,
                                       &lam2[size_t(i) * nb]))
                    return problem_fault::singular;
            final_llr = lam2.data();
        }
        for (int d = 0; d < n; ++d)
            for (int b = 0; b < nb; ++b) {
                const int o = sumis_output_index(d, b, nt, Q);
                double v = final_llr[size_t(d) * nb + b];
                if (pr)
                    v -= pr[o]; // extrinsic
                out[o] = float(v);
            }
        return problem_fault::none;
    }

    sumis_config m_config;
};

} // namespace

std::unique_ptr<detector_engine> make_cpu_sumis_engine(const sumis_config& config)
{
    return std::make_unique<cpu_sumis_engine>(config);
}

namespace {

detector_capabilities sumis_capabilities()
{
    detector_capabilities c;
    c.max_nr = k_sumis_max_antennas;
    c.max_nt = k_sumis_max_antennas;
    c.modulations = { modulation::qpsk,
                      modulation::qam16,
                      modulation::qam64,
                      modulation::qam256,
                      modulation::qam1024 };
    c.soft_output = true;
    c.exact_max_log = false; // exact log-MAP when n_s = 2 nt (the whole space)
    c.accepts_priors = true;
    c.reuses_channels = true;
    c.erases_rank_deficient =
        false; // the Gaussian interference model regularises (N0/2 I)
    c.bit_identical_backends = false;
    c.device_path = false;
    return c;
}

std::vector<parameter_spec> sumis_parameters()
{
    return { { "ns",
               0,
               0,
               2 * k_sumis_max_antennas,
               true,
               false,
               "real symbols per subspace (1..2 nt, at most 8, and (sqrt M)^ns <= 2^20 "
               "hypotheses); "
               "0: min(3, 2 nt)" },
             { "stage2",
               1,
               0,
               1,
               true,
               false,
               "1: stage II (interference suppression); 0: stage I's LLRs alone" },
             { "llr_clip",
               0,
               0,
               1e4,
               false,
               true,
               "LLRs clipped to [-clip, clip]; 0: no clipping" } };
}

/// ns as given, or the paper's 3 where the shape allows (ns = 0, the default).
int subspace_size(const detector_config& config)
{
    const int ns = int(config.parameters.at("ns"));
    return ns > 0 ? ns : std::min(3, 2 * config.shape.nt);
}

double hypotheses(const detector_config& config)
{
    const pam_table pam = make_pam_table(constellation(config.mod));
    double hyp = 1;
    for (int a = 0; a < subspace_size(config); ++a)
        hyp *= pam.levels;
    return hyp;
}

void validate_sumis(const detector_config& config)
{
    const int ns = subspace_size(config), nt = config.shape.nt;
    if (ns > 2 * nt || ns > k_sumis_max_ns)
        throw std::invalid_argument(
            "mimo_gpu: detector 'sumis': ns = " + std::to_string(ns) +
            " exceeds the limit min(2 nt, " + std::to_string(k_sumis_max_ns) +
            ") = " + std::to_string(std::min(2 * nt, k_sumis_max_ns)) +
            " real symbols per subspace");
    if (hypotheses(config) > double(k_sumis_max_hypotheses))
        throw std::invalid_argument(
            "mimo_gpu: detector 'sumis': ns = " + std::to_string(ns) + " with " +
            to_string(config.mod) + " gives " +
            std::to_string((long long)hypotheses(config)) +
            " hypotheses per subspace, more than the limit " +
            std::to_string(k_sumis_max_hypotheses));
}

} // namespace

std::vector<detector_family> sumis_families()
{
    detector_family f;
    f.name = "sumis";
    f.summary = "SUMIS soft detector for large MIMO (subspace marginalisation with "
                "interference suppression; "
                "exact log-sum-exp over ns real symbols; takes a-priori LLRs, gives "
                "extrinsic ones)";
    f.capabilities = sumis_capabilities();
    f.parameters = sumis_parameters();
    f.make = engine_factory<sumis_config>(
        [](const detector_config& c) {
            return sumis_config{
                c.shape, c.mod, subspace_size(c), c.parameters.at("stage2") != 0.0
            };
        },
        make_cpu_sumis_engine,
        MIMO_GPU_CUDA_ENGINE(make_cuda_sumis_engine));
    f.validate = validate_sumis;
    // A subspace's hypotheses for each of the 2 nt real symbols.
    f.cost = [](const detector_config& c) { return 2.0 * c.shape.nt * hypotheses(c); };
    // No comparison_runs: its double-precision factorisations make it the slow
    // reference of large MIMO, run when named.
    return { f };
}

} // namespace detail
} // namespace mimo_gpu
