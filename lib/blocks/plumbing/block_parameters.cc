/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "block_parameters.h"

#include <mimo_gpu/constellation.h>
#include <mimo_gpu/detector.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace gr {
namespace mimo_gpu {

::mimo_gpu::mimo_shape checked_shape(int nr, int nt)
{
    ::mimo_gpu::mimo_shape shape;
    shape.nr = nr;
    shape.nt = nt;
    shape.validate();
    return shape;
}

float checked_noise_var(double noise_var)
{
    ::mimo_gpu::check_noise_variance(
        noise_var); // finite and > 0 in float, where it is used
    return static_cast<float>(noise_var);
}

size_t checked_max_batch(int max_batch, const char* name)
{
    if (max_batch <= 0)
        throw std::invalid_argument(std::string(name) + " must be > 0, got " +
                                    std::to_string(max_batch));
    return static_cast<size_t>(max_batch);
}

int checked_symbols_per_channel(int symbols_per_channel)
{
    if (symbols_per_channel < 1 || symbols_per_channel > k_max_symbols_per_channel)
        throw std::invalid_argument("symbols_per_channel must be 1.." +
                                    std::to_string(k_max_symbols_per_channel) +
                                    " (the received vectors sharing one channel), got " +
                                    std::to_string(symbols_per_channel));
    return symbols_per_channel;
}

gr::io_signature::sptr channel_signature(int nr, int nt)
{
    checked_shape(nr, nt);
    return gr::io_signature::make2(
        2, 2, nr * nt * sizeof(gr_complex), nr * sizeof(gr_complex));
}

gr::io_signature::sptr llr_signature(int nr, int nt, const std::string& modulation)
{
    checked_shape(nr, nt);
    return gr::io_signature::make(1, 1, nt * bits_per_symbol(modulation) * sizeof(float));
}

void request_batch_sized_output_buffers(gr::block& block, size_t max_batch)
{
    constexpr size_t max_buffer_bytes = size_t(64) << 20;
    const auto outputs = block.output_signature();
    for (int port = 0; port < outputs->max_streams(); ++port) {
        const size_t item_bytes = outputs->sizeof_stream_item(port);
        const size_t items = std::min(max_batch, max_buffer_bytes / item_bytes);
        block.set_min_output_buffer(port, static_cast<long>(items));
    }
}

int bits_per_symbol(const std::string& modulation)
{
    return ::mimo_gpu::constellation(::mimo_gpu::modulation_from_string(modulation))
        .bits_per_symbol();
}

} // namespace mimo_gpu
} // namespace gr
