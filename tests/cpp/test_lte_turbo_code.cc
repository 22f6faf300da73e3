// The LTE turbo code building blocks against TS 36.212 (5.1.1 - 5.1.5): each
// checked against a plain reference written here from the spec's text, or
// against values worked out by hand from its formulas.
#include <mimo_gpu/lte_turbo_code.h>
#include <mimo_gpu/lte_turbo_decoder.h>

#include "backend_test.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

using namespace mimo_gpu;

namespace {

using bits_t = std::vector<uint8_t>;

/// Bits of an ASCII string, most significant bit of each byte first.
bits_t ascii_bits(const std::string& s)
{
    bits_t b;
    for (unsigned char ch : s)
        for (int i = 7; i >= 0; --i)
            b.push_back((ch >> i) & 1);
    return b;
}

/// Long division of a(D) D^L by g(D) over GF(2), the exponents of g listed;
/// returns the remainder's coefficients p0 (of D^(L-1)) .. p(L-1).
bits_t reference_crc(const bits_t& a, const std::vector<int>& g_exponents)
{
    const int L = g_exponents.front();
    bits_t m(a);
    m.resize(a.size() + L, 0);
    for (size_t i = 0; i < a.size(); ++i)
        if (m[i])
            for (int e : g_exponents)
                m[i + L - e] ^= 1;
    return bits_t(m.end() - L, m.end());
}

const std::vector<int> g_crc24a = { 24, 23, 18, 17, 14, 11, 10, 7, 6, 5, 4, 3, 1, 0 };
const std::vector<int> g_crc24b = { 24, 23, 6, 5, 1, 0 };
const std::vector<int> g_crc16 = { 16, 12, 5, 0 };
const std::vector<int> g_crc8 = { 8, 7, 4, 3, 1, 0 };

uint32_t as_integer(const bits_t& p)
{
    uint32_t v = 0;
    for (uint8_t b : p)
        v = (v << 1) | b;
    return v;
}

template <class F>
void expect_invalid_argument_naming(F&& f, const std::string& name)
{
    try {
        f();
        ADD_FAILURE() << "no exception; expected one naming '" << name << "'";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
    }
}

} // namespace

// ---- QPP interleaver -----------------------------------------------------------

TEST(qpp_interleaver, table_sizes_follow_the_spec_steps)
{
    std::vector<int> expected;
    for (int K = 40; K <= 512; K += 8)
        expected.push_back(K);
    for (int K = 528; K <= 1024; K += 16)
        expected.push_back(K);
    for (int K = 1056; K <= 2048; K += 32)
        expected.push_back(K);
    for (int K = 2112; K <= 6144; K += 64)
        expected.push_back(K);
    ASSERT_EQ(expected.size(), 188u);
    EXPECT_EQ(qpp_interleaver::block_sizes(), expected);
}

TEST(qpp_interleaver, is_a_permutation_for_every_K)
{
    for (int K : qpp_interleaver::block_sizes()) {
        const qpp_interleaver qpp(K);
        std::vector<int> seen(K, 0);
        for (int i = 0; i < K; ++i) {
            ASSERT_GE(qpp.pi(i), 0);
            ASSERT_LT(qpp.pi(i), K);
            ++seen[qpp.pi(i)];
        }
        EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }))
            << "K = " << K;
    }
}

TEST(qpp_interleaver, follows_the_polynomial_and_known_rows)
{
    const qpp_interleaver first(40), last(6144), middle(1504);
    EXPECT_EQ(first.f1(), 3);
    EXPECT_EQ(first.f2(), 10);
    EXPECT_EQ(last.f1(), 263);
    EXPECT_EQ(last.f2(), 480);
    EXPECT_EQ(middle.f1(), 49);
    EXPECT_EQ(middle.f2(), 846);
    for (const auto* q : { &first, &last, &middle })
        for (int64_t i = 0; i < q->K(); ++i)
            ASSERT_EQ(q->pi(int(i)), (q->f1() * i + q->f2() * i * i) % q->K())
                << "K = " << q->K() << " i = " << i;
    EXPECT_EQ(first.pi(1), 13); // 3 + 10
    EXPECT_EQ(first.pi(2), 6);  // (6 + 40) mod 40
}

