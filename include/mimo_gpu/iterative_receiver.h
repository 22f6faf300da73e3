// Iterative detection and decoding (DESIGN.md, "Priors and extrinsics"): a
// detector that takes a-priori LLRs and the LTE transport-block decoder,
// exchanging extrinsic LLRs for a number of outer iterations, stopping early
// once every transport block passes its CRC.
#pragma once

#include <mimo_gpu/detector.h>
#include <mimo_gpu/lte_turbo_decoder.h>

#include <memory>
#include <vector>

namespace mimo_gpu {

struct iterative_receiver_config {
    int outer_iterations = 3; ///< detector-decoder passes, 1..16 (1: no feedback)
    void validate() const;    ///< throws std::invalid_argument
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

    int problems_per_block() const { return m_problems_per_block; }
    const transport_block_format& format() const { return m_decoder.format(); }
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

private:
    std::unique_ptr<detector> m_detector;
    transport_block_decoder m_decoder;
    iterative_receiver_config m_config;
    int m_problems_per_block;
    std::vector<float> m_llr, m_priors;
    std::vector<uint8_t> m_bits;
};

} // namespace mimo_gpu
