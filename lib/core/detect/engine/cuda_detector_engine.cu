#include "cuda_detector_engine.h"

namespace mimo_gpu {
namespace detail {

cuda_detector_engine::cuda_detector_engine(mimo_shape shape,
                                           modulation mod,
                                           cuda_engine_options options,
                                           size_t item_bytes)
    : m_pam(make_pam_table(constellation(mod))),
      m_shape(shape),
      m_llrs(size_t(shape.nt) * m_pam.bits_per_symbol()),
      m_options(options),
      m_item_bytes(item_bytes)
{
}

size_t cuda_detector_engine::scratch_per_problem() const
{
    const size_t nr = m_shape.nr, nt = m_shape.nt;
    size_t bytes = m_item_bytes;
    if (m_options.copy_inputs) // a channel per problem at worst, and its priors
        bytes += (nr * nt + nr) * sizeof(cfloat) + m_llrs * sizeof(float);
    if (m_options.copy_outputs)
        bytes += m_llrs * sizeof(float);
    return bytes;
}

detector_input cuda_detector_engine::device_inputs(const detector_input& in,
                                                   cudaStream_t s)
{
    const size_t h_count = in.channels * m_shape.nr * m_shape.nt,
                 y_count = in.problems() * m_shape.nr, p_count = in.problems() * m_llrs;
    detector_input d = in;
    if (m_options.copy_inputs) {
        cfloat* h = m_dH.reserve(h_count);
        cfloat* v = m_dy.reserve(y_count);
        MIMO_CUDA_CHECK(cudaMemcpyAsync(
            h, in.H, h_count * sizeof(cfloat), cudaMemcpyHostToDevice, s));
        MIMO_CUDA_CHECK(cudaMemcpyAsync(
            v, in.y, y_count * sizeof(cfloat), cudaMemcpyHostToDevice, s));
        d.H = h;
        d.y = v;
        if (in.priors) {
            float* p = m_dpriors.reserve(p_count);
            MIMO_CUDA_CHECK(cudaMemcpyAsync(
                p, in.priors, p_count * sizeof(float), cudaMemcpyHostToDevice, s));
            d.priors = p;
        }
        return d;
    }
    d.H = m_H.device_view(in.H, h_count);
    d.y = m_y.device_view(in.y, y_count);
    if (in.priors)
        d.priors = m_priors.device_view(in.priors, p_count);
    return d;
}

float* cuda_detector_engine::device_llrs(float* llr, size_t problems, cudaStream_t)
{
    if (!m_options.copy_outputs)
        return m_llr.device_view(llr, problems * m_llrs);
    m_copy_back = llr;
    m_copy_back_count = problems * m_llrs;
    return m_dllr.reserve(m_copy_back_count);
}

detection_report cuda_detector_engine::finish_host_call(float* llr)
{
    const cudaStream_t s = m_stream.get();
    if (llr && m_options.copy_outputs)
        MIMO_CUDA_CHECK(cudaMemcpyAsync(m_copy_back,
                                        m_dllr.data(),
                                        m_copy_back_count * sizeof(float),
                                        cudaMemcpyDeviceToHost,
                                        s));
    const detection_report report =
        m_host_faults.collect(s, &m_flags); // waits for the stream
    if (llr && !m_options.copy_outputs)
        m_llr.finish();
    if (llr)
        erase_problems(report, m_flags.data(), llr, m_llrs, 0.0f);
    return report;
}

detection_report
cuda_detector_engine::detect(const detector_input& in, float clip, float* llr)
{
    return host_call(in.problems(), llr, [&](fault_sink sink, cudaStream_t s) {
        launch(device_inputs(in, s), clip, device_llrs(llr, in.problems(), s), sink, s);
    });
}

void cuda_detector_engine::detect_device(const detector_input& in,
                                         float clip,
                                         float* d_llr,
                                         cuda_stream_t stream)
{
    device_call(in.problems(), d_llr, stream, [&](fault_sink sink) {
        launch(in, clip, d_llr, sink, stream);
    });
}

detection_report cuda_detector_engine::check_device_status(cuda_stream_t stream)
{
    return m_faults.collect(stream);
}

} // namespace detail
} // namespace mimo_gpu
