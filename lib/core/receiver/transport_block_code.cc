// The two transport-block decoders behind transport_block_code_decoder: their
// calls are alike, so one adapter serves both.
#include <mimo_gpu/transport_block_code.h>

namespace mimo_gpu {

namespace {

template <class Decoder>
class code_decoder final : public transport_block_code_decoder
{
public:
    template <class Format, class Config>
    code_decoder(const char* name, const Format& f, const Config& c, backend requested)
        : m_name(name), m_d(f, c, requested)
    {
    }
    std::string code() const override { return m_name; }
    int A() const override { return m_d.format().A; }
    int G() const override { return m_d.format().G; }
    int rv() const override { return m_d.format().rv; }
    int code_blocks() const override { return m_d.format().segmentation().C; }
    backend active_backend() const override { return m_d.active_backend(); }
    void set_redundancy_version(int rv) override { m_d.set_redundancy_version(rv); }
    std::vector<transport_block_result>
    decode(const float* llr, size_t count, uint8_t* a, float* extrinsic) override;
    void decode_device(const float* d_llr,
                       size_t count,
                       uint8_t* d_a,
                       cuda_stream_t stream,
                       float* d_extrinsic) override;
    std::vector<transport_block_result> device_results(cuda_stream_t stream) override
    {
        return m_d.device_results(stream);
    }

private:
    const char* m_name;
    Decoder m_d;
};

// The NR decoder takes the caller's HARQ soft buffers before the extrinsic
// output; neither path here keeps any.
template <>
std::vector<transport_block_result> code_decoder<transport_block_decoder>::decode(
    const float* llr, size_t count, uint8_t* a, float* extrinsic)
{
    return m_d.decode(llr, count, a, extrinsic);
}
template <>
std::vector<transport_block_result> code_decoder<nr_transport_block_decoder>::decode(
    const float* llr, size_t count, uint8_t* a, float* extrinsic)
{
    return m_d.decode(llr, count, a, nullptr, extrinsic);
}
template <>
void code_decoder<transport_block_decoder>::decode_device(const float* d_llr,
                                                          size_t count,
                                                          uint8_t* d_a,
                                                          cuda_stream_t stream,
                                                          float* d_extrinsic)
{
    m_d.decode_device(d_llr, count, d_a, stream, d_extrinsic);
}
template <>
void code_decoder<nr_transport_block_decoder>::decode_device(const float* d_llr,
                                                             size_t count,
                                                             uint8_t* d_a,
                                                             cuda_stream_t stream,
                                                             float* d_extrinsic)
{
    m_d.decode_device(d_llr, count, d_a, stream, nullptr, d_extrinsic);
}

} // namespace

std::unique_ptr<transport_block_code_decoder>
make_transport_block_code_decoder(const transport_block_format& format,
                                  const turbo_decoder_config& config,
                                  backend requested)
{
    return std::make_unique<code_decoder<transport_block_decoder>>(
        "turbo", format, config, requested);
}

std::unique_ptr<transport_block_code_decoder>
make_transport_block_code_decoder(const nr_transport_block_format& format,
                                  const ldpc_decoder_config& config,
                                  backend requested)
{
    return std::make_unique<code_decoder<nr_transport_block_decoder>>(
        "ldpc", format, config, requested);
}

} // namespace mimo_gpu
