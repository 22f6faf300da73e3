// Shared by the core tests: random problems and a double-precision brute force.
#pragma once

#include <mimo_gpu/backend.h>
#include <mimo_gpu/channel_simulator.h>
#include <mimo_gpu/constellation.h>
#include <mimo_gpu/detector.h>
#include <mimo_gpu/device_memory.h>
#include <mimo_gpu/types.h>

#include "backend_test.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace mimo_gpu_test {

/// Sets an environment variable for its lifetime (the engines' comparison
/// knobs, e.g. MIMO_GPU_TURBO_KERNEL) and restores what the environment held.
class scoped_environment_variable
{
public:
    scoped_environment_variable(const char* name, const char* value) : m_name(name)
    {
        if (const char* v = std::getenv(name))
            m_saved = v;
        setenv(name, value, 1);
    }
    ~scoped_environment_variable()
    {
        if (m_saved)
            setenv(m_name.c_str(), m_saved->c_str(), 1);
        else
            unsetenv(m_name.c_str());
    }
    scoped_environment_variable(const scoped_environment_variable&) = delete;
    scoped_environment_variable& operator=(const scoped_environment_variable&) = delete;

private:
    std::string m_name;
    std::optional<std::string> m_saved;
};

/// Every modulation the detectors take, QPSK to 1024-QAM.
inline constexpr ::mimo_gpu::modulation k_every_modulation[] = {
    ::mimo_gpu::modulation::qpsk,
    ::mimo_gpu::modulation::qam16,
    ::mimo_gpu::modulation::qam64,
    ::mimo_gpu::modulation::qam256,
    ::mimo_gpu::modulation::qam1024
};

/// Device memory for n values of T, filled from and read back into vectors
/// (the CUDA tests' inputs and outputs of device paths).
template <typename T>
struct device_vector {
    size_t n;
    void* p;
    explicit device_vector(size_t count)
        : n(count), p(::mimo_gpu::allocate_device(std::max<size_t>(n, 1) * sizeof(T)))
    {
    }
    explicit device_vector(const std::vector<T>& v) : device_vector(v.size())
    {
        upload(v);
    }
    ~device_vector() { ::mimo_gpu::free_device(p); }
    device_vector(const device_vector&) = delete;
    device_vector& operator=(const device_vector&) = delete;
    T* get() const { return static_cast<T*>(p); }
    void upload(const std::vector<T>& v)
    {
        ::mimo_gpu::copy_memory(p,
                                v.data(),
                                v.size() * sizeof(T),
                                ::mimo_gpu::copy_direction::host_to_device);
    }
    std::vector<T> download() const
    {
        std::vector<T> v(n);
        ::mimo_gpu::copy_memory(
            v.data(), p, n * sizeof(T), ::mimo_gpu::copy_direction::device_to_host);
        return v;
    }
};

using mimo_gpu::cfloat;

/// A fresh seed per run (printed so a failure can be reproduced) unless
/// MIMO_GPU_TEST_SEED is set.
/// A^-1 of an n x n complex matrix (row-major, double) by Gauss-Jordan with
/// partial pivoting; empty where A is singular.
inline std::vector<std::complex<double>>
inverse_by_gauss_jordan(std::vector<std::complex<double>> A, int n)
{
    using cd = std::complex<double>;
    std::vector<cd> inv(size_t(n) * n, 0.0);
    for (int i = 0; i < n; ++i)
        inv[size_t(i) * n + i] = 1.0;
    for (int k = 0; k < n; ++k) {
        int piv = k;
        for (int i = k + 1; i < n; ++i)
            if (std::abs(A[size_t(i) * n + k]) > std::abs(A[size_t(piv) * n + k]))
                piv = i;
        if (std::abs(A[size_t(piv) * n + k]) == 0.0)
            return {};
        for (int j = 0; j < n; ++j) {
            std::swap(A[size_t(k) * n + j], A[size_t(piv) * n + j]);
            std::swap(inv[size_t(k) * n + j], inv[size_t(piv) * n + j]);
        }
        const cd d = A[size_t(k) * n + k];
        for (int j = 0; j < n; ++j) {
            A[size_t(k) * n + j] /= d;
            inv[size_t(k) * n + j] /= d;
        }
        for (int i = 0; i < n; ++i)
            if (i != k) {
                const cd m = A[size_t(i) * n + k];
                for (int j = 0; j < n; ++j) {
                    A[size_t(i) * n + j] -= m * A[size_t(k) * n + j];
                    inv[size_t(i) * n + j] -= m * inv[size_t(k) * n + j];
                }
            }
    }
    return inv;
}

