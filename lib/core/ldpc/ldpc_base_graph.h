// The base graphs of 5G NR LDPC (3GPP TS 38.212 5.3.2) as tables of their
// non-zero entries, and the lifted view the encoder and the decoders use.
#pragma once

#include <mimo_gpu/nr_ldpc.h>

#include <cstddef>
#include <cstdint>
#include <vector>

namespace mimo_gpu {
namespace detail {

/// A non-zero entry of a base graph: its row, column and shift coefficient V
/// for each lifting size set i_LS (the lifted block is the Zc x Zc identity
/// shifted right by V mod Zc).
struct ldpc_entry {
    int16_t row, column;
    int16_t shift[8];
};

struct ldpc_table {
    const ldpc_entry* entries; ///< row by row, columns ascending within a row
    size_t count;
    int rows, columns, info_columns;
};

/// Table 5.3.2-2 (bg = 1) or 5.3.2-3 (bg = 2).
ldpc_table ldpc_base_graph_table(int bg);

/// One edge of the lifted graph's base: row, column and the shift for this Zc.
struct ldpc_edge {
    int row, column, shift;
};

/// The base graph's entries for one code (shifts reduced mod Zc), row by row.
std::vector<ldpc_edge> ldpc_edges(const ldpc_code& code);

} // namespace detail
} // namespace mimo_gpu
