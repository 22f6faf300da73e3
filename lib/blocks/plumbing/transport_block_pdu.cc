/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "transport_block_pdu.h"

#include <cmath>
#include <optional>

namespace gr {
namespace mimo_gpu {

const pmt::pmt_t k_pdu_in_port = pmt::mp("in");
const pmt::pmt_t k_pdu_out_port = pmt::mp("out");

::mimo_gpu::transport_block_format
transport_block_format_of(int A, int G, int Qm, int NL, int rv)
{
    ::mimo_gpu::transport_block_format format;
    format.A = A;
    format.G = G;
    format.Qm = Qm;
    format.NL = NL;
    format.rv = rv;
    format.validate();
    return format;
}

::mimo_gpu::nr_transport_block_format
nr_transport_block_format_of(int A, int G, int Qm, int NL, int rv, int base_graph)
{
    ::mimo_gpu::nr_transport_block_format format;
    format.A = A;
    format.G = G;
    format.Qm = Qm;
    format.NL = NL;
    format.rv = rv;
    format.base_graph = base_graph;
    format.validate();
    return format;
}

namespace {
/// The PDU's vector, or nothing after logging why it is no PDU.
std::optional<pmt::pmt_t>
pdu_vector(const pmt::pmt_t& pdu, const char* expected, gr::logger& logger)
{
    if (!pmt::is_pair(pdu) ||
        !(pmt::is_dict(pmt::car(pdu)) || pmt::is_null(pmt::car(pdu)))) {
        logger.error("message is not a PDU (meta dict . {}); dropped", expected);
        return std::nullopt;
    }
    return pmt::cdr(pdu);
}
} // namespace

const uint8_t* pdu_bits(const pmt::pmt_t& pdu, int A, gr::logger& logger)
{
    const auto data = pdu_vector(pdu, "u8vector", logger);
    if (!data)
        return nullptr;
    const pmt::pmt_t& vector = *data;
    if (!pmt::is_u8vector(vector)) {
        logger.error("PDU data must be a u8vector of A = {} bits; dropped", A);
        return nullptr;
    }
    size_t length = 0;
    const uint8_t* bits = pmt::u8vector_elements(vector, length);
    if (length != size_t(A)) {
        logger.error("PDU has {} bits, expected A = {}; dropped", length, A);
        return nullptr;
    }
    for (size_t i = 0; i < length; ++i) {
        if (bits[i] > 1) {
            logger.error("PDU bit {} is {}, expected 0 or 1 (unpacked bits); dropped",
                         i,
                         int(bits[i]));
            return nullptr;
        }
    }
    return bits;
}

const float* pdu_llrs(const pmt::pmt_t& pdu, int G, gr::logger& logger)
{
    const auto data = pdu_vector(pdu, "f32vector", logger);
    if (!data)
        return nullptr;
    const pmt::pmt_t& vector = *data;
    if (!pmt::is_f32vector(vector)) {
        logger.error("PDU data must be an f32vector of G = {} LLRs; dropped", G);
        return nullptr;
    }
    size_t length = 0;
    const float* llr = pmt::f32vector_elements(vector, length);
    if (length != size_t(G)) {
        logger.error("PDU has {} LLRs, expected G = {}; dropped", length, G);
        return nullptr;
    }
    for (size_t i = 0; i < length; ++i) {
        if (!std::isfinite(llr[i])) {
            logger.error("PDU LLR {} of {} is not finite; dropped", i, G);
            return nullptr;
        }
    }
    return llr;
}

} // namespace mimo_gpu
} // namespace gr
