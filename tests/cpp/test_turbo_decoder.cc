// Turbo decoder: encoder round trips, error rates that improve where they must,
// early termination, transport blocks, bad input; CUDA against CPU (skips
// without a GPU). BPSK over AWGN: y = 1 - 2b + n, LLR = 2 y / sigma^2.
#include "test_support.h"

#include <mimo_gpu/lte_turbo_code.h>
#include <mimo_gpu/turbo_decoder.h>

using namespace mimo_gpu;
using namespace mimo_gpu_test;

namespace {

/// Code blocks of sizes K with random bits, encoded, and their BPSK LLRs at Eb/N0.
struct coded_batch {
    std::vector<int> K;
    std::vector<uint8_t> bits; ///< K[b] each, back to back
    std::vector<float> llr;    ///< 3 (K[b] + 4) each, [d0 | d1 | d2]

    coded_batch(std::vector<int> sizes, double ebn0_db, uint64_t seed, bool with_crc24b = false) : K(std::move(sizes))
    {
        std::mt19937_64 rng(seed);
        std::normal_distribution<float> normal(0.0f, 1.0f);
        for (int k : K) {
            std::vector<uint8_t> c(k), d0(k + 4), d1(k + 4), d2(k + 4);
            for (int i = 0; i < k; ++i)
                c[i] = uint8_t(rng() >> 63);
            if (with_crc24b)
                crc_attach(crc_type::crc24b, c.data(), size_t(k - 24), c.data());
            turbo_encode(c.data(), k, d0.data(), d1.data(), d2.data());
            bits.insert(bits.end(), c.begin(), c.end());
            const double rate = double(k) / (3.0 * (k + 4));
            const float sigma2 = float(1.0 / (2.0 * rate * std::pow(10.0, ebn0_db / 10.0)));
            for (const auto* d : {&d0, &d1, &d2})
                for (uint8_t b : *d)
                    llr.push_back(2.0f * ((b ? -1.0f : 1.0f) + std::sqrt(sigma2) * normal(rng)) / sigma2);
        }
    }
};

size_t bit_errors(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b)
{
    size_t e = 0;
    for (size_t i = 0; i < a.size(); ++i)
        e += a[i] != b[i];
    return e;
}

std::vector<uint8_t> decode_bits(const coded_batch& cb, turbo_decoder_config cfg, backend be = backend::cpu,
                                 std::vector<turbo_block_result>* results = nullptr)
{
    turbo_decoder dec(cfg, be);
    std::vector<uint8_t> out(turbo_decoder::output_bits(cb.K), 9);
    auto r = dec.decode(cb.K, cb.llr.data(), out.data());
    if (results)
        *results = r;
    return out;
}

turbo_decoder_config config(map_algorithm a, int iterations = 6, int window = 64)
{
    turbo_decoder_config c;
    c.algorithm = a;
    c.iterations = iterations;
    c.window = window;
    return c;
}

} // namespace

TEST(turbo_decoder, every_block_size_decodes_at_high_snr)
{
    coded_batch cb(qpp_interleaver::block_sizes(), 4.0, fresh_seed());
    for (map_algorithm a : {map_algorithm::max_log_map, map_algorithm::log_map})
        EXPECT_EQ(bit_errors(decode_bits(cb, config(a, 4)), cb.bits), 0u);
}

TEST(turbo_decoder, iterations_and_log_map_lower_the_error_rate_near_the_cliff)
{
    coded_batch cb(std::vector<int>(12, 6144), 0.7, fresh_seed());
    const size_t one = bit_errors(decode_bits(cb, config(map_algorithm::max_log_map, 1)), cb.bits);
    const size_t six = bit_errors(decode_bits(cb, config(map_algorithm::max_log_map, 6)), cb.bits);
    const size_t six_log = bit_errors(decode_bits(cb, config(map_algorithm::log_map, 6)), cb.bits);
    std::printf("[ measured ] K=6144 Eb/N0 0.7 dB, %zu bits: max-log 1 it %zu errors, 6 it %zu; log-MAP 6 it %zu\n",
                cb.bits.size(), one, six, six_log);
    EXPECT_LT(six, one / 4);
    EXPECT_LE(six_log, six);
}