TEST(qpp_interleaver, next_block_size_and_unsupported_K)
{
    EXPECT_EQ(qpp_interleaver::next_block_size(1), 40);
    EXPECT_EQ(qpp_interleaver::next_block_size(40), 40);
    EXPECT_EQ(qpp_interleaver::next_block_size(41), 48);
    EXPECT_EQ(qpp_interleaver::next_block_size(513), 528);
    EXPECT_EQ(qpp_interleaver::next_block_size(2049), 2112);
    EXPECT_EQ(qpp_interleaver::next_block_size(6144), 6144);
    EXPECT_THROW(qpp_interleaver::next_block_size(6145), std::invalid_argument);
    EXPECT_TRUE(qpp_interleaver::is_block_size(528));
    EXPECT_FALSE(qpp_interleaver::is_block_size(520));
    expect_invalid_argument_naming([] { qpp_interleaver q(520); }, "520");
    expect_invalid_argument_naming([] { qpp_interleaver q(6208); }, "6208");
}

// ---- CRC -------------------------------------------------------------------------

TEST(crc, lengths)
{
    EXPECT_EQ(crc_length(crc_type::none), 0);
    EXPECT_EQ(crc_length(crc_type::crc24a), 24);
    EXPECT_EQ(crc_length(crc_type::crc24b), 24);
    EXPECT_EQ(crc_length(crc_type::crc16), 16);
    EXPECT_EQ(crc_length(crc_type::crc8), 8);
}

TEST(crc, check_values_of_the_ascii_digits)
{
    // The catalogued check values (CRC of "123456789", no reflection, init 0,
    // no final xor) of these generator polynomials.
    const bits_t digits = ascii_bits("123456789");
    EXPECT_EQ(crc_parity(crc_type::crc24a, digits.data(), digits.size()), 0xCDE703u);
    EXPECT_EQ(crc_parity(crc_type::crc24b, digits.data(), digits.size()), 0x23EF52u);
    EXPECT_EQ(crc_parity(crc_type::crc16, digits.data(), digits.size()), 0x31C3u);
    EXPECT_EQ(crc_parity(crc_type::crc8, digits.data(), digits.size()), 0xEAu);
}

TEST(crc, matches_a_long_division_reference)
{
    std::mt19937 rng(7);
    const std::pair<crc_type, std::vector<int>> types[] = {
        { crc_type::crc24a, g_crc24a },
        { crc_type::crc24b, g_crc24b },
        { crc_type::crc16, g_crc16 },
        { crc_type::crc8, g_crc8 }
    };
    for (const auto& [type, g] : types)
        for (size_t n : { 1u, 7u, 8u, 9u, 15u, 16u, 17u, 40u, 333u, 6120u, 6167u }) {
            const bits_t a = random_bits(n, rng);
            EXPECT_EQ(crc_parity(type, a.data(), n), as_integer(reference_crc(a, g)))
                << "n = " << n;
        }
}

TEST(crc, of_zeros_is_zero_and_filler_counts_as_zero)
{
    const bits_t zeros(100, 0);
    EXPECT_EQ(crc_parity(crc_type::crc24a, zeros.data(), zeros.size()), 0u);
    std::mt19937 rng(11);
    bits_t with_filler = random_bits(200, rng), as_zeros = with_filler;
    std::fill(with_filler.begin(), with_filler.begin() + 17, k_null_bit);
    std::fill(as_zeros.begin(), as_zeros.begin() + 17, 0);
    EXPECT_EQ(crc_parity(crc_type::crc24b, with_filler.data(), 200),
              crc_parity(crc_type::crc24b, as_zeros.data(), 200));
}

TEST(crc, attach_then_check_passes_and_any_single_flip_fails)
{
    std::mt19937 rng(3);
    for (crc_type type :
         { crc_type::crc24a, crc_type::crc24b, crc_type::crc16, crc_type::crc8 }) {
        const int L = crc_length(type);
        const bits_t a = random_bits(150, rng);
        bits_t coded(a.size() + L);
        crc_attach(type, a.data(), a.size(), coded.data());
        EXPECT_TRUE(std::equal(a.begin(), a.end(), coded.begin()));
        EXPECT_EQ(as_integer(bits_t(coded.end() - L, coded.end())),
                  crc_parity(type, a.data(), a.size()));
        EXPECT_TRUE(crc_check(type, coded.data(), coded.size()));
        for (size_t i = 0; i < coded.size(); ++i) {
            coded[i] ^= 1;
            EXPECT_FALSE(crc_check(type, coded.data(), coded.size())) << "flip at " << i;
            coded[i] ^= 1;
        }
        // In place: bits == out.
        bits_t in_place(a);
        in_place.resize(a.size() + L);
        crc_attach(type, in_place.data(), a.size(), in_place.data());
        EXPECT_EQ(in_place, coded);
    }
}

// ---- Code block segmentation ----------------------------------------------------

