#include <mimo_gpu/detector_registry.h>
#include <mimo_gpu/ml_detector.h>

#include "../../qr/mgs_qr.h"
#include "../../runtime/parallel_for.h"
#include "../engine/cpu_detector_engine.h"
#include "../pam_table.h"
#include "ml_engine.h"
#include "ml_search.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace mimo_gpu {

namespace detail {
namespace {

class cpu_ml_engine final : public cpu_detector_engine
{
public:
    explicit cpu_ml_engine(const ml_config& config)
        : cpu_detector_engine(config.shape, config.mod), m_shape(config.shape)
    {
    }

private:
    void detect_problems(const detector_input& in,
                         float,
                         float* llr,
                         fault_word* flags) override
    {
        const int nr = m_shape.nr, nt = m_shape.nt, M = m_pam.order(),
                  Q = m_pam.bits_per_symbol();
        uint64_t slices = 1;
        for (int t = 0; t < nt - 1; ++t)
            slices *= uint64_t(M);
        parallel_for(in.problems(), 1, [&](size_t begin, size_t end) {
            std::vector<float> dmin(size_t(nt) * M), h(2 * size_t(nr) * nt),
                yy(2 * size_t(nr)), cost(size_t(nt) * M);
            for (size_t p = begin; p < end; ++p) {
                const float* hp = reinterpret_cast<const float*>(in.H + p * nr * nt);
                const float* yp = reinterpret_cast<const float*>(in.y + p * nr);
                const problem_fault fault = channel_fault(hp, yp, nr, nt);
                if (fault != problem_fault::none) {
                    report_fault(flags, p, fault);
                    continue;
                }
                std::copy(hp, hp + h.size(), h.begin());
                std::copy(yp, yp + yy.size(), yy.begin());
                const float scale = ml_normalise(h.data(), yy.data(), nr, nt);
                const float n0 = in.n0 * scale * scale;
                const float* prior = in.priors ? in.priors + p * nt * Q : nullptr;
                if (prior && !priors_finite(prior, nt * Q)) {
                    report_fault(flags, p, problem_fault::non_finite);
                    continue;
                }
                if (prior)
                    for (int i = 0; i < nt * M; ++i)
                        cost[size_t(i)] =
                            symbol_prior_cost(prior + (i / M) * Q, m_pam, i % M, n0);
                std::fill(dmin.begin(), dmin.end(), k_infinity);
                auto keep_min = [&](int t, int s, float d) {
                    float& slot = dmin[size_t(t) * M + s];
                    slot = d < slot ? d : slot;
                };
                bool finite = true;
                for (uint64_t s = 0; s < slices && finite; ++s)
                    finite = ml_scan_slice(h.data(),
                                           yy.data(),
                                           nr,
                                           nt,
                                           m_pam,
                                           s,
                                           prior ? cost.data() : nullptr,
                                           keep_min);
                if (!finite) {
                    report_fault(flags, p, problem_fault::non_finite);
                    continue;
                }
                // Exact max-log LLRs: no clip, every hypothesis reached;
                // extrinsic (a-posteriori minus a-priori) with priors.
                float* out = llr + p * nt * Q;
                for (int t = 0; t < nt; ++t)
                    llrs_from_symbol_minima(
                        dmin.data() + t * M, m_pam, n0, 0.0f, 0.0f, out + t * Q);
                if (prior)
                    for (int i = 0; i < nt * Q; ++i)
                        out[i] -= prior[i];
            }
        });
    }

    mimo_shape m_shape;
};

detector_capabilities ml_capabilities()
{
    detector_capabilities c;
    c.modulations = { modulation::qpsk,
                      modulation::qam16,
                      modulation::qam64,
                      modulation::qam256,
                      modulation::qam1024 };
    c.exact_max_log = true;
    c.accepts_priors = true; // extrinsic LLRs with priors (DESIGN.md, priors)
    return c;
}

double candidates(const detector_config& config)
{
    return std::pow(double(constellation(config.mod).order()), double(config.shape.nt));
}

void validate_ml(const detector_config& config)
{
    config.shape.validate_small();
    if (candidates(config) > double(k_ml_max_candidates))
        throw std::invalid_argument(
            "mimo_gpu::ml_detector: " + to_string(config.mod) +
            " with nt=" + std::to_string(config.shape.nt) + " has " +
            std::to_string(candidates(config)) + " candidate vectors, more than the " +
            std::to_string(k_ml_max_candidates) +
            " an exhaustive search is allowed; use another detector");
}

} // namespace

std::unique_ptr<detector_engine> make_cpu_ml_engine(const ml_config& config)
{
    return std::make_unique<cpu_ml_engine>(config);
}

std::vector<detector_family> ml_families()
{
    detector_family f;
    f.name = "ml";
    f.summary = "exhaustive max-log ML soft detector (the exact reference; M^nt <= 2^24)";
    f.capabilities = ml_capabilities();
    f.make = engine_factory<ml_config>(
        [](const detector_config& c) {
            return ml_config{ c.shape, c.mod };
        },
        make_cpu_ml_engine,
        MIMO_GPU_CUDA_ENGINE(make_cuda_ml_engine));
    f.validate = validate_ml;
    f.cost = candidates;
    f.comparison_runs = [](const mimo_shape&, modulation) {
        return std::vector<detector_parameters>{ {} };
    };
    return { f };
}

} // namespace detail

ml_detector::ml_detector(mimo_shape shape, modulation mod, backend requested)
    : detector(find_detector_family("ml"),
               find_detector_family("ml").checked({ shape, mod, {} }))
{
    use_engine(detail::choose_engine(
        requested,
        [&] {
            return detail::make_cpu_ml_engine({ shape, mod });
        },
        [&] {
            return detail::make_cuda_ml_engine({ shape, mod });
        }));
}

} // namespace mimo_gpu