TEST(turbo_decoder, one_window_and_parallel_windows_both_work)
{
    coded_batch cb(std::vector<int>(6, 6144), 1.0, fresh_seed());
    const size_t p1 = bit_errors(decode_bits(cb, config(map_algorithm::max_log_map, 6, 1 << 20)), cb.bits);
    const size_t p96 = bit_errors(decode_bits(cb, config(map_algorithm::max_log_map, 6, 64)), cb.bits);
    const size_t p384 = bit_errors(decode_bits(cb, config(map_algorithm::max_log_map, 6, 16)), cb.bits);
    std::printf("[ measured ] K=6144 Eb/N0 1.0 dB: errors P=1 %zu, P=96 %zu, P=384 %zu of %zu\n", p1, p96, p384,
                cb.bits.size());
    EXPECT_LE(p1, 20u);
    EXPECT_LE(p96, 40u);
}

TEST(turbo_decoder, early_termination_stops_when_the_crc_passes)
{
    coded_batch clean({6144, 1024, 40}, 6.0, fresh_seed(), true);
    auto cfg = config(map_algorithm::max_log_map, 8);
    cfg.early_termination = crc_type::crc24b;
    std::vector<turbo_block_result> r;
    EXPECT_EQ(bit_errors(decode_bits(clean, cfg, backend::cpu, &r), clean.bits), 0u);
    for (const auto& b : r) {
        EXPECT_TRUE(b.crc_ok);
        EXPECT_LE(b.iterations, 2); // at 6 dB the CRC passes after one iteration, rarely two
    }
    coded_batch noise({1024}, -3.0, fresh_seed(), true);
    decode_bits(noise, cfg, backend::cpu, &r);
    EXPECT_FALSE(r[0].crc_ok);
    EXPECT_EQ(r[0].iterations, 8);
}

TEST(turbo_decoder, app_llrs_are_consistent_with_the_hard_decisions)
{
    coded_batch cb({512, 2048}, 1.5, fresh_seed());
    turbo_decoder dec(config(map_algorithm::log_map), backend::cpu);
    std::vector<uint8_t> bits(2560);
    std::vector<float> app(2560, NAN);
    dec.decode(cb.K, cb.llr.data(), bits.data(), app.data());
    for (size_t i = 0; i < bits.size(); ++i) {
        ASSERT_TRUE(std::isfinite(app[i]));
        ASSERT_EQ(bits[i], app[i] < 0.0f ? 1 : 0);
    }
}

TEST(turbo_decoder, bad_input_is_rejected)
{
    turbo_decoder_config bad = config(map_algorithm::max_log_map, 0);
    EXPECT_THROW(turbo_decoder(bad, backend::cpu), std::invalid_argument);
    bad = config(map_algorithm::max_log_map);
    bad.extrinsic_scale = 1.5f;
    EXPECT_THROW(turbo_decoder(bad, backend::cpu), std::invalid_argument);
    turbo_decoder dec(config(map_algorithm::max_log_map), backend::cpu);
    std::vector<float> llr(3 * 45, 1.0f);
    std::vector<uint8_t> bits(41);
    try {
        dec.decode({41}, llr.data(), bits.data());
        FAIL() << "K = 41 accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("41"), std::string::npos) << e.what();
    }
    coded_batch cb({40, 48, 56}, 3.0, 5);
    cb.llr[3 * 44 + 7] = NAN; // block 1
    std::vector<uint8_t> out(144);
    try {
        dec.decode(cb.K, cb.llr.data(), out.data());
        FAIL() << "NaN accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("code block 1 "), std::string::npos) << e.what();
    }
}

TEST(transport_block, encode_then_decode_with_crc_report)
{
    const uint64_t seed = fresh_seed();
    std::mt19937_64 rng(seed);
    // (A, G, Qm): one code block with filler, several code blocks, repetition and puncturing.
    for (transport_block_format f : {transport_block_format{100, 600, 2}, transport_block_format{7000, 18000, 4},
                                     transport_block_format{20000, 30000, 6}, transport_block_format{40, 1200, 2}}) {
        transport_block_encoder enc(f);
        transport_block_decoder dec(f, config(map_algorithm::max_log_map, 8), backend::cpu);
        const size_t count = 3;
        std::vector<uint8_t> a(count * f.A), coded(f.G), decoded(count * f.A);
        std::vector<float> llr(count * f.G);
        for (auto& b : a)
            b = uint8_t(rng() >> 63);
        for (size_t t = 0; t < count; ++t) {
            enc.encode(a.data() + t * f.A, coded.data());
            for (int i = 0; i < f.G; ++i)
                llr[t * f.G + i] = coded[i] ? -6.0f : 6.0f;
        }
        // Transport block 2 is noise. (All-zero LLRs would not do: they decode to the
        // all-zero word, whose CRC, with the register starting at 0, passes.)
        for (auto it = llr.begin() + 2 * f.G; it != llr.end(); ++it)
            *it = (rng() >> 63) ? 3.0f : -3.0f;
        const auto r = dec.decode(llr.data(), count, decoded.data());
        const auto seg = f.segmentation();
        for (size_t t = 0; t < 2; ++t) {
            EXPECT_TRUE(r[t].crc_ok) << "A=" << f.A;
            EXPECT_EQ(r[t].code_blocks, seg.C);
            EXPECT_EQ(r[t].code_blocks_crc_ok, seg.C);
            EXPECT_TRUE(std::equal(a.begin() + t * f.A, a.begin() + (t + 1) * f.A, decoded.begin() + t * f.A));
        }
        EXPECT_FALSE(r[2].crc_ok) << "a transport block of noise must fail its CRC";
    }
}

