// Batches of transport blocks through a transport_block_code_decoder's device
// path with consecutive batches in flight at once (docs/flowgraphs.md, "The
// decoder's batches in flight"): each slot has its own decoder, stream and
// device buffers, so the host queues one batch while the GPU decodes the one
// before, and two batches' kernels share the GPU.
//
// submit() copies a batch's LLRs into its slot before it returns (the caller's
// memory may then be reused) and queues the decode; collect() waits for the
// oldest batch and copies its bits out. A batch the device path refuses
// (non-finite LLRs) is decoded again block by block through the host path,
// each refused block failed with zero bits and named in the result.
#pragma once

#include <mimo_gpu/transport_block_code.h>

#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace mimo_gpu {

/// Makes one decoder of a pipeline's slots (every call the same format).
using transport_block_decoder_factory =
    std::function<std::unique_ptr<transport_block_code_decoder>()>;

struct transport_block_refusal {
    size_t block = 0;   ///< index within its batch
    std::string reason; ///< the decoder's message
};

struct transport_block_batch {
    std::vector<transport_block_result> results;  ///< one per block
    std::vector<transport_block_refusal> refused; ///< failed, with zero bits
};

/// Host memory: count blocks one at a time through decoder.decode(); a block it
/// refuses (std::invalid_argument: non-finite LLRs) fails with zero bits and is
/// named in `refused`, the others decode. For a batch the decoder refused whole.
transport_block_batch decode_block_by_block(transport_block_code_decoder& decoder,
                                            const float* llr,
                                            size_t count,
                                            uint8_t* bits);

class transport_block_pipeline
{
public:
    /// `make` must give decoders on the CUDA backend (std::invalid_argument
    /// otherwise); slots >= 1 batches in flight, each of at most max_blocks > 0.
    transport_block_pipeline(const transport_block_decoder_factory& make,
                             int slots,
                             size_t max_blocks);
    ~transport_block_pipeline(); // waits for the batches in flight
    transport_block_pipeline(const transport_block_pipeline&) = delete;
    transport_block_pipeline& operator=(const transport_block_pipeline&) = delete;

    /// Queues `count` (1..max_blocks) transport blocks: count * G LLRs in device,
    /// page-locked or pageable memory, copied before this returns; rv 0..3.
    /// std::logic_error when every slot is in flight.
    void submit(const float* llr, size_t count, int rv);

    /// Waits for the oldest batch, writes its count * A bits to `bits` (device or
    /// host memory) and returns its results; std::logic_error if none is in
    /// flight. The batch leaves the pipeline even when this throws.
    transport_block_batch collect(uint8_t* bits);

    size_t pending() const { return m_in_flight.size(); }
    size_t slots() const { return m_slots.size(); }
    /// Blocks of the oldest batch in flight, 0 if none.
    size_t oldest_count() const;
    /// Blocks of every batch in flight.
    size_t blocks_in_flight() const;
    size_t max_blocks() const { return m_max_blocks; }

private:
    struct slot;
    struct in_flight {
        size_t slot, count;
    };
    std::vector<std::unique_ptr<slot>> m_slots;
    std::deque<in_flight> m_in_flight;
    size_t m_next = 0; ///< the slot the next batch goes to
    size_t m_max_blocks;
};

} // namespace mimo_gpu
