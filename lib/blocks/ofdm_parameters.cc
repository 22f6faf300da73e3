/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "ofdm_parameters.h"

namespace gr {
namespace mimo_gpu {

::mimo_gpu::ofdm_grid
ofdm_frame(const std::string& grid, int nt, const std::string& modulation, int slots, int data_symbols)
{
    ::mimo_gpu::ofdm_grid g = ::mimo_gpu::ofdm_grid::preset(grid);
    g.nt = nt;
    g.mod = ::mimo_gpu::modulation_from_string(modulation);
    g.slots = slots;
    g.data_symbols = data_symbols;
    g.validate();
    return g;
}

} // namespace mimo_gpu
} // namespace gr
