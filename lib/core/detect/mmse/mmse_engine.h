// The engines behind the soft MMSE families (one CPU, one CUDA), and what
// they share: the configuration and the threshold that erases a channel
// whose regularised Gram matrix float cannot factor.
#pragma once

#include <mimo_gpu/detector.h>

#include "../engine/detector_engine.h"

#include <memory>
#include <stdexcept>

namespace mimo_gpu {
namespace detail {

/// Largest shapes of the soft MMSE engines (B receive antennas, U users): the
/// CUDA kernel keeps a channel's H in shared memory and a user per warp lane.
constexpr int k_mmse_max_receive = 256;
constexpr int k_mmse_max_users = 32;

/// A Cholesky pivot at or below this fraction of its diagonal entry of
/// A = H^H H + N0 I means float has lost every digit (condition beyond ~1e6):
/// the channel is erased as singular. Above it the result is the regularised
/// MMSE one (a user the channel does not see gets lambda ~ 0, LLRs ~ 0).
constexpr float k_mmse_pivot_floor = 1e-6f;

struct mmse_config {
    mimo_shape shape; ///< nr = B, nt = U
    modulation mod;
    bool conjugate_gradient = false; ///< else Cholesky
    int iterations = 3;              ///< CG iterations
    bool library =
        false; ///< CUDA: cuBLAS/cuSOLVER batched calls instead of the hand kernels
};

/// Outputs of a run; any may be null. Problem p, user u: llr[(p*U + u)*Q + k],
/// z[p*U + u] (x_hat / lambda), sinr[p*U + u] (rho).
struct mmse_outputs {
    float* llr = nullptr;
    cfloat* z = nullptr;
    float* sinr = nullptr;
};

/// What every MMSE engine adds to detector_engine (engine_extension<mmse_equalizer>):
/// the equalised symbols and SINRs behind the LLRs.
class mmse_equalizer
{
public:
    virtual ~mmse_equalizer() = default;
    /// Host memory, in.symbols_per_channel symbols per channel; bad problems'
    /// outputs 0. out.llr is not written.
    virtual detection_report equalize(const detector_input& in,
                                      const mmse_outputs& out) = 0;
};

std::unique_ptr<detector_engine> make_cpu_mmse_engine(const mmse_config& config);
std::unique_ptr<detector_engine>
make_cuda_mmse_engine(const mmse_config& config); // the .cu (CUDA builds)

} // namespace detail
} // namespace mimo_gpu
