#include <mimo_gpu/lte_turbo_decoder.h>

#include "../runtime/parallel_for.h"
#include "dematch_gather.h"
#include "transport_block_device.h"
#include "turbo_trellis.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>

namespace mimo_gpu {

using detail::k_filler_llr;

namespace detail {

dematch_plan
make_dematch_plan(const code_block_segmentation& seg, const std::vector<int>& E, int rv)
{
    dematch_plan plan;
    // (K, filler) -> (table, period)
    std::map<std::pair<int, int>, std::pair<int32_t, int32_t>> made;
    int64_t e_offset = 0;
    for (int r = 0; r < seg.C; ++r) {
        const int K = seg.K[r], filler = r == 0 ? seg.F : 0;
        auto it = made.find({ K, filler });
        if (it == made.end()) {
            const int32_t table = int32_t(plan.tables.size());
            plan.tables.resize(plan.tables.size() + 3 * size_t(K + 4));
            const int period =
                rate_matcher(K).dematch_order(rv, filler, plan.tables.data() + table);
            it = made.emplace(std::make_pair(K, filler), std::make_pair(table, period))
                     .first;
        }
        dematch_block b;
        b.table = it->second.first;
        b.outputs = 3 * (K + 4);
        b.filler = filler;
        b.period = it->second.second;
        b.E = E[r];
        b.e_offset = e_offset;
        b.d_offset = int64_t(plan.outputs);
        plan.blocks.push_back(b);
        e_offset += E[r];
        plan.outputs += size_t(b.outputs);
    }
    return plan;
}

dematch_inverse invert_dematch_plan(const dematch_plan& plan)
{
    dematch_inverse inverse;
    std::map<int32_t, int32_t> placed; // table -> its inverse's offset
    for (const dematch_block& b : plan.blocks) {
        auto it = placed.find(b.table);
        if (it == placed.end()) {
            const int32_t offset = int32_t(inverse.inputs.size());
            inverse.inputs.resize(inverse.inputs.size() + size_t(b.period), -1);
            for (int32_t s = 0; s < b.outputs; ++s) {
                const int32_t first = plan.tables[size_t(b.table) + size_t(s)];
                if (first >= 0)
                    inverse.inputs[size_t(offset + first)] = s;
            }
            it = placed.emplace(b.table, offset).first;
        }
        inverse.offsets.push_back(it->second);
    }
    return inverse;
}

} // namespace detail

namespace {

/// The decoder configuration for this format: early termination on the code block
/// CRC, and training prefixes long enough for the rate matching's parity density.
/// A prefix finds the trellis state from the parity bits in it (the systematic
/// bits alone leave all 8 states possible): at code rate R a constituent keeps
/// about (E - K) / 2K parity bits per stage (1 at R = 1/3, 1/27 at 0.93), so
/// the prefix is made at least 4 of them long, 8 K / (E - K) stages (32 at R =
/// 0.8, ~150 at 0.93), and the window at least as long as the prefix, which
/// bounds its cost to 2 training stages per window stage. Measured on clean
/// LLRs: at rate 0.93 a fixed 64-stage prefix (W = 64) failed code blocks that
/// one window decodes in 1 iteration; this rule decoded all of them in at most
/// 4 (tests/cpp/test_turbo_decoder.cc). training = 0 keeps no prefixes at all.
turbo_decoder_config for_format(turbo_decoder_config config,
                                const code_block_segmentation& seg,
                                const std::vector<int>& E)
{
    config.early_termination = seg.C == 1 ? crc_type::crc24a : crc_type::crc24b;
    if (config.training > 0)
        for (int r = 0; r < seg.C; ++r) {
            // validate_for_decoding: E >= K - F; clamped to K by the plan
            const int parity = std::max(1, E[r] - seg.K[r]);
            const int64_t T = (int64_t(8) * seg.K[r] + parity - 1) / parity;
            config.training = std::max(config.training, int(std::min<int64_t>(T, 6144)));
        }
    config.window = std::max(config.window, config.training);
    return config;
}

} // namespace

transport_block_decoder::transport_block_decoder(const transport_block_format& format,
                                                 turbo_decoder_config config,
                                                 backend requested)
    : m_format((format.validate_for_decoding(), format)),
      m_seg(format.segmentation()),
      m_E(format.rate_matched_sizes()),
      m_decoder(for_format(config, m_seg, m_E), requested)
{
    for (int K : { m_seg.K_minus, m_seg.K_plus })
        if (K > 0 && std::none_of(m_matchers.begin(),
                                  m_matchers.end(),
                                  [&](const rate_matcher& m) { return m.K() == K; }))
            m_matchers.emplace_back(K);
}

transport_block_decoder::~transport_block_decoder() = default;
transport_block_decoder::transport_block_decoder(transport_block_decoder&&) noexcept =
    default;
transport_block_decoder&
transport_block_decoder::operator=(transport_block_decoder&&) noexcept = default;

void transport_block_decoder::set_redundancy_version(int rv)
{
    if (rv < 0 || rv > 3)
        throw std::invalid_argument(
            "mimo_gpu::transport_block_decoder: redundancy version rv = " +
            std::to_string(rv) + " (expected 0..3)");
    m_format.rv = rv;
}

void transport_block_decoder::require_cuda(const char* call) const
{
    if (active_backend() != backend::cuda)
        throw std::logic_error(std::string("mimo_gpu::transport_block_decoder::") + call +
                               " needs the CUDA backend");
}

void transport_block_decoder::require_buffers(const void* d_llr, const uint8_t* d_a)
{
    if (!d_llr || !d_a)
        throw std::invalid_argument(
            "mimo_gpu::transport_block_decoder::decode_device: null buffer");
}

transport_block_device_engine& transport_block_decoder::device_engine()
{
#ifdef MIMO_GPU_HAVE_CUDA
    if (!m_device)
        m_device = detail::make_transport_block_device_engine(m_format);
#endif
    if (!m_device) // unreachable: a build without CUDA has no CUDA backend
        throw std::logic_error("mimo_gpu::transport_block_decoder: built without CUDA");
    return *m_device;
}

void transport_block_decoder::decode_device(const float* d_llr,
                                            size_t count,
                                            uint8_t* d_a,
                                            cuda_stream_t stream,
                                            float* d_extrinsic)
{
    require_cuda("decode_device");
    if (count > 0) // count 0 does nothing, but is the last call device_results reports
        require_buffers(d_llr, d_a);
    device_engine().decode(
        d_llr, count, m_format.rv, d_a, m_decoder, stream, d_extrinsic);
}

void transport_block_decoder::decode_device(const int8_t* d_llr,
                                            float scale,
                                            size_t count,
                                            uint8_t* d_a,
                                            cuda_stream_t stream,
                                            float* d_extrinsic)
{
    require_cuda("decode_device");
    if (!(std::isfinite(scale) && scale > 0.0f))
        throw std::invalid_argument(
            "mimo_gpu::transport_block_decoder::decode_device: int8 scale must be finite "
            "and > 0, got " +
            std::to_string(scale));
    if (count > 0)
        require_buffers(d_llr, d_a);
    device_engine().decode(
        d_llr, scale, count, m_format.rv, d_a, m_decoder, stream, d_extrinsic);
}

std::vector<transport_block_result>
transport_block_decoder::device_results(cuda_stream_t stream)
{
    require_cuda("device_results");
    return device_engine().results(m_decoder, stream);
}

namespace detail {
/// A transport block's de-rate-matching plan (make_dematch_plan) and its
/// inverse, for the extrinsic LLRs of the transmitted bits.
struct extrinsic_positions {
    dematch_plan plan;
    dematch_inverse inverse;
};
} // namespace detail

const detail::extrinsic_positions& transport_block_decoder::extrinsic_positions()
{
    auto& made = m_extrinsic_positions[m_format.rv];
    if (!made) {
        made = std::make_unique<detail::extrinsic_positions>();
        made->plan = detail::make_dematch_plan(m_seg, m_E, m_format.rv);
        made->inverse = detail::invert_dematch_plan(made->plan);
    }
    return *made;
}

std::vector<transport_block_result> transport_block_decoder::decode(const float* llr,
                                                                    size_t count,
                                                                    uint8_t* a,
                                                                    float* extrinsic)
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
    m_block_llr.resize(lte_turbo_decoder::input_floats(K));
    // Where each code block's LLRs start, in the transport block and in the batch.
    std::vector<size_t> e_offset(static_cast<size_t>(C), 0),
        d_offset(static_cast<size_t>(C), 0);
    for (int r = 1; r < C; ++r) {
        e_offset[r] = e_offset[r - 1] + size_t(m_E[r - 1]);
        d_offset[r] = d_offset[r - 1] + 3 * size_t(m_seg.K[r - 1] + 4);
    }
    const size_t d_per_tb = d_offset[C - 1] + 3 * size_t(m_seg.K[C - 1] + 4);
    // Code blocks de-rate-matched on the cores (the CPU chain's decoder waited on
    // one thread doing a frame's blocks one after another).
    detail::parallel_for(count * size_t(C), 4, [&](size_t begin, size_t end) {
        for (size_t k = begin; k < end; ++k) {
            const size_t t = k / size_t(C);
            const int r = int(k % size_t(C));
            const int Kr = m_seg.K[r], filler = r == 0 ? m_seg.F : 0;
            const rate_matcher& rm =
                *std::find_if(m_matchers.begin(),
                              m_matchers.end(),
                              [&](const rate_matcher& m) { return m.K() == Kr; });
            float* dst = m_block_llr.data() + t * d_per_tb + d_offset[r];
            rm.dematch(llr + t * size_t(m_format.G) + e_offset[r],
                       m_E[r],
                       m_format.rv,
                       filler,
                       dst);
            // d0 at filler positions: known zeros
            std::fill(dst, dst + filler, k_filler_llr);
        }
    });
    m_block_bits.resize(lte_turbo_decoder::output_bits(K));
    if (extrinsic)
        m_coded_extrinsic.resize(m_block_llr.size());
    const std::vector<turbo_block_result> blocks =
        m_decoder.decode(K,
                         m_block_llr.data(),
                         m_block_bits.data(),
                         nullptr,
                         extrinsic ? m_coded_extrinsic.data() : nullptr);
    if (extrinsic) { // back to the transmitted positions: a-posteriori less received
        const detail::extrinsic_positions& where = extrinsic_positions();
        for (size_t k = 0; k < count * size_t(C); ++k) {
            const size_t t = k / size_t(C), r = k % size_t(C);
            const detail::dematch_block& b = where.plan.blocks[r];
            const detail::float_llrs received{ llr + t * size_t(m_format.G) };
            const float* d = m_block_llr.data() + t * where.plan.outputs;
            const float* x = m_coded_extrinsic.data() + t * where.plan.outputs;
            float* out = extrinsic + t * size_t(m_format.G);
            for (int64_t j = 0; j < b.E; ++j)
                out[b.e_offset + j] =
                    detail::coded_bit_extrinsic(where.inverse.inputs.data(),
                                                where.inverse.offsets[r],
                                                b,
                                                j,
                                                received,
                                                d,
                                                x,
                                                blocks[k].no_information);
        }
    }

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