/// The 2-norm condition number lambda_max / lambda_min of a Hermitian positive
/// definite n x n matrix (row-major, double): how far any float solution of a
/// system with it may stray, relative, in units of the float rounding. Power
/// iteration on A and on its inverse: accurate to a few per cent, which is all
/// a tolerance needs. Infinity where A is singular.
inline double hermitian_condition_number(const std::vector<std::complex<double>>& A,
                                         int n)
{
    using cd = std::complex<double>;
    const std::vector<cd> inv = inverse_by_gauss_jordan(A, n);
    if (inv.empty())
        return std::numeric_limits<double>::infinity();
    const auto largest_eigenvalue = [n](const std::vector<cd>& B) {
        std::vector<cd> v(static_cast<size_t>(n)), w(static_cast<size_t>(n));
        for (int i = 0; i < n; ++i)
            v[size_t(i)] =
                cd(1.0 + 0.1 * i, 0.05 * i); // a start with some of every eigenvector
        double lambda = 0;
        for (int it = 0; it < 200; ++it) {
            double norm = 0;
            for (int i = 0; i < n; ++i) {
                cd s = 0;
                for (int j = 0; j < n; ++j)
                    s += B[size_t(i) * n + j] * v[size_t(j)];
                w[size_t(i)] = s;
                norm += std::norm(s);
            }
            norm = std::sqrt(norm);
            if (!(norm > 0))
                return 0.0;
            double vn = 0;
            for (const cd& x : v)
                vn += std::norm(x);
            lambda = norm / std::sqrt(vn);
            for (int i = 0; i < n; ++i)
                v[size_t(i)] = w[size_t(i)] / norm;
        }
        return lambda;
    };
    return largest_eigenvalue(A) * largest_eigenvalue(inv);
}

inline uint64_t fresh_seed()
{
    if (const char* s = std::getenv("MIMO_GPU_TEST_SEED"))
        return std::strtoull(s, nullptr, 10);
    const uint64_t seed =
        (uint64_t(std::random_device{}()) << 32) ^ std::random_device{}();
    std::printf("[ seed     ] MIMO_GPU_TEST_SEED=%llu\n",
                static_cast<unsigned long long>(seed));
    return seed;
}

/// A batch of simulated problems (random bits, Rayleigh H, AWGN).
struct problem_batch {
    mimo_gpu::mimo_shape shape;
    mimo_gpu::modulation mod;
    size_t batch = 0;
    float n0 = 0;
    std::vector<uint8_t> bits;
    std::vector<cfloat> H, y;

    problem_batch(mimo_gpu::mimo_shape s,
                  mimo_gpu::modulation m,
                  size_t b,
                  double snr_db,
                  uint64_t seed)
        : shape(s), mod(m), batch(b)
    {
        mimo_gpu::channel_simulator sim(s, m, seed);
        n0 = mimo_gpu::noise_variance_from_snr_db(snr_db);
        bits.resize(b * sim.bits_per_problem());
        H.resize(b * s.nr * s.nt);
        y.resize(b * s.nr);
        sim.random_bits(bits.data(), bits.size());
        sim.run(bits.data(), b, n0, H.data(), y.data());
    }
    int bits_per_problem() const
    {
        return shape.nt * mimo_gpu::constellation(mod).bits_per_symbol();
    }
};

/// A-priori LLRs for tests: Gaussian, standard deviation sigma (3: a
/// decoder's output at a middle SNR).
inline std::vector<float> gaussian_priors(size_t count, uint64_t seed, float sigma = 3.0f)
{
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> normal(0.0f, sigma);
    std::vector<float> priors(count);
    for (auto& p : priors)
        p = normal(rng);
    return priors;
}

