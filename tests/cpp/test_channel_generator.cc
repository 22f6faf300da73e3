// channel_generator (counter-based simulation source) and bit-error counting.
#include "../../lib/core/channel/philox.h"
#include "test_support.h"

#include <mimo_gpu/channel_generator.h>
#include <mimo_gpu/detector_registry.h>

#ifdef MIMO_GPU_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

using namespace mimo_gpu;
using namespace mimo_gpu_test;

namespace {

/// One generate() call's outputs, poisoned first (0xff bytes: bits of 255 and
/// NaN samples) so that an element never written shows.
struct generated {
    std::vector<uint8_t> bits;
    std::vector<cfloat> H, y;

    generated(channel_generator& g, uint64_t first_channel, size_t channels, float n0)
        : bits(channels * g.symbols_per_channel() * g.bits_per_problem(), 0xff),
          H(channels * g.shape().nr * g.shape().nt, nan_sample()),
          y(channels * g.symbols_per_channel() * g.shape().nr, nan_sample())
    {
        g.generate(first_channel, channels, n0, bits.data(), H.data(), y.data());
    }
    static cfloat nan_sample()
    {
        const float nan = std::numeric_limits<float>::quiet_NaN();
        return { nan, nan };
    }
    void append(const generated& o)
    {
        bits.insert(bits.end(), o.bits.begin(), o.bits.end());
        H.insert(H.end(), o.H.begin(), o.H.end());
        y.insert(y.end(), o.y.begin(), o.y.end());
    }
};

void expect_same_stream(const generated& a, const generated& b, const std::string& what)
{
    EXPECT_EQ(a.bits, b.bits) << what;
    ASSERT_EQ(a.H.size(), b.H.size()) << what;
    ASSERT_EQ(a.y.size(), b.y.size()) << what;
    for (size_t i = 0; i < a.H.size(); ++i)
        ASSERT_EQ(a.H[i], b.H[i]) << what << ": H element " << i;
    for (size_t i = 0; i < a.y.size(); ++i)
        ASSERT_EQ(a.y[i], b.y[i]) << what << ": y element " << i;
}

} // namespace

// Given bits (a coded stream) are sent through the stream's own H and noise:
// the drawn bits given back reproduce the drawn stream exactly, and other bits
// change y by H (s' - s) alone.
TEST(channel_generator, given_bits_are_sent_through_the_streams_channel_and_noise)
{
    const mimo_shape shape{ 4, 2 };
    const int S = 3;
    const size_t channels = 301;
    const float n0 = noise_variance_from_snr_db(15.0);
    const uint64_t seed = fresh_seed();
    channel_generator g(shape, modulation::qam16, seed, S, backend::cpu);
    const generated drawn(g, 1234, channels, n0);

    std::vector<uint8_t> given(drawn.bits);
    for (uint8_t& b : given)
        b = b ? 0x5a : 0; // any non-zero byte is a 1
    generated resent(g, 1234, 0, n0);
    resent.bits.assign(drawn.bits.size(), 0xff);
    resent.H.assign(drawn.H.size(), generated::nan_sample());
    resent.y.assign(drawn.y.size(), generated::nan_sample());
    g.generate(1234,
               channels,
               n0,
               resent.bits.data(),
               resent.H.data(),
               resent.y.data(),
               given.data());
    expect_same_stream(drawn, resent, "drawn bits given back");

    std::mt19937_64 rng(seed + 1);
    for (uint8_t& b : given)
        b = uint8_t(rng() & 1);
    std::vector<uint8_t> bits(given.size(), 0xff);
    std::vector<cfloat> H(drawn.H.size()), y(drawn.y.size());
    g.generate(1234, channels, n0, bits.data(), H.data(), y.data(), given.data());
    EXPECT_EQ(bits, given);
    EXPECT_EQ(H, drawn.H);
    // Without a bits output: the same H and y.
    std::vector<cfloat> H2(H.size()), y2(y.size());
    g.generate(1234, channels, n0, nullptr, H2.data(), y2.data(), given.data());
    EXPECT_EQ(H2, H);
    EXPECT_EQ(y2, y);
    EXPECT_THROW(g.generate(1234, channels, n0, nullptr, H2.data(), y2.data()),
                 std::invalid_argument);
    const constellation c(modulation::qam16);
    const int Q = c.bits_per_symbol();
    auto symbol = [&](const std::vector<uint8_t>& b, size_t problem, int t) {
        uint32_t label = 0;
        for (int k = 0; k < Q; ++k)
            label = (label << 1) | b[(problem * shape.nt + size_t(t)) * Q + size_t(k)];
        return c.point(label);
    };
    size_t changed = 0;
    for (size_t q = 0; q < channels * S; ++q)
        for (int r = 0; r < shape.nr; ++r) {
            cfloat want = drawn.y[q * shape.nr + r];
            for (int t = 0; t < shape.nt; ++t)
                want += H[(q / S) * shape.nr * shape.nt + r * shape.nt + t] *
                        (symbol(given, q, t) - symbol(drawn.bits, q, t));
            ASSERT_NEAR(std::abs(y[q * shape.nr + r] - want), 0.0f, 1e-4f)
                << "problem " << q;
            changed += y[q * shape.nr + r] != drawn.y[q * shape.nr + r];
        }
    EXPECT_GT(changed, channels * S); // the given bits were sent, not the drawn ones
}

