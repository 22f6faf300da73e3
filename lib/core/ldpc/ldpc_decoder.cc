// Layered LDPC decoding: the decoder (checks, engine choice) and its CPU
// engine. The base graph's rows are the layers; within a layer the Zc lifted
// checks touch distinct variables, so they are independent.
#include "../runtime/engine_choice.h"
#include "ldpc_base_graph.h"
#include "ldpc_engine.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace mimo_gpu {

ldpc_algorithm ldpc_algorithm_from_string(const std::string& name)
{
    for (ldpc_algorithm a : { ldpc_algorithm::offset_min_sum,
                              ldpc_algorithm::normalized_min_sum,
                              ldpc_algorithm::sum_product })
        if (name == to_string(a))
            return a;
    throw std::invalid_argument(
        "mimo_gpu: LDPC decoder algorithm must be offset-min-sum, "
        "normalized-min-sum or sum-product, got '" +
        name + "'");
}

std::string to_string(ldpc_algorithm algorithm)
{
    switch (algorithm) {
    case ldpc_algorithm::offset_min_sum:
        return "offset-min-sum";
    case ldpc_algorithm::normalized_min_sum:
        return "normalized-min-sum";
    default:
        return "sum-product";
    }
}

void ldpc_decoder_config::validate() const
{
    if (!(scale > 0.0f && scale <= 1.0f))
        throw std::invalid_argument(
            "mimo_gpu: LDPC decoder scale must be in (0, 1], got " +
            std::to_string(scale));
    if (!(offset >= 0.0f && offset < detail::k_ldpc_llr_limit))
        throw std::invalid_argument("mimo_gpu: LDPC decoder offset must be >= 0, got " +
                                    std::to_string(offset));
    if (iterations < 1 || iterations > 100)
        throw std::invalid_argument(
            "mimo_gpu: LDPC decoder iterations must be 1..100, got " +
            std::to_string(iterations));
}

namespace detail {

ldpc_layers ldpc_layers::of(const ldpc_code& code)
{
    ldpc_layers l;
    l.row_start.assign(size_t(code.rows()) + 1, 0);
    for (const ldpc_edge& e : ldpc_edges(code)) { // row by row
        ++l.row_start[size_t(e.row) + 1];
        l.column.push_back(e.column);
        l.shift.push_back(e.shift);
    }
    for (int r = 0; r < code.rows(); ++r)
        l.row_start[size_t(r) + 1] += l.row_start[size_t(r)];
    return l;
}

namespace {

class cpu_ldpc_engine final : public ldpc_engine
{
public:
    cpu_ldpc_engine(const ldpc_code& code, const ldpc_decoder_config& config)
        : m_code(code), m_config(config), m_layers(ldpc_layers::of(code))
    {
    }
    backend kind() const override { return backend::cpu; }

