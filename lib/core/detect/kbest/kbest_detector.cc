// The K-best detector on the detector interface and its CPU engine
// (kbest_search.h; docs/detectors.md, "K-best").
#include <mimo_gpu/detector_registry.h>

#include "../../runtime/parallel_for.h"
#include "../engine/cpu_detector_engine.h"
#include "kbest_engine.h"

#include <string>
#include <vector>

namespace mimo_gpu {
namespace detail {

namespace {

class cpu_kbest_engine final : public cpu_detector_engine
{
public:
    explicit cpu_kbest_engine(const kbest_config& config)
        : cpu_detector_engine(config.shape, config.mod), m_config(config)
    {
    }

private:
    void detect_problems(const detector_input& in,
                         float clip,
                         float* llr,
                         fault_word* flags) override
    {
        const int M = m_pam.order(), Q = m_pam.bits_per_symbol(), K = m_config.K;
        dispatch_sphere_shape(
            m_config.shape.nr, m_config.shape.nt, [&](auto nr_c, auto nt_c) {
                constexpr int NR = decltype(nr_c)::value, NT = decltype(nt_c)::value;
                parallel_for(in.problems(), 16, [&](size_t begin, size_t end) {
                    std::vector<float> f(size_t(K) * (3 + M)), dmin(size_t(NT) * M),
                        pmin(dmin.size()), cost(dmin.size());
                    std::vector<int> i(size_t(K) * (1 + 2 * 2 * NT));
                    const kbest_scratch s{ f.data(),
                                           i.data(),
                                           f.data() + K,
                                           i.data() + K * 2 * NT,
                                           f.data() + 2 * K,
                                           i.data() + 2 * K * 2 * NT,
                                           1 };
                    for (size_t p = begin; p < end; ++p) {
                        sphere_item<NT> item;
                        problem_fault fault = item.template prepare<NR>(
                            reinterpret_cast<const float*>(in.H + p * NR * NT),
                            reinterpret_cast<const float*>(in.y + p * NR),
                            0);
                        if (fault == problem_fault::none)
                            fault = kbest_problem<NT>(item,
                                                      K,
                                                      m_pam,
                                                      in.n0,
                                                      clip,
                                                      m_config.missing_llr,
                                                      s,
                                                      in.priors ? in.priors + p * NT * Q
                                                                : nullptr,
                                                      cost.data(),
                                                      dmin.data(),
                                                      pmin.data(),
                                                      llr + p * NT * Q);
                        if (fault != problem_fault::none)
                            report_fault(flags, p, fault);
                    }
                });
            });
    }

    kbest_config m_config;
};

} // namespace

std::unique_ptr<detector_engine> make_cpu_kbest_engine(const kbest_config& config)
{
    return std::make_unique<cpu_kbest_engine>(config);
}

namespace {

detector_capabilities kbest_capabilities()
{
    detector_capabilities c;
    c.max_nt = k_sphere_max_streams;
    c.modulations = {
        modulation::qpsk, modulation::qam16, modulation::qam64, modulation::qam256
    };
    c.exact_max_log = false; // exact when K >= M^(nt-1): nothing is pruned
    c.accepts_priors = true; // the prior in the path metric; extrinsic LLRs out
    return c;
}

std::vector<parameter_spec> kbest_parameters()
{
    return { { "k",
               16,
               1,
               k_kbest_max_children,
               true,
               false,
               "paths kept per tree level (K * M <= 4096)" },
             { "llr_clip",
               k_default_llr_clip,
               0,
               1e4,
               false,
               true,
               "LLRs clipped to [-clip, clip]; 0: no clipping" },
             { "missing_llr",
               3,
               1e-3,
               1e4,
               false,
               false,
               "|LLR| of a bit whose counter-hypothesis neither the list nor a pruned "
               "path beyond "
               "the list's best holds, toward the list's decision (at most llr_clip)" } };
}

/// What the kernels take: nr <= 8 and K * M children per level at most.
void validate_kbest(const detector_config& config)
{
    config.shape.validate_small();
    const int M = constellation(config.mod).order(), K = int(config.parameters.at("k"));
    if (K * M > k_kbest_max_children)
        throw std::invalid_argument(
            "mimo_gpu: detector 'kbest': K * M = " + std::to_string(K) + " * " +
            std::to_string(M) + " children per level exceed the " +
            std::to_string(k_kbest_max_children) + " the kernels take");
}

} // namespace

std::vector<detector_family> kbest_families()
{
    detector_family f;
    f.name = "kbest";
    f.summary = "K-best breadth-first soft detector (K paths per level; max-log LLRs of "
                "the list, "
                "pruned paths beyond the list's best standing in for missing "
                "counter-hypotheses, else "
                "+-missing_llr)";
    f.capabilities = kbest_capabilities();
    f.parameters = kbest_parameters();
    f.make = engine_factory<kbest_config>(
        [](const detector_config& c) {
            return kbest_config{ c.shape,
                                 c.mod,
                                 int(c.parameters.at("k")),
                                 float(c.parameters.at("missing_llr")) };
        },
        make_cpu_kbest_engine,
        MIMO_GPU_CUDA_ENGINE(make_cuda_kbest_engine));
    f.validate = validate_kbest;
    // K paths' M children at each of nt levels.
    f.cost = [](const detector_config& c) {
        return double(c.shape.nt) * c.parameters.at("k") * constellation(c.mod).order();
    };
    f.comparison_runs = [](const mimo_shape&, modulation) {
        return std::vector<detector_parameters>{ { { "k", 16 } } };
    };
    return { f };
}

} // namespace detail
} // namespace mimo_gpu