// A decoder keeps its batch plan (and the CUDA engine its uploaded descriptors)
// while K stays the same: a reused decoder must follow changes of K, of the
// LLRs under an unchanged K, and recover after a rejected batch.
TEST(turbo_decoder, reused_across_changing_batches)
{
    const uint64_t seed = fresh_seed();
    const std::vector<coded_batch> batches = {
        coded_batch({6144, 40, 1056}, 0.9, seed, true),      coded_batch({6144, 40, 1056}, 0.9, seed + 1, true),
        coded_batch({512, 512, 3200, 104}, 0.9, seed + 2, true), coded_batch({6144, 40, 1056}, 0.9, seed + 3, true),
        coded_batch({6144}, 0.9, seed + 4, true)};
    std::vector<backend> backends = {backend::cpu};
    if (cuda_available())
        backends.push_back(backend::cuda);
    for (crc_type et : {crc_type::none, crc_type::crc24b}) {
        auto cfg = config(map_algorithm::max_log_map, 4, 64);
        cfg.early_termination = et;
        for (backend be : backends) {
            turbo_decoder reused(cfg, be);
            for (size_t i = 0; i < batches.size(); ++i) {
                const coded_batch& cb = batches[i];
                const size_t n = turbo_decoder::output_bits(cb.K);
                std::vector<uint8_t> expected(n), got(n, 7);
                std::vector<float> expected_app(n), got_app(n, NAN);
                std::vector<turbo_block_result> r_expected =
                    turbo_decoder(cfg, backend::cpu).decode(cb.K, cb.llr.data(), expected.data(), expected_app.data());
                std::vector<turbo_block_result> r_got = reused.decode(cb.K, cb.llr.data(), got.data(), got_app.data());
                ASSERT_EQ(got, expected) << to_string(be) << " batch " << i << " crc " << int(et);
                ASSERT_EQ(got_app, expected_app) << to_string(be) << " batch " << i;
                for (size_t b = 0; b < cb.K.size(); ++b) {
                    ASSERT_EQ(r_got[b].iterations, r_expected[b].iterations) << to_string(be) << " batch " << i;
                    ASSERT_EQ(r_got[b].crc_ok, r_expected[b].crc_ok) << to_string(be) << " batch " << i;
                }
                if (i == 2) { // a rejected batch in between (an unsupported K) changes nothing
                    const std::vector<int> bad_K = {6144, 41};
                    std::vector<float> llr(turbo_decoder::input_floats({6144, 44}), 1.0f);
                    std::vector<uint8_t> out(6144 + 41);
                    EXPECT_THROW(reused.decode(bad_K, llr.data(), out.data()), std::invalid_argument);
                }
            }
        }
    }
}

// ---- CUDA against CPU --------------------------------------------------------

