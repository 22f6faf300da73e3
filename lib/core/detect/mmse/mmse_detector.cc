// The soft MMSE detector families on the detector interface ("mmse": Cholesky,
// "mmse_cg": conjugate gradients; paper Algorithm 1) and their CPU engine,
// which is also the reference of the CUDA tests. docs/detectors.md, "Soft MMSE".
#include <mimo_gpu/detector_registry.h>
#include <mimo_gpu/mmse_detector.h>

#include "../../runtime/parallel_for.h"
#include "../../runtime/scale_normaliser.h"
#include "../engine/cpu_detector_engine.h"
#include "mmse_engine.h"
#include "mmse_pic.h"
#include "mmse_soft_output.h"

#include <array>
#include <cmath>
#include <string>
#include <vector>

namespace mimo_gpu {
namespace detail {

namespace {

/// Storage for a channel's small arrays: N > 0 elements fixed at compile time
/// (std::array), or N == 0 for sizes known at run time (std::vector).
template <typename T, int N>
struct channel_storage {
    using type = std::array<T, size_t(N)>;
    static type make(size_t) { return type{}; }
};
template <typename T>
struct channel_storage<T, 0> {
    using type = std::vector<T>;
    static type make(size_t n) { return type(n); }
};

/// One channel's work on the CPU: H split into real and imaginary columns
/// (the loops over antennas then vectorise), the regularised Gram matrix A,
/// and either A^-1 (Cholesky mode) or A itself (CG mode) for its symbols.
/// FixedU > 0 fixes the number of users at compile time: the loops over users
/// unroll and the matrices live on the stack (a 2x2 problem spent most of its
/// time on loop and vector overhead); the operations and their order are those
/// of FixedU = 0, so every result is the same to the bit.
template <int FixedU>
class mmse_channel_cpu
{
    using square_storage = channel_storage<float, FixedU * FixedU>;
    using pair_storage = channel_storage<float, 2 * FixedU>;
    using user_storage = channel_storage<float, FixedU>;
    using square = typename square_storage::type;
    using pair_vector = typename pair_storage::type;
    using user_vector = typename user_storage::type;

public:
    mmse_channel_cpu(const mmse_config& c)
        : B(c.shape.nr),
          m_users(c.shape.nt),
          m_cg(c.conjugate_gradient),
          m_iterations(c.iterations),
          hr(size_t(B) * c.shape.nt),
          hi(hr.size()),
          ar(square_storage::make(size_t(m_users) * m_users)),
          ai(ar),
          lr(ar),
          li(ar),
          gdiag(user_storage::make(size_t(m_users))),
          gr(ar),
          gi(ar),
          mr(ar),
          mi(ar),
          prior(channel_storage<soft_symbol, FixedU>::make(size_t(m_users))),
          dev(gdiag),
          gain(channel_storage<mmse_gain, FixedU>::make(size_t(m_users))),
          ymf(pair_storage::make(2 * size_t(m_users))),
          x(ymf),
          r(ymf),
          t(ymf),
          s(ymf),
          m_inverse_re(ar),
          m_inverse_im(ar)
    {
    }

