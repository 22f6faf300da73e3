// The NR transport-block chain around LDPC (38.212 7.2, 5.2.2, 5.4.2):
// segmentation against cases worked by hand from the standard's rules, the
// rate-matched sizes, k0, bit selection and interleaving written plainly here,
// the soft-buffer inverse, the code blocks' CRCs, and bad formats.
#include "test_support.h"

#include <mimo_gpu/device_memory.h>
#include <mimo_gpu/lte_turbo_code.h>
#include <mimo_gpu/nr_transport_block.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

using namespace mimo_gpu;

namespace {

struct expected_segmentation {
    nr_transport_block_format format;
    int tb_crc, base_graph, C, K_prime, Zc, K, F, N;
};

std::vector<uint8_t> random_bits(size_t n, std::mt19937_64& rng)
{
    std::vector<uint8_t> b(n);
    for (auto& x : b)
        x = uint8_t(rng() & 1);
    return b;
}

} // namespace

TEST(nr_transport_block, segmentation_follows_38_212)
{
    // Worked from 7.2.1 (CRC), 7.2.2 (base graph) and 5.2.2 (segmentation):
    const expected_segmentation cases[] = {
        // A = 100, R 0.17: BG2; B = 116 <= 192 so Kb = 6; 6 * 20 >= 116 > 6 * 18.
        { { 100, 600 }, 16, 2, 1, 116, 20, 200, 84, 1000 },
        // A = 3824 at R ~0.5: BG2 (A <= 3824, R <= 0.67); B = 3840 fills one block.
        { { 3824, 7680 }, 16, 2, 1, 3840, 384, 3840, 0, 19200 },
        // A = 8424 at R ~0.5: BG1, CRC24A, B = 8448 = Kcb: one block of Zc = 384.
        { { 8424, 16896 }, 24, 1, 1, 8448, 384, 8448, 0, 25344 },
        // A = 8456: B = 8480 > 8448: 2 blocks, B' = 8528, K' = 4264, 22 Zc >= 4264: 208.
        { { 8456, 16896 }, 24, 1, 2, 4264, 208, 4576, 312, 13728 },
        // A = 3840 at R 0.2: BG2 (R <= 0.25), CRC24A, B = 3864 > 3840: 2 blocks of
        // K' = 1956, Kb = 10, 10 Zc >= 1956: 208.
        { { 3840, 19200 }, 24, 2, 2, 1956, 208, 2080, 124, 10400 },
    };
    for (const auto& k : cases) {
        const nr_segmentation s = k.format.segmentation();
        const std::string what = "A " + std::to_string(k.format.A);
        EXPECT_EQ(s.tb_crc, k.tb_crc) << what;
        EXPECT_EQ(s.B, k.format.A + k.tb_crc) << what;
        EXPECT_EQ(s.base_graph, k.base_graph) << what;
        EXPECT_EQ(s.C, k.C) << what;
        EXPECT_EQ(s.cb_crc, k.C > 1 ? 24 : 0) << what;
        EXPECT_EQ(s.K_prime, k.K_prime) << what;
        EXPECT_EQ(s.Zc, k.Zc) << what;
        EXPECT_EQ(s.K, k.K) << what;
        EXPECT_EQ(s.F, k.F) << what;
        EXPECT_EQ(s.N, k.N) << what;
        EXPECT_NO_THROW(k.format.validate()) << what;
    }
    // The base graph can be forced; R can be given.
    nr_transport_block_format f{ 1000, 2000 };
    EXPECT_EQ(f.segmentation().base_graph, 2); // A <= 3824, R 0.5
    f.code_rate = 0.8;
    EXPECT_EQ(f.segmentation().base_graph, 1);
    f.base_graph = 2;
    EXPECT_EQ(f.segmentation().base_graph, 2);
}

TEST(nr_transport_block, every_size_picks_the_smallest_lifting_size)
{
    // For every A up to 20000 in steps, the chosen Zc is the smallest that holds K'.
    for (int A = 1; A <= 20000; A += 37) {
        const nr_transport_block_format f{ A, 3 * A + 120 };
        nr_segmentation s;
        try {
            s = f.segmentation();
        } catch (const std::invalid_argument&) {
            continue; // not a 38.214 size for its code block count
        }
        ASSERT_GE(s.Kb * s.Zc, s.K_prime) << A;
        for (int z : ldpc_lifting_sizes()) {
            if (z < s.Zc) {
                ASSERT_LT(s.Kb * z, s.K_prime) << A << " Zc " << z;
            }
        }
        ASSERT_EQ(s.K, s.code().K()) << A;
        ASSERT_EQ(s.N, s.code().N()) << A;
        ASSERT_EQ(s.K_prime * s.C, s.B + s.C * s.cb_crc) << A;
    }
}