namespace {

void expect_segmentation(
    int B, int C, int K_plus, int C_plus, int K_minus, int C_minus, int F, int L)
{
    const auto s = code_block_segmentation::for_bits(B);
    SCOPED_TRACE("B = " + std::to_string(B));
    EXPECT_EQ(s.B, B);
    EXPECT_EQ(s.C, C);
    EXPECT_EQ(s.K_plus, K_plus);
    EXPECT_EQ(s.C_plus, C_plus);
    EXPECT_EQ(s.K_minus, K_minus);
    EXPECT_EQ(s.C_minus, C_minus);
    EXPECT_EQ(s.F, F);
    EXPECT_EQ(s.L, L);
    ASSERT_EQ(int(s.K.size()), C);
    for (int r = 0; r < C; ++r)
        EXPECT_EQ(s.K[r], r < C_minus ? K_minus : K_plus) << "r = " << r;
}

} // namespace

TEST(code_block_segmentation, worked_examples)
{
    // Worked by hand from 5.1.2: C = ceil(B / 6120) above Z, B' = B + 24 C,
    // K+ the smallest K with C K+ >= B', C- = floor((C K+ - B') / (K+ - K-)).
    expect_segmentation(40, 1, 40, 1, 0, 0, 0, 0);
    expect_segmentation(1, 1, 40, 1, 0, 0, 39, 0);
    expect_segmentation(100, 1, 104, 1, 0, 0, 4, 0);
    expect_segmentation(6144, 1, 6144, 1, 0, 0, 0, 0);
    // B' = 6193, K+ = 3136, K- = 3072, C- = floor(79 / 64) = 1, F = 6208 - 6193.
    expect_segmentation(6145, 2, 3136, 1, 3072, 1, 15, 24);
    // B' = 12048, K+ = 6080, K- = 6016, C- = floor(112 / 64) = 1, F = 12096 - 12048.
    expect_segmentation(12000, 2, 6080, 1, 6016, 1, 48, 24);
    // B' = 12288: two full blocks.
    expect_segmentation(12240, 2, 6144, 2, 6080, 0, 0, 24);
    // C = 13, B' = 75312, K+ = 5824 (13 * 5760 = 74880 < B'), K- = 5760,
    // C- = floor((75712 - 75312) / 64) = 6, F = 7 * 5824 + 6 * 5760 - 75312.
    expect_segmentation(75000, 13, 5824, 7, 5760, 6, 16, 24);
}

TEST(code_block_segmentation, sizes_add_up_for_many_B)
{
    for (int B = 1; B < 40000; B += (B < 7000 ? 1 : 37)) {
        const auto s = code_block_segmentation::for_bits(B);
        const int total = std::accumulate(s.K.begin(), s.K.end(), 0);
        ASSERT_EQ(total, B + s.C * s.L + s.F) << "B = " << B;
        ASSERT_GE(s.F, 0);
        ASSERT_LT(s.F, s.C == 1 ? s.K_plus : s.K_plus - s.K_minus) << "B = " << B;
        ASSERT_EQ(s.C_plus + s.C_minus, s.C);
    }
}

TEST(code_block_segmentation, bad_B_throws)
{
    expect_invalid_argument_naming([] { code_block_segmentation::for_bits(0); }, "0");
    expect_invalid_argument_naming([] { code_block_segmentation::for_bits(-5); }, "-5");
    expect_invalid_argument_naming([] { code_block_segmentation::for_bits(1 << 30); },
                                   std::to_string(1 << 30));
}

TEST(code_block_segmentation, segment_layout_and_desegment_round_trip)
{
    std::mt19937 rng(5);
    for (int B : { 1, 39, 40, 100, 6144, 6145, 12000, 20000 }) {
        const auto s = code_block_segmentation::for_bits(B);
        const bits_t b = random_bits(B, rng);
        const auto blocks = s.segment(b.data());
        ASSERT_EQ(int(blocks.size()), s.C);
        // Filler first in block 0, then the data in order, then CRC24B (C > 1).
        int next = 0;
        for (int r = 0; r < s.C; ++r) {
            ASSERT_EQ(int(blocks[r].size()), s.K[r]);
            const int filler = r == 0 ? s.F : 0;
            for (int k = 0; k < filler; ++k)
                ASSERT_EQ(blocks[r][k], k_null_bit);
            for (int k = filler; k < s.K[r] - s.L; ++k)
                ASSERT_EQ(blocks[r][k], b[next++]);
            if (s.L > 0) {
                bits_t as_zeros(blocks[r]);
                std::replace(as_zeros.begin(), as_zeros.end(), k_null_bit, uint8_t(0));
                const bits_t parity = reference_crc(
                    bits_t(as_zeros.begin(), as_zeros.end() - 24), g_crc24b);
                EXPECT_TRUE(
                    std::equal(parity.begin(), parity.end(), blocks[r].end() - 24))
                    << "B " << B << " r " << r;
            }
        }
        EXPECT_EQ(next, B);

        // A decoder's blocks carry 0/1 at the filler positions.
        auto decoded = blocks;
        std::replace(decoded[0].begin(), decoded[0].end(), k_null_bit, uint8_t(1));
        std::vector<const uint8_t*> ptrs;
        for (const auto& c : decoded)
            ptrs.push_back(c.data());
        bits_t back(B, 9);
        EXPECT_TRUE(s.desegment(ptrs, back.data()));
        EXPECT_EQ(back, b) << "B = " << B;

        if (s.C > 1) {
            decoded.back()[3] ^= 1;
            EXPECT_FALSE(s.desegment(ptrs, back.data())) << "B = " << B;
        }
    }
}

