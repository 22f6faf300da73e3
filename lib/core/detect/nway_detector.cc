#include <mimo_gpu/nway_detector.h>

#include "../qr/qr_engine.h"
#include "../runtime/engine_choice.h"
#include "../runtime/parallel_for.h"
#include "../runtime/problem_status.h"
#include "../runtime/shape_dispatch.h"
#include "nway_engine.h"
#include "pam_table.h"
#include "ssfe_search.h"

#include <cmath>
#include <string>
#include <vector>

namespace mimo_gpu {

void nway_config::validate() const
{
    shape.validate();
    if (passes < 1 || passes > shape.nt)
        throw std::invalid_argument("mimo_gpu::nway_detector: passes must be 1..nt (" +
                                    std::to_string(shape.nt) + "), got " + std::to_string(passes));
    if (!(llr_clip >= 0.0f) || !std::isfinite(llr_clip))
        throw std::invalid_argument("mimo_gpu::nway_detector: llr_clip must be finite and >= 0, got " +
                                    std::to_string(llr_clip));
    constellation c(mod); // validates the modulation value
}

namespace detail {

void cpu_qr_batch(mimo_shape shape, int orders, const cfloat* H, const cfloat* y, size_t batch, float* items);

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

    void detect_qr(const float* items, size_t batch, float n0, float clip, float* llr) override
    {
        const int nt = m_config.shape.nt, passes = m_config.passes;
        const size_t item_floats = qr_layout{nt, passes}.floats_per_item();
        const size_t llrs = size_t(nt) * m_pam.bits_per_symbol();
        status_collector status;
        dispatch_nt(nt, [&](auto nt_c) {
            constexpr int NT = decltype(nt_c)::value;
            parallel_for(batch, 256, [&](size_t begin, size_t end) {
                std::vector<float> dmin(size_t(NT) * m_pam.order());
                for (size_t p = begin; p < end; ++p)
                    if (!nway_problem<NT>(items + p * item_floats, passes, m_pam, n0, clip, dmin.data(),
                                          llr + p * llrs))
                        status.report(make_status(p, problem_fault::non_finite));
            });
        });
        throw_if_bad("nway_detector", status.get());
    }

    void detect(const cfloat* H, const cfloat* y, size_t batch, float n0, float clip, float* llr) override
    {
        m_items.resize(batch * qr_layout{m_config.shape.nt, m_config.passes}.floats_per_item());
        cpu_qr_batch(m_config.shape, m_config.passes, H, y, batch, m_items.data());
        detect_qr(m_items.data(), batch, n0, clip, llr);
    }

private:
    nway_config m_config;
    pam_table m_pam;
    std::vector<float> m_items; // QR items of detect(H, y), reused across calls
};

} // namespace

std::unique_ptr<nway_engine> make_cpu_nway_engine(const nway_config& config)
{
    return std::make_unique<cpu_nway_engine>(config);
}

} // namespace detail

namespace {
void check_n0(float n0)
{
    if (!(n0 > 0.0f) || !std::isfinite(n0))
        throw std::invalid_argument("mimo_gpu: noise variance N0 must be finite and > 0, got " +
                                    std::to_string(n0));
}
} // namespace

nway_detector::nway_detector(const nway_config& config, backend requested) : m_config(config)
{
    m_config.validate();
    m_engine = detail::choose_engine(requested, [&] { return detail::make_cpu_nway_engine(m_config); },
                                     [&] { return detail::make_cuda_nway_engine(m_config); });
}

nway_detector::~nway_detector() = default;
nway_detector::nway_detector(nway_detector&&) noexcept = default;
nway_detector& nway_detector::operator=(nway_detector&&) noexcept = default;

backend nway_detector::active_backend() const { return m_engine->kind(); }

int nway_detector::llrs_per_problem() const
{
    return m_config.shape.nt * constellation(m_config.mod).bits_per_symbol();
}

void nway_detector::set_llr_clip(float clip)
{
    nway_config c = m_config;
    c.llr_clip = clip;
    c.validate();
    m_config.llr_clip = clip;
}

void nway_detector::detect_qr(const float* items, size_t batch, float n0, float* llr)
{
    check_n0(n0);
    if (batch == 0)
        return;
    if (!items || !llr)
        throw std::invalid_argument("mimo_gpu::nway_detector::detect_qr: null buffer");
    m_engine->detect_qr(items, batch, n0, m_config.llr_clip, llr);
}

void nway_detector::detect(const cfloat* H, const cfloat* y, size_t batch, float n0, float* llr)
{
    check_n0(n0);
    if (batch == 0)
        return;
    if (!H || !y || !llr)
        throw std::invalid_argument("mimo_gpu::nway_detector::detect: null buffer");
    m_engine->detect(H, y, batch, n0, m_config.llr_clip, llr);
}

void nway_detector::detect_qr_device(const float* d_items, size_t batch, float n0, float* d_llr,
                                     cuda_stream_t stream)
{
    check_n0(n0);
    m_engine->detect_qr_device(d_items, batch, n0, m_config.llr_clip, d_llr, stream);
}

void nway_detector::detect_device(const cfloat* d_H, const cfloat* d_y, size_t batch, float n0, float* d_llr,
                                  cuda_stream_t stream)
{
    check_n0(n0);
    m_engine->detect_device(d_H, d_y, batch, n0, m_config.llr_clip, d_llr, stream);
}

void nway_detector::check_device_status(cuda_stream_t stream) { m_engine->check_device_status(stream); }

} // namespace mimo_gpu
