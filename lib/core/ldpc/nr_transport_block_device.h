// The CUDA side of nr_transport_block_decoder::decode_device
// (nr_transport_block.cu): de-rate-matching into the code blocks' codewords
// (HARQ soft buffers in device memory optional), the LDPC decoder's device
// path, desegmentation and the CRCs, all on the caller's stream.
#pragma once

#include <mimo_gpu/nr_transport_block.h>

#include <memory>
#include <vector>

namespace mimo_gpu {
namespace detail {

class nr_transport_block_device
{
public:
    virtual ~nr_transport_block_device() = default;
    /// Arguments checked by nr_transport_block_decoder; llr8 set: int8 LLRs
    /// read as scale * value. d_extrinsic (may be null): count * G, what
    /// nr_transport_block_decoder::decode() gives for the same floats.
    virtual void decode(const float* d_llr,
                        const int8_t* d_llr8,
                        float scale,
                        size_t count,
                        int rv,
                        uint8_t* d_a,
                        float* d_soft,
                        ldpc_decoder& decoder,
                        cuda_stream_t stream,
                        float* d_extrinsic) = 0;
    virtual std::vector<transport_block_result> results(ldpc_decoder& decoder,
                                                        cuda_stream_t stream) = 0;
};

/// CUDA builds only (nr_transport_block.cu).
std::unique_ptr<nr_transport_block_device>
make_nr_transport_block_device(const nr_transport_block_format& format,
                               const std::vector<nr_rate_matcher>& matchers);

} // namespace detail
} // namespace mimo_gpu
