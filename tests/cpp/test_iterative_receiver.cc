// The iterative receiver: a detector with priors and the transport-block
// decoder exchanging extrinsic LLRs.
#include "test_support.h"

#include <mimo_gpu/channel_simulator.h>
#include <mimo_gpu/detector_registry.h>
#include <mimo_gpu/iterative_receiver.h>
#include <mimo_gpu/nr_transport_block.h>

using namespace mimo_gpu;
using namespace mimo_gpu_test;

namespace {

/// `count` transport blocks of A bits, encoded (`encode`: A -> G bits), mapped
/// onto nr x nt problems (G / (nt Q) each) and sent through i.i.d. Rayleigh
/// channels at `snr_db`.
struct coded_link {
    std::vector<uint8_t> a, coded;
    std::vector<cfloat> H, y;
    float n0;
    size_t problems;

    template <class Encode>
    coded_link(int A,
               int G,
               const Encode& encode,
               mimo_shape shape,
               modulation mod,
               size_t count,
               double snr_db,
               uint64_t seed)
        : a(count * size_t(A)),
          coded(count * size_t(G)),
          n0(noise_variance_from_snr_db(snr_db))
    {
        channel_simulator sim(shape, mod, seed);
        sim.random_bits(a.data(), a.size());
        for (size_t t = 0; t < count; ++t)
            encode(a.data() + t * size_t(A), coded.data() + t * size_t(G));
        problems = coded.size() / size_t(sim.bits_per_problem());
        H.resize(problems * size_t(shape.nr) * shape.nt);
        y.resize(problems * size_t(shape.nr));
        sim.run(coded.data(), problems, n0, H.data(), y.data());
    }
    /// Transport blocks of an LTE or NR format, by that code's encoder.
    template <class Format>
    coded_link(const Format& f,
               mimo_shape shape,
               modulation mod,
               size_t count,
               double snr_db,
               uint64_t seed)
        : coded_link(
              f.A,
              f.G,
              [enc = encoder_of(f)](const uint8_t* a, uint8_t* g) { enc.encode(a, g); },
              shape,
              mod,
              count,
              snr_db,
              seed)
    {
    }
    static transport_block_encoder encoder_of(const transport_block_format& f)
    {
        return transport_block_encoder(f);
    }
    static nr_transport_block_encoder encoder_of(const nr_transport_block_format& f)
    {
        return nr_transport_block_encoder(f);
    }

    detector_input input() const
    {
        detector_input in;
        in.H = H.data();
        in.y = y.data();
        in.channels = problems;
        in.n0 = n0;
        return in;
    }
};

turbo_decoder_config decoder_config()
{
    turbo_decoder_config c;
    c.iterations = 6;
    return c;
}

} // namespace

TEST(iterative_receiver, bad_setups_are_clear_errors)
{
    const transport_block_format f{ 1000, 2048, 4 };
    auto make = [&](const char* name) {
        return make_detector(name, { { 4, 4 }, modulation::qam16, {} }, backend::cpu);
    };
    EXPECT_THROW(iterative_receiver(make("nway"), f, decoder_config()),
                 std::invalid_argument);
    iterative_receiver_config zero;
    zero.outer_iterations = 0;
    EXPECT_THROW(iterative_receiver(make("kbest"), f, decoder_config(), zero),
                 std::invalid_argument);
    const transport_block_format odd{ 1000, 2050, 2 }; // not whole 16-bit problems
    EXPECT_THROW(iterative_receiver(make("kbest"), odd, decoder_config()),
                 std::invalid_argument);
}

TEST(iterative_receiver, one_pass_is_detection_then_decoding)
{
    const transport_block_format f{ 1000, 2048, 4 };
    coded_link link(f, { 4, 4 }, modulation::qam16, 6, 12.0, fresh_seed());
    iterative_receiver_config one;
    one.outer_iterations = 1;
    iterative_receiver rx(
        make_detector("kbest", { { 4, 4 }, modulation::qam16, {} }, backend::cpu),
        f,
        decoder_config(),
        one,
        backend::cpu);
    std::vector<uint8_t> a(link.a.size());
    const auto r = rx.receive(link.input(), 6, a.data());

    auto det = make_detector("kbest", { { 4, 4 }, modulation::qam16, {} }, backend::cpu);
    std::vector<float> llr(link.coded.size());
    det->detect(link.input(), llr.data());
    transport_block_decoder dec(f, decoder_config(), backend::cpu);
    std::vector<uint8_t> b(a.size());
    const auto want = dec.decode(llr.data(), 6, b.data());
    EXPECT_EQ(a, b);
    for (size_t t = 0; t < 6; ++t) {
        EXPECT_EQ(r[t].decoded.crc_ok, want[t].crc_ok);
        EXPECT_EQ(r[t].outer_iterations, 1);
    }
}