TEST(nr_transport_block, rate_matched_sizes_share_g)
{
    for (int NL : { 1, 2, 4 })
        for (int Qm : { 2, 4, 6, 8 }) {
            // A = 39936 on BG1: B = 39960 in 5 code blocks of K' = 8016.
            nr_transport_block_format f{ 39936, NL * Qm * 6001, Qm, NL };
            f.base_graph = 1;
            const std::vector<int> E = f.rate_matched_sizes();
            ASSERT_EQ(int(E.size()), f.segmentation().C);
            int sum = 0;
            for (int e : E) {
                ASSERT_EQ(e % (NL * Qm), 0);
                sum += e;
            }
            EXPECT_EQ(sum, f.G);
            const auto [lo, hi] = std::minmax_element(E.begin(), E.end());
            EXPECT_LE(*hi - *lo, NL * Qm);
            EXPECT_TRUE(std::is_sorted(E.begin(), E.end())); // the larger ones last
        }
}

TEST(nr_transport_block, k0_bit_selection_and_interleaving_follow_5_4_2)
{
    std::mt19937_64 rng(mimo_gpu_test::fresh_seed());
    for (const nr_transport_block_format& f :
         { nr_transport_block_format{ 100, 600, 2 },
           nr_transport_block_format{ 8456, 16896, 4 },
           nr_transport_block_format{ 300, 120, 6 } }) {
        const nr_segmentation s = f.segmentation();
        const int num[2][4] = { { 0, 17, 33, 56 }, { 0, 13, 25, 43 } };
        for (int E : { 6 * 7, 6 * 300, 6 * 5000 }) {
            if (E % f.Qm != 0)
                continue;
            const nr_rate_matcher rm(s, E, f.Qm);
            const std::vector<uint8_t> d = random_bits(size_t(s.N), rng);
            for (int rv = 0; rv < 4; ++rv) {
                // Table 5.4.2.1-2 with N_cb = N is num / 66 (or 50) of N, in whole Zc.
                const int k0 = num[s.base_graph - 1][rv] * s.Zc;
                ASSERT_EQ(rm.k0(rv), k0);
                // e: from k0 on around the buffer, filler skipped; f by the interleaver.
                std::vector<uint8_t> e;
                for (int j = 0; int(e.size()) < E; ++j) {
                    const int at = (k0 + j) % s.N;
                    if (at < s.K_prime - 2 * s.Zc || at >= s.K - 2 * s.Zc)
                        e.push_back(d[size_t(at)]);
                }
                std::vector<uint8_t> want(static_cast<size_t>(E)),
                    got(static_cast<size_t>(E));
                for (int j = 0; j < E / f.Qm; ++j)
                    for (int i = 0; i < f.Qm; ++i)
                        want[size_t(i + j * f.Qm)] = e[size_t(i * (E / f.Qm) + j)];
                rm.match(d.data(), rv, got.data());
                ASSERT_EQ(got, want) << "A " << f.A << " E " << E << " rv " << rv;
                // The inverse: each sent bit's LLRs add up in its buffer position.
                std::vector<float> llr(static_cast<size_t>(E)), soft(size_t(s.N), 0.0f);
                for (int k = 0; k < E; ++k)
                    llr[size_t(k)] = got[size_t(k)] ? -1.0f : 1.0f;
                rm.dematch(llr.data(), rv, soft.data());
                double total = 0;
                for (int k = 0; k < s.N; ++k) {
                    if (rm.is_filler(k)) {
                        ASSERT_EQ(soft[size_t(k)], 0.0f);
                    } else if (soft[size_t(k)] != 0.0f) {
                        ASSERT_EQ(soft[size_t(k)] < 0, d[size_t(k)] == 1) << k;
                    }
                    total += std::abs(soft[size_t(k)]);
                }
                EXPECT_EQ(total, double(E)); // every received LLR landed once
            }
        }
    }
}

