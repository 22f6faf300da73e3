// Scale invariance (issue 23): detection of (aH, ay, a^2 N0) is detection of
// (H, y, N0), for every family, over the float range where all three stay
// normal numbers (a = 1e-18 .. 1e18): the same decisions and LLRs (to the
// rounding of the scaled inputs, and of products that fall into denormals at
// the range's ends) and no erasures. A power-of-two a in 2^-20 .. 2^20 is exact
// in float and keeps every product normal: there the LLRs are the same to the bit.
#include "../test_support.h"

#include <mimo_gpu/detector_registry.h>

#include <cmath>
#include <string>
#include <vector>

using namespace mimo_gpu;
using namespace mimo_gpu_test;

namespace {

struct scaled_case {
    mimo_shape shape;
    modulation mod;
    double snr_db;
};

/// The shapes each family runs: 4x4 16-QAM at 10 dB; the MMSE families also
/// 128x16 16-QAM at -5 dB (massive MIMO, the example). Families that
/// do not take a shape are skipped for it.
std::vector<scaled_case> cases_for(const std::string& family)
{
    std::vector<scaled_case> c{ { { 4, 4 }, modulation::qam16, 10.0 } };
    if (family.rfind("mmse", 0) == 0)
        c.push_back({ { 128, 16 }, modulation::qam16, -5.0 });
    return c;
}

std::vector<float>
detect_scaled(detector& det, const problem_batch& pb, double a, detection_report& report)
{
    std::vector<cfloat> H(pb.H), y(pb.y);
    for (auto& h : H)
        h = cfloat(float(h.real() * a), float(h.imag() * a));
    for (auto& v : y)
        v = cfloat(float(v.real() * a), float(v.imag() * a));
    std::vector<float> llr(pb.batch * size_t(pb.bits_per_problem()));
    report = det.detect(
        H.data(), y.data(), pb.batch, float(double(pb.n0) * a * a), llr.data());
    return llr;
}

void expect_scale_invariance(backend where)
{
    const uint64_t seed = fresh_seed();
    for (const std::string& name : detector_names())
        for (const scaled_case& sc : cases_for(name)) {
            const size_t batch = sc.shape.nr > 8 ? 64 : 400;
            const problem_batch pb(sc.shape, sc.mod, batch, sc.snr_db, seed);
            std::unique_ptr<detector> det;
            try {
                det = make_detector(name, { sc.shape, sc.mod, {} }, where);
            } catch (const std::invalid_argument&) {
                continue; // a shape the family does not take
            }
            det->set_bad_problem_policy(bad_problem_policy::erase);
            const std::string what = name + " " + std::to_string(sc.shape.nr) + "x" +
                                     std::to_string(sc.shape.nt);
            detection_report r;
            const std::vector<float> ref = detect_scaled(*det, pb, 1.0, r);
            ASSERT_EQ(r.erased, 0u) << what;
            for (double a :
                 { 0x1p-20, 0x1p20, 1e-18, 1e-12, 3e-8, 1e-6, 2e5, 1e6, 1e12, 1e18 }) {
                const std::vector<float> got = detect_scaled(*det, pb, a, r);
                EXPECT_EQ(r.erased, 0u) << what << " scale " << a;
                const bool exact = a == 0x1p-20 || a == 0x1p20;
                size_t flipped = 0, far = 0, differ = 0;
                for (size_t i = 0; i < ref.size(); ++i) {
                    differ += !(got[i] == ref[i]);
                    flipped += (got[i] < 0) != (ref[i] < 0) && std::fabs(ref[i]) > 1e-3f;
                    far += !(std::fabs(got[i] - ref[i]) <=
                             1e-3f * std::max(1.0f, std::fabs(ref[i])));
                }
                if (exact) {
                    EXPECT_EQ(differ, 0u)
                        << what << " scale " << a << ": LLRs not the same to the bit ("
                        << flipped << " decisions changed)";
                    continue;
                }
                // Rounding the scaled inputs moves LLRs by ~1e-6 relative: a
                // near-tie may change a list's candidates, never many decisions.
                EXPECT_LE(flipped, ref.size() / 1000)
                    << what << " scale " << a << ": decisions changed";
                EXPECT_LE(far, ref.size() / 200)
                    << what << " scale " << a << ": LLRs moved";
            }
        }
}

} // namespace

TEST(scale_invariance, every_family_detects_scaled_problems_alike)
{
    expect_scale_invariance(backend::cpu);
}

TEST(scale_invariance, every_cuda_family_detects_scaled_problems_alike)
{
    MIMO_GPU_REQUIRE_CUDA();
    expect_scale_invariance(backend::cuda);
}
