// The engines behind the K-best detector (one CPU, one CUDA) and the
// CPU per-problem routine (the CUDA kernel runs the same steps, a warp per problem).
#pragma once

#include <mimo_gpu/detector.h>

#include "../engine/detector_engine.h"
#include "../sphere/sphere_item.h"
#include "kbest_search.h"

#include <memory>
#include <stdexcept>

namespace mimo_gpu {
namespace detail {

/// The most children per level (K * M) the engines take.
constexpr int k_kbest_max_children = 4096;

struct kbest_config {
    mimo_shape shape;
    modulation mod;
    int K = 16;
    float missing_llr =
        3.0f; ///< |LLR| of a bit no kept or informative pruned path contradicts
};

std::unique_ptr<detector_engine> make_cpu_kbest_engine(const kbest_config& config);
std::unique_ptr<detector_engine>
make_cuda_kbest_engine(const kbest_config& config); // the .cu (CUDA builds only)

/// One problem's search and LLRs (stream t's at [t * Q, t * Q + Q)) from its
/// item: V-BLAST ordering (strongest stream at the top) and QR.
template <int NT>
/// prior (may be null): the problem's NT * Q a-priori LLRs; the LLRs are then
/// extrinsic (kbest_llr: the unclipped a-posteriori LLR minus the a-priori one,
/// then clipped, for the clip bounds what goes to the decoder). cost: NT * M
/// floats of scratch.
MIMO_HD problem_fault kbest_problem(const sphere_item<NT>& item,
                                    int K,
                                    const pam_table& pam,
                                    float n0,
                                    float clip,
                                    float missing,
                                    const kbest_scratch& s,
                                    const float* prior,
                                    float* cost,
                                    float* dmin,
                                    float* pmin,
                                    float* llr)
{
    const int M = pam.order(), Q = pam.bits_per_symbol();
    if (prior) {
        if (!priors_finite(prior, NT * Q))
            return problem_fault::non_finite;
        for (int i = 0; i < NT * M; ++i)
            cost[i] = symbol_prior_cost(prior + (i / M) * Q, pam, i % M, n0);
    }
    float best = 0.0f;
    if (!kbest_search<NT>(
            item.E, item.perm, K, pam, s, prior ? cost : nullptr, dmin, pmin, &best))
        return problem_fault::non_finite;
    // Each stream's axis minima of both tables once: [table][axis][level].
    const int L = pam.levels;
    float amin[2][2][k_max_pam_levels];
    for (int t = 0; t < NT; ++t) {
        for (int axis = 0; axis < 2; ++axis)
            for (int level = 0; level < L; ++level) {
                amin[0][axis][level] = axis_minimum(dmin + t * M, pam, axis, level);
                amin[1][axis][level] = axis_minimum(pmin + t * M, pam, axis, level);
            }
        for (int k = 0; k < Q; ++k) {
            const float *list = amin[0][k % 2], *pruned = amin[1][k % 2];
            llr[t * Q + k] =
                prior
                    ? kbest_llr<true>(
                          list, pruned, best, pam, k, n0, clip, missing, prior[t * Q + k])
                    : kbest_llr<false>(
                          list, pruned, best, pam, k, n0, clip, missing, 0.0f);
        }
    }
    return problem_fault::none;
}

} // namespace detail
} // namespace mimo_gpu
