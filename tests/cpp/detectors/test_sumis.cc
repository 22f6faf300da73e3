// SUMIS: the exact log-MAP LLRs where the subspace is the whole space (both
// stages, with and without priors), channel reuse, better than linear MMSE on
// large systems, bad input, and CUDA against the CPU on fresh inputs.
#include "../test_support.h"

#include <mimo_gpu/detector_registry.h>

#include <algorithm>
#include <cmath>

using namespace mimo_gpu;
using namespace mimo_gpu_test;

namespace {

/// Exact log-MAP LLRs (full log-sum-exp over every transmitted vector) in
/// double precision, with optional a-priori LLRs; extrinsic when priors are
/// given (a-posteriori minus a-priori), as SUMIS outputs them.
std::vector<double> exact_log_map(const constellation& c,
                                  int nr,
                                  int nt,
                                  const cfloat* H,
                                  const cfloat* y,
                                  double n0,
                                  const float* prior)
{
    const int M = c.order(), Q = c.bits_per_symbol();
    uint64_t total = 1;
    for (int t = 0; t < nt; ++t)
        total *= M;
    std::vector<double> metric(total);
    std::vector<int> idx(nt);
    double top = -INFINITY;
    for (uint64_t v = 0; v < total; ++v) {
        uint64_t rest = v;
        double lp = 0;
        for (int t = 0; t < nt; ++t) {
            idx[t] = int(rest % M);
            rest /= M;
            if (prior)
                for (int k = 0; k < Q; ++k) {
                    const double a = prior[t * Q + k];
                    const int bit = (idx[t] >> (Q - 1 - k)) & 1;
                    lp += -std::log1p(std::exp(bit ? a : -a)); // log P(bit), L = ln P0/P1
                }
        }
        double d = 0;
        for (int r = 0; r < nr; ++r) {
            std::complex<double> e(y[r]);
            for (int t = 0; t < nt; ++t)
                e -= std::complex<double>(H[r * nt + t]) *
                     std::complex<double>(c.point(idx[t]));
            d += std::norm(e);
        }
        metric[v] = -d / n0 + lp;
        top = std::max(top, metric[v]);
    }
    // Each bit's two log-sums with their own maxima (a side far below the
    // other would underflow against a common one).
    std::vector<double> m0(nt * Q, -INFINITY), m1(nt * Q, -INFINITY), s0(nt * Q, 0.0),
        s1(nt * Q, 0.0);
    for (int pass = 0; pass < 2; ++pass)
        for (uint64_t v = 0; v < total; ++v) {
            uint64_t rest = v;
            for (int t = 0; t < nt; ++t) {
                const int sym = int(rest % M);
                rest /= M;
                for (int k = 0; k < Q; ++k) {
                    const int i = t * Q + k;
                    const bool one = (sym >> (Q - 1 - k)) & 1;
                    if (pass == 0)
                        (one ? m1 : m0)[i] = std::max((one ? m1 : m0)[i], metric[v]);
                    else
                        (one ? s1 : s0)[i] += std::exp(metric[v] - (one ? m1 : m0)[i]);
                }
            }
        }
    (void)top;
    std::vector<double> llr(nt * Q);
    for (int i = 0; i < nt * Q; ++i)
        llr[i] = (m0[i] + std::log(s0[i])) - (m1[i] + std::log(s1[i])) -
                 (prior ? prior[i] : 0.0);
    return llr;
}

std::unique_ptr<detector>
make_sumis(mimo_shape shape, modulation mod, backend b, int ns, int stage2 = 1)
{
    return make_detector(
        "sumis", { shape, mod, { { "ns", ns }, { "stage2", stage2 } } }, b);
}

} // namespace