TEST(iterative_receiver, feedback_lowers_the_block_error_rate)
{
    // 4x4 16-QAM, rate ~1/2, K-best 16 (its list with priors), near the cliff:
    // the same draws received with 1 and with 3 outer iterations.
    const transport_block_format f{ 1000, 2048, 4 };
    const size_t count = 120;
    const uint64_t seed = fresh_seed();
    for (const double snr : { 6.0 }) {
        coded_link link(f, { 4, 4 }, modulation::qam16, count, snr, seed);
        int errors[2] = { 0, 0 };
        for (int k = 0; k < 2; ++k) {
            iterative_receiver_config c;
            c.outer_iterations = k == 0 ? 1 : 3;
            iterative_receiver rx(
                make_detector("kbest", { { 4, 4 }, modulation::qam16, {} }, backend::cpu),
                f,
                decoder_config(),
                c,
                backend::cpu);
            std::vector<uint8_t> a(link.a.size());
            for (const idd_result& r : rx.receive(link.input(), count, a.data()))
                errors[k] += !r.decoded.crc_ok;
        }
        std::printf(
            "[ measured ] %.1f dB: %d of %zu blocks fail with 1 pass, %d with 3\n",
            snr,
            errors[0],
            count,
            errors[1]);
        EXPECT_GE(errors[0], 5) << "not near the cliff: the comparison says nothing";
        EXPECT_LT(errors[1], errors[0]);
    }
}

TEST(iterative_receiver_cuda, equals_the_cpu)
{
    MIMO_GPU_REQUIRE_CUDA();
    // K-best and the turbo decoder are bit-identical on both backends, so is the loop.
    const transport_block_format f{ 1000, 2048, 4 };
    const size_t count = 20;
    coded_link link(f, { 4, 4 }, modulation::qam16, count, 6.0, fresh_seed());
    std::vector<uint8_t> bits[2];
    std::vector<idd_result> results[2];
    for (int k = 0; k < 2; ++k) {
        const backend b = k == 0 ? backend::cpu : backend::cuda;
        iterative_receiver rx(
            make_detector("kbest", { { 4, 4 }, modulation::qam16, {} }, b),
            f,
            decoder_config(),
            {},
            b);
        bits[k].resize(link.a.size());
        results[k] = rx.receive(link.input(), count, bits[k].data());
    }
    EXPECT_EQ(bits[0], bits[1]);
    for (size_t t = 0; t < count; ++t) {
        EXPECT_EQ(results[0][t].decoded.crc_ok, results[1][t].decoded.crc_ok) << t;
        EXPECT_EQ(results[0][t].outer_iterations, results[1][t].outer_iterations) << t;
    }
}

TEST(iterative_receiver_cuda, the_device_loop_equals_the_host_loop)
{
    MIMO_GPU_REQUIRE_CUDA();
    // The same kernels either way: the device loop only keeps the LLRs and
    // priors on the GPU, so every bit, CRC and pass count is the same.
    const transport_block_format f{ 1000, 2048, 4 };
    const size_t count = 24;
    coded_link link(f, { 4, 4 }, modulation::qam16, count, 5.5, fresh_seed());
    int all_passes = 0;
    for (const char* name : { "mmse", "kbest", "ml" }) {
        std::vector<uint8_t> bits[2];
        std::vector<idd_result> results[2];
        for (int device : { 0, 1 }) {
            iterative_receiver_config config;
            config.outer_iterations = 4;
            config.device_loop = device == 1;
            iterative_receiver rx(
                make_detector(name, { { 4, 4 }, modulation::qam16, {} }, backend::cuda),
                f,
                decoder_config(),
                config,
                backend::cuda);
            EXPECT_EQ(rx.loops_on_device(), device == 1) << name;
            bits[device].resize(link.a.size());
            // Twice: the second call reuses the device buffers.
            rx.receive(link.input(), count, bits[device].data());
            results[device] = rx.receive(link.input(), count, bits[device].data());
        }
        EXPECT_EQ(bits[0], bits[1]) << name;
        int passes = 0, passed = 0;
        for (size_t t = 0; t < count; ++t) {
            EXPECT_EQ(results[0][t].decoded.crc_ok, results[1][t].decoded.crc_ok)
                << name << " " << t;
            EXPECT_EQ(results[0][t].outer_iterations, results[1][t].outer_iterations)
                << name << " " << t;
            passes += results[1][t].outer_iterations;
            passed += results[1][t].decoded.crc_ok;
        }
        std::printf("[ compared ] %s: %zu blocks, %d passed, %d passes\n",
                    name,
                    count,
                    passed,
                    passes);
        all_passes += passes;
    }
    // Some blocks needed feedback (ML alone passes all 24 at the first pass
    // now and then: seed 5289726180786752012; MMSE took 38-45 passes).
    EXPECT_GT(all_passes, int(3 * count));
}

