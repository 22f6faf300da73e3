// 5G NR LDPC (38.212 5.3.2): the lifting sizes and base graph tables against
// the standard, and the encoder: H x = 0 for every base graph and lifting
// size, on fresh random information bits, written with its own plain
// syndrome computation; a flipped bit breaks the check.
#include "test_support.h"

#include <mimo_gpu/nr_ldpc.h>

#include "../../lib/core/ldpc/ldpc_base_graph.h"

#include <gtest/gtest.h>

#include <random>
#include <set>

using namespace mimo_gpu;

namespace {

/// Unsatisfied checks of H x, from the table entries directly (the lifted
/// block of entry (r, c) is the identity shifted right by V mod Zc: row i
/// of the block checks bit (i + V) mod Zc of column c).
int plain_syndrome_weight(int bg, int Zc, const std::vector<uint8_t>& x)
{
    const detail::ldpc_table t = detail::ldpc_base_graph_table(bg);
    const int set = ldpc_lifting_set(Zc);
    std::vector<int> parity(size_t(t.rows) * Zc, 0);
    for (size_t e = 0; e < t.count; ++e) {
        const detail::ldpc_entry& en = t.entries[e];
        const int V = en.shift[set] % Zc;
        for (int i = 0; i < Zc; ++i)
            parity[size_t(en.row) * Zc + i] ^= x[size_t(en.column) * Zc + (i + V) % Zc];
    }
    int w = 0;
    for (int p : parity)
        w += p;
    return w;
}

} // namespace

TEST(nr_ldpc, lifting_sizes_are_table_5_3_2_1)
{
    const std::vector<int>& z = ldpc_lifting_sizes();
    ASSERT_EQ(z.size(), 51u);
    EXPECT_EQ(z.front(), 2);
    EXPECT_EQ(z.back(), 384);
    EXPECT_TRUE(std::is_sorted(z.begin(), z.end()));
    EXPECT_EQ(std::set<int>(z.begin(), z.end()).size(), 51u);
    // A few rows of the table: set index of each size.
    EXPECT_EQ(ldpc_lifting_set(2), 0);
    EXPECT_EQ(ldpc_lifting_set(256), 0);
    EXPECT_EQ(ldpc_lifting_set(384), 1);
    EXPECT_EQ(ldpc_lifting_set(320), 2);
    EXPECT_EQ(ldpc_lifting_set(224), 3);
    EXPECT_EQ(ldpc_lifting_set(288), 4);
    EXPECT_EQ(ldpc_lifting_set(352), 5);
    EXPECT_EQ(ldpc_lifting_set(208), 6);
    EXPECT_EQ(ldpc_lifting_set(240), 7);
    for (int bad : { 0, 1, 17, 385, 400, -2 })
        EXPECT_THROW(ldpc_lifting_set(bad), std::invalid_argument) << bad;
    EXPECT_THROW((ldpc_code{ 3, 384 }.validate()), std::invalid_argument);
    EXPECT_THROW((ldpc_code{ 1, 100 }.validate()), std::invalid_argument);
    EXPECT_THROW(ldpc_encoder(ldpc_code{ 2, 19 }), std::invalid_argument);
}

