/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// The frame of the OFDM blocks from their parameters, checked before any
// io_signature is made from it.
#ifndef INCLUDED_MIMO_GPU_OFDM_PARAMETERS_H
#define INCLUDED_MIMO_GPU_OFDM_PARAMETERS_H

#include <mimo_gpu/ofdm_grid.h>

#include <string>

namespace gr {
namespace mimo_gpu {

/// The preset with nt, modulation and the slot layout set, validated
/// (std::invalid_argument naming the bad parameter).
::mimo_gpu::ofdm_grid
ofdm_frame(const std::string& grid, int nt, const std::string& modulation, int slots, int data_symbols);

} // namespace mimo_gpu
} // namespace gr

#endif