    /// Prepares channel H (row-major B x U): G by rank-1 updates over the
    /// receive antennas, whose inner loop over users runs on independent
    /// accumulators and vectorises (a dot product per entry would not, without
    /// reassociation). Fails when H is not finite or A cannot be factored.
    /// H (and each y, in symbol()) is first scaled by a power of two that brings
    /// max |H| near 1, N0 by its square: the Gram matrix and the CG products
    /// overflowed or underflowed at |H| >= 2e5 or <= 3e-8 (scale_normaliser.h).
    problem_fault prepare(const cfloat* H, float n0)
    {
        const int U = users();
        bool finite = true;
        float max_abs = 0.0f;
        for (size_t i = 0; i < size_t(B) * U; ++i) {
            hr[i] = H[i].real();
            hi[i] = H[i].imag();
            finite &= std::isfinite(hr[i]) && std::isfinite(hi[i]);
            max_abs = std::max(max_abs, std::max(std::fabs(hr[i]), std::fabs(hi[i])));
        }
        if (!finite)
            return problem_fault::non_finite;
        m_scale = normalising_scale(max_abs);
        for (size_t i = 0; i < size_t(B) * U; ++i) {
            hr[i] *= m_scale;
            hi[i] *= m_scale;
        }
        n0 *= m_scale * m_scale;
        std::fill(ar.begin(), ar.end(), 0.0f);
        std::fill(ai.begin(), ai.end(), 0.0f);
        for (int b = 0; b < B; ++b) {
            const float* rb = &hr[size_t(b) * U];
            const float* ib = &hi[size_t(b) * U];
            for (int i = 0; i < U; ++i) { // row i of G += conj(h_bi) h_b
                const float xr = rb[i], xi = ib[i];
                float* gr = &ar[size_t(i) * U];
                float* gi = &ai[size_t(i) * U];
                for (int j = 0; j < U; ++j) {
                    gr[j] += xr * rb[j] + xi * ib[j];
                    gi[j] += xr * ib[j] - xi * rb[j];
                }
            }
        }
        for (int u = 0; u < U; ++u) {
            at(ai, u, u) = 0.0f;
            gdiag[u] = at(ar, u, u);
        }
        gr = ar; // G itself, for the problems with priors
        gi = ai;
        m_n0 = n0;
        for (int u = 0; u < U; ++u)
            at(ar, u, u) += n0;
        if (m_cg) {
            for (int u = 0; u < U; ++u)
                gain[u] = mmse_gain_approximate(gdiag[u], n0);
            return problem_fault::none;
        }
        if (!cholesky(ar, ai))
            return problem_fault::singular;
        inverse_from_cholesky(ar, ai); // A is not needed any more
        for (int u = 0; u < U; ++u)
            gain[u] = mmse_gain_exact(at(ar, u, u), n0);
        return problem_fault::none;
    }

    /// Writes the LLRs that symbol() queued.
    void flush_llrs(const pam_table& pam, float clip) { m_llrs.flush(pam, clip); }

    /// Detects one symbol y (B values) of the prepared channel; its LLRs are
    /// queued and written in batches (flush_llrs()).
    problem_fault symbol(const cfloat* y,
                         const pam_table& pam,
                         float clip,
                         float* llr,
                         cfloat* z,
                         float* sinr)
    {
        const int U = users();
        if (!matched_filter(y))
            return problem_fault::non_finite;
        if (m_cg)
            solve_cg();
        else
            multiply(ar, ai, ymf.data(), x.data()); // ar/ai hold A^-1 in this mode
        const int Q = pam.bits_per_symbol();
        for (int u = 0; u < U; ++u) {
            const mmse_gain g = gain[u];
            const bool seen = g.lambda > 0.0f && g.rho > 0.0f;
            const float zr = seen ? x[2 * u] / g.lambda : 0.0f,
                        zi = seen ? x[2 * u + 1] / g.lambda : 0.0f;
            const float rho = seen ? g.rho : 0.0f;
            if (llr) // written by the batch, at the latest by flush_llrs()
                m_llrs.add(zr, zi, rho, llr + size_t(u) * Q, pam, clip);
            if (z)
                z[u] = cfloat(zr, zi);
            if (sinr)
                sinr[u] = rho;
        }
        return problem_fault::none;
    }