TEST(nr_ldpc, base_graphs_are_tables_5_3_2_2_and_5_3_2_3)
{
    const detail::ldpc_table bg1 = detail::ldpc_base_graph_table(1);
    const detail::ldpc_table bg2 = detail::ldpc_base_graph_table(2);
    EXPECT_EQ(bg1.count, 316u); // non-zero entries of the standard's tables
    EXPECT_EQ(bg2.count, 197u);
    EXPECT_EQ(bg1.rows, 46);
    EXPECT_EQ(bg1.columns, 68);
    EXPECT_EQ(bg2.rows, 42);
    EXPECT_EQ(bg2.columns, 52);
    // Entries checked against the standard's text: first and last of each table,
    // and the special ones of the core columns.
    auto shift = [](const detail::ldpc_table& t, int row, int column, int set) {
        for (size_t e = 0; e < t.count; ++e)
            if (t.entries[e].row == row && t.entries[e].column == column)
                return int(t.entries[e].shift[set]);
        return -1;
    };
    EXPECT_EQ(shift(bg1, 0, 0, 0), 250);
    EXPECT_EQ(shift(bg1, 0, 0, 7), 135);
    EXPECT_EQ(shift(bg1, 1, 22, 6), 105);
    EXPECT_EQ(shift(bg1, 45, 10, 7), 93);
    EXPECT_EQ(shift(bg1, 45, 67, 0), 0);
    EXPECT_EQ(shift(bg2, 0, 0, 0), 9);
    EXPECT_EQ(shift(bg2, 0, 10, 3), 1);
    EXPECT_EQ(shift(bg2, 41, 11, 7), 230);
    EXPECT_EQ(shift(bg1, 4, 2, 0), -1); // a zero entry of the base graph
    // Every row of each table in order, columns ascending, each extension row
    // r >= 4 ending in its own parity column kb + r with shift 0.
    for (const detail::ldpc_table& t : { bg1, bg2 }) {
        for (size_t e = 1; e < t.count; ++e) {
            const auto &a = t.entries[e - 1], &b = t.entries[e];
            ASSERT_TRUE(a.row < b.row || (a.row == b.row && a.column < b.column)) << e;
        }
        for (size_t e = 0; e < t.count; ++e) {
            const auto& en = t.entries[e];
            if (en.row >= 4 && en.column >= t.info_columns + 4) {
                EXPECT_EQ(en.column, t.info_columns + en.row);
                for (int s = 0; s < 8; ++s)
                    EXPECT_EQ(en.shift[s], 0);
            }
        }
    }
}

TEST(nr_ldpc, every_code_word_satisfies_its_parity_checks)
{
    // Both base graphs, all 51 lifting sizes, fresh random information bits.
    std::mt19937_64 rng(mimo_gpu_test::fresh_seed());
    int codes = 0;
    for (int bg : { 1, 2 })
        for (int Zc : ldpc_lifting_sizes()) {
            const ldpc_code code{ bg, Zc };
            const ldpc_encoder enc(code);
            std::vector<uint8_t> c(size_t(code.K())), x(size_t(code.codeword_bits()));
            for (auto& b : c)
                b = uint8_t(rng() & 1);
            enc.encode_full(c.data(), x.data());
            const std::string what =
                "BG" + std::to_string(bg) + " Zc " + std::to_string(Zc);
            ASSERT_TRUE(std::equal(c.begin(), c.end(), x.begin()))
                << what << ": systematic";
            ASSERT_EQ(plain_syndrome_weight(bg, Zc, x), 0) << what;
            ASSERT_EQ(ldpc_syndrome_weight(code, x.data()), 0) << what;
            // d: the N bits sent, x without its first 2 Zc.
            std::vector<uint8_t> d(size_t(code.N()));
            enc.encode(c.data(), d.data());
            ASSERT_TRUE(std::equal(d.begin(), d.end(), x.begin() + 2 * Zc)) << what;
            // Any single flipped bit breaks some check (every column has an edge).
            const size_t flip = size_t(rng() % x.size());
            x[flip] ^= 1;
            ASSERT_GT(plain_syndrome_weight(bg, Zc, x), 0) << what << " bit " << flip;
            ++codes;
        }
    EXPECT_EQ(codes, 102);
}

TEST(nr_ldpc, the_code_is_linear_and_the_zero_word_encodes_to_zero)
{
    const ldpc_code code{ 1, 384 };
    const ldpc_encoder enc(code);
    std::mt19937_64 rng(mimo_gpu_test::fresh_seed());
    std::vector<uint8_t> a(size_t(code.K())), b(a.size()), ab(a.size());
    for (size_t i = 0; i < a.size(); ++i) {
        a[i] = uint8_t(rng() & 1);
        b[i] = uint8_t(rng() & 1);
        ab[i] = a[i] ^ b[i];
    }
    std::vector<uint8_t> xa(size_t(code.codeword_bits())), xb(xa.size()), xab(xa.size());
    enc.encode_full(a.data(), xa.data());
    enc.encode_full(b.data(), xb.data());
    enc.encode_full(ab.data(), xab.data());
    for (size_t i = 0; i < xa.size(); ++i)
        ASSERT_EQ(xab[i], xa[i] ^ xb[i]) << i;
    std::vector<uint8_t> zero(a.size(), 0), x0(xa.size(), 1);
    enc.encode_full(zero.data(), x0.data());
    EXPECT_EQ(std::count(x0.begin(), x0.end(), 1), 0);
}