// Random123's known-answer vectors for philox4x32_10 (kat_vectors).
TEST(channel_generator, philox_known_answers)
{
    struct kat {
        uint32_t counter[4], key[2], want[4];
    };
    const kat kats[] = {
        { { 0, 0, 0, 0 }, { 0, 0 }, { 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8 } },
        { { 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff },
          { 0xffffffff, 0xffffffff },
          { 0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd } },
        { { 0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344 },
          { 0xa4093822, 0x299f31d0 },
          { 0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1 } },
    };
    for (const kat& k : kats) {
        detail::philox_block c;
        for (int i = 0; i < 4; ++i)
            c.v[i] = k.counter[i];
        const detail::philox_block got = detail::philox4x32_10(c, k.key[0], k.key[1]);
        for (int i = 0; i < 4; ++i)
            EXPECT_EQ(got.v[i], k.want[i]) << "word " << i << " of counter " << std::hex
                                           << k.counter[0] << " key " << k.key[0];
    }
}

// The documented counter layout: bit i of problem p is bit i % 32 of word
// (i / 32) % 4 of Philox((p low, p high, 0, i / 128), (seed low, seed high)).
// Problem indices past 2^32 exercise the high word.
TEST(channel_generator, bits_follow_the_counter_layout)
{
    const uint64_t seed = fresh_seed();
    for (int S : { 1, 3 }) {
        // 8x8 1024-QAM: 80 bits per problem; 8 streams of QPSK: 16.
        for (modulation mod : { modulation::qpsk, modulation::qam1024 }) {
            channel_generator g({ 8, 8 }, mod, seed, S, backend::cpu);
            const uint64_t first_channel = (uint64_t(5) << 32) + 12345;
            const generated out(g, first_channel, 7, 0.1f);
            const int bpp = g.bits_per_problem();
            for (size_t q = 0; q < out.bits.size() / size_t(bpp); ++q) {
                const uint64_t p = first_channel * uint64_t(S) + q;
                for (int i = 0; i < bpp; ++i) {
                    detail::philox_block c{
                        { uint32_t(p), uint32_t(p >> 32), 0u, uint32_t(i / 128) }
                    };
                    const detail::philox_block x =
                        detail::philox4x32_10(c, uint32_t(seed), uint32_t(seed >> 32));
                    ASSERT_EQ(out.bits[q * bpp + i], (x.v[(i / 32) % 4] >> (i % 32)) & 1u)
                        << "problem " << p << " bit " << i;
                }
            }
        }
    }
}

