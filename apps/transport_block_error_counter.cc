#include "transport_block_error_counter.h"

#include <gnuradio/io_signature.h>

#include <algorithm>

namespace mimo_gpu_apps {

// ---- transmitted_blocks --------------------------------------------------------

void transmitted_blocks::append(const uint8_t* bits, size_t count)
{
    std::lock_guard<std::mutex> lock(m_mutex);
    m_bits.insert(m_bits.end(), bits, bits + count);
}

size_t transmitted_blocks::size() const
{
    std::lock_guard<std::mutex> lock(m_mutex);
    return m_bits.size() / size_t(m_A);
}

long long transmitted_blocks::errors(size_t index, const uint8_t* bits) const
{
    std::lock_guard<std::mutex> lock(m_mutex);
    if ((index + 1) * size_t(m_A) > m_bits.size())
        return -1;
    const uint8_t* sent = m_bits.data() + index * size_t(m_A);
    long long errors = 0;
    for (int i = 0; i < m_A; ++i)
        errors += (sent[i] != 0) != (bits[i] != 0);
    return errors;
}

const uint8_t* transport_block_bits(const pmt::pmt_t& pdu, int A, gr::logger& logger)
{
    if (!pmt::is_pair(pdu) || !pmt::is_u8vector(pmt::cdr(pdu)) ||
        pmt::length(pmt::cdr(pdu)) != size_t(A)) {
        logger.error(
            "expected a PDU of {} bits (u8vector); got something else, not counted", A);
        return nullptr;
    }
    size_t n = 0;
    return pmt::u8vector_elements(pmt::cdr(pdu), n);
}

// ---- transmitted_block_tap -----------------------------------------------------

transmitted_block_tap::sptr
transmitted_block_tap::make(std::shared_ptr<transmitted_blocks> blocks)
{
    return gnuradio::make_block_sptr<transmitted_block_tap>(std::move(blocks));
}

transmitted_block_tap::transmitted_block_tap(std::shared_ptr<transmitted_blocks> blocks)
    : gr::sync_block("transmitted_block_tap",
                     gr::io_signature::make(1, 1, sizeof(uint8_t)),
                     gr::io_signature::make(1, 1, sizeof(uint8_t))),
      m_blocks(std::move(blocks))
{
}

int transmitted_block_tap::work(int noutput_items,
                                gr_vector_const_void_star& input_items,
                                gr_vector_void_star& output_items)
{
    const auto* in = static_cast<const uint8_t*>(input_items[0]);
    std::copy(in, in + noutput_items, static_cast<uint8_t*>(output_items[0]));
    m_blocks->append(in, size_t(noutput_items));
    return noutput_items;
}

// ---- transport_block_error_counter -----------------------------------------------

transport_block_error_counter::sptr
transport_block_error_counter::make(std::shared_ptr<const transmitted_blocks> sent)
{
    return gnuradio::make_block_sptr<transport_block_error_counter>(std::move(sent));
}

transport_block_error_counter::transport_block_error_counter(
    std::shared_ptr<const transmitted_blocks> sent)
    : gr::block("transport_block_error_counter",
                gr::io_signature::make(0, 0, 0),
                gr::io_signature::make(0, 0, 0)),
      m_sent(std::move(sent))
{
    message_port_register_in(pmt::mp("in"));
    set_msg_handler(pmt::mp("in"), [this](const pmt::pmt_t& pdu) { on_decoded(pdu); });
}

transport_block_error_counter::counts transport_block_error_counter::snapshot() const
{
    std::lock_guard<std::mutex> lock(m_mutex);
    compare();
    return m_counts;
}

void transport_block_error_counter::on_decoded(const pmt::pmt_t& pdu)
{
    std::lock_guard<std::mutex> lock(m_mutex);
    const uint8_t* bits = transport_block_bits(pdu, m_sent->A(), *d_logger);
    const pmt::pmt_t meta = bits ? pmt::car(pdu) : pmt::PMT_NIL;
    const pmt::pmt_t crc = pmt::is_dict(meta)
                               ? pmt::dict_ref(meta, pmt::mp("crc_ok"), pmt::PMT_NIL)
                               : pmt::PMT_NIL;
    if (bits && !pmt::is_bool(crc))
        d_logger->error("a PDU without a boolean crc_ok in its meta (not from "
                        "tb_decoder?); not counted");
    if (!bits || !pmt::is_bool(crc)) {
        ++m_counts.bad_pdus;
        return;
    }
    const pmt::pmt_t iterations =
        pmt::dict_ref(meta, pmt::mp("iterations"), pmt::from_long(0));
    m_waiting.push_back({ std::vector<uint8_t>(bits, bits + m_sent->A()),
                          pmt::to_bool(crc),
                          pmt::is_integer(iterations) ? pmt::to_long(iterations) : 0 });
    compare();
}

void transport_block_error_counter::compare() const
{
    while (!m_waiting.empty()) {
        const decoded& got = m_waiting.front();
        const long long errors = m_sent->errors(m_counts.blocks, got.bits.data());
        if (errors < 0)
            return; // its transmitted block is not recorded yet
        ++m_counts.blocks;
        m_counts.bits += uint64_t(m_sent->A());
        m_counts.bit_errors += uint64_t(errors);
        m_counts.iterations += uint64_t(got.iterations);
        if (!got.crc_ok)
            ++m_counts.crc_failures;
        else if (errors)
            ++m_counts.undetected_errors;
        if (!got.crc_ok || errors)
            ++m_counts.block_errors;
        m_waiting.pop_front();
    }
}

decoded_block_pdus::sptr decoded_block_pdus::make(int A)
{
    return std::make_shared<decoded_block_pdus>(A);
}

decoded_block_pdus::decoded_block_pdus(int A)
    : gr::sync_block("decoded_block_pdus",
                     gr::io_signature::make(1, 1, A),
                     gr::io_signature::make(0, 0, 0)),
      m_A(A)
{
    message_port_register_out(pmt::mp("out"));
}

int decoded_block_pdus::work(int noutput_items,
                             gr_vector_const_void_star& input_items,
                             gr_vector_void_star&)
{
    const auto bits = static_cast<const uint8_t*>(input_items[0]);
    std::vector<gr::tag_t> tags;
    get_tags_in_window(tags, 0, 0, noutput_items);
    for (int i = 0; i < noutput_items; ++i) {
        bool crc_ok = true;
        long passes = 0;
        for (const auto& t : tags)
            if (t.offset == nitems_read(0) + uint64_t(i)) {
                if (pmt::eq(t.key, pmt::mp("crc_ok")))
                    crc_ok = pmt::to_bool(t.value);
                else if (pmt::eq(t.key, pmt::mp("idd_iterations")))
                    passes = pmt::to_long(t.value);
            }
        pmt::pmt_t meta = pmt::make_dict();
        meta = pmt::dict_add(meta, pmt::mp("crc_ok"), pmt::from_bool(crc_ok));
        meta = pmt::dict_add(meta, pmt::mp("iterations"), pmt::from_long(passes));
        message_port_pub(
            pmt::mp("out"),
            pmt::cons(meta, pmt::init_u8vector(size_t(m_A), bits + size_t(i) * m_A)));
    }
    return noutput_items;
}

} // namespace mimo_gpu_apps
