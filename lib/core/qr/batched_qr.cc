#include <mimo_gpu/batched_qr.h>

#include "../runtime/engine_choice.h"
#include "../runtime/fault_flags.h"
#include "../runtime/parallel_for.h"
#include "../runtime/shape_dispatch.h"
#include "mgs_qr.h"
#include "qr_engine.h"

#include <string>

namespace mimo_gpu {

namespace detail {

/// Computes every order of every problem on the CPU, spread over the cores.
void cpu_qr_batch(mimo_shape shape,
                  int orders,
                  const cfloat* H,
                  const cfloat* y,
                  size_t batch,
                  float* items,
                  fault_word* flags)
{
    const qr_layout layout{ shape.nt, orders };
    dispatch_shape(shape.nr, shape.nt, [&](auto nr_c, auto nt_c) {
        constexpr int NR = decltype(nr_c)::value, NT = decltype(nt_c)::value;
        parallel_for(batch, 512, [&](size_t begin, size_t end) {
            for (size_t p = begin; p < end; ++p) {
                const float* h = reinterpret_cast<const float*>(H + p * NR * NT);
                const float* yy = reinterpret_cast<const float*>(y + p * NR);
                for (int o = 0; o < orders; ++o) {
                    float* E = items + p * layout.floats_per_item() +
                               o * layout.floats_per_order();
                    const problem_fault f = mgs_qr_order<NR, NT>(h, yy, o, E);
                    if (f != problem_fault::none) {
                        report_fault(flags, p, f);
                        break;
                    }
                }
            }
        });
    });
}

namespace {

class cpu_qr_engine final : public qr_engine
{
public:
    cpu_qr_engine(mimo_shape shape, int orders) : m_shape(shape), m_orders(orders) {}
    backend kind() const override { return backend::cpu; }
    detection_report
    run(const cfloat* H, const cfloat* y, size_t batch, float* items) override
    {
        cpu_qr_batch(m_shape, m_orders, H, y, batch, items, m_faults.reset(batch));
        return m_faults.finish(items,
                               qr_layout{ m_shape.nt, m_orders }.floats_per_item(),
                               k_erased_item_value);
    }

private:
    mimo_shape m_shape;
    int m_orders;
    host_faults m_faults;
};

} // namespace

std::unique_ptr<qr_engine> make_cpu_qr_engine(mimo_shape shape, int orders)
{
    return std::make_unique<cpu_qr_engine>(shape, orders);
}

} // namespace detail

batched_qr::batched_qr(mimo_shape shape, int orders, backend requested)
    : m_shape(shape), m_layout{ shape.nt, orders }
{
    m_shape.validate_small();
    if (orders < 1 || orders > shape.nt)
        throw std::invalid_argument("mimo_gpu::batched_qr: orders must be 1..nt (" +
                                    std::to_string(shape.nt) + "), got " +
                                    std::to_string(orders));
    m_engine = detail::choose_engine(
        requested,
        [&] { return detail::make_cpu_qr_engine(shape, orders); },
        [&] { return detail::make_cuda_qr_engine(shape, orders); });
}

batched_qr::~batched_qr() = default;
batched_qr::batched_qr(batched_qr&&) noexcept = default;
batched_qr& batched_qr::operator=(batched_qr&&) noexcept = default;

backend batched_qr::active_backend() const { return m_engine->kind(); }

detection_report batched_qr::apply_policy(detection_report report) const
{
    if (report.erased > 0 && m_policy == bad_problem_policy::stop)
        throw std::invalid_argument(
            "mimo_gpu::batched_qr: " + report.describe() +
            " (bad-problem policy 'stop'; 'erase' decomposes the rest)");
    return report;
}

detection_report
batched_qr::run(const cfloat* H, const cfloat* y, size_t batch, float* items)
{
    if (batch == 0)
        return {};
    if (!H || !y || !items)
        throw std::invalid_argument("mimo_gpu::batched_qr::run: null buffer");
    return apply_policy(m_engine->run(H, y, batch, items));
}

void batched_qr::run_device(const cfloat* d_H,
                            const cfloat* d_y,
                            size_t batch,
                            float* d_items,
                            cuda_stream_t stream)
{
    m_engine->run_device(d_H, d_y, batch, d_items, stream);
}

detection_report batched_qr::check_device_status(cuda_stream_t stream)
{
    return apply_policy(m_engine->check_device_status(stream));
}

} // namespace mimo_gpu
