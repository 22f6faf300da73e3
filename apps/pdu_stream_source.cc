#include "pdu_stream_source.h"

#include <gnuradio/io_signature.h>

#include <algorithm>

namespace mimo_gpu_apps {

namespace {
const pmt::pmt_t k_in = pmt::mp("in");
}

pdu_stream_source::sptr pdu_stream_source::make(int pdu_length)
{
    return gnuradio::make_block_sptr<pdu_stream_source>(pdu_length);
}

pdu_stream_source::pdu_stream_source(int pdu_length)
    : gr::sync_block("pdu_stream_source",
                     gr::io_signature::make(0, 0, 0),
                     gr::io_signature::make(1, 1, sizeof(uint8_t))),
      m_length(pdu_length)
{
    message_port_register_in(k_in);
    // A handler, so the scheduler never prunes the queue ([DEFAULT] max_messages
    // applies to ports without one).
    set_msg_handler(k_in, [this](const pmt::pmt_t& pdu) {
        std::lock_guard<std::mutex> lock(m_mutex);
        append(pdu);
    });
}

uint64_t pdu_stream_source::bad_pdus() const
{
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_bad_pdus;
}

void pdu_stream_source::append(const pmt::pmt_t& pdu)
{
    if (!pmt::is_pair(pdu) || !pmt::is_u8vector(pmt::cdr(pdu)) ||
        pmt::length(pmt::cdr(pdu)) != size_t(m_length)) {
        d_logger->error("expected a PDU of {} bytes (u8vector); dropped", m_length);
        ++m_bad_pdus;
        return;
    }
    size_t n = 0;
    const uint8_t* p = pmt::u8vector_elements(pmt::cdr(pdu), n);
    m_bytes.insert(m_bytes.end(), p, p + n);
}

int pdu_stream_source::work(int noutput_items,
                            gr_vector_const_void_star&,
                            gr_vector_void_star& output_items)
{
    std::lock_guard<std::mutex> lock(m_mutex);
    // PDUs queued but not yet handed to the handler (the scheduler dispatches
    // them between calls; after the upstream's "done" one may still wait here).
    while (m_bytes.size() < size_t(noutput_items)) {
        pmt::pmt_t pdu = delete_head_nowait(k_in);
        if (!pdu)
            break;
        append(pdu);
    }
    // 0 items: nothing queued; the scheduler waits for messages, or ends the
    // block once its upstream has finished (everything has been emitted then).
    const int n = int(std::min<size_t>(m_bytes.size(), size_t(noutput_items)));
    std::copy_n(m_bytes.begin(), n, static_cast<uint8_t*>(output_items[0]));
    m_bytes.erase(m_bytes.begin(), m_bytes.begin() + n);
    return n;
}

} // namespace mimo_gpu_apps
