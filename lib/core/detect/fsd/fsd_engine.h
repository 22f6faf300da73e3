// The engines behind the FSD and SFSD detectors (one CPU, one CUDA), and the
// per-problem routine the CPU engine runs (the CUDA kernel runs the same steps,
// its lanes sharing out the paths and the list extension).
#pragma once

#include <mimo_gpu/detector.h>

#include "../engine/detector_engine.h"
#include "../pam_table.h"
#include "../sphere/sphere_item.h"
#include "fsd_search.h"

#include <memory>
#include <stdexcept>

namespace mimo_gpu {
namespace detail {

/// The most FE paths per problem (M^full) the kernels take.
constexpr int k_fsd_max_paths = 4096;

struct fsd_config {
    mimo_shape shape;
    modulation mod;
    bool soft = false; ///< SFSD (list extension, soft LLRs) or FSD (hard decisions)
    int full = 1;      ///< fully expanded levels (T)
    int niter = 0;     ///< SFSD: paths extended (clamped to the paths there are)
    int paths(const pam_table& pam) const { return fsd_paths(pam.order(), full); }
    int extensions(const pam_table& pam) const
    {
        const int n = niter < paths(pam) ? niter : paths(pam);
        return soft ? n * pam.bits_per_symbol() * (shape.nt - full) : 0;
    }
};

std::unique_ptr<detector_engine> make_cpu_fsd_engine(const fsd_config& config);
std::unique_ptr<detector_engine>
make_cuda_fsd_engine(const fsd_config& config); // the .cu (CUDA builds only)

/// The whole detection of one problem on one thread (the CPU engine).
/// dist: paths floats, chosen: niter ints, dmin: NT * M floats of scratch.
template <int NR, int NT>
problem_fault fsd_problem(const float* H,
                          const float* y,
                          const fsd_config& c,
                          const pam_table& pam,
                          float n0,
                          float clip,
                          float* dist,
                          int* chosen,
                          float* dmin,
                          float* llr)
{
    sphere_item<NT> item;
    const problem_fault fault = item.template prepare<NR>(H, y, c.full);
    if (fault != problem_fault::none)
        return fault;
    const int M = pam.order(), Q = pam.bits_per_symbol(), paths = c.paths(pam);
    for (int i = 0; i < NT * M; ++i)
        dmin[i] = k_infinity;
    auto keep_min = [dmin](int i, float d) { dmin[i] = d < dmin[i] ? d : dmin[i]; };
    bool finite = true;
    int level[2 * NT];
    for (int p = 0; p < paths; ++p) {
        dist[p] = fsd_path<NT>(item.E, c.full, p, pam, level);
        finite &= dist[p] < k_infinity;
        if (c.soft)
            fsd_record<NT>(level, item.perm, dist[p], pam, keep_min);
    }
    if (!finite)
        return problem_fault::non_finite;
    if (!c.soft) {
        int best = 0;
        fsd_select_best(dist, paths, 1, &best);
        fsd_path<NT>(item.E, c.full, best, pam, level);
        fsd_hard_llrs<NT>(level, item.perm, pam, clip, llr);
        return problem_fault::none;
    }
    const int niter = c.niter < paths ? c.niter : paths, per_base = Q * (NT - c.full);
    fsd_select_best(dist, paths, niter, chosen);
    for (int e = 0; e < niter * per_base; ++e) {
        int base[2 * NT];
        fsd_path<NT>(item.E, c.full, chosen[e / per_base], pam, base);
        const int r = e % per_base;
        const float d = sfsd_extension<NT>(item.E, base, r / Q, r % Q, pam, level);
        finite &= d < k_infinity;
        fsd_record<NT>(level, item.perm, d, pam, keep_min);
    }
    if (!finite)
        return problem_fault::non_finite;
    for (int t = 0; t < NT; ++t)
        llrs_from_symbol_minima(
            dmin + t * M, pam, n0, clip, k_unreached_llr, llr + t * Q);
    return problem_fault::none;
}

} // namespace detail
} // namespace mimo_gpu
