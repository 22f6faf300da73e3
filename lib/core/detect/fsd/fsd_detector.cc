// The fixed-complexity sphere decoders on the detector interface: FSD (hard
// output) and SFSD (soft output, list extension), and their CPU engine.
// Paper: fsd-sphere-decoder-gpu (sections 3-5); docs/detectors.md, "FSD".
#include <mimo_gpu/detector_registry.h>

#include "../../runtime/engine_choice.h"
#include "../../runtime/fault_flags.h"
#include "../../runtime/parallel_for.h"
#include "fsd_engine.h"

#include <string>
#include <vector>

namespace mimo_gpu {
namespace detail {

namespace {

class cpu_fsd_engine final : public fsd_engine
{
public:
    explicit cpu_fsd_engine(const fsd_config& config)
        : m_config(config), m_pam(make_pam_table(constellation(config.mod)))
    {
    }
    backend kind() const override { return backend::cpu; }

    detection_report
    detect(const cfloat* H, const cfloat* y, size_t batch, float n0, float clip, float* llr) override
    {
        const int M = m_pam.order(), Q = m_pam.bits_per_symbol();
        const int paths = m_config.paths(m_pam);
        fault_word* flags = m_faults.reset(batch);
        dispatch_fsd_shape(m_config.shape.nr, m_config.shape.nt, [&](auto nr_c, auto nt_c) {
            constexpr int NR = decltype(nr_c)::value, NT = decltype(nt_c)::value;
            parallel_for(batch, 64, [&](size_t begin, size_t end) {
                std::vector<float> dist(static_cast<size_t>(paths)), dmin(size_t(NT) * M);
                std::vector<int> chosen(static_cast<size_t>(paths));
                for (size_t p = begin; p < end; ++p) {
                    const problem_fault fault = fsd_problem<NR, NT>(
                        reinterpret_cast<const float*>(H + p * NR * NT),
                        reinterpret_cast<const float*>(y + p * NR), m_config, m_pam, n0, clip, dist.data(),
                        chosen.data(), dmin.data(), llr + p * NT * Q);
                    if (fault != problem_fault::none)
                        report_fault(flags, p, fault);
                }
            });
        });
        return m_faults.finish(llr, size_t(m_config.shape.nt) * Q);
    }

private:
    fsd_config m_config;
    pam_table m_pam;
    host_faults m_faults;
};

} // namespace

std::unique_ptr<fsd_engine> make_cpu_fsd_engine(const fsd_config& config)
{
    return std::make_unique<cpu_fsd_engine>(config);
}

namespace {

detector_capabilities fsd_capabilities(bool soft)
{
    detector_capabilities c;
    c.max_nt = k_fsd_max_streams;
    c.modulations = { modulation::qpsk, modulation::qam16, modulation::qam64, modulation::qam256,
                      modulation::qam1024 };
    c.soft_output = soft;
    c.exact_max_log = false; // SFSD: exact for nt = 2 when every path is extended
    return c;
}

std::vector<parameter_spec> fsd_parameters(bool soft)
{
    std::vector<parameter_spec> specs;
    if (soft)
        specs.push_back({ "niter", 0, 0, k_fsd_max_paths, true, false,
                          "paths whose symbols' bits are each negated level by level (the list "
                          "extension); 0: log2 M, the paper's 2/4/6 for QPSK/16/64-QAM" });
    specs.push_back({ "full_levels", 0, 0, 2, true, false,
                      "fully expanded tree levels T; 0: the paper's rule, the smallest T >= 1 with "
                      "T >= sqrt(nt) - 1" });
    specs.push_back({ "llr_clip", k_default_llr_clip, soft ? 0.0 : 1e-3, 1e4, false, true,
                      soft ? "LLRs clipped to [-clip, clip]; a bit whose counter-hypothesis no "
                             "candidate reached gets +-clip; 0: no clipping (+-1000)"
                           : "magnitude of the hard decisions' LLRs (+-clip)" });
    return specs;
}

/// FSD or SFSD on the detector interface.
class fsd_detector final : public engine_detector
{
public:
    fsd_detector(const detector_config& config, bool soft, backend requested)
        : engine_detector(soft ? "sfsd" : "fsd", checked(config, soft), fsd_capabilities(soft),
                          fsd_parameters(soft))
    {
        const pam_table pam = make_pam_table(constellation(config.mod));
        fsd_config c;
        c.shape = config.shape;
        c.mod = config.mod;
        c.soft = soft;
        c.full = full_levels(parameters(), config.shape.nt);
        c.niter = soft ? int(parameter("niter")) : 0;
        if (soft && c.niter == 0)
            c.niter = pam.bits_per_symbol();
        choose(
            requested, [&] { return make_cpu_fsd_engine(c); }, [&] { return make_cuda_fsd_engine(c); });
    }

private:
    static int full_levels(const detector_parameters& p, int nt)
    {
        const int given = int(p.at("full_levels"));
        return given > 0 ? given : fsd_default_full_levels(nt);
    }
    /// What the kernels take: nr <= 8, the FE levels below nt and M^T paths at most.
    static detector_config checked(const detector_config& config, bool soft)
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
            throw std::invalid_argument("mimo_gpu: detector '" + name + "': " + std::to_string(M) +
                                        "^" + std::to_string(full) + " fully expanded paths exceed the " +
                                        std::to_string(k_fsd_max_paths) + " the kernels take");
        return config;
    }
};

} // namespace

std::vector<detector_family> fsd_families()
{
    std::vector<detector_family> families;
    for (bool soft : { false, true })
        families.push_back({ soft ? "sfsd" : "fsd",
                             soft ? "soft-output fixed-complexity sphere decoder (FSD paths plus "
                                    "Niter paths' bit-negated extensions, max-log LLRs of the list)"
                                  : "fixed-complexity sphere decoder, hard output (full expansion of "
                                    "the top level(s), SIC below, FSD channel ordering)",
                             fsd_capabilities(soft), fsd_parameters(soft),
                             [soft](const detector_config& c, backend b) {
                                 return std::unique_ptr<detector>(new fsd_detector(c, soft, b));
                             } });
    return families;
}

} // namespace detail
} // namespace mimo_gpu
