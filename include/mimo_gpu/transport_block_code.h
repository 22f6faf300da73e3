// One interface over the two transport-block decoders, LTE turbo
// (transport_block_decoder) and NR LDPC (nr_transport_block_decoder), for
// what takes either: the iterative receiver and the stream blocks. Both have
// host and device paths and give the extrinsic LLRs of the received bits
// (DESIGN.md, "Channel codes").
#pragma once

#include <mimo_gpu/lte_turbo_decoder.h>
#include <mimo_gpu/nr_transport_block.h>

#include <memory>
#include <string>
#include <vector>

namespace mimo_gpu {

class transport_block_code_decoder
{
public:
    virtual ~transport_block_code_decoder() = default;
    virtual std::string code() const = 0; ///< "turbo" or "ldpc"
    virtual int A() const = 0;
    virtual int G() const = 0;
    virtual int rv() const = 0;
    virtual int code_blocks() const = 0;
    virtual backend active_backend() const = 0;
    /// The rv of the calls that follow, 0..3 (std::invalid_argument otherwise).
    virtual void set_redundancy_version(int rv) = 0;
    /// Host memory: count * G LLRs -> count * A bits; extrinsic (may be null):
    /// count * G extrinsic LLRs, as the code's decoder gives them.
    virtual std::vector<transport_block_result>
    decode(const float* llr, size_t count, uint8_t* a, float* extrinsic = nullptr) = 0;
    /// Device memory, on `stream` (CUDA backend only); d_extrinsic may be null.
    virtual void decode_device(const float* d_llr,
                               size_t count,
                               uint8_t* d_a,
                               cuda_stream_t stream,
                               float* d_extrinsic = nullptr) = 0;
    /// Waits for `stream`: the last decode_device's results.
    virtual std::vector<transport_block_result> device_results(cuda_stream_t stream) = 0;
};

std::unique_ptr<transport_block_code_decoder>
make_transport_block_code_decoder(const transport_block_format& format,
                                  const turbo_decoder_config& config,
                                  backend requested = backend::automatic);
std::unique_ptr<transport_block_code_decoder>
make_transport_block_code_decoder(const nr_transport_block_format& format,
                                  const ldpc_decoder_config& config,
                                  backend requested = backend::automatic);

} // namespace mimo_gpu
