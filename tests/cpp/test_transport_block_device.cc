// transport_block_decoder::decode_device (and transport_block_pipeline, batches
// of it in flight): the de-rate-matching gather against
// rate_matcher::dematch on the CPU (every format, rv, float and int8), and on
// CUDA (skips without a GPU) decode_device from device LLRs against decode()
// on the CPU backend: bits and every result field, float and int8 input; bad input.
#include "test_support.h"

#include "../../lib/core/turbo/dematch_gather.h"

#include <mimo_gpu/device_memory.h>
#include <mimo_gpu/lte_turbo_code.h>
#include <mimo_gpu/lte_turbo_decoder.h>
#include <mimo_gpu/transport_block_code.h>
#include <mimo_gpu/transport_block_pipeline.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <deque>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

using namespace mimo_gpu;
using namespace mimo_gpu_test;

namespace {

/// One code block with filler (C = 1, F > 0), several with K_minus and K_plus and
/// filler, repetition, Qm 2 / 4 / 6, rate ~0.93, one code block of K = 6144.
std::vector<transport_block_format> formats()
{
    return {
        { 100, 600, 2 },       // C = 1, K = 128, F = 4, repetition
        { 40, 1200, 2 },       // C = 1, K = 64, F = 0, heavy repetition
        { 6120, 18432, 2 },    // C = 1, K = 6144, rate 1/3
        { 6120, 12240, 4 },    // C = 1, K = 6144, rate 1/2
        { 7000, 18000, 4 },    // C = 2
        { 20000, 30000, 6 },   // C = 4, K_minus and K_plus
        { 12960, 13936, 2 },   // C = 3, rate 0.93
        { 15000, 16128, 6 },   // C = 3, rate 0.93, Qm 6
        { 9000, 20000, 4, 2 }, // two layers
    };
}

struct device_array {
    void* p;
    explicit device_array(size_t bytes) : p(allocate_device(std::max<size_t>(bytes, 1)))
    {
    }
    ~device_array() { free_device(p); }
    device_array(const device_array&) = delete;
    device_array& operator=(const device_array&) = delete;
    template <typename T>
    T* as() const
    {
        return static_cast<T*>(p);
    }
};

/// Transport blocks of random bits, encoded, BPSK over AWGN at SNR snr_db[t] per
/// coded bit (1 / sigma^2) for block t, LLR = 2 y / sigma^2.
struct noisy_blocks {
    std::vector<uint8_t> a;
    std::vector<float> llr;
    noisy_blocks(const transport_block_format& f,
                 const std::vector<double>& snr_db,
                 uint64_t seed)
        : a(snr_db.size() * size_t(f.A)), llr(snr_db.size() * size_t(f.G))
    {
        std::mt19937_64 rng(seed);
        std::normal_distribution<float> normal(0.0f, 1.0f);
        transport_block_encoder enc(f);
        std::vector<uint8_t> coded(size_t(f.G));
        for (size_t t = 0; t < snr_db.size(); ++t) {
            const float sigma2 = float(std::pow(10.0, -snr_db[t] / 10.0));
            for (int i = 0; i < f.A; ++i)
                a[t * f.A + i] = uint8_t(rng() >> 63);
            enc.encode(a.data() + t * f.A, coded.data());
            for (int i = 0; i < f.G; ++i)
                llr[t * f.G + i] =
                    2.0f * ((coded[i] ? -1.0f : 1.0f) + std::sqrt(sigma2) * normal(rng)) /
                    sigma2;
        }
    }
};

std::vector<int8_t> quantise(const std::vector<float>& llr, float scale)
{
    std::vector<int8_t> q(llr.size());
    for (size_t i = 0; i < llr.size(); ++i)
        q[i] = int8_t(std::clamp(std::nearbyint(llr[i] / scale), -127.0f, 127.0f));
    return q;
}

/// What decode_device reads from int8 input: scale * value, in float.
std::vector<float> dequantise(const std::vector<int8_t>& q, float scale)
{
    std::vector<float> x(q.size());
    for (size_t i = 0; i < q.size(); ++i)
        x[i] = scale * float(q[i]);
    return x;
}

void expect_same_bits(const std::vector<float>& got,
                      const std::vector<float>& want,
                      const std::string& what)
{
    ASSERT_EQ(got.size(), want.size()) << what;
    for (size_t i = 0; i < want.size(); ++i) {
        ASSERT_EQ(std::memcmp(&got[i], &want[i], sizeof(float)), 0)
            << what << ": output " << i << " got " << got[i] << " want " << want[i];
    }
}

/// The decoder input of one transport block by the gather, on the host.
template <class Llrs>
std::vector<float> gather(const detail::dematch_plan& plan, Llrs e)
{
    std::vector<float> d(plan.outputs, NAN);
    for (const detail::dematch_block& b : plan.blocks)
        for (int s = 0; s < b.outputs; ++s)
            d[size_t(b.d_offset) + s] =
                detail::dematch_gather(plan.tables.data(), b, s, e);
    return d;
}

/// rate_matcher::dematch per code block, then the filler fill: what decode() feeds
/// the turbo decoder.
std::vector<float> reference(const transport_block_format& f, const float* e)
{
    const code_block_segmentation seg = f.segmentation();
    const std::vector<int> E = f.rate_matched_sizes();
    std::vector<float> d;
    for (int r = 0; r < seg.C; ++r) {
        const int K = seg.K[r], filler = r == 0 ? seg.F : 0;
        std::vector<float> block(3 * size_t(K + 4));
        rate_matcher(K).dematch(e, E[r], f.rv, filler, block.data());
        std::fill(block.begin(), block.begin() + filler, detail::k_filler_llr);
        d.insert(d.end(), block.begin(), block.end());
        e += E[r];
    }
    return d;
}

} // namespace

