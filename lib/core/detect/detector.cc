#include <mimo_gpu/detector.h>

#include "detector_device.h"
#include "llr_quantize.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace mimo_gpu {

bool detector_capabilities::supports(modulation m) const
{
    return std::find(modulations.begin(), modulations.end(), m) != modulations.end();
}

void detector_capabilities::check(const std::string& family,
                                  const mimo_shape& shape,
                                  modulation m) const
{
    shape.validate();
    if (shape.nr > max_nr || shape.nt > max_nt)
        throw std::invalid_argument(
            "mimo_gpu: detector '" + family + "' takes nr <= " + std::to_string(max_nr) +
            " and nt <= " + std::to_string(max_nt) +
            ", got nr=" + std::to_string(shape.nr) + ", nt=" + std::to_string(shape.nt));
    if (!supports(m)) {
        std::string list;
        for (modulation x : modulations)
            list += (list.empty() ? "" : ", ") + to_string(x);
        throw std::invalid_argument("mimo_gpu: detector '" + family + "' does not take " +
                                    to_string(m) + " (it takes " + list + ")");
    }
}

void check_noise_variance(double n0)
{
    const float f = float(n0);
    if (!(n0 > 0.0) || !std::isfinite(n0) || !(f > 0.0f) || !std::isfinite(f) ||
        !std::isfinite(1.0f / f))
        throw std::invalid_argument(
            "mimo_gpu: noise variance N0 must be finite and > 0 in single precision "
            "(about 1.2e-38 to 3.4e38), got " +
            std::to_string(n0));
}

void llrs_to_int8(const float* llr, size_t count, float scale, int8_t* out)
{
    for (size_t i = 0; i < count; ++i)
        out[i] = detail::quantize_llr(llr[i], scale);
}

struct detector::scratch {
    std::vector<cfloat> H;  // channels repeated for families that work per symbol
    std::vector<float> llr; // float LLRs of the int8 path
    std::shared_ptr<detail::device_scratch> device;
};

detector::detector(std::string name,
                   detector_config config,
                   detector_capabilities caps,
                   std::vector<parameter_spec> specs)
    : m_name(std::move(name)),
      m_config(std::move(config)),
      m_capabilities(std::move(caps)),
      m_specs(std::move(specs)),
      m_bits_per_symbol(constellation(m_config.mod).bits_per_symbol()),
      m_scratch(std::make_unique<scratch>())
{
}

detector::~detector() = default;

double detector::parameter(const std::string& name) const
{
    const auto it = m_config.parameters.find(name);
    if (it == m_config.parameters.end())
        throw std::invalid_argument("mimo_gpu: detector '" + m_name +
                                    "' has no parameter '" + name + "'");
    return it->second;
}

void detector::set_parameter(const std::string& name, double value)
{
    const auto spec = std::find_if(
        m_specs.begin(), m_specs.end(), [&](const auto& s) { return s.name == name; });
    if (spec == m_specs.end())
        throw std::invalid_argument("mimo_gpu: detector '" + m_name +
                                    "' has no parameter '" + name + "'");
    if (!spec->settable)
        throw std::invalid_argument("mimo_gpu: parameter '" + name + "' of detector '" +
                                    m_name + "' is fixed when the detector is made");
    spec->check(m_name, value);
    m_config.parameters[name] = value;
    parameter_changed(name);
}

void detector::check(const detector_input& in, const void* llr, const char* call) const
{
    check_noise_variance(in.n0);
    if (in.symbols_per_channel < 1)
        throw std::invalid_argument("mimo_gpu: detector '" + m_name + "' " + call +
                                    ": symbols per channel S must be >= 1, got " +
                                    std::to_string(in.symbols_per_channel));
    if (in.priors && !m_capabilities.accepts_priors)
        throw std::invalid_argument("mimo_gpu: detector '" + m_name +
                                    "' takes no a-priori LLRs");
    if (in.channels > 0 && (!in.H || !in.y || !llr))
        throw std::invalid_argument("mimo_gpu: detector '" + m_name + "' " + call +
                                    ": null buffer");
}

