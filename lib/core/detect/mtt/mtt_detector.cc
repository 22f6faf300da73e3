// The MTT and OT detectors on the detector interface, and their CPU engine.
#include <mimo_gpu/detector_registry.h>

#include "../../qr/mgs_qr.h"
#include "../../runtime/fault_flags.h"
#include "../../runtime/parallel_for.h"
#include "../../runtime/shape_dispatch.h"
#include "../engine/cpu_detector_engine.h"
#include "../pam_table.h"
#include "mtt_engine.h"
#include "mtt_search.h"

#include <vector>

namespace mimo_gpu {
namespace detail {

namespace {

class cpu_mtt_engine final : public cpu_detector_engine
{
public:
    explicit cpu_mtt_engine(const mtt_config& config)
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
        dispatch_mtt_shape(
            m_config.shape.nr, m_config.shape.nt, [&](auto nr_c, auto nt_c) {
                constexpr int NR = decltype(nr_c)::value, NT = decltype(nt_c)::value;
                dispatch_levels(m_pam.levels, [&](auto l_c) {
                    constexpr int L = decltype(l_c)::value;
                    const mtt_levels<L> levels(m_pam);
                    parallel_for(in.problems(), 64, [&](size_t begin, size_t end) {
                        std::vector<float> E(2 * NT * mtt_width<NT>()),
                            dmin(size_t(NT) * M);
                        for (size_t p = begin; p < end; ++p) {
                            const auto* h =
                                reinterpret_cast<const float*>(in.H + p * NR * NT);
                            const auto* yy =
                                reinterpret_cast<const float*>(in.y + p * NR);
                            const problem_fault fault =
                                mgs_qr_order<NR, NT>(h, yy, 0, E.data());
                            if (fault != problem_fault::none) {
                                report_fault(flags, p, fault);
                                continue;
                            }
                            mtt_search_serial<NT, L>(
                                E.data(), levels, m_config.multipass, dmin.data());
                            for (int t = 0; t < NT; ++t)
                                llrs_from_symbol_minima(dmin.data() + t * M,
                                                        m_pam,
                                                        in.n0,
                                                        clip,
                                                        k_unreached_llr,
                                                        llr + (p * NT + t) * Q);
                        }
                    });
                });
            });
    }

    mtt_config m_config;
};

} // namespace

std::unique_ptr<detector_engine> make_cpu_mtt_engine(const mtt_config& config)
{
    return std::make_unique<cpu_mtt_engine>(config);
}

namespace {

detector_capabilities mtt_capabilities()
{
    detector_capabilities c;
    c.max_nt = k_mtt_max_streams;
    c.modulations = { modulation::qpsk, modulation::qam16, modulation::qam64 };
    // MTT enumerates every path through each vertex for nt <= 2: exact there only.
    c.exact_max_log = false;
    return c;
}

std::vector<parameter_spec> mtt_parameters(bool multipass)
{
    return { { "llr_clip",
               multipass ? 0.0 : double(k_default_llr_clip),
               0,
               1e4,
               false,
               true,
               multipass ? "LLRs clipped to [-clip, clip]; 0: no clipping (MTT reaches "
                           "every hypothesis)"
                         : "LLRs clipped to [-clip, clip]; an unreached "
                           "counter-hypothesis gets +-clip; "
                           "0: no clipping (+-1000)" } };
}

} // namespace

std::vector<detector_family> mtt_families()
{
    std::vector<detector_family> families;
    for (bool multipass : { true, false }) {
        detector_family f;
        f.name = multipass ? "mtt" : "ot";
        f.summary = multipass ? "multi-pass trellis traversal soft detector "
                                "(exact max-log ML for nt <= 2)"
                              : "one-pass trellis traversal soft detector (the "
                                "last stage's candidate list)";
        f.capabilities = mtt_capabilities();
        f.parameters = mtt_parameters(multipass);
        f.make = engine_factory<mtt_config>(
            [multipass](const detector_config& c) {
                return mtt_config{ c.shape, c.mod, multipass };
            },
            make_cpu_mtt_engine,
            MIMO_GPU_CUDA_ENGINE(make_cuda_mtt_engine));
        f.validate = [](const detector_config& c) { c.shape.validate_small(); };
        // The search's edges: nt stages of M^2 (M = PAM levels squared), per pass.
        f.cost = [](const detector_config& c) {
            const double M = constellation(c.mod).order();
            return double(c.shape.nt) * c.shape.nt * M * M;
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