TEST(channel_generator, batching_does_not_change_the_stream)
{
    const uint64_t seed = fresh_seed();
    const float n0 = noise_variance_from_snr_db(10.0);
    for (int S : { 1, 3 }) {
        channel_generator whole({ 4, 3 }, modulation::qam16, seed, S, backend::cpu);
        channel_generator split({ 4, 3 }, modulation::qam16, seed, S, backend::cpu);
        const generated all(whole, 0, 100, n0);
        generated parts(split, 0, 37, n0);
        parts.append(generated(split, 37, 63, n0));
        expect_same_stream(
            all, parts, "S = " + std::to_string(S) + ": [0, 100) vs [0, 37) + [37, 100)");
        // A batch far into the stream, and the channels one at a time.
        generated singles(split, 0, 0, n0);
        for (uint64_t c = 60; c < 70; ++c)
            singles.append(generated(split, c, 1, n0));
        const generated middle(whole, 60, 10, n0);
        expect_same_stream(
            middle, singles, "S = " + std::to_string(S) + ": one channel at a time");
    }
}

TEST(channel_generator, seeds_give_different_streams)
{
    const uint64_t seed = fresh_seed();
    const float n0 = 0.1f;
    channel_generator a({ 2, 2 }, modulation::qpsk, seed, 1, backend::cpu);
    channel_generator b({ 2, 2 }, modulation::qpsk, seed ^ 1, 1, backend::cpu);
    channel_generator c(
        { 2, 2 }, modulation::qpsk, seed ^ (uint64_t(1) << 40), 1, backend::cpu);
    const generated ga(a, 0, 64, n0), gb(b, 0, 64, n0), gc(c, 0, 64, n0);
    EXPECT_NE(ga.bits, gb.bits);
    EXPECT_NE(ga.H, gb.H);
    EXPECT_NE(ga.H, gc.H); // the seed's high word keys the generator too
    EXPECT_NE(ga.y, gc.y);
}

TEST(channel_generator, statistics_follow_the_model)
{
    const mimo_shape shape{ 4, 4 };
    const size_t problems = 200000;
    const float n0 = noise_variance_from_snr_db(5.0);
    channel_generator g(shape, modulation::qam16, fresh_seed(), 1, backend::cpu);
    const generated out(g, 0, problems, n0);
    const constellation c(modulation::qam16);
    const int bpp = g.bits_per_problem();

    size_t ones = 0;
    std::vector<size_t> ones_at(bpp, 0);
    for (size_t i = 0; i < out.bits.size(); ++i) {
        ASSERT_LE(out.bits[i], 1) << i;
        ones += out.bits[i];
        ones_at[i % bpp] += out.bits[i];
    }
    EXPECT_NEAR(double(ones) / out.bits.size(), 0.5, 0.005);
    for (int i = 0; i < bpp; ++i) // 9 standard deviations: each label bit is balanced
        EXPECT_NEAR(double(ones_at[i]) / problems, 0.5, 0.01) << "bit " << i;

    double re_sum = 0, im_sum = 0, power = 0, re_im = 0, re2 = 0, re4 = 0;
    for (const cfloat& h : out.H) {
        re_sum += h.real();
        im_sum += h.imag();
        power += std::norm(h);
        re_im += double(h.real()) * h.imag();
        re2 += double(h.real()) * h.real();
        re4 += std::pow(double(h.real()), 4);
    }
    const double n = double(out.H.size());
    EXPECT_NEAR(re_sum / n, 0.0, 0.005);
    EXPECT_NEAR(im_sum / n, 0.0, 0.005);
    EXPECT_NEAR(power / n, 1.0, 0.01);
    EXPECT_NEAR(
        re_im / n / 0.5, 0.0, 0.01); // correlation of the real and imaginary parts
    // Gaussian: kurtosis 3 (a uniform would give 1.8); about 20 standard deviations.
    EXPECT_NEAR(re4 / n / ((re2 / n) * (re2 / n)), 3.0, 0.06);

    double noise = 0;
    std::vector<cfloat> s(shape.nt);
    for (size_t p = 0; p < problems; ++p) {
        c.map(out.bits.data() + p * bpp, s.data(), size_t(shape.nt));
        for (int r = 0; r < shape.nr; ++r) {
            std::complex<double> hs = 0;
            for (int t = 0; t < shape.nt; ++t)
                hs += std::complex<double>(out.H[p * 16 + r * 4 + t]) *
                      std::complex<double>(s[t]);
            noise += std::norm(std::complex<double>(out.y[p * 4 + r]) - hs);
        }
    }
    EXPECT_NEAR(noise / (double(problems) * shape.nr * n0), 1.0, 0.02);
}

