/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "plumbing/transport_block_pdu.h"
#include "tb_encoder_impl.h"

#include <gnuradio/io_signature.h>

#include <exception>

namespace gr {
namespace mimo_gpu {

tb_encoder::sptr tb_encoder::make(int A, int G, int Qm, int NL, int rv)
{
    return gnuradio::make_block_sptr<tb_encoder_impl>(A, G, Qm, NL, rv);
}

tb_encoder_impl::tb_encoder_impl(int A, int G, int Qm, int NL, int rv)
    : gr::block(
          "tb_encoder", gr::io_signature::make(0, 0, 0), gr::io_signature::make(0, 0, 0)),
      d_encoder(transport_block_format_of(A, G, Qm, NL, rv))
{
    message_port_register_in(k_pdu_in_port);
    message_port_register_out(k_pdu_out_port);
    set_msg_handler(k_pdu_in_port, [this](const pmt::pmt_t& pdu) { handle_pdu(pdu); });
}

void tb_encoder_impl::set_rv(int rv)
{
    gr::thread::scoped_lock lock(d_mutex);
    auto format = d_encoder.format();
    format.rv = rv;
    format.validate();
    d_encoder = ::mimo_gpu::transport_block_encoder(format);
}

int tb_encoder_impl::rv() const
{
    gr::thread::scoped_lock lock(d_mutex);
    return d_encoder.format().rv;
}

void tb_encoder_impl::handle_pdu(const pmt::pmt_t& pdu)
{
    gr::thread::scoped_lock lock(d_mutex);
    const auto& format = d_encoder.format();
    const uint8_t* bits = pdu_bits(pdu, format.A, *d_logger);
    if (!bits)
        return;
    d_coded.resize(format.G);
    try {
        d_encoder.encode(bits, d_coded.data());
    } catch (const std::exception& e) { // not expected: the format is checked
        d_logger->error("transport block not encoded: {}", e.what());
        return;
    }
    message_port_pub(k_pdu_out_port,
                     pmt::cons(pmt::car(pdu), pmt::init_u8vector(format.G, d_coded)));
}

} // namespace mimo_gpu
} // namespace gr