TEST(dematch_gather, equals_rate_matcher_dematch_for_every_format_and_rv)
{
    const uint64_t seed = fresh_seed();
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> normal(0.0f, 4.0f);
    for (transport_block_format f : formats()) {
        const code_block_segmentation seg = f.segmentation();
        for (int rv = 0; rv < 4; ++rv) {
            f.rv = rv;
            const detail::dematch_plan plan =
                detail::make_dematch_plan(seg, f.rate_matched_sizes(), rv);
            ASSERT_EQ(plan.blocks.size(), size_t(seg.C));
            EXPECT_LE(plan.tables.size(), 3 * 3 * size_t(6148)); // at most 3 distinct
            std::vector<float> e(size_t(f.G));
            for (float& x : e) // exact zeros and negative zeros too
                x = rng() % 16 == 0 ? (rng() % 2 ? 0.0f : -0.0f) : normal(rng);
            const std::string what = "A " + std::to_string(f.A) + " G " +
                                     std::to_string(f.G) + " rv " + std::to_string(rv);
            expect_same_bits(gather(plan, detail::float_llrs{ e.data() }),
                             reference(f, e.data()),
                             what + " float");
            std::vector<int8_t> q(size_t(f.G));
            for (int8_t& v : q)
                v = int8_t(int(rng() % 256) - 128);
            const float scale = 0.0625f + float(rng() % 1000) * 1e-4f;
            expect_same_bits(gather(plan, detail::int8_llrs{ q.data(), scale }),
                             reference(f, dequantise(q, scale).data()),
                             what + " int8");
        }
    }
}

TEST(dematch_gather, order_is_one_turn_of_the_circular_buffer)
{
    // K = 40 without filler: every one of the 3 D = 132 bits is sent once per turn.
    rate_matcher rm(40);
    std::vector<int32_t> first(3 * 44);
    EXPECT_EQ(rm.dematch_order(0, 0, first.data()), 132);
    std::vector<int32_t> sorted = first;
    std::sort(sorted.begin(), sorted.end());
    for (int j = 0; j < 132; ++j) {
        ASSERT_EQ(sorted[j], j);
    }
    // 4 filler bits: <NULL> in d0 and d1, never sent.
    EXPECT_EQ(rm.dematch_order(2, 4, first.data()), 132 - 8);
    for (int s = 0; s < 4; ++s) {
        EXPECT_EQ(first[s], -1);
        EXPECT_EQ(first[44 + s], -1);
        EXPECT_GE(first[88 + s], 0);
    }
    EXPECT_THROW(rm.dematch_order(4, 0, first.data()), std::invalid_argument);
    EXPECT_THROW(rm.dematch_order(0, 40, first.data()), std::invalid_argument);
}

TEST(transport_block_device, cpu_decoder_has_no_device_path)
{
    transport_block_decoder dec({ 100, 600, 2 }, turbo_decoder_config{}, backend::cpu);
    std::vector<float> llr(600, 1.0f);
    std::vector<int8_t> q(600, 1);
    std::vector<uint8_t> a(100);
    EXPECT_THROW(dec.decode_device(llr.data(), 1, a.data(), nullptr), std::logic_error);
    EXPECT_THROW(dec.decode_device(q.data(), 0.5f, 1, a.data(), nullptr),
                 std::logic_error);
    EXPECT_THROW(dec.decode_device(llr.data(), 0, a.data(), nullptr), std::logic_error);
    EXPECT_THROW(dec.device_results(nullptr), std::logic_error);
    EXPECT_THROW(dec.set_redundancy_version(4), std::invalid_argument);
    EXPECT_THROW(dec.set_redundancy_version(-1), std::invalid_argument);
}

// rv set on the decoder is what decode() uses: the same as a decoder made for it.
TEST(transport_block_device, set_redundancy_version_decodes_as_a_new_decoder)
{
    const uint64_t seed = fresh_seed();
    transport_block_format f{ 7000, 18000, 4 };
    transport_block_decoder changed(f, turbo_decoder_config{}, backend::cpu);
    for (int rv : { 2, 1, 3, 0 }) {
        f.rv = rv;
        const noisy_blocks in(f, { 2.0, 2.0 }, seed + rv);
        transport_block_decoder made(f, turbo_decoder_config{}, backend::cpu);
        changed.set_redundancy_version(rv);
        EXPECT_EQ(changed.format().rv, rv);
        std::vector<uint8_t> a1(2 * f.A), a2(2 * f.A);
        const auto r1 = changed.decode(in.llr.data(), 2, a1.data());
        const auto r2 = made.decode(in.llr.data(), 2, a2.data());
        EXPECT_EQ(a1, a2) << "rv " << rv;
        for (size_t t = 0; t < 2; ++t) {
            EXPECT_TRUE(r1[t].crc_ok) << "rv " << rv; // 2 dB above the limit decodes
            EXPECT_EQ(r1[t].max_iterations, r2[t].max_iterations);
        }
    }
}

// ---- Garbage never passes: a CRC pass means the block was decoded ---------------

