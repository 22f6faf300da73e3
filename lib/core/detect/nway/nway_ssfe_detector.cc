#include <mimo_gpu/detector_registry.h>
#include <mimo_gpu/nway_ssfe_detector.h>

#include "../../qr/qr_engine.h"
#include "../../runtime/parallel_for.h"
#include "../../runtime/shape_dispatch.h"
#include "../engine/cpu_detector_engine.h"
#include "../pam_table.h"
#include "nway_engine.h"
#include "ssfe_search.h"

#include <cmath>
#include <string>
#include <vector>

namespace mimo_gpu {

void nway_config::validate() const
{
    shape.validate_small();
    if (passes < 1 || passes > shape.nt)
        throw std::invalid_argument(
            "mimo_gpu::nway_ssfe_detector: passes must be 1..nt (" +
            std::to_string(shape.nt) + "), got " + std::to_string(passes));
    if (!(llr_clip >= 0.0f) || !std::isfinite(llr_clip))
        throw std::invalid_argument(
            "mimo_gpu::nway_ssfe_detector: llr_clip must be finite and >= 0, got " +
            std::to_string(llr_clip));
    constellation c(mod); // validates the modulation value
}

namespace detail {

void cpu_qr_batch(mimo_shape shape,
                  int orders,
                  const cfloat* H,
                  const cfloat* y,
                  size_t batch,
                  float* items,
                  fault_word* flags);

namespace {

/// Runs all passes of one problem and turns the merged symbol minima into LLRs.
template <int NT>
bool nway_problem(const float* item,
                  int passes,
                  const pam_table& pam,
                  float n0,
                  float clip,
                  float* dmin,
                  float* llr)
{
    const int M = pam.order(), Q = pam.bits_per_symbol();
    const qr_layout layout{ NT, passes };
    for (int i = 0; i < NT * M; ++i)
        dmin[i] = k_infinity;
    bool finite = true;
    for (int o = 0; o < passes; ++o) {
        const float* E = item + o * layout.floats_per_order();
        float inverse[2 * NT];
        for (int i = 0; i < 2 * NT; ++i)
            inverse[i] = ssfe_inverse_diagonal<NT>(E, i);
        for (int c = 0; c < M; ++c) {
            int level[2 * NT];
            const float d = ssfe_candidate<NT>(E, inverse, c, pam, level);
            finite &= d < k_infinity;
            for (int j = 0; j < NT; ++j) {
                float& slot = dmin[qr_layout::stream_at(j, o, NT) * M +
                                   symbol_index<NT>(level, j, pam)];
                slot = d < slot ? d : slot;
            }
        }
    }
    for (int t = 0; t < NT; ++t)
        llrs_from_symbol_minima(
            dmin + t * M, pam, n0, clip, k_unreached_llr, llr + t * Q);
    return finite;
}

class cpu_nway_engine final : public cpu_detector_engine, public nway_qr_search
{
public:
    explicit cpu_nway_engine(const nway_config& config)
        : cpu_detector_engine(config.shape, config.mod), m_config(config)
    {
    }

    size_t scratch_per_problem() const override { return item_floats() * sizeof(float); }

    detection_report
    detect_qr(const float* items, size_t batch, float n0, float clip, float* llr) override
    {
        return checked_call(batch, llr, [&](fault_word* flags) {
            search(items, batch, n0, clip, llr, flags);
        });
    }

private:
    void detect_problems(const detector_input& in,
                         float clip,
                         float* llr,
                         fault_word* flags) override
    {
        const size_t batch = in.problems();
        m_items.resize(batch * item_floats());
        cpu_qr_batch(
            m_config.shape, m_config.passes, in.H, in.y, batch, m_items.data(), flags);
        search(m_items.data(), batch, in.n0, clip, llr, flags);
    }

    size_t item_floats() const
    {
        return qr_layout{ m_config.shape.nt, m_config.passes }.floats_per_item();
    }

    void search(const float* items,
                size_t batch,
                float n0,
                float clip,
                float* llr,
                fault_word* flags)
    {
        const int nt = m_config.shape.nt, passes = m_config.passes;
        const size_t llrs = llrs_per_problem();
        dispatch_nt(nt, [&](auto nt_c) {
            constexpr int NT = decltype(nt_c)::value;
            parallel_for(batch, 256, [&](size_t begin, size_t end) {
                std::vector<float> dmin(size_t(NT) * m_pam.order());
                for (size_t p = begin; p < end; ++p) {
                    if (flags[p])
                        continue;
                    const float* item = items + p * item_floats();
                    if (qr_item_singular<NT>(
                            item, passes)) // NaN items (bad QR inputs) are not > 0 either
                        report_fault(flags,
                                     p,
                                     std::isnan(item[0]) ? problem_fault::non_finite
                                                         : problem_fault::singular);
                    else if (!nway_problem<NT>(item,
                                               passes,
                                               m_pam,
                                               n0,
                                               clip,
                                               dmin.data(),
                                               llr + p * llrs))
                        report_fault(flags, p, problem_fault::non_finite);
                }
            });
        });
    }

