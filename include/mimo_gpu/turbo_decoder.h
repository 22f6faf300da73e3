// LTE turbo decoder (TS 36.212 5.1.3.2 code; thesis chapter 5 decoder):
// max-log-MAP or log-MAP, parallel windows with boundary state metrics
// exchanged across iterations, early termination on the code block CRC, and
// many code blocks of mixed K per call. CPU and CUDA behind one interface.
#pragma once

#include <mimo_gpu/backend.h>
#include <mimo_gpu/lte_turbo_code.h>
#include <mimo_gpu/types.h>

#include <memory>
#include <vector>

namespace mimo_gpu {

enum class map_algorithm {
    max_log_map, ///< max* = max, extrinsic LLRs scaled by extrinsic_scale
    log_map,     ///< max* = max + ln(1 + e^-|a-b|)
};

struct turbo_decoder_config {
    map_algorithm algorithm = map_algorithm::max_log_map;
    int iterations = 6;           ///< full iterations (two half iterations each), 1..32
    float extrinsic_scale = 0.75f; ///< max-log-MAP only; (0, 1]
    /// Trellis stages per parallel window (the thesis' W = K/P); a code block of
    /// K bits is split into ceil(K / window) windows decoded at once, whose
    /// boundary state metrics are exchanged across iterations. >= K: one window.
    int window = 64;
    crc_type early_termination = crc_type::none; ///< stop a block once this CRC of its K bits passes
    void validate() const; ///< throws std::invalid_argument
};

/// One code block's input and output inside a batch.
/// Input LLRs: 3 (K + 4) floats [d0 | d1 | d2] (the rate matcher's dematch layout).
struct turbo_block_result {
    int iterations = 0;  ///< full iterations run
    bool crc_ok = false; ///< the early-termination CRC passed (false when none configured)
};

class turbo_engine; // CPU or CUDA implementation, lib/core/turbo/

class turbo_decoder
{
public:
    explicit turbo_decoder(const turbo_decoder_config& config, backend requested = backend::automatic);
    ~turbo_decoder();
    turbo_decoder(turbo_decoder&&) noexcept;
    turbo_decoder& operator=(turbo_decoder&&) noexcept;

    const turbo_decoder_config& config() const { return m_config; }
    backend active_backend() const;

    /// Decodes code blocks of sizes K[b] (each a table size) in one call.
    /// llr: the blocks' inputs back to back (3 (K[b] + 4) floats each);
    /// bits: K[b] hard decisions each, back to back; app_llr (optional, may be
    /// nullptr): K[b] a-posteriori LLRs each. Throws std::invalid_argument on an
    /// unsupported K or a non-finite LLR (naming the block).
    std::vector<turbo_block_result> decode(const std::vector<int>& K, const float* llr, uint8_t* bits,
                                           float* app_llr = nullptr);

    /// Device memory, asynchronous on `stream` (CUDA backend only, else std::logic_error):
    /// the same decoding with llr, bits and app_llr (may be nullptr) on the device.
    /// Per-block results are not returned; an input error is reported by the
    /// next check_device_status.
    void decode_device(const std::vector<int>& K, const float* d_llr, uint8_t* d_bits, float* d_app_llr,
                       cuda_stream_t stream);
    void check_device_status(cuda_stream_t stream);

    /// Floats of input for blocks of sizes K.
    static size_t input_floats(const std::vector<int>& K);
    static size_t output_bits(const std::vector<int>& K);

private:
    turbo_decoder_config m_config;
    std::unique_ptr<turbo_engine> m_engine;
};

// ---- Transport block level (CRC24A + segmentation + turbo + rate matching) ---

/// How one transport block is coded: A information bits onto G coded bits
/// (Qm bits per modulation symbol, NL layers, redundancy version rv), 5.1.4.1.2.
struct transport_block_format {
    int A = 0;
    int G = 0;
    int Qm = 2;
    int NL = 1;
    int rv = 0;
    void validate() const; ///< throws std::invalid_argument (A, G, Qm in {1,2,4,6,8,10}, NL, rv, G a multiple of NL*Qm)
    code_block_segmentation segmentation() const;
    /// E_r, the coded bits of code block r.
    std::vector<int> rate_matched_sizes() const;
};

class transport_block_encoder
{
public:
    explicit transport_block_encoder(const transport_block_format& format);
    const transport_block_format& format() const { return m_format; }
    /// a: A bits -> f: G bits.
    void encode(const uint8_t* a, uint8_t* f) const;

private:
    transport_block_format m_format;
    code_block_segmentation m_seg;
};

struct transport_block_result {
    bool crc_ok = false;        ///< CRC24A of the transport block passed
    int code_blocks = 0;
    int code_blocks_crc_ok = 0; ///< code blocks whose CRC24B passed (C > 1), or C if crc_ok when C == 1
    int max_iterations = 0;     ///< most iterations any code block used
};

/// Decodes many transport blocks of one format per call: all their code blocks
/// go to the turbo decoder in one batch (one GPU launch sequence).
class transport_block_decoder
{
public:
    /// The decoder's early_termination is set per code block (CRC24B, or CRC24A for C == 1).
    transport_block_decoder(const transport_block_format& format, turbo_decoder_config config,
                            backend requested = backend::automatic);
    const transport_block_format& format() const { return m_format; }
    backend active_backend() const { return m_decoder.active_backend(); }

    /// llr: count * G LLRs; a: count * A decoded bits.
    std::vector<transport_block_result> decode(const float* llr, size_t count, uint8_t* a);

private:
    transport_block_format m_format;
    code_block_segmentation m_seg;
    std::vector<int> m_E;
    turbo_decoder m_decoder;
    std::vector<rate_matcher> m_matchers; // one per distinct K (at most two)
    std::vector<float> m_block_llr;
    std::vector<uint8_t> m_block_bits;
};

} // namespace mimo_gpu