// ---- Turbo encoder ----------------------------------------------------------------

namespace {

/// The constituent encoder written from its transfer function: the feedback
/// sequence a_k = u_k + a_(k-2) + a_(k-3), the parity z_k = a_k + a_(k-1) + a_(k-3).
struct reference_rsc {
    std::vector<uint8_t> a{ 0, 0, 0 }; // a_(-3), a_(-2), a_(-1)
    uint8_t feedback(size_t back) const { return a[a.size() - back]; }
    uint8_t push(uint8_t u)
    {
        const uint8_t ak = u ^ feedback(2) ^ feedback(3);
        const uint8_t z = ak ^ feedback(1) ^ feedback(3);
        a.push_back(ak);
        return z;
    }
    bool at_zero_state() const
    {
        return feedback(1) == 0 && feedback(2) == 0 && feedback(3) == 0;
    }
};

struct encoded {
    bits_t d0, d1, d2;
    explicit encoded(const bits_t& c)
        : d0(c.size() + 4), d1(c.size() + 4), d2(c.size() + 4)
    {
        turbo_encode(c.data(), int(c.size()), d0.data(), d1.data(), d2.data());
    }
};

/// Replays one encoder on input u against its parities (a <NULL> parity, not
/// sent, is passed over) and its 3 tail (x, z) pairs, which must end in state 0.
void expect_encoder_trace(const bits_t& u,
                          const uint8_t* parity,
                          const uint8_t tail_x[3],
                          const uint8_t tail_z[3],
                          const char* which)
{
    reference_rsc rsc;
    for (size_t k = 0; k < u.size(); ++k) {
        const uint8_t z = rsc.push(u[k]);
        if (parity[k] != k_null_bit) {
            ASSERT_EQ(z, parity[k]) << which << " parity at " << k;
        }
    }
    for (int i = 0; i < 3; ++i)
        EXPECT_EQ(rsc.push(tail_x[i]), tail_z[i]) << which << " tail parity " << i;
    EXPECT_TRUE(rsc.at_zero_state()) << which << " not terminated";
}

/// Both encoders replayed, filler bits entering as 0, the tail read back from
/// 5.1.3.2.2: d0 = x_K z_K+1 x'_K z'_K+1, d1 = z_K x_K+2 z'_K x'_K+2, d2 = x_K+1 z_K+2
/// x'_K+1 z'_K+2.
void check_encoding(const bits_t& c, const encoded& d)
{
    const int K = int(c.size());
    const qpp_interleaver qpp(K);
    bits_t u(K), u_interleaved(K);
    for (int k = 0; k < K; ++k) {
        u[k] = c[k] == 1;
        u_interleaved[k] = c[qpp.pi(k)] == 1;
    }
    const uint8_t x[3] = { d.d0[K], d.d2[K], d.d1[K + 1] },
                  z[3] = { d.d1[K], d.d0[K + 1], d.d2[K + 1] };
    const uint8_t xp[3] = { d.d0[K + 2], d.d2[K + 2], d.d1[K + 3] },
                  zp[3] = { d.d1[K + 2], d.d0[K + 3], d.d2[K + 3] };
    expect_encoder_trace(u, d.d1.data(), x, z, "first encoder");
    expect_encoder_trace(u_interleaved, d.d2.data(), xp, zp, "second encoder");
}

} // namespace

TEST(turbo_encoder, systematic_parities_and_termination_for_every_K)
{
    std::mt19937 rng(17);
    for (int K : qpp_interleaver::block_sizes()) {
        const bits_t c = random_bits(K, rng);
        const encoded d(c);
        ASSERT_TRUE(std::equal(c.begin(), c.end(), d.d0.begin())) << "K = " << K;
        check_encoding(c, d);
        if (HasFailure())
            FAIL() << "K = " << K;
    }
}