TEST(turbo_cuda, decodes_like_the_cpu)
{
    if (!cuda_available())
        GTEST_SKIP() << "no usable CUDA device: " << cuda_unavailable_reason();
    const uint64_t seed = fresh_seed();
    std::vector<int> K;
    std::mt19937_64 rng(seed);
    const auto& sizes = qpp_interleaver::block_sizes();
    for (int i = 0; i < 68; ++i)
        K.push_back(sizes[rng() % sizes.size()]);
    K.push_back(6144);
    K.push_back(40);
    for (double ebn0 : {0.6, 1.2}) {
        coded_batch cb(K, ebn0, seed + 1, true);
        for (map_algorithm a : {map_algorithm::max_log_map, map_algorithm::log_map})
            for (int window : {32, 64, 1 << 20})
                for (crc_type et : {crc_type::none, crc_type::crc24b}) {
                    auto cfg = config(a, 6, window);
                    cfg.early_termination = et;
                    turbo_decoder cpu(cfg, backend::cpu), gpu(cfg, backend::cuda);
                    const size_t n = turbo_decoder::output_bits(K);
                    std::vector<uint8_t> b_cpu(n), b_gpu(n, 7);
                    std::vector<float> l_cpu(n), l_gpu(n, NAN);
                    const auto r_cpu = cpu.decode(K, cb.llr.data(), b_cpu.data(), l_cpu.data());
                    const auto r_gpu = gpu.decode(K, cb.llr.data(), b_gpu.data(), l_gpu.data());
                    ASSERT_EQ(b_gpu, b_cpu) << "Eb/N0 " << ebn0 << " window " << window;
                    size_t identical = 0;
                    for (size_t i = 0; i < n; ++i) {
                        ASSERT_NEAR(l_gpu[i], l_cpu[i], 1e-3 * std::abs(l_cpu[i]) + 1e-4) << i;
                        identical += l_gpu[i] == l_cpu[i];
                    }
                    for (size_t b = 0; b < K.size(); ++b) {
                        ASSERT_EQ(r_gpu[b].iterations, r_cpu[b].iterations);
                        ASSERT_EQ(r_gpu[b].crc_ok, r_cpu[b].crc_ok);
                    }
                    std::printf("[ compared ] %s window %d crc %d Eb/N0 %.1f: %zu bits equal, %zu/%zu APP LLRs "
                                "bit-identical, %zu errors\n",
                                a == map_algorithm::log_map ? "log-MAP" : "max-log-MAP", window, int(et), ebn0, n,
                                identical, n, bit_errors(b_gpu, cb.bits));
                }
    }
}

TEST(turbo_cuda, bad_input_is_reported_like_on_the_cpu)
{
    if (!cuda_available())
        GTEST_SKIP() << "no usable CUDA device: " << cuda_unavailable_reason();
    turbo_decoder gpu(config(map_algorithm::max_log_map), backend::cuda);
    coded_batch cb({40, 6144, 56}, 3.0, 5);
    cb.llr[3 * 44 + 3 * 6148 + 9] = INFINITY; // block 2
    std::vector<uint8_t> out(6240);
    try {
        gpu.decode(cb.K, cb.llr.data(), out.data());
        FAIL() << "Inf accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("code block 2 "), std::string::npos) << e.what();
    }
    coded_batch ok({40, 6144, 56}, 3.0, 5);
    EXPECT_NO_THROW(gpu.decode(ok.K, ok.llr.data(), out.data()));
    // A larger batch: the block is named by its place in the batch.
    coded_batch big(std::vector<int>(70, 40), 3.0, 9);
    big.llr[66 * 3 * 44 + 5] = NAN;
    std::vector<uint8_t> big_out(70 * 40);
    try {
        gpu.decode(big.K, big.llr.data(), big_out.data());
        FAIL() << "NaN accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("code block 66 "), std::string::npos) << e.what();
    }
    coded_batch big_ok(std::vector<int>(70, 40), 3.0, 9);
    EXPECT_NO_THROW(gpu.decode(big_ok.K, big_ok.llr.data(), big_out.data()));
}

// Small enough for compute-sanitizer's racecheck: log-MAP with windows that fit
// the state-parallel (shared memory) kernel, mixed K, against the CPU.
TEST(turbo_cuda, state_parallel_log_map_small_batch)
{
    if (!cuda_available())
        GTEST_SKIP() << "no usable CUDA device: " << cuda_unavailable_reason();
    coded_batch cb({40, 1056, 6144, 104}, 0.8, fresh_seed(), true);
    for (int window : {32, 64, 100}) {
        auto cfg = config(map_algorithm::log_map, 3, window);
        cfg.early_termination = crc_type::crc24b;
        turbo_decoder cpu(cfg, backend::cpu), gpu(cfg, backend::cuda);
        const size_t n = turbo_decoder::output_bits(cb.K);
        std::vector<uint8_t> a(n), b(n, 7);
        std::vector<float> la(n), lb(n, NAN);
        cpu.decode(cb.K, cb.llr.data(), a.data(), la.data());
        gpu.decode(cb.K, cb.llr.data(), b.data(), lb.data());
        ASSERT_EQ(a, b) << "window " << window;
        for (size_t i = 0; i < n; ++i)
            ASSERT_EQ(la[i], lb[i]) << "window " << window << " bit " << i;
    }
}
