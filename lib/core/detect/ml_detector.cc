#include <mimo_gpu/ml_detector.h>

#include "../runtime/engine_choice.h"
#include "../runtime/parallel_for.h"
#include "../runtime/problem_status.h"
#include "ml_engine.h"
#include "ml_search.h"
#include "pam_table.h"

#include <cmath>
#include <string>
#include <vector>

namespace mimo_gpu {

namespace detail {
namespace {

class cpu_ml_engine final : public ml_engine
{
public:
    cpu_ml_engine(mimo_shape shape, modulation mod)
        : m_shape(shape), m_pam(make_pam_table(constellation(mod)))
    {
    }
    backend kind() const override { return backend::cpu; }

    void detect(const cfloat* H, const cfloat* y, size_t batch, float n0, float* llr) override
    {
        const int nr = m_shape.nr, nt = m_shape.nt, M = m_pam.order(), Q = m_pam.bits_per_symbol();
        uint64_t slices = 1;
        for (int t = 0; t < nt - 1; ++t)
            slices *= uint64_t(M);
        status_collector status;
        parallel_for(batch, 1, [&](size_t begin, size_t end) {
            std::vector<float> dmin(size_t(nt) * M);
            for (size_t p = begin; p < end; ++p) {
                const float* h = reinterpret_cast<const float*>(H + p * nr * nt);
                const float* yy = reinterpret_cast<const float*>(y + p * nr);
                std::fill(dmin.begin(), dmin.end(), k_infinity);
                auto keep_min = [&](int t, int s, float d) {
                    float& slot = dmin[size_t(t) * M + s];
                    slot = d < slot ? d : slot;
                };
                bool finite = true;
                for (uint64_t s = 0; s < slices && finite; ++s)
                    finite = ml_scan_slice(h, yy, nr, nt, m_pam, s, keep_min);
                if (!finite) {
                    status.report(make_status(p, problem_fault::non_finite));
                    continue;
                }
                for (int t = 0; t < nt; ++t)
                    for (int k = 0; k < Q; ++k)
                        llr[p * nt * Q + t * Q + k] =
                            llr_from_symbol_minima(dmin.data() + t * M, m_pam, k, n0, 0.0f, 0.0f);
            }
        });
        throw_if_bad("ml_detector", status.get());
    }

private:
    mimo_shape m_shape;
    pam_table m_pam;
};

} // namespace

std::unique_ptr<ml_engine> make_cpu_ml_engine(mimo_shape shape, modulation mod)
{
    return std::make_unique<cpu_ml_engine>(shape, mod);
}

} // namespace detail

ml_detector::ml_detector(mimo_shape shape, modulation mod, backend requested) : m_shape(shape), m_mod(mod)
{
    m_shape.validate();
    const constellation c(mod);
    const double candidates = std::pow(double(c.order()), double(shape.nt));
    if (candidates > double(k_ml_max_candidates))
        throw std::invalid_argument("mimo_gpu::ml_detector: " + to_string(mod) + " with nt=" +
                                    std::to_string(shape.nt) + " has " + std::to_string(candidates) +
                                    " candidate vectors, more than the " +
                                    std::to_string(k_ml_max_candidates) +
                                    " an exhaustive search is allowed; use nway_detector");
    m_engine = detail::choose_engine(requested, [&] { return detail::make_cpu_ml_engine(shape, mod); },
                                     [&] { return detail::make_cuda_ml_engine(shape, mod); });
}

ml_detector::~ml_detector() = default;
ml_detector::ml_detector(ml_detector&&) noexcept = default;
ml_detector& ml_detector::operator=(ml_detector&&) noexcept = default;

backend ml_detector::active_backend() const { return m_engine->kind(); }

int ml_detector::llrs_per_problem() const { return m_shape.nt * constellation(m_mod).bits_per_symbol(); }

void ml_detector::detect(const cfloat* H, const cfloat* y, size_t batch, float n0, float* llr)
{
    if (!(n0 > 0.0f) || !std::isfinite(n0))
        throw std::invalid_argument("mimo_gpu::ml_detector: noise variance N0 must be finite and > 0, got " +
                                    std::to_string(n0));
    if (batch == 0)
        return;
    if (!H || !y || !llr)
        throw std::invalid_argument("mimo_gpu::ml_detector::detect: null buffer");
    m_engine->detect(H, y, batch, n0, llr);
}

} // namespace mimo_gpu