TEST(turbo_encoder, zero_input_gives_zero_output)
{
    const bits_t c(40, 0);
    const encoded d(c);
    for (const bits_t* s : { &d.d0, &d.d1, &d.d2 })
        EXPECT_TRUE(std::all_of(s->begin(), s->end(), [](uint8_t b) { return b == 0; }));
}

TEST(turbo_encoder, filler_bits_are_null_in_d0_and_d1_and_encoded_as_zero)
{
    std::mt19937 rng(23);
    const int K = 104, F = 13;
    bits_t c = random_bits(K, rng);
    std::fill(c.begin(), c.begin() + F, k_null_bit);
    const encoded d(c);
    bits_t zeros = c;
    std::fill(zeros.begin(), zeros.begin() + F, 0);
    const encoded z(zeros);
    for (int k = 0; k < K + 4; ++k) {
        EXPECT_EQ(d.d0[k], k < F ? k_null_bit : z.d0[k]) << k;
        EXPECT_EQ(d.d1[k], k < F ? k_null_bit : z.d1[k]) << k;
        EXPECT_EQ(d.d2[k], z.d2[k])
            << k; // the second encoder's parity is always a real bit
        EXPECT_NE(d.d2[k], k_null_bit);
    }
    check_encoding(c, d);
}

TEST(turbo_encoder, unsupported_K_throws)
{
    bits_t c(44, 0), d(48);
    expect_invalid_argument_naming(
        [&] { turbo_encode(c.data(), 44, d.data(), d.data(), d.data()); }, "44");
}

// ---- Rate matching ---------------------------------------------------------------

namespace {

constexpr int k_permutation[32] = { 0,  16, 8,  24, 4,  20, 12, 28, 2,  18, 10,
                                    26, 6,  22, 14, 30, 1,  17, 9,  25, 5,  21,
                                    13, 29, 3,  19, 11, 27, 7,  23, 15, 31 };
constexpr int k_dummy = -1;

/// 5.1.4.1 written out: each stream padded with ND dummy bits in front, written
/// row by row into R x 32, columns permuted, read column by column (stream 2
/// through pi(k)); the circular buffer w; bit selection from k0 skipping <NULL>.
/// Entries are indices into [d0 | d1 | d2] or k_dummy.
std::vector<int> reference_circular_buffer(int K)
{
    const int D = K + 4, R = (D + 31) / 32, Kpi = 32 * R, ND = Kpi - D;
    std::vector<std::vector<int>> v(3, std::vector<int>(Kpi));
    for (int i = 0; i < 3; ++i) {
        std::vector<int> y(Kpi, k_dummy);
        for (int k = 0; k < D; ++k)
            y[ND + k] = i * D + k;
        if (i < 2) {
            std::vector<std::vector<int>> matrix(R, std::vector<int>(32));
            for (int row = 0; row < R; ++row)
                for (int col = 0; col < 32; ++col)
                    matrix[row][col] = y[row * 32 + col];
            int k = 0;
            for (int col = 0; col < 32; ++col)
                for (int row = 0; row < R; ++row)
                    v[i][k++] = matrix[row][k_permutation[col]];
        } else {
            for (int k = 0; k < Kpi; ++k)
                v[i][k] = y[(k_permutation[k / R] + 32 * (k % R) + 1) % Kpi];
        }
    }
    std::vector<int> w(3 * Kpi);
    for (int k = 0; k < Kpi; ++k) {
        w[k] = v[0][k];
        w[Kpi + 2 * k] = v[1][k];
        w[Kpi + 2 * k + 1] = v[2][k];
    }
    return w;
}

/// Indices into [d0 | d1 | d2] of the E selected bits.
std::vector<int> reference_selection(int K, int Ncb, int rv, int E, int F)
{
    const int D = K + 4, R = (D + 31) / 32;
    const std::vector<int> w = reference_circular_buffer(K);
    const int k0 = R * (2 * ((Ncb + 8 * R - 1) / (8 * R)) * rv + 2);
    std::vector<int> out;
    for (int j = 0; int(out.size()) < E; ++j) {
        const int s = w[(k0 + j) % Ncb];
        const bool filler = s != k_dummy && s < 2 * D && s % D < F;
        if (s != k_dummy && !filler)
            out.push_back(s);
    }
    return out;
}

/// A code block with F filler bits, encoded, as [d0 | d1 | d2].
bits_t encoded_block(int K, int F, std::mt19937& rng)
{
    bits_t c = random_bits(K, rng);
    std::fill(c.begin(), c.begin() + F, k_null_bit);
    const encoded d(c);
    bits_t all(d.d0);
    all.insert(all.end(), d.d1.begin(), d.d1.end());
    all.insert(all.end(), d.d2.begin(), d.d2.end());
    return all;
}

bits_t match(const rate_matcher& rm, const bits_t& d, int E, int rv)
{
    const int D = rm.D();
    bits_t e(E + 1, 0xAA); // one guard byte
    rm.match(d.data(), d.data() + D, d.data() + 2 * D, E, rv, e.data());
    EXPECT_EQ(e.back(), 0xAA) << "wrote past E";
    e.pop_back();
    return e;
}

int non_null_bits(int K, int F) { return 3 * (K + 4) - 2 * F; }

} // namespace

