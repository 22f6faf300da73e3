#include <mimo_gpu/detector_registry.h>
#include <mimo_gpu/nway_detector.h>

#include "../../qr/qr_engine.h"
#include "../../runtime/engine_choice.h"
#include "../../runtime/parallel_for.h"
#include "../../runtime/fault_flags.h"
#include "../../runtime/shape_dispatch.h"
#include "nway_engine.h"
#include "../pam_table.h"
#include "ssfe_search.h"

#include <cmath>
#include <string>
#include <vector>

namespace mimo_gpu {

void nway_config::validate() const
{
    shape.validate_small();
    if (passes < 1 || passes > shape.nt)
        throw std::invalid_argument("mimo_gpu::nway_detector: passes must be 1..nt (" +
                                    std::to_string(shape.nt) + "), got " + std::to_string(passes));
    if (!(llr_clip >= 0.0f) || !std::isfinite(llr_clip))
        throw std::invalid_argument("mimo_gpu::nway_detector: llr_clip must be finite and >= 0, got " +
                                    std::to_string(llr_clip));
    constellation c(mod); // validates the modulation value
}

namespace detail {

void cpu_qr_batch(mimo_shape shape, int orders, const cfloat* H, const cfloat* y, size_t batch, float* items,
                  fault_word* flags);

namespace {

/// Runs all passes of one problem and turns the merged symbol minima into LLRs.
template <int NT>
bool nway_problem(const float* item, int passes, const pam_table& pam, float n0, float clip, float* dmin,
                  float* llr)
{
    const int M = pam.order(), Q = pam.bits_per_symbol();
    const qr_layout layout{NT, passes};
    for (int i = 0; i < NT * M; ++i)
        dmin[i] = k_infinity;
    bool finite = true;
    for (int o = 0; o < passes; ++o) {
        const float* E = item + o * layout.floats_per_order();
        for (int c = 0; c < M; ++c) {
            int level[2 * NT];
            const float d = ssfe_candidate<NT>(E, c, pam, level);
            finite &= d < k_infinity;
            for (int j = 0; j < NT; ++j) {
                float& slot = dmin[qr_layout::stream_at(j, o, NT) * M + symbol_index<NT>(level, j, pam)];
                slot = d < slot ? d : slot;
            }
        }
    }
    for (int t = 0; t < NT; ++t)
        for (int k = 0; k < Q; ++k)
            llr[t * Q + k] = llr_from_symbol_minima(dmin + t * M, pam, k, n0, clip, k_unreached_llr);
    return finite;
}

class cpu_nway_engine final : public nway_engine
{
public:
    explicit cpu_nway_engine(const nway_config& config)
        : m_config(config), m_pam(make_pam_table(constellation(config.mod)))
    {
    }
    backend kind() const override { return backend::cpu; }

    detection_report detect_qr(const float* items, size_t batch, float n0, float clip, float* llr) override
    {
        search(items, batch, n0, clip, llr, m_faults.reset(batch));
        return m_faults.finish(llr, llrs_per_problem());
    }

    detection_report detect(const cfloat* H, const cfloat* y, size_t batch, float n0, float clip,
                            float* llr) override
    {
        m_items.resize(batch * qr_layout{m_config.shape.nt, m_config.passes}.floats_per_item());
        fault_word* flags = m_faults.reset(batch);
        cpu_qr_batch(m_config.shape, m_config.passes, H, y, batch, m_items.data(), flags);
        search(m_items.data(), batch, n0, clip, llr, flags);
        return m_faults.finish(llr, llrs_per_problem());
    }

private:
    size_t llrs_per_problem() const { return size_t(m_config.shape.nt) * m_pam.bits_per_symbol(); }

    void search(const float* items, size_t batch, float n0, float clip, float* llr, fault_word* flags)
    {
        const int nt = m_config.shape.nt, passes = m_config.passes;
        const size_t item_floats = qr_layout{nt, passes}.floats_per_item();
        const size_t llrs = llrs_per_problem();
        dispatch_nt(nt, [&](auto nt_c) {
            constexpr int NT = decltype(nt_c)::value;
            parallel_for(batch, 256, [&](size_t begin, size_t end) {
                std::vector<float> dmin(size_t(NT) * m_pam.order());
                for (size_t p = begin; p < end; ++p) {
                    if (flags[p])
                        continue;
                    const float* item = items + p * item_floats;
                    if (qr_item_singular<NT>(item, passes)) // NaN items (bad QR inputs) are not > 0 either
                        report_fault(flags, p, std::isnan(item[0]) ? problem_fault::non_finite : problem_fault::singular);
                    else if (!nway_problem<NT>(item, passes, m_pam, n0, clip, dmin.data(), llr + p * llrs))
                        report_fault(flags, p, problem_fault::non_finite);
                }
            });
        });
    }

