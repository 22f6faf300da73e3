// LTE turbo decoder (TS 36.212 5.1.3.2 code; thesis chapter 5 decoder):
// max-log-MAP or log-MAP, parallel windows with boundary state metrics
// exchanged across iterations, early termination on the code block CRC, and
// many code blocks of mixed K per call. CPU and CUDA behind one interface.
#pragma once

#include <mimo_gpu/backend.h>
#include <mimo_gpu/lte_turbo_code.h>
#include <mimo_gpu/types.h>

#include <map>
#include <memory>
#include <vector>

namespace mimo_gpu {

/// Input LLRs are saturated to [-k_turbo_llr_limit, k_turbo_llr_limit] before any
/// arithmetic, on the CPU and on CUDA alike. Why 1e4: an LLR of 1e4 already means
/// certainty (e^-1e4 is 0 in any float; channel LLRs of a receiver are rarely
/// above ~100, and the transport block decoder gives known filler bits this
/// value), so saturating changes no decision; and it bounds the arithmetic for
/// any finite input. With |L| <= 1e4 and extrinsics <= k_turbo_extrinsic_limit,
/// every branch metric is below 0.5 (1e4 + 1e6) + 0.5e4 < 6e5; the state metrics,
/// normalised to state 0 at every stage, spread over at most a few branch metrics
/// (any state of the 8-state trellis reaches any other in 3 stages), so every
/// sum stays below 1e8, far from FLT_MAX (3.4e38), for every K up to 6144 and
/// every iteration count. Unbounded (e.g. 1e38) inputs made alpha + gamma
/// overflow to Inf, and Inf - Inf gave NaN a-posteriori LLRs.
constexpr float k_turbo_llr_limit = 1.0e4f;
/// Extrinsic LLRs (one constituent decoder's output, the other's a-priori input)
/// are saturated to [-1e6, 1e6] when written, so they cannot grow without bound
/// from half iteration to half iteration whatever the input. 1e6 is 100 times
/// the input limit: decoding reaches it only where every decision is long settled.
constexpr float k_turbo_extrinsic_limit = 1.0e6f;

enum class map_algorithm {
    max_log_map, ///< max* = max, extrinsic LLRs scaled by extrinsic_scale
    log_map,     ///< max* = max + ln(1 + e^-|a-b|)
};

struct turbo_decoder_config {
    map_algorithm algorithm = map_algorithm::max_log_map;
    int iterations = 6;            ///< full iterations (two half iterations each), 1..32
    float extrinsic_scale = 0.75f; ///< max-log-MAP only; (0, 1]
    /// Trellis stages per parallel window (the thesis' W = K/P); a code block of
    /// K bits is split into ceil(K / window) windows decoded at once, whose
    /// boundary state metrics are exchanged across iterations. >= K: one window
    /// (the value is clamped to K before any arithmetic, so INT_MAX works too).
    int window = 64;
    /// Training (acquisition) stages before and after each window: a window's
    /// forward recursion starts this many stages before it, from the metrics its
    /// left neighbour had there in the previous iteration (state 0 where the
    /// prefix reaches the block start), and runs them without output; the
    /// backward recursion likewise after the window (the tail where it reaches
    /// stage K). Costs up to 2 * training / window more recursion steps, none
    /// stored. 0: the neighbours' boundary metrics alone (lost ~0.15 dB at
    /// K = 6144 and failed at code rates near 0.93). >= 0; clamped to K.
    /// transport_block_decoder lengthens it at high code rates.
    int training = 16;
    /// Stop a block once this CRC of its K bits passes (never one without information).
    crc_type early_termination = crc_type::none;
    void validate() const; ///< throws std::invalid_argument
};

/// One code block's input and output inside a batch.
/// Input LLRs: 3 (K + 4) floats [d0 | d1 | d2] (the rate matcher's dematch layout).
struct turbo_block_result {
    int iterations = 0; ///< full iterations run
    /// The early-termination CRC passed on a block that had information behind it
    /// (false when no CRC is configured, and always false when no_information).
    bool crc_ok = false;
    /// The decoder had no information to decide the block by, so its bits are not
    /// a decoding: fewer than K of its 3 (K + 4) input LLRs reach the trellis as
    /// non-zero branch metrics (L / 2 in float: an erased block, all zero, or
    /// denormals like +-1.4e-45 that halve to 0), or, after the last iteration,
    /// one of its K bits has an APP LLR of exactly 0 (a tie: the inputs left that
    /// bit undecided, as parity alone does at high code rates with rv 2, or
    /// log-MAP inputs below its metrics' resolution). A tie's hard decision would
    /// be 0 by convention, and the all-zero word passes every CRC of TS 36.212
    /// (its registers start at 0): such a block is decoded all the same but never
    /// reports crc_ok, never stops early, and fails its transport block's CRC.
    bool no_information = false;
};

class turbo_engine; // CPU or CUDA implementation, lib/core/turbo/

class lte_turbo_decoder
{
public:
    explicit lte_turbo_decoder(const turbo_decoder_config& config,
                               backend requested = backend::automatic);
    ~lte_turbo_decoder();
    lte_turbo_decoder(lte_turbo_decoder&&) noexcept;
    lte_turbo_decoder& operator=(lte_turbo_decoder&&) noexcept;

