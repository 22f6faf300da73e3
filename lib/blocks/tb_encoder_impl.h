/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef INCLUDED_MIMO_GPU_TB_ENCODER_IMPL_H
#define INCLUDED_MIMO_GPU_TB_ENCODER_IMPL_H

#include <gnuradio/mimo_gpu/tb_encoder.h>
#include <gnuradio/thread/thread.h>
#include <mimo_gpu/lte_turbo_decoder.h>

namespace gr {
namespace mimo_gpu {

class tb_encoder_impl : public tb_encoder
{
public:
    tb_encoder_impl(int A, int G, int Qm, int NL, int rv);

    void set_rv(int rv) override;
    int rv() const override;

private:
    void handle_pdu(const pmt::pmt_t& pdu);

    mutable gr::thread::mutex d_mutex; // guards the encoder, rebuilt by set_rv
    ::mimo_gpu::transport_block_encoder d_encoder;
    std::vector<uint8_t> d_coded;
};

} // namespace mimo_gpu
} // namespace gr

#endif
