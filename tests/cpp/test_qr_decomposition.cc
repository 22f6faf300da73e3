#include "test_support.h"

#include <mimo_gpu/batched_qr.h>

using namespace mimo_gpu;
using namespace mimo_gpu_test;

namespace {

/// The real-valued (MRVD) model of problem p with its columns in order `o`, in double.
void real_model(const problem_batch& pb,
                size_t p,
                int o,
                std::vector<double>& Hr,
                std::vector<double>& yr)
{
    const int nr = pb.shape.nr, nt = pb.shape.nt;
    Hr.assign(size_t(2 * nr) * 2 * nt, 0.0);
    yr.assign(2 * nr, 0.0);
    for (int r = 0; r < nr; ++r) {
        for (int j = 0; j < nt; ++j) {
            const cfloat h = pb.H[p * nr * nt + r * nt + qr_layout::stream_at(j, o, nt)];
            Hr[(2 * r) * 2 * nt + 2 * j] = h.real();
            Hr[(2 * r) * 2 * nt + 2 * j + 1] = -h.imag();
            Hr[(2 * r + 1) * 2 * nt + 2 * j] = h.imag();
            Hr[(2 * r + 1) * 2 * nt + 2 * j + 1] = h.real();
        }
        yr[2 * r] = pb.y[p * nr + r].real();
        yr[2 * r + 1] = pb.y[p * nr + r].imag();
    }
}

} // namespace

// H~ = Q R with Q orthonormal is equivalent to R^T R = H~^T H~ and R^T y^ = H~^T y~
// (R upper triangular, positive diagonal): checked for every problem and order.
TEST(batched_qr, reproduces_the_gram_matrix_for_every_order)
{
    const uint64_t seed = fresh_seed();
    for (mimo_shape shape : { mimo_shape{ 2, 2 },
                              mimo_shape{ 4, 4 },
                              mimo_shape{ 4, 2 },
                              mimo_shape{ 8, 8 },
                              mimo_shape{ 3, 1 } }) {
        problem_batch pb(shape, modulation::qam16, 300, 15.0, seed);
        batched_qr qr(shape, shape.nt, backend::cpu);
        const qr_layout lay = qr.layout();
        std::vector<float> items(pb.batch * lay.floats_per_item(), NAN);
        qr.run(pb.H.data(), pb.y.data(), pb.batch, items.data());
        const int C = lay.rows(), W = lay.cols();
        std::vector<double> Hr, yr;
        for (size_t p = 0; p < pb.batch; ++p)
            for (int o = 0; o < lay.orders; ++o) {
                const float* E =
                    items.data() + p * lay.floats_per_item() + o * lay.floats_per_order();
                real_model(pb, p, o, Hr, yr);
                for (int i = 0; i < C; ++i) {
                    ASSERT_GT(E[i * W + i], 0.0f);
                    for (int k = 0; k < i; ++k)
                        ASSERT_EQ(E[i * W + k], 0.0f);
                }
                for (int a = 0; a < C; ++a)
                    for (int b = 0; b <= C; ++b) { // b == C: the y column
                        double rtr = 0, hth = 0;
                        for (int i = 0; i < C; ++i)
                            rtr += double(E[i * W + a]) * E[i * W + b];
                        for (int r = 0; r < 2 * shape.nr; ++r)
                            hth += Hr[r * C + a] * (b < C ? Hr[r * C + b] : yr[r]);
                        ASSERT_NEAR(rtr, hth, 2e-4 * (1 + std::abs(hth)))
                            << "shape " << shape.nr << "x" << shape.nt << " problem " << p
                            << " order " << o;
                    }
            }
    }
}

TEST(batched_qr, bad_input_is_rejected)
{
    EXPECT_THROW(batched_qr({ 2, 2 }, 3, backend::cpu), std::invalid_argument);
    EXPECT_THROW(batched_qr({ 2, 2 }, 0, backend::cpu), std::invalid_argument);
    EXPECT_THROW(batched_qr({ 2, 4 }, 1, backend::cpu), std::invalid_argument);
    problem_batch pb({ 2, 2 }, modulation::qpsk, 10, 10.0, 7);
    batched_qr qr({ 2, 2 }, 2, backend::cpu);
    std::vector<float> items(10 * qr.layout().floats_per_item());

    auto bad = pb;
    bad.y[2 * 5] = cfloat(NAN, 0);
    try {
        qr.run(bad.H.data(), bad.y.data(), bad.batch, items.data());
        FAIL() << "NaN accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("problem 5"), std::string::npos) << e.what();
    }
    bad = pb;
    bad.H[4 * 3 + 1] = cfloat(INFINITY, 0);
    EXPECT_THROW(qr.run(bad.H.data(), bad.y.data(), bad.batch, items.data()),
                 std::invalid_argument);

    bad = pb; // problem 7: second column equals the first
    for (int r = 0; r < 2; ++r)
        bad.H[7 * 4 + r * 2 + 1] = bad.H[7 * 4 + r * 2];
    try {
        qr.run(bad.H.data(), bad.y.data(), bad.batch, items.data());
        FAIL() << "singular H accepted";
    } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("problem 7"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("singular"), std::string::npos) << e.what();
    }
    bad = pb;
    std::fill(bad.H.begin() + 4 * 2, bad.H.begin() + 4 * 3, cfloat(0, 0));
    EXPECT_THROW(qr.run(bad.H.data(), bad.y.data(), bad.batch, items.data()),
                 std::invalid_argument);
}
