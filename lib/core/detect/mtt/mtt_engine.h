// The interface behind the MTT/OT detector: one CPU and one CUDA implementation.
#pragma once

#include <mimo_gpu/detector.h>

#include "../engine/detector_engine.h"

#include "../../runtime/shape_dispatch.h"

#include <type_traits>
#include <memory>
#include <stdexcept>

namespace mimo_gpu {
namespace detail {

/// multipass: MTT (every stage's candidate list); else OT (the last stage's only).
struct mtt_config {
    mimo_shape shape;
    modulation mod;
    bool multipass;
};

/// The largest stream count the MTT kernels are compiled for (the search's cost
/// grows as nt^2 M^2; the thesis' systems are 2x2 and 4x4).
constexpr int k_mtt_max_streams = 4;

/// Calls f(int_c<L>{}) for the PAM level counts of QPSK, 16- and 64-QAM.
template <typename F>
decltype(auto) dispatch_levels(int levels, F&& f)
{
    switch (levels) {
    case 2:
        return f(std::integral_constant<int, 2>{});
    case 4:
        return f(std::integral_constant<int, 4>{});
    case 8:
        return f(std::integral_constant<int, 8>{});
    }
    throw std::invalid_argument("mimo_gpu: the MTT detector takes QPSK, 16- and 64-QAM");
}

/// Calls f(int_c<NR>{}, int_c<NT>{}) for 1 <= nt <= min(nr, k_mtt_max_streams), nr <=
/// k_max_antennas.
template <typename F>
decltype(auto) dispatch_mtt_shape(int nr, int nt, F&& f)
{
    return dispatch_shape(nr, nt, [&](auto nr_c, auto nt_c) -> decltype(auto) {
        constexpr int NT = decltype(nt_c)::value;
        if constexpr (NT <= k_mtt_max_streams)
            return f(nr_c, nt_c);
        else
            throw std::invalid_argument("mimo_gpu: the MTT detector takes nt <= 4");
    });
}

std::unique_ptr<detector_engine> make_cpu_mtt_engine(const mtt_config& config);
std::unique_ptr<detector_engine>
make_cuda_mtt_engine(const mtt_config& config); // the .cu (CUDA builds only)

} // namespace detail
} // namespace mimo_gpu
