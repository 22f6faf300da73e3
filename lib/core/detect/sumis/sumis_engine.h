// The engines behind the SUMIS detector (one CPU, one CUDA) and what they share.
#pragma once

#include <mimo_gpu/detector.h>

#include "../engine/detector_engine.h"
#include "sumis_math.h"

#include <memory>

namespace mimo_gpu {
namespace detail {

constexpr int k_sumis_max_antennas = 256;
/// Hypotheses per partition at most (L^ns, L = sqrt M PAM levels): 2^20, e.g.
/// 1024-QAM (L = 32) with n_s = 4, or 256-QAM (L = 16) with n_s = 5.
constexpr long long k_sumis_max_hypotheses = 1ll << 20;

struct sumis_config {
    mimo_shape shape;
    modulation mod;
    int ns = 3;         ///< real symbols per subspace
    bool stage2 = true; ///< false: stage I's LLRs (the approximation lambda)
};

/// The engines: host memory; priors may be null. LLRs are a-posteriori without
/// priors, extrinsic (a-posteriori minus a-priori) with them. Bad problems: LLRs 0.
/// The CUDA engine has no device path (its cuBLAS/cuSOLVER chunks read host memory).
std::unique_ptr<detector_engine> make_cpu_sumis_engine(const sumis_config& config);
std::unique_ptr<detector_engine>
make_cuda_sumis_engine(const sumis_config& config); // the .cu (CUDA builds)

/// The per-dimension energy of the constellation's PAM levels (1/2 for unit-energy QAM).
inline double sumis_dimension_energy(const pam_table& pam)
{
    double e = 0;
    for (int l = 0; l < pam.levels; ++l)
        e += pam.amplitude(l) * pam.amplitude(l);
    return e / pam.levels;
}

inline int sumis_output_index(int dim, int b, int nt, int Q)
{
    return sumis_output_index_hd(dim, b, nt, Q);
}

} // namespace detail
} // namespace mimo_gpu
