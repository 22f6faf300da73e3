#include <mimo_gpu/detector_registry.h>
#include <mimo_gpu/ml_detector.h>

#include "../../runtime/engine_choice.h"
#include "../../runtime/parallel_for.h"
#include "../../qr/mgs_qr.h"
#include "../../runtime/fault_flags.h"
#include "ml_engine.h"
#include "ml_search.h"
#include "../pam_table.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <algorithm>
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

    detection_report detect(const cfloat* H, const cfloat* y, size_t batch, float n0, float* llr) override
    {
        const int nr = m_shape.nr, nt = m_shape.nt, M = m_pam.order(), Q = m_pam.bits_per_symbol();
        uint64_t slices = 1;
        for (int t = 0; t < nt - 1; ++t)
            slices *= uint64_t(M);
        fault_word* flags = m_faults.reset(batch);
        parallel_for(batch, 1, [&](size_t begin, size_t end) {
            std::vector<float> dmin(size_t(nt) * M), h(2 * size_t(nr) * nt), yy(2 * size_t(nr));
            for (size_t p = begin; p < end; ++p) {
                const float* hp = reinterpret_cast<const float*>(H + p * nr * nt);
                const float* yp = reinterpret_cast<const float*>(y + p * nr);
                const problem_fault fault = channel_fault(hp, yp, nr, nt);
                if (fault != problem_fault::none) {
                    report_fault(flags, p, fault);
                    continue;
                }
                std::copy(hp, hp + h.size(), h.begin());
                std::copy(yp, yp + yy.size(), yy.begin());
                const float scale = ml_normalise(h.data(), yy.data(), nr, nt);
                std::fill(dmin.begin(), dmin.end(), k_infinity);
                auto keep_min = [&](int t, int s, float d) {
                    float& slot = dmin[size_t(t) * M + s];
                    slot = d < slot ? d : slot;
                };
                bool finite = true;
                for (uint64_t s = 0; s < slices && finite; ++s)
                    finite = ml_scan_slice(h.data(), yy.data(), nr, nt, m_pam, s, keep_min);
                if (!finite) {
                    report_fault(flags, p, problem_fault::non_finite);
                    continue;
                }
                for (int t = 0; t < nt; ++t)
                    for (int k = 0; k < Q; ++k)
                        llr[p * nt * Q + t * Q + k] =
                            llr_from_symbol_minima(dmin.data() + t * M, m_pam, k, n0 * scale * scale, 0.0f, 0.0f);
            }
        });
        return m_faults.finish(llr, size_t(nt) * Q);
    }

private:
    mimo_shape m_shape;
    pam_table m_pam;
    host_faults m_faults;
};

} // namespace

std::unique_ptr<ml_engine> make_cpu_ml_engine(mimo_shape shape, modulation mod)
{
    return std::make_unique<cpu_ml_engine>(shape, mod);
}

} // namespace detail

detector_capabilities ml_capabilities()
{
    detector_capabilities c;
    c.modulations = {modulation::qpsk, modulation::qam16, modulation::qam64, modulation::qam256,
                     modulation::qam1024};
    c.exact_max_log = true;
    c.device_path = false; // its CUDA engine reads host memory (detect() only)
    return c;
}

namespace {
detector_config checked_ml_config(mimo_shape shape, modulation mod)
{
    shape.validate_small();
    const constellation c(mod);
    const double candidates = std::pow(double(c.order()), double(shape.nt));
    if (candidates > double(k_ml_max_candidates))
        throw std::invalid_argument("mimo_gpu::ml_detector: " + to_string(mod) + " with nt=" +
                                    std::to_string(shape.nt) + " has " + std::to_string(candidates) +
                                    " candidate vectors, more than the " +
                                    std::to_string(k_ml_max_candidates) +
                                    " an exhaustive search is allowed; use another detector");
    return {shape, mod, {}};
}
} // namespace

ml_detector::ml_detector(mimo_shape shape, modulation mod, backend requested)
    : detector("ml", checked_ml_config(shape, mod), ml_capabilities(), {})
{
    m_engine = detail::choose_engine(requested, [&] { return detail::make_cpu_ml_engine(shape, mod); },
                                     [&] { return detail::make_cuda_ml_engine(shape, mod); });
}

ml_detector::~ml_detector() = default;

backend ml_detector::active_backend() const { return m_engine->kind(); }

detection_report ml_detector::run(const detector_input& in, float* llr)
{
    return m_engine->detect(in.H, in.y, in.channels, in.n0, llr);
}

namespace detail {
std::vector<detector_family> ml_families()
{
    return {{"ml", "exhaustive max-log ML soft detector (the exact reference; M^nt <= 2^24)", ml_capabilities(),
             {}, [](const detector_config& c, backend b) {
                 return std::unique_ptr<detector>(new ml_detector(c.shape, c.mod, b));
             }}};
}
} // namespace detail

} // namespace mimo_gpu