/// The LLRs of `channels` channels of S problems each of a batch (channel c's
/// H is the batch's problem c's, its y the batch's problems c*S..), with
/// `priors` (may be null); NaN where nothing was written.
inline std::vector<float> detect_batch(mimo_gpu::detector& det,
                                       const problem_batch& pb,
                                       size_t channels,
                                       int S,
                                       const float* priors = nullptr)
{
    mimo_gpu::detector_input in;
    in.H = pb.H.data();
    in.y = pb.y.data();
    in.channels = channels;
    in.symbols_per_channel = S;
    in.n0 = pb.n0;
    in.priors = priors;
    std::vector<float> llr(channels * S * det.llrs_per_problem(), NAN);
    det.detect(in, llr.data());
    return llr;
}

/// Exhaustive max-log LLRs of one problem in double precision, written plainly
/// (no shared code with the library): enumerate every s, every bit. With
/// a-priori LLRs (nt * Q, L = ln P(0)/P(1)) each s's metric is
/// |y - Hs|^2 / N0 - ln P(s), and the result is extrinsic: a-posteriori
/// minus a-priori.
inline std::vector<double> brute_force_llr(const mimo_gpu::constellation& c,
                                           int nr,
                                           int nt,
                                           const cfloat* H,
                                           const cfloat* y,
                                           double n0,
                                           const float* priors = nullptr)
{
    const int M = c.order(), Q = c.bits_per_symbol();
    std::vector<double> min0(nt * Q, std::numeric_limits<double>::infinity()),
        min1 = min0;
    std::vector<int> idx(nt, 0);
    uint64_t total = 1;
    for (int t = 0; t < nt; ++t)
        total *= M;
    for (uint64_t n = 0; n < total; ++n) {
        uint64_t rest = n;
        for (int t = 0; t < nt; ++t) {
            idx[t] = int(rest % M);
            rest /= M;
        }
        double d = 0;
        for (int r = 0; r < nr; ++r) {
            std::complex<double> e(y[r]);
            for (int t = 0; t < nt; ++t)
                e -= std::complex<double>(H[r * nt + t]) *
                     std::complex<double>(c.point(idx[t]));
            d += std::norm(e);
        }
        d /= n0;
        if (priors) // -ln P(s), up to a constant: +L/2 for a 1, -L/2 for a 0
            for (int t = 0; t < nt; ++t)
                for (int k = 0; k < Q; ++k)
                    d += (((idx[t] >> (Q - 1 - k)) & 1) ? 0.5 : -0.5) *
                         double(priors[t * Q + k]);
        for (int t = 0; t < nt; ++t)
            for (int k = 0; k < Q; ++k) {
                const int bit = (idx[t] >> (Q - 1 - k)) & 1;
                double& m = bit ? min1[t * Q + k] : min0[t * Q + k];
                m = std::min(m, d);
            }
    }
    std::vector<double> llr(nt * Q);
    for (int i = 0; i < nt * Q; ++i)
        llr[i] = min1[i] - min0[i] - (priors ? double(priors[i]) : 0.0);
    return llr;
}

/// Squared distance |y - H s|^2 (double precision) of the symbol vector that the
/// LLR signs of one problem decide (LLR < 0 means 1, bits MSB first per symbol).
inline double decision_distance(const mimo_gpu::constellation& c,
                                int nr,
                                int nt,
                                const cfloat* H,
                                const cfloat* y,
                                const float* llr)
{
    const int Q = c.bits_per_symbol();
    double d = 0;
    for (int r = 0; r < nr; ++r) {
        std::complex<double> e(y[r]);
        for (int t = 0; t < nt; ++t) {
            int idx = 0;
            for (int k = 0; k < Q; ++k)
                idx = (idx << 1) | int(llr[t * Q + k] < 0.0f);
            e -= std::complex<double>(H[r * nt + t]) * std::complex<double>(c.point(idx));
        }
        d += std::norm(e);
    }
    return d;
}

