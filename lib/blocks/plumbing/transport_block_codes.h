/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// The channel codes a block takes by name: "turbo" (LTE, 36.212) and "ldpc"
// (NR, 38.212): the format from the block's parameters, the encoder, and the
// core's transport_block_code_decoder. The one place a block chooses between
// the two chains.
#ifndef INCLUDED_MIMO_GPU_TRANSPORT_BLOCK_CODES_H
#define INCLUDED_MIMO_GPU_TRANSPORT_BLOCK_CODES_H

#include <mimo_gpu/backend.h>
#include <mimo_gpu/transport_block_code.h>
#include <mimo_gpu/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace gr {
namespace mimo_gpu {

enum class transport_block_code { turbo, ldpc };

/// "turbo" or "ldpc"; std::invalid_argument naming both for another.
transport_block_code transport_block_code_from_string(const std::string& name);
std::string to_string(transport_block_code code);

/// Encodes one transport block's A bits into its G coded bits.
using transport_block_encode = std::function<void(const uint8_t* a, uint8_t* g)>;
transport_block_encode make_transport_block_encode(
    transport_block_code code, int A, int G, int Qm, int NL, int rv);

/// The decoder of the code. algorithm: "" for the code's default, else one of
/// its names (turbo: max-log-map, log-map; ldpc: offset-min-sum,
/// normalized-min-sum, sum-product); iterations: 0 for the code's default (6
/// turbo, 10 ldpc); extrinsic_scale and window: the turbo decoder's (ldpc
/// ignores them).
std::unique_ptr<::mimo_gpu::transport_block_code_decoder>
make_transport_block_code_decoder(transport_block_code code,
                                  int A,
                                  int G,
                                  int Qm,
                                  int NL,
                                  int rv,
                                  const std::string& algorithm,
                                  int iterations,
                                  double extrinsic_scale,
                                  int window,
                                  ::mimo_gpu::backend backend);

} // namespace mimo_gpu
} // namespace gr

#endif