TEST(sumis, whole_space_equals_exact_log_map)
{
    const uint64_t seed = fresh_seed();
    struct cfg {
        mimo_shape shape;
        modulation mod;
    };
    for (const cfg& k : { cfg{ { 2, 2 }, modulation::qpsk },
                          cfg{ { 2, 2 }, modulation::qam16 },
                          cfg{ { 2, 2 }, modulation::qam64 },
                          cfg{ { 3, 3 }, modulation::qpsk },
                          cfg{ { 3, 3 }, modulation::qam16 },
                          cfg{ { 4, 4 }, modulation::qpsk },
                          cfg{ { 4, 4 }, modulation::qam16 },
                          cfg{ { 4, 2 }, modulation::qam16 } }) {
        const constellation con(k.mod);
        const size_t batch = k.shape.nt == 4 && k.mod == modulation::qam16 ? 3 : 12;
        for (double snr : { 0.0, 8.0, 16.0 }) {
            problem_batch pb(
                k.shape, k.mod, batch, snr, seed + k.shape.nt * 100 + uint64_t(snr));
            std::mt19937 rng(uint32_t(seed) + 5);
            std::normal_distribution<float> g(0.0f, 2.0f);
            std::vector<float> priors(batch * pb.bits_per_problem());
            for (auto& p : priors)
                p = g(rng);
            for (int stage2 : { 0, 1 })
                for (bool with_priors : { false, true }) {
                    auto det =
                        make_sumis(k.shape, k.mod, backend::cpu, 2 * k.shape.nt, stage2);
                    detector_input in;
                    in.H = pb.H.data();
                    in.y = pb.y.data();
                    in.channels = batch;
                    in.n0 = pb.n0;
                    in.priors = with_priors ? priors.data() : nullptr;
                    std::vector<float> llr(batch * pb.bits_per_problem(), NAN);
                    det->detect(in, llr.data());
                    double worst = 0;
                    for (size_t p = 0; p < batch; ++p) {
                        const auto ref = exact_log_map(
                            con,
                            k.shape.nr,
                            k.shape.nt,
                            pb.H.data() + p * k.shape.nr * k.shape.nt,
                            pb.y.data() + p * k.shape.nr,
                            pb.n0,
                            with_priors ? priors.data() + p * pb.bits_per_problem()
                                        : nullptr);
                        for (size_t i = 0; i < ref.size(); ++i) {
                            const double err =
                                std::abs(llr[p * ref.size() + i] - ref[i]) /
                                std::max(1.0, std::abs(ref[i]));
                            worst = std::max(worst, err);
                            ASSERT_LE(err, 1e-4)
                                << k.shape.nr << "x" << k.shape.nt << " "
                                << to_string(k.mod) << " SNR " << snr
                                << (stage2 ? " stage II" : " stage I")
                                << (with_priors ? " with priors" : "") << " problem " << p
                                << " bit " << i << ": " << llr[p * ref.size() + i]
                                << " vs " << ref[i];
                        }
                    }
                    if (snr == 8.0)
                        std::printf(
                            "[ compared ] %dx%d %s%s%s: worst relative error %.1e\n",
                            k.shape.nr,
                            k.shape.nt,
                            to_string(k.mod).c_str(),
                            stage2 ? " stage II" : " stage I",
                            with_priors ? " with priors" : "",
                            worst);
                }
        }
    }
}

TEST(sumis, channel_reuse_equals_repeated_channels)
{
    const uint64_t seed = fresh_seed();
    const mimo_shape shape{ 6, 4 };
    const int S = 3;
    problem_batch pb(shape, modulation::qam16, 4 * S, 6.0, seed);
    std::vector<cfloat> repeated;
    for (size_t p = 0; p < pb.batch; ++p)
        repeated.insert(
            repeated.end(), pb.H.begin() + (p / S) * 24, pb.H.begin() + (p / S + 1) * 24);
    detector_input in;
    in.H = pb.H.data(); // channel c: problem c's matrix (any C matrices will do)
    in.y = pb.y.data();
    in.channels = pb.batch / S;
    in.symbols_per_channel = S;
    in.n0 = pb.n0;
    std::vector<float> a(pb.batch * 16), b(a.size());
    std::vector<cfloat> Hc;
    for (size_t c = 0; c < pb.batch / S; ++c)
        Hc.insert(Hc.end(), pb.H.begin() + c * 24, pb.H.begin() + (c + 1) * 24);
    repeated.clear();
    for (size_t p = 0; p < pb.batch; ++p)
        repeated.insert(
            repeated.end(), Hc.begin() + (p / S) * 24, Hc.begin() + (p / S + 1) * 24);
    in.H = Hc.data();
    // Stage I alone (stage2 = 0) is the path whose factor is the channel's, shared by its
    // S vectors.
    for (int stage2 : { 1, 0 })
        for (backend be : { backend::cpu, backend::cuda }) {
            if (be == backend::cuda && !cuda_available())
                continue;
            auto d = make_sumis(shape, modulation::qam16, be, 3, stage2);
            d->detect(in, a.data());
            d->detect(repeated.data(), pb.y.data(), pb.batch, pb.n0, b.data());
            const std::string label = std::string("sumis S=3 vs repeated H, stage2 = ") +
                                      std::to_string(stage2) +
                                      (be == backend::cpu ? " cpu" : " cuda");
            if (be == backend::cpu)
                expect_bit_identical(a, b, label);
            else // batched cuBLAS/cuSOLVER over other batch sizes: equal to rounding
                for (size_t i = 0; i < a.size(); ++i)
                    ASSERT_NEAR(a[i], b[i], 1e-4 * std::max(1.0f, std::abs(b[i])))
                        << label << " LLR " << i;
        }
}