// The S problems of a channel use its H: at a tiny N0, y - H[c] s is tiny for each.
TEST(channel_generator, problems_of_a_channel_share_its_matrix)
{
    const mimo_shape shape{ 3, 2 };
    const int S = 5;
    channel_generator g(shape, modulation::qam64, fresh_seed(), S, backend::cpu);
    const generated out(g, 3, 40, 1e-10f);
    const constellation c(modulation::qam64);
    std::vector<cfloat> s(2);
    for (size_t p = 0; p < 40 * S; ++p) {
        c.map(out.bits.data() + p * g.bits_per_problem(), s.data(), 2);
        const cfloat* h = out.H.data() + (p / S) * 6;
        for (int r = 0; r < 3; ++r)
            ASSERT_LT(
                std::abs(out.y[p * 3 + r] - (h[r * 2] * s[0] + h[r * 2 + 1] * s[1])),
                1e-3f)
                << "problem " << p << " row " << r;
    }
}

TEST(channel_generator, detector_end_to_end)
{
    const mimo_shape shape{ 4, 4 };
    const size_t problems = 1000;
    const uint64_t seed = fresh_seed();
    detector_config config{ shape, modulation::qam16, { { "passes", 4 } } };
    auto det = make_detector("nway", config, backend::cpu);
    channel_generator g(shape, modulation::qam16, seed, 1, backend::cpu);
    for (double snr_db : { 30.0, 0.0 }) {
        const float n0 = noise_variance_from_snr_db(snr_db);
        const generated out(g, 0, problems, n0);
        std::vector<float> llr(out.bits.size());
        det->detect(out.H.data(), out.y.data(), problems, n0, llr.data());
        const uint64_t errors = count_bit_errors(llr.data(), out.bits.data(), llr.size());
        // (the rate times the count is the count only to rounding: compare rounded)
        EXPECT_EQ(
            errors,
            uint64_t(std::llround(bit_error_rate(out.bits, llr) * double(llr.size()))));
        if (snr_db > 20) {
            EXPECT_EQ(errors, 0u) << "4x4 16-QAM N-way at 30 dB";
        } else {
            // 4x4 16-QAM at 0 dB: about a fifth of the bits are wrong.
            EXPECT_GT(errors, llr.size() / 20) << "4x4 16-QAM N-way at 0 dB";
            EXPECT_LT(errors, llr.size() / 2);
        }
    }
}

// Item errors: an item with any wrong bit counts once; LLR and hard decisions.
TEST(channel_generator, count_errors_counts_bits_and_items)
{
    // 3 items of 4 bits: item 0 right, item 1 one wrong bit, item 2 three.
    const std::vector<uint8_t> sent{ 0, 1, 0, 1, 1, 1, 0, 0, 0, 0, 1, 1 };
    const std::vector<uint8_t> decided{ 0, 7, 0, 1, 1, 1, 0, 1, 1, 1, 0, 1 };
    std::vector<float> llr(decided.size());
    for (size_t i = 0; i < llr.size(); ++i)
        llr[i] = decided[i] ? -2.0f : 3.0f;
    for (const error_counts e : { count_errors(decided.data(), sent.data(), 3, 4),
                                  count_errors(llr.data(), sent.data(), 3, 4) }) {
        EXPECT_EQ(e.bits, 4u);
        EXPECT_EQ(e.items, 2u);
    }
    EXPECT_EQ(count_errors(decided.data(), sent.data(), 1, 4).bits, 0u);
    EXPECT_EQ(count_errors(decided.data(), sent.data(), 1, 12).items, 1u);
    EXPECT_EQ(count_errors(static_cast<const uint8_t*>(nullptr), nullptr, 0, 4).bits, 0u);
    EXPECT_THROW(count_errors(static_cast<const uint8_t*>(nullptr), sent.data(), 1, 4),
                 std::invalid_argument);
}

