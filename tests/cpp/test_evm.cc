// measure_evm: the EVM of equalised symbols equals its definition on known
// signals, data-aided and decision-directed; erased symbols are left out.
#include "test_support.h"

#include <mimo_gpu/evm.h>

#include <cmath>
#include <random>

using namespace mimo_gpu;

namespace {

/// n problems of nt random points of c, problem-major.
std::vector<cfloat>
random_symbols(const constellation& c, size_t n, int nt, uint64_t seed)
{
    std::mt19937_64 rng(seed);
    std::vector<cfloat> x(n * size_t(nt));
    for (auto& s : x)
        s = c.point(uint32_t(rng() % uint64_t(c.order())));
    return x;
}

/// x plus an error of magnitude magnitude[u] and random phase on stream u.
std::vector<cfloat> with_error(const std::vector<cfloat>& x,
                               int nt,
                               const std::vector<double>& magnitude,
                               uint64_t seed)
{
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> phase(0.0, 2 * M_PI);
    std::vector<cfloat> z(x.size());
    for (size_t k = 0; k < x.size(); ++k)
        z[k] = x[k] + cfloat(std::polar(magnitude[k % size_t(nt)], phase(rng)));
    return z;
}

double expected_evm(const std::vector<cfloat>& x, int nt, int u, double magnitude)
{
    double power = 0;
    size_t n = 0;
    for (size_t k = size_t(u); k < x.size(); k += size_t(nt), ++n)
        power += std::norm(std::complex<double>(x[k].real(), x[k].imag()));
    return std::sqrt(double(n) * magnitude * magnitude / power);
}

} // namespace

TEST(evm, equals_its_definition_on_a_known_signal)
{
    const uint64_t seed = mimo_gpu_test::fresh_seed();
    for (modulation m : { modulation::qpsk, modulation::qam16, modulation::qam256 }) {
        const constellation c(m);
        const int nt = 3;
        const std::vector<double> magnitude = { 0.01, 0.05, 0.2 };
        const auto x = random_symbols(c, 2000, nt, seed);
        const auto z = with_error(x, nt, magnitude, seed + 1);
        const evm_measurement e = measure_evm(z.data(), x.data(), 2000, nt, c);
        ASSERT_EQ(e.per_stream.size(), size_t(nt));
        EXPECT_EQ(e.measured, 6000u);
        EXPECT_EQ(e.left_out, 0u);
        for (int u = 0; u < nt; ++u) {
            const double want = expected_evm(x, nt, u, magnitude[size_t(u)]);
            EXPECT_NEAR(e.per_stream[size_t(u)], want, 1e-6 * want)
                << to_string(m) << " stream " << u;
        }
        EXPECT_GT(e.overall, e.per_stream[0]);
        EXPECT_LT(e.overall, e.per_stream[2]);
    }
}

TEST(evm, decision_directed_equals_data_aided_until_decisions_fail)
{
    const constellation c(modulation::qam64);
    const auto x = random_symbols(c, 3000, 2, mimo_gpu_test::fresh_seed());
    // Errors under half the distance between levels (2 scale): every decision right.
    const double small = 0.7 * c.scale();
    const auto z = with_error(x, 2, { small, small }, 7);
    const evm_measurement aided = measure_evm(z.data(), x.data(), 3000, 2, c);
    const evm_measurement blind = measure_evm(z.data(), nullptr, 3000, 2, c);
    for (int u = 0; u < 2; ++u)
        EXPECT_NEAR(blind.per_stream[size_t(u)], aided.per_stream[size_t(u)], 1e-9);
    // Errors of several levels: the nearest point is nearer than the one sent.
    const auto far = with_error(x, 2, { 3 * c.scale(), 3 * c.scale() }, 8);
    const double aided_far = measure_evm(far.data(), x.data(), 3000, 2, c).overall;
    const double blind_far = measure_evm(far.data(), nullptr, 3000, 2, c).overall;
    EXPECT_LT(blind_far, 0.8 * aided_far);
}

TEST(evm, non_finite_symbols_are_left_out_and_counted)
{
    const constellation c(modulation::qam16);
    const auto x = random_symbols(c, 500, 2, mimo_gpu_test::fresh_seed());
    auto z = with_error(x, 2, { 0.1, 0.1 }, 3);
    const evm_measurement clean = measure_evm(z.data(), x.data(), 500, 2, c);
    // Problem 7's stream 1 erased: the same as leaving that symbol out.
    z[7 * 2 + 1] = cfloat(NAN, 0.0f);
    z[9 * 2 + 0] = cfloat(0.0f, INFINITY);
    const evm_measurement got = measure_evm(z.data(), x.data(), 500, 2, c);
    EXPECT_EQ(got.left_out, 2u);
    EXPECT_EQ(got.measured, 998u);
    // The definition over the symbols kept: neither their error nor their power.
    for (int u = 0; u < 2; ++u) {
        double error = 0, power = 0;
        for (size_t p = 0; p < 500; ++p) {
            const size_t k = p * 2 + size_t(u);
            if (!std::isfinite(z[k].real()) || !std::isfinite(z[k].imag()))
                continue;
            error += std::norm(std::complex<double>(z[k]) - std::complex<double>(x[k]));
            power += std::norm(std::complex<double>(x[k]));
        }
        const double want = std::sqrt(error / power);
        EXPECT_NEAR(got.per_stream[size_t(u)], want, 1e-12 * want) << "stream " << u;
    }
    EXPECT_NEAR(got.overall, clean.overall, 0.05 * clean.overall);
    const evm_measurement blind = measure_evm(z.data(), nullptr, 500, 2, c);
    EXPECT_EQ(blind.left_out, 2u);
    EXPECT_EQ(blind.measured, 998u);
    EXPECT_TRUE(std::isfinite(blind.per_stream[0]) && std::isfinite(blind.per_stream[1]));
}

TEST(evm, bad_calls_are_clear_errors_and_nothing_measured_is_nan)
{
    const constellation c(modulation::qpsk);
    cfloat z[2] = { cfloat(0.7f, 0.7f), cfloat(-0.7f, 0.7f) };
    EXPECT_THROW(measure_evm(z, nullptr, 1, 0, c), std::invalid_argument);
    EXPECT_THROW(measure_evm(nullptr, nullptr, 1, 2, c), std::invalid_argument);
    const evm_measurement none = measure_evm(nullptr, nullptr, 0, 2, c);
    EXPECT_EQ(none.measured, 0u);
    EXPECT_TRUE(std::isnan(none.overall));
    ASSERT_EQ(none.per_stream.size(), 2u);
    EXPECT_TRUE(std::isnan(none.per_stream[0]));
    cfloat nan_z[2] = { cfloat(NAN, 0.0f), cfloat(NAN, 0.0f) };
    const evm_measurement erased = measure_evm(nan_z, nullptr, 1, 2, c);
    EXPECT_EQ(erased.left_out, 2u);
    EXPECT_TRUE(std::isnan(erased.overall));
}
