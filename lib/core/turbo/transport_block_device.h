// The CUDA side of transport_block_decoder::decode_device (transport_block_decoder.cu):
// de-rate-matching, the turbo decoder's device path, desegmentation and CRC24A,
// all on the caller's stream.
#pragma once

#include <mimo_gpu/lte_turbo_decoder.h>

#include <memory>
#include <vector>

namespace mimo_gpu {

class transport_block_device_engine
{
public:
    virtual ~transport_block_device_engine() = default;
    /// Arguments checked by transport_block_decoder; count > 0. d_extrinsic
    /// (may be null): count * G extrinsic LLRs of the transmitted bits, as
    /// transport_block_decoder::decode() gives them.
    virtual void decode(const float* d_llr,
                        size_t count,
                        int rv,
                        uint8_t* d_a,
                        lte_turbo_decoder& decoder,
                        cuda_stream_t stream,
                        float* d_extrinsic) = 0;
    virtual void decode(const int8_t* d_llr,
                        float scale,
                        size_t count,
                        int rv,
                        uint8_t* d_a,
                        lte_turbo_decoder& decoder,
                        cuda_stream_t stream,
                        float* d_extrinsic) = 0;
    virtual std::vector<transport_block_result> results(lte_turbo_decoder& decoder,
                                                        cuda_stream_t stream) = 0;
};

namespace detail {
/// Defined in transport_block_decoder.cu (CUDA builds only).
std::unique_ptr<transport_block_device_engine>
make_transport_block_device_engine(const transport_block_format& format);
} // namespace detail

} // namespace mimo_gpu