TEST(rate_matcher, sizes_and_k0_follow_the_formulas)
{
    // K = 6144: D = 6148, R = 193, Kpi = 6176, Kw = 18528, ceil(Kw / 1544) = 12.
    const rate_matcher big(6144);
    EXPECT_EQ(big.D(), 6148);
    EXPECT_EQ(big.Kpi(), 6176);
    EXPECT_EQ(big.Kw(), 18528);
    EXPECT_EQ(big.Ncb(), 18528);
    const int big_k0[4] = { 386, 5018, 9650, 14282 }; // 193 (24 rv + 2)
    // K = 40: D = 44, R = 2, Kw = 192, ceil(192 / 16) = 12.
    const rate_matcher small(40);
    EXPECT_EQ(small.Kpi(), 64);
    const int small_k0[4] = { 4, 52, 100, 148 };
    // Soft-buffer limited K = 6144, Ncb = 10000: ceil(10000 / 1544) = 7.
    const rate_matcher limited(6144, 10000);
    EXPECT_EQ(limited.Ncb(), 10000);
    const int limited_k0[4] = { 386, 3088, 5790, 8492 }; // 193 (14 rv + 2)
    for (int rv = 0; rv < 4; ++rv) {
        EXPECT_EQ(big.k0(rv), big_k0[rv]);
        EXPECT_EQ(small.k0(rv), small_k0[rv]);
        EXPECT_EQ(limited.k0(rv), limited_k0[rv]);
    }
}

TEST(rate_matcher, match_equals_the_spec_written_out)
{
    std::mt19937 rng(29);
    struct config {
        int K, F, Ncb;
    };
    for (const config& cfg : { config{ 40, 0, 0 },
                               config{ 40, 15, 0 },
                               config{ 104, 4, 0 },
                               config{ 3136, 15, 0 },
                               config{ 1504, 0, 0 },
                               config{ 6144, 0, 0 },
                               config{ 6144, 0, 10000 },
                               config{ 512, 7, 1000 } }) {
        const rate_matcher rm(cfg.K, cfg.Ncb);
        const bits_t d = encoded_block(cfg.K, cfg.F, rng);
        for (int rv = 0; rv < 4; ++rv)
            for (int E : { 0, 1, 37, rm.Kw() / 3, rm.Kw() - 10, 2 * rm.Kw() + 5 }) {
                const std::vector<int> idx =
                    reference_selection(cfg.K, rm.Ncb(), rv, E, cfg.F);
                const bits_t e = match(rm, d, E, rv);
                ASSERT_EQ(int(e.size()), E);
                for (int j = 0; j < E; ++j)
                    ASSERT_EQ(e[j], d[idx[j]])
                        << "K " << cfg.K << " F " << cfg.F << " Ncb " << cfg.Ncb << " rv "
                        << rv << " E " << E << " j " << j;
                EXPECT_TRUE(std::none_of(
                    e.begin(), e.end(), [](uint8_t b) { return b == k_null_bit; }));
            }
    }
}

TEST(rate_matcher, dematch_recovers_every_sent_bit_and_zero_elsewhere)
{
    std::mt19937 rng(31);
    for (int K : { 40, 104, 1008, 6144 })
        for (int F : { 0, 9 }) {
            const rate_matcher rm(K);
            const int D = rm.D();
            const bits_t d = encoded_block(K, F, rng);
            for (int rv = 0; rv < 4; ++rv) {
                // Exactly the whole buffer: every real bit once.
                const int E = non_null_bits(K, F);
                const bits_t e = match(rm, d, E, rv);
                std::vector<float> llr(E), back(3 * D, 99.0f);
                for (int j = 0; j < E; ++j)
                    llr[j] = e[j] ? -1.0f : 1.0f;
                rm.dematch(llr.data(), E, rv, F, back.data());
                for (int s = 0; s < 3 * D; ++s) {
                    const bool is_null = s < 2 * D && s % D < F;
                    ASSERT_EQ(back[s], is_null ? 0.0f : (d[s] ? -1.0f : 1.0f))
                        << "K " << K << " rv " << rv << " s " << s;
                }
            }
        }
}

