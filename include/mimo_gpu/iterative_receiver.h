// Iterative detection and decoding (DESIGN.md, "Priors and extrinsics"): a
// detector that takes a-priori LLRs and a transport-block decoder (LTE turbo
// or NR LDPC),
// exchanging extrinsic LLRs for a number of outer iterations, stopping early
// once every transport block passes its CRC.
#pragma once

#include <mimo_gpu/detector.h>
#include <mimo_gpu/lte_turbo_decoder.h>
#include <mimo_gpu/nr_transport_block.h>
#include <mimo_gpu/transport_block_code.h>

#include <memory>
#include <string>
#include <vector>

namespace mimo_gpu {

struct iterative_receiver_config {
    int outer_iterations = 3; ///< detector-decoder passes, 1..16 (1: no feedback)
    /// On CUDA (the decoder, and a detector with a device path): the loop on
    /// device memory, H and y copied up once per call, LLRs and priors never
    /// leave the GPU, the bits come down once per pass. false: host memory
    /// between the passes (for comparison; the results are the same).
    bool device_loop = true;
    void validate() const; ///< throws std::invalid_argument
};

/// One transport block's outcome.
struct idd_result {
    transport_block_result decoded; ///< of the last pass it took part in
    int outer_iterations = 0;       ///< passes until its CRC passed (or all of them)
};

class iterative_receiver
{
public:
    /// The detector must take a-priori LLRs (capabilities().accepts_priors),
    /// else std::invalid_argument; its G = the format's G LLRs per transport
    /// block must be whole problems (G a multiple of nt * Q).
    iterative_receiver(std::unique_ptr<detector> det,
                       const transport_block_format& format,
                       const turbo_decoder_config& decoder,
                       const iterative_receiver_config& config = {},
                       backend requested = backend::automatic);
    /// The same with NR transport blocks and the LDPC decoder.
    iterative_receiver(std::unique_ptr<detector> det,
                       const nr_transport_block_format& format,
                       const ldpc_decoder_config& decoder,
                       const iterative_receiver_config& config = {},
                       backend requested = backend::automatic);
    /// With a decoder of either code (make_transport_block_code_decoder).
    iterative_receiver(std::unique_ptr<detector> det,
                       std::unique_ptr<transport_block_code_decoder> decoder,
                       const iterative_receiver_config& config = {});
    int problems_per_block() const { return m_problems_per_block; }
    /// The transport blocks: A information bits on G coded bits.
    int A() const;
    int G() const;
    /// "turbo" or "ldpc".
    std::string code() const;
    int outer_iterations() const { return m_config.outer_iterations; }
    /// From the next receive() on; 1..16, else std::invalid_argument.
    void set_outer_iterations(int outer_iterations);
    detector& detector_used() { return *m_detector; }

    /// Host memory: `count` transport blocks whose problems are in `in` (its
    /// channels * S problems = count * problems_per_block(), in order; in.priors
    /// must be null); a: count * A decoded bits. Each pass detects with the
    /// decoder's extrinsics as priors (none on the first) and decodes the
    /// detector's extrinsics; it stops when every block has passed its CRC.
    std::vector<idd_result> receive(const detector_input& in, size_t count, uint8_t* a);
    /// Whether receive() runs the loop on device memory (see device_loop).
    bool loops_on_device() const;

    ~iterative_receiver();
    iterative_receiver(iterative_receiver&&) noexcept;
    iterative_receiver& operator=(iterative_receiver&&) noexcept;

private:
    struct device_state; // iterative_receiver.cc
    void detect_and_decode_on_host(const detector_input& in, size_t count, int pass);
    void detect_and_decode_on_device(const detector_input& in, size_t count, int pass);
    /// The blocks of a pass whose CRC had not passed before take its outcome
    /// and bits; true when every block has passed.
    bool record_pass(int pass,
                     const std::vector<transport_block_result>& decoded,
                     uint8_t* a,
                     std::vector<idd_result>& results) const;

    std::unique_ptr<detector> m_detector;
    std::unique_ptr<transport_block_code_decoder> m_decoder;
    iterative_receiver_config m_config;
    int m_problems_per_block;
    std::vector<float> m_llr, m_priors;
    std::vector<uint8_t> m_bits;
    std::vector<transport_block_result> m_decoded; ///< the last pass's
    std::unique_ptr<device_state> m_device;
};

} // namespace mimo_gpu