TEST(sumis, beats_linear_mmse_on_large_systems)
{
    const uint64_t seed = fresh_seed();
    struct cfg {
        mimo_shape shape;
        modulation mod;
        double snr;
    };
    for (const cfg& k : { cfg{ { 16, 16 }, modulation::qam64, 22 },
                          cfg{ { 12, 12 }, modulation::qam16, 14 } }) {
        problem_batch pb(k.shape, k.mod, 150, k.snr, seed + k.shape.nt);
        auto mmse = make_detector("mmse", { k.shape, k.mod, {} }, backend::cpu);
        std::vector<float> lm(pb.batch * pb.bits_per_problem());
        mmse->detect(pb.H.data(), pb.y.data(), pb.batch, pb.n0, lm.data());
        const double ber_mmse = bit_error_rate(pb.bits, lm);
        for (int ns : { 1, 2, 3 }) {
            auto det = make_sumis(k.shape, k.mod, backend::cpu, ns);
            std::vector<float> ls(lm.size());
            det->detect(pb.H.data(), pb.y.data(), pb.batch, pb.n0, ls.data());
            const double ber = bit_error_rate(pb.bits, ls);
            std::printf(
                "[ measured ] %dx%d %s %.0f dB: BER MMSE %.4f, SUMIS ns=%d %.4f\n",
                k.shape.nr,
                k.shape.nt,
                to_string(k.mod).c_str(),
                k.snr,
                ber_mmse,
                ns,
                ber);
            if (ns >= 2) {
                EXPECT_LT(ber, 0.8 * ber_mmse) << "ns=" << ns;
            }
        }
    }
}

TEST(sumis, bad_input)
{
    EXPECT_THROW(make_sumis({ 2, 2 }, modulation::qam16, backend::cpu, 5),
                 std::invalid_argument); // > 2 nt
    EXPECT_THROW(make_sumis({ 8, 8 }, modulation::qam16, backend::cpu, 9),
                 std::invalid_argument); // > 8
    EXPECT_THROW(make_sumis({ 8, 8 }, modulation::qam1024, backend::cpu, 5),
                 std::invalid_argument); // 32^5 > 2^20
    EXPECT_THROW(make_sumis({ 4, 8 }, modulation::qam16, backend::cpu, 3),
                 std::invalid_argument); // nt > nr
    EXPECT_THROW(make_sumis({ 4, 4 }, modulation::qam16, backend::cpu, -1),
                 std::invalid_argument);
    EXPECT_THROW(make_sumis({ 4, 1 }, modulation::qam16, backend::cpu, 3),
                 std::invalid_argument); // 3 > 2 nt
    // The default (ns = 0) is min(3, 2 nt): valid for a single stream too, and it
    // detects.
    for (int nt : { 1, 4 }) {
        auto det =
            make_detector("sumis", { { 4, nt }, modulation::qam16, {} }, backend::cpu);
        problem_batch pb({ 4, nt }, modulation::qam16, 8, 30.0, fresh_seed());
        std::vector<float> llr(pb.batch * det->llrs_per_problem());
        det->detect(pb.H.data(), pb.y.data(), pb.batch, pb.n0, llr.data());
        int errors = 0;
        for (size_t i = 0; i < llr.size(); ++i)
            errors += (llr[i] < 0) != (pb.bits[i] != 0);
        EXPECT_LE(errors, 1) << "nt = " << nt << " at 30 dB";
    }
    try {
        make_sumis({ 2, 2 }, modulation::qam16, backend::cpu, 6);
        FAIL();
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("min(2 nt, 8) = 4"), std::string::npos)
            << e.what();
    }
    // Non-finite priors, H or y: that problem is erased, the others detected.
    const uint64_t seed = fresh_seed();
    problem_batch pb({ 4, 4 }, modulation::qam16, 6, 10.0, seed);
    std::vector<float> priors(6 * 16, 0.5f);
    priors[2 * 16 + 3] = NAN;
    pb.y[4 * 4 + 1] = cfloat(INFINITY, 0);
    auto det = make_sumis({ 4, 4 }, modulation::qam16, backend::cpu, 3);
    det->set_bad_problem_policy(bad_problem_policy::erase);
    detector_input in;
    in.H = pb.H.data();
    in.y = pb.y.data();
    in.channels = 6;
    in.n0 = pb.n0;
    in.priors = priors.data();
    std::vector<float> llr(6 * 16, NAN);
    const detection_report r = det->detect(in, llr.data());
    EXPECT_EQ(r.erased, 2u);
    for (size_t p = 0; p < 6; ++p)
        for (int i = 0; i < 16; ++i) {
            ASSERT_TRUE(std::isfinite(llr[p * 16 + i]));
            if (p == 2 || p == 4) {
                ASSERT_EQ(llr[p * 16 + i], 0.0f);
            }
        }
}