TEST(rate_matcher, dematch_adds_repeats_and_leaves_unsent_bits_at_zero)
{
    std::mt19937 rng(37);
    const int K = 200, F = 5;
    const rate_matcher rm(K);
    const int D = rm.D(), N = non_null_bits(K, F);
    const bits_t d = encoded_block(K, F, rng);
    auto dematched = [&](int E, int rv) {
        const bits_t e = match(rm, d, E, rv);
        std::vector<float> llr(E), out(3 * D);
        for (int j = 0; j < E; ++j)
            llr[j] = e[j] ? -1.0f : 1.0f;
        rm.dematch(llr.data(), E, rv, F, out.data());
        return out;
    };
    // E = 2N + 3: every real bit twice, the first three selected three times.
    const std::vector<int> first = reference_selection(K, rm.Ncb(), 2, 3, F);
    const std::vector<float> twice = dematched(2 * N + 3, 2);
    for (int s = 0; s < 3 * D; ++s) {
        if (s < 2 * D && s % D < F) {
            EXPECT_EQ(twice[s], 0.0f);
            continue;
        }
        const float times = std::count(first.begin(), first.end(), s) ? 3.0f : 2.0f;
        EXPECT_EQ(twice[s], times * (d[s] ? -1.0f : 1.0f)) << s;
    }
    // E = N / 2: the sent half carries +-1, the rest 0.
    const std::vector<int> sent = reference_selection(K, rm.Ncb(), 1, N / 2, F);
    const std::vector<float> half = dematched(N / 2, 1);
    for (int s = 0; s < 3 * D; ++s) {
        const bool was_sent = std::count(sent.begin(), sent.end(), s) > 0;
        EXPECT_EQ(half[s], was_sent ? (d[s] ? -1.0f : 1.0f) : 0.0f) << s;
    }
}

TEST(rate_matcher, bad_arguments_throw)
{
    expect_invalid_argument_naming([] { rate_matcher rm(41); }, "41");
    expect_invalid_argument_naming([] { rate_matcher rm(40, 193); }, "193");
    expect_invalid_argument_naming([] { rate_matcher rm(40, -1); }, "-1");
    const rate_matcher rm(40);
    bits_t d(3 * 44, 0), e(10);
    std::vector<float> llr(10), out(3 * 44);
    expect_invalid_argument_naming([&] { rm.k0(4); }, "4");
    expect_invalid_argument_naming(
        [&] { rm.match(d.data(), d.data() + 44, d.data() + 88, 10, -1, e.data()); },
        "-1");
    expect_invalid_argument_naming(
        [&] { rm.match(d.data(), d.data() + 44, d.data() + 88, -3, 0, e.data()); }, "-3");
    expect_invalid_argument_naming([&] { rm.dematch(llr.data(), 10, 4, 0, out.data()); },
                                   "4");
    expect_invalid_argument_naming([&] { rm.dematch(llr.data(), 10, 0, 40, out.data()); },
                                   "40");
}

// ---- Transport block encoder ------------------------------------------------------

namespace {

transport_block_format format(int A, int G, int Qm = 2, int NL = 1, int rv = 0)
{
    transport_block_format f;
    f.A = A;
    f.G = G;
    f.Qm = Qm;
    f.NL = NL;
    f.rv = rv;
    return f;
}

} // namespace

TEST(turbo_transport_block, rate_matched_sizes_follow_the_formula)
{
    // A = 12000 - 24: B = 12000, C = 2. G' = 501 (Qm 2): gamma = 1, E = 2*250, 2*251.
    EXPECT_EQ(format(11976, 1002).rate_matched_sizes(), (std::vector<int>{ 500, 502 }));
    EXPECT_EQ(format(11976, 1000).rate_matched_sizes(), (std::vector<int>{ 500, 500 }));
    // Qm 6, NL 2: G' = 7200 / 12 = 600, C = 2, gamma = 0.
    EXPECT_EQ(format(11976, 7200, 6, 2).rate_matched_sizes(),
              (std::vector<int>{ 3600, 3600 }));
    // C = 13, G' = 10001 (Qm 4): floor 769, gamma = 4; blocks 0..8 get 4*769, 9..12 get
    // 4*770.
    const auto E13 = format(74976, 40004, 4).rate_matched_sizes();
    ASSERT_EQ(E13.size(), 13u);
    for (int r = 0; r < 13; ++r)
        EXPECT_EQ(E13[r], r < 9 ? 3076 : 3080) << r;
    for (int A : { 1, 500, 6120, 6121, 30000 })
        for (int G : { 1200, 4002, 96000 }) {
            const auto E = format(A, G, 2).rate_matched_sizes();
            EXPECT_EQ(std::accumulate(E.begin(), E.end(), 0), G)
                << "A " << A << " G " << G;
        }
}

