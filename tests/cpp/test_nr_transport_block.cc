// The NR transport-block chain around LDPC (38.212 7.2, 5.2.2, 5.4.2):
// segmentation against cases worked by hand from the standard's rules, the
// rate-matched sizes, k0, bit selection and interleaving written plainly here,
// the soft-buffer inverse, the code blocks' CRCs, and bad formats.
#include "test_support.h"

#include <mimo_gpu/lte_turbo_code.h>
#include <mimo_gpu/nr_transport_block.h>

#include <gtest/gtest.h>

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