namespace {

/// Formats for the garbage tests: one code block with filler, two, four of
/// mixed K, and thirteen of K = 6144 (a transport block of 8 kbit CRC chunks
/// on CUDA, as an NR 100 MHz frame's is).
/// and the rv 2 format (no systematic bits sent at rate 0.96).
std::vector<transport_block_format> garbage_formats()
{
    return { { 100, 600, 2 },      { 7000, 18000, 4 },      { 20000, 30000, 6 },
             { 78000, 160000, 4 }, { 6120, 6400, 2, 1, 2 }, { 1000, 2048, 2, 1, 3 } };
}

/// A batch of transport blocks and what a CRC pass may mean for each: sent[t]
/// the bits behind block t's LLRs, or empty where nothing was sent (garbage).
struct garbage_batch {
    std::string what;
    std::vector<float> llr;
    std::vector<std::vector<uint8_t>> sent;
    float scale = 0; ///< a real transmission's scale factor; 0 for the others
};

/// Positions of the systematic bits (d0) of every code block in one transport
/// block's rate-matched LLRs: where the gather reads them (first[s] + k P).
std::vector<size_t> systematic_positions(const transport_block_format& f)
{
    const code_block_segmentation seg = f.segmentation();
    const std::vector<int> E = f.rate_matched_sizes();
    std::vector<size_t> out;
    size_t offset = 0;
    for (int r = 0; r < seg.C; ++r) {
        const int D = seg.K[r] + 4;
        std::vector<int32_t> first(3 * size_t(D));
        const int P =
            rate_matcher(seg.K[r]).dematch_order(f.rv, r == 0 ? seg.F : 0, first.data());
        for (int s = 0; s < D; ++s)
            for (int64_t j = first[s]; j >= 0 && j < E[r]; j += P)
                out.push_back(offset + size_t(j));
        offset += size_t(E[r]);
    }
    return out;
}

/// count blocks of each kind: zeros; random signs of magnitudes from denormal
/// to FLT_MAX (nothing sent); real transmissions (3 dB above the rate's limit)
/// scaled by denormal to huge factors; the same with every systematic LLR
/// zeroed; and random signs with the systematic LLRs of a real block.
std::vector<garbage_batch>
garbage_batches(const transport_block_format& f, size_t count, uint64_t seed)
{
    std::vector<garbage_batch> out;
    std::mt19937_64 rng(seed);
    const size_t G = size_t(f.G), A = size_t(f.A);
    out.push_back({ "zeros",
                    std::vector<float>(count * G, 0.0f),
                    std::vector<std::vector<uint8_t>>(count) });
    const float denormal_min = std::numeric_limits<float>::denorm_min();
    for (float m : { denormal_min,
                     2 * denormal_min,
                     1e-42f,
                     1e-30f,
                     1.0f,
                     1e4f,
                     1e30f,
                     std::numeric_limits<float>::max() }) {
        garbage_batch b{ "random signs of magnitude " + std::to_string(std::log10(m)) +
                             " (log10)",
                         std::vector<float>(count * G),
                         std::vector<std::vector<uint8_t>>(count) };
        for (float& x : b.llr)
            x = (rng() >> 63) ? -m : m;
        out.push_back(std::move(b));
    }
    // Gaussian noise alone, at scales from below log-MAP's resolution to huge.
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (float sigma : { 1e-30f, 1e-12f, 1e-9f, 1e-6f, 1.0f, 1e20f }) {
        garbage_batch b{ "Gaussian noise of sigma 1e" +
                             std::to_string(int(std::lround(std::log10(sigma)))),
                         std::vector<float>(count * G),
                         std::vector<std::vector<uint8_t>>(count) };
        for (float& x : b.llr)
            x = sigma * normal(rng);
        out.push_back(std::move(b));
    }
    // Sparse: a third of the positions random, the rest 0.
    garbage_batch sparse{ "random signs at a third of the positions",
                          std::vector<float>(count * G, 0.0f),
                          std::vector<std::vector<uint8_t>>(count) };
    for (float& x : sparse.llr)
        if (rng() % 3 == 0)
            x = (rng() >> 63) ? -8.0f : 8.0f;
    out.push_back(std::move(sparse));
    const double limit = 10.0 * std::log10(std::pow(2.0, 2.0 * double(f.A) / f.G) - 1.0);
    const std::vector<size_t> systematic = systematic_positions(f);
    const auto real = [&](const std::string& what) {
        const noisy_blocks in(f, std::vector<double>(count, limit + 3.0), rng());
        garbage_batch b{ what, in.llr, {} };
        for (size_t t = 0; t < count; ++t)
            b.sent.emplace_back(in.a.begin() + ptrdiff_t(t * A),
                                in.a.begin() + ptrdiff_t((t + 1) * A));
        return b;
    };
    for (float scale : { 1e-42f, 1e-38f, 1e-20f, 1e20f, 1e34f }) {
        garbage_batch b = real("a transmission scaled by 1e" +
                               std::to_string(int(std::lround(std::log10(scale)))));
        b.scale = scale;
        for (float& x : b.llr)
            x *= scale;
        out.push_back(std::move(b));
    }
    // Noiseless, as the rv 2 example: LLR 10 (1 - 2 e).
    garbage_batch clean = real("a noiseless transmission");
    for (float& x : clean.llr)
        x = x < 0 ? -10.0f : 10.0f;
    out.push_back(std::move(clean));
    garbage_batch no_systematic = real("a transmission without its systematic bits");
    for (size_t t = 0; t < count; ++t)
        for (size_t j : systematic)
            no_systematic.llr[t * G + j] = 0.0f;
    out.push_back(std::move(no_systematic));
    garbage_batch only_systematic =
        real("random signs beside a transmission's systematic bits");
    std::vector<bool> is_systematic(G, false);
    for (size_t j : systematic)
        is_systematic[j] = true;
    for (size_t t = 0; t < count; ++t)
        for (size_t j = 0; j < G; ++j)
            if (!is_systematic[j])
                only_systematic.llr[t * G + j] = (rng() >> 63) ? -4.0f : 4.0f;
    out.push_back(std::move(only_systematic));
    return out;
}

/// The guarantee: a block whose CRC passes has the bits that were sent, and a
/// block of garbage (nothing sent) never passes. Returns the passes.
int expect_no_false_pass(const garbage_batch& b,
                         const transport_block_format& f,
                         const std::vector<transport_block_result>& r,
                         const std::vector<uint8_t>& a,
                         const std::string& where)
{
    int passes = 0;
    for (size_t t = 0; t < r.size(); ++t) {
        if (!r[t].crc_ok)
            continue;
        ++passes;
        EXPECT_FALSE(b.sent[t].empty())
            << where << " " << b.what << ": garbage TB " << t << " passed its CRC";
        if (!b.sent[t].empty()) {
            EXPECT_TRUE(std::equal(b.sent[t].begin(),
                                   b.sent[t].end(),
                                   a.begin() + ptrdiff_t(t * size_t(f.A))))
                << where << " " << b.what << ": TB " << t
                << " passed its CRC with wrong bits";
        }
    }
    return passes;
}

/// The decoder settings the garbage tests run: the default (max-log-MAP) and log-MAP.
std::vector<turbo_decoder_config> garbage_decoders()
{
    turbo_decoder_config log_map;
    log_map.algorithm = map_algorithm::log_map;
    return { turbo_decoder_config{}, log_map };
}

/// log-MAP (scalar on the CPU, several times slower) on the formats up to one
/// code block only: the test command stays short on two cores.
bool runs_garbage(const transport_block_format& f, const turbo_decoder_config& c)
{
    return c.algorithm == map_algorithm::max_log_map || f.A <= 6120;
}

std::string format_name(const transport_block_format& f, const turbo_decoder_config& c)
{
    return "A " + std::to_string(f.A) + " G " + std::to_string(f.G) + " Qm " +
           std::to_string(f.Qm) + " rv " + std::to_string(f.rv) +
           (c.algorithm == map_algorithm::log_map ? " log-MAP" : " max-log-MAP");
}

/// Random bits of count transport blocks, and their rate-matched codewords as
/// LLRs of magnitude 10 (noiseless).
struct clean_blocks {
    std::vector<uint8_t> a;
    std::vector<float> llr;
    clean_blocks(const transport_block_format& f, size_t count, uint64_t seed)
        : a(count * size_t(f.A)), llr(count * size_t(f.G))
    {
        std::mt19937_64 rng(seed);
        transport_block_encoder enc(f);
        std::vector<uint8_t> coded(size_t(f.G));
        for (size_t t = 0; t < count; ++t) {
            for (int i = 0; i < f.A; ++i)
                a[t * f.A + i] = uint8_t(rng() >> 63);
            enc.encode(a.data() + t * f.A, coded.data());
            for (int i = 0; i < f.G; ++i)
                llr[t * f.G + i] = coded[i] ? -10.0f : 10.0f;
        }
    }
};

} // namespace

