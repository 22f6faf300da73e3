// SigMF recordings: round trips (cf32 / ci16, interleaved / per channel, the
// frame parameters), chunked reads, every bad file a clear error, and a
// recording of the transmitter decoded exactly as the live samples are.
#include "../test_support.h"
#include "front_end_fixtures.h"

#include <mimo_gpu/detector_registry.h>
#include <mimo_gpu/multipath_channel.h>
#include <mimo_gpu/ofdm_receiver.h>
#include <mimo_gpu/ofdm_transmitter.h>
#include <mimo_gpu/sigmf.h>

#include <cmath>
#include <fstream>
#include <random>

using namespace mimo_gpu;
using namespace mimo_gpu_test;

namespace {

std::string temp_base(const std::string& name)
{
    return ::testing::TempDir() + "mimo_gpu_" + name;
}

std::vector<cfloat> random_samples(size_t n, uint64_t seed, float scale = 0.5f)
{
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> g(0.0f, scale);
    std::vector<cfloat> v(n);
    for (auto& x : v)
        x = cfloat(g(rng), g(rng));
    return v;
}

template <typename F>
void expect_error(F&& f, const std::string& fragment)
{
    try {
        f();
        FAIL() << "no error; expected one containing '" << fragment << "'";
    } catch (const std::exception& e) {
        EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
}

void write_text(const std::string& path, const std::string& text)
{
    std::ofstream f(path, std::ios::trunc);
    f << text;
}

} // namespace

TEST(sigmf, round_trips_every_format_and_layout)
{
    const uint64_t seed = fresh_seed();
    for (sample_format fmt : { sample_format::cf32, sample_format::ci16 })
        for (bool interleaved : { true, false }) {
            sigmf_meta m;
            m.sample_rate = 1.92e6;
            m.center_frequency = 2.45e9;
            m.channels = 3;
            m.format = fmt;
            m.interleaved = interleaved;
            m.ci16_full_scale = 4.0f;
            m.description = "test \"recording\"\n";
            m.hardware = "simulated";
            m.has_grid = true;
            m.grid = ofdm_grid::preset("lte1.4");
            m.grid.nt = 2;
            m.grid.mod = modulation::qam64;
            m.grid.pilot_positions = { 2, 5 };
            m.snr_db = 17.5;
            m.doppler_hz = 70;
            m.transport_block_bits = 1234;
            const size_t n = 1001;
            std::vector<cfloat> x = random_samples(n * 3, seed);
            x[5] = cfloat(100.0f, -100.0f); // beyond ci16 full scale: clipped
            x[6] = cfloat(NAN, 0.5f);       // not an int16: written as 0 in ci16
            const uint64_t want_clipped = fmt == sample_format::ci16 ? 3 : 0;
            const std::string base = temp_base("roundtrip");
            EXPECT_EQ(write_sigmf(base, m, x.data(), n), want_clipped);
            sigmf_reader r(base + ".sigmf-meta");
            EXPECT_EQ(r.samples_per_channel(), n);
            const sigmf_meta& got = r.meta();
            EXPECT_EQ(got.ci16_values_clipped, want_clipped)
                << "the meta says the capture clipped";
            EXPECT_EQ(got.channels, 3);
            EXPECT_EQ(got.format, fmt);
            EXPECT_EQ(got.interleaved, interleaved);
            EXPECT_EQ(got.sample_rate, m.sample_rate);
            EXPECT_EQ(got.center_frequency, m.center_frequency);
            EXPECT_EQ(got.description, m.description);
            EXPECT_EQ(got.hardware, m.hardware);
            EXPECT_EQ(got.snr_db, m.snr_db);
            EXPECT_EQ(got.doppler_hz, 70.0);
            EXPECT_EQ(got.transport_block_bits, 1234);
            ASSERT_TRUE(got.has_grid);
            EXPECT_EQ(got.grid.fft_size, m.grid.fft_size);
            EXPECT_EQ(got.grid.cp_length, m.grid.cp_length);
            EXPECT_EQ(got.grid.used_subcarriers, m.grid.used_subcarriers);
            EXPECT_EQ(got.grid.dc_null, m.grid.dc_null);
            EXPECT_EQ(got.grid.nt, 2);
            EXPECT_EQ(got.grid.slots, m.grid.slots);
            EXPECT_EQ(got.grid.data_symbols, m.grid.data_symbols);
            EXPECT_EQ(got.grid.mod, modulation::qam64);
            EXPECT_EQ(got.grid.pilot_positions, (std::vector<int>{ 2, 5 }));
            // Chunked reads give the samples in order, interleaved by channel.
            std::vector<cfloat> y(n * 3);
            size_t at = 0;
            while (size_t k = r.read(y.data() + at * 3, 97))
                at += k;
            EXPECT_EQ(at, n);
            const float tol =
                fmt == sample_format::cf32 ? 0.0f : 0.5f * 4.0f / 32767.0f + 1e-6f;
            for (size_t k = 0; k < x.size(); ++k) {
                if (k == 5 && fmt == sample_format::ci16) {
                    EXPECT_FLOAT_EQ(y[k].real(), 4.0f);
                    EXPECT_FLOAT_EQ(y[k].imag(), -4.0f);
                    continue;
                }
                if (k == 6) {
                    EXPECT_TRUE(fmt == sample_format::ci16 ? y[k].real() == 0.0f
                                                           : std::isnan(y[k].real()));
                    EXPECT_LE(std::abs(y[k].imag() - 0.5f), tol);
                    continue;
                }
                ASSERT_LE(std::abs(y[k].real() - x[k].real()), tol) << k;
                ASSERT_LE(std::abs(y[k].imag() - x[k].imag()), tol) << k;
            }
            r.require_channels(3);
            expect_error([&] { r.require_channels(2); },
                         "has 3 channels, the receiver needs 2");
        }
}

TEST(sigmf, bad_recordings_are_clear_errors)
{
    const std::string base = temp_base("bad");
    sigmf_meta m;
    m.sample_rate = 1e6;
    m.channels = 2;
    std::vector<cfloat> x = random_samples(200, fresh_seed());
    write_sigmf(base, m, x.data(), 100);
    EXPECT_NO_THROW(sigmf_reader{ base });
    expect_error([&] { sigmf_reader r(temp_base("does_not_exist")); }, "no meta file");
    // truncated data: not a whole number of samples of both channels
    {
        std::ofstream d(base + ".sigmf-data", std::ios::binary | std::ios::app);
        d.write("abc", 3);
    }
    expect_error([&] { sigmf_reader r(base); }, "truncated");
    write_sigmf(base, m, x.data(), 100);
    std::remove((base + ".sigmf-data").c_str());
    expect_error([&] { sigmf_reader r(base); }, "no data file");
    write_sigmf(base, m, x.data(), 100);
    const std::string meta = base + ".sigmf-meta";
    const std::string good = [&] {
        std::ifstream f(meta);
        return std::string(std::istreambuf_iterator<char>(f), {});
    }();
    write_text(meta, "");
    expect_error([&] { sigmf_reader r(base); }, "malformed JSON");
    write_text(meta, good.substr(0, good.size() / 2));
    expect_error([&] { sigmf_reader r(base); }, "malformed JSON");
    write_text(meta, "[1, 2]");
    expect_error([&] { sigmf_reader r(base); }, "not a JSON object");
    write_text(meta, "{\"captures\": []}");
    expect_error([&] { sigmf_reader r(base); }, "missing field \"global\"");
    write_text(meta, "{\"global\": {\"core:sample_rate\": 1e6}}");
    expect_error([&] { sigmf_reader r(base); }, "missing field \"core:datatype\"");
    write_text(meta,
               "{\"global\": {\"core:datatype\": \"ri8\", \"core:sample_rate\": 1e6}}");
    expect_error([&] { sigmf_reader r(base); },
                 "not supported (supported: cf32_le, ci16_le)");
    write_text(
        meta,
        "{\"global\": {\"core:datatype\": \"cf32_le\", \"core:sample_rate\": \"fast\"}}");
    expect_error([&] { sigmf_reader r(base); },
                 "\"core:sample_rate\" has the wrong type");
    write_text(meta,
               "{\"global\": {\"core:datatype\": \"cf32_le\", \"core:sample_rate\": 1e6, "
               "\"core:num_channels\": 0}}");
    expect_error([&] { sigmf_reader r(base); }, "core:num_channels must be >= 1");
    write_text(
        meta, "{\"global\": {\"core:datatype\": \"cf32_le\", \"core:sample_rate\": -5}}");
    expect_error([&] { sigmf_reader r(base); },
                 "sample_rate must be finite and at least 1 Hz, got -5");
    write_text(
        meta,
        "{\"global\": {\"core:datatype\": \"cf32_le\", \"core:sample_rate\": 1e-300}}");
    expect_error([&] { sigmf_reader r(base); },
                 "sample_rate must be finite and at least 1 Hz, got 1e-300");
    write_text(
        meta,
        "{\"global\": {\"core:datatype\": \"cf32_le\", \"core:sample_rate\": 1e999}}");
    expect_error([&] { sigmf_reader r(base); }, "bad number '1e999'");
    for (const char* count : { "-1", "2.5", "\"many\"" }) {
        write_text(meta,
                   std::string("{\"global\": {\"core:datatype\": \"ci16_le\", "
                               "\"core:sample_rate\": 1e6, "
                               "\"mimo_gpu:ci16_values_clipped\": ") +
                       count + "}}");
        expect_error([&] { sigmf_reader r(base); }, "ci16_values_clipped");
    }
    // frame parameters that do not fit: the grid's own error, with the file name
    std::string bad_grid = good;
    bad_grid.replace(
        bad_grid.find("\"core:version\""),
        0,
        "\"mimo_gpu:fft_size\": 64, \"mimo_gpu:cp_length\": 4, "
        "\"mimo_gpu:used_subcarriers\": 72, "
        "\"mimo_gpu:dc_null\": true, \"mimo_gpu:nt\": 2, \"mimo_gpu:data_symbols\": 6, "
        "\"mimo_gpu:slots\": 2, \"mimo_gpu:modulation\": \"16qam\", ");
    write_text(meta, bad_grid);
    expect_error([&] { sigmf_reader r(base); }, "do not fit an FFT of 64");
    // a pilot layout that is not a list of whole numbers, or that the slot cannot
    // hold; a meta without one (from before layouts) has the default
    const std::string fitting_grid =
        "\"mimo_gpu:fft_size\": 128, \"mimo_gpu:cp_length\": 9, "
        "\"mimo_gpu:used_subcarriers\": 72, "
        "\"mimo_gpu:dc_null\": true, \"mimo_gpu:nt\": 2, \"mimo_gpu:data_symbols\": 6, "
        "\"mimo_gpu:slots\": 2, \"mimo_gpu:modulation\": \"16qam\", ";
    const std::pair<const char*, const char*> bad_layouts[] = {
        { "\"mimo_gpu:pilot_positions\": 3, ", "must be an array" },
        { "\"mimo_gpu:pilot_positions\": [1, \"a\"], ", "must hold whole numbers" },
        { "\"mimo_gpu:pilot_positions\": [1.5], ", "must hold whole numbers" },
        { "\"mimo_gpu:pilot_positions\": [0, 9], ", "pilot position 9 is outside" },
        { "\"mimo_gpu:pilot_positions\": [], ", "1..4 pilot symbols, got 0" },
    };
    for (const auto& [field, fragment] : bad_layouts) {
        std::string with_layout = good;
        with_layout.replace(
            with_layout.find("\"core:version\""), 0, fitting_grid + field);
        write_text(meta, with_layout);
        expect_error([&] { sigmf_reader r(base); }, fragment);
    }
    {
        std::string without_layout = good;
        without_layout.replace(without_layout.find("\"core:version\""), 0, fitting_grid);
        write_text(meta, without_layout);
        sigmf_reader r(base);
        ASSERT_TRUE(r.meta().has_grid);
        EXPECT_EQ(r.meta().grid.pilot_positions, std::vector<int>{ 0 });
    }
    // garbage of every kind never crashes
    std::mt19937_64 rng(fresh_seed());
    for (int trial = 0; trial < 200; ++trial) {
        std::string junk = good;
        for (int k = 0; k < 4; ++k)
            junk[rng() % junk.size()] = char(rng() % 256);
        write_text(meta, junk);
        try {
            sigmf_reader r(base);
        } catch (const std::runtime_error&) {
        } catch (const std::invalid_argument&) {
        }
    }
    // bad metas are refused when writing
    m.channels = 0;
    EXPECT_THROW(write_sigmf(base, m, x.data(), 100), std::invalid_argument);
    m.channels = 2;
    m.sample_rate = 0;
    EXPECT_THROW(write_sigmf(base, m, x.data(), 100), std::invalid_argument);
}

TEST(sigmf, a_recording_decodes_as_the_live_samples_do)
{
    // Transmitter and channel -> samples; the same samples live and through a
    // recording (cf32 exactly, ci16 quantised) -> the same frames, LLR signs
    // and decisions.
    ofdm_grid g = ofdm_grid::preset("lte1.4");
    g.nt = 2;
    ofdm_transmitter tx(g);
    multipath_config mc;
    mc.profile = delay_profile::epa;
    mc.sample_rate = g.sample_rate;
    mc.cfo = 0.17 * g.subcarrier_spacing();
    mc.timing_offset = 77;
    mc.snr_db = 25;
    mc.seed = fresh_seed();
    multipath_channel ch(mc);
    std::vector<cfloat> live;
    std::mt19937_64 rng(mc.seed);
    std::vector<uint8_t> bits(g.frame_bits());
    std::vector<cfloat> t(size_t(g.frame_samples()) * 2),
        r(ch.output_samples(size_t(g.frame_samples())) * 2);
    for (int f = 0; f < 3; ++f) {
        for (auto& b : bits)
            b = uint8_t(rng() & 1);
        tx.modulate(bits.data(), t.data());
        ch.run(t.data(), size_t(g.frame_samples()), r.data());
        live.insert(live.end(), r.begin(), r.end());
    }
    const size_t n = live.size() / 2;
    ofdm_receiver_config rc;
    rc.nr = 2;
    rc.requested = backend::cpu;
    auto det = make_detector("mmse", { { 2, 2 }, g.mod, {} }, backend::cpu);
    auto decode = [&](const std::vector<cfloat>& samples) {
        ofdm_receiver rx(g, rc);
        std::vector<float> llrs;
        size_t from = 0;
        for (;;) {
            const sync_result s = rx.synchronize(samples.data(), n, from);
            if (!s.found || !s.complete)
                break;
            const front_end_frame fr = rx.receive(samples.data(), n, s);
            std::vector<float> llr(g.frame_bits());
            det->detect(detector_input_of(fr), llr.data());
            llrs.insert(llrs.end(), llr.begin(), llr.end());
            from = s.frame_start + size_t(g.frame_samples()) - size_t(g.cp_length);
        }
        return llrs;
    };
    const std::vector<float> want = decode(live);
    ASSERT_EQ(want.size(), 3 * g.frame_bits());
    for (sample_format fmt : { sample_format::cf32, sample_format::ci16 }) {
        sigmf_meta m;
        m.sample_rate = g.sample_rate;
        m.channels = 2;
        m.format = fmt;
        // Full scale at the capture's peak, as a recording should be set up:
        // faded peaks of EPA reach 6x the rms, and clipped values (counted in
        // the meta) change LLRs far from 0.
        float peak = 0;
        for (const cfloat& v : live)
            peak = std::max({ peak, std::abs(v.real()), std::abs(v.imag()) });
        m.ci16_full_scale = peak;
        m.has_grid = true;
        m.grid = g;
        const std::string base = temp_base("live");
        EXPECT_EQ(write_sigmf(base, m, live.data(), n), 0u) << "nothing clipped";
        sigmf_reader reader(base);
        reader.require_channels(2);
        ASSERT_TRUE(reader.meta().has_grid);
        std::vector<cfloat> recorded(n * 2);
        ASSERT_EQ(reader.read(recorded.data(), n), n);
        const std::vector<float> got = decode(recorded);
        ASSERT_EQ(got.size(), want.size());
        size_t sign_differences = 0;
        float largest_flipped = 0;
        for (size_t k = 0; k < got.size(); ++k)
            if ((got[k] < 0) != (want[k] < 0)) {
                ++sign_differences;
                largest_flipped = std::max(largest_flipped, std::abs(want[k]));
            }
        if (fmt == sample_format::cf32)
            EXPECT_EQ(got, want) << "cf32 recordings are exact";
        else { // int16 quantisation (-90 dB of full scale) may flip LLRs next to 0 (seen:
               // |LLR| < 0.01)
            EXPECT_LE(sign_differences, got.size() / 1000) << "ci16";
            EXPECT_LT(largest_flipped, 0.1f) << "ci16: a flipped LLR was not next to 0";
        }
        std::printf("[ compared ] %s recording: %zu LLRs, %zu signs differ from live "
                    "(largest |LLR| flipped %.2g)\n",
                    fmt == sample_format::cf32 ? "cf32" : "ci16",
                    got.size(),
                    sign_differences,
                    double(largest_flipped));
    }
}
