// 5G NR LDPC (3GPP TS 38.212 5.3.2): lifting sizes, the codes of the two base
// graphs, the encoder and the parity check. docs/ldpc.md.
#pragma once

#include <mimo_gpu/backend.h>
#include <mimo_gpu/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
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

/// Check-node rules of the decoders.
enum class ldpc_algorithm {
    normalized_min_sum, ///< min-sum, messages scaled by `scale`
    offset_min_sum,     ///< min-sum, magnitudes less `offset` (not below 0)
    sum_product,        ///< the exact rule, 2 atanh(prod tanh(L / 2))
};

/// The default: offset min-sum with offset 0.5, 0.19 dB from sum-product at FER
/// 1e-2 for BG1 K' = 6144 at rate 1/2 (10 iterations, H200); normalized min-sum
/// at its best scale (0.75) is 0.36 dB away (docs/ldpc.md). The offset assumes
/// LLRs in natural units (a detector's, 2 y / sigma^2), which min-sum's
/// normalized rule would not need.
/// "offset-min-sum", "normalized-min-sum", "sum-product" (the names the
/// blocks, Python and programs take); std::invalid_argument for another.
ldpc_algorithm ldpc_algorithm_from_string(const std::string& name);
std::string to_string(ldpc_algorithm algorithm);

struct ldpc_decoder_config {
    ldpc_algorithm algorithm = ldpc_algorithm::offset_min_sum;
    float scale = 0.75f; ///< normalized min-sum, (0, 1]
    float offset = 0.5f; ///< offset min-sum, >= 0
    int iterations = 10; ///< layered iterations at most, 1..100
    /// Stop a block once its hard decisions satisfy every parity check;
    /// false: always run `iterations` (for comparisons with published curves).
    bool early_termination = true;
    void validate() const; ///< std::invalid_argument naming the bad value
};

/// One code block's outcome.
struct ldpc_block_result {
    int iterations = 0;     ///< layered iterations run
    bool parity_ok = false; ///< the hard decisions satisfy H x = 0
};

namespace detail {
class ldpc_engine; // lib/core/ldpc/ldpc_engine.h
}

/// Layered decoding of one code (38.212's base graph rows as layers, in
/// order), on the CPU or CUDA. LLRs are L = ln P(0)/P(1) of the full codeword
/// x = [c | w] (codeword_bits() per block): the 2 Zc punctured bits and any bit
/// not received get 0, known filler bits a large positive value. A block runs
/// the layers up to its last column with a non-zero LLR (an extension layer
/// whose own parity bit was not sent changes nothing else); the parity verdict
/// covers those layers. Min-sum (normalized and offset) computes in IEEE half
/// precision on both engines (LLRs bounded to +-8192; a non-zero LLR below
/// half's range keeps its sign as +-2^-24): the CUDA engine gives the CPU's
/// results bit for bit. Sum-product computes in float, CUDA equal to the CPU
/// to rounding (the logarithms and tanh of the two libraries differ in the
/// last ulp).
class ldpc_decoder
{
public:
    /// Throws std::invalid_argument for a bad code or configuration.
    ldpc_decoder(const ldpc_code& code,
                 const ldpc_decoder_config& config = {},
                 backend requested = backend::automatic);
    ~ldpc_decoder();
    ldpc_decoder(ldpc_decoder&&) noexcept;
    ldpc_decoder& operator=(ldpc_decoder&&) noexcept;

    const ldpc_code& code() const { return m_code; }
    const ldpc_decoder_config& config() const { return m_config; }
    backend active_backend() const;

    /// count blocks: llr (count * codeword_bits()), bits (count * K: the hard
    /// decisions on c), app (optional, count * codeword_bits(): a-posteriori
    /// LLRs). Non-finite LLRs throw std::invalid_argument naming the block
    /// (on CUDA after decoding: the outputs are then unspecified).
    std::vector<ldpc_block_result>
    decode(const float* llr, size_t count, uint8_t* bits, float* app = nullptr) const;

    /// Device memory, asynchronous on `stream` (CUDA backend only, else
    /// std::logic_error): d_llr count * codeword_bits() float LLRs, or int8 ones
    /// read as scale * value (scale finite and > 0); d_bits count * K; d_app
    /// (may be null) count * codeword_bits(). The same decoding as decode().
    /// One call at a time per decoder (its scratch is reused).
    void decode_device(const float* d_llr,
                       size_t count,
                       uint8_t* d_bits,
                       cuda_stream_t stream,
                       float* d_app = nullptr);
    void decode_device(const int8_t* d_llr,
                       float scale,
                       size_t count,
                       uint8_t* d_bits,
                       cuda_stream_t stream,
                       float* d_app = nullptr);
    /// Waits for `stream`: the results of the last decode_device; a block with
    /// a NaN or Inf LLR throws std::invalid_argument naming it (counted over
    /// the batch). CUDA backend only.
    std::vector<ldpc_block_result> device_results(cuda_stream_t stream);

private:
    ldpc_code m_code;
    ldpc_decoder_config m_config;
    std::unique_ptr<detail::ldpc_engine> m_engine;
};

/// The number of parity checks of H x (x: the full codeword, codeword_bits()
/// bits 0/1) that fail: 0 for a codeword.
int ldpc_syndrome_weight(const ldpc_code& code, const uint8_t* x);

} // namespace mimo_gpu