TEST(nr_transport_block, code_blocks_carry_the_crcs_and_filler)
{
    std::mt19937_64 rng(mimo_gpu_test::fresh_seed());
    for (const nr_transport_block_format& f :
         { nr_transport_block_format{ 100, 600 },
           nr_transport_block_format{ 8456, 16896, 4 },
           nr_transport_block_format{ 3840, 19200 } }) {
        const nr_transport_block_encoder enc(f);
        const nr_segmentation& s = enc.segmentation();
        const std::vector<uint8_t> a = random_bits(size_t(f.A), rng);
        const std::vector<uint8_t> c = enc.code_blocks(a.data());
        std::vector<uint8_t> b;
        for (int r = 0; r < s.C; ++r) {
            const uint8_t* block = c.data() + size_t(r) * s.K;
            if (s.C > 1) {
                EXPECT_TRUE(crc_check(crc_type::crc24b, block, size_t(s.K_prime)));
            }
            b.insert(b.end(), block, block + (s.K_prime - s.cb_crc));
            for (int k = s.K_prime; k < s.K; ++k)
                ASSERT_EQ(block[k], 0) << "filler";
        }
        ASSERT_EQ(int(b.size()), s.B);
        EXPECT_TRUE(std::equal(a.begin(), a.end(), b.begin()));
        EXPECT_TRUE(crc_check(
            s.tb_crc == 24 ? crc_type::crc24a : crc_type::crc16, b.data(), b.size()));
        std::vector<uint8_t> g(size_t(f.G), 9);
        enc.encode(a.data(), g.data());
        for (uint8_t bit : g)
            ASSERT_LE(bit, 1);
        // Systematic at rv 0: the first rate-matched bits of block 0 (Qm = 1 view)
        // are its code block bits from 2 Zc on.
        nr_transport_block_format one = f;
        one.Qm = 1;
        std::vector<uint8_t> g1(size_t(f.G));
        nr_transport_block_encoder(one).encode(a.data(), g1.data());
        for (int k = 0; k < std::min(s.K_prime - 2 * s.Zc, 64); ++k)
            ASSERT_EQ(g1[size_t(k)], c[size_t(2 * s.Zc + k)]) << k;
    }
}