detector_input
detector::expanded(const detector_input& in, bool device, cuda_stream_t stream)
{
    if (in.symbols_per_channel == 1 || m_capabilities.reuses_channels)
        return in;
    const size_t per_channel = size_t(shape().nr) * shape().nt;
    detector_input out = in;
    out.channels = in.problems();
    out.symbols_per_channel = 1;
    if (device) {
#ifdef MIMO_GPU_HAVE_CUDA
        if (!m_scratch->device)
            m_scratch->device = detail::make_device_scratch();
        out.H = detail::repeat_channels_device(*m_scratch->device,
                                               in.H,
                                               in.channels,
                                               in.symbols_per_channel,
                                               per_channel,
                                               stream);
#else
        (void)stream;
#endif
        return out;
    }
    m_scratch->H.resize(out.channels * per_channel);
    for (size_t p = 0; p < out.channels; ++p)
        std::copy_n(in.H + (p / in.symbols_per_channel) * per_channel,
                    per_channel,
                    m_scratch->H.begin() + p * per_channel);
    out.H = m_scratch->H.data();
    return out;
}

void detector::detect(const detector_input& in, float* llr)
{
    check(in, llr, "detect");
    if (in.channels == 0)
        return;
    run(expanded(in, false, nullptr), llr);
}

void detector::detect(const detector_input& in, int8_t* llr, float int8_scale)
{
    if (!(int8_scale > 0.0f) || !std::isfinite(int8_scale))
        throw std::invalid_argument("mimo_gpu: int8 LLR scale must be finite and > 0");
    check(in, llr, "detect");
    if (in.channels == 0)
        return;
    const size_t count = in.problems() * size_t(llrs_per_problem());
    m_scratch->llr.resize(count);
    run(expanded(in, false, nullptr), m_scratch->llr.data());
    llrs_to_int8(m_scratch->llr.data(), count, int8_scale, llr);
}

void detector::detect(
    const cfloat* H, const cfloat* y, size_t batch, float n0, float* llr)
{
    detector_input in;
    in.H = H;
    in.y = y;
    in.channels = batch;
    in.n0 = n0;
    detect(in, llr);
}

void detector::detect_device(const detector_input& in, float* d_llr, cuda_stream_t stream)
{
    check(in, d_llr, "detect_device");
    if (active_backend() != backend::cuda)
        throw std::logic_error("mimo_gpu: detector '" + m_name +
                               "': detect_device needs the CUDA backend");
    if (in.channels == 0)
        return;
    run_device(expanded(in, true, stream), d_llr, stream);
}

void detector::detect_device(const detector_input& in,
                             int8_t* d_llr,
                             float int8_scale,
                             cuda_stream_t stream)
{
    if (!(int8_scale > 0.0f) || !std::isfinite(int8_scale))
        throw std::invalid_argument("mimo_gpu: int8 LLR scale must be finite and > 0");
    check(in, d_llr, "detect_device");
    if (active_backend() != backend::cuda)
        throw std::logic_error("mimo_gpu: detector '" + m_name +
                               "': detect_device needs the CUDA backend");
    if (in.channels == 0)
        return;
#ifdef MIMO_GPU_HAVE_CUDA
    if (!m_scratch->device)
        m_scratch->device = detail::make_device_scratch();
    const size_t count = in.problems() * size_t(llrs_per_problem());
    float* d_float = detail::float_llrs_device(*m_scratch->device, count);
    run_device(expanded(in, true, stream), d_float, stream);
    detail::llrs_to_int8_device(d_float, count, int8_scale, d_llr, stream);
#endif
}

void detector::check_device_status(cuda_stream_t stream)
{
    if (active_backend() != backend::cuda)
        throw std::logic_error("mimo_gpu: detector '" + m_name +
                               "': check_device_status needs the CUDA backend");
    device_status(stream);
}

void detector::run_device(const detector_input&, float*, cuda_stream_t)
{
    throw std::logic_error("mimo_gpu: detector '" + m_name +
                           "' has no device-memory path");
}

void detector::device_status(cuda_stream_t) {}

} // namespace mimo_gpu