    nway_config m_config;
    pam_table m_pam;
    std::vector<float> m_items; // QR items of detect(H, y), reused across calls
    host_faults m_faults;
};

} // namespace

std::unique_ptr<nway_engine> make_cpu_nway_engine(const nway_config& config)
{
    return std::make_unique<cpu_nway_engine>(config);
}

} // namespace detail

detector_capabilities nway_capabilities()
{
    detector_capabilities c;
    c.modulations = {modulation::qpsk, modulation::qam16, modulation::qam64, modulation::qam256,
                     modulation::qam1024};
    c.exact_max_log = false; // exact for nt <= 2 with passes = nt (then it equals ML)
    return c;
}

std::vector<parameter_spec> nway_parameters()
{
    return {
        {"passes", 1, 1, k_max_antennas, true, false, "N search passes, each with its own detection order (1..nt)"},
        {"llr_clip", k_default_llr_clip, 0, 1e4, false, true,
         "LLRs clipped to [-clip, clip]; an unreached counter-hypothesis gets +-clip; 0: no clipping (+-1000)"},
    };
}

namespace {
detector_config as_detector_config(const nway_config& config)
{
    config.validate();
    return {config.shape, config.mod, {{"passes", config.passes}, {"llr_clip", config.llr_clip}}};
}
} // namespace

nway_detector::nway_detector(const nway_config& config, backend requested)
    : detector("nway", as_detector_config(config), nway_capabilities(), nway_parameters()),
      m_passes(config.passes)
{
    m_engine = detail::choose_engine(requested, [&] { return detail::make_cpu_nway_engine(config); },
                                     [&] { return detail::make_cuda_nway_engine(config); });
}

nway_detector::~nway_detector() = default;

backend nway_detector::active_backend() const { return m_engine->kind(); }

nway_config nway_detector::config() const { return {shape(), mod(), m_passes, clip()}; }

detection_report nway_detector::run(const detector_input& in, float* llr)
{
    return m_engine->detect(in.H, in.y, in.channels, in.n0, clip(), llr);
}

size_t nway_detector::family_scratch_per_problem() const
{
    return size_t(input_layout().floats_per_item()) * sizeof(float); // the QR items
}

void nway_detector::run_device(const detector_input& in, float* d_llr, cuda_stream_t stream)
{
    m_engine->detect_device(in.H, in.y, in.channels, in.n0, clip(), d_llr, stream);
}

detection_report nway_detector::device_status(cuda_stream_t stream) { return m_engine->check_device_status(stream); }

detection_report nway_detector::detect_qr(const float* items, size_t batch, float n0, float* llr)
{
    check_noise_variance(n0);
    if (batch == 0)
        return {};
    if (!items || !llr)
        throw std::invalid_argument("mimo_gpu::nway_detector::detect_qr: null buffer");
    detection_report report = m_engine->detect_qr(items, batch, n0, clip(), llr);
    if (report.erased > 0 && bad_problems() == bad_problem_policy::stop)
        throw std::invalid_argument("mimo_gpu::nway_detector: " + report.describe() +
                                    " (bad-problem policy 'stop'; 'erase' detects the rest)");
    return report;
}

void nway_detector::detect_qr_device(const float* d_items, size_t batch, float n0, float* d_llr,
                                     cuda_stream_t stream)
{
    check_noise_variance(n0);
    m_engine->detect_qr_device(d_items, batch, n0, clip(), d_llr, stream);
}

void nway_detector::detect_device(const cfloat* d_H, const cfloat* d_y, size_t batch, float n0, float* d_llr,
                                  cuda_stream_t stream)
{
    detector_input in;
    in.H = d_H;
    in.y = d_y;
    in.channels = batch;
    in.n0 = n0;
    detect_device(in, d_llr, stream);
}

namespace detail {
std::vector<detector_family> nway_families()
{
    return {{"nway", "N-way parallel SSFE soft detector (N passes, each its own detection order)",
             nway_capabilities(), nway_parameters(), [](const detector_config& c, backend b) {
                 nway_config config;
                 config.shape = c.shape;
                 config.mod = c.mod;
                 config.passes = int(c.parameters.at("passes"));
                 config.llr_clip = float(c.parameters.at("llr_clip"));
                 return std::unique_ptr<detector>(new nway_detector(config, b));
             }}};
}
} // namespace detail

} // namespace mimo_gpu