// The three ways garbage got a CRC pass (issue 23): each decoded to the all-zero
// block, which passes every CRC, from hard decisions of ties (APP exactly 0).

TEST(transport_block, denormal_llrs_never_pass_the_crc)
{
    const transport_block_format f{ 6120, 18432, 2 };
    const size_t count = 32;
    std::mt19937_64 rng(fresh_seed());
    std::vector<float> llr(count * size_t(f.G));
    for (float& x : llr)
        x = (rng() >> 63 ? -1 : 1) * std::numeric_limits<float>::denorm_min(); // 1.4e-45
    transport_block_decoder dec(f, turbo_decoder_config{}, backend::cpu);
    std::vector<uint8_t> a(count * size_t(f.A));
    for (const auto& r : dec.decode(llr.data(), count, a.data())) {
        EXPECT_FALSE(r.crc_ok);
        EXPECT_EQ(r.code_blocks_no_information, r.code_blocks); // they halve to 0
    }
}

TEST(transport_block, log_map_inputs_below_its_resolution_never_pass_the_crc)
{
    const transport_block_format f{ 1000, 2048, 2 };
    const size_t count = 40;
    turbo_decoder_config c;
    c.algorithm = map_algorithm::log_map;
    transport_block_decoder dec(f, c, backend::cpu);
    std::mt19937_64 rng(fresh_seed());
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (float sigma : { 1e-30f, 1e-12f, 1e-9f }) {
        std::vector<float> llr(count * size_t(f.G));
        for (float& x : llr)
            x = sigma * normal(rng);
        std::vector<uint8_t> a(count * size_t(f.A));
        int passes = 0;
        for (const auto& r : dec.decode(llr.data(), count, a.data()))
            passes += r.crc_ok;
        EXPECT_EQ(passes, 0) << "sigma " << sigma;
    }
}

TEST(transport_block, rv2_alone_at_high_rate_never_passes_undecided_blocks)
{
    // No systematic bits sent: parity alone leaves almost every APP at exactly 0.
    const transport_block_format f{ 6120, 6400, 2, 1, 2 };
    const size_t count = 64; // about 4 passed with all-zero bits before
    const clean_blocks in(f, count, fresh_seed());
    transport_block_decoder dec(f, turbo_decoder_config{}, backend::cpu);
    std::vector<uint8_t> a(count * size_t(f.A));
    const auto r = dec.decode(in.llr.data(), count, a.data());
    int undecided = 0;
    for (size_t t = 0; t < count; ++t) {
        undecided += r[t].code_blocks_no_information > 0;
        if (r[t].crc_ok) {
            EXPECT_TRUE(std::equal(a.begin() + ptrdiff_t(t * f.A),
                                   a.begin() + ptrdiff_t((t + 1) * f.A),
                                   in.a.begin() + ptrdiff_t(t * f.A)))
                << "TB " << t << " passed its CRC with wrong bits";
        }
    }
    EXPECT_GT(undecided, int(count) / 2); // the decoder knows, and says so
}

TEST(transport_block, garbage_never_passes_the_crc)
{
    const uint64_t seed = fresh_seed();
    const size_t count = 12;
    for (const turbo_decoder_config& config : garbage_decoders())
        for (const transport_block_format& f : garbage_formats()) {
            if (!runs_garbage(f, config))
                continue;
            transport_block_decoder dec(f, config, backend::cpu);
            const std::string where = format_name(f, config);
            int real_passes = 0;
            for (const garbage_batch& b :
                 garbage_batches(f, count, seed + uint64_t(f.A))) {
                std::vector<uint8_t> a(count * size_t(f.A), 9);
                const auto r = dec.decode(b.llr.data(), count, a.data());
                ASSERT_EQ(r.size(), count);
                const int passes = expect_no_false_pass(b, f, r, a, where);
                if (b.what == "zeros")
                    for (const auto& t : r) {
                        EXPECT_EQ(t.code_blocks_no_information, t.code_blocks) << where;
                    }
                if (b.scale > 0 && b.scale < 1)
                    real_passes += passes;
            }
            // The transmissions scaled down (to denormals) still decode, so the
            // wrong-bits check above is exercised. Scaled up beyond the decoder's
            // saturation (k_turbo_llr_limit) they are hard decisions and mostly
            // fail their CRC: a stated failure, never a false pass. (rv 2 and 3
            // alone at these rates do not decode at all.)
            if (f.rv == 0 && config.algorithm == map_algorithm::max_log_map) {
                EXPECT_GE(real_passes, int(count)) << where;
            }
        }
    // Non-finite LLRs are refused, never decoded.
    const transport_block_format f{ 7000, 18000, 4 };
    transport_block_decoder dec(f, turbo_decoder_config{}, backend::cpu);
    for (float bad : { std::numeric_limits<float>::quiet_NaN(),
                       std::numeric_limits<float>::infinity() }) {
        std::vector<float> llr(2 * size_t(f.G), 1.0f);
        llr[size_t(f.G) + 17] = bad;
        std::vector<uint8_t> a(2 * size_t(f.A));
        EXPECT_THROW(dec.decode(llr.data(), 2, a.data()), std::invalid_argument) << bad;
    }
}

// ---- CUDA ------------------------------------------------------------------