TEST(channel_generator, count_bit_errors_by_hand)
{
    const float nan = std::numeric_limits<float>::quiet_NaN();
    // LLR > 0, 0, -0 and NaN decide bit 0; any nonzero byte is bit 1.
    const std::vector<float> llr = { 2.0f,  2.0f, -1.0f,  -1.0f,   0.0f, 0.0f,
                                     -0.0f, nan,  1e-30f, -1e-30f, 5.0f };
    const std::vector<uint8_t> bits = { 0, 1, 1, 0, 0, 1, 1, 1, 0, 0, 7 };
    //                    errors:   0  1  0  1  0  1  1  1  0  1  1
    EXPECT_EQ(count_bit_errors(llr.data(), bits.data(), llr.size()), 7u);
    EXPECT_EQ(count_bit_errors(llr.data(), bits.data(), 4), 2u);
    EXPECT_EQ(count_bit_errors(nullptr, nullptr, 0), 0u);
    EXPECT_THROW(count_bit_errors(nullptr, bits.data(), 1), std::invalid_argument);
    EXPECT_THROW(count_bit_errors(llr.data(), nullptr, 1), std::invalid_argument);

    // Spread over threads: every third of 3M values is wrong.
    const size_t n = 3 << 20;
    std::vector<float> many(n);
    std::vector<uint8_t> many_bits(n);
    for (size_t i = 0; i < n; ++i) {
        many_bits[i] = uint8_t(i & 1);
        const bool wrong = i % 3 == 0;
        many[i] = (many_bits[i] != wrong) ? -1.0f : 1.0f;
    }
    EXPECT_EQ(count_bit_errors(many.data(), many_bits.data(), n), n / 3);
}

TEST(channel_generator, bad_input_is_refused)
{
    EXPECT_THROW(channel_generator({ 2, 4 }, modulation::qpsk, 1, 1, backend::cpu),
                 std::invalid_argument);
    EXPECT_THROW(channel_generator({ 4, 4 }, modulation::qpsk, 1, 0, backend::cpu),
                 std::invalid_argument);
    EXPECT_THROW(channel_generator({ 4, 4 }, modulation::qpsk, 1, -2, backend::cpu),
                 std::invalid_argument);

    channel_generator g({ 2, 2 }, modulation::qpsk, 1, 1, backend::cpu);
    std::vector<uint8_t> bits(8);
    std::vector<cfloat> H(8), y(4);
    for (float n0 : { 0.0f,
                      -1.0f,
                      std::numeric_limits<float>::quiet_NaN(),
                      std::numeric_limits<float>::infinity() })
        EXPECT_THROW(g.generate(0, 2, n0, bits.data(), H.data(), y.data()),
                     std::invalid_argument)
            << n0;
    EXPECT_THROW(g.generate(0, 2, 0.1f, nullptr, H.data(), y.data()),
                 std::invalid_argument);
    EXPECT_THROW(g.generate(0, 2, 0.1f, bits.data(), nullptr, y.data()),
                 std::invalid_argument);
    EXPECT_THROW(g.generate(0, 2, 0.1f, bits.data(), H.data(), nullptr),
                 std::invalid_argument);
    const uint64_t last = std::numeric_limits<uint64_t>::max();
    EXPECT_THROW(g.generate(last, 2, 0.1f, bits.data(), H.data(), y.data()),
                 std::invalid_argument);
    channel_generator g3({ 2, 2 }, modulation::qpsk, 1, 3, backend::cpu);
    EXPECT_THROW(g3.generate(last / 3, 1, 0.1f, bits.data(), H.data(), y.data()),
                 std::invalid_argument);
    g.generate(0, 0, 0.1f, nullptr, nullptr, nullptr); // nothing to do
    g.generate(5, 2, 0.1f, bits.data(), H.data(), y.data());
    for (uint8_t b : bits)
        EXPECT_LE(b, 1);

    EXPECT_THROW(g.generate_device(0, 2, 0.1f, bits.data(), H.data(), y.data(), nullptr),
                 std::logic_error);
    EXPECT_THROW(g.generate_device(0, 0, 0.1f, nullptr, nullptr, nullptr, nullptr),
                 std::logic_error);
#ifndef MIMO_GPU_HAVE_CUDA
    unsigned long long count = 0;
    std::vector<float> llr(8);
    EXPECT_THROW(count_bit_errors_device(llr.data(), bits.data(), 8, &count, nullptr),
                 std::logic_error);
#endif
}

#ifdef MIMO_GPU_HAVE_CUDA

