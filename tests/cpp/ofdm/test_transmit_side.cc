// The transmit side on both backends: ofdm_stream_transmitter against
// ofdm_transmitter frame by frame, the channel's counter-based noise (its
// variance, independence and reproducibility), and the CUDA transmitter and
// channel against the CPU ones on fresh random inputs, from host and device
// memory; bad bits name their frame on both.
#include "../backend_test.h"
#include "../test_support.h"

#include <mimo_gpu/cuda_multipath_channel.h>
#include <mimo_gpu/device_memory.h>
#include <mimo_gpu/multipath_channel.h>
#include <mimo_gpu/ofdm_stream_transmitter.h>
#include <mimo_gpu/ofdm_transmitter.h>

#include <cmath>
#include <complex>
#include <memory>
#include <random>
#include <vector>

using namespace mimo_gpu;
using namespace mimo_gpu_test;

namespace {

ofdm_grid small_grid(int nt, modulation mod)
{
    ofdm_grid g = ofdm_grid::preset("lte1.4");
    g.nt = nt;
    g.mod = mod;
    g.validate();
    return g;
}

/// Planar antenna buffers of `count` samples each.
struct planar {
    planar(int antennas, size_t count)
        : data(size_t(antennas), std::vector<cfloat>(count))
    {
        for (auto& a : data)
            pointers.push_back(a.data());
    }
    std::vector<std::vector<cfloat>> data;
    std::vector<cfloat*> pointers;
};

/// Device copies of planar buffers, for the CUDA engines' in-place paths.
struct device_planar {
    device_planar(const planar& host) : count(host.data[0].size())
    {
        for (const auto& a : host.data) {
            auto* p = static_cast<cfloat*>(allocate_device(count * sizeof(cfloat)));
            copy_memory(
                p, a.data(), count * sizeof(cfloat), copy_direction::host_to_device);
            pointers.push_back(p);
        }
    }
    ~device_planar()
    {
        for (auto* p : pointers)
            free_device(p);
    }
    void copy_to(planar& host) const
    {
        for (size_t a = 0; a < pointers.size(); ++a)
            copy_memory(host.data[a].data(),
                        pointers[a],
                        count * sizeof(cfloat),
                        copy_direction::device_to_host);
    }
    size_t count;
    std::vector<cfloat*> pointers;
};

/// Largest |a - b| over the largest |a|.
double relative_difference(const planar& a, const planar& b)
{
    double diff = 0, peak = 0;
    for (size_t k = 0; k < a.data.size(); ++k)
        for (size_t n = 0; n < a.data[k].size(); ++n) {
            diff = std::max(diff, double(std::abs(a.data[k][n] - b.data[k][n])));
            peak = std::max(peak, double(std::abs(a.data[k][n])));
        }
    return diff / peak;
}

multipath_config channel_config(int nr, int nt, double doppler, uint64_t seed)
{
    multipath_config c;
    c.nr = nr;
    c.nt = nt;
    c.profile = delay_profile::eva;
    c.sample_rate = 7.68e6;
    c.cfo = 1234.5;
    c.timing_offset = 37;
    c.snr_db = 12;
    c.doppler = doppler;
    c.seed = seed;
    return c;
}

/// `frames` frames through the CPU channel, run by run, into planar outputs.
planar cpu_channel_frames(const multipath_config& c,
                          const planar& tx,
                          size_t samples,
                          size_t frames)
{
    multipath_channel ch(c);
    const size_t out = ch.output_samples(samples);
    planar rx(c.nr, frames * out);
    std::vector<cfloat> in(samples * size_t(c.nt)), y(out * size_t(c.nr));
    for (size_t f = 0; f < frames; ++f) {
        for (size_t n = 0; n < samples; ++n)
            for (int t = 0; t < c.nt; ++t)
                in[n * size_t(c.nt) + size_t(t)] = tx.data[size_t(t)][f * samples + n];
        ch.run(in.data(), samples, y.data());
        for (size_t n = 0; n < out; ++n)
            for (int r = 0; r < c.nr; ++r)
                rx.data[size_t(r)][f * out + n] = y[n * size_t(c.nr) + size_t(r)];
    }
    return rx;
}

planar random_samples(int antennas, size_t count, uint64_t seed)
{
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> g(0.0f, 0.7f);
    planar p(antennas, count);
    for (auto& a : p.data)
        for (auto& v : a)
            v = cfloat(g(rng), g(rng));
    return p;
}

} // namespace