TEST(nr_transport_block, bad_formats_are_clear_errors)
{
    auto message = [](nr_transport_block_format f) {
        try {
            f.validate();
        } catch (const std::invalid_argument& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    EXPECT_NE(message({ 0, 600 }).find("A = 0"), std::string::npos);
    EXPECT_NE(message({ 100, 0 }).find("G = 0"), std::string::npos);
    EXPECT_NE(message({ 100, 601, 2 }).find("multiple of NL * Qm"), std::string::npos);
    EXPECT_NE(message({ 100, 600, 3 }).find("Qm = 3"), std::string::npos);
    EXPECT_NE(message({ 100, 600, 2, 5 }).find("NL = 5"), std::string::npos);
    EXPECT_NE(message({ 100, 600, 2, 1, 4 }).find("rv = 4"), std::string::npos);
    EXPECT_NE(message({ 8457, 16896 }).find("38.214"), std::string::npos);
    EXPECT_NE(message({ 39936, 8 }).find("fewer than one symbol"), std::string::npos);
    nr_transport_block_format forced{ 100, 600 };
    forced.base_graph = 3;
    EXPECT_NE(message(forced).find("base_graph = 3"), std::string::npos);
    forced.base_graph = 0;
    forced.code_rate = 1.5;
    EXPECT_NE(message(forced).find("code_rate"), std::string::npos);
    EXPECT_THROW(nr_transport_block_encoder(nr_transport_block_format{ 100, 601 }),
                 std::invalid_argument);
}

namespace {

/// count transport blocks of f: random bits, encoded, BPSK per coded bit over
/// AWGN at snr_db = 1/sigma^2 (a huge SNR: clean), channel LLRs 2 y / sigma^2.
struct sent_blocks {
    std::vector<uint8_t> a;
    std::vector<float> llr;
    sent_blocks(const nr_transport_block_format& f,
                size_t count,
                double snr_db,
                std::mt19937_64& rng)
        : a(count * size_t(f.A)), llr(count * size_t(f.G))
    {
        for (auto& b : a)
            b = uint8_t(rng() & 1);
        const nr_transport_block_encoder enc(f);
        std::vector<uint8_t> g(size_t(f.G));
        const double sigma2 = std::pow(10.0, -snr_db / 10.0);
        std::normal_distribution<double> noise(0.0, std::sqrt(sigma2));
        for (size_t t = 0; t < count; ++t) {
            enc.encode(a.data() + t * size_t(f.A), g.data());
            for (size_t i = 0; i < g.size(); ++i)
                llr[t * size_t(f.G) + i] =
                    float(2.0 * ((g[i] ? -1.0 : 1.0) + noise(rng)) / sigma2);
        }
    }
};

} // namespace

TEST(nr_transport_block, decoder_round_trips_every_format_rv_and_qm)
{
    std::mt19937_64 rng(mimo_gpu_test::fresh_seed());
    int compared = 0;
    for (const nr_transport_block_format& base :
         { nr_transport_block_format{ 100, 600, 2 },
           nr_transport_block_format{ 8456, 16896, 4 },
           nr_transport_block_format{ 3840, 19200, 6 },
           nr_transport_block_format{ 1000, 1512, 8 } })
        for (int rv = 0; rv < 4; ++rv) {
            // rv 0 and 3 are self-decodable (they start at or near the systematic
            // bits); rv 1 and 2 skip part of them, so they are tested with a G that
            // wraps the whole circular buffer (the base graph kept).
            nr_transport_block_format f = base;
            f.base_graph = base.segmentation().base_graph;
            f.rv = rv;
            const nr_segmentation seg = f.segmentation();
            const int unit = f.NL * f.Qm;
            if (rv == 1 || rv == 2)
                f.G = (seg.C * seg.N + unit - 1) / unit * unit + seg.C * unit;
            const sent_blocks sent(f, 3, 12.0, rng);
            nr_transport_block_decoder dec(f);
            std::vector<uint8_t> a(sent.a.size(), 9);
            const auto r = dec.decode(sent.llr.data(), 3, a.data());
            const std::string what =
                "A " + std::to_string(f.A) + " rv " + std::to_string(rv);
            for (const auto& x : r) {
                EXPECT_TRUE(x.crc_ok) << what;
                EXPECT_EQ(x.code_blocks, dec.segmentation().C) << what;
                EXPECT_EQ(x.code_blocks_crc_ok, x.code_blocks) << what;
                EXPECT_EQ(x.code_blocks_no_information, 0) << what;
                EXPECT_GE(x.max_iterations, 1) << what;
            }
            EXPECT_EQ(a, sent.a) << what;
            ++compared;
        }
    EXPECT_EQ(compared, 16);
}

TEST(nr_transport_block, garbage_never_passes_the_crc)
{
    std::mt19937_64 rng(mimo_gpu_test::fresh_seed());
    const nr_transport_block_format f{ 8456, 16896, 4 };
    nr_transport_block_decoder dec(f);
    std::vector<uint8_t> a(size_t(f.A));
    // All zero: no information (it would decode to the all-zero codeword).
    std::vector<float> zero(size_t(f.G), 0.0f);
    auto r = dec.decode(zero.data(), 1, a.data());
    EXPECT_FALSE(r[0].crc_ok);
    EXPECT_EQ(r[0].code_blocks_no_information, r[0].code_blocks);
    // Noise without a signal, 100 blocks: none passes.
    std::normal_distribution<float> noise(0.0f, 3.0f);
    int passed = 0;
    for (int t = 0; t < 100; ++t) {
        std::vector<float> llr(size_t(f.G));
        for (auto& v : llr)
            v = noise(rng);
        passed += dec.decode(llr.data(), 1, a.data())[0].crc_ok;
    }
    EXPECT_EQ(passed, 0);
    // Non-finite: refused, naming the transport block.
    std::vector<float> two(2 * size_t(f.G), 1.0f);
    two[size_t(f.G) + 7] = INFINITY;
    std::vector<uint8_t> a2(2 * size_t(f.A));
    try {
        dec.decode(two.data(), 2, a2.data());
        FAIL() << "an infinite LLR was decoded";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("transport block 1"), std::string::npos);
    }
    EXPECT_THROW(dec.set_redundancy_version(4), std::invalid_argument);
}

TEST(nr_transport_block, harq_soft_combining_lowers_the_block_error_rate)
{
    // Rate 0.92 on BG1 (A = 3840 + 24 CRC on G = 4224), QPSK as two BPSK bits,
    // at an SNR where one transmission mostly fails: retransmissions with
    // rv 2, 3, 1 add parity (incremental redundancy) into each block's soft
    // buffer; rv 0 again (Chase combining) adds energy only.
    std::mt19937_64 rng(mimo_gpu_test::fresh_seed());
    nr_transport_block_format f{ 3840, 4224, 2 };
    f.base_graph = 1;
    const size_t count = 20;
    nr_transport_block_decoder dec(f);
    const size_t S = dec.soft_buffer_size();
    std::vector<float> soft(count * S, 0.0f), chase(count * S, 0.0f);
    std::vector<uint8_t> a(count * size_t(f.A));
    std::vector<uint8_t> info(count * size_t(f.A));
    for (auto& b : info)
        b = uint8_t(rng() & 1);
    auto errors_after = [&](int rv, std::vector<float>& buffers) {
        nr_transport_block_format fr = f;
        fr.rv = rv;
        const nr_transport_block_encoder enc(fr);
        const double sigma2 = std::pow(10.0, -3.0 / 10.0); // 3 dB
        std::normal_distribution<double> noise(0.0, std::sqrt(sigma2));
        std::vector<float> llr(count * size_t(f.G));
        std::vector<uint8_t> g(size_t(f.G));
        for (size_t t = 0; t < count; ++t) {
            enc.encode(info.data() + t * size_t(f.A), g.data());
            for (size_t i = 0; i < g.size(); ++i)
                llr[t * size_t(f.G) + i] =
                    float(2.0 * ((g[i] ? -1.0 : 1.0) + noise(rng)) / sigma2);
        }
        dec.set_redundancy_version(rv);
        const auto r = dec.decode(llr.data(), count, a.data(), buffers.data());
        int e = 0;
        for (size_t t = 0; t < count; ++t)
            e += !(r[t].crc_ok && std::equal(a.begin() + t * f.A,
                                             a.begin() + (t + 1) * f.A,
                                             info.begin() + t * f.A));
        return e;
    };
    const int one = errors_after(0, soft);
    const int two = errors_after(2, soft);
    errors_after(3, soft);
    const int four = errors_after(1, soft);
    const int chase_one = errors_after(0, chase);
    const int chase_two = errors_after(0, chase);
    std::printf("[ measured ] HARQ, %zu blocks: IR 1 / 2 / 4 transmissions %d / %d / %d "
                "errors; Chase 1 / 2: %d / %d\n",
                count,
                one,
                two,
                four,
                chase_one,
                chase_two);
    EXPECT_GE(one, int(count) / 2);
    EXPECT_LT(two, one);
    EXPECT_LE(four, two);
    EXPECT_EQ(four, 0);
    EXPECT_LE(chase_two, chase_one);
}

TEST(nr_transport_block, extrinsic_llrs_point_to_the_sent_bits)
{
    // For an iterative receiver: each sent bit's a-posteriori LLR less its own
    // received LLR. At a moderate SNR, extrinsic + received decides the coded
    // bits better than the received LLRs alone; the extrinsic alone (what the
    // code adds) points to the sent bit for most bits; a block without
    // information gives 0.
    std::mt19937_64 rng(mimo_gpu_test::fresh_seed());
    const nr_transport_block_format f{ 8456, 16896, 2 };
    const sent_blocks sent(
        f, 2, 3.0, rng); // Eb/N0 3 dB: noisy (8% hard errors), decodable
    std::vector<uint8_t> g(size_t(f.G) * 2);
    const nr_transport_block_encoder enc(f);
    for (size_t t = 0; t < 2; ++t)
        enc.encode(sent.a.data() + t * size_t(f.A), g.data() + t * size_t(f.G));
    nr_transport_block_decoder dec(f);
    std::vector<uint8_t> a(sent.a.size());
    std::vector<float> ext(sent.llr.size(), NAN);
    const auto r = dec.decode(sent.llr.data(), 2, a.data(), nullptr, ext.data());
    ASSERT_TRUE(r[0].crc_ok && r[1].crc_ok);
    size_t wrong_received = 0, wrong_app = 0, wrong_ext = 0;
    for (size_t i = 0; i < ext.size(); ++i) {
        ASSERT_TRUE(std::isfinite(ext[i]));
        const bool one = g[i] == 1;
        wrong_received += (sent.llr[i] < 0) != one;
        wrong_app += (sent.llr[i] + ext[i] < 0) != one;
        wrong_ext += (ext[i] < 0) != one;
    }
    EXPECT_GT(wrong_received, 100u);
    EXPECT_EQ(wrong_app, 0u);               // decoded: the posterior is right
    EXPECT_LT(wrong_ext, ext.size() / 100); // the code alone nearly always
    std::vector<float> zero(size_t(f.G), 0.0f), ez(size_t(f.G), NAN);
    dec.decode(zero.data(), 1, a.data(), nullptr, ez.data());
    for (float v : ez)
        ASSERT_EQ(v, 0.0f);
}

TEST(nr_transport_block, garbage_of_every_kind_never_passes_on_a_wrong_block)
{
    // Many blocks of each kind: zeros; random signs of magnitudes from denormal to
    // FLT_MAX and Gaussian noise from 1e-30 to 1e20 (nothing sent); real
    // transmissions scaled by denormal to huge factors; the same with every
    // systematic LLR zeroed; random signs with a real block's systematic LLRs.
    // A CRC pass must carry the sent bits; with nothing sent, none may pass.
    std::mt19937_64 rng(mimo_gpu_test::fresh_seed());
    for (const nr_transport_block_format& f :
         { nr_transport_block_format{ 1000, 2400, 2 },
           nr_transport_block_format{ 8456, 16896, 4 } }) {
        const size_t count = f.A > 5000 ? 8 : 40, G = size_t(f.G);
        nr_transport_block_decoder dec(f);
        const nr_segmentation seg = f.segmentation();
        // Which sent LLRs are systematic: buffer positions below K' - 2 Zc.
        std::vector<bool> systematic;
        for (int E : f.rate_matched_sizes())
            for (int p : nr_rate_matcher(seg, E, f.Qm).positions(f.rv))
                systematic.push_back(p < seg.K_prime - 2 * seg.Zc);
        struct kind {
            std::string what;
            std::vector<float> llr;
            bool sent;
        };
        std::vector<kind> kinds;
        kinds.push_back({ "zeros", std::vector<float>(count * G, 0.0f), false });
        for (float m : { std::numeric_limits<float>::denorm_min(),
                         1e-42f,
                         1e-30f,
                         1.0f,
                         1e4f,
                         1e30f,
                         std::numeric_limits<float>::max() }) {
            kind k{ "random signs of " + std::to_string(m),
                    std::vector<float>(count * G),
                    false };
            for (float& x : k.llr)
                x = (rng() >> 63) ? -m : m;
            kinds.push_back(std::move(k));
        }
        std::normal_distribution<float> normal(0.0f, 1.0f);
        for (float sigma : { 1e-30f, 1e-6f, 1.0f, 1e20f }) {
            kind k{ "noise of sigma " + std::to_string(sigma),
                    std::vector<float>(count * G),
                    false };
            for (float& x : k.llr)
                x = sigma * normal(rng);
            kinds.push_back(std::move(k));
        }
        const sent_blocks real(f, count, 6.0, rng);
        for (float scale : { 1e-44f, 1e-38f, 1e-20f, 1.0f, 1e20f, 1e37f }) {
            kind k{ "real blocks scaled by " + std::to_string(scale), real.llr, true };
            for (float& x : k.llr)
                x *= scale;
            kinds.push_back(k);
            for (size_t i = 0; i < k.llr.size(); ++i)
                if (systematic[i % G])
                    k.llr[i] = 0.0f;
            k.what += ", no systematic bits";
            kinds.push_back(std::move(k));
        }
        kind mixed{ "random signs with a real block's systematic LLRs", real.llr, true };
        for (size_t i = 0; i < mixed.llr.size(); ++i)
            if (!systematic[i % G])
                mixed.llr[i] = (rng() >> 63) ? -8.0f : 8.0f;
        kinds.push_back(std::move(mixed));
        int passed_real = 0;
        for (const kind& k : kinds) {
            std::vector<uint8_t> a(count * size_t(f.A));
            const auto r = dec.decode(k.llr.data(), count, a.data());
            for (size_t t = 0; t < count; ++t) {
                if (!r[t].crc_ok)
                    continue;
                ASSERT_TRUE(k.sent)
                    << k.what << ": block " << t << " passed with nothing sent";
                ASSERT_TRUE(std::equal(a.begin() + t * f.A,
                                       a.begin() + (t + 1) * f.A,
                                       real.a.begin() + t * f.A))
                    << k.what << ": block " << t << " passed with wrong bits";
                ++passed_real;
            }
        }
        EXPECT_GE(passed_real, int(count)); // the unscaled real blocks decode
    }
}

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

} // namespace