    /// Detects one symbol y with the users' a-priori LLRs `priors` (U * Q, not
    /// all zero, finite) by MMSE-PIC (mmse_pic.h): extrinsic LLRs. Cholesky
    /// mode only; M's factorisation fails like A's (the pivot floor).
    problem_fault pic_symbol(const cfloat* y,
                             const float* priors,
                             const pam_table& pam,
                             float clip,
                             float* llr)
    {
        const int U = users();
        if (!matched_filter(y))
            return problem_fault::non_finite;
        const int Q = pam.bits_per_symbol();
        for (int u = 0; u < U; ++u) {
            prior[u] = soft_symbol_from_priors(priors + size_t(u) * Q, pam);
            dev[u] = std::sqrt(prior[u].variance);
        }
        // r (in t) = y_MF - G x_bar; w (in s) = D r; M = D G D + N0 I.
        for (int i = 0; i < U; ++i) {
            float re = ymf[2 * i], im = ymf[2 * i + 1];
            for (int j = 0; j < U; ++j) {
                const float a = at(gr, i, j), b = at(gi, i, j);
                re -= a * prior[j].re - b * prior[j].im;
                im -= a * prior[j].im + b * prior[j].re;
                set(mr, mi, i, j, dev[i] * a * dev[j], dev[i] * b * dev[j]);
            }
            at(mr, i, i) += m_n0;
            s[2 * i] = dev[i] * re;
            s[2 * i + 1] = dev[i] * im;
        }
        if (!cholesky(mr, mi))
            return problem_fault::singular;
        inverse_from_cholesky(mr, mi);
        multiply(mr, mi, s.data(), x.data()); // v = M^-1 D r
        for (int u = 0; u < U; ++u) {
            float t = 0.0f; // Re (M^-1 D G)_uu
            for (int k = 0; k < U; ++k)
                t += dev[k] * (at(mr, u, k) * at(gr, k, u) - at(mi, u, k) * at(gi, k, u));
            const pic_estimate e =
                pic_user(prior[u], t, x[2 * u], x[2 * u + 1], at(mr, u, u), dev[u], m_n0);
            mmse_pic_llrs(e.zr,
                          e.zi,
                          e.rho,
                          priors + size_t(u) * Q,
                          pam,
                          clip,
                          llr + size_t(u) * Q);
        }
        return problem_fault::none;
    }

private:
    /// y_MF = H^H y of the scaled y into ymf, vectorised over users; false if
    /// it is not finite.
    bool matched_filter(const cfloat* y)
    {
        const int U = users();
        float* re = &x[0]; // y_MF's real and imaginary parts, before x is needed
        float* im = &r[0];
        std::fill_n(re, U, 0.0f);
        std::fill_n(im, U, 0.0f);
        for (int b = 0; b < B; ++b) { // y_MF += conj(h_b) y_b
            const float yr = m_scale * y[b].real(), yi = m_scale * y[b].imag();
            const float* rb = &hr[size_t(b) * U];
            const float* ib = &hi[size_t(b) * U];
            for (int u = 0; u < U; ++u) {
                re[u] += rb[u] * yr + ib[u] * yi;
                im[u] += rb[u] * yi - ib[u] * yr;
            }
        }
        for (int u = 0; u < U; ++u) {
            ymf[2 * u] = re[u];
            ymf[2 * u + 1] = im[u];
        }
        bool finite = true;
        for (float v : ymf)
            finite &= std::isfinite(v);
        return finite;
    }

    template <typename M>
    auto& at(M& m, int i, int j) const
    {
        return m[size_t(i) * users() + j];
    }
    void set(square& re, square& im, int i, int j, float vr, float vi)
    {
        at(re, i, j) = vr;
        at(im, i, j) = vi;
    }

    /// (sr, si) = L L^H, L lower in lr/li; false when a pivot falls to
    /// k_mmse_pivot_floor.
    bool cholesky(square& sr, square& si)
    {
        const int U = users();
        for (int j = 0; j < U; ++j) {
            float d = at(sr, j, j);
            for (int k = 0; k < j; ++k)
                d -= at(lr, j, k) * at(lr, j, k) + at(li, j, k) * at(li, j, k);
            if (!(d > k_mmse_pivot_floor * at(sr, j, j)) || !std::isfinite(d))
                return false;
            const float ljj = std::sqrt(d);
            set(lr, li, j, j, ljj, 0.0f);
            for (int i = j + 1; i < U; ++i) {
                float vr = at(sr, i, j), vi = at(si, i, j);
                for (int k = 0; k < j; ++k) { // L_ik conj(L_jk)
                    vr -= at(lr, i, k) * at(lr, j, k) + at(li, i, k) * at(li, j, k);
                    vi -= at(li, i, k) * at(lr, j, k) - at(lr, i, k) * at(li, j, k);
                }
                set(lr, li, i, j, vr / ljj, vi / ljj);
                set(lr, li, j, i, 0.0f, 0.0f);
            }
        }
        return true;
    }

