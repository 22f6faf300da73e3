// The engines behind the FSD and SFSD detectors (one CPU, one CUDA), and the
// per-problem routine the CPU engine runs (the CUDA kernel runs the same steps,
// its lanes sharing out the paths and the list extension).
#pragma once

#include <mimo_gpu/detector.h>

#include "../detector_engine.h"

#include "../../qr/mgs_qr.h"
#include "../../runtime/fault_flags.h"
#include "../../runtime/shape_dispatch.h"
#include "../pam_table.h"
#include "fsd_search.h"

#include <memory>
#include <stdexcept>

namespace mimo_gpu {
namespace detail {

/// The largest stream count the FSD kernels are compiled for (the paper's 4x4).
constexpr int k_fsd_max_streams = 4;
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

using fsd_engine = detector_engine; // CPU and CUDA engines (detector_engine.h)

std::unique_ptr<fsd_engine> make_cpu_fsd_engine(const fsd_config& config);
std::unique_ptr<fsd_engine> make_cuda_fsd_engine(const fsd_config& config); // the .cu (CUDA builds only)

/// dispatch_shape for the shapes the FSD kernels are compiled for (nt <= 4).
template <typename F>
decltype(auto) dispatch_fsd_shape(int nr, int nt, F&& f)
{
    return dispatch_shape(nr, nt, [&](auto nr_c, auto nt_c) -> decltype(auto) {
        constexpr int NT = decltype(nt_c)::value;
        if constexpr (NT <= k_fsd_max_streams)
            return f(nr_c, nt_c);
        else
            throw std::invalid_argument("mimo_gpu: the FSD detectors take nt <= 4");
    });
}

/// Ordering and QR of one problem: the item the search reads (the same for
/// every nr, so the CUDA search kernels are compiled per nt only).
template <int NT>
struct fsd_item {
    static constexpr int e_floats = 2 * NT * (2 * NT + 1);
    float E[e_floats];
    int perm[NT];
    template <int NR, int PITCH = 1>
    MIMO_HD problem_fault prepare(const float* H, const float* y, int full)
    {
        fsd_order<NR, NT, PITCH>(H, full, perm);
        return mgs_qr_permuted<NR, NT, PITCH>(H, y, perm, E);
    }
};

#ifdef MIMO_GPU_HAVE_CUDA
/// Enqueues the ordering and QR of a batch (device memory) into `d_items`
/// (batch items of fsd_item<nt>), bad problems reported into `faults`.
/// full: the FE levels of the ordering (0: V-BLAST, strongest first).
void launch_fsd_prepare(mimo_shape shape, int full, const cfloat* d_H, const cfloat* d_y, size_t batch,
                        void* d_items, fault_sink faults, cuda_stream_t stream);
/// Bytes of one item for nt streams.
size_t fsd_item_bytes(int nt);
#endif

/// The whole detection of one problem on one thread (the CPU engine).
/// dist: paths floats, chosen: niter ints, dmin: NT * M floats of scratch.
template <int NR, int NT>
problem_fault fsd_problem(const float* H, const float* y, const fsd_config& c, const pam_table& pam, float n0,
                          float clip, float* dist, int* chosen, float* dmin, float* llr)
{
    fsd_item<NT> item;
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
        for (int k = 0; k < Q; ++k)
            llr[t * Q + k] = llr_from_symbol_minima(dmin + t * M, pam, k, n0, clip, k_unreached_llr);
    return problem_fault::none;
}

} // namespace detail
} // namespace mimo_gpu