TEST(nr_transport_block_cuda, the_device_path_equals_the_host_decoder)
{
    MIMO_GPU_REQUIRE_CUDA();
    // Fresh transport blocks of several formats (one and several code blocks,
    // both base graphs, Qm 2..8) at SNRs from failing to clean and one erased,
    // sent four times with rv 0, 2, 3, 1 into HARQ soft buffers kept on the
    // host and on the device: the device path decodes the same bits, results
    // and soft buffers as the host decoder, from float and from int8 LLRs.
    std::mt19937_64 rng(mimo_gpu_test::fresh_seed());
    int decoded = 0, failed = 0;
    for (const nr_transport_block_format& base :
         { nr_transport_block_format{ 100, 600, 2 },
           nr_transport_block_format{ 8456, 16896, 4 },
           nr_transport_block_format{ 30000, 64800, 6 },
           nr_transport_block_format{ 1000, 1512, 8 },
           nr_transport_block_format{ 3000, 9000, 2 } }) {
        nr_transport_block_format f = base;
        const size_t count = 4;
        const nr_segmentation seg = f.segmentation();
        nr_transport_block_decoder cpu(f, {}, backend::cpu), gpu(f, {}, backend::cuda);
        ASSERT_EQ(gpu.active_backend(), backend::cuda);
        std::vector<float> soft_cpu(count * cpu.soft_buffer_size(), 0.0f);
        mimo_gpu_test::device_vector<float> soft_gpu(soft_cpu);
        // BPSK SNR per coded bit from 2 dB below the BPSK threshold of the rate
        // (about where one transmission decodes) to 4 dB above it; the same
        // bits in every transmission. The extrinsic LLRs (an iterative
        // receiver's priors) are compared too.
        const double rate = double(f.A) / f.G;
        const double threshold = 10.0 * std::log10(std::pow(2.0, 2.0 * rate) - 1.0) + 1.5;
        std::vector<uint8_t> bits(count * size_t(f.A));
        for (auto& b : bits)
            b = uint8_t(rng() & 1);
        for (int rv : { 0, 2, 3, 1 }) {
            f.rv = rv;
            cpu.set_redundancy_version(rv);
            gpu.set_redundancy_version(rv);
            const nr_transport_block_encoder enc(f);
            std::vector<float> llr(count * size_t(f.G));
            std::vector<uint8_t> g(size_t(f.G));
            for (size_t t = 0; t < count; ++t) {
                const double sigma2 =
                    std::pow(10.0, -(threshold - 2.0 + 2.0 * double(t)) / 10.0);
                std::normal_distribution<double> noise(0.0, std::sqrt(sigma2));
                enc.encode(bits.data() + t * size_t(f.A), g.data());
                for (size_t i = 0; i < g.size(); ++i)
                    llr[t * size_t(f.G) + i] =
                        float(2.0 * ((g[i] ? -1.0 : 1.0) + noise(rng)) / sigma2);
            }
            std::fill(llr.begin() + 3 * size_t(f.G), llr.end(), 0.0f); // TB 3 erased
            const std::string what = "A " + std::to_string(f.A) + " C " +
                                     std::to_string(seg.C) + " rv " + std::to_string(rv);
            std::vector<uint8_t> want(count * size_t(f.A), 9);
            std::vector<float> ext_cpu(llr.size(), NAN);
            const auto r_want = cpu.decode(
                llr.data(), count, want.data(), soft_cpu.data(), ext_cpu.data());
            const mimo_gpu_test::device_vector<float> d_llr(llr);
            mimo_gpu_test::device_vector<uint8_t> d_a(
                std::vector<uint8_t>(count * size_t(f.A), 7));
            mimo_gpu_test::device_vector<float> d_ext(
                std::vector<float>(llr.size(), NAN));
            gpu.decode_device(
                d_llr.get(), count, d_a.get(), nullptr, soft_gpu.get(), d_ext.get());
            const auto r_got = gpu.device_results(nullptr);
            EXPECT_EQ(d_a.download(), want) << what;
            expect_same_results(r_got, r_want, what);
            mimo_gpu_test::expect_bit_identical(
                soft_gpu.download(), soft_cpu, what + " soft");
            mimo_gpu_test::expect_bit_identical(
                d_ext.download(), ext_cpu, what + " extrinsic");
            for (const auto& r : r_want)
                (r.crc_ok ? decoded : failed) += 1;

            // int8 (without soft buffers): the host decodes the dequantised floats
            const float scale = 0.25f;
            std::vector<int8_t> q(llr.size());
            std::vector<float> x(llr.size());
            for (size_t i = 0; i < llr.size(); ++i) {
                q[i] = int8_t(
                    std::lround(std::max(-127.0f, std::min(127.0f, llr[i] / scale))));
                x[i] = scale * float(q[i]);
            }
            std::vector<uint8_t> want_q(count * size_t(f.A), 9);
            const auto r_want_q = cpu.decode(x.data(), count, want_q.data());
            const mimo_gpu_test::device_vector<int8_t> d_q(q);
            gpu.decode_device(d_q.get(), scale, count, d_a.get(), nullptr);
            expect_same_results(gpu.device_results(nullptr), r_want_q, what + " int8");
            EXPECT_EQ(d_a.download(), want_q) << what << " int8";
        }
        // A NaN in transport block 1: named, and no soft buffer of the batch changed.
        std::vector<float> llr(count * size_t(f.G), 1.0f);
        llr[size_t(f.G) + 11] = NAN;
        const std::vector<float> before = soft_gpu.download();
        const mimo_gpu_test::device_vector<float> d_llr(llr);
        mimo_gpu_test::device_vector<uint8_t> d_a(
            std::vector<uint8_t>(count * size_t(f.A)));
        gpu.decode_device(d_llr.get(), count, d_a.get(), nullptr, soft_gpu.get());
        try {
            gpu.device_results(nullptr);
            FAIL() << "a NaN was decoded";
        } catch (const std::invalid_argument& e) {
            EXPECT_NE(std::string(e.what()).find("transport block 1"), std::string::npos)
                << e.what();
        }
        EXPECT_EQ(soft_gpu.download(), before) << "a refused batch changed a soft buffer";
    }
    std::printf("[ compared ] %d transport blocks decoded, %d failed, on both paths\n",
                decoded,
                failed);
    EXPECT_GT(decoded, 10);
    EXPECT_GT(failed, 10);
}