TEST(sumis_cuda, equals_cpu_on_fresh_inputs)
{
    MIMO_GPU_REQUIRE_CUDA();
    const uint64_t seed = fresh_seed();
    struct cfg {
        mimo_shape shape;
        modulation mod;
        int ns, S;
    };
    for (const cfg& k : { cfg{ { 4, 4 }, modulation::qam16, 3, 1 },
                          cfg{ { 8, 8 }, modulation::qam64, 2, 2 },
                          cfg{ { 16, 12 }, modulation::qpsk, 3, 3 },
                          cfg{ { 24, 24 }, modulation::qam256, 2, 1 },
                          cfg{ { 4, 4 }, modulation::qam1024, 2, 2 },
                          cfg{ { 3, 3 }, modulation::qam16, 6, 1 },
                          cfg{ { 6, 6 },
                               modulation::qam16,
                               3,
                               12 } /* 2 channels: the unbatched factor path */ }) {
        const size_t problems = 24;
        problem_batch pb(k.shape, k.mod, problems, 12.0, seed + k.shape.nt + k.ns);
        std::mt19937 rng(uint32_t(seed) + 11);
        std::normal_distribution<float> g(0.0f, 3.0f);
        std::vector<float> priors(problems * pb.bits_per_problem());
        for (auto& p : priors)
            p = g(rng);
        for (int stage2 : { 0, 1 })
            for (bool with_priors : { false, true }) {
                auto cpu = make_sumis(k.shape, k.mod, backend::cpu, k.ns, stage2);
                auto gpu = make_sumis(k.shape, k.mod, backend::cuda, k.ns, stage2);
                detector_input in;
                in.H = pb.H.data();
                in.y = pb.y.data();
                in.channels = problems / k.S;
                in.symbols_per_channel = k.S;
                in.n0 = pb.n0;
                in.priors = with_priors ? priors.data() : nullptr;
                std::vector<float> want(problems * pb.bits_per_problem(), NAN),
                    got(want.size(), NAN);
                cpu->detect(in, want.data());
                gpu->detect(in, got.data());
                expect_backends_agree(
                    got,
                    want,
                    false,
                    "sumis " + std::to_string(k.shape.nr) + "x" +
                        std::to_string(k.shape.nt) + " " + to_string(k.mod) +
                        " ns=" + std::to_string(k.ns) + " S=" + std::to_string(k.S) +
                        (stage2 ? " stage II" : " stage I") +
                        (with_priors ? " priors" : ""),
                    1e-5);
            }
    }
}

TEST(sumis_cuda, bad_problems_erased_as_on_the_cpu)
{
    MIMO_GPU_REQUIRE_CUDA();
    problem_batch pb({ 4, 4 }, modulation::qam16, 8, 10.0, fresh_seed());
    std::vector<float> priors(8 * 16, -0.5f);
    priors[2 * 16 + 3] = NAN;
    pb.y[4 * 4 + 1] = cfloat(INFINITY, 0);
    pb.H[6 * 16 + 2] = cfloat(NAN, 0);
    for (backend b : { backend::cpu, backend::cuda }) {
        auto det = make_sumis({ 4, 4 }, modulation::qam16, b, 3);
        det->set_bad_problem_policy(bad_problem_policy::erase);
        detector_input in;
        in.H = pb.H.data();
        in.y = pb.y.data();
        in.channels = 8;
        in.n0 = pb.n0;
        in.priors = priors.data();
        std::vector<float> llr(8 * 16, NAN);
        const detection_report r = det->detect(in, llr.data());
        EXPECT_EQ(r.erased, 3u) << to_string(b);
        ASSERT_EQ(r.first_erased.size(), 3u);
        EXPECT_EQ(r.first_erased[0].index, 2u);
        EXPECT_EQ(r.first_erased[1].index, 4u);
        EXPECT_EQ(r.first_erased[2].index, 6u);
        for (size_t p : { 2, 4, 6 })
            for (int i = 0; i < 16; ++i)
                ASSERT_EQ(llr[p * 16 + i], 0.0f) << to_string(b);
        for (float v : llr)
            ASSERT_TRUE(std::isfinite(v));
    }
}