class transmit_side : public backend_test
{
};

TEST_P(transmit_side, stream_transmitter_sends_what_ofdm_transmitter_sends)
{
    const uint64_t seed = fresh_seed();
    for (modulation mod : { modulation::qpsk, modulation::qam64 }) {
        ofdm_grid g = small_grid(2, mod);
        if (mod == modulation::qam64) // a layout of three pilot symbols a slot
            g.pilot_positions = { 1, 4, 8 };
        const size_t frames = 5, S = size_t(g.frame_samples()), B = g.frame_bits();
        const std::vector<uint8_t> bits = random_bits(frames * B, seed);
        ofdm_stream_transmitter stream(g, backend_from_string(backend()));
        EXPECT_EQ(to_string(stream.active_backend()), backend());
        planar out(g.nt, frames * S);
        stream.modulate(bits.data(), frames, out.pointers.data());
        ofdm_transmitter reference(g);
        planar expected(g.nt, frames * S);
        std::vector<cfloat> one(S * size_t(g.nt));
        for (size_t f = 0; f < frames; ++f) {
            reference.modulate(bits.data() + f * B, one.data());
            for (size_t n = 0; n < S; ++n)
                for (int t = 0; t < g.nt; ++t)
                    expected.data[size_t(t)][f * S + n] =
                        one[n * size_t(g.nt) + size_t(t)];
        }
        const double d = relative_difference(expected, out);
        std::printf("[ measured ] %s %s: largest difference %.2e of the peak\n",
                    backend().c_str(),
                    to_string(mod).c_str(),
                    d);
        if (backend() == "cpu")
            EXPECT_EQ(d, 0.0); // the same transmitter, frame by frame
        else
            EXPECT_LT(d, 2e-6); // cuFFT against FFTW
    }
}

TEST_P(transmit_side, a_bad_bit_byte_names_its_frame)
{
    const ofdm_grid g = small_grid(2, modulation::qam16);
    const size_t frames = 4, S = size_t(g.frame_samples()), B = g.frame_bits();
    std::vector<uint8_t> bits = random_bits(frames * B, fresh_seed());
    bits[2 * B + 77] = 2;
    bits[3 * B + 5] = 255;
    ofdm_stream_transmitter stream(g, backend_from_string(backend()));
    planar out(g.nt, frames * S);
    try {
        stream.modulate(bits.data(), frames, out.pointers.data());
        FAIL() << "bad bits were sent";
    } catch (const bad_frame_bits& e) {
        EXPECT_EQ(e.frame(), 2u) << e.what();
    }
    // The transmitter goes on with good bits.
    bits[2 * B + 77] = 1;
    bits[3 * B + 5] = 0;
    EXPECT_NO_THROW(stream.modulate(bits.data(), frames, out.pointers.data()));
}

TEST_P(transmit_side, a_bad_frame_in_a_later_pass_is_named_from_the_batch_start)
{
    // NR 100 MHz 4x4: the GPU transforms 8 frames a pass, so frame 9 of a batch
    // of 10 is frame 1 of the second pass.
    ofdm_grid g = ofdm_grid::preset("nr100");
    g.nt = 4;
    g.data_symbols = 13;
    g.validate();
    const size_t frames = 10, B = g.frame_bits();
    std::vector<uint8_t> bits(frames * B, 0);
    bits[9 * B + 12345] = 3;
    ofdm_stream_transmitter stream(g, backend_from_string(backend()));
    planar out(g.nt, frames * size_t(g.frame_samples()));
    try {
        stream.modulate(bits.data(), frames, out.pointers.data());
        FAIL() << "bad bits were sent";
    } catch (const bad_frame_bits& e) {
        EXPECT_EQ(e.frame(), 9u) << e.what();
    }
}

