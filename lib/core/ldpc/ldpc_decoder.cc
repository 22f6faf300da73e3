// Layered LDPC decoding: the decoder (checks, engine choice) and its CPU
// engine. The base graph's rows are the layers; within a layer the Zc lifted
// checks touch distinct variables, so they are independent.
#include "../runtime/engine_choice.h"
#include "../runtime/parallel_for.h"
#include "ldpc_base_graph.h"
#include "ldpc_engine.h"
#include "ldpc_half.h"
#ifdef MIMO_GPU_LDPC_AVX2
#include "ldpc_min_sum_avx2.h"
#endif

#include <algorithm>
#include <cmath>
#include <cstdlib>
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
    if (!(offset >= 0.0f && offset <= detail::k_ldpc_half_limit))
        throw std::invalid_argument(
            "mimo_gpu: LDPC decoder offset must be in [0, 8192], got " +
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

/// One code block at a time on one thread, with its own scratch.
class cpu_ldpc_worker
{
public:
    cpu_ldpc_worker(const ldpc_code& code,
                    const ldpc_decoder_config& config,
                    const ldpc_layers& layers)
        : m_code(code),
          m_config(config),
          m_layers(layers),
          m_L(size_t(code.codeword_bits())),
          m_R(layers.column.size() * size_t(code.Zc))
    {
    }

    /// Block b of the batch.
    void
    decode(const float* llr, size_t b, uint8_t* bits, float* app, ldpc_block_result& res)
    {
        const size_t n = size_t(m_code.codeword_bits()), K = size_t(m_code.K());
        const float* in = llr + b * n;
        const int rows =
            ldpc_active_rows(last_column(in), m_code.info_columns(), m_code.rows());
        if (m_config.algorithm == ldpc_algorithm::sum_product)
            decode_float(in, rows, res);
        else
            decode_half(in, rows, res);
        for (size_t v = 0; v < K; ++v)
            bits[b * K + v] = m_L[v] < 0.0f;
        if (app)
            std::copy(m_L.begin(), m_L.end(), app + b * n);
    }

private:
    /// The last base graph column with a non-zero LLR, -1 for none.
    int last_column(const float* in) const
    {
        for (int v = m_code.codeword_bits() - 1; v >= 0; --v)
            if (in[v] != 0.0f)
                return v / m_code.Zc;
        return -1;
    }

    /// The variable of edge e for lifted check z.
    int variable(int e, int z) const
    {
        const int v = z + m_layers.shift[size_t(e)];
        return m_layers.column[size_t(e)] * m_code.Zc +
               (v >= m_code.Zc ? v - m_code.Zc : v);
    }

    /// Runs the iterations with `row(r)` updating the lifted checks of row r.
    template <class Row>
    void iterate(int rows, ldpc_block_result& res, Row row)
    {
        std::fill(m_R.begin(),
                  m_R.begin() + m_layers.row_start[size_t(rows)] * m_code.Zc,
                  0.0f);
        for (int it = 1; it <= m_config.iterations; ++it) {
            for (int r = 0; r < rows; ++r)
                row(r);
            res.iterations = it;
            if (m_config.early_termination || it == m_config.iterations) {
                res.parity_ok = parity_holds(rows);
                if (res.parity_ok && m_config.early_termination)
                    break;
            }
        }
    }

    /// Sum-product in float: ldpc_check, as the CUDA float kernel.
    void decode_float(const float* in, int rows, ldpc_block_result& res)
    {
        for (size_t v = 0; v < m_L.size(); ++v)
            m_L[v] = ldpc_clamp(in[v]);
        float q[k_ldpc_max_row_degree];
        const int Zc = m_code.Zc;
        iterate(rows, res, [&](int r) {
            for (int z = 0; z < Zc; ++z)
                check_float(r, z, q);
        });
    }

    /// Lifted check z of row r, sum-product in float.
    void check_float(int r, int z, float* q)
    {
        const int Zc = m_code.Zc;
        const int first = m_layers.row_start[size_t(r)],
                  degree = m_layers.row_start[size_t(r) + 1] - first;
        ldpc_check check;
        for (int k = 0; k < degree; ++k) {
            q[k] = m_L[size_t(variable(first + k, z))] - m_R[size_t(first + k) * Zc + z];
            check.add(q[k], k, true);
        }
        for (int k = 0; k < degree; ++k) {
            const float message = check.message(q[k], k, m_config);
            m_R[size_t(first + k) * Zc + z] = message;
            m_L[size_t(variable(first + k, z))] = ldpc_clamp(q[k] + message);
        }
    }

    /// Min-sum in half precision (ldpc_half.h), as the CUDA half2 kernel.
    void decode_half(const float* in, int rows, ldpc_block_result& res)
    {
        for (size_t v = 0; v < m_L.size(); ++v)
            m_L[v] = ldpc_half_input(in[v]);
        float q[k_ldpc_max_row_degree];
        const int Zc = m_code.Zc;
        const bool offset = m_config.algorithm == ldpc_algorithm::offset_min_sum;
        const float rule = ldpc_round_half(offset ? m_config.offset : m_config.scale);
        iterate(rows, res, [&](int r) {
            int z = 0;
#ifdef MIMO_GPU_LDPC_AVX2
            if (m_avx2) { // eight checks at a time, the rest below
                const int first = m_layers.row_start[size_t(r)];
                const ldpc_row_view view{ m_layers.column.data(),
                                          m_layers.shift.data(),
                                          first,
                                          m_layers.row_start[size_t(r) + 1] - first,
                                          Zc,
                                          offset,
                                          rule };
                ldpc_min_sum_rows_avx2(view, m_L.data(), m_R.data());
                z = Zc / 8 * 8;
            }
#endif
            for (; z < Zc; ++z)
                check_half(r, z, q);
        });
    }

    /// Lifted check z of row r, min-sum in half precision.
    void check_half(int r, int z, float* q)
    {
        const int Zc = m_code.Zc;
        const int first = m_layers.row_start[size_t(r)],
                  degree = m_layers.row_start[size_t(r) + 1] - first;
        float least = k_infinity, second = k_infinity;
        int argmin = -1;
        bool negative = false;
        for (int k = 0; k < degree; ++k) {
            q[k] = ldpc_round_half(m_L[size_t(variable(first + k, z))] -
                                   m_R[size_t(first + k) * Zc + z]);
            const float a = std::fabs(q[k]);
            if (a < least) {
                second = least;
                least = a;
                argmin = k;
            } else if (a < second) {
                second = a;
            }
            negative ^= std::signbit(q[k]);
        }
        const float to_others = ldpc_half_magnitude(least, m_config),
                    to_least = ldpc_half_magnitude(second, m_config);
        for (int k = 0; k < degree; ++k) {
            const float magnitude = k == argmin ? to_least : to_others;
            const float message = negative != std::signbit(q[k]) ? -magnitude : magnitude;
            m_R[size_t(first + k) * Zc + z] = message;
            m_L[size_t(variable(first + k, z))] =
                ldpc_half_clamp(ldpc_round_half(q[k] + message));
        }
    }

    /// Whether the hard decisions of L satisfy the lifted checks of the first
    /// `rows` layers (as the CUDA kernels check them).
    bool parity_holds(int rows) const
    {
        for (int r = 0; r < rows; ++r)
            for (int z = 0; z < m_code.Zc; ++z) {
                bool parity = false;
                for (int e = m_layers.row_start[size_t(r)];
                     e < m_layers.row_start[size_t(r) + 1];
                     ++e)
                    parity ^= m_L[size_t(variable(e, z))] < 0.0f;
                if (parity)
                    return false;
            }
        return true;
    }

    const ldpc_code& m_code;
    const ldpc_decoder_config& m_config;
    const ldpc_layers& m_layers;
    std::vector<float> m_L, m_R;
#ifdef MIMO_GPU_LDPC_AVX2
    /// AVX2 and F16C here, unless MIMO_GPU_LDPC_AVX2=0 asks for the scalar code.
    const bool m_avx2 =
        cpu_has_avx2_f16c() && !(std::getenv("MIMO_GPU_LDPC_AVX2") &&
                                 std::string(std::getenv("MIMO_GPU_LDPC_AVX2")) == "0");
#endif
};

/// Code blocks spread over the cores, a worker per chunk.
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
        parallel_for(count, 1, [&](size_t begin, size_t end) {
            cpu_ldpc_worker worker(m_code, m_config, m_layers);
            for (size_t b = begin; b < end; ++b)
                worker.decode(llr, b, bits, app, results[b]);
        });
    }

