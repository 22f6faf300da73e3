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
int whole_problems(const detector& det, const transport_block_format& format)
{
    const int per_problem = det.llrs_per_problem();
    if (format.G % per_problem != 0)
        throw std::invalid_argument(
            "mimo_gpu::iterative_receiver: G = " + std::to_string(format.G) +
            " is not a whole number of detector problems of " +
            std::to_string(per_problem) + " LLRs");
    return format.G / per_problem;
}
} // namespace

iterative_receiver::iterative_receiver(std::unique_ptr<detector> det,
                                       const transport_block_format& format,
                                       const turbo_decoder_config& decoder,
                                       const iterative_receiver_config& config,
                                       backend requested)
    : m_detector(std::move(det)),
      m_decoder(format, decoder, requested),
      m_config((config.validate(), config)),
      m_problems_per_block(whole_problems(*m_detector, format))
{
    if (!m_detector->capabilities().accepts_priors)
        throw std::invalid_argument("mimo_gpu::iterative_receiver: detector '" +
                                    m_detector->name() +
                                    "' takes no a-priori LLRs (families that do: "
                                    "those with capabilities().accepts_priors)");
}

void iterative_receiver::set_outer_iterations(int outer_iterations)
{
    iterative_receiver_config c = m_config;
    c.outer_iterations = outer_iterations;
    c.validate();
    m_config = c;
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
    const transport_block_format& f = m_decoder.format();
    const size_t G = size_t(f.G), A = size_t(f.A);
    m_llr.resize(count * G);
    m_priors.assign(count * G, 0.0f);
    m_bits.resize(count * A);
    std::vector<idd_result> results(count);
    detector_input pass = in;
    for (int it = 1; it <= m_config.outer_iterations; ++it) {
        pass.priors = it == 1 ? nullptr : m_priors.data();
        m_detector->detect(pass, m_llr.data());
        const bool last = it == m_config.outer_iterations;
        const auto decoded = m_decoder.decode(
            m_llr.data(), count, m_bits.data(), last ? nullptr : m_priors.data());
        bool all_ok = true;
        for (size_t t = 0; t < count; ++t) {
            idd_result& r = results[t];
            if (r.outer_iterations > 0 && r.decoded.crc_ok)
                continue; // passed earlier: its bits stand
            r.decoded = decoded[t];
            r.outer_iterations = it;
            std::copy_n(m_bits.begin() + t * A, A, a + t * A);
            all_ok &= decoded[t].crc_ok;
        }
        if (all_ok)
            break;
    }
    return results;
}

} // namespace mimo_gpu
