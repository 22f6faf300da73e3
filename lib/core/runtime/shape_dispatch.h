// Turns run-time antenna counts into compile-time constants, so per-problem
// arrays live in registers on the GPU and loops unroll on both backends.
#pragma once

#include <mimo_gpu/types.h>

#include <type_traits>
#include <stdexcept>

namespace mimo_gpu {
namespace detail {

template <int N>
using int_c = std::integral_constant<int, N>;

/// Calls f(int_c<LBITS>{}) for a square QAM's bits per dimension, 1 (QPSK) to
/// MaxBits (5: 1024-QAM), for kernels templated on the modulation.
template <int MaxBits, typename F>
decltype(auto) dispatch_bits_per_dim(int bits_per_dim, F&& f)
{
    static_assert(MaxBits >= 1 && MaxBits <= 5, "QPSK to 1024-QAM");
    switch (bits_per_dim) {
    case 1:
        return f(int_c<1>{});
    case 2:
        return f(int_c<2>{});
    case 3:
        if constexpr (MaxBits >= 3)
            return f(int_c<3>{});
        break;
    case 4:
        if constexpr (MaxBits >= 4)
            return f(int_c<4>{});
        break;
    case 5:
        if constexpr (MaxBits >= 5)
            return f(int_c<5>{});
        break;
    }
    throw std::logic_error("mimo_gpu: no kernel for this modulation");
}

/// Calls f(int_c<NT>{}) for 1 <= nt <= k_max_antennas.
template <typename F>
decltype(auto) dispatch_nt(int nt, F&& f)
{
    switch (nt) {
    case 1:
        return f(int_c<1>{});
    case 2:
        return f(int_c<2>{});
    case 3:
        return f(int_c<3>{});
    case 4:
        return f(int_c<4>{});
    case 5:
        return f(int_c<5>{});
    case 6:
        return f(int_c<6>{});
    case 7:
        return f(int_c<7>{});
    case 8:
        return f(int_c<8>{});
    }
    throw std::invalid_argument("mimo_gpu: nt out of range");
}

/// Calls f(int_c<NR>{}, int_c<NT>{}) for 1 <= nt <= nr <= k_max_antennas.
template <typename F>
decltype(auto) dispatch_shape(int nr, int nt, F&& f)
{
    return dispatch_nt(nt, [&](auto nt_c) -> decltype(auto) {
        return dispatch_nt(nr, [&](auto nr_c) -> decltype(auto) {
            constexpr int NR = decltype(nr_c)::value, NT = decltype(nt_c)::value;
            // Shapes with nt > nr never reach here (mimo_shape::validate), but
            // instantiating them would only cost build time.
            if constexpr (NT <= NR)
                return f(nr_c, nt_c);
            else
                return f(int_c<NT>{}, nt_c);
        });
    });
}

static_assert(k_max_antennas == 8, "dispatch_nt covers 1..8");

} // namespace detail
} // namespace mimo_gpu