    const turbo_decoder_config& config() const { return m_config; }
    backend active_backend() const;

    /// Decodes code blocks of sizes K[b] (each a table size) in one call.
    /// llr: the blocks' inputs back to back (3 (K[b] + 4) floats each);
    /// bits: K[b] hard decisions each, back to back; app_llr (optional, may be
    /// nullptr): K[b] a-posteriori LLRs each; coded_extrinsic (optional): the
    /// input's layout (3 (K[b] + 4) each), every coded bit's a-posteriori LLR
    /// less the (saturated) LLR given for it, what decoding added: an iterative
    /// receiver's prior for the detector (tail bits and blocks without
    /// information: 0). Asking for it runs the scalar (CPU) or thread-per-window
    /// (CUDA) trellis, which also gives the parity bits' a-posteriori LLRs.
    /// Throws std::invalid_argument on an unsupported K or a non-finite LLR
    /// (naming the block). Finite LLRs beyond +-k_turbo_llr_limit are saturated;
    /// the outputs are always finite.
    std::vector<turbo_block_result> decode(const std::vector<int>& K,
                                           const float* llr,
                                           uint8_t* bits,
                                           float* app_llr = nullptr,
                                           float* coded_extrinsic = nullptr);

    /// Device memory, asynchronous on `stream` (CUDA backend only, else
    /// std::logic_error): the same decoding with llr, bits and app_llr (may be nullptr)
    /// on the device. Per-block results are not returned; an input error is reported by
    /// the next check_device_status.
    void decode_device(const std::vector<int>& K,
                       const float* d_llr,
                       uint8_t* d_bits,
                       float* d_app_llr,
                       cuda_stream_t stream,
                       float* d_coded_extrinsic = nullptr);
    void check_device_status(cuda_stream_t stream);

    /// The per-block results of the last decode_device, in device memory (one entry
    /// per code block of its batch, valid on its stream until the next decode):
    /// iterations run (nullptr without early termination, where every block runs
    /// config().iterations), crc_ok and no_information (0 or 1 each), as decode()
    /// returns them. CUDA backend only, else std::logic_error.
    struct device_block_results {
        const int* iterations = nullptr;
        const uint8_t* crc_ok = nullptr;
        const uint8_t* no_information = nullptr;
    };
    device_block_results device_results() const;

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
    /// Throws std::invalid_argument: A, G, Qm in {1,2,4,6,8,10}, NL, rv, G a
    /// multiple of NL*Qm, at least one symbol per code block. (The encoder and
    /// the rate matching formulas work at any code rate.)
    void validate() const;
    /// validate(), and G large enough that every code block r gets at least as
    /// many coded bits as the information and CRC bits it carries (E_r >= K_r - F_r,
    /// code rate <= 1): with fewer the bits cannot be recovered even without
    /// noise, and the turbo decoder would see fewer non-zero LLRs than K and
    /// report no information. The message names the smallest G that would do.
    /// transport_block_decoder (and so the tb_decoder block) calls it.
    void validate_for_decoding() const;
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
    /// CRC24A of the transport block passed and every code block had information
    /// behind it (code_blocks_no_information == 0).
    bool crc_ok = false;
    int code_blocks = 0;
    /// code blocks whose CRC24B passed (C > 1), or C if crc_ok when C == 1
    int code_blocks_crc_ok = 0;
    /// code blocks with turbo_block_result::no_information
    int code_blocks_no_information = 0;
    int max_iterations = 0; ///< most iterations any code block used
};

class transport_block_device_engine; // lib/core/turbo/transport_block_device.h
namespace detail {
struct extrinsic_positions; // lib/core/turbo/transport_block_decoder.cc
}

/// Decodes many transport blocks of one format per call: all their code blocks
/// go to the turbo decoder in one batch (one GPU launch sequence).
class transport_block_decoder
{
public:
    /// The decoder's early_termination is set per code block (CRC24B, or CRC24A
    /// for C == 1). Where the rate matching leaves few parity bits per trellis
    /// stage (code rates above ~0.8), a training > 0 is raised to 8 K / (E - K)
    /// stages (about 4 parity bits of each constituent; ~150 stages at rate 0.93)
    /// and the window to at least the training, so that parallel windows decode
    /// what one window decodes; training = 0 is left alone.
    transport_block_decoder(const transport_block_format& format,
                            turbo_decoder_config config,
                            backend requested = backend::automatic);
    ~transport_block_decoder();
    transport_block_decoder(transport_block_decoder&&) noexcept;
    transport_block_decoder& operator=(transport_block_decoder&&) noexcept;

