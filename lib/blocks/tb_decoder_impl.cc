/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "plumbing/block_parameters.h"
#include "plumbing/transport_block_pdu.h"
#include "tb_decoder_impl.h"
#include <mimo_gpu/turbo_parameters.h>

#include <gnuradio/io_signature.h>

#include <exception>

namespace gr {
namespace mimo_gpu {

tb_decoder::sptr tb_decoder::make(int A,
                                  int G,
                                  int Qm,
                                  int NL,
                                  int rv,
                                  const std::string& algorithm,
                                  int iterations,
                                  double extrinsic_scale,
                                  int window,
                                  const std::string& backend,
                                  int max_blocks)
{
    return gnuradio::make_block_sptr<tb_decoder_impl>(A,
                                                      G,
                                                      Qm,
                                                      NL,
                                                      rv,
                                                      algorithm,
                                                      iterations,
                                                      extrinsic_scale,
                                                      window,
                                                      backend,
                                                      max_blocks);
}

tb_decoder_impl::tb_decoder_impl(int A,
                                 int G,
                                 int Qm,
                                 int NL,
                                 int rv,
                                 const std::string& algorithm,
                                 int iterations,
                                 double extrinsic_scale,
                                 int window,
                                 const std::string& backend,
                                 int max_blocks)
    : gr::block(
          "tb_decoder", gr::io_signature::make(0, 0, 0), gr::io_signature::make(0, 0, 0)),
      d_backend(::mimo_gpu::backend_from_string(backend)),
      d_max_blocks(checked_max_batch(max_blocks, "max_blocks")),
      d_config(::mimo_gpu::turbo_config(algorithm, iterations, extrinsic_scale, window))
{
    rebuild(transport_block_format_of(A, G, Qm, NL, rv), d_config);
    message_port_register_in(k_pdu_in_port);
    message_port_register_out(k_pdu_out_port);
    set_msg_handler(k_pdu_in_port, [this](const pmt::pmt_t& pdu) { handle_pdu(pdu); });
    const auto segmentation = d_decoder->format().segmentation();
    d_logger->info("A {} -> G {} ({} code block(s)), {} decoder, {} iterations, up to {} "
                   "transport blocks a call, on backend {}",
                   A,
                   G,
                   segmentation.C,
                   to_string(d_config.algorithm),
                   iterations,
                   d_max_blocks,
                   active_backend());
}

void tb_decoder_impl::rebuild(const ::mimo_gpu::transport_block_format& format,
                              const ::mimo_gpu::turbo_decoder_config& config)
{
    // Constructed first: a bad value throws and leaves the block as it was.
    auto decoder =
        std::make_unique<::mimo_gpu::transport_block_decoder>(format, config, d_backend);
    d_decoder = std::move(decoder);
    d_config = config;
}

void tb_decoder_impl::set_rv(int rv)
{
    gr::thread::scoped_lock lock(d_mutex);
    auto format = d_decoder->format();
    format.rv = rv;
    format.validate();
    rebuild(format, d_config);
}

int tb_decoder_impl::rv() const
{
    gr::thread::scoped_lock lock(d_mutex);
    return d_decoder->format().rv;
}

void tb_decoder_impl::set_iterations(int iterations)
{
    gr::thread::scoped_lock lock(d_mutex);
    auto config = d_config;
    config.iterations = iterations;
    config.validate();
    rebuild(d_decoder->format(), config);
}

int tb_decoder_impl::iterations() const
{
    gr::thread::scoped_lock lock(d_mutex);
    return d_config.iterations;
}

void tb_decoder_impl::set_extrinsic_scale(double extrinsic_scale)
{
    gr::thread::scoped_lock lock(d_mutex);
    auto config = d_config;
    config.extrinsic_scale = static_cast<float>(extrinsic_scale);
    config.validate();
    rebuild(d_decoder->format(), config);
}

double tb_decoder_impl::extrinsic_scale() const
{
    gr::thread::scoped_lock lock(d_mutex);
    return d_config.extrinsic_scale;
}

std::string tb_decoder_impl::active_backend() const
{
    gr::thread::scoped_lock lock(d_mutex);
    return ::mimo_gpu::to_string(d_decoder->active_backend());
}

void tb_decoder_impl::handle_pdu(const pmt::pmt_t& first_pdu)
{
    gr::thread::scoped_lock lock(d_mutex);
    const auto& format = d_decoder->format();
    d_meta.clear();
    d_llr.clear();
    // This PDU, then whatever queued up behind it while the last batch decoded.
    for (pmt::pmt_t pdu = first_pdu; pdu;) {
        if (const float* llr = pdu_llrs(pdu, format.G, *d_logger)) {
            d_meta.push_back(pmt::is_dict(pmt::car(pdu)) ? pmt::car(pdu)
                                                         : pmt::make_dict());
            d_llr.insert(d_llr.end(), llr, llr + format.G);
        }
        if (d_meta.size() >= d_max_blocks)
            break;
        pdu = delete_head_nowait(k_pdu_in_port);
    }
    if (d_meta.empty())
        return;

    const size_t count = d_meta.size();
    d_bits.resize(count * format.A);
    std::vector<::mimo_gpu::transport_block_result> results;
    try {
        results = d_decoder->decode(d_llr.data(), count, d_bits.data());
    } catch (const std::exception& e) {
        d_logger->error(
            "{} transport block(s) not decoded: {}; dropped", count, e.what());
        return;
    }
    for (size_t t = 0; t < count; ++t) {
        const auto& result = results[t];
        pmt::pmt_t meta = d_meta[t];
        meta = pmt::dict_add(meta, pmt::mp("crc_ok"), pmt::from_bool(result.crc_ok));
        meta = pmt::dict_add(
            meta, pmt::mp("code_blocks"), pmt::from_long(result.code_blocks));
        meta = pmt::dict_add(meta,
                             pmt::mp("code_blocks_crc_ok"),
                             pmt::from_long(result.code_blocks_crc_ok));
        meta = pmt::dict_add(meta,
                             pmt::mp("code_blocks_no_information"),
                             pmt::from_long(result.code_blocks_no_information));
        meta = pmt::dict_add(
            meta, pmt::mp("iterations"), pmt::from_long(result.max_iterations));
        message_port_pub(
            k_pdu_out_port,
            pmt::cons(meta, pmt::init_u8vector(format.A, d_bits.data() + t * format.A)));
    }
}

} // namespace mimo_gpu
} // namespace gr
