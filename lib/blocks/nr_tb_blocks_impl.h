/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// The NR LDPC transport block PDU blocks: encoder and decoder (with HARQ
// soft buffers per process) around the core chain (mimo_gpu/nr_transport_block.h).
#ifndef INCLUDED_MIMO_GPU_NR_TB_BLOCKS_IMPL_H
#define INCLUDED_MIMO_GPU_NR_TB_BLOCKS_IMPL_H

#include <gnuradio/mimo_gpu/nr_tb_decoder.h>
#include <gnuradio/mimo_gpu/nr_tb_encoder.h>
#include <mimo_gpu/nr_transport_block.h>

#include <gnuradio/thread/thread.h>

#include <atomic>
#include <map>
#include <memory>
#include <vector>

namespace gr {
namespace mimo_gpu {

class nr_tb_encoder_impl : public nr_tb_encoder
{
public:
    explicit nr_tb_encoder_impl(const ::mimo_gpu::nr_transport_block_format& format);
    void set_rv(int rv) override;
    int rv() const override;
    int code_blocks() const override;
    int lifting_size() const override;

private:
    void handle_pdu(const pmt::pmt_t& pdu);
    mutable gr::thread::mutex d_mutex;
    std::unique_ptr<::mimo_gpu::nr_transport_block_encoder> d_encoder;
    std::vector<uint8_t> d_coded;
};

class nr_tb_decoder_impl : public nr_tb_decoder
{
public:
    nr_tb_decoder_impl(const ::mimo_gpu::nr_transport_block_format& format,
                       const ::mimo_gpu::ldpc_decoder_config& config,
                       ::mimo_gpu::backend requested,
                       int max_blocks);
    void set_rv(int rv) override;
    int rv() const override;
    std::string active_backend() const override;
    uint64_t blocks() const override { return d_blocks; }
    uint64_t crc_failures() const override { return d_crc_failures; }
    int harq_processes() const override;

private:
    /// One waiting PDU's parts, checked.
    struct pending {
        pmt::pmt_t meta;
        const float* llr;
        int rv;
        long process; ///< -1: none
        bool new_data;
    };
    void handle_pdu(const pmt::pmt_t& pdu);
    bool parse(const pmt::pmt_t& pdu, pending& p);
    /// Decodes PDUs of one rv (soft: the process's buffer, or null) and
    /// publishes them; returns each one's CRC verdict (empty: not decoded).
    std::vector<bool> decode_and_publish(const std::vector<pending>& batch, float* soft);

    mutable gr::thread::mutex d_mutex;
    ::mimo_gpu::nr_transport_block_decoder d_decoder;
    int d_rv;
    size_t d_max_blocks;
    std::map<long, std::vector<float>> d_soft; ///< per HARQ process
    std::vector<pmt::pmt_t> d_held;            ///< the PDUs behind the pointers
    std::vector<float> d_llr;
    std::vector<uint8_t> d_bits;
    std::atomic<uint64_t> d_blocks{ 0 }, d_crc_failures{ 0 };
};

} // namespace mimo_gpu
} // namespace gr

#endif