    /// (L L^H)^-1 = L^-H L^-1 of the factor in lr/li into (outr, outi).
    void inverse_from_cholesky(square& outr, square& outi)
    {
        const int U = users();
        // X = L^-1 (lower), column by column.
        square& xr = m_inverse_re;
        square& xi = m_inverse_im;
        std::fill(xr.begin(), xr.end(), 0.0f);
        std::fill(xi.begin(), xi.end(), 0.0f);
        for (int u = 0; u < U; ++u) {
            xr[size_t(u) * U + u] = 1.0f / at(lr, u, u);
            for (int i = u + 1; i < U; ++i) {
                float vr = 0, vi = 0;
                for (int k = u; k < i; ++k) { // L_ik X_ku
                    const float a = at(lr, i, k), b = at(li, i, k);
                    const float c = xr[size_t(k) * U + u], d = xi[size_t(k) * U + u];
                    vr += a * c - b * d;
                    vi += a * d + b * c;
                }
                const float inv = 1.0f / at(lr, i, i);
                xr[size_t(i) * U + u] = -vr * inv;
                xi[size_t(i) * U + u] = -vi * inv;
            }
        }
        for (int i = 0; i < U; ++i)
            for (int j = 0; j < U; ++j) {
                float vr = 0, vi = 0;
                for (int k = i > j ? i : j; k < U; ++k) { // conj(X_ki) X_kj
                    const float a = xr[size_t(k) * U + i], b = xi[size_t(k) * U + i];
                    const float c = xr[size_t(k) * U + j], d = xi[size_t(k) * U + j];
                    vr += a * c + b * d;
                    vi += a * d - b * c;
                }
                set(outr, outi, i, j, vr, vi);
            }
    }

    /// out = M v for the U x U matrix (m_re, m_im), v and out interleaved re/im.
    void multiply(const square& m_re, const square& m_im, const float* v, float* out)
    {
        const int U = users();
        for (int i = 0; i < U; ++i) {
            float re = 0, im = 0;
            for (int j = 0; j < U; ++j) {
                const float a = at(m_re, i, j), b = at(m_im, i, j);
                re += a * v[2 * j] - b * v[2 * j + 1];
                im += a * v[2 * j + 1] + b * v[2 * j];
            }
            out[2 * i] = re;
            out[2 * i + 1] = im;
        }
    }

    static float norm2(const pair_vector& v)
    {
        float n = 0;
        for (float e : v)
            n += e * e;
        return n;
    }

    /// Paper Algorithm 1, lines 7-15: A x = y_MF from x = 0; stops early once the
    /// residual is zero (an exact solution), where another step would divide 0 by 0.
    void solve_cg()
    {
        const int U = users();
        std::fill(x.begin(), x.end(), 0.0f);
        r = ymf;
        t = ymf;
        float rr = norm2(r);
        for (int it = 0; it < m_iterations; ++it) {
            multiply(ar, ai, t.data(), s.data());
            float ts = 0;
            for (int k = 0; k < 2 * U; ++k) // Re(t^H s); A is Hermitian, so t^H s is real
                ts += t[k] * s[k];
            if (!(rr > 0.0f) || !(ts > 0.0f))
                break;
            const float alpha = rr / ts;
            for (int k = 0; k < 2 * U; ++k) {
                x[k] += alpha * t[k];
                r[k] -= alpha * s[k];
            }
            const float next = norm2(r);
            const float beta = next / rr;
            for (int k = 0; k < 2 * U; ++k)
                t[k] = r[k] + beta * t[k];
            rr = next;
        }
    }

    int users() const { return FixedU > 0 ? FixedU : m_users; }
    const int B, m_users;
    const bool m_cg;
    const int m_iterations;
    float m_scale = 1.0f; ///< the power of two H and y are scaled by (prepare)
    float m_n0 = 0.0f;    ///< N0 scaled alike
    std::vector<float> hr, hi;
    square ar, ai, lr, li;
    user_vector gdiag;
    square gr, gi, mr, mi; // G; M, then M^-1 (problems with priors)
    typename channel_storage<soft_symbol, FixedU>::type prior;
    user_vector dev; // d_u = sqrt(E_u)
    typename channel_storage<mmse_gain, FixedU>::type gain;
    pair_vector ymf, x, r, t, s;
    square m_inverse_re, m_inverse_im; // L^-1
    mmse_llr_batch m_llrs;
};

class cpu_mmse_engine final : public cpu_detector_engine, public mmse_equalizer
{
public:
    explicit cpu_mmse_engine(const mmse_config& config)
        : cpu_detector_engine(config.shape, config.mod), m_config(config)
    {
    }

