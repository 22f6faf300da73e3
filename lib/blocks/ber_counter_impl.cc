/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "ber_counter_impl.h"

#include <gnuradio/io_signature.h>

#include <stdexcept>
#include <string>

namespace gr {
namespace mimo_gpu {

namespace {
int checked_bits_per_item(int bits_per_item)
{
    if (bits_per_item <= 0)
        throw std::invalid_argument("bits_per_item must be > 0, got " +
                                    std::to_string(bits_per_item));
    return bits_per_item;
}
} // namespace

ber_counter::sptr ber_counter::make(int bits_per_item)
{
    return gnuradio::make_block_sptr<ber_counter_impl>(bits_per_item);
}

ber_counter_impl::ber_counter_impl(int bits_per_item)
    : gr::sync_block(
          "ber_counter",
          gr::io_signature::make2(2,
                                  2,
                                  checked_bits_per_item(bits_per_item) * sizeof(uint8_t),
                                  bits_per_item * sizeof(float)),
          gr::io_signature::make(0, 0, 0)),
      d_bits_per_item(bits_per_item)
{
}

uint64_t ber_counter_impl::bits() const
{
    gr::thread::scoped_lock lock(d_mutex);
    return d_bits;
}

uint64_t ber_counter_impl::errors() const
{
    gr::thread::scoped_lock lock(d_mutex);
    return d_errors;
}

double ber_counter_impl::ber() const
{
    gr::thread::scoped_lock lock(d_mutex);
    return d_bits == 0 ? 0.0 : double(d_errors) / double(d_bits);
}

void ber_counter_impl::reset()
{
    gr::thread::scoped_lock lock(d_mutex);
    d_bits = 0;
    d_errors = 0;
}

int ber_counter_impl::work(int noutput_items,
                           gr_vector_const_void_star& input_items,
                           gr_vector_void_star& /*output_items*/)
{
    const auto sent = static_cast<const uint8_t*>(input_items[0]);
    const auto llr = static_cast<const float*>(input_items[1]);
    const size_t count = size_t(noutput_items) * d_bits_per_item;

    uint64_t errors = 0;
    for (size_t i = 0; i < count; ++i) {
        const uint8_t decided = llr[i] < 0.0f ? 1 : 0; // positive LLR means bit 0
        errors += decided != (sent[i] != 0);
    }
    gr::thread::scoped_lock lock(d_mutex);
    d_bits += count;
    d_errors += errors;
    return noutput_items;
}

} // namespace mimo_gpu
} // namespace gr
