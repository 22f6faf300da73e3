// The fixed-complexity sphere decoders on the detector interface: FSD (hard
// output) and SFSD (soft output, list extension), and their CPU engine.
// Paper: fsd-sphere-decoder-gpu (sections 3-5); docs/detectors.md, "FSD".
#include <mimo_gpu/detector_registry.h>

#include "../../runtime/parallel_for.h"
#include "../engine/cpu_detector_engine.h"
#include "fsd_engine.h"

#include <string>
#include <vector>

namespace mimo_gpu {
namespace detail {

namespace {

class cpu_fsd_engine final : public cpu_detector_engine
{
public:
    explicit cpu_fsd_engine(const fsd_config& config)
        : cpu_detector_engine(config.shape, config.mod), m_config(config)
    {
    }

private:
    void detect_problems(const detector_input& in,
                         float clip,
                         float* llr,
                         fault_word* flags) override
    {
        const int M = m_pam.order(), Q = m_pam.bits_per_symbol();
        const int paths = m_config.paths(m_pam);
        dispatch_sphere_shape(
            m_config.shape.nr, m_config.shape.nt, [&](auto nr_c, auto nt_c) {
                constexpr int NR = decltype(nr_c)::value, NT = decltype(nt_c)::value;
                parallel_for(in.problems(), 64, [&](size_t begin, size_t end) {
                    std::vector<float> dist(static_cast<size_t>(paths)),
                        dmin(size_t(NT) * M);
                    std::vector<int> chosen(static_cast<size_t>(paths));
                    for (size_t p = begin; p < end; ++p) {
                        const problem_fault fault = fsd_problem<NR, NT>(
                            reinterpret_cast<const float*>(in.H + p * NR * NT),
                            reinterpret_cast<const float*>(in.y + p * NR),
                            m_config,
                            m_pam,
                            in.n0,
                            clip,
                            dist.data(),
                            chosen.data(),
                            dmin.data(),
                            llr + p * NT * Q);
                        if (fault != problem_fault::none)
                            report_fault(flags, p, fault);
                    }
                });
            });
    }

    fsd_config m_config;
};

} // namespace

std::unique_ptr<detector_engine> make_cpu_fsd_engine(const fsd_config& config)
{
    return std::make_unique<cpu_fsd_engine>(config);
}

namespace {

detector_capabilities fsd_capabilities(bool soft)
{
    detector_capabilities c;
    c.max_nt = k_sphere_max_streams;
    c.modulations = { modulation::qpsk,
                      modulation::qam16,
                      modulation::qam64,
                      modulation::qam256,
                      modulation::qam1024 };
    c.soft_output = soft;
    c.exact_max_log = false; // SFSD: exact for nt = 2 when every path is extended
    return c;
}

std::vector<parameter_spec> fsd_parameters(bool soft)
{
    std::vector<parameter_spec> specs;
    if (soft)
        specs.push_back(
            { "niter",
              0,
              0,
              k_fsd_max_paths,
              true,
              false,
              "paths whose symbols' bits are each negated level by level (the list "
              "extension); 0: log2 M, the paper's 2/4/6 for QPSK/16/64-QAM" });
    specs.push_back(
        { "full_levels",
          0,
          0,
          2,
          true,
          false,
          "fully expanded tree levels T; 0: the paper's rule, the smallest T >= 1 with "
          "T >= sqrt(nt) - 1" });
    specs.push_back(
        { "llr_clip",
          k_default_llr_clip,
          soft ? 0.0 : 1e-3,
          1e4,
          false,
          true,
          soft ? "LLRs clipped to [-clip, clip]; a bit whose counter-hypothesis no "
                 "candidate reached gets +-clip; 0: no clipping (+-1000)"
               : "magnitude of the hard decisions' LLRs (+-clip)" });
    return specs;
}

int full_levels(const detector_parameters& p, int nt)
{
    const int given = int(p.at("full_levels"));
    return given > 0 ? given : fsd_default_full_levels(nt);
}

fsd_config engine_config(const detector_config& config, bool soft)
{
    const pam_table pam = make_pam_table(constellation(config.mod));
    fsd_config c;
    c.shape = config.shape;
    c.mod = config.mod;
    c.soft = soft;
    c.full = full_levels(config.parameters, config.shape.nt);
    c.niter = soft ? int(config.parameters.at("niter")) : 0;
    if (soft && c.niter == 0)
        c.niter = pam.bits_per_symbol();
    return c;
}

/// What the kernels take: nr <= 8, the FE levels below nt and M^T paths at most.
void validate_fsd(const detector_config& config, bool soft)
{
    config.shape.validate_small();
    const std::string name = soft ? "sfsd" : "fsd";
    const int full = full_levels(config.parameters, config.shape.nt);
    const int M = constellation(config.mod).order();
    if (full > config.shape.nt || (full == config.shape.nt && config.shape.nt > 1))
        throw std::invalid_argument("mimo_gpu: detector '" + name + "': full_levels (" +
                                    std::to_string(full) + ") must be below nt (" +
                                    std::to_string(config.shape.nt) + ")");
    if (double(fsd_paths(M, full)) > k_fsd_max_paths)
        throw std::invalid_argument(
            "mimo_gpu: detector '" + name + "': " + std::to_string(M) + "^" +
            std::to_string(full) + " fully expanded paths exceed the " +
            std::to_string(k_fsd_max_paths) + " the kernels take");
}

} // namespace

std::vector<detector_family> fsd_families()
{
    std::vector<detector_family> families;
    for (bool soft : { false, true }) {
        detector_family f;
        f.name = soft ? "sfsd" : "fsd";
        f.summary =
            soft ? "soft-output fixed-complexity sphere decoder (FSD paths plus "
                   "Niter paths' bit-negated extensions, max-log LLRs of the list)"
                 : "fixed-complexity sphere decoder, hard output (full expansion of "
                   "the top level(s), SIC below, FSD channel ordering)";
        f.capabilities = fsd_capabilities(soft);
        f.parameters = fsd_parameters(soft);
        f.make = engine_factory<fsd_config>(
            [soft](const detector_config& c) { return engine_config(c, soft); },
            make_cpu_fsd_engine,
            MIMO_GPU_CUDA_ENGINE(make_cuda_fsd_engine));
        f.validate = [soft](const detector_config& c) { validate_fsd(c, soft); };
        // The full expansion's paths and the list extension's, nt levels each.
        f.cost = [soft](const detector_config& c) {
            const fsd_config e = engine_config(c, soft);
            const pam_table pam = make_pam_table(constellation(c.mod));
            return double(c.shape.nt) * (e.paths(pam) + e.extensions(pam));
        };
        f.comparison_runs = [](const mimo_shape&, modulation) {
            return std::vector<detector_parameters>{ {} };
        };
        families.push_back(std::move(f));
    }
    return families;
}

} // namespace detail
} // namespace mimo_gpu
