// pdu_stream_source: emits the bytes of the u8vector PDUs that arrive at its
// message port "in" as a byte stream, in arrival order, with nothing between
// them. mimo_gpu_simulate's coded link uses it after tb_encoder instead of
// gr::pdu::pdu_to_tagged_stream, which GNU Radio 3.10 stops as soon as its
// upstream has finished and one call cannot place a whole PDU in a full output
// buffer, dropping the PDUs still queued (seen with slow detectors downstream).
// This block ends only once its upstream has finished and every byte has gone.
#pragma once

#include <gnuradio/sync_block.h>
#include <pmt/pmt.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>

namespace mimo_gpu_apps {

class pdu_stream_source : public gr::sync_block
{
public:
    using sptr = std::shared_ptr<pdu_stream_source>;
    /// pdu_length: the bytes of every PDU (another length is logged and dropped).
    static sptr make(int pdu_length);
    explicit pdu_stream_source(int pdu_length);
    uint64_t bad_pdus() const;

    int work(int noutput_items,
             gr_vector_const_void_star& input_items,
             gr_vector_void_star& output_items) override;

private:
    void append(const pmt::pmt_t& pdu); // with m_mutex held

    const int m_length;
    mutable std::mutex m_mutex;
    std::deque<uint8_t> m_bytes;
    uint64_t m_bad_pdus = 0;
};

} // namespace mimo_gpu_apps
