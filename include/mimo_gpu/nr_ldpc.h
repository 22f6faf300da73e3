// 5G NR LDPC (3GPP TS 38.212 5.3.2): lifting sizes, the codes of the two base
// graphs, the encoder and the parity check. docs/ldpc.md.
#pragma once

#include <cstdint>
#include <vector>

namespace mimo_gpu {

/// The 51 lifting sizes Zc of Table 5.3.2-1, ascending.
const std::vector<int>& ldpc_lifting_sizes();
/// The set index i_LS (0..7) of Zc; std::invalid_argument for a Zc not in the table.
int ldpc_lifting_set(int Zc);

/// One LDPC code of 38.212: base graph 1 or 2 lifted by Zc.
struct ldpc_code {
    int base_graph = 1; ///< 1 or 2
    int Zc = 384;       ///< one of ldpc_lifting_sizes()

    /// std::invalid_argument naming the bad value.
    void validate() const;
    int rows() const { return base_graph == 1 ? 46 : 42; }
    int columns() const { return base_graph == 1 ? 68 : 52; }
    /// Base graph columns of information bits: 22 (BG1) or 10 (BG2).
    int info_columns() const { return base_graph == 1 ? 22 : 10; }
    /// K: information bits of a code block, filler bits included.
    int K() const { return info_columns() * Zc; }
    /// N: bits the encoder outputs (the first 2 Zc information bits are not sent).
    int N() const { return (columns() - 2) * Zc; }
    /// Bits of the full codeword [c | w] that the parity check H x = 0 holds for.
    int codeword_bits() const { return columns() * Zc; }
};

/// The encoder of 38.212 5.3.2 for one code.
class ldpc_encoder
{
public:
    /// Throws std::invalid_argument for a bad code (ldpc_code::validate).
    explicit ldpc_encoder(const ldpc_code& code);
    const ldpc_code& code() const { return m_code; }

    /// c: K information bits (bytes 0/1; filler bits as 0) -> x: the full
    /// codeword [c | w] of codeword_bits() bits, H x = 0.
    void encode_full(const uint8_t* c, uint8_t* x) const;
    /// c -> d: the N bits 38.212 sends, d_k = x_{k + 2 Zc}.
    void encode(const uint8_t* c, uint8_t* d) const;

private:
    ldpc_code m_code;
    std::vector<int> m_edges; ///< per edge: row, column, shift (flattened)
    int m_core_shift = 0;     ///< b: the core rows sum to P^b p_0
};

/// The number of parity checks of H x (x: the full codeword, codeword_bits()
/// bits 0/1) that fail: 0 for a codeword.
int ldpc_syndrome_weight(const ldpc_code& code, const uint8_t* x);

} // namespace mimo_gpu
