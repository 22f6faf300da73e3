#include "cuda_detector_engine.h"

namespace mimo_gpu {
namespace detail {

detection_report
cuda_detector_engine::detect(const cfloat* H, const cfloat* y, size_t batch, float n0, float clip, float* llr)
{
    if (batch == 0)
        return {};
    const cudaStream_t s = m_stream.get();
    const size_t h_count = batch * m_shape.nr * m_shape.nt, y_count = batch * m_shape.nr;
    const cfloat* dH;
    const cfloat* dy;
    if (m_copy_inputs) {
        cfloat* h = m_dH.reserve(h_count);
        cfloat* v = m_dy.reserve(y_count);
        MIMO_CUDA_CHECK(cudaMemcpyAsync(h, H, h_count * sizeof(cfloat), cudaMemcpyHostToDevice, s));
        MIMO_CUDA_CHECK(cudaMemcpyAsync(v, y, y_count * sizeof(cfloat), cudaMemcpyHostToDevice, s));
        dH = h;
        dy = v;
    } else {
        dH = m_H.device_view(H, h_count);
        dy = m_y.device_view(y, y_count);
    }
    launch(dH, dy, batch, n0, clip, m_llr.device_view(llr, batch * m_llrs), m_host_faults.sink(batch, s), s);
    const detection_report report = m_host_faults.collect(s, &m_flags);
    m_llr.finish();
    erase_problems(report, m_flags.data(), llr, m_llrs, 0.0f);
    return report;
}

void cuda_detector_engine::detect_device(const cfloat* d_H, const cfloat* d_y, size_t batch, float n0, float clip,
                                         float* d_llr, cuda_stream_t stream)
{
    if (batch == 0)
        return;
    launch(d_H, d_y, batch, n0, clip, d_llr, m_faults.sink(batch, stream), stream);
    m_faults.erase(d_llr, m_llrs, 0.0f, stream);
}

detection_report cuda_detector_engine::check_device_status(cuda_stream_t stream)
{
    return m_faults.collect(stream);
}

} // namespace detail
} // namespace mimo_gpu
