/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// The frame of the OFDM blocks from their parameters, checked before any
// io_signature is made from it.
#ifndef INCLUDED_MIMO_GPU_OFDM_PARAMETERS_H
#define INCLUDED_MIMO_GPU_OFDM_PARAMETERS_H

#include <mimo_gpu/ofdm_grid.h>
#include <pmt/pmt.h>

#include <optional>
#include <string>
#include <vector>

namespace gr {
namespace mimo_gpu {

/// The preset with nt, modulation and the slot layout set, validated
/// (std::invalid_argument naming the bad parameter).
::mimo_gpu::ofdm_grid ofdm_frame(const std::string& grid,
                                 int nt,
                                 const std::string& modulation,
                                 int slots,
                                 int data_symbols,
                                 const std::vector<int>& pilot_positions = { 0 });

/// The "ofdm_grid" stream tag: a source that knows the frame its samples carry
/// (sigmf_file_source, from a recording's meta) tags its first sample with it,
/// and ofdm_rx refuses a stream whose frame is not its own.
extern const pmt::pmt_t k_grid_tag_key;
/// A dict: fft_size, cp_length, used_subcarriers, dc_null, nt, modulation,
/// slots, data_symbols, pilot_positions (s32vector), sample_rate and a description.
pmt::pmt_t grid_tag_value(const ::mimo_gpu::ofdm_grid& grid);
/// The frame a tag's value describes; nothing when it is not such a dict.
std::optional<::mimo_gpu::ofdm_grid> grid_from_tag_value(const pmt::pmt_t& value);

} // namespace mimo_gpu
} // namespace gr

#endif
