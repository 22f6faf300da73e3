/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "ofdm_parameters.h"

namespace gr {
namespace mimo_gpu {

::mimo_gpu::ofdm_grid ofdm_frame(const std::string& grid,
                                 int nt,
                                 const std::string& modulation,
                                 int slots,
                                 int data_symbols,
                                 const std::vector<int>& pilot_positions)
{
    ::mimo_gpu::ofdm_grid g = ::mimo_gpu::ofdm_grid::preset(grid);
    g.nt = nt;
    g.mod = ::mimo_gpu::modulation_from_string(modulation);
    g.slots = slots;
    g.data_symbols = data_symbols;
    g.pilot_positions = pilot_positions;
    g.validate();
    return g;
}

const pmt::pmt_t k_grid_tag_key = pmt::mp("ofdm_grid");

pmt::pmt_t grid_tag_value(const ::mimo_gpu::ofdm_grid& g)
{
    pmt::pmt_t d = pmt::make_dict();
    const auto add = [&d](const char* key, const pmt::pmt_t& value) {
        d = pmt::dict_add(d, pmt::mp(key), value);
    };
    add("fft_size", pmt::from_long(g.fft_size));
    add("cp_length", pmt::from_long(g.cp_length));
    add("used_subcarriers", pmt::from_long(g.used_subcarriers));
    add("dc_null", pmt::from_bool(g.dc_null));
    add("nt", pmt::from_long(g.nt));
    add("modulation", pmt::mp(::mimo_gpu::to_string(g.mod)));
    add("slots", pmt::from_long(g.slots));
    add("data_symbols", pmt::from_long(g.data_symbols));
    add("pilot_positions",
        pmt::init_s32vector(g.pilot_positions.size(), g.pilot_positions));
    add("sample_rate", pmt::from_double(g.sample_rate));
    add("description", pmt::mp(::mimo_gpu::describe(g)));
    return d;
}

std::optional<::mimo_gpu::ofdm_grid> grid_from_tag_value(const pmt::pmt_t& value)
{
    if (!pmt::is_dict(value))
        return std::nullopt;
    try {
        const auto get = [&value](const char* key) {
            return pmt::dict_ref(value, pmt::mp(key), pmt::PMT_NIL);
        };
        ::mimo_gpu::ofdm_grid g;
        g.fft_size = int(pmt::to_long(get("fft_size")));
        g.cp_length = int(pmt::to_long(get("cp_length")));
        g.used_subcarriers = int(pmt::to_long(get("used_subcarriers")));
        g.dc_null = pmt::to_bool(get("dc_null"));
        g.nt = int(pmt::to_long(get("nt")));
        g.mod =
            ::mimo_gpu::modulation_from_string(pmt::symbol_to_string(get("modulation")));
        g.slots = int(pmt::to_long(get("slots")));
        g.data_symbols = int(pmt::to_long(get("data_symbols")));
        const pmt::pmt_t positions = get("pilot_positions");
        if (pmt::is_s32vector(positions))
            g.pilot_positions = pmt::s32vector_elements(positions);
        else if (!pmt::is_null(positions)) // absent: a source from before layouts
            return std::nullopt;
        g.sample_rate = pmt::to_double(get("sample_rate"));
        return g;
    } catch (const std::exception&) { // a field absent or of another type
        return std::nullopt;
    }
}

} // namespace mimo_gpu
} // namespace gr