namespace {

template <typename T>
struct device_array {
    T* p = nullptr;
    size_t n = 0;
    explicit device_array(size_t count) : n(count)
    {
        EXPECT_EQ(
            cudaMalloc(reinterpret_cast<void**>(&p), std::max<size_t>(n, 1) * sizeof(T)),
            cudaSuccess);
        EXPECT_EQ(cudaMemset(p, 0xff, std::max<size_t>(n, 1) * sizeof(T)),
                  cudaSuccess); // poison
    }
    ~device_array() { cudaFree(p); }
    device_array(const device_array&) = delete;
    device_array& operator=(const device_array&) = delete;
    std::vector<T> host() const
    {
        std::vector<T> v(n);
        EXPECT_EQ(cudaMemcpy(v.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost),
                  cudaSuccess);
        return v;
    }
    void upload(const std::vector<T>& v)
    {
        ASSERT_EQ(cudaMemcpy(p, v.data(), n * sizeof(T), cudaMemcpyHostToDevice),
                  cudaSuccess);
    }
};

/// H and y from CUDA against the CPU: logf/sinf/cosf differ in the last bit,
/// so an element may differ by 1e-5 of the magnitudes it is made of (for y:
/// |y| + sum_t |h_rt| |s_t|, since terms cancel) plus 1e-6.
void expect_close_stream(const generated& want,
                         const std::vector<uint8_t>& bits,
                         const std::vector<cfloat>& H,
                         const std::vector<cfloat>& y,
                         const mimo_shape& shape,
                         modulation mod,
                         int S,
                         const std::string& what)
{
    ASSERT_EQ(bits, want.bits) << what << ": bits";
    ASSERT_EQ(H.size(), want.H.size());
    for (size_t i = 0; i < H.size(); ++i)
        ASSERT_LE(std::abs(H[i] - want.H[i]), 1e-5f * std::abs(want.H[i]) + 1e-6f)
            << what << ": H element " << i << " got " << H[i] << " want " << want.H[i];
    const constellation c(mod);
    const int bpp = shape.nt * c.bits_per_symbol();
    std::vector<cfloat> s(shape.nt);
    for (size_t p = 0; p < y.size() / shape.nr; ++p) {
        c.map(want.bits.data() + p * bpp, s.data(), size_t(shape.nt));
        const cfloat* h = want.H.data() + (p / S) * shape.nr * shape.nt;
        for (int r = 0; r < shape.nr; ++r) {
            float terms = std::abs(want.y[p * shape.nr + r]);
            for (int t = 0; t < shape.nt; ++t)
                terms += std::abs(h[r * shape.nt + t]) * std::abs(s[t]);
            const size_t i = p * shape.nr + r;
            ASSERT_LE(std::abs(y[i] - want.y[i]), 1e-5f * terms + 1e-6f)
                << what << ": y element " << i << " got " << y[i] << " want "
                << want.y[i];
        }
    }
    std::printf("[ compared ] %s: %zu bits exact, %zu H and %zu y within tolerance\n",
                what.c_str(),
                bits.size(),
                H.size(),
                y.size());
}

} // namespace

