#include <mimo_gpu/lte_turbo_decoder.h>

#include "../runtime/engine_choice.h"
#include "../runtime/parallel_for.h"
#include "../runtime/problem_status.h"
#include "turbo_batch.h"
#include "turbo_engine.h"
#ifdef MIMO_GPU_TURBO_AVX2
#include "turbo_window_avx2.h"
#endif

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace mimo_gpu {

void turbo_decoder_config::validate() const
{
    if (algorithm != map_algorithm::max_log_map && algorithm != map_algorithm::log_map)
        throw std::invalid_argument("mimo_gpu::lte_turbo_decoder: unknown MAP algorithm");
    if (iterations < 1 || iterations > 32)
        throw std::invalid_argument(
            "mimo_gpu::lte_turbo_decoder: iterations must be 1..32, got " +
            std::to_string(iterations));
    if (!(extrinsic_scale > 0.0f && extrinsic_scale <= 1.0f))
        throw std::invalid_argument(
            "mimo_gpu::lte_turbo_decoder: extrinsic_scale must be in (0, 1], got " +
            std::to_string(extrinsic_scale));
    if (window < 8)
        throw std::invalid_argument(
            "mimo_gpu::lte_turbo_decoder: window must be >= 8 trellis stages, got " +
            std::to_string(window));
    if (training < 0)
        throw std::invalid_argument(
            "mimo_gpu::lte_turbo_decoder: training must be >= 0 trellis stages, got " +
            std::to_string(training));
    crc_length(early_termination); // validates the enum
}

namespace detail {

void turbo_batch_plan::build(const std::vector<int>& K, int window, int training)
{
    if (!m_K.empty() && K == m_K && window == m_window && training == m_training)
        return;  // a stream of equal batches plans once
    m_K.clear(); // until the new plan is complete
    blocks.clear();
    windows.clear();
    permutations.clear();
    total_bits = total_llr = 0;
    max_window = max_training = 0;
    std::map<int, size_t> pi_offset;
    for (size_t b = 0; b < K.size(); ++b) {
        if (!qpp_interleaver::is_block_size(K[b]))
            throw std::invalid_argument(
                "mimo_gpu::lte_turbo_decoder: code block " + std::to_string(b) +
                " has K = " + std::to_string(K[b]) +
                ", not a size of TS 36.212 table 5.1.3-3 (40..6144)");
        auto it = pi_offset.find(K[b]);
        if (it == pi_offset.end()) {
            auto il = m_interleavers.find(K[b]);
            if (il == m_interleavers.end())
                il = m_interleavers.emplace(K[b], qpp_interleaver(K[b])).first;
            it = pi_offset.emplace(K[b], permutations.size()).first;
            permutations.insert(permutations.end(),
                                il->second.permutation().begin(),
                                il->second.permutation().end());
        }
        turbo_block_desc d;
        d.K = K[b];
        // A window >= K is one window: clamped first, so that K + window - 1
        // cannot overflow (window may be anything up to INT_MAX).
        const int w = std::min(window, K[b]);
        d.windows = (K[b] + w - 1) / w;
        d.llr_offset = total_llr;
        d.bit_offset = total_bits;
        d.window_offset = windows.size();
        d.pi_offset = it->second;
        // Clamped to K like the window (end + T cannot overflow); a prefix of K
        // stages reaches the block's ends from any window.
        const int T = std::min(training, K[b]);
        for (int w = 0; w < d.windows; ++w) {
            // near-equal windows
            const int start = w * K[b] / d.windows, end = (w + 1) * K[b] / d.windows;
            window_span span;
            span.start = start;
            span.len = end - start;
            // The prefixes stop at the block's ends, where the state is known.
            span.first = std::max(0, start - T);
            span.last = std::min(K[b], end + T);
            // Where the neighbours' recursions start (their first and last), unless
            // that is a block end.
            span.alpha_at = w + 1 < d.windows && end - T > 0 ? end - T : -1;
            span.beta_at = w > 0 && start + T < K[b] ? start + T : -1;
            windows.push_back({ int(b), span });
            max_window = std::max(max_window, end - start);
            max_training = std::max(max_training, span.last - span.first - span.len);
        }
        blocks.push_back(d);
        total_bits += size_t(K[b]);
        total_llr += 3 * size_t(K[b] + 4);
    }
    m_K = K;
    m_window = window;
    m_training = training;
}

uint32_t crc_generator(crc_type t)
{
    switch (t) {
    case crc_type::crc24a:
        return 0x1864CFBu;
    case crc_type::crc24b:
        return 0x1800063u;
    case crc_type::crc16:
        return 0x11021u;
    case crc_type::crc8:
        return 0x19Bu;
    default:
        return 0;
    }
}

std::vector<uint32_t> crc_powers(crc_type t, size_t count)
{
    const uint32_t g = crc_generator(t);
    const int L = crc_length(t);
    std::vector<uint32_t> powers(count);
    uint32_t r = 1;
    for (auto& p : powers) {
        p = r;
        r <<= 1;
        if (r & (1u << L))
            r ^= g;
    }
    return powers;
}

namespace {

/// First non-finite input LLR's block, or k_status_ok; sets no_information[b]
/// for each block with fewer than K input LLRs that reach the trellis as
/// non-zero branch metrics (turbo_block_result).
problem_status check_input(const turbo_batch_plan& plan,
                           const float* llr,
                           std::vector<uint8_t>& no_information)
{
    no_information.assign(plan.blocks.size(), 0);
    for (size_t b = 0; b < plan.blocks.size(); ++b) {
        const turbo_block_desc& d = plan.blocks[b];
        const float* x = llr + d.llr_offset;
        // On the values' bits, so that the loop vectorises (it was 7 % of a 2-core
        // LTE receiver's time; float comparisons may trap, which keeps the
        // compiler from it): finite when the exponent is not all ones; for
        // finite v, carries_information(v) (0.5 * v rounded is not 0) holds
        // exactly when |v| is above the smallest subnormal (with subnormals kept,
        // as this library never flushes them).
        const int n = 3 * (d.K + 4);
        int non_zero = 0, finite = 0;
        for (int i = 0; i < n; ++i) {
            uint32_t bits;
            std::memcpy(&bits, x + i, sizeof bits);
            finite += (bits & 0x7f800000u) != 0x7f800000u;
            non_zero += (bits & 0x7fffffffu) > 1u;
        }
        if (finite != n)
            return make_status(b, problem_fault::non_finite);
        no_information[b] = non_zero < d.K;
    }
    return k_status_ok;
}

class cpu_turbo_engine final : public turbo_engine
{
public:
    explicit cpu_turbo_engine(const turbo_decoder_config& config) : m_config(config) {}
#ifdef MIMO_GPU_TURBO_AVX2
    /// MIMO_GPU_TURBO_AVX2=0 in the environment keeps the scalar window (comparisons).
    const bool m_avx2 =
        cpu_has_avx2() && !(std::getenv("MIMO_GPU_TURBO_AVX2") &&
                            std::string(std::getenv("MIMO_GPU_TURBO_AVX2")) == "0");
#endif
    backend kind() const override { return backend::cpu; }

    std::vector<turbo_block_result>
    decode(const float* llr, uint8_t* bits, float* app_llr, float* coded_ext) override
    {
        throw_if_bad(
            "turbo_decoder", check_input(plan, llr, m_no_information), "code block");
        const size_t nb = plan.blocks.size();
        m_extrinsic1.assign(plan.total_bits, 0.0f);
        m_extrinsic2.assign(plan.total_bits, 0.0f);
        m_app.assign(plan.total_bits, 0.0f);
        const bool log_map = m_config.algorithm == map_algorithm::log_map;
#ifdef MIMO_GPU_TURBO_AVX2
        // Their scratch is per thread; the parity APPs come from the scalar window.
        const bool vector_windows = !log_map && m_avx2 && !coded_ext;
#else
        const bool vector_windows = false;
#endif
        if (!vector_windows) // tens of MB for an NR frame's windows, unused by the vector
                             // ones
            m_scratch.resize(plan.scratch_floats());
        m_boundaries.assign(plan.windows.size() * k_boundary_floats, 0.0f);
        m_done.assign(nb, 0);
        std::vector<turbo_block_result> results(nb);
        for (size_t b = 0; b < nb; ++b)
            results[b].no_information = m_no_information[b];

        turbo_batch_view v{ plan.blocks.data(),
                            plan.windows.data(),
                            plan.windows.size(),
                            llr,
                            plan.permutations.data(),
                            m_extrinsic1.data(),
                            m_extrinsic2.data(),
                            m_app.data(),
                            m_scratch.data(),
                            m_boundaries.data(),
                            m_done.data(),
                            log_map ? 1.0f : m_config.extrinsic_scale,
                            m_config.iterations - 1,
                            m_config.early_termination != crc_type::none };
        if (coded_ext) {
            m_parity_app.assign(2 * plan.total_bits, 0.0f);
            v.parity_app = m_parity_app.data();
        }
        for (int it = 0; it < m_config.iterations; ++it) {
            for (int decoder = 0; decoder < 2; ++decoder)
                parallel_for(plan.windows.size(), 16, [&](size_t begin, size_t end) {
#ifdef MIMO_GPU_TURBO_AVX2
                    if (vector_windows) { // the same operations, the states in one
                                          // register
                        thread_local std::vector<float> scratch;
                        scratch.resize(std::max(scratch.size(),
                                                size_t(k_avx2_stage_words) *
                                                    size_t(plan.max_window)));
                        for (size_t w = begin; w < end; ++w) {
                            window_job job;
                            if (prepare_window<false>(v, w, decoder, it, job))
                                map_window_avx2(job.io,
                                                job.span,
                                                job.alpha_start,
                                                job.beta_end,
                                                job.alpha_out,
                                                job.beta_out,
                                                scratch.data());
                        }
                        return;
                    }
#endif
                    for (size_t w = begin; w < end; ++w) {
                        const stage_scratch scratch = v.scratch_of(w);
                        if (log_map && coded_ext)
                            decode_window<true, true>(v, w, decoder, it, scratch);
                        else if (log_map)
                            decode_window<true>(v, w, decoder, it, scratch);
                        else if (coded_ext)
                            decode_window<false, true>(v, w, decoder, it, scratch);
                        else
                            decode_window<false>(v, w, decoder, it, scratch);
                    }
                });
            // Each block's CRC on its own: a frame's code blocks are checked after
            // every iteration, and one thread checking them all held up the cores.
            parallel_for(nb, 4, [&](size_t begin, size_t end) {
                for (size_t b = begin; b < end; ++b) {
                    if (m_done[b])
                        continue;
                    results[b].iterations = it + 1;
                    if (m_config.early_termination != crc_type::none &&
                        !m_no_information[b] && crc_passes(plan.blocks[b])) {
                        results[b].crc_ok = true;
                        m_done[b] = 1;
                    }
                }
            });
            // Every block stopped: the iterations left would change nothing (a
            // stopped block's windows are skipped), and on a busy 2-core machine
            // their hand-offs to the workers cost more than the decoding (the
            // CUDA engine keeps launching them: asking would cost a round trip).
            if (std::all_of(m_done.begin(), m_done.begin() + ptrdiff_t(nb), [](auto d) {
                    return d != 0;
                }))
                break;
        }
        parallel_for(nb, 4, [&](size_t begin, size_t end) {
            for (size_t b = begin; b < end; ++b) {
                const turbo_block_desc& d = plan.blocks[b];
                if (!hard_decisions(
                        m_app.data() + d.bit_offset, d.K, bits + d.bit_offset))
                    results[b].no_information = true; // a tie: not decided
            }
        });
        if (app_llr)
            std::copy(m_app.begin(), m_app.end(), app_llr);
        if (coded_ext)
            parallel_for(nb, 4, [&](size_t begin, size_t end) {
                for (size_t b = begin; b < end; ++b) {
                    const turbo_block_desc& d = plan.blocks[b];
                    const int n = 3 * (d.K + 4);
                    for (int i = 0; i < n; ++i) // a block without information adds none
                        coded_ext[d.llr_offset + size_t(i)] =
                            results[b].no_information
                                ? 0.0f
                                : coded_extrinsic(
                                      d, llr, m_app.data(), m_parity_app.data(), i);
                }
            });
        return results;
    }

private:
    /// Called for several blocks at once (its bits in a buffer of the thread's own).
    bool crc_passes(const turbo_block_desc& d) const
    {
        thread_local std::vector<uint8_t> block_bits;
        block_bits.resize(size_t(d.K));
        return hard_decisions(m_app.data() + d.bit_offset, d.K, block_bits.data()) &&
               crc_check(m_config.early_termination, block_bits.data(), size_t(d.K));
    }

    turbo_decoder_config m_config;
    std::vector<float> m_extrinsic1, m_extrinsic2, m_app, m_parity_app, m_scratch,
        m_boundaries;
    std::vector<uint8_t> m_done, m_no_information;
};

} // namespace

std::unique_ptr<turbo_engine> make_cpu_turbo_engine(const turbo_decoder_config& config)
{
    return std::make_unique<cpu_turbo_engine>(config);
}

} // namespace detail

lte_turbo_decoder::lte_turbo_decoder(const turbo_decoder_config& config,
                                     backend requested)
    : m_config(config)
{
    m_config.validate();
    m_engine = detail::choose_engine(
        requested,
        [&] { return detail::make_cpu_turbo_engine(m_config); },
        [&] { return detail::make_cuda_turbo_engine(m_config); });
}

lte_turbo_decoder::~lte_turbo_decoder() = default;
lte_turbo_decoder::lte_turbo_decoder(lte_turbo_decoder&&) noexcept = default;
lte_turbo_decoder& lte_turbo_decoder::operator=(lte_turbo_decoder&&) noexcept = default;

backend lte_turbo_decoder::active_backend() const { return m_engine->kind(); }

void lte_turbo_decoder::decode_device(const std::vector<int>& K,
                                      const float* d_llr,
                                      uint8_t* d_bits,
                                      float* d_app_llr,
                                      cuda_stream_t stream,
                                      float* d_coded_extrinsic)
{
    if (K.empty())
        return;
    m_engine->plan.build(K, m_config.window, m_config.training);
    m_engine->decode_device(d_llr, d_bits, d_app_llr, d_coded_extrinsic, stream);
}

void lte_turbo_decoder::check_device_status(cuda_stream_t stream)
{
    m_engine->check_device_status(stream);
}

lte_turbo_decoder::device_block_results lte_turbo_decoder::device_results() const
{
    return m_engine->device_results();
}

size_t lte_turbo_decoder::input_floats(const std::vector<int>& K)
{
    size_t n = 0;
    for (int k : K)
        n += 3 * size_t(k + 4);
    return n;
}

size_t lte_turbo_decoder::output_bits(const std::vector<int>& K)
{
    size_t n = 0;
    for (int k : K)
        n += size_t(k);
    return n;
}

std::vector<turbo_block_result> lte_turbo_decoder::decode(const std::vector<int>& K,
                                                          const float* llr,
                                                          uint8_t* bits,
                                                          float* app_llr,
                                                          float* coded_extrinsic)
{
    if (K.empty())
        return {};
    if (!llr || !bits)
        throw std::invalid_argument("mimo_gpu::lte_turbo_decoder::decode: null buffer");
    m_engine->plan.build(K, m_config.window, m_config.training);
    return m_engine->decode(llr, bits, app_llr, coded_extrinsic);
}

} // namespace mimo_gpu