/// Fraction of problems in which another detector's decision is farther from y
/// than ML's (ML's decisions minimise |y - H s|^2). Also checks that no
/// decision is closer than ML's: that guards the test (the bit mapping, ML
/// itself), while the fraction, bounded by the caller, is what tests the
/// other detector. Unlike bit error rates, it counts only the problems where
/// the detectors differ, so a bound on it has little chance variance.
inline double fraction_farther_than_ml(const problem_batch& pb,
                                       const std::vector<float>& ml_llr,
                                       const std::vector<float>& other_llr,
                                       const std::string& what)
{
    const mimo_gpu::constellation c(pb.mod);
    const int nr = pb.shape.nr, nt = pb.shape.nt, bpp = pb.bits_per_problem();
    size_t farther = 0;
    for (size_t p = 0; p < pb.batch; ++p) {
        const cfloat* H = pb.H.data() + p * nr * nt;
        const cfloat* y = pb.y.data() + p * nr;
        const double d_ml = decision_distance(c, nr, nt, H, y, ml_llr.data() + p * bpp);
        const double d_other =
            decision_distance(c, nr, nt, H, y, other_llr.data() + p * bpp);
        EXPECT_LE(d_ml, d_other + 1e-4 * (1 + d_other)) << what << " problem " << p;
        farther += d_other > d_ml + 1e-4 * (1 + d_ml);
    }
    return double(farther) / double(pb.batch);
}

/// Fraction of bits whose LLR sign disagrees with the transmitted bit (LLR < 0 means 1).
inline double bit_error_rate(const std::vector<uint8_t>& bits,
                             const std::vector<float>& llr)
{
    size_t errors = 0;
    for (size_t i = 0; i < bits.size(); ++i)
        errors += uint8_t(llr[i] < 0.0f) != bits[i];
    return double(errors) / double(bits.size());
}

/// Every element of `got` equals `want` to the bit (the CPU and CUDA engines
/// run the same float operations); NaN poisoning shows an element never written.
inline void expect_bit_identical(const std::vector<float>& got,
                                 const std::vector<float>& want,
                                 const std::string& what)
{
    ASSERT_EQ(got.size(), want.size()) << what;
    size_t equal = 0;
    for (size_t i = 0; i < want.size(); ++i) {
        ASSERT_FALSE(std::isnan(got[i])) << what << ": element " << i << " not written";
        ASSERT_EQ(got[i], want[i]) << what << ": element " << i;
        ++equal;
    }
    std::printf("[ compared ] %s: %zu elements, %zu bit-identical\n",
                what.c_str(),
                want.size(),
                equal);
}

/// CUDA against CPU for a family: to the bit where its capabilities say so,
/// else within `relative` of max(|want|, 1) (reductions in another order).
inline void expect_backends_agree(const std::vector<float>& got,
                                  const std::vector<float>& want,
                                  bool bit_identical,
                                  const std::string& what,
                                  double relative = 1e-3)
{
    if (bit_identical) {
        expect_bit_identical(got, want, what);
        return;
    }
    // Backends that reduce in another order agree to rounding, which an
    // iterative solver stopped early (conjugate gradients with fewer iterations
    // than users) amplifies by the condition of its matrix: a few elements of a
    // poorly conditioned channel may differ by more. Every element is within
    // 10x `relative`, all but 1 in 1000 within `relative`.
    ASSERT_EQ(got.size(), want.size()) << what;
    size_t beyond = 0;
    double worst = 0;
    for (size_t i = 0; i < want.size(); ++i) {
        ASSERT_FALSE(std::isnan(got[i])) << what << ": element " << i << " not written";
        const double scale = std::max(1.0f, std::abs(want[i]));
        const double difference = std::abs(got[i] - want[i]) / scale;
        worst = std::max(worst, difference);
        beyond += difference > relative;
        ASSERT_LE(difference, 10 * relative)
            << what << ": element " << i << " got " << got[i] << " want " << want[i];
    }
    EXPECT_LE(beyond, want.size() / 1000)
        << what << ": " << beyond << " elements differ by more than " << relative;
    std::printf("[ compared ] %s: %zu elements, largest difference %.1e relative, %zu "
                "beyond %.0e\n",
                what.c_str(),
                want.size(),
                worst,
                beyond,
                relative);
}

/// int8 LLRs: equal, or (families whose backends agree to rounding) at most 1 apart.
inline void expect_int8_agree(const std::vector<int8_t>& got,
                              const std::vector<int8_t>& want,
                              bool bit_identical,
                              const std::string& what)
{
    ASSERT_EQ(got.size(), want.size()) << what;
    for (size_t i = 0; i < want.size(); ++i)
        ASSERT_LE(std::abs(int(got[i]) - int(want[i])), bit_identical ? 0 : 1)
            << what << ": element " << i;
}

} // namespace mimo_gpu_test