    nway_config m_config;
    std::vector<float> m_items; // QR items of detect(H, y), reused across calls
};

detector_capabilities nway_capabilities()
{
    detector_capabilities c;
    c.modulations = { modulation::qpsk,
                      modulation::qam16,
                      modulation::qam64,
                      modulation::qam256,
                      modulation::qam1024 };
    c.exact_max_log = false; // exact for nt <= 2 with passes = nt (then it equals ML)
    return c;
}

std::vector<parameter_spec> nway_parameters()
{
    return {
        { "passes",
          1,
          1,
          k_max_antennas,
          true,
          false,
          "N search passes, each with its own detection order (1..nt)" },
        { "llr_clip",
          k_default_llr_clip,
          0,
          1e4,
          false,
          true,
          "LLRs clipped to [-clip, clip]; an unreached counter-hypothesis gets +-clip; "
          "0: no clipping (+-1000)" },
    };
}

nway_config engine_config(const detector_config& c)
{
    nway_config config;
    config.shape = c.shape;
    config.mod = c.mod;
    config.passes = int(c.parameters.at("passes"));
    config.llr_clip = float(c.parameters.at("llr_clip"));
    return config;
}

} // namespace

std::unique_ptr<detector_engine> make_cpu_nway_engine(const nway_config& config)
{
    return std::make_unique<cpu_nway_engine>(config);
}

std::vector<detector_family> nway_families()
{
    detector_family f;
    f.name = "nway";
    f.summary =
        "N-way parallel SSFE soft detector (N passes, each its own detection order)";
    f.capabilities = nway_capabilities();
    f.parameters = nway_parameters();
    f.make = [](const detector_family&,
                const detector_config& c,
                backend b) -> std::unique_ptr<detector> {
        return std::make_unique<nway_ssfe_detector>(engine_config(c), b);
    };
    f.validate = [](const detector_config& c) { engine_config(c).validate(); };
    // M candidates per pass, each an nt-level SIC path.
    f.cost = [](const detector_config& c) {
        return c.parameters.at("passes") * constellation(c.mod).order() * c.shape.nt;
    };
    // Every pass count: the comparison the paper makes.
    f.comparison_runs = [](const mimo_shape& shape, modulation) {
        std::vector<detector_parameters> runs;
        for (int n = 1; n <= shape.nt; ++n)
            runs.push_back({ { "passes", n } });
        return runs;
    };
    return { f };
}

} // namespace detail

namespace {
detector_config as_detector_config(const nway_config& config)
{
    config.validate();
    return find_detector_family("nway").checked(
        { config.shape,
          config.mod,
          { { "passes", config.passes }, { "llr_clip", config.llr_clip } } });
}
} // namespace

nway_ssfe_detector::nway_ssfe_detector(const nway_config& config, backend requested)
    : detector(find_detector_family("nway"), as_detector_config(config)),
      m_passes(config.passes)
{
    use_engine(detail::choose_engine(
        requested,
        [&] { return detail::make_cpu_nway_engine(config); },
        [&] { return detail::make_cuda_nway_engine(config); }));
}

nway_config nway_ssfe_detector::config() const
{
    return { shape(), mod(), m_passes, llr_clip() };
}

detection_report
nway_ssfe_detector::detect_qr(const float* items, size_t batch, float n0, float* llr)
{
    check_noise_variance(n0);
    if (batch == 0)
        return {};
    if (!items || !llr)
        throw std::invalid_argument(
            "mimo_gpu::nway_ssfe_detector::detect_qr: null buffer");
    detection_report report =
        detail::engine_extension<detail::nway_qr_search>(engine()).detect_qr(
            items, batch, n0, llr_clip(), llr);
    if (report.erased > 0 && bad_problems() == bad_problem_policy::stop)
        throw std::invalid_argument(
            "mimo_gpu::nway_ssfe_detector: " + report.describe() +
            " (bad-problem policy 'stop'; 'erase' detects the rest)");
    return report;
}

void nway_ssfe_detector::detect_qr_device(
    const float* d_items, size_t batch, float n0, float* d_llr, cuda_stream_t stream)
{
    check_noise_variance(n0);
    detail::engine_extension<detail::nway_qr_search>(engine()).detect_qr_device(
        d_items, batch, n0, llr_clip(), d_llr, stream);
}

void nway_ssfe_detector::detect_device(const cfloat* d_H,
                                       const cfloat* d_y,
                                       size_t batch,
                                       float n0,
                                       float* d_llr,
                                       cuda_stream_t stream)
{
    detector_input in;
    in.H = d_H;
    in.y = d_y;
    in.channels = batch;
    in.n0 = n0;
    detect_device(in, d_llr, stream);
}

} // namespace mimo_gpu
