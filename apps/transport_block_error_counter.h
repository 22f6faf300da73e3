// transport_block_error_counter: the sink of mimo_gpu_simulate's coded link. A
// message-only GNU Radio block that compares the decoded transport blocks
// (port "in": tb_decoder's PDUs, whose meta holds "crc_ok" and "iterations",
// or decoded_block_pdus' from an idd_receiver)
// in order with the transmitted ones, and counts bit errors and block errors.
//
// The transmitted blocks reach it through a transmitted_blocks list, which a
// transmitted_block_tap (a pass-through stream block on the bits that enter the
// transport block PDUs) fills. They cannot come over a second message port: a
// block whose message inputs have several upstream blocks is stopped by GNU
// Radio 3.10 when the first of them finishes (block::system_handler), and the
// transmitter side finishes long before the decoder.
//
// A block error is a transport block whose CRC24A failed or whose decoded bits
// differ from the transmitted ones (an undetected error: the CRC passed on wrong
// bits).
#pragma once

#include <gnuradio/block.h>
#include <gnuradio/logger.h>
#include <gnuradio/sync_block.h>
#include <pmt/pmt.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

namespace mimo_gpu_apps {

/// The transmitted transport blocks of one flowgraph, in order (thread-safe).
class transmitted_blocks
{
public:
    explicit transmitted_blocks(int A) : m_A(A) {}
    int A() const { return m_A; }
    void append(const uint8_t* bits, size_t count);
    size_t size() const; ///< whole transport blocks recorded
    /// Bits of `bits` (A of them) that differ from transmitted block `index`;
    /// -1 if that block has not been recorded yet.
    long long errors(size_t index, const uint8_t* bits) const;

private:
    const int m_A;
    mutable std::mutex m_mutex;
    std::vector<uint8_t> m_bits; // block i at [i*A, (i+1)*A)
};

/// The A bits of a PDU (meta . u8vector of A bytes), or nullptr after logging why not.
const uint8_t* transport_block_bits(const pmt::pmt_t& pdu, int A, gr::logger& logger);

/// A pass-through byte stream block that appends every bit it passes to a
/// transmitted_blocks list (put it on the transmitted bits before they become
/// transport block PDUs).
class transmitted_block_tap : public gr::sync_block
{
public:
    using sptr = std::shared_ptr<transmitted_block_tap>;
    static sptr make(std::shared_ptr<transmitted_blocks> blocks);
    explicit transmitted_block_tap(std::shared_ptr<transmitted_blocks> blocks);
    int work(int noutput_items,
             gr_vector_const_void_star& input_items,
             gr_vector_void_star& output_items) override;

private:
    std::shared_ptr<transmitted_blocks> m_blocks;
};

/// The idd_receiver block's output as the counter's input: each item (A
/// decoded bits) becomes a PDU on port "out" whose meta holds "crc_ok" (False
/// where a crc_ok tag says so) and "iterations" (the item's idd_iterations tag:
/// the detector-decoder passes it took).
class decoded_block_pdus : public gr::sync_block
{
public:
    using sptr = std::shared_ptr<decoded_block_pdus>;
    static sptr make(int A);
    explicit decoded_block_pdus(int A);
    int work(int noutput_items,
             gr_vector_const_void_star& input_items,
             gr_vector_void_star& output_items) override;

private:
    const int m_A;
};

class transport_block_error_counter : public gr::block
{
public:
    using sptr = std::shared_ptr<transport_block_error_counter>;
    static sptr make(std::shared_ptr<const transmitted_blocks> sent);
    explicit transport_block_error_counter(
        std::shared_ptr<const transmitted_blocks> sent);

    struct counts {
        uint64_t blocks =
            0; ///< decoded transport blocks compared with the transmitted ones
        uint64_t block_errors = 0;      ///< CRC failed or bits wrong
        uint64_t crc_failures = 0;      ///< tb_decoder reported crc_ok = false
        uint64_t undetected_errors = 0; ///< crc_ok = true, but bits wrong
        uint64_t bits = 0, bit_errors = 0;
        uint64_t iterations = 0; ///< sum of the per-block "iterations" meta
        uint64_t bad_pdus = 0;   ///< PDUs of the wrong length or type (logged)
        double ber() const { return bits ? double(bit_errors) / double(bits) : 0.0; }
        double bler() const
        {
            return blocks ? double(block_errors) / double(blocks) : 0.0;
        }
        double mean_iterations() const
        {
            return blocks ? double(iterations) / double(blocks) : 0.0;
        }
    };
    /// Thread-safe snapshot (the flowgraph may be running); compares first any
    /// decoded block whose transmitted block was recorded since.
    counts snapshot() const;

private:
    void on_decoded(const pmt::pmt_t& pdu);
    void compare() const; // with m_mutex held

    std::shared_ptr<const transmitted_blocks> m_sent;
    mutable std::mutex m_mutex;
    struct decoded {
        std::vector<uint8_t> bits;
        bool crc_ok;
        long iterations;
    };
    mutable std::deque<decoded>
        m_waiting; // decoded before their transmitted block was recorded
    mutable counts m_counts;
};

} // namespace mimo_gpu_apps
