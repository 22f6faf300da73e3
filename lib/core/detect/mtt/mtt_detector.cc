// The MTT and OT detectors on the detector interface, and their CPU engine.
#include <mimo_gpu/detector_registry.h>

#include "../../qr/mgs_qr.h"
#include "../../runtime/engine_choice.h"
#include "../../runtime/parallel_for.h"
#include "../../runtime/fault_flags.h"
#include "../../runtime/shape_dispatch.h"
#include "../pam_table.h"
#include "mtt_engine.h"
#include "mtt_search.h"

#include <vector>

namespace mimo_gpu {
namespace detail {

namespace {

class cpu_mtt_engine final : public mtt_engine
{
public:
    explicit cpu_mtt_engine(const mtt_config& config)
        : m_config(config), m_pam(make_pam_table(constellation(config.mod)))
    {
    }
    backend kind() const override { return backend::cpu; }

    detection_report detect(const cfloat* H,
                            const cfloat* y,
                            size_t batch,
                            float n0,
                            float clip,
                            float* llr) override
    {
        const int M = m_pam.order(), Q = m_pam.bits_per_symbol();
        fault_word* flags = m_faults.reset(batch);
        dispatch_mtt_shape(
            m_config.shape.nr, m_config.shape.nt, [&](auto nr_c, auto nt_c) {
                constexpr int NR = decltype(nr_c)::value, NT = decltype(nt_c)::value;
                dispatch_levels(m_pam.levels, [&](auto l_c) {
                    constexpr int L = decltype(l_c)::value;
                    const mtt_levels<L> levels(m_pam);
                    parallel_for(batch, 64, [&](size_t begin, size_t end) {
                        std::vector<float> E(2 * NT * mtt_width<NT>()),
                            dmin(size_t(NT) * M);
                        for (size_t p = begin; p < end; ++p) {
                            const auto* h =
                                reinterpret_cast<const float*>(H + p * NR * NT);
                            const auto* yy = reinterpret_cast<const float*>(y + p * NR);
                            const problem_fault fault =
                                mgs_qr_order<NR, NT>(h, yy, 0, E.data());
                            if (fault != problem_fault::none) {
                                report_fault(flags, p, fault);
                                continue;
                            }
                            mtt_search_serial<NT, L>(
                                E.data(), levels, m_config.multipass, dmin.data());
                            for (int t = 0; t < NT; ++t)
                                for (int k = 0; k < Q; ++k)
                                    llr[(p * NT + t) * Q + k] =
                                        llr_from_symbol_minima(dmin.data() + t * M,
                                                               m_pam,
                                                               k,
                                                               n0,
                                                               clip,
                                                               k_unreached_llr);
                        }
                    });
                });
            });
        return m_faults.finish(llr, size_t(m_config.shape.nt) * Q);
    }

private:
    mtt_config m_config;
    pam_table m_pam;
    host_faults m_faults;
};

} // namespace

std::unique_ptr<mtt_engine> make_cpu_mtt_engine(const mtt_config& config)
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

/// MTT (multipass) or OT: the trellis detector on the detector interface.
class mtt_detector final : public engine_detector
{
public:
    mtt_detector(const detector_config& config, bool multipass, backend requested)
        : engine_detector(multipass ? "mtt" : "ot",
                          checked(config),
                          mtt_capabilities(),
                          mtt_parameters(multipass))
    {
        const mtt_config engine_config{ config.shape, config.mod, multipass };
        choose(
            requested,
            [&] { return make_cpu_mtt_engine(engine_config); },
            [&] { return make_cuda_mtt_engine(engine_config); });
    }

private:
    static detector_config checked(const detector_config& config)
    {
        config.shape.validate_small();
        return config;
    }
};

} // namespace

std::vector<detector_family> mtt_families()
{
    std::vector<detector_family> families;
    for (bool multipass : { true, false })
        families.push_back({ multipass ? "mtt" : "ot",
                             multipass ? "multi-pass trellis traversal soft detector "
                                         "(exact max-log ML for nt <= 2)"
                                       : "one-pass trellis traversal soft detector (the "
                                         "last stage's candidate list)",
                             mtt_capabilities(),
                             mtt_parameters(multipass),
                             [multipass](const detector_config& c, backend b) {
                                 return std::unique_ptr<detector>(
                                     new mtt_detector(c, multipass, b));
                             } });
    return families;
}

} // namespace detail
} // namespace mimo_gpu