INSTANTIATE_TEST_SUITE_P(backends, transmit_side, ::testing::Values("cpu", "cuda"));

TEST(multipath_channel, noise_is_white_with_the_stated_variance_and_reproducible)
{
    // No signal: every output sample is noise. Its variance per complex sample
    // is N0 on every antenna, re and im each half, uncorrelated across antennas
    // and between neighbouring samples; the same seed gives the same noise, the
    // next run other noise.
    const uint64_t seed = fresh_seed();
    multipath_config c = channel_config(3, 2, 0, seed);
    c.snr_db = 7;
    const double n0 = std::pow(10.0, -0.7);
    const size_t samples = 20000;
    multipath_channel a(c), b(c);
    const std::vector<cfloat> zeros(samples * 2, cfloat(0, 0));
    const size_t out = a.output_samples(samples);
    std::vector<cfloat> ya(out * 3), yb(out * 3), yc(out * 3);
    a.run(zeros.data(), samples, ya.data());
    b.run(zeros.data(), samples, yb.data());
    a.run(zeros.data(), samples, yc.data());
    EXPECT_EQ(ya, yb);
    size_t same = 0;
    for (size_t i = 0; i < ya.size(); ++i)
        same += ya[i] == yc[i];
    EXPECT_EQ(same, 0u);
    for (int r = 0; r < 3; ++r) {
        double re = 0, im = 0, lag = 0, cross = 0;
        for (size_t n = 0; n < out; ++n) {
            const cfloat v = ya[n * 3 + size_t(r)];
            re += double(v.real()) * v.real();
            im += double(v.imag()) * v.imag();
            if (n + 1 < out)
                lag += std::abs(
                    std::complex<double>(v) *
                    std::conj(std::complex<double>(ya[(n + 1) * 3 + size_t(r)])));
            cross += std::real(
                std::complex<double>(v) *
                std::conj(std::complex<double>(ya[n * 3 + size_t((r + 1) % 3)])));
        }
        const double N = double(out);
        std::printf("[ measured ] antenna %d: re %.4f im %.4f (N0/2 %.4f), cross %.4f\n",
                    r,
                    re / N,
                    im / N,
                    n0 / 2,
                    cross / N);
        // 5 sigma of an estimate from 20 000 samples: 5 * sqrt(2 / N) relative.
        EXPECT_NEAR(re / N, n0 / 2, 5 * std::sqrt(2 / N) * n0 / 2);
        EXPECT_NEAR(im / N, n0 / 2, 5 * std::sqrt(2 / N) * n0 / 2);
        EXPECT_LT(std::abs(cross / N), 5 * n0 / std::sqrt(2 * N));
        (void)lag;
    }
}

TEST(multipath_channel, each_antenna_has_the_noise_it_is_given)
{
    // antenna_noise_db offsets each receive antenna's noise from the SNR's;
    // the wrong count, a non-finite value or one beyond 100 dB is a clear error.
    const uint64_t seed = fresh_seed();
    multipath_config c = channel_config(3, 2, 0, seed);
    c.snr_db = 7;
    c.antenna_noise_db = { 0, 6, -3 };
    multipath_channel ch(c);
    const size_t samples = 20000;
    const std::vector<cfloat> zeros(samples * 2, cfloat(0, 0));
    const size_t out = ch.output_samples(samples);
    std::vector<cfloat> y(out * 3);
    ch.run(zeros.data(), samples, y.data());
    for (int r = 0; r < 3; ++r) {
        const double n0 = std::pow(10.0, (c.antenna_noise_db[size_t(r)] - 7) / 10);
        EXPECT_NEAR(ch.antenna_noise_variance(r), n0, 1e-6 * n0);
        double power = 0;
        for (size_t n = 0; n < out; ++n)
            power += std::norm(y[n * 3 + size_t(r)]);
        EXPECT_NEAR(power / double(out), n0, 5 * n0 / std::sqrt(double(out)))
            << "antenna " << r;
    }
    for (const std::vector<double>& bad : { std::vector<double>{ 0, 6 },
                                            std::vector<double>{ 0, NAN, 0 },
                                            std::vector<double>{ 0, 101, 0 } }) {
        c.antenna_noise_db = bad;
        try {
            multipath_channel rejected(c);
            ADD_FAILURE() << "accepted " << bad.size() << " values";
        } catch (const std::invalid_argument& e) {
            EXPECT_NE(std::string(e.what()).find("antenna_noise_db"), std::string::npos)
                << e.what();
        }
    }
}

