// The 5G NR transport-block chain around LDPC: 38.212 7.2.1 (transport block
// CRC), 7.2.2 (base graph), 5.2.2 (segmentation), 5.4.2 (rate matching).
#include <mimo_gpu/lte_turbo_code.h> // the CRCs: 38.212 5.1 has the same polynomials
#include <mimo_gpu/nr_transport_block.h>

#include "../turbo/dematch_gather.h" // bounded_copy, shared with the turbo chain
#include "ldpc_engine.h"
#include "nr_transport_block_device.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace mimo_gpu {

namespace {


/// Far above any 38.214 transport block size; keeps every count within int.
constexpr int k_largest_A = 1 << 21;

[[noreturn]] void bad(const std::string& what)
{
    throw std::invalid_argument("mimo_gpu: NR transport block: " + what);
}

/// One rate matcher per code block of a validated format.
std::vector<nr_rate_matcher> rate_matchers(const nr_transport_block_format& f,
                                           const nr_segmentation& s)
{
    std::vector<nr_rate_matcher> m;
    for (int E : f.rate_matched_sizes())
        m.emplace_back(s, E, f.Qm);
    return m;
}

int smallest_lifting_size(int Kb, int K_prime)
{
    for (int Z : ldpc_lifting_sizes())
        if (Kb * Z >= K_prime)
            return Z;
    bad("no lifting size holds K' = " + std::to_string(K_prime) + " bits");
}

} // namespace

nr_segmentation nr_transport_block_format::segmentation() const
{
    if (A < 1 || A > k_largest_A)
        bad("A = " + std::to_string(A) + " (expected 1.." + std::to_string(k_largest_A) +
            ")");
    if (G < 1)
        bad("G = " + std::to_string(G) + " (expected >= 1)");
    if (base_graph < 0 || base_graph > 2)
        bad("base_graph = " + std::to_string(base_graph) + " (0: chosen, or 1, 2)");
    if (!(code_rate >= 0.0 && code_rate <= 1.0))
        bad("code_rate = " + std::to_string(code_rate) + " (0: A / G, or in (0, 1])");
    nr_segmentation s;
    s.A = A;
    s.tb_crc = A > 3824 ? 24 : 16; // 7.2.1
    s.B = A + s.tb_crc;
    const double R = code_rate > 0.0 ? code_rate : double(A) / double(G);
    // 7.2.2: BG2 for small blocks or low rates.
    s.base_graph = base_graph != 0                                       ? base_graph
                   : (A <= 292 || (A <= 3824 && R <= 0.67) || R <= 0.25) ? 2
                                                                         : 1;
    // 5.2.2
    const int Kcb = s.base_graph == 1 ? 8448 : 3840;
    int B_prime = s.B;
    if (s.B > Kcb) {
        s.cb_crc = 24;
        s.C = (s.B + (Kcb - s.cb_crc) - 1) / (Kcb - s.cb_crc);
        B_prime = s.B + s.C * s.cb_crc;
    }
    if (B_prime % s.C != 0)
        bad("A = " + std::to_string(A) + " makes B' = " + std::to_string(B_prime) +
            " bits over " + std::to_string(s.C) +
            " code blocks, not a whole number each (not a 38.214 transport block size)");
    s.K_prime = B_prime / s.C;
    s.Kb = s.base_graph == 1 ? 22 : s.B > 640 ? 10 : s.B > 560 ? 9 : s.B > 192 ? 8 : 6;
    s.Zc = smallest_lifting_size(s.Kb, s.K_prime);
    s.K = (s.base_graph == 1 ? 22 : 10) * s.Zc;
    s.F = s.K - s.K_prime;
    s.N = (s.base_graph == 1 ? 66 : 50) * s.Zc;
    return s;
}

void nr_transport_block_format::validate() const
{
    if (Qm != 1 && Qm != 2 && Qm != 4 && Qm != 6 && Qm != 8 && Qm != 10)
        bad("Qm = " + std::to_string(Qm) + " (expected 1, 2, 4, 6, 8 or 10)");
    if (NL < 1 || NL > 4)
        bad("NL = " + std::to_string(NL) + " layers (expected 1..4)");
    if (rv < 0 || rv > 3)
        bad("rv = " + std::to_string(rv) + " (expected 0..3)");
    const nr_segmentation s = segmentation();
    if (G % (NL * Qm) != 0)
        bad("G = " + std::to_string(G) +
            " is not a multiple of NL * Qm = " + std::to_string(NL * Qm));
    if (G / (NL * Qm) < s.C)
        bad("G = " + std::to_string(G) + " gives fewer than one symbol to each of " +
            std::to_string(s.C) + " code blocks");
}