    const transport_block_format& format() const { return m_format; }
    backend active_backend() const { return m_decoder.active_backend(); }
    /// Changes the format's redundancy version (0..3, else std::invalid_argument)
    /// for the calls that follow: HARQ retransmissions of one format differ only in
    /// rv. The device path keeps its tables of each rv once made.
    void set_redundancy_version(int rv);

    /// llr: count * G LLRs; a: count * A decoded bits. extrinsic (optional):
    /// count * G LLRs in llr's order, each transmitted bit's a-posteriori LLR
    /// less its received LLR (saturated as the decoder does): what decoding
    /// added to it, the prior an iterative receiver gives its detector; copies
    /// of a repeated bit each get the others' LLRs and the code's information.
    /// 0 for the bits of a code block without information. Host memory, on
    /// either backend.
    std::vector<transport_block_result>
    decode(const float* llr, size_t count, uint8_t* a, float* extrinsic = nullptr);

    /// Device memory, asynchronous on `stream` (CUDA backend only, else
    /// std::logic_error): d_llr holds count * G LLRs, float or int8 with `scale`
    /// (LLR = scale * value; finite and > 0, else std::invalid_argument: a
    /// detector's int8 output at int8_scale s is read with scale = 1 / s);
    /// d_a gets count * A decoded bits (bytes 0/1). De-rate-matching (int8
    /// dequantised as it is read), turbo decoding, code block desegmentation and
    /// the transport block CRC all run on the GPU: no host round trip. Decodes
    /// what decode() decodes from the same floats (from scale * value for int8) to
    /// the same bits. count == 0 does nothing; null pointers otherwise throw
    /// std::invalid_argument. Buffers are made on the first call of a size and
    /// reused; one decoder serves one call at a time (a call on another stream
    /// waits for the previous one). d_extrinsic (may be null): count * G float
    /// extrinsic LLRs of the transmitted bits, what decode() gives for the same
    /// floats (scale * value for int8), float op for float op, computed on the
    /// GPU (an iterative receiver's priors).
    void decode_device(const float* d_llr,
                       size_t count,
                       uint8_t* d_a,
                       cuda_stream_t stream,
                       float* d_extrinsic = nullptr);
    void decode_device(const int8_t* d_llr,
                       float scale,
                       size_t count,
                       uint8_t* d_a,
                       cuda_stream_t stream,
                       float* d_extrinsic = nullptr);
    /// Waits for `stream` and returns the results of the last decode_device call,
    /// as decode() returns them for the same input; a non-finite input LLR throws
    /// std::invalid_argument naming its code block (counted over the batch), as
    /// decode() does. CUDA backend only, else std::logic_error.
    std::vector<transport_block_result> device_results(cuda_stream_t stream);

private:
    void require_cuda(const char* call) const; ///< std::logic_error on another backend
    static void require_buffers(const void* d_llr, const uint8_t* d_a);
    transport_block_device_engine& device_engine();

    transport_block_format m_format;
    code_block_segmentation m_seg;
    std::vector<int> m_E;
    lte_turbo_decoder m_decoder;
    /// Per rv: where the transmitted positions' bits enter the decoder (the
    /// extrinsic output's map; made on the first decode that asks for it).
    std::map<int, std::unique_ptr<detail::extrinsic_positions>> m_extrinsic_positions;
    const detail::extrinsic_positions& extrinsic_positions();
    std::vector<rate_matcher> m_matchers; // one per distinct K (at most two)
    std::vector<float> m_block_llr, m_coded_extrinsic;
    std::vector<uint8_t> m_block_bits;
    std::unique_ptr<transport_block_device_engine> m_device; // made on first use
};

} // namespace mimo_gpu
