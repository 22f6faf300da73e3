#include <mimo_gpu/detector.h>
#include <mimo_gpu/detector_registry.h>

#include "detector_device.h"
#include "engine/detector_engine.h"
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

bad_problem_policy parse_bad_problem_policy(const std::string& name)
{
    if (name == "erase")
        return bad_problem_policy::erase;
    if (name == "stop")
        return bad_problem_policy::stop;
    throw std::invalid_argument("mimo_gpu: unknown bad-problem policy '" + name +
                                "' (erase or stop)");
}

const char* to_string(bad_problem_policy policy)
{
    return policy == bad_problem_policy::erase ? "erase" : "stop";
}

const char* to_string(erasure_cause cause)
{
    return cause == erasure_cause::singular_channel ? "singular_channel"
                                                    : "non_finite_input";
}

void detection_report::append(const detection_report& part, size_t offset)
{
    problems += part.problems;
    erased += part.erased;
    for (const erased_problem& e : part.first_erased)
        first_erased.push_back({ e.index + offset, e.cause });
}

std::string detection_report::describe(const char* unit) const
{
    if (erased == 0)
        return "no bad " + std::string(unit);
    std::string s;
    if (!first_erased.empty()) {
        const erased_problem& e = first_erased.front();
        s = std::string(unit) + " " + std::to_string(e.index) + " of the batch " +
            (e.cause == erasure_cause::singular_channel
                 ? "has a rank-deficient (singular) channel matrix"
                 : "contains a non-finite value (NaN or Inf) in its input");
    }
    return s + " (" + std::to_string(erased) + " of " + std::to_string(problems) + " " +
           unit + "s erased)";
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

detector::detector(const detector_family& family, detector_config config)
    : m_name(family.name),
      m_config(std::move(config)),
      m_capabilities(family.capabilities),
      m_specs(family.parameters),
      m_bits_per_symbol(constellation(m_config.mod).bits_per_symbol()),
      m_scratch(std::make_unique<scratch>())
{
}

detector::~detector() = default;

void detector::use_engine(std::unique_ptr<detail::detector_engine> engine)
{
    m_engine = std::move(engine);
}

backend detector::active_backend() const { return m_engine->kind(); }

float detector::llr_clip() const
{
    const auto it = m_config.parameters.find("llr_clip");
    return it == m_config.parameters.end() ? 0.0f : float(it->second);
}

detection_report detector::run(const detector_input& in, float* llr)
{
    return m_engine->detect(in, llr_clip(), llr);
}

void detector::run_device(const detector_input& in, float* d_llr, cuda_stream_t stream)
{
    m_engine->detect_device(in, llr_clip(), d_llr, stream);
}

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

namespace {
/// A call larger than this much scratch is detected in parts (docs/detectors.md,
/// "Memory").
constexpr size_t k_scratch_budget = size_t(64) << 20;
/// ... but never in parts so small that a GPU would run half empty.
constexpr size_t k_min_problems_per_run = 8192;

/// Channels [first, first + count) of `in`, with their S symbols each.
detector_input part_of(const detector_input& in,
                       size_t first,
                       size_t count,
                       size_t nr,
                       size_t nt,
                       size_t llrs)
{
    detector_input part = in;
    const size_t S = size_t(in.symbols_per_channel);
    part.H = in.H + first * nr * nt;
    part.y = in.y + first * S * nr;
    if (in.priors)
        part.priors = in.priors + first * S * llrs;
    part.channels = count;
    return part;
}
} // namespace

size_t detector::scratch_per_problem(int symbols_per_channel) const
{
    size_t bytes = m_engine->scratch_per_problem();
    if (symbols_per_channel > 1 && !m_capabilities.reuses_channels) // the repeated H
        bytes += size_t(shape().nr) * shape().nt * sizeof(cfloat);
    return bytes;
}

size_t detector::max_problems_per_run() const
{
    const size_t per_problem =
        scratch_per_problem(1) + size_t(llrs_per_problem()) * sizeof(float);
    return std::max(k_min_problems_per_run, k_scratch_budget / per_problem);
}

size_t detector::scratch_bytes(size_t problems, int symbols_per_channel) const
{
    const size_t S = size_t(std::max(symbols_per_channel, 1));
    // Parts hold whole channels; the float LLRs of the int8 path are counted too.
    const size_t per_problem =
        scratch_per_problem(int(S)) + size_t(llrs_per_problem()) * sizeof(float);
    const size_t part = std::max(S, (max_problems_per_run() / S) * S);
    return std::min(problems, part) * per_problem;
}

detection_report detector::apply_policy(detection_report report) const
{
    if (report.erased > 0 && m_policy == bad_problem_policy::stop)
        throw std::invalid_argument(
            "mimo_gpu::" + m_name + "_detector: " + report.describe() +
            " (bad-problem policy 'stop'; 'erase' detects the rest)");
    return report;
}

detection_report detector::detect(const detector_input& in, float* llr)
{
    check(in, llr, "detect");
    detection_report report;
    const size_t S = size_t(in.symbols_per_channel), llrs = size_t(llrs_per_problem());
    const size_t per_part = std::max<size_t>(1, max_problems_per_run() / S);
    for (size_t first = 0; first < in.channels; first += per_part) {
        const detector_input part = part_of(in,
                                            first,
                                            std::min(per_part, in.channels - first),
                                            size_t(shape().nr),
                                            size_t(shape().nt),
                                            llrs);
        report.append(run(expanded(part, false, nullptr), llr + first * S * llrs),
                      first * S);
    }
    report.problems = in.problems();
    return apply_policy(std::move(report));
}

detection_report detector::detect(const detector_input& in, int8_t* llr, float int8_scale)
{
    if (!(int8_scale > 0.0f) || !std::isfinite(int8_scale))
        throw std::invalid_argument("mimo_gpu: int8 LLR scale must be finite and > 0");
    check(in, llr, "detect");
    detection_report report;
    const size_t S = size_t(in.symbols_per_channel), llrs = size_t(llrs_per_problem());
    const size_t per_part = std::max<size_t>(1, max_problems_per_run() / S);
    for (size_t first = 0; first < in.channels; first += per_part) {
        const size_t count = std::min(per_part, in.channels - first);
        const detector_input part =
            part_of(in, first, count, size_t(shape().nr), size_t(shape().nt), llrs);
        m_scratch->llr.resize(count * S * llrs);
        report.append(run(expanded(part, false, nullptr), m_scratch->llr.data()),
                      first * S);
        llrs_to_int8(m_scratch->llr.data(),
                     m_scratch->llr.size(),
                     int8_scale,
                     llr + first * S * llrs);
    }
    report.problems = in.problems();
    return apply_policy(std::move(report));
}

detection_report
detector::detect(const cfloat* H, const cfloat* y, size_t batch, float n0, float* llr)
{
    detector_input in;
    in.H = H;
    in.y = y;
    in.channels = batch;
    in.n0 = n0;
    return detect(in, llr);
}

void detector::detect_device(const detector_input& in, float* d_llr, cuda_stream_t stream)
{
    check(in, d_llr, "detect_device");
    if (active_backend() != backend::cuda)
        throw std::logic_error("mimo_gpu: detector '" + m_name +
                               "': detect_device needs the CUDA backend");
    const size_t S = size_t(in.symbols_per_channel), llrs = size_t(llrs_per_problem());
    const size_t per_part = std::max<size_t>(1, max_problems_per_run() / S);
    for (size_t first = 0; first < in.channels; first += per_part) {
        const detector_input part = part_of(in,
                                            first,
                                            std::min(per_part, in.channels - first),
                                            size_t(shape().nr),
                                            size_t(shape().nt),
                                            llrs);
        run_device(expanded(part, true, stream), d_llr + first * S * llrs, stream);
    }
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
#ifdef MIMO_GPU_HAVE_CUDA
    if (!m_scratch->device)
        m_scratch->device = detail::make_device_scratch();
    const size_t S = size_t(in.symbols_per_channel), llrs = size_t(llrs_per_problem());
    const size_t per_part = std::max<size_t>(1, max_problems_per_run() / S);
    for (size_t first = 0; first < in.channels; first += per_part) {
        const size_t count = std::min(per_part, in.channels - first);
        const detector_input part =
            part_of(in, first, count, size_t(shape().nr), size_t(shape().nt), llrs);
        float* d_float = detail::float_llrs_device(*m_scratch->device, count * S * llrs);
        run_device(expanded(part, true, stream), d_float, stream);
        detail::llrs_to_int8_device(
            d_float, count * S * llrs, int8_scale, d_llr + first * S * llrs, stream);
    }
#else
    (void)stream;
#endif
}

detection_report detector::check_device_status(cuda_stream_t stream)
{
    if (active_backend() != backend::cuda)
        throw std::logic_error("mimo_gpu: detector '" + m_name +
                               "': check_device_status needs the CUDA backend");
    return apply_policy(m_engine->check_device_status(stream));
}


} // namespace mimo_gpu