std::vector<int> nr_transport_block_format::rate_matched_sizes() const
{
    validate();
    const nr_segmentation s = segmentation();
    const int unit = NL * Qm, G_prime = G / unit;
    std::vector<int> E(size_t(s.C));
    for (int r = 0; r < s.C; ++r) // 5.4.2.1, every code block scheduled
        E[size_t(r)] =
            unit *
            (r <= s.C - (G_prime % s.C) - 1 ? G_prime / s.C : (G_prime + s.C - 1) / s.C);
    return E;
}

nr_rate_matcher::nr_rate_matcher(const nr_segmentation& seg, int E, int Qm)
    : m_seg(seg),
      m_E(E),
      m_Qm(Qm),
      m_filler_begin(seg.K_prime - 2 * seg.Zc),
      m_filler_end(seg.K - 2 * seg.Zc)
{
    if (E < 1 || Qm < 1 || E % Qm != 0)
        bad("E = " + std::to_string(E) +
            " is not a positive multiple of Qm = " + std::to_string(Qm));
    if (m_filler_end - m_filler_begin >= seg.N)
        bad("a code block of filler only");
    for (int rv = 0; rv < 4; ++rv)
        m_positions[rv] = bit_selection(rv);
}

const std::vector<int>& nr_rate_matcher::positions(int rv) const
{
    if (rv < 0 || rv > 3)
        bad("rv = " + std::to_string(rv) + " (expected 0..3)");
    return m_positions[rv];
}

int nr_rate_matcher::k0(int rv) const
{
    if (rv < 0 || rv > 3)
        bad("rv = " + std::to_string(rv) + " (expected 0..3)");
    // Table 5.4.2.1-2 with N_cb = N (no limited buffer).
    static const int numerator[2][4] = { { 0, 17, 33, 56 }, { 0, 13, 25, 43 } };
    const int bg = m_seg.base_graph, Zc = m_seg.Zc, Ncb = m_seg.N;
    const int denominator = (bg == 1 ? 66 : 50) * Zc;
    return int((int64_t(numerator[bg - 1][rv]) * Ncb / denominator) * Zc);
}

std::vector<int> nr_rate_matcher::bit_selection(int rv) const
{
    const int Ncb = m_seg.N;
    std::vector<int> e(static_cast<size_t>(m_E));
    const int start = k0(rv);
    for (int k = 0, j = 0; k < m_E; ++j) { // 5.4.2.1 bit selection
        const int at = (start + j) % Ncb;
        if (!is_filler(at))
            e[size_t(k++)] = at;
    }
    // 5.4.2.2 bit interleaving: f_{i + j Qm} = e_{i E / Qm + j}.
    std::vector<int> f(static_cast<size_t>(m_E));
    const int rows = m_E / m_Qm;
    for (int j = 0; j < rows; ++j)
        for (int i = 0; i < m_Qm; ++i)
            f[size_t(i + j * m_Qm)] = e[size_t(i * rows + j)];
    return f;
}

void nr_rate_matcher::match(const uint8_t* d, int rv, uint8_t* f) const
{
    const std::vector<int>& from = positions(rv);
    for (int k = 0; k < m_E; ++k)
        f[k] = d[from[size_t(k)]];
}

void nr_rate_matcher::dematch(const float* f_llr, int rv, float* soft) const
{
    const std::vector<int>& to = positions(rv);
    for (int k = 0; k < m_E; ++k) // bounded: copies of huge LLRs never add to Inf
        soft[to[size_t(k)]] += detail::bounded_copy(f_llr[k]);
}

nr_transport_block_encoder::nr_transport_block_encoder(
    const nr_transport_block_format& format)
    : m_format((format.validate(), format)),
      m_seg(format.segmentation()),
      m_matchers(rate_matchers(format, m_seg)),
      m_encoder(m_seg.code())
{
}

std::vector<uint8_t> nr_transport_block_encoder::code_blocks(const uint8_t* a) const
{
    const nr_segmentation& s = m_seg;
    std::vector<uint8_t> b(size_t(s.B));
    crc_attach(
        s.tb_crc == 24 ? crc_type::crc24a : crc_type::crc16, a, size_t(s.A), b.data());
    std::vector<uint8_t> c(size_t(s.C) * s.K, 0); // filler bits 0 for encoding
    const int data = s.K_prime - s.cb_crc;
    for (int r = 0; r < s.C; ++r) {
        uint8_t* block = c.data() + size_t(r) * s.K;
        std::copy_n(b.begin() + size_t(r) * data, data, block);
        if (s.cb_crc)
            crc_attach(crc_type::crc24b, block, size_t(data), block);
    }
    return c;
}