TEST(turbo_transport_block, output_length_is_G_and_blocks_are_concatenated)
{
    std::mt19937 rng(41);
    for (const auto& f : { format(100, 300),
                           format(11976, 24000, 4),
                           format(30000, 60000, 6, 2, 3),
                           format(20, 4) }) {
        const transport_block_encoder enc(f);
        const bits_t a = random_bits(f.A, rng);
        bits_t out(f.G + 1, 0xAA);
        enc.encode(a.data(), out.data());
        EXPECT_EQ(out.back(), 0xAA) << "wrote past G";
        out.pop_back();
        EXPECT_TRUE(
            std::all_of(out.begin(), out.end(), [](uint8_t b) { return b <= 1; }));

        // The same chain done by hand, block by block.
        const auto seg = f.segmentation();
        bits_t b(seg.B);
        crc_attach(crc_type::crc24a, a.data(), f.A, b.data());
        const auto blocks = seg.segment(b.data());
        const auto E = f.rate_matched_sizes();
        bits_t expected;
        for (int r = 0; r < seg.C; ++r) {
            const encoded d(blocks[r]);
            const rate_matcher rm(seg.K[r]);
            bits_t e(E[r]);
            rm.match(d.d0.data(), d.d1.data(), d.d2.data(), E[r], f.rv, e.data());
            expected.insert(expected.end(), e.begin(), e.end());
        }
        EXPECT_EQ(out, expected) << "A " << f.A << " G " << f.G;
    }
}

TEST(turbo_transport_block, noiseless_systematic_bits_return_the_transport_block)
{
    // At rate below 1/3 every systematic bit is sent: read them back through
    // dematch, desegment, and check both CRCs, with no decoder involved.
    std::mt19937 rng(43);
    const auto f = format(14000, 3 * 15000, 2, 1, 2);
    const bits_t a = random_bits(f.A, rng);
    bits_t out(f.G);
    transport_block_encoder(f).encode(a.data(), out.data());

    const auto seg = f.segmentation();
    const auto E = f.rate_matched_sizes();
    std::vector<bits_t> blocks(seg.C);
    int offset = 0;
    for (int r = 0; r < seg.C; ++r) {
        const rate_matcher rm(seg.K[r]);
        std::vector<float> llr(E[r]), d(3 * rm.D());
        for (int j = 0; j < E[r]; ++j)
            llr[j] = out[offset + j] ? -1.0f : 1.0f;
        offset += E[r];
        rm.dematch(llr.data(), E[r], f.rv, r == 0 ? seg.F : 0, d.data());
        for (int k = 0; k < seg.K[r]; ++k)
            blocks[r].push_back(d[k] < 0);
    }
    std::vector<const uint8_t*> ptrs;
    for (const auto& c : blocks)
        ptrs.push_back(c.data());
    bits_t b(seg.B);
    EXPECT_TRUE(seg.desegment(ptrs, b.data()));
    EXPECT_TRUE(crc_check(crc_type::crc24a, b.data(), b.size()));
    EXPECT_TRUE(std::equal(a.begin(), a.end(), b.begin()));
}

TEST(turbo_transport_block, bad_formats_throw_naming_the_value)
{
    expect_invalid_argument_naming([] { format(0, 300).validate(); }, "A = 0");
    expect_invalid_argument_naming([] { format(100, 0).validate(); }, "G = 0");
    expect_invalid_argument_naming([] { format(100, 300, 3).validate(); }, "Qm = 3");
    expect_invalid_argument_naming([] { format(100, 300, 2, 5).validate(); }, "NL = 5");
    expect_invalid_argument_naming([] { format(100, 300, 2, 0).validate(); }, "NL = 0");
    expect_invalid_argument_naming([] { format(100, 300, 2, 1, 4).validate(); },
                                   "rv = 4");
    expect_invalid_argument_naming([] { format(100, 301, 2).validate(); }, "G = 301");
    expect_invalid_argument_naming([] { format(100, 300, 4, 2).validate(); },
                                   "NL*Qm = 8");
    // C = 4 code blocks but only G / Qm = 2 symbols.
    expect_invalid_argument_naming([] { format(20000, 4).validate(); }, "A = 20000");
    expect_invalid_argument_naming([] { format(1 << 28, 1 << 29).validate(); },
                                   std::to_string(1 << 28));
    expect_invalid_argument_naming(
        [] { transport_block_encoder enc(format(100, 300, 2, 1, 4)); }, "rv = 4");
    EXPECT_NO_THROW(format(100, 300, 10, 3).validate());
    EXPECT_NO_THROW(format(1, 1, 1).validate());
}