TEST(nr_transport_block, decode_device_needs_cuda)
{
    nr_transport_block_decoder cpu(
        nr_transport_block_format{ 100, 600, 2 }, {}, backend::cpu);
    std::vector<float> llr(600);
    std::vector<uint8_t> a(100);
    EXPECT_THROW(cpu.decode_device(llr.data(), 1, a.data(), nullptr), std::logic_error);
    EXPECT_THROW(cpu.device_results(nullptr), std::logic_error);
}

TEST(nr_transport_block, a_refused_batch_changes_no_soft_buffer)
{
    // A NaN in one transport block, or a caller's soft buffer that is not
    // finite: the batch is refused naming the block, and every soft buffer is
    // as it was. Huge finite LLRs are bounded (1e30 a copy) and decode.
    std::mt19937_64 rng(mimo_gpu_test::fresh_seed());
    const nr_transport_block_format f{ 1000, 2400, 2 };
    nr_transport_block_decoder dec(f, {}, backend::cpu);
    const size_t count = 3, per = dec.soft_buffer_size();
    const sent_blocks sent(f, count, 8.0, rng);
    std::vector<float> soft(count * per, 0.5f), before = soft;
    std::vector<uint8_t> a(count * size_t(f.A));
    std::vector<float> llr = sent.llr;
    llr[2 * size_t(f.G) + 3] = NAN;
    try {
        dec.decode(llr.data(), count, a.data(), soft.data());
        FAIL() << "a NaN was decoded";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("transport block 2"), std::string::npos)
            << e.what();
    }
    EXPECT_EQ(soft, before);
    const sent_blocks clean(f, count, 60.0, rng); // no wrong sign to correct
    llr = clean.llr;
    for (float& x : llr)
        x = x < 0.0f ? -3e38f : 3e38f; // bounded to 1e30 a copy: sums stay finite
    soft[per + 5] = INFINITY;          // a caller's buffer that is not
    before = soft;
    try {
        dec.decode(llr.data(), count, a.data(), soft.data());
        FAIL() << "an infinite soft buffer was decoded";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("transport block 1"), std::string::npos)
            << e.what();
    }
    EXPECT_EQ(soft, before);
    // The same huge LLRs into fresh buffers: bounded, they decode.
    std::fill(soft.begin(), soft.end(), 0.0f);
    const auto r = dec.decode(llr.data(), count, a.data(), soft.data());
    for (const auto& x : r)
        EXPECT_TRUE(x.crc_ok);
    EXPECT_EQ(a, clean.a);
}
