/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "nr_tb_blocks_impl.h"
#include "plumbing/block_parameters.h"
#include "plumbing/transport_block_pdu.h"

#include <gnuradio/io_signature.h>

#include <algorithm>
#include <exception>
#include <stdexcept>
#include <string>

namespace gr {
namespace mimo_gpu {

namespace {

::mimo_gpu::ldpc_decoder_config ldpc_config_of(const std::string& algorithm,
                                               int iterations)
{
    ::mimo_gpu::ldpc_decoder_config c;
    c.algorithm = ::mimo_gpu::ldpc_algorithm_from_string(algorithm);
    c.iterations = iterations;
    c.validate();
    return c;
}

void check_rv(int rv)
{
    if (rv < 0 || rv > 3)
        throw std::invalid_argument("rv must be 0..3, got " + std::to_string(rv));
}

} // namespace

// ---- encoder --------------------------------------------------------------

nr_tb_encoder::sptr
nr_tb_encoder::make(int A, int G, int Qm, int NL, int rv, int base_graph)
{
    return gnuradio::make_block_sptr<nr_tb_encoder_impl>(
        nr_transport_block_format_of(A, G, Qm, NL, rv, base_graph));
}

nr_tb_encoder_impl::nr_tb_encoder_impl(
    const ::mimo_gpu::nr_transport_block_format& format)
    : gr::block("nr_tb_encoder",
                gr::io_signature::make(0, 0, 0),
                gr::io_signature::make(0, 0, 0)),
      d_encoder(std::make_unique<::mimo_gpu::nr_transport_block_encoder>(format))
{
    message_port_register_in(k_pdu_in_port);
    message_port_register_out(k_pdu_out_port);
    set_msg_handler(k_pdu_in_port, [this](const pmt::pmt_t& pdu) { handle_pdu(pdu); });
}

void nr_tb_encoder_impl::set_rv(int rv)
{
    check_rv(rv);
    gr::thread::scoped_lock lock(d_mutex);
    auto format = d_encoder->format();
    format.rv = rv;
    d_encoder = std::make_unique<::mimo_gpu::nr_transport_block_encoder>(format);
}

int nr_tb_encoder_impl::rv() const
{
    gr::thread::scoped_lock lock(d_mutex);
    return d_encoder->format().rv;
}

int nr_tb_encoder_impl::code_blocks() const
{
    gr::thread::scoped_lock lock(d_mutex);
    return d_encoder->segmentation().C;
}

int nr_tb_encoder_impl::lifting_size() const
{
    gr::thread::scoped_lock lock(d_mutex);
    return d_encoder->segmentation().Zc;
}

void nr_tb_encoder_impl::handle_pdu(const pmt::pmt_t& pdu)
{
    gr::thread::scoped_lock lock(d_mutex);
    const auto& f = d_encoder->format();
    const uint8_t* bits = pdu_bits(pdu, f.A, *d_logger);
    if (!bits)
        return;
    d_coded.resize(size_t(f.G));
    d_encoder->encode(bits, d_coded.data());
    message_port_pub(k_pdu_out_port,
                     pmt::cons(pmt::car(pdu), pmt::init_u8vector(size_t(f.G), d_coded)));
}

// ---- decoder --------------------------------------------------------------

nr_tb_decoder::sptr nr_tb_decoder::make(int A,
                                        int G,
                                        int Qm,
                                        int NL,
                                        int rv,
                                        int base_graph,
                                        const std::string& algorithm,
                                        int iterations,
                                        const std::string& backend,
                                        int max_blocks)
{
    return gnuradio::make_block_sptr<nr_tb_decoder_impl>(
        nr_transport_block_format_of(A, G, Qm, NL, rv, base_graph),
        ldpc_config_of(algorithm, iterations),
        ::mimo_gpu::backend_from_string(backend),
        int(checked_max_batch(max_blocks, "max_blocks")));
}

nr_tb_decoder_impl::nr_tb_decoder_impl(
    const ::mimo_gpu::nr_transport_block_format& format,
    const ::mimo_gpu::ldpc_decoder_config& config,
    ::mimo_gpu::backend requested,
    int max_blocks)
    : gr::block("nr_tb_decoder",
                gr::io_signature::make(0, 0, 0),
                gr::io_signature::make(0, 0, 0)),
      d_decoder(format, config, requested),
      d_rv(format.rv),
      d_max_blocks(size_t(max_blocks))
{
    message_port_register_in(k_pdu_in_port);
    message_port_register_out(k_pdu_out_port);
    set_msg_handler(k_pdu_in_port, [this](const pmt::pmt_t& pdu) { handle_pdu(pdu); });
    const auto& s = d_decoder.segmentation();
    d_logger->info("A {} -> G {}: BG{}, {} code block(s) of Zc {}, on {}",
                   format.A,
                   format.G,
                   s.base_graph,
                   s.C,
                   s.Zc,
                   active_backend());
}

void nr_tb_decoder_impl::set_rv(int rv)
{
    check_rv(rv);
    gr::thread::scoped_lock lock(d_mutex);
    d_rv = rv;
}

int nr_tb_decoder_impl::rv() const
{
    gr::thread::scoped_lock lock(d_mutex);
    return d_rv;
}

std::string nr_tb_decoder_impl::active_backend() const
{
    return ::mimo_gpu::to_string(d_decoder.active_backend());
}

int nr_tb_decoder_impl::harq_processes() const
{
    gr::thread::scoped_lock lock(d_mutex);
    return int(d_soft.size());
}

bool nr_tb_decoder_impl::parse(const pmt::pmt_t& pdu, pending& p)
{
    const int G = d_decoder.format().G;
    p.llr = pdu_llrs(pdu, G, *d_logger);
    if (!p.llr)
        return false;
    p.meta = pmt::is_dict(pmt::car(pdu)) ? pmt::car(pdu) : pmt::make_dict();
    p.rv = d_rv;
    p.process = -1;
    p.new_data = false;
    const pmt::pmt_t rv = pmt::dict_ref(p.meta, pmt::mp("rv"), pmt::PMT_NIL);
    if (rv != pmt::PMT_NIL) {
        if (!pmt::is_integer(rv) || pmt::to_long(rv) < 0 || pmt::to_long(rv) > 3) {
            d_logger->error("a PDU whose \"rv\" is not 0..3; dropped");
            return false;
        }
        p.rv = int(pmt::to_long(rv));
    }
    const pmt::pmt_t process =
        pmt::dict_ref(p.meta, pmt::mp("harq_process"), pmt::PMT_NIL);
    if (process != pmt::PMT_NIL) {
        if (!pmt::is_integer(process) || pmt::to_long(process) < 0) {
            d_logger->error(
                "a PDU whose \"harq_process\" is not an integer >= 0; dropped");
            return false;
        }
        p.process = pmt::to_long(process);
        const pmt::pmt_t fresh = pmt::dict_ref(p.meta, pmt::mp("new_data"), pmt::PMT_F);
        p.new_data = pmt::is_bool(fresh) && pmt::to_bool(fresh);
    }
    return true;
}

std::vector<bool>
nr_tb_decoder_impl::decode_and_publish(const std::vector<pending>& batch, float* soft)
{
    const auto& f = d_decoder.format();
    const size_t count = batch.size(), G = size_t(f.G), A = size_t(f.A);
    d_llr.resize(count * G);
    for (size_t t = 0; t < count; ++t)
        std::copy_n(batch[t].llr, G, d_llr.begin() + t * G);
    d_bits.resize(count * A);
    d_decoder.set_redundancy_version(batch.front().rv);
    std::vector<::mimo_gpu::transport_block_result> results;
    try {
        results = d_decoder.decode(d_llr.data(), count, d_bits.data(), soft);
    } catch (const std::exception& e) {
        d_logger->error(
            "{} transport block(s) not decoded: {}; dropped", count, e.what());
        return {};
    }
    std::vector<bool> passed(count);
    for (size_t t = 0; t < count; ++t) {
        const auto& r = results[t];
        pmt::pmt_t meta = batch[t].meta;
        meta = pmt::dict_add(meta, pmt::mp("crc_ok"), pmt::from_bool(r.crc_ok));
        meta = pmt::dict_add(meta, pmt::mp("code_blocks"), pmt::from_long(r.code_blocks));
        meta = pmt::dict_add(
            meta, pmt::mp("code_blocks_crc_ok"), pmt::from_long(r.code_blocks_crc_ok));
        meta = pmt::dict_add(meta,
                             pmt::mp("code_blocks_no_information"),
                             pmt::from_long(r.code_blocks_no_information));
        meta =
            pmt::dict_add(meta, pmt::mp("iterations"), pmt::from_long(r.max_iterations));
        ++d_blocks;
        d_crc_failures += r.crc_ok ? 0 : 1;
        passed[t] = r.crc_ok;
        message_port_pub(k_pdu_out_port,
                         pmt::cons(meta, pmt::init_u8vector(A, d_bits.data() + t * A)));
    }
    return passed;
}

void nr_tb_decoder_impl::handle_pdu(const pmt::pmt_t& first_pdu)
{
    gr::thread::scoped_lock lock(d_mutex);
    // This PDU and those queued behind it, in order: a HARQ PDU alone (with its
    // process's buffer), the others batched while their rv stays the same.
    std::vector<pending> batch;
    d_held.clear();
    auto flush = [&] {
        if (!batch.empty())
            decode_and_publish(batch, nullptr);
        batch.clear();
    };
    size_t taken = 0;
    for (pmt::pmt_t pdu = first_pdu; pdu && taken < d_max_blocks;
         pdu = ++taken < d_max_blocks ? delete_head_nowait(k_pdu_in_port) : nullptr) {
        d_held.push_back(pdu); // keeps the LLRs alive
        pending p;
        if (!parse(pdu, p))
            continue;
        if (p.process >= 0) {
            flush();
            std::vector<float>& buffer = d_soft[p.process];
            if (p.new_data || buffer.empty())
                buffer.assign(d_decoder.soft_buffer_size(), 0.0f);
            const std::vector<bool> passed = decode_and_publish({ p }, buffer.data());
            if (!passed.empty() && passed[0]) // the process is done
                d_soft.erase(p.process);
            continue;
        }
        if (!batch.empty() && batch.front().rv != p.rv)
            flush();
        batch.push_back(p);
    }
    flush();
}

} // namespace mimo_gpu
} // namespace gr
