/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "transport_block_codes.h"

#include "transport_block_pdu.h"

#include <mimo_gpu/nr_transport_block.h>
#include <mimo_gpu/turbo_parameters.h>

#include <stdexcept>

namespace gr {
namespace mimo_gpu {

transport_block_code transport_block_code_from_string(const std::string& name)
{
    if (name == "turbo")
        return transport_block_code::turbo;
    if (name == "ldpc")
        return transport_block_code::ldpc;
    throw std::invalid_argument("code must be \"turbo\" (LTE) or \"ldpc\" (NR), got \"" +
                                name + "\"");
}

std::string to_string(transport_block_code code)
{
    return code == transport_block_code::turbo ? "turbo" : "ldpc";
}

namespace {

::mimo_gpu::nr_transport_block_format nr_format_of(int A, int G, int Qm, int NL, int rv)
{
    ::mimo_gpu::nr_transport_block_format f;
    f.A = A;
    f.G = G;
    f.Qm = Qm;
    f.NL = NL;
    f.rv = rv;
    f.validate();
    return f;
}

/// The two decoders have the same calls; this adapts either.
template <class Decoder>
class batch_decoder final : public transport_block_batch_decoder
{
public:
    explicit batch_decoder(std::unique_ptr<Decoder> d) : m_d(std::move(d)) {}
    int A() const override { return m_d->format().A; }
    int G() const override { return m_d->format().G; }
    int rv() const override { return m_d->format().rv; }
    int code_blocks() const override { return m_d->format().segmentation().C; }
    ::mimo_gpu::backend active_backend() const override { return m_d->active_backend(); }
    void set_rv(int rv) override { m_d->set_redundancy_version(rv); }
    std::vector<::mimo_gpu::transport_block_result>
    decode(const float* llr, size_t count, uint8_t* a) override
    {
        return m_d->decode(llr, count, a);
    }
    void decode_device(const float* d_llr,
                       size_t count,
                       uint8_t* d_a,
                       ::mimo_gpu::cuda_stream_t s) override
    {
        m_d->decode_device(d_llr, count, d_a, s);
    }
    std::vector<::mimo_gpu::transport_block_result>
    device_results(::mimo_gpu::cuda_stream_t s) override
    {
        return m_d->device_results(s);
    }

private:
    std::unique_ptr<Decoder> m_d;
};

} // namespace

transport_block_encode make_transport_block_encode(
    transport_block_code code, int A, int G, int Qm, int NL, int rv)
{
    if (code == transport_block_code::turbo) {
        auto e = std::make_shared<::mimo_gpu::transport_block_encoder>(
            transport_block_format_of(A, G, Qm, NL, rv));
        return [e](const uint8_t* a, uint8_t* g) { e->encode(a, g); };
    }
    auto e = std::make_shared<::mimo_gpu::nr_transport_block_encoder>(
        nr_format_of(A, G, Qm, NL, rv));
    return [e](const uint8_t* a, uint8_t* g) { e->encode(a, g); };
}

std::unique_ptr<transport_block_batch_decoder>
make_transport_block_batch_decoder(transport_block_code code,
                                   int A,
                                   int G,
                                   int Qm,
                                   int NL,
                                   int rv,
                                   const std::string& algorithm,
                                   int iterations,
                                   double extrinsic_scale,
                                   int window,
                                   ::mimo_gpu::backend backend)
{
    if (iterations < 0)
        throw std::invalid_argument(
            "iterations must be >= 0 (0: the code's default), got " +
            std::to_string(iterations));
    if (code == transport_block_code::turbo)
        return std::make_unique<batch_decoder<::mimo_gpu::transport_block_decoder>>(
            std::make_unique<::mimo_gpu::transport_block_decoder>(
                transport_block_format_of(A, G, Qm, NL, rv),
                ::mimo_gpu::turbo_config(algorithm.empty() ? "max-log-map" : algorithm,
                                         iterations ? iterations : 6,
                                         extrinsic_scale,
                                         window),
                backend));
    ::mimo_gpu::ldpc_decoder_config cfg;
    if (!algorithm.empty())
        cfg.algorithm = ::mimo_gpu::ldpc_algorithm_from_string(algorithm);
    if (iterations)
        cfg.iterations = iterations;
    cfg.validate();
    return std::make_unique<batch_decoder<::mimo_gpu::nr_transport_block_decoder>>(
        std::make_unique<::mimo_gpu::nr_transport_block_decoder>(
            nr_format_of(A, G, Qm, NL, rv), cfg, backend));
}

} // namespace mimo_gpu
} // namespace gr