class cuda_transmit_side : public ::testing::Test
{
protected:
    void SetUp() override { MIMO_GPU_REQUIRE_CUDA(); }
};

TEST_F(cuda_transmit_side, channel_equals_the_cpu_channel_from_host_and_device_memory)
{
    const uint64_t seed = fresh_seed();
    for (double doppler : { 0.0, 300.0 }) {
        for (int nr : { 2, 4 }) {
            multipath_config c = channel_config(nr, 2, doppler, seed + uint64_t(nr));
            if (nr == 4) // antennas of different noise
                c.antenna_noise_db = { 0, 10, -5, 3 };
            const size_t samples = 15360, frames = 3;
            const planar tx = random_samples(c.nt, frames * samples, seed + 11);
            const planar expected = cpu_channel_frames(c, tx, samples, frames);
            // Host memory in and out.
            cuda_multipath_channel gpu(c);
            const size_t out = gpu.model().output_samples(samples);
            planar rx(nr, frames * out);
            std::vector<const cfloat*> in;
            for (const auto& a : tx.data)
                in.push_back(a.data());
            gpu.run_frames(in.data(), samples, frames, rx.pointers.data());
            const double d_host = relative_difference(expected, rx);
            // Device memory in and out: a fresh channel of the same seed.
            cuda_multipath_channel again(c);
            const device_planar dtx(tx);
            planar zeros(nr, frames * out), back(nr, frames * out);
            device_planar drx(zeros);
            std::vector<const cfloat*> din(dtx.pointers.begin(), dtx.pointers.end());
            again.run_frames(din.data(), samples, frames, drx.pointers.data());
            drx.copy_to(back);
            const double d_device = relative_difference(expected, back);
            std::printf("[ measured ] %dx2, Doppler %.0f Hz: host %.2e, device %.2e of "
                        "the peak\n",
                        nr,
                        doppler,
                        d_host,
                        d_device);
            EXPECT_LT(d_host, 1e-5);
            EXPECT_LT(d_device, 1e-5);
        }
    }
}

TEST_F(cuda_transmit_side, transmitter_reads_and_writes_device_memory)
{
    const ofdm_grid g = small_grid(4, modulation::qam256);
    const size_t frames = 3, S = size_t(g.frame_samples()), B = g.frame_bits();
    const std::vector<uint8_t> bits = random_bits(frames * B, fresh_seed());
    ofdm_stream_transmitter cpu(g, backend::cpu), gpu(g, backend::cuda);
    planar expected(g.nt, frames * S), back(g.nt, frames * S);
    cpu.modulate(bits.data(), frames, expected.pointers.data());
    auto* dbits = static_cast<uint8_t*>(allocate_device(bits.size()));
    copy_memory(dbits, bits.data(), bits.size(), copy_direction::host_to_device);
    device_planar out(back);
    gpu.modulate(dbits, frames, out.pointers.data());
    out.copy_to(back);
    free_device(dbits);
    EXPECT_LT(relative_difference(expected, back), 2e-6);
}

TEST_F(cuda_transmit_side, channel_refuses_more_than_eight_antennas)
{
    multipath_config c = channel_config(9, 2, 0, 1);
    EXPECT_THROW(cuda_multipath_channel ch(c), std::invalid_argument);
}
