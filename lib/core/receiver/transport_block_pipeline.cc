#include "../runtime/device_allocation.h"

#include <mimo_gpu/device_memory.h>
#include <mimo_gpu/transport_block_pipeline.h>

#include <algorithm>
#include <stdexcept>
#include <string>

namespace mimo_gpu {

/// A batch's own decoder (its device buffers and plans), stream, and copies of
/// its LLRs and bits: nothing a batch in flight uses is shared with another slot.
struct transport_block_pipeline::slot {
    std::unique_ptr<transport_block_code_decoder> decoder;
    device_stream stream;
    detail::device_allocation llr, bits;
    slot(std::unique_ptr<transport_block_code_decoder> d, size_t max_blocks)
        : decoder(std::move(d)),
          llr(max_blocks * size_t(decoder->G()) * sizeof(float)),
          bits(max_blocks * size_t(decoder->A()))
    {
    }

    /// The batch again, block by block through the host path.
    transport_block_batch decode_on_host(size_t count, uint8_t* out)
    {
        const size_t G = size_t(decoder->G()), A = size_t(decoder->A());
        std::vector<float> host_llr(count * G);
        stream.copy(host_llr.data(), llr.as<float>(), host_llr.size() * sizeof(float));
        std::vector<uint8_t> host_bits(count * A);
        transport_block_batch batch =
            decode_block_by_block(*decoder, host_llr.data(), count, host_bits.data());
        stream.copy(out, host_bits.data(), host_bits.size());
        return batch;
    }
};

transport_block_batch decode_block_by_block(transport_block_code_decoder& decoder,
                                            const float* llr,
                                            size_t count,
                                            uint8_t* bits)
{
    const size_t G = size_t(decoder.G()), A = size_t(decoder.A());
    transport_block_batch batch;
    batch.results.resize(count);
    for (size_t t = 0; t < count; ++t) {
        try {
            batch.results[t] = decoder.decode(llr + t * G, 1, bits + t * A).at(0);
        } catch (const std::invalid_argument& e) {
            std::fill_n(bits + t * A, A, uint8_t(0));
            batch.results[t] = transport_block_result{};
            batch.refused.push_back({ t, e.what() });
        }
    }
    return batch;
}

transport_block_pipeline::transport_block_pipeline(
    const transport_block_decoder_factory& make, int slots, size_t max_blocks)
    : m_max_blocks(max_blocks)
{
    if (slots < 1 || max_blocks == 0)
        throw std::invalid_argument("mimo_gpu::transport_block_pipeline: slots and "
                                    "max_blocks must be >= 1, got " +
                                    std::to_string(slots) + " and " +
                                    std::to_string(max_blocks));
    for (int s = 0; s < slots; ++s) {
        auto decoder = make();
        if (!decoder || decoder->active_backend() != backend::cuda)
            throw std::invalid_argument(
                "mimo_gpu::transport_block_pipeline: its decoders must run on CUDA");
        m_slots.push_back(std::make_unique<slot>(std::move(decoder), max_blocks));
    }
}

transport_block_pipeline::~transport_block_pipeline()
{
    // Every slot, not only those in flight: a decode_device that threw may have
    // queued kernels before it did, and the buffers go before the stream.
    for (const auto& s : m_slots) {
        try {
            s->stream.synchronize();
        } catch (...) { // a failed GPU: nothing left to wait for
        }
    }
}

size_t transport_block_pipeline::oldest_count() const
{
    return m_in_flight.empty() ? 0 : m_in_flight.front().count;
}

size_t transport_block_pipeline::blocks_in_flight() const
{
    size_t blocks = 0;
    for (const in_flight& f : m_in_flight)
        blocks += f.count;
    return blocks;
}

void transport_block_pipeline::submit(const float* llr, size_t count, int rv)
{
    if (m_in_flight.size() == m_slots.size())
        throw std::logic_error(
            "mimo_gpu::transport_block_pipeline::submit: every slot is in flight");
    if (count == 0 || count > m_max_blocks)
        throw std::invalid_argument(
            "mimo_gpu::transport_block_pipeline::submit: count must be 1.." +
            std::to_string(m_max_blocks) + ", got " + std::to_string(count));
    slot& s = *m_slots[m_next];
    if (s.decoder->rv() != rv)
        s.decoder->set_redundancy_version(rv);
    // The slot's stream is idle (its last batch was collected): the copy waits
    // for nothing but itself, and the caller's LLRs are free when it returns.
    s.stream.copy(s.llr.as<float>(), llr, count * size_t(s.decoder->G()) * sizeof(float));
    s.decoder->decode_device(
        s.llr.as<float>(), count, s.bits.as<uint8_t>(), s.stream.get());
    m_in_flight.push_back({ m_next, count });
    m_next = (m_next + 1) % m_slots.size();
}

transport_block_batch transport_block_pipeline::collect(uint8_t* bits)
{
    if (m_in_flight.empty())
        throw std::logic_error(
            "mimo_gpu::transport_block_pipeline::collect: nothing in flight");
    const in_flight f = m_in_flight.front();
    m_in_flight.pop_front();
    slot& s = *m_slots[f.slot];
    // The bits' copy queued behind the decode, so that device_results' one wait
    // covers both; a refused batch's bits are then overwritten.
    s.stream.copy_async(bits, s.bits.as<uint8_t>(), f.count * size_t(s.decoder->A()));
    transport_block_batch batch;
    try {
        batch.results = s.decoder->device_results(s.stream.get()); // waits
    } catch (const std::invalid_argument&) {
        s.stream.synchronize(); // its kernels are done with the slot's buffers
        return s.decode_on_host(f.count, bits);
    }
    return batch;
}

} // namespace mimo_gpu