    detection_report equalize(const detector_input& in, const mmse_outputs& out) override
    {
        const size_t U = size_t(m_config.shape.nt);
        return checked_call(in.problems(), nullptr, [&](fault_word* flags) {
            run_channels(in, 0.0f, { nullptr, out.z, out.sinr }, flags);
            for (size_t p = 0; p < in.problems();
                 ++p) // the erased problems' symbols and SINRs are 0
                if (flags[p]) {
                    if (out.z)
                        std::fill_n(out.z + p * U, U, cfloat(0, 0));
                    if (out.sinr)
                        std::fill_n(out.sinr + p * U, U, 0.0f);
                }
        });
    }

private:
    void detect_problems(const detector_input& in,
                         float clip,
                         float* llr,
                         fault_word* flags) override
    {
        run_channels(in, clip, { llr, nullptr, nullptr }, flags);
    }

    void run_channels(const detector_input& in,
                      float clip,
                      const mmse_outputs& out,
                      fault_word* flags)
    {
        switch (m_config.shape.nt) {
        case 1:
            return run_channels<1>(in, clip, out, flags);
        case 2:
            return run_channels<2>(in, clip, out, flags);
        case 3:
            return run_channels<3>(in, clip, out, flags);
        case 4:
            return run_channels<4>(in, clip, out, flags);
        default:
            return run_channels<0>(in, clip, out, flags);
        }
    }

    template <int FixedU>
    void run_channels(const detector_input& in,
                      float clip,
                      const mmse_outputs& out,
                      fault_word* flags)
    {
        const size_t S = size_t(in.symbols_per_channel), B = size_t(m_config.shape.nr),
                     U = size_t(m_config.shape.nt), Q = size_t(m_pam.bits_per_symbol());
        // Threads take whole channels (a channel's preparation is its most costly
        // step); a thread costs about 20 us to start, a 128x16 channel about as much.
        const size_t min_channels = std::max<size_t>(1, 16 / S);
        parallel_for(in.channels, min_channels, [&](size_t begin, size_t end) {
            mmse_channel_cpu<FixedU> channel(m_config);
            for (size_t c = begin; c < end; ++c) {
                const problem_fault bad = channel.prepare(in.H + c * B * U, in.n0);
                for (size_t s = 0; s < S; ++s) {
                    const size_t p = c * S + s;
                    const float* prior = in.priors ? in.priors + p * U * Q : nullptr;
                    problem_fault f = bad;
                    if (f == problem_fault::none && prior &&
                        !priors_finite(prior, int(U * Q)))
                        f = problem_fault::non_finite;
                    else if (f == problem_fault::none && prior &&
                             !priors_all_zero(prior, int(U * Q)))
                        f = channel.pic_symbol(
                            in.y + p * B, prior, m_pam, clip, out.llr + p * U * Q);
                    else if (f == problem_fault::none)
                        f = channel.symbol(in.y + p * B,
                                           m_pam,
                                           clip,
                                           out.llr ? out.llr + p * U * Q : nullptr,
                                           out.z ? out.z + p * U : nullptr,
                                           out.sinr ? out.sinr + p * U : nullptr);
                    if (f != problem_fault::none)
                        report_fault(flags, p, f);
                }
            }
            channel.flush_llrs(m_pam, clip);
        });
    }