namespace {

void expect_same_results(const std::vector<transport_block_result>& got,
                         const std::vector<transport_block_result>& want,
                         const std::string& what)
{
    ASSERT_EQ(got.size(), want.size()) << what;
    for (size_t t = 0; t < want.size(); ++t) {
        EXPECT_EQ(got[t].crc_ok, want[t].crc_ok) << what << " TB " << t;
        EXPECT_EQ(got[t].code_blocks, want[t].code_blocks) << what << " TB " << t;
        EXPECT_EQ(got[t].code_blocks_crc_ok, want[t].code_blocks_crc_ok)
            << what << " TB " << t;
        EXPECT_EQ(got[t].code_blocks_no_information, want[t].code_blocks_no_information)
            << what << " TB " << t;
        EXPECT_EQ(got[t].max_iterations, want[t].max_iterations) << what << " TB " << t;
    }
}

template <typename T>
void upload(const device_array& d, const std::vector<T>& host)
{
    copy_memory(
        d.p, host.data(), host.size() * sizeof(T), copy_direction::host_to_device);
}

std::vector<uint8_t> download(const device_array& d, size_t n)
{
    std::vector<uint8_t> host(n);
    copy_memory(host.data(), d.p, n, copy_direction::device_to_host);
    return host;
}

} // namespace

// Fresh noisy transport blocks at SNRs where some decode and some do not (and one
// all-zero block: no information), every format above, rv 0..3, float and int8:
// decode_device's bits and results equal decode()'s on the CPU backend.
TEST(transport_block_device, decodes_like_decode_on_the_cpu)
{
    MIMO_GPU_REQUIRE_CUDA();
    const uint64_t seed = fresh_seed();
    device_stream stream;
    const size_t count = 5;
    int compared = 0, passed = 0;
    for (transport_block_format f : formats()) {
        f.rv = 0;
        turbo_decoder_config cfg;
        cfg.iterations = 4;
        transport_block_decoder cpu(f, cfg, backend::cpu), gpu(f, cfg, backend::cuda);
        device_array d_llr(count * f.G * sizeof(float)), d_q(count * size_t(f.G)),
            d_a(count * size_t(f.A));
        // the rv changes between calls on the same decoder, as in HARQ
        for (int rv : { 0, 2, 1, 3, 0 }) {
            f.rv = rv;
            cpu.set_redundancy_version(rv);
            gpu.set_redundancy_version(rv);
            // From below the Shannon limit of this rate (real Gaussian channel) to 3 dB
            // above it, so that some blocks decode and some do not.
            const double limit =
                10.0 * std::log10(std::pow(2.0, 2.0 * double(f.A) / f.G) - 1.0);
            noisy_blocks in(f,
                            { limit - 0.5, limit + 0.7, limit + 1.5, limit + 3.0, 0.0 },
                            seed + compared);
            std::fill(
                in.llr.begin() + 4 * size_t(f.G), in.llr.end(), 0.0f); // TB 4 erased
            const std::string what = "A " + std::to_string(f.A) + " G " +
                                     std::to_string(f.G) + " Qm " + std::to_string(f.Qm) +
                                     " rv " + std::to_string(rv);

            std::vector<uint8_t> want(count * f.A, 9);
            const auto r_want = cpu.decode(in.llr.data(), count, want.data());
            upload(d_llr, in.llr);
            gpu.decode_device(d_llr.as<float>(), count, d_a.as<uint8_t>(), stream.get());
            const auto r_got = gpu.device_results(stream.get());
            EXPECT_EQ(download(d_a, count * f.A), want) << what << " float";
            expect_same_results(r_got, r_want, what + " float");

            const float scale = 0.125f + 0.0625f * float(rv);
            const std::vector<int8_t> q = quantise(in.llr, scale);
            const std::vector<float> x = dequantise(q, scale);
            std::vector<uint8_t> want_q(count * f.A, 9);
            const auto r_want_q = cpu.decode(x.data(), count, want_q.data());
            upload(d_q, q);
            gpu.decode_device(
                d_q.as<int8_t>(), scale, count, d_a.as<uint8_t>(), stream.get());
            const auto r_got_q = gpu.device_results(stream.get());
            EXPECT_EQ(download(d_a, count * f.A), want_q) << what << " int8";
            expect_same_results(r_got_q, r_want_q, what + " int8");
            for (const auto& r : r_want)
                passed += r.crc_ok;
            compared += 2;
        }
    }
    std::printf("[ compared ] %d batches of %zu transport blocks, %d float TBs passed\n",
                compared,
                count,
                passed);
    EXPECT_GT(passed, 0); // the SNRs must leave both outcomes
    EXPECT_LT(passed, compared / 2 * int(count - 1));
}

// The extrinsic LLRs of the transmitted bits on the device equal decode()'s of the
// same (CUDA) decoder bit for bit, and the CPU decoder's to rounding: every format
// above (repetition, puncturing, several code blocks, filler), rv 0..3, an erased
// block, float and int8 LLRs.
TEST(transport_block_device, extrinsic_llrs_equal_decode)
{
    MIMO_GPU_REQUIRE_CUDA();
    const uint64_t seed = fresh_seed();
    device_stream stream;
    const size_t count = 4;
    size_t compared = 0;
    for (transport_block_format f : formats()) {
        turbo_decoder_config cfg;
        cfg.iterations = 4;
        transport_block_decoder cpu(f, cfg, backend::cpu), gpu(f, cfg, backend::cuda);
        device_array d_llr(count * f.G * sizeof(float)), d_a(count * size_t(f.A)),
            d_x(count * f.G * sizeof(float));
        for (int rv : { 0, 3, 1, 2 }) {
            cpu.set_redundancy_version(rv);
            gpu.set_redundancy_version(rv);
            const double limit =
                10.0 * std::log10(std::pow(2.0, 2.0 * double(f.A) / f.G) - 1.0);
            noisy_blocks in(f, { limit - 0.5, limit + 1.0, limit + 3.0, 0.0 }, seed + rv);
            std::fill(in.llr.begin() + 3 * size_t(f.G), in.llr.end(), 0.0f); // erased
            const std::string what = "A " + std::to_string(f.A) + " G " +
                                     std::to_string(f.G) + " rv " + std::to_string(rv);
            std::vector<uint8_t> a(count * f.A);
            std::vector<float> host(count * f.G, NAN), want(count * f.G, NAN);
            gpu.decode(in.llr.data(), count, a.data(), host.data());
            cpu.decode(in.llr.data(), count, a.data(), want.data());
            upload(d_llr, in.llr);
            gpu.decode_device(d_llr.as<float>(),
                              count,
                              d_a.as<uint8_t>(),
                              stream.get(),
                              d_x.as<float>());
            gpu.device_results(stream.get());
            std::vector<float> got(count * f.G);
            copy_memory(got.data(),
                        d_x.p,
                        got.size() * sizeof(float),
                        copy_direction::device_to_host);
            expect_bit_identical(got, host, what + " device vs host path");
            expect_backends_agree(got, want, false, what + " CUDA vs CPU", 1e-4);
            for (size_t i = 3 * size_t(f.G); i < got.size(); ++i)
                ASSERT_EQ(got[i], 0.0f) << what << ": the erased block adds nothing";
            compared += got.size();

            // int8 LLRs (a detector's int8 output): the extrinsics of the floats
            // they stand for.
            const float scale = 0.25f;
            const std::vector<int8_t> q = quantise(in.llr, scale);
            gpu.decode(dequantise(q, scale).data(), count, a.data(), host.data());
            device_array d_q(q.size());
            upload(d_q, q);
            gpu.decode_device(d_q.as<int8_t>(),
                              scale,
                              count,
                              d_a.as<uint8_t>(),
                              stream.get(),
                              d_x.as<float>());
            gpu.device_results(stream.get());
            copy_memory(got.data(),
                        d_x.p,
                        got.size() * sizeof(float),
                        copy_direction::device_to_host);
            expect_bit_identical(got, host, what + " int8, device vs host path");
            compared += got.size();
        }
    }
    std::printf("[ compared ] %zu extrinsic LLRs\n", compared);
}