void nr_transport_block_encoder::encode(const uint8_t* a, uint8_t* g) const
{
    const std::vector<uint8_t> c = code_blocks(a);
    std::vector<uint8_t> d(size_t(m_seg.N));
    size_t offset = 0;
    for (int r = 0; r < m_seg.C; ++r) {
        m_encoder.encode(c.data() + size_t(r) * m_seg.K, d.data());
        const nr_rate_matcher& rm = m_matchers[size_t(r)];
        rm.match(d.data(), m_format.rv, g + offset);
        offset += size_t(rm.E());
    }
}

nr_transport_block_decoder::nr_transport_block_decoder(
    const nr_transport_block_format& format,
    const ldpc_decoder_config& decoder,
    backend requested)
    : m_format((format.validate(), format)),
      m_seg(format.segmentation()),
      m_matchers(rate_matchers(format, m_seg)),
      m_decoder(m_seg.code(), decoder, requested)
{
}

nr_transport_block_decoder::~nr_transport_block_decoder() = default;
nr_transport_block_decoder::nr_transport_block_decoder(
    nr_transport_block_decoder&&) noexcept = default;
nr_transport_block_decoder&
nr_transport_block_decoder::operator=(nr_transport_block_decoder&&) noexcept = default;

detail::nr_transport_block_device& nr_transport_block_decoder::device()
{
    if (active_backend() != backend::cuda)
        throw std::logic_error(
            "mimo_gpu: NR transport block: decode_device needs the CUDA backend");
#ifdef MIMO_GPU_HAVE_CUDA
    if (!m_device)
        m_device = detail::make_nr_transport_block_device(m_format, m_matchers);
#endif
    if (!m_device) // unreachable: a build without CUDA has no CUDA backend
        throw std::logic_error("mimo_gpu: NR transport block: built without CUDA");
    return *m_device;
}

void nr_transport_block_decoder::decode_device(const float* d_llr,
                                               size_t count,
                                               uint8_t* d_a,
                                               cuda_stream_t stream,
                                               float* d_soft,
                                               float* d_extrinsic)
{
    detail::nr_transport_block_device& d = device();
    if (count > 0 && (!d_llr || !d_a)) // count 0: nothing, and no results after it
        bad("decode_device: null buffer");
    d.decode(d_llr,
             nullptr,
             1.0f,
             count,
             m_format.rv,
             d_a,
             d_soft,
             m_decoder,
             stream,
             d_extrinsic);
}

void nr_transport_block_decoder::decode_device(const int8_t* d_llr,
                                               float scale,
                                               size_t count,
                                               uint8_t* d_a,
                                               cuda_stream_t stream,
                                               float* d_soft,
                                               float* d_extrinsic)
{
    detail::nr_transport_block_device& d = device();
    if (!(std::isfinite(scale * 127.0f) && scale > 0.0f))
        bad("decode_device: int8 scale must be > 0 and 127 * scale finite, got " +
            std::to_string(scale));
    if (count > 0 && (!d_llr || !d_a))
        bad("decode_device: null buffer");
    d.decode(nullptr,
             d_llr,
             scale,
             count,
             m_format.rv,
             d_a,
             d_soft,
             m_decoder,
             stream,
             d_extrinsic);
}

std::vector<transport_block_result>
nr_transport_block_decoder::device_results(cuda_stream_t stream)
{
    return device().results(m_decoder, stream);
}

void nr_transport_block_decoder::set_redundancy_version(int rv)
{
    if (rv < 0 || rv > 3)
        bad("rv = " + std::to_string(rv) + " (expected 0..3)");
    m_format.rv = rv;
}

