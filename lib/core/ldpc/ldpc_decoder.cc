// Layered LDPC decoding on the CPU (normalized and offset min-sum, and the
// exact sum-product rule): the base graph's rows are the layers; within a
// layer the Zc lifted checks are independent.
#include "ldpc_base_graph.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace mimo_gpu {

namespace {

/// Messages and a-posteriori LLRs are kept within this bound: a saturated
/// input (a known filler bit) stays finite through any sum.
constexpr float k_ldpc_llr_limit = 1e6f;

float clamp_llr(float v)
{
    return v > k_ldpc_llr_limit ? k_ldpc_llr_limit
                                : (v < -k_ldpc_llr_limit ? -k_ldpc_llr_limit : v);
}

/// phi(x) = -ln tanh(x / 2), its own inverse on (0, inf); sum-product's
/// magnitude is phi(sum phi(|Q|)). Bounded so that phi(0) stays finite.
float phi(float x)
{
    x = std::max(x, 1e-7f);
    if (x > 30.0f)
        return 2.0f * std::exp(-x); // -ln tanh(x/2) ~ 2 e^-x
    return -std::log(std::tanh(0.5f * x));
}

} // namespace

void ldpc_decoder_config::validate() const
{
    if (!(scale > 0.0f && scale <= 1.0f))
        throw std::invalid_argument(
            "mimo_gpu: LDPC decoder scale must be in (0, 1], got " +
            std::to_string(scale));
    if (!(offset >= 0.0f && offset < k_ldpc_llr_limit))
        throw std::invalid_argument("mimo_gpu: LDPC decoder offset must be >= 0, got " +
                                    std::to_string(offset));
    if (iterations < 1 || iterations > 100)
        throw std::invalid_argument(
            "mimo_gpu: LDPC decoder iterations must be 1..100, got " +
            std::to_string(iterations));
}

ldpc_decoder::ldpc_decoder(const ldpc_code& code, const ldpc_decoder_config& config)
    : m_code(code), m_config(config)
{
    config.validate();
    const std::vector<detail::ldpc_edge> edges = detail::ldpc_edges(code); // row by row
    m_row_start.assign(size_t(code.rows()) + 1, 0);
    for (const auto& e : edges) {
        ++m_row_start[size_t(e.row) + 1];
        m_column.push_back(e.column);
        m_shift.push_back(e.shift);
    }
    for (int r = 0; r < code.rows(); ++r)
        m_row_start[size_t(r) + 1] += m_row_start[size_t(r)];
}

std::vector<ldpc_block_result>
ldpc_decoder::decode(const float* llr, size_t count, uint8_t* bits, float* app) const
{
    const int Zc = m_code.Zc, n = m_code.codeword_bits(), K = m_code.K();
    const int rows = m_code.rows();
    const size_t edges = m_column.size();
    std::vector<ldpc_block_result> results(count);
    std::vector<float> L(static_cast<size_t>(n)), R(edges * size_t(Zc)), Q;
    std::vector<uint8_t> hard(static_cast<size_t>(n));
    for (size_t b = 0; b < count; ++b) {
        const float* in = llr + b * size_t(n);
        for (int v = 0; v < n; ++v) {
            if (!std::isfinite(in[v]))
                throw std::invalid_argument("mimo_gpu: LDPC decoder: code block " +
                                            std::to_string(b) + " has a non-finite LLR");
            L[size_t(v)] = clamp_llr(in[v]);
        }
        std::fill(R.begin(), R.end(), 0.0f);
        ldpc_block_result& res = results[b];
        for (int it = 1; it <= m_config.iterations; ++it) {
            for (int r = 0; r < rows; ++r) {
                const int first = m_row_start[size_t(r)],
                          degree = m_row_start[size_t(r) + 1] - first;
                Q.resize(size_t(degree));
                for (int z = 0; z < Zc; ++z) {
                    // Variable-to-check: the posterior less this check's last message.
                    float min1 = std::numeric_limits<float>::infinity(), min2 = min1;
                    float phi_sum = 0.0f;
                    int argmin = -1;
                    bool negative = false;
                    for (int k = 0; k < degree; ++k) {
                        const int e = first + k;
                        const int v =
                            m_column[size_t(e)] * Zc + (z + m_shift[size_t(e)]) % Zc;
                        const float q = L[size_t(v)] - R[size_t(e) * Zc + z];
                        Q[size_t(k)] = q;
                        const float a = std::fabs(q);
                        negative ^= q < 0.0f;
                        if (a < min1) {
                            min2 = min1;
                            min1 = a;
                            argmin = k;
                        } else if (a < min2) {
                            min2 = a;
                        }
                        if (m_config.algorithm == ldpc_algorithm::sum_product)
                            phi_sum += phi(a);
                    }
                    // Check-to-variable, then the posterior with the new message.
                    for (int k = 0; k < degree; ++k) {
                        const int e = first + k;
                        const float q = Q[size_t(k)];
                        float magnitude;
                        switch (m_config.algorithm) {
                        case ldpc_algorithm::normalized_min_sum:
                            magnitude = m_config.scale * (k == argmin ? min2 : min1);
                            break;
                        case ldpc_algorithm::offset_min_sum:
                            magnitude = std::max(
                                (k == argmin ? min2 : min1) - m_config.offset, 0.0f);
                            break;
                        default:
                            magnitude = phi(std::max(phi_sum - phi(std::fabs(q)), 0.0f));
                        }
                        const bool sign = negative ^ (q < 0.0f); // the others' sign
                        const float message = clamp_llr(sign ? -magnitude : magnitude);
                        R[size_t(e) * Zc + z] = message;
                        const int v =
                            m_column[size_t(e)] * Zc + (z + m_shift[size_t(e)]) % Zc;
                        L[size_t(v)] = clamp_llr(q + message);
                    }
                }
            }
            res.iterations = it;
            for (int v = 0; v < n; ++v)
                hard[size_t(v)] = L[size_t(v)] < 0.0f;
            res.parity_ok = ldpc_syndrome_weight(m_code, hard.data()) == 0;
            if (res.parity_ok && m_config.early_termination)
                break;
        }
        std::copy_n(hard.begin(), K, bits + b * size_t(K));
        if (app)
            std::copy(L.begin(), L.end(), app + b * size_t(n));
    }
    return results;
}

} // namespace mimo_gpu