// Batches of changing sizes on one decoder, and a NaN reported like decode() does.
TEST(transport_block_device, changing_batches_and_bad_input)
{
    MIMO_GPU_REQUIRE_CUDA();
    const uint64_t seed = fresh_seed();
    device_stream stream;
    const transport_block_format f{ 7000, 18000, 4 };
    transport_block_decoder cpu(f, turbo_decoder_config{}, backend::cpu),
        gpu(f, turbo_decoder_config{}, backend::cuda);
    device_array d_llr(8 * f.G * sizeof(float)), d_a(8 * size_t(f.A));
    for (size_t count : { 3, 8, 1, 8 }) {
        noisy_blocks in(f, std::vector<double>(count, 1.0), seed + count);
        std::vector<uint8_t> want(count * f.A);
        const auto r_want = cpu.decode(in.llr.data(), count, want.data());
        upload(d_llr, in.llr);
        gpu.decode_device(d_llr.as<float>(), count, d_a.as<uint8_t>(), stream.get());
        expect_same_results(
            gpu.device_results(stream.get()), r_want, "count " + std::to_string(count));
        EXPECT_EQ(download(d_a, count * f.A), want) << "count " << count;
    }
    // count 0: nothing to do, and no results
    gpu.decode_device(static_cast<const float*>(nullptr), 0, nullptr, stream.get());
    EXPECT_TRUE(gpu.device_results(stream.get()).empty());
    // null buffers, bad scales
    uint8_t* a = d_a.as<uint8_t>();
    const int8_t* q = d_llr.as<int8_t>();
    EXPECT_THROW(
        gpu.decode_device(static_cast<const float*>(nullptr), 1, a, stream.get()),
        std::invalid_argument);
    EXPECT_THROW(gpu.decode_device(d_llr.as<float>(), 1, nullptr, stream.get()),
                 std::invalid_argument);
    EXPECT_THROW(
        gpu.decode_device(static_cast<const int8_t*>(nullptr), 1.0f, 1, a, stream.get()),
        std::invalid_argument);
    for (float scale : { 0.0f,
                         -1.0f,
                         std::numeric_limits<float>::quiet_NaN(),
                         std::numeric_limits<float>::infinity() })
        EXPECT_THROW(gpu.decode_device(q, scale, 1, a, stream.get()),
                     std::invalid_argument)
            << scale;
    // A NaN in TB 1 (code block 1 of 2 there: code block 3 of the batch), as decode().
    noisy_blocks in(f, { 1.0, 1.0 }, seed);
    in.llr[f.G + f.rate_matched_sizes()[0] + 5] = NAN;
    std::vector<uint8_t> out(2 * f.A);
    std::string cpu_message, gpu_message;
    try {
        cpu.decode(in.llr.data(), 2, out.data());
    } catch (const std::invalid_argument& e) {
        cpu_message = e.what();
    }
    upload(d_llr, in.llr);
    gpu.decode_device(d_llr.as<float>(), 2, a, stream.get());
    try {
        gpu.device_results(stream.get());
    } catch (const std::invalid_argument& e) {
        gpu_message = e.what();
    }
    EXPECT_NE(cpu_message.find("code block 3 "), std::string::npos) << cpu_message;
    EXPECT_NE(gpu_message.find("code block 3 "), std::string::npos) << gpu_message;
    // and the decoder goes on
    noisy_blocks ok(f, { 1.0, 1.0 }, seed + 1);
    std::vector<uint8_t> want(2 * f.A);
    const auto r_want = cpu.decode(ok.llr.data(), 2, want.data());
    upload(d_llr, ok.llr);
    gpu.decode_device(d_llr.as<float>(), 2, a, stream.get());
    expect_same_results(gpu.device_results(stream.get()), r_want, "after NaN");
    EXPECT_EQ(download(d_a, 2 * f.A), want);
}

// The same garbage through decode_device (the CRC24A in 8 kbit chunks): the
// CPU's bits and results, and never a false pass.
TEST(transport_block_device, garbage_never_passes_the_crc)
{
    MIMO_GPU_REQUIRE_CUDA();
    const uint64_t seed = fresh_seed();
    device_stream stream;
    const size_t count = 12;
    for (const turbo_decoder_config& config : garbage_decoders())
        for (const transport_block_format& f : garbage_formats()) {
            if (!runs_garbage(f, config))
                continue;
            transport_block_decoder cpu(f, config, backend::cpu),
                gpu(f, config, backend::cuda);
            device_array d_llr(count * size_t(f.G) * sizeof(float)),
                d_a(count * size_t(f.A));
            const std::string where = format_name(f, config);
            for (const garbage_batch& b :
                 garbage_batches(f, count, seed + uint64_t(f.A))) {
                std::vector<uint8_t> want(count * size_t(f.A));
                const auto r_want = cpu.decode(b.llr.data(), count, want.data());
                upload(d_llr, b.llr);
                gpu.decode_device(
                    d_llr.as<float>(), count, d_a.as<uint8_t>(), stream.get());
                const auto r_got = gpu.device_results(stream.get());
                const std::vector<uint8_t> got = download(d_a, count * size_t(f.A));
                expect_same_results(r_got, r_want, where + " " + b.what);
                EXPECT_EQ(got, want) << where << " " << b.what;
                expect_no_false_pass(b, f, r_got, got, where + " (CUDA)");
            }
        }
}