    void decode(const float* llr,
                size_t count,
                uint8_t* bits,
                float* app,
                ldpc_block_result* results) override
    {
        const int Zc = m_code.Zc, n = m_code.codeword_bits(), K = m_code.K();
        const bool sum_product = m_config.algorithm == ldpc_algorithm::sum_product;
        const std::vector<int>&start = m_layers.row_start, &col = m_layers.column,
              &shift = m_layers.shift;
        std::vector<float> L(static_cast<size_t>(n)), R(col.size() * size_t(Zc));
        float q[k_ldpc_max_row_degree];
        for (size_t b = 0; b < count; ++b) {
            const float* in = llr + b * size_t(n);
            for (int v = 0; v < n; ++v)
                L[size_t(v)] = ldpc_clamp(in[v]);
            std::fill(R.begin(), R.end(), 0.0f);
            ldpc_block_result& res = results[b];
            for (int it = 1; it <= m_config.iterations; ++it) {
                for (int r = 0; r < m_code.rows(); ++r) {
                    const int first = start[size_t(r)],
                              degree = start[size_t(r) + 1] - first;
                    for (int z = 0; z < Zc; ++z) {
                        ldpc_check check;
                        for (int k = 0; k < degree; ++k) {
                            const int e = first + k;
                            const int v =
                                col[size_t(e)] * Zc + (z + shift[size_t(e)]) % Zc;
                            q[k] = L[size_t(v)] - R[size_t(e) * Zc + z];
                            check.add(q[k], k, sum_product);
                        }
                        for (int k = 0; k < degree; ++k) {
                            const int e = first + k;
                            const float message = check.message(q[k], k, m_config);
                            R[size_t(e) * Zc + z] = message;
                            const int v =
                                col[size_t(e)] * Zc + (z + shift[size_t(e)]) % Zc;
                            L[size_t(v)] = ldpc_clamp(q[k] + message);
                        }
                    }
                }
                res.iterations = it;
                res.parity_ok = parity_holds(L);
                if (res.parity_ok && m_config.early_termination)
                    break;
            }
            for (int v = 0; v < K; ++v)
                bits[b * size_t(K) + size_t(v)] = L[size_t(v)] < 0.0f;
            if (app)
                std::copy(L.begin(), L.end(), app + b * size_t(n));
        }
    }

private:
    /// Whether the hard decisions of L satisfy every lifted check (as the
    /// CUDA kernel checks them).
    bool parity_holds(const std::vector<float>& L) const
    {
        const int Zc = m_code.Zc;
        for (int r = 0; r < m_code.rows(); ++r)
            for (int z = 0; z < Zc; ++z) {
                bool parity = false;
                for (int e = m_layers.row_start[size_t(r)];
                     e < m_layers.row_start[size_t(r) + 1];
                     ++e)
                    parity ^= L[size_t(m_layers.column[size_t(e)] * Zc +
                                       (z + m_layers.shift[size_t(e)]) % Zc)] < 0.0f;
                if (parity)
                    return false;
            }
        return true;
    }

    ldpc_code m_code;
    ldpc_decoder_config m_config;
    ldpc_layers m_layers;
};

} // namespace

std::unique_ptr<ldpc_engine> make_cpu_ldpc_engine(const ldpc_code& code,
                                                  const ldpc_decoder_config& config)
{
    return std::make_unique<cpu_ldpc_engine>(code, config);
}

} // namespace detail

ldpc_decoder::ldpc_decoder(const ldpc_code& code,
                           const ldpc_decoder_config& config,
                           backend requested)
    : m_code(code), m_config(config)
{
    code.validate();
    config.validate();
    m_engine = detail::choose_engine(
        requested,
        [&] { return detail::make_cpu_ldpc_engine(code, config); },
        [&] { return detail::make_cuda_ldpc_engine(code, config); });
}

ldpc_decoder::~ldpc_decoder() = default;
ldpc_decoder::ldpc_decoder(ldpc_decoder&&) noexcept = default;
ldpc_decoder& ldpc_decoder::operator=(ldpc_decoder&&) noexcept = default;

backend ldpc_decoder::active_backend() const { return m_engine->kind(); }

std::vector<ldpc_block_result>
ldpc_decoder::decode(const float* llr, size_t count, uint8_t* bits, float* app) const
{
    if (count == 0)
        return {};
    if (!llr || !bits)
        throw std::invalid_argument("mimo_gpu: LDPC decoder: null buffer");
    const size_t n = size_t(m_code.codeword_bits());
    for (size_t b = 0; b < count; ++b)
        for (size_t v = 0; v < n; ++v)
            if (!std::isfinite(llr[b * n + v]))
                throw std::invalid_argument("mimo_gpu: LDPC decoder: code block " +
                                            std::to_string(b) + " has a non-finite LLR");
    std::vector<ldpc_block_result> results(count);
    m_engine->decode(llr, count, bits, app, results.data());
    return results;
}

} // namespace mimo_gpu
