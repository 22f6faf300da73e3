/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// What the transport-block blocks share (tb_* and nr_tb_*): their message
// ports, the transport block formats from the block parameters, and the checks of an
// incoming PDU (a bad PDU is logged, naming what was expected, and dropped).
#ifndef INCLUDED_MIMO_GPU_TRANSPORT_BLOCK_PDU_H
#define INCLUDED_MIMO_GPU_TRANSPORT_BLOCK_PDU_H

#include <gnuradio/logger.h>
#include <mimo_gpu/lte_turbo_decoder.h>
#include <mimo_gpu/nr_transport_block.h>
#include <pmt/pmt.h>

#include <cstdint>

namespace gr {
namespace mimo_gpu {

extern const pmt::pmt_t k_pdu_in_port;  ///< "in"
extern const pmt::pmt_t k_pdu_out_port; ///< "out"

/// The validated format (throws std::invalid_argument naming the parameter).
::mimo_gpu::transport_block_format
transport_block_format_of(int A, int G, int Qm, int NL, int rv);
/// The validated NR format (base_graph 0: chosen by 38.212's rules).
::mimo_gpu::nr_transport_block_format
nr_transport_block_format_of(int A, int G, int Qm, int NL, int rv, int base_graph = 0);

/// The A bits of a PDU (meta . u8vector of A bytes 0/1), or nullptr after logging why
/// not.
const uint8_t* pdu_bits(const pmt::pmt_t& pdu, int A, gr::logger& logger);
/// The G finite LLRs of a PDU (meta . f32vector of G), or nullptr after logging why not.
const float* pdu_llrs(const pmt::pmt_t& pdu, int G, gr::logger& logger);

} // namespace mimo_gpu
} // namespace gr

#endif
