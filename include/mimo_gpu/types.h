// Data conventions shared by every core class (docs/detectors.md, "The interface").
#pragma once

#include <complex>
#include <cstddef>
#include <cstdint>

// CUDA's stream type, declared here so the API needs no CUDA header.
struct CUstream_st;

namespace mimo_gpu {

using cfloat = std::complex<float>; // interleaved re/im, identical to gr_complex

/// Opaque CUDA stream handle: identical to cudaStream_t, without including CUDA headers.
using cuda_stream_t = ::CUstream_st*;

/// Size of one MIMO problem (one resource element): y = H s + n, H is nr x nt
/// row-major (H[r*nt + t]), nt <= nr.
struct mimo_shape {
    int nr = 0;
    int nt = 0;
    /// Throws std::invalid_argument unless 1 <= nt <= nr <= k_largest_shape. Each
    /// detector family states its own, smaller limits (detector_capabilities).
    void validate() const;
    /// Also nr <= k_max_antennas: for the register-resident small-MIMO kernels (QR,
    /// N-way, ML, MTT).
    void validate_small() const;
    int real_rows() const { return 2 * nr; }
    int real_cols() const { return 2 * nt; }
};

/// Largest antenna count per side of the small-MIMO kernels (compiled sizes).
constexpr int k_max_antennas = 8;
/// Largest antenna count per side any shape may have (large-MIMO families size at run
/// time).
constexpr int k_largest_shape = 1024;

} // namespace mimo_gpu
