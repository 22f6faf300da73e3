#include "../runtime/device_allocation.h"

#include <mimo_gpu/device_memory.h>
#include <mimo_gpu/iterative_receiver.h>

#include <algorithm>
#include <stdexcept>
#include <string>

namespace mimo_gpu {

void iterative_receiver_config::validate() const
{
    if (outer_iterations < 1 || outer_iterations > 16)
        throw std::invalid_argument(
            "mimo_gpu::iterative_receiver: outer_iterations must be 1..16, got " +
            std::to_string(outer_iterations));
}

namespace {
std::unique_ptr<transport_block_code_decoder>
checked(std::unique_ptr<transport_block_code_decoder> decoder)
{
    if (!decoder)
        throw std::invalid_argument("mimo_gpu::iterative_receiver: no decoder");
    return decoder;
}

int whole_problems(const detector& det, int G)
{
    const int per_problem = det.llrs_per_problem();
    if (G % per_problem != 0)
        throw std::invalid_argument(
            "mimo_gpu::iterative_receiver: G = " + std::to_string(G) +
            " is not a whole number of detector problems of " +
            std::to_string(per_problem) + " LLRs");
    return G / per_problem;
}
} // namespace

iterative_receiver::iterative_receiver(std::unique_ptr<detector> det,
                                       const transport_block_format& format,
                                       const turbo_decoder_config& decoder,
                                       const iterative_receiver_config& config,
                                       backend requested)
    : iterative_receiver(std::move(det),
                         make_transport_block_code_decoder(format, decoder, requested),
                         config)
{
}

iterative_receiver::iterative_receiver(std::unique_ptr<detector> det,
                                       const nr_transport_block_format& format,
                                       const ldpc_decoder_config& decoder,
                                       const iterative_receiver_config& config,
                                       backend requested)
    : iterative_receiver(std::move(det),
                         make_transport_block_code_decoder(format, decoder, requested),
                         config)
{
}

iterative_receiver::iterative_receiver(
    std::unique_ptr<detector> det,
    std::unique_ptr<transport_block_code_decoder> decoder,
    const iterative_receiver_config& config)
    : m_detector(std::move(det)),
      m_decoder(checked(std::move(decoder))),
      m_config((config.validate(), config)),
      m_problems_per_block(whole_problems(*m_detector, m_decoder->G()))
{
    if (!m_detector->capabilities().accepts_priors)
        throw std::invalid_argument("mimo_gpu::iterative_receiver: detector '" +
                                    m_detector->name() +
                                    "' takes no a-priori LLRs (families that do: "
                                    "those with capabilities().accepts_priors)");
}

int iterative_receiver::A() const { return m_decoder->A(); }
int iterative_receiver::G() const { return m_decoder->G(); }
std::string iterative_receiver::code() const { return m_decoder->code(); }

void iterative_receiver::set_outer_iterations(int outer_iterations)
{
    iterative_receiver_config c = m_config;
    c.outer_iterations = outer_iterations;
    c.validate();
    m_config = c;
}

/// Device memory of the loop (device_memory.h): the inputs, the LLRs, the
/// priors and the bits, grown as needed, and the loop's stream.
struct iterative_receiver::device_state {
    device_stream stream;
    detail::device_allocation H, y, llr, priors, bits;
};

iterative_receiver::~iterative_receiver() = default;
iterative_receiver::iterative_receiver(iterative_receiver&&) noexcept = default;
iterative_receiver&
iterative_receiver::operator=(iterative_receiver&&) noexcept = default;

bool iterative_receiver::loops_on_device() const
{
    return m_config.device_loop && m_decoder->active_backend() == backend::cuda &&
           m_detector->active_backend() == backend::cuda &&
           m_detector->capabilities().device_path;
}

std::vector<idd_result>
iterative_receiver::receive(const detector_input& in, size_t count, uint8_t* a)
{
    if (in.priors)
        throw std::invalid_argument(
            "mimo_gpu::iterative_receiver::receive: the priors are the receiver's own");
    if (in.problems() != count * size_t(m_problems_per_block))
        throw std::invalid_argument(
            "mimo_gpu::iterative_receiver::receive: " + std::to_string(in.problems()) +
            " problems for " + std::to_string(count) + " transport blocks of " +
            std::to_string(m_problems_per_block));
    if (!a)
        throw std::invalid_argument("mimo_gpu::iterative_receiver::receive: null buffer");
    m_bits.resize(count * size_t(m_decoder->A()));
    std::vector<idd_result> results(count);
    const bool device = loops_on_device();
    for (int pass = 1; pass <= m_config.outer_iterations; ++pass) {
        if (device)
            detect_and_decode_on_device(in, count, pass);
        else
            detect_and_decode_on_host(in, count, pass);
        if (record_pass(pass, m_decoded, a, results))
            break;
    }
    return results;
}

void iterative_receiver::detect_and_decode_on_host(const detector_input& in,
                                                   size_t count,
                                                   int pass)
{
    const size_t G = size_t(m_decoder->G());
    m_llr.resize(count * G);
    if (pass == 1)
        m_priors.assign(count * G, 0.0f);
    detector_input with = in;
    with.priors = pass == 1 ? nullptr : m_priors.data();
    m_detector->detect(with, m_llr.data());
    const bool last = pass == m_config.outer_iterations;
    m_decoded = m_decoder->decode(
        m_llr.data(), count, m_bits.data(), last ? nullptr : m_priors.data());
}

void iterative_receiver::detect_and_decode_on_device(const detector_input& in,
                                                     size_t count,
                                                     int pass)
{
    if (!m_device)
        m_device = std::make_unique<device_state>();
    device_state& d = *m_device;
    const mimo_shape& shape = m_detector->shape();
    const size_t G = size_t(m_decoder->G()), A = size_t(m_decoder->A());
    detector_input on_device = in;
    const size_t h_bytes = in.channels * size_t(shape.nr * shape.nt) * sizeof(cfloat),
                 y_bytes = in.problems() * size_t(shape.nr) * sizeof(cfloat);
    void* dH = d.H.reserve(h_bytes);
    void* dy = d.y.reserve(y_bytes);
    float* d_llr = static_cast<float*>(d.llr.reserve(count * G * sizeof(float)));
    float* d_priors = static_cast<float*>(d.priors.reserve(count * G * sizeof(float)));
    uint8_t* d_bits = static_cast<uint8_t*>(d.bits.reserve(count * A));
    if (pass == 1) { // the only upload of the call
        copy_memory(dH, in.H, h_bytes, copy_direction::host_to_device);
        copy_memory(dy, in.y, y_bytes, copy_direction::host_to_device);
    }
    on_device.H = static_cast<const cfloat*>(dH);
    on_device.y = static_cast<const cfloat*>(dy);
    on_device.priors = pass == 1 ? nullptr : d_priors;
    m_detector->detect_device(on_device, d_llr, d.stream.get());
    const bool last = pass == m_config.outer_iterations;
    m_decoder->decode_device(
        d_llr, count, d_bits, d.stream.get(), last ? nullptr : d_priors);
    m_decoded = m_decoder->device_results(d.stream.get()); // waits
    m_detector->check_device_status(d.stream.get());       // erasures: LLRs 0 already
    copy_memory(m_bits.data(), d_bits, count * A, copy_direction::device_to_host);
}

bool iterative_receiver::record_pass(int pass,
                                     const std::vector<transport_block_result>& decoded,
                                     uint8_t* a,
                                     std::vector<idd_result>& results) const
{
    const size_t A = size_t(m_decoder->A());
    bool all_ok = true;
    for (size_t t = 0; t < results.size(); ++t) {
        idd_result& r = results[t];
        if (r.outer_iterations > 0 && r.decoded.crc_ok)
            continue; // passed earlier: its bits stand
        r.decoded = decoded[t];
        r.outer_iterations = pass;
        std::copy_n(m_bits.begin() + t * A, A, a + t * A);
        all_ok &= decoded[t].crc_ok;
    }
    return all_ok;
}

} // namespace mimo_gpu