    mmse_config m_config;
};

} // namespace

std::unique_ptr<detector_engine> make_cpu_mmse_engine(const mmse_config& config)
{
    return std::make_unique<cpu_mmse_engine>(config);
}

namespace {

detector_capabilities mmse_capabilities(bool conjugate_gradient)
{
    detector_capabilities c;
    c.max_nr = k_mmse_max_receive;
    c.max_nt = k_mmse_max_users;
    c.modulations = { modulation::qpsk,
                      modulation::qam16,
                      modulation::qam64,
                      modulation::qam256,
                      modulation::qam1024 };
    c.soft_output = true;
    c.exact_max_log = false;
    c.reuses_channels = true;
    c.erases_rank_deficient = false; // N0 I regularises: see k_mmse_pivot_floor
    c.bit_identical_backends = false;
    // Cholesky mode: MMSE-PIC with priors (mmse_pic.h); CG has no per-user
    // variances without an inverse.
    c.accepts_priors = !conjugate_gradient;
    return c;
}

parameter_spec clip_parameter()
{
    return { "llr_clip",
             0,
             0,
             1e4,
             false,
             true,
             "LLRs clipped to [-clip, clip]; 0: no clipping (the paper's LLRs, saturated "
             "at 1e30)" };
}
parameter_spec library_parameter()
{
    return {
        "cublas",
        0,
        0,
        1,
        true,
        false,
        "CUDA: 1 runs cuBLAS/cuSOLVER batched calls (gemm, potrf, trsm) instead of the "
        "hand kernels (the comparison of docs/benchmarks.md); the CPU ignores it"
    };
}

mmse_config engine_config(const detector_config& config, bool conjugate_gradient)
{
    mmse_config c;
    c.shape = config.shape;
    c.mod = config.mod;
    c.conjugate_gradient = conjugate_gradient;
    c.iterations = conjugate_gradient ? int(config.parameters.at("iterations")) : 0;
    c.library = config.parameters.at("cublas") != 0.0;
    return c;
}

std::vector<parameter_spec> cholesky_parameters()
{
    return { clip_parameter(), library_parameter() };
}
std::vector<parameter_spec> cg_parameters()
{
    return { { "iterations",
               3,
               1,
               64,
               true,
               false,
               "conjugate-gradient iterations (U iterations solve exactly, in exact "
               "arithmetic)" },
             clip_parameter(),
             library_parameter() };
}

} // namespace

std::vector<detector_family> mmse_families()
{
    std::vector<detector_family> families;
    for (const bool cg : { false, true }) {
        detector_family f;
        f.name = cg ? "mmse_cg" : "mmse";
        f.summary =
            cg ? "soft MMSE, conjugate gradients (massive MIMO; `iterations` CG "
                 "steps, the paper's "
                 "SINR approximation rho = G_uu / N0)"
               : "soft MMSE, Cholesky (massive MIMO; exact MMSE equalisation, "
                 "max-log LLRs of the "
                 "equalised symbols; channel reuse over S symbols; with a-priori LLRs "
                 "MMSE-PIC, extrinsic LLRs)";
        f.capabilities = mmse_capabilities(cg);
        f.parameters = cg ? cg_parameters() : cholesky_parameters();
        f.make = [](const detector_family& family, const detector_config& c, backend b) {
            return std::unique_ptr<detector>(new mmse_detector(family, c, b));
        };
        // Each user's equalised symbol against the M points (the filters are per
        // channel).
        f.cost = [](const detector_config& c) {
            return double(c.shape.nt) * constellation(c.mod).order();
        };
        f.comparison_runs = [cg](const mimo_shape&, modulation) {
            return std::vector<detector_parameters>{
                cg ? detector_parameters{ { "iterations", 3 } } : detector_parameters{}
            };
        };
        f.comparison_fallback = true; // massive MIMO's families
        families.push_back(std::move(f));
    }
    return families;
}

} // namespace detail

mmse_detector::mmse_detector(const detector_family& family,
                             const detector_config& config,
                             backend requested)
    : detector(family, config)
{
    const detail::mmse_config c = detail::engine_config(config, family.name == "mmse_cg");
    use_engine(detail::choose_engine(
        requested,
        [&] { return detail::make_cpu_mmse_engine(c); },
        [&] { return detail::make_cuda_mmse_engine(c); }));
}

detection_report mmse_detector::equalize(const detector_input& in, cfloat* z, float* sinr)
{
    check_noise_variance(in.n0);
    if (in.symbols_per_channel < 1)
        throw std::invalid_argument("mimo_gpu: detector '" + name() +
                                    "' equalize: S must be >= 1");
    if (in.priors)
        throw std::invalid_argument("mimo_gpu: detector '" + name() +
                                    "' takes no a-priori LLRs");
    if (in.channels > 0 && (!in.H || !in.y))
        throw std::invalid_argument("mimo_gpu: detector '" + name() +
                                    "' equalize: null buffer");
    detail::mmse_outputs out;
    out.z = z;
    out.sinr = sinr;
    const detection_report report =
        detail::engine_extension<detail::mmse_equalizer>(engine()).equalize(in, out);
    if (report.erased > 0 && bad_problems() == bad_problem_policy::stop)
        throw std::invalid_argument(
            "mimo_gpu::" + name() + "_detector: " + report.describe() +
            " (bad-problem policy 'stop'; 'erase' detects the rest)");
    return report;
}

} // namespace mimo_gpu