std::vector<transport_block_result> nr_transport_block_decoder::decode(
    const float* llr, size_t count, uint8_t* a, float* soft, float* extrinsic)
{
    if (count == 0)
        return {};
    if (!llr || !a)
        bad("decode: null buffer");
    const nr_segmentation& s = m_seg;
    const size_t G = size_t(m_format.G), per_tb = soft_buffer_size();
    for (size_t t = 0; t < count; ++t)
        for (size_t i = 0; i < G; ++i)
            if (!std::isfinite(llr[t * G + i]))
                bad("decode: transport block " + std::to_string(t) +
                    " has a non-finite LLR");
    // Code blocks of all transport blocks in one batch: the full codeword's
    // LLRs, 2 Zc punctured (0), then the soft buffer, filler bits known 0.
    // The transmissions are added into copies of the caller's soft buffers,
    // which take them only once every block's sums are finite (a caller's
    // buffer holding huge values could overflow): a refused batch changes nothing.
    const int n = s.code().codeword_bits();
    m_codeword.assign(count * size_t(s.C) * size_t(n), 0.0f);
    m_soft.resize(count * per_tb);
    if (soft)
        std::copy_n(soft, count * per_tb, m_soft.begin());
    else
        std::fill(m_soft.begin(), m_soft.end(), 0.0f);
    std::vector<bool> informed(count * size_t(s.C));
    for (size_t t = 0; t < count; ++t) {
        float* buffers = m_soft.data() + t * per_tb;
        size_t offset = t * G;
        for (int r = 0; r < s.C; ++r) {
            const nr_rate_matcher& rm = m_matchers[size_t(r)];
            float* buffer = buffers + size_t(r) * size_t(s.N);
            rm.dematch(llr + offset, m_format.rv, buffer);
            offset += size_t(rm.E());
            float* x = m_codeword.data() + (t * size_t(s.C) + size_t(r)) * size_t(n);
            int nonzero = 0;
            for (int k = 0; k < s.N; ++k) {
                const bool filler = rm.is_filler(k);
                if (!filler && !std::isfinite(buffer[k]))
                    bad("decode: transport block " + std::to_string(t) +
                        ": its soft buffer plus this transmission is not finite");
                x[2 * s.Zc + k] = filler ? detail::k_ldpc_known_bit_llr : buffer[k];
                nonzero += !filler && buffer[k] != 0.0f;
            }
            informed[t * size_t(s.C) + size_t(r)] = nonzero >= s.K_prime;
        }
    }
    if (soft)
        std::copy(m_soft.begin(), m_soft.end(), soft);
    m_bits.resize(count * size_t(s.C) * size_t(s.K));
    if (extrinsic)
        m_app.resize(m_codeword.size());
    const std::vector<ldpc_block_result> blocks =
        m_decoder.decode(m_codeword.data(),
                         count * size_t(s.C),
                         m_bits.data(),
                         extrinsic ? m_app.data() : nullptr);
    if (extrinsic) // back to the sent positions: a-posteriori less this copy
        for (size_t t = 0; t < count; ++t) {
            size_t offset = t * G;
            for (int r = 0; r < s.C; ++r) {
                const nr_rate_matcher& rm = m_matchers[size_t(r)];
                const std::vector<int>& at = rm.positions(m_format.rv);
                const size_t k = t * size_t(s.C) + size_t(r);
                const float* app = m_app.data() + k * size_t(n) + 2 * size_t(s.Zc);
                for (int j = 0; j < rm.E(); ++j)
                    extrinsic[offset + size_t(j)] =
                        informed[k] ? detail::ldpc_clamp(app[at[size_t(j)]] -
                                                         llr[offset + size_t(j)])
                                    : 0.0f;
                offset += size_t(rm.E());
            }
        }
    // Desegmentation and the CRCs.
    std::vector<transport_block_result> results(count);
    std::vector<uint8_t> b(size_t(s.B));
    const int data = s.K_prime - s.cb_crc;
    for (size_t t = 0; t < count; ++t) {
        transport_block_result& res = results[t];
        res.code_blocks = s.C;
        // A code block is decoded only when its hard decisions form a codeword
        // (H x = 0): zero or denormal systematic LLRs leave information bits
        // at 0 that an all-zero CRC would accept on parity bits that disagree.
        bool codewords = true;
        for (int r = 0; r < s.C; ++r) {
            const size_t k = t * size_t(s.C) + size_t(r);
            const uint8_t* block = m_bits.data() + k * size_t(s.K);
            std::copy_n(block, data, b.begin() + size_t(r) * data);
            res.max_iterations = std::max(res.max_iterations, blocks[k].iterations);
            codewords &= blocks[k].parity_ok;
            if (!informed[k])
                ++res.code_blocks_no_information;
            else if (s.C > 1 && blocks[k].parity_ok &&
                     crc_check(crc_type::crc24b, block, size_t(s.K_prime)))
                ++res.code_blocks_crc_ok;
        }
        const bool tb_ok = crc_check(
            s.tb_crc == 24 ? crc_type::crc24a : crc_type::crc16, b.data(), b.size());
        res.crc_ok = tb_ok && codewords && res.code_blocks_no_information == 0 &&
                     (s.C == 1 || res.code_blocks_crc_ok == s.C);
        if (s.C == 1 && res.crc_ok)
            res.code_blocks_crc_ok = 1;
        std::copy_n(b.begin(), s.A, a + t * size_t(s.A));
    }
    return results;
}

} // namespace mimo_gpu
