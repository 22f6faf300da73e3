/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#ifndef INCLUDED_MIMO_GPU_TB_DECODER_IMPL_H
#define INCLUDED_MIMO_GPU_TB_DECODER_IMPL_H

#include <gnuradio/mimo_gpu/tb_decoder.h>
#include <gnuradio/thread/thread.h>
#include <mimo_gpu/lte_turbo_decoder.h>

#include <memory>

namespace gr {
namespace mimo_gpu {

class tb_decoder_impl : public tb_decoder
{
public:
    tb_decoder_impl(int A,
                    int G,
                    int Qm,
                    int NL,
                    int rv,
                    const std::string& algorithm,
                    int iterations,
                    double extrinsic_scale,
                    int window,
                    const std::string& backend,
                    int max_blocks);

    void set_rv(int rv) override;
    int rv() const override;
    void set_iterations(int iterations) override;
    int iterations() const override;
    void set_extrinsic_scale(double extrinsic_scale) override;
    double extrinsic_scale() const override;
    std::string active_backend() const override;

private:
    /// Decodes `pdu` and every PDU queued behind it (up to max_blocks) in one call.
    void handle_pdu(const pmt::pmt_t& pdu);
    /// Rebuilds the core decoder (under d_mutex).
    void rebuild(const ::mimo_gpu::transport_block_format& format,
                 const ::mimo_gpu::turbo_decoder_config& config);

    const ::mimo_gpu::backend d_backend;
    const size_t d_max_blocks;
    mutable gr::thread::mutex d_mutex; // guards the decoder, rebuilt by the setters
    ::mimo_gpu::turbo_decoder_config d_config;
    std::unique_ptr<::mimo_gpu::transport_block_decoder> d_decoder;
    std::vector<pmt::pmt_t> d_meta; // of the PDUs in the batch
    std::vector<float> d_llr;       // their LLRs, back to back
    std::vector<uint8_t> d_bits;
};

} // namespace mimo_gpu
} // namespace gr

#endif