// ---- transport_block_pipeline ------------------------------------------------

namespace {

std::unique_ptr<transport_block_code_decoder>
code_decoder(const transport_block_format& f, backend b)
{
    turbo_decoder_config cfg;
    cfg.iterations = 4;
    return make_transport_block_code_decoder(f, cfg, b);
}

/// What decode() on the CPU gives for a batch at rv.
struct expected_batch {
    std::vector<uint8_t> bits;
    std::vector<transport_block_result> results;
};

} // namespace

// A block with a NaN fails alone, with zero bits, named in `refused`; the others
// decode as decode() does (on the CPU: what tb_stream_decoder's host path uses).
TEST(transport_block_pipeline, block_by_block_fails_only_the_refused_block)
{
    const transport_block_format f{ 7000, 18000, 4 };
    auto cpu = code_decoder(f, backend::cpu);
    noisy_blocks in(f, { 2.0, 2.0, 2.0 }, fresh_seed());
    std::vector<uint8_t> want(3 * size_t(f.A));
    const auto r_want = cpu->decode(in.llr.data(), 3, want.data());
    in.llr[size_t(f.G) + 11] = std::numeric_limits<float>::quiet_NaN();
    std::vector<uint8_t> got(3 * size_t(f.A), 7);
    const transport_block_batch batch =
        decode_block_by_block(*cpu, in.llr.data(), 3, got.data());
    ASSERT_EQ(batch.refused.size(), 1u);
    EXPECT_EQ(batch.refused[0].block, 1u);
    EXPECT_NE(batch.refused[0].reason.find("code block"), std::string::npos)
        << batch.refused[0].reason;
    ASSERT_EQ(batch.results.size(), 3u);
    EXPECT_FALSE(batch.results[1].crc_ok);
    for (size_t t : { size_t(0), size_t(2) }) {
        EXPECT_EQ(batch.results[t].crc_ok, r_want[t].crc_ok) << t;
        EXPECT_TRUE(std::equal(got.begin() + long(t * f.A),
                               got.begin() + long((t + 1) * f.A),
                               want.begin() + long(t * f.A)))
            << t;
    }
    EXPECT_TRUE(std::all_of(got.begin() + f.A,
                            got.begin() + 2 * long(f.A),
                            [](uint8_t b) { return b == 0; }));
}

TEST(transport_block_pipeline, bad_parameters_are_clear_errors)
{
    const transport_block_format f{ 100, 600, 2 };
    // Its decoders must run on CUDA: a CPU decoder is refused (no GPU needed).
    EXPECT_THROW(
        transport_block_pipeline([&] { return code_decoder(f, backend::cpu); }, 2, 4),
        std::invalid_argument);
    EXPECT_THROW(transport_block_pipeline([] { return nullptr; }, 2, 4),
                 std::invalid_argument);
    EXPECT_THROW(
        transport_block_pipeline([&] { return code_decoder(f, backend::cpu); }, 0, 4),
        std::invalid_argument);
    if (!cuda_available())
        return;
    transport_block_pipeline p([&] { return code_decoder(f, backend::cuda); }, 2, 3);
    std::vector<uint8_t> a(4 * size_t(f.A));
    EXPECT_THROW(p.collect(a.data()), std::logic_error); // nothing in flight
    std::vector<float> llr(4 * size_t(f.G), 1.0f);
    EXPECT_THROW(p.submit(llr.data(), 0, 0), std::invalid_argument);
    EXPECT_THROW(p.submit(llr.data(), 4, 0), std::invalid_argument); // > max_blocks
    p.submit(llr.data(), 3, 0);
    p.submit(llr.data(), 1, 1);
    EXPECT_THROW(p.submit(llr.data(), 1, 0), std::logic_error); // both slots in flight
    EXPECT_EQ(p.pending(), 2u);
    EXPECT_EQ(p.oldest_count(), 3u);
    EXPECT_EQ(p.collect(a.data()).results.size(), 3u);
    EXPECT_EQ(p.collect(a.data()).results.size(), 1u);
    EXPECT_EQ(p.pending(), 0u);
}

namespace {

// A code as the pipeline tests see it: decoders on either backend, and
// transport blocks of random bits encoded and sent as BPSK over AWGN at a given
// SNR per coded bit (LLR = 2 y / sigma^2).
struct code_under_test {
    std::string name;
    int A, G;
    std::function<std::unique_ptr<transport_block_code_decoder>(backend)> decoder;
    std::function<void(const uint8_t*, uint8_t*)> encode;

    std::vector<float> noisy(const std::vector<double>& snr_db, uint64_t seed) const
    {
        std::mt19937_64 rng(seed);
        std::normal_distribution<float> normal(0.0f, 1.0f);
        std::vector<uint8_t> a(static_cast<size_t>(A)), coded(static_cast<size_t>(G));
        std::vector<float> llr;
        for (double snr : snr_db) {
            const float sigma2 = float(std::pow(10.0, -snr / 10.0));
            for (uint8_t& bit : a)
                bit = uint8_t(rng() >> 63);
            encode(a.data(), coded.data());
            for (uint8_t c : coded)
                llr.push_back(2.0f *
                              ((c ? -1.0f : 1.0f) + std::sqrt(sigma2) * normal(rng)) /
                              sigma2);
        }
        return llr;
    }
    /// The Shannon limit of this rate on a real Gaussian channel, in dB.
    double limit() const
    {
        return 10.0 * std::log10(std::pow(2.0, 2.0 * double(A) / G) - 1.0);
    }
};

std::vector<code_under_test> pipeline_codes()
{
    std::vector<code_under_test> codes;
    for (const transport_block_format& f : { transport_block_format{ 20000, 30000, 6 },
                                             transport_block_format{ 100, 600, 2 } }) {
        auto encoder = std::make_shared<transport_block_encoder>(f);
        codes.push_back(
            { "turbo A " + std::to_string(f.A),
              f.A,
              f.G,
              [f](backend b) { return code_decoder(f, b); },
              [encoder](const uint8_t* a, uint8_t* g) { encoder->encode(a, g); } });
    }
    nr_transport_block_format nr;
    nr.A = 8424;
    nr.G = 16896;
    nr.Qm = 2;
    auto encoder = std::make_shared<nr_transport_block_encoder>(nr);
    codes.push_back(
        { "ldpc A 8424",
          nr.A,
          nr.G,
          [nr](backend b) {
              return make_transport_block_code_decoder(nr, ldpc_decoder_config{}, b);
          },
          [encoder](const uint8_t* a, uint8_t* g) { encoder->encode(a, g); } });
    return codes;
}

} // namespace