TEST(channel_generator_cuda, device_matches_cpu)
{
    MIMO_GPU_REQUIRE_CUDA();
    struct config {
        mimo_shape shape;
        modulation mod;
        int S;
        size_t channels;
    };
    // 128x16 does not fit the shared-memory staging: the unstaged kernel.
    const config configs[] = {
        { { 4, 4 }, modulation::qam16, 1, 70001 },
        { { 3, 2 }, modulation::qam64, 3, 1001 },
        { { 8, 8 }, modulation::qam1024, 2, 333 },
        { { 1, 1 }, modulation::qpsk, 1, 5000 },
        { { 5, 3 }, modulation::qam256, 7, 257 },
        { { 128, 16 }, modulation::qam16, 2, 130 },
    };
    const uint64_t seed = fresh_seed();
    cudaStream_t stream;
    ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
    for (const config& k : configs) {
        const std::string what = std::to_string(k.shape.nr) + "x" +
                                 std::to_string(k.shape.nt) + " " + to_string(k.mod) +
                                 " S=" + std::to_string(k.S);
        const float n0 = noise_variance_from_snr_db(12.0);
        const uint64_t first_channel = (seed >> 20) % 100000 + (uint64_t(3) << 32);
        channel_generator cpu(k.shape, k.mod, seed, k.S, backend::cpu);
        channel_generator gpu(k.shape, k.mod, seed, k.S, backend::cuda);
        ASSERT_EQ(gpu.active_backend(), backend::cuda);
        const generated want(cpu, first_channel, k.channels, n0);

        const size_t problems = k.channels * k.S;
        device_array<uint8_t> d_bits(problems * cpu.bits_per_problem());
        device_array<cfloat> d_H(k.channels * k.shape.nr * k.shape.nt),
            d_y(problems * k.shape.nr);
        // In two uneven parts, as a device-resident source would call it.
        const size_t first_part = k.channels / 3 + 1;
        gpu.generate_device(
            first_channel, first_part, n0, d_bits.p, d_H.p, d_y.p, stream);
        gpu.generate_device(first_channel + first_part,
                            k.channels - first_part,
                            n0,
                            d_bits.p + first_part * k.S * cpu.bits_per_problem(),
                            d_H.p + first_part * k.shape.nr * k.shape.nt,
                            d_y.p + first_part * k.S * k.shape.nr,
                            stream);
        ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
        expect_close_stream(want,
                            d_bits.host(),
                            d_H.host(),
                            d_y.host(),
                            k.shape,
                            k.mod,
                            k.S,
                            what + " device");

        // The CUDA engine's host-memory path.
        const generated host(gpu, first_channel, k.channels, n0);
        expect_close_stream(
            want, host.bits, host.H, host.y, k.shape, k.mod, k.S, what + " host");
    }
    ASSERT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

TEST(channel_generator_cuda, given_bits_on_the_device_match_the_cpu)
{
    MIMO_GPU_REQUIRE_CUDA();
    const mimo_shape shape{ 4, 4 };
    const int S = 2;
    const size_t channels = 4099;
    const float n0 = noise_variance_from_snr_db(10.0);
    const uint64_t seed = fresh_seed();
    channel_generator cpu(shape, modulation::qam64, seed, S, backend::cpu);
    channel_generator gpu(shape, modulation::qam64, seed, S, backend::cuda);
    const size_t problems = channels * S, n_bits = problems * cpu.bits_per_problem();
    std::mt19937_64 rng(seed);
    std::vector<uint8_t> given(n_bits);
    for (uint8_t& b : given)
        b = uint8_t(rng() & 1);
    generated want(cpu, 7, 0, n0);
    want.bits.resize(n_bits);
    want.H.resize(channels * shape.nr * shape.nt);
    want.y.resize(problems * shape.nr);
    cpu.generate(
        7, channels, n0, want.bits.data(), want.H.data(), want.y.data(), given.data());

    device_array<uint8_t> d_given(n_bits), d_bits(n_bits);
    device_array<cfloat> d_H(want.H.size()), d_y(want.y.size());
    d_given.upload(given);
    cudaStream_t stream;
    ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
    gpu.generate_device(7, channels, n0, d_bits.p, d_H.p, d_y.p, stream, d_given.p);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    ASSERT_EQ(cudaStreamDestroy(stream), cudaSuccess);
    expect_close_stream(want,
                        d_bits.host(),
                        d_H.host(),
                        d_y.host(),
                        shape,
                        modulation::qam64,
                        S,
                        "device");
    // Without a bits output: the same H and y.
    device_array<cfloat> d_H2(want.H.size()), d_y2(want.y.size());
    ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
    gpu.generate_device(7, channels, n0, nullptr, d_H2.p, d_y2.p, stream, d_given.p);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    ASSERT_EQ(cudaStreamDestroy(stream), cudaSuccess);
    EXPECT_EQ(d_H2.host(), d_H.host());
    EXPECT_EQ(d_y2.host(), d_y.host());

    // The CUDA engine's host-memory path (given bits staged).
    std::vector<uint8_t> bits(n_bits);
    std::vector<cfloat> H(want.H.size()), y(want.y.size());
    gpu.generate(7, channels, n0, bits.data(), H.data(), y.data(), given.data());
    expect_close_stream(want, bits, H, y, shape, modulation::qam64, S, "host");
}

TEST(channel_generator_cuda, count_errors_device_matches_cpu)
{
    MIMO_GPU_REQUIRE_CUDA();
    std::mt19937_64 rng(fresh_seed());
    cudaStream_t stream;
    ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
    struct shape {
        size_t items, bits_per_item;
    };
    for (const shape k : { shape{ 0, 16 },
                           shape{ 1, 1 },
                           shape{ 1000, 16 },
                           shape{ 100003, 6 },
                           shape{ 333, 6120 },
                           shape{ 70000, 33 } }) {
        const size_t n = k.items * k.bits_per_item;
        std::vector<uint8_t> sent(n), decided(n);
        std::vector<float> llr(n);
        for (size_t i = 0; i < n; ++i) {
            sent[i] = uint8_t(rng() & 1);
            // about one item in three in error, its errors sparse
            const bool wrong = (i / k.bits_per_item) % 3 == 0 && rng() % 50 == 0;
            decided[i] = uint8_t(wrong ? !sent[i] : sent[i]) * uint8_t(1 + rng() % 200);
            llr[i] = decided[i] ? -1.0f : 1.0f;
        }
        const error_counts want =
            count_errors(decided.data(), sent.data(), k.items, k.bits_per_item);
        device_array<uint8_t> d_sent(n), d_decided(n);
        device_array<float> d_llr(n);
        device_array<unsigned long long> d_counts(2);
        d_sent.upload(sent);
        d_decided.upload(decided);
        d_llr.upload(llr);
        d_counts.upload({ 5, 7 });
        count_errors_device(
            d_decided.p, d_sent.p, k.items, k.bits_per_item, d_counts.p, stream);
        count_errors_device(
            d_llr.p, d_sent.p, k.items, k.bits_per_item, d_counts.p, stream);
        ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
        const std::vector<unsigned long long> got = d_counts.host();
        const std::string what =
            std::to_string(k.items) + " x " + std::to_string(k.bits_per_item);
        EXPECT_EQ(got[0], 5 + 2 * want.bits) << what;
        EXPECT_EQ(got[1], 7 + 2 * want.items) << what;
        if (k.items * k.bits_per_item > 10000) {
            EXPECT_GT(want.items, 0u) << what;
        }
    }
    EXPECT_THROW(
        count_errors_device(
            static_cast<const uint8_t*>(nullptr), nullptr, 4, 4, nullptr, stream),
        std::invalid_argument);
    ASSERT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

TEST(channel_generator_cuda, count_bit_errors_device_matches_cpu)
{
    MIMO_GPU_REQUIRE_CUDA();
    std::mt19937_64 rng(fresh_seed());
    std::normal_distribution<float> normal(0.0f, 1.0f);
    cudaStream_t stream;
    ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
    for (size_t n : { size_t(0),
                      size_t(1),
                      size_t(31),
                      size_t(257),
                      size_t(65537),
                      size_t(1 << 20) + 3,
                      size_t(5) << 20 }) {
        std::vector<float> llr(n);
        std::vector<uint8_t> bits(n);
        for (size_t i = 0; i < n; ++i) {
            llr[i] = i % 97 == 0 ? 0.0f : normal(rng);
            bits[i] = uint8_t(rng() & 1);
        }
        const uint64_t want = count_bit_errors(llr.data(), bits.data(), n);
        device_array<float> d_llr(n);
        device_array<uint8_t> d_bits(n);
        device_array<unsigned long long> d_count(1);
        d_llr.upload(llr);
        d_bits.upload(bits);
        d_count.upload({ 12345 });
        count_bit_errors_device(d_llr.p, d_bits.p, n, d_count.p, stream);
        count_bit_errors_device(d_llr.p, d_bits.p, n, d_count.p, stream); // accumulates
        ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
        EXPECT_EQ(d_count.host()[0], 12345 + 2 * want) << "n = " << n;
        if (n > 100) {
            EXPECT_GT(want, n / 4) << "n = " << n; // random LLRs: about half wrong
        }
    }
    EXPECT_THROW(count_bit_errors_device(nullptr, nullptr, 4, nullptr, stream),
                 std::invalid_argument);
    ASSERT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

#endif // MIMO_GPU_HAVE_CUDA
