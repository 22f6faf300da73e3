/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// Checks of block constructor and setter arguments shared by the blocks; each
// throws std::invalid_argument with a message naming the parameter.
#ifndef INCLUDED_MIMO_GPU_BLOCK_PARAMETERS_H
#define INCLUDED_MIMO_GPU_BLOCK_PARAMETERS_H

#include <gnuradio/block.h>
#include <gnuradio/io_signature.h>
#include <mimo_gpu/types.h>

#include <string>

namespace gr {
namespace mimo_gpu {

/// Validated shape: 1 <= nt <= nr <= 1024 (each detector family checks its own limits).
::mimo_gpu::mimo_shape checked_shape(int nr, int nt);
/// noise_var finite and > 0.
float checked_noise_var(double noise_var);
/// max_batch > 0.
/// A block's batch size parameter (named `name` in the message): > 0.
size_t checked_max_batch(int max_batch, const char* name = "max_batch");
/// The received vectors that share a channel: 1..k_max_symbols_per_channel (a
/// channel's items stay whole in one output buffer; GNU Radio's output multiple
/// of 2^31 - 1 items would fail with a message about set_output_multiple).
constexpr int k_max_symbols_per_channel = 1 << 20;
int checked_symbols_per_channel(int symbols_per_channel);
/// The (H, y) stream pair: gr_complex vlen nr*nt and nr (shape checked first).
gr::io_signature::sptr channel_signature(int nr, int nt);
/// The LLR stream: float vlen nt*Q (shape and modulation checked first).
gr::io_signature::sptr llr_signature(int nr, int nt, const std::string& modulation);
/// Asks GNU Radio for output buffers of at least max_batch items (capped at
/// 64 MiB a buffer), so that the next block's core calls get full batches:
/// the default buffers (about 64 KiB) hold only tens of QR items, and a GPU
/// batch that small costs mostly launch and copy overhead.
void request_batch_sized_output_buffers(gr::block& block, size_t max_batch);
/// Bits per symbol Q of a modulation name (throws on an unknown name).
int bits_per_symbol(const std::string& modulation);

} // namespace mimo_gpu
} // namespace gr

#endif