// Batches of changing sizes and redundancy versions with up to `slots` in
// flight, turbo and LDPC: every batch's bits and results equal decode() on the
// CPU, whether its LLRs come from pageable host or device memory (overwritten
// right after submit(): the pipeline keeps its own copy) and its bits go to host
// or device memory; a NaN block fails alone, the batch behind it decodes, and
// the refused batch's slot decodes the next ones; a pipeline destroyed with
// batches in flight waits for them (memcheck sees no use after free).
TEST(transport_block_pipeline, batches_in_flight_decode_as_the_cpu)
{
    MIMO_GPU_REQUIRE_CUDA();
    const uint64_t seed = fresh_seed();
    const size_t max_blocks = 4;
    int passed = 0, failed = 0;
    for (const code_under_test& code : pipeline_codes())
        for (int slots : { 2, 3 }) {
            auto cpu = code.decoder(backend::cpu);
            const size_t A = size_t(code.A), G = size_t(code.G);
            std::unique_ptr<transport_block_pipeline> pipeline =
                std::make_unique<transport_block_pipeline>(
                    [&] { return code.decoder(backend::cuda); }, slots, max_blocks);
            device_array d_llr(max_blocks * G * sizeof(float)), d_a(max_blocks * A);
            std::deque<expected_batch> expected;
            size_t collected = 0;
            const std::string where = code.name + ", " + std::to_string(slots) + " slots";
            auto collect_one = [&] {
                const size_t n = expected.front().results.size();
                const bool to_device = collected % 2 == 1;
                std::vector<uint8_t> got(n * A, 9);
                const transport_block_batch batch =
                    pipeline->collect(to_device ? d_a.as<uint8_t>() : got.data());
                if (to_device)
                    got = download(d_a, n * A);
                const std::string what = where + ", batch " + std::to_string(collected++);
                expect_same_results(batch.results, expected.front().results, what);
                EXPECT_EQ(got, expected.front().bits) << what;
                EXPECT_TRUE(batch.refused.empty()) << what;
                for (const auto& r : batch.results)
                    (r.crc_ok ? passed : failed) += 1;
                expected.pop_front();
            };
            // Submits a batch of blocks at these SNRs above the limit, with rv.
            auto submit = [&](const std::vector<double>& above, int rv, uint64_t s) {
                std::vector<double> snr;
                for (double d : above)
                    snr.push_back(code.limit() + d);
                std::vector<float> llr = code.noisy(snr, s);
                expected_batch want;
                want.bits.resize(above.size() * A);
                cpu->set_redundancy_version(rv);
                want.results = cpu->decode(llr.data(), above.size(), want.bits.data());
                if (pipeline->pending() == pipeline->slots())
                    collect_one();
                if (s % 2 == 0) {
                    upload(d_llr, llr);
                    pipeline->submit(d_llr.as<float>(), above.size(), rv);
                    upload(d_llr, std::vector<float>(llr.size(), NAN));
                } else {
                    pipeline->submit(llr.data(), above.size(), rv);
                    std::fill(llr.begin(), llr.end(), NAN);
                }
                expected.push_back(std::move(want));
            };
            const std::vector<double> spread{ -0.5, 1.5, 3.0, 5.0 };
            const std::vector<size_t> sizes{ 3, 1, 4, 2, 4, 1, 3, 2 };
            for (size_t b = 0; b < sizes.size(); ++b) {
                const int rv = b % 3 == 2 ? 2 : 0;
                std::vector<double> above(spread.begin(),
                                          spread.begin() + long(sizes[b]));
                for (double& d : above)
                    d += rv ? 1.5 : 0.0;
                submit(above, rv, seed + b + 100 * uint64_t(slots));
            }
            while (pipeline->pending() > 0)
                collect_one();

            // A NaN in block 1 of 3: that block fails with zero bits; the batch in
            // flight behind it decodes.
            std::vector<float> bad = code.noisy(
                { code.limit() + 5, code.limit() + 5, code.limit() + 5 }, seed + 7);
            std::vector<uint8_t> want_bad(3 * A);
            cpu->set_redundancy_version(0);
            const auto r_bad = cpu->decode(bad.data(), 3, want_bad.data());
            bad[G + 3] = NAN;
            pipeline->submit(bad.data(), 3, 0);
            submit({ 5.0, 5.0 }, 0, seed + 8);
            std::vector<uint8_t> got(3 * A, 9);
            const transport_block_batch batch = pipeline->collect(got.data());
            ASSERT_EQ(batch.refused.size(), 1u) << where;
            EXPECT_EQ(batch.refused[0].block, 1u) << where;
            EXPECT_FALSE(batch.results.at(1).crc_ok) << where;
            for (size_t t : { size_t(0), size_t(2) })
                EXPECT_EQ(batch.results[t].crc_ok, r_bad[t].crc_ok) << where << " " << t;
            std::fill(want_bad.begin() + long(A), want_bad.begin() + 2 * long(A), 0);
            EXPECT_EQ(got, want_bad) << where;
            // The refused batch's slot, and every other, decodes on.
            for (size_t b = 0; b < size_t(slots) + 1; ++b)
                submit({ 1.5, 5.0 }, 0, seed + 20 + b);
            while (pipeline->pending() > 0)
                collect_one();
            // Destroyed with batches in flight.
            submit({ 3.0 }, 0, seed + 30);
            submit({ 3.0, 3.0 }, 0, seed + 31);
            pipeline.reset();
        }
    std::printf("[ compared ] %d transport blocks passed, %d failed\n", passed, failed);
    EXPECT_GT(passed, 0); // the SNRs must leave both outcomes
    EXPECT_GT(failed, 0);
}
