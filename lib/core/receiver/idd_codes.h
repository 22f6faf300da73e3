// The channel decoders an iterative_receiver loops with, behind one small
// interface: LTE turbo (transport_block_decoder) and NR LDPC
// (nr_transport_block_decoder). Both give the extrinsic LLRs of the received
// bits, on the host and on the GPU, in the received order (DESIGN.md,
// "Channel codes").
#pragma once

#include <mimo_gpu/lte_turbo_decoder.h>
#include <mimo_gpu/nr_transport_block.h>

#include <memory>
#include <string>
#include <vector>

namespace mimo_gpu {
namespace detail {

class idd_code
{
public:
    virtual ~idd_code() = default;
    virtual std::string name() const = 0; ///< "turbo" or "ldpc"
    virtual int A() const = 0;
    virtual int G() const = 0;
    virtual backend active_backend() const = 0;
    /// Host memory; extrinsic (may be null): count * G.
    virtual std::vector<transport_block_result>
    decode(const float* llr, size_t count, uint8_t* a, float* extrinsic) = 0;
    /// Device memory, on `stream`; d_extrinsic (may be null).
    virtual void decode_device(const float* d_llr,
                               size_t count,
                               uint8_t* d_a,
                               cuda_stream_t stream,
                               float* d_extrinsic) = 0;
    virtual std::vector<transport_block_result> device_results(cuda_stream_t stream) = 0;
};

class turbo_idd_code final : public idd_code
{
public:
    turbo_idd_code(const transport_block_format& f,
                   const turbo_decoder_config& c,
                   backend requested)
        : m_d(f, c, requested)
    {
    }
    std::string name() const override { return "turbo"; }
    int A() const override { return m_d.format().A; }
    int G() const override { return m_d.format().G; }
    backend active_backend() const override { return m_d.active_backend(); }
    std::vector<transport_block_result>
    decode(const float* llr, size_t count, uint8_t* a, float* extrinsic) override
    {
        return m_d.decode(llr, count, a, extrinsic);
    }
    void decode_device(const float* d_llr,
                       size_t count,
                       uint8_t* d_a,
                       cuda_stream_t stream,
                       float* d_extrinsic) override
    {
        m_d.decode_device(d_llr, count, d_a, stream, d_extrinsic);
    }
    std::vector<transport_block_result> device_results(cuda_stream_t stream) override
    {
        return m_d.device_results(stream);
    }

private:
    transport_block_decoder m_d;
};

class ldpc_idd_code final : public idd_code
{
public:
    ldpc_idd_code(const nr_transport_block_format& f,
                  const ldpc_decoder_config& c,
                  backend requested)
        : m_d(f, c, requested)
    {
    }
    std::string name() const override { return "ldpc"; }
    int A() const override { return m_d.format().A; }
    int G() const override { return m_d.format().G; }
    backend active_backend() const override { return m_d.active_backend(); }
    std::vector<transport_block_result>
    decode(const float* llr, size_t count, uint8_t* a, float* extrinsic) override
    {
        return m_d.decode(llr, count, a, nullptr, extrinsic);
    }
    void decode_device(const float* d_llr,
                       size_t count,
                       uint8_t* d_a,
                       cuda_stream_t stream,
                       float* d_extrinsic) override
    {
        m_d.decode_device(d_llr, count, d_a, stream, nullptr, d_extrinsic);
    }
    std::vector<transport_block_result> device_results(cuda_stream_t stream) override
    {
        return m_d.device_results(stream);
    }

private:
    nr_transport_block_decoder m_d;
};

} // namespace detail
} // namespace mimo_gpu
