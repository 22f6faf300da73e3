#include <mimo_gpu/turbo_decoder.h>

#include <algorithm>
#include <stdexcept>
#include <string>

namespace mimo_gpu {

namespace {

/// LLR of a filler bit: known to be 0, so certain: the largest the decoder takes.
constexpr float k_filler_llr = k_turbo_llr_limit;

turbo_decoder_config with_code_block_crc(turbo_decoder_config config,
                                         const code_block_segmentation& seg)
{
    config.early_termination = seg.C == 1 ? crc_type::crc24a : crc_type::crc24b;
    return config;
}

} // namespace

transport_block_decoder::transport_block_decoder(const transport_block_format& format,
                                                 turbo_decoder_config config,
                                                 backend requested)
    : m_format((format.validate_for_decoding(), format)),
      m_seg(format.segmentation()),
      m_E(format.rate_matched_sizes()),
      m_decoder(with_code_block_crc(config, m_seg), requested)
{
    for (int K : { m_seg.K_minus, m_seg.K_plus })
        if (K > 0 && std::none_of(m_matchers.begin(),
                                  m_matchers.end(),
                                  [&](const rate_matcher& m) { return m.K() == K; }))
            m_matchers.emplace_back(K);
}

std::vector<transport_block_result>
transport_block_decoder::decode(const float* llr, size_t count, uint8_t* a)
{
    if (count == 0)
        return {};
    if (!llr || !a)
        throw std::invalid_argument(
            "mimo_gpu::transport_block_decoder::decode: null buffer");
    const int C = m_seg.C;
    std::vector<int> K;
    K.reserve(count * C);
    for (size_t t = 0; t < count; ++t)
        K.insert(K.end(), m_seg.K.begin(), m_seg.K.end());

    // De-rate-match every code block of every transport block into one batch.
    m_block_llr.resize(turbo_decoder::input_floats(K));
    float* dst = m_block_llr.data();
    for (size_t t = 0; t < count; ++t) {
        const float* e = llr + t * size_t(m_format.G);
        for (int r = 0; r < C; ++r) {
            const int Kr = m_seg.K[r], filler = r == 0 ? m_seg.F : 0;
            const rate_matcher& rm =
                *std::find_if(m_matchers.begin(),
                              m_matchers.end(),
                              [&](const rate_matcher& m) { return m.K() == Kr; });
            rm.dematch(e, m_E[r], m_format.rv, filler, dst);
            // d0 at filler positions: known zeros
            std::fill(dst, dst + filler, k_filler_llr);
            e += m_E[r];
            dst += 3 * (Kr + 4);
        }
    }
    m_block_bits.resize(turbo_decoder::output_bits(K));
    const std::vector<turbo_block_result> blocks =
        m_decoder.decode(K, m_block_llr.data(), m_block_bits.data());

    std::vector<transport_block_result> results(count);
    std::vector<uint8_t> b(size_t(m_seg.B));
    std::vector<const uint8_t*> block_ptrs(C);
    size_t bit = 0;
    for (size_t t = 0; t < count; ++t) {
        transport_block_result& res = results[t];
        res.code_blocks = C;
        for (int r = 0; r < C; ++r) {
            const turbo_block_result& br = blocks[t * C + r];
            res.code_blocks_crc_ok += br.crc_ok ? 1 : 0;
            res.code_blocks_no_information += br.no_information ? 1 : 0;
            res.max_iterations = std::max(res.max_iterations, br.iterations);
            block_ptrs[r] = m_block_bits.data() + bit;
            bit += size_t(m_seg.K[r]);
        }
        m_seg.desegment(block_ptrs, b.data()); // the code block CRCs are counted above
        // A code block without information decodes to (mostly) zeros, which can
        // pass CRC24A with the rest: never a pass.
        res.crc_ok = res.code_blocks_no_information == 0 &&
                     crc_check(crc_type::crc24a, b.data(), size_t(m_seg.B));
        std::copy(b.begin(), b.begin() + m_format.A, a + t * size_t(m_format.A));
    }
    return results;
}

} // namespace mimo_gpu