TEST(iterative_receiver, ldpc_feedback_lowers_the_block_error_rate)
{
    // NR transport blocks (LDPC, offset min-sum): 4x4 16-QAM over four layers,
    // A = 1000 on G = 2048 (BG2), K-best 16 near the cliff, 1 and 3 passes on
    // the same draws; a CRC pass always carries the sent bits.
    const nr_transport_block_format f{ 1000, 2048, 4, 4 };
    const size_t count = 120;
    const double snr = 6.0;
    coded_link link(f, { 4, 4 }, modulation::qam16, count, snr, fresh_seed());
    int errors[2] = { 0, 0 };
    for (int k = 0; k < 2; ++k) {
        iterative_receiver_config c;
        c.outer_iterations = k == 0 ? 1 : 3;
        iterative_receiver rx(
            make_detector("kbest", { { 4, 4 }, modulation::qam16, {} }, backend::cpu),
            f,
            ldpc_decoder_config{},
            c,
            backend::cpu);
        EXPECT_EQ(rx.code(), "ldpc");
        EXPECT_EQ(rx.A(), 1000);
        std::vector<uint8_t> a(link.a.size());
        const std::vector<idd_result> r = rx.receive(link.input(), count, a.data());
        for (size_t t = 0; t < count; ++t) {
            errors[k] += !r[t].decoded.crc_ok;
            if (r[t].decoded.crc_ok) {
                ASSERT_TRUE(std::equal(a.begin() + t * 1000,
                                       a.begin() + (t + 1) * 1000,
                                       link.a.begin() + t * 1000))
                    << "block " << t << " passed with wrong bits";
            }
        }
    }
    std::printf(
        "[ measured ] LDPC, %.1f dB: %d of %zu blocks fail with 1 pass, %d with 3\n",
        snr,
        errors[0],
        count,
        errors[1]);
    EXPECT_GE(errors[0], 5) << "not near the cliff: the comparison says nothing";
    EXPECT_LT(errors[1], errors[0]);
}

TEST(iterative_receiver_cuda, ldpc_device_loop_equals_the_host_loop_and_the_cpu)
{
    MIMO_GPU_REQUIRE_CUDA();
    // The NR decoder's extrinsics on the GPU equal the host's: the device
    // loop, the host loop on CUDA and (K-best, bit-identical on both backends)
    // the CPU give the same bits, CRCs and passes.
    const nr_transport_block_format f{ 1000, 2048, 4, 4 };
    const size_t count = 24;
    coded_link link(f, { 4, 4 }, modulation::qam16, count, 5.5, fresh_seed());
    for (const char* name : { "kbest", "mmse" }) {
        std::vector<uint8_t> bits[3];
        std::vector<idd_result> results[3];
        for (int run : { 0, 1, 2 }) { // device loop, host loop on CUDA, CPU
            iterative_receiver_config config;
            config.outer_iterations = 4;
            config.device_loop = run == 0;
            const backend b = run == 2 ? backend::cpu : backend::cuda;
            iterative_receiver rx(
                make_detector(name, { { 4, 4 }, modulation::qam16, {} }, b),
                f,
                ldpc_decoder_config{},
                config,
                b);
            EXPECT_EQ(rx.loops_on_device(), run == 0) << name;
            bits[run].resize(link.a.size());
            rx.receive(link.input(), count, bits[run].data()); // buffers reused below
            results[run] = rx.receive(link.input(), count, bits[run].data());
        }
        const int last = std::string(name) == "kbest" ? 2 : 1; // mmse: CPU to rounding
        int passed = 0, more = 0;
        for (int run = 1; run <= last; ++run) {
            EXPECT_EQ(bits[run], bits[0]) << name << " run " << run;
            for (size_t t = 0; t < count; ++t) {
                EXPECT_EQ(results[run][t].decoded.crc_ok, results[0][t].decoded.crc_ok)
                    << name << " " << t;
                EXPECT_EQ(results[run][t].outer_iterations,
                          results[0][t].outer_iterations)
                    << name << " " << t;
            }
        }
        for (size_t t = 0; t < count; ++t) {
            passed += results[0][t].decoded.crc_ok;
            more += results[0][t].outer_iterations > 1;
        }
        std::printf("[ compared ] LDPC IDD %s: %d of %zu blocks pass, %d took more than "
                    "one pass\n",
                    name,
                    passed,
                    count,
                    more);
    }
}
