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


transport_block_encode make_transport_block_encode(
    transport_block_code code, int A, int G, int Qm, int NL, int rv)
{
    if (code == transport_block_code::turbo) {
        auto e = std::make_shared<::mimo_gpu::transport_block_encoder>(
            transport_block_format_of(A, G, Qm, NL, rv));
        return [e](const uint8_t* a, uint8_t* g) { e->encode(a, g); };
    }
    auto e = std::make_shared<::mimo_gpu::nr_transport_block_encoder>(
        nr_transport_block_format_of(A, G, Qm, NL, rv));
    return [e](const uint8_t* a, uint8_t* g) { e->encode(a, g); };
}

std::unique_ptr<::mimo_gpu::transport_block_code_decoder>
make_transport_block_code_decoder(transport_block_code code,
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
        return ::mimo_gpu::make_transport_block_code_decoder(
            transport_block_format_of(A, G, Qm, NL, rv),
            ::mimo_gpu::turbo_config(algorithm.empty() ? "max-log-map" : algorithm,
                                     iterations ? iterations : 6,
                                     extrinsic_scale,
                                     window),
            backend);
    ::mimo_gpu::ldpc_decoder_config cfg;
    if (!algorithm.empty())
        cfg.algorithm = ::mimo_gpu::ldpc_algorithm_from_string(algorithm);
    if (iterations)
        cfg.iterations = iterations;
    cfg.validate();
    return ::mimo_gpu::make_transport_block_code_decoder(
        nr_transport_block_format_of(A, G, Qm, NL, rv), cfg, backend);
}

} // namespace mimo_gpu
} // namespace gr
