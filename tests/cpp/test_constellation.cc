#include <mimo_gpu/constellation.h>

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>
#include <vector>

using namespace mimo_gpu;

namespace {
const modulation all_modulations[] = { modulation::qpsk,
                                       modulation::qam16,
                                       modulation::qam64,
                                       modulation::qam256,
                                       modulation::qam1024 };
}

TEST(constellation, unit_average_energy_and_distinct_points)
{
    for (modulation m : all_modulations) {
        constellation c(m);
        double energy = 0;
        for (auto p : c.points())
            energy += std::norm(std::complex<double>(p));
        EXPECT_NEAR(energy / c.order(), 1.0, 1e-6) << to_string(m);
        for (int a = 0; a < c.order(); ++a)
            for (int b = a + 1; b < c.order(); ++b)
                ASSERT_GT(std::abs(c.point(a) - c.point(b)), 1e-3f) << to_string(m);
    }
}

TEST(constellation, matches_3gpp_tables)
{
    // TS 36.211 table 7.1.2-1 (QPSK) and 7.1.3-1 (16QAM), a few rows each.
    constellation qpsk(modulation::qpsk);
    const float a = 1.0f / std::sqrt(2.0f);
    EXPECT_EQ(qpsk.point(0b00), cfloat(a, a));
    EXPECT_EQ(qpsk.point(0b01), cfloat(a, -a));
    EXPECT_EQ(qpsk.point(0b10), cfloat(-a, a));
    EXPECT_EQ(qpsk.point(0b11), cfloat(-a, -a));
    constellation q16(modulation::qam16);
    const float s = 1.0f / std::sqrt(10.0f);
    EXPECT_NEAR(std::abs(q16.point(0b0000) - cfloat(1 * s, 1 * s)), 0, 1e-6);
    EXPECT_NEAR(std::abs(q16.point(0b0001) - cfloat(1 * s, 3 * s)), 0, 1e-6);
    EXPECT_NEAR(std::abs(q16.point(0b0010) - cfloat(3 * s, 1 * s)), 0, 1e-6);
    EXPECT_NEAR(std::abs(q16.point(0b0111) - cfloat(3 * s, -3 * s)), 0, 1e-6);
    EXPECT_NEAR(std::abs(q16.point(0b1101) - cfloat(-1 * s, -3 * s)), 0, 1e-6);
    // TS 36.211 table 7.1.4-1 (64QAM): 000000 -> (3 + 3j)/sqrt(42), 111111 -> (-7 -
    // 7j)/sqrt(42).
    constellation q64(modulation::qam64);
    const float t = 1.0f / std::sqrt(42.0f);
    EXPECT_NEAR(std::abs(q64.point(0b000000) - cfloat(3 * t, 3 * t)), 0, 1e-6);
    EXPECT_NEAR(std::abs(q64.point(0b111111) - cfloat(-7 * t, -7 * t)), 0, 1e-6);
}

TEST(constellation, gray_labels_neighbours_differ_in_one_bit)
{
    for (modulation m : all_modulations) {
        constellation c(m);
        for (int level = 0; level + 1 < c.pam_levels(); ++level)
            EXPECT_EQ(__builtin_popcount(c.pam_label(level) ^ c.pam_label(level + 1)), 1)
                << to_string(m);
    }
}

TEST(constellation, map_then_hard_demap_round_trips_every_label)
{
    for (modulation m : all_modulations) {
        constellation c(m);
        const int Q = c.bits_per_symbol();
        std::vector<uint8_t> bits(size_t(c.order()) * Q), back(bits.size());
        for (int label = 0; label < c.order(); ++label)
            for (int k = 0; k < Q; ++k)
                bits[label * Q + k] = (label >> (Q - 1 - k)) & 1;
        std::vector<cfloat> sym(c.order());
        c.map(bits.data(), sym.data(), sym.size());
        for (int label = 0; label < c.order(); ++label)
            EXPECT_EQ(sym[label], c.point(label));
        c.hard_demap(sym.data(), back.data(), sym.size());
        EXPECT_EQ(bits, back) << to_string(m);
    }
}

TEST(constellation, bad_input_is_rejected)
{
    EXPECT_THROW(modulation_from_string("8psk"), std::invalid_argument);
    EXPECT_EQ(modulation_from_string("16-QAM"), modulation::qam16);
    EXPECT_EQ(modulation_from_string("QPSK"), modulation::qpsk);
    constellation c(modulation::qpsk);
    const uint8_t bits[2] = { 0, 2 };
    cfloat s;
    EXPECT_THROW(c.map(bits, &s, 1), std::invalid_argument);
}

// A coordinate near 1e30 overflowed the float-to-int conversion of the slicer
// (undefined behaviour; on x86 it gave the most negative level for +1e30).
// Huge finite coordinates, and Inf, give the outermost level; NaN level 0.
TEST(constellation, hard_demap_saturates_huge_coordinates)
{
    for (modulation m : all_modulations) {
        constellation c(m);
        const int Q = c.bits_per_symbol();
        const float top = c.pam_amplitude(c.pam_levels() - 1),
                    bottom = c.pam_amplitude(0);
        // The label of the point (re, im) given exactly.
        auto label_of = [&](float re, float im) {
            for (int label = 0; label < c.order(); ++label)
                if (c.point(label) == cfloat(re, im))
                    return label;
            ADD_FAILURE() << "no point " << re << " " << im;
            return -1;
        };
        auto bits_of = [&](int label) {
            std::vector<uint8_t> b(Q);
            for (int k = 0; k < Q; ++k)
                b[k] = (label >> (Q - 1 - k)) & 1;
            return b;
        };
        // an inner level, given exactly
        const float inner = c.pam_amplitude(c.pam_levels() / 2);
        for (float huge : { 1.0e30f,
                            3.0e38f,
                            std::numeric_limits<float>::max(),
                            std::numeric_limits<float>::infinity() }) {
            const std::pair<cfloat, int> cases[] = {
                { cfloat(huge, huge), label_of(top, top) },
                { cfloat(-huge, huge), label_of(bottom, top) },
                { cfloat(huge, -huge), label_of(top, bottom) },
                { cfloat(-huge, -huge), label_of(bottom, bottom) },
                { cfloat(huge, inner), label_of(top, inner) },
                { cfloat(inner, -huge), label_of(inner, bottom) },
            };
            for (const auto& [symbol, label] : cases) {
                std::vector<uint8_t> bits(Q, 7);
                c.hard_demap(&symbol, bits.data(), 1);
                EXPECT_EQ(bits, bits_of(label)) << to_string(m) << " symbol "
                                                << symbol.real() << " " << symbol.imag();
            }
        }
        const cfloat nan_symbol(std::numeric_limits<float>::quiet_NaN(), top);
        const cfloat two[2] = { cfloat(inner, inner), nan_symbol };
        std::vector<uint8_t> bits(2 * Q, 7);
        EXPECT_THROW(c.hard_demap(two, bits.data(), 2), std::invalid_argument)
            << to_string(m);
        EXPECT_EQ(bits, std::vector<uint8_t>(2 * Q, 7))
            << to_string(m) << ": nothing written";
    }
}