private:
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
    // The CUDA kernels check as they read (a host pass over the LLRs would
    // cost more than their copy) and report the block from device_results.
    if (m_engine->kind() == backend::cpu)
        for (size_t b = 0; b < count; ++b)
            for (size_t v = 0; v < n; ++v)
                if (!std::isfinite(llr[b * n + v]))
                    throw std::invalid_argument("mimo_gpu: LDPC decoder: code block " +
                                                std::to_string(b) +
                                                " has a non-finite LLR");
    std::vector<ldpc_block_result> results(count);
    m_engine->decode(llr, count, bits, app, results.data());
    return results;
}

void ldpc_decoder::decode_device(
    const float* d_llr, size_t count, uint8_t* d_bits, cuda_stream_t stream, float* d_app)
{
    if (count > 0 && (!d_llr || !d_bits)) // count 0: nothing, and no results after it
        throw std::invalid_argument("mimo_gpu: LDPC decoder: decode_device: null buffer");
    m_engine->decode_device(d_llr, nullptr, 1.0f, count, d_bits, d_app, stream);
}

void ldpc_decoder::decode_device(const int8_t* d_llr,
                                 float scale,
                                 size_t count,
                                 uint8_t* d_bits,
                                 cuda_stream_t stream,
                                 float* d_app)
{
    if (count > 0 && (!d_llr || !d_bits))
        throw std::invalid_argument("mimo_gpu: LDPC decoder: decode_device: null buffer");
    if (!(std::isfinite(scale * 127.0f) && scale > 0.0f))
        throw std::invalid_argument("mimo_gpu: LDPC decoder: int8 scale must be > 0 and "
                                    "127 * scale finite, got " +
                                    std::to_string(scale));
    m_engine->decode_device(nullptr, d_llr, scale, count, d_bits, d_app, stream);
}

std::vector<ldpc_block_result> ldpc_decoder::device_results(cuda_stream_t stream)
{
    return m_engine->device_results(stream);
}

} // namespace mimo_gpu