// ---- One outer iteration of detection and decoding (turbo equalisation) ----
#include <mimo_gpu/lte_turbo_code.h>
#include <mimo_gpu/lte_turbo_decoder.h>

namespace {

/// Block error rate of `blocks` LTE transport blocks (A = 232, rate 1/2, one
/// code block) sent over 8x8 16-QAM, detected by SUMIS (ns = 2) and decoded;
/// then detected again with the decoder's a-posteriori knowledge of the
/// systematic bits as priors (extrinsic: a-posteriori minus its input; parity
/// bits get none, the decoder gives no a-posteriori LLRs for them) and decoded
/// again. Returns {BLER before, BLER after}.
std::pair<double, double> outer_iteration_bler(double snr_db, int blocks, uint64_t seed)
{
    const mimo_shape shape{ 8, 8 };
    const modulation mod = modulation::qam16;
    transport_block_format fmt;
    fmt.A = 232;
    fmt.G = 512; // (232 + 24) x 2, 16 problems of 8 x 4 bits
    fmt.Qm = 4;
    fmt.NL = 1;
    const code_block_segmentation seg = fmt.segmentation();
    const int K = seg.K[0], D = K + 4, E = fmt.G;
    const rate_matcher rm(K);
    // coded bit i of the block is d[map[i]] of the rate matcher's [d0 | d1 | d2]
    std::vector<int> map(E, -1);
    {
        std::vector<float> one_hot(E, 0.0f), d(3 * D);
        for (int i = 0; i < E; ++i) {
            one_hot[i] = 1.0f;
            rm.dematch(one_hot.data(), E, 0, seg.F, d.data());
            for (int j = 0; j < 3 * D; ++j)
                if (d[j] != 0.0f)
                    map[i] = j;
            one_hot[i] = 0.0f;
        }
    }
    transport_block_encoder enc(fmt);
    turbo_decoder_config tc;
    tc.early_termination = crc_type::crc24a;
    lte_turbo_decoder dec(tc, backend::cpu);
    auto det = make_sumis(shape, mod, backend::cpu, 2);
    channel_simulator sim(shape, mod, seed);
    const int per_block = E / 32;
    const float n0 = noise_variance_from_snr_db(snr_db);
    std::mt19937 rng{ uint32_t(seed) };
    int errors0 = 0, errors1 = 0;
    std::vector<uint8_t> a(fmt.A), f(E), bits(K);
    std::vector<cfloat> H(per_block * 64), y(per_block * 8);
    std::vector<float> llr(E), prior(E), d(3 * D), app(K);
    for (int b = 0; b < blocks; ++b) {
        for (auto& x : a)
            x = uint8_t(rng() & 1);
        enc.encode(a.data(), f.data());
        sim.run(f.data(), per_block, n0, H.data(), y.data());
        detector_input in;
        in.H = H.data();
        in.y = y.data();
        in.channels = per_block;
        in.n0 = n0;
        auto decode = [&](const std::vector<float>& l) {
            rm.dematch(l.data(), E, 0, seg.F, d.data());
            const auto r = dec.decode({ K }, d.data(), bits.data(), app.data());
            return r[0].crc_ok && std::equal(a.begin(), a.end(), bits.begin());
        };
        det->detect(in, llr.data());
        const bool ok0 = decode(llr);
        errors0 += !ok0;
        for (int i = 0; i < E;
             ++i) // the decoder's extrinsic knowledge of the systematic bits
            prior[i] = map[i] >= 0 && map[i] < K ? app[map[i]] - d[map[i]] : 0.0f;
        in.priors = prior.data();
        det->detect(in, llr.data());
        errors1 += !decode(llr);
    }
    return { double(errors0) / blocks, double(errors1) / blocks };
}

} // namespace

TEST(sumis, outer_iteration_with_decoder_feedback_lowers_the_coded_bler)
{
    // A fixed seed: a statistical comparison of two block error rates.
    for (double snr : { 2.0, 3.0, 4.0 }) {
        const auto [before, after] = outer_iteration_bler(snr, 300, 20261123);
        std::printf("[ measured ] 8x8 16-QAM, SUMIS ns=2, LTE rate 1/2, %.0f dB: BLER "
                    "%.3f, after one outer "
                    "iteration %.3f\n",
                    snr,
                    before,
                    after);
        if (before >= 0.1) {
            EXPECT_LT(after, 0.85 * before) << snr << " dB";
        }
    }
}
