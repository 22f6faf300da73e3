// The 5G NR transport-block chain around LDPC (3GPP TS 38.212 7.2 / 5.2.2 /
// 5.4.2): transport block CRC, base graph selection, code block segmentation
// with CRC24B and filler bits, rate matching with the circular buffer and bit
// interleaving, and its inverse into a soft buffer. docs/ldpc.md.
#pragma once

#include <mimo_gpu/lte_turbo_decoder.h> // transport_block_result, shared with LTE
#include <mimo_gpu/nr_ldpc.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace mimo_gpu {

/// Code block segmentation of a transport block (38.212 7.2.1, 7.2.2, 5.2.2).
struct nr_segmentation {
    int A = 0;          ///< transport block bits
    int tb_crc = 0;     ///< its CRC: 24 (CRC24A, A > 3824) or 16 (CRC16)
    int B = 0;          ///< A + tb_crc
    int base_graph = 1; ///< 1 or 2
    int C = 1;          ///< code blocks
    int cb_crc = 0;     ///< CRC24B per code block: 24 when C > 1, else 0
    int K_prime = 0;    ///< bits of a code block before filler (its CRC included)
    int Kb = 22;        ///< base graph columns that Zc is chosen for
    int Zc = 0;         ///< lifting size
    int K = 0;          ///< code block bits with filler: 22 Zc (BG1) or 10 Zc (BG2)
    int F = 0;          ///< filler bits per code block, K - K'
    int N = 0;          ///< encoded bits per code block: 66 Zc (BG1) or 50 Zc (BG2)
    ldpc_code code() const { return { base_graph, Zc }; }
};

/// A transport block's format: A information bits sent as G coded bits over
/// NL layers of Qm-bit symbols, redundancy version rv.
struct nr_transport_block_format {
    int A = 0;
    int G = 0;
    int Qm = 2; ///< 1, 2, 4, 6, 8 or 10
    int NL = 1; ///< 1..4
    int rv = 0; ///< 0..3
    /// 0: chosen by 38.212 7.2.2 from A and the code rate R (below); 1 or 2: forced.
    int base_graph = 0;
    /// R of the base graph choice; 0: A / G.
    double code_rate = 0.0;

    /// Throws std::invalid_argument naming the bad value: A outside 1..1277992
    /// (38.214's largest TBS with 4 layers), G not a multiple of NL * Qm, a
    /// code block count the sizes do not divide, fewer than one symbol per code
    /// block, a base graph that cannot hold the code blocks.
    void validate() const;
    nr_segmentation segmentation() const;
    /// E_r, the coded bits of each code block (they sum to G).
    std::vector<int> rate_matched_sizes() const;
};

/// Rate matching of one code block (38.212 5.4.2, full circular buffer,
/// N_cb = N): bit selection from k0(rv), skipping filler bits, then bit
/// interleaving by Qm; and its inverse, which adds received LLRs into a soft
/// buffer of N values (so retransmissions combine: incremental redundancy,
/// Chase combining for the same rv). The buffer positions of the E sent bits
/// are worked out once per rv, at construction.
class nr_rate_matcher
{
public:
    /// seg: the code block's segmentation; E its coded bits, Qm bits per symbol.
    nr_rate_matcher(const nr_segmentation& seg, int E, int Qm);
    int E() const { return m_E; }
    /// k0 of Table 5.4.2.1-2 for rv 0..3.
    int k0(int rv) const;
    /// d: the encoder's N bits -> f: E bits.
    void match(const uint8_t* d, int rv, uint8_t* f) const;
    /// f_llr: E received LLRs (L = ln P(0)/P(1)) -> added into soft (N LLRs,
    /// the circular buffer; the filler positions are left alone).
    void dematch(const float* f_llr, int rv, float* soft) const;
    /// Whether d_k is a filler bit (not sent, known 0).
    bool is_filler(int k) const { return k >= m_filler_begin && k < m_filler_end; }
    /// The circular buffer position of each of the E sent bits (f's order).
    const std::vector<int>& positions(int rv) const;

private:
    std::vector<int> bit_selection(int rv) const;
    nr_segmentation m_seg;
    int m_E, m_Qm, m_filler_begin, m_filler_end;
    std::vector<int> m_positions[4]; ///< per rv
};

/// The whole transmit chain: A bits -> G bits (TB CRC, segmentation with
/// CRC24B and filler, LDPC encoding, rate matching, concatenation).
class nr_transport_block_encoder
{
public:
    explicit nr_transport_block_encoder(const nr_transport_block_format& format);
    const nr_transport_block_format& format() const { return m_format; }
    const nr_segmentation& segmentation() const { return m_seg; }
    void encode(const uint8_t* a, uint8_t* g) const;
    /// The code blocks before encoding (C of K bits, filler as 0), for tests.
    std::vector<uint8_t> code_blocks(const uint8_t* a) const;

private:
    nr_transport_block_format m_format;
    nr_segmentation m_seg;
    std::vector<nr_rate_matcher> m_matchers; ///< per code block (E differs)
    ldpc_encoder m_encoder;
};

namespace detail {
class nr_transport_block_device; // lib/core/ldpc/nr_transport_block_device.h
}

/// The receive chain: G LLRs -> A bits per transport block
/// (de-interleaving and de-rate-matching into each code block's soft buffer,
/// layered LDPC decoding, desegmentation, CRC24B per code block when C > 1,
/// the transport block CRC). A transport block passes only when every code
/// block's hard decisions satisfy its parity checks and the CRCs pass. A code
/// block decodes only from information: with
/// fewer non-zero soft values than its K' unknown bits it counts as without
/// information and its transport block fails (an all-zero input would decode
/// to the all-zero codeword, whose CRCs pass).
class nr_transport_block_decoder
{
public:
    nr_transport_block_decoder(const nr_transport_block_format& format,
                               const ldpc_decoder_config& decoder = {},
                               backend requested = backend::automatic);
    ~nr_transport_block_decoder();
    nr_transport_block_decoder(nr_transport_block_decoder&&) noexcept;
    nr_transport_block_decoder& operator=(nr_transport_block_decoder&&) noexcept;
    backend active_backend() const { return m_decoder.active_backend(); }
    const nr_transport_block_format& format() const { return m_format; }
    const nr_segmentation& segmentation() const { return m_seg; }
    /// The rv of the following transmissions, 0..3.
    void set_redundancy_version(int rv);
    /// LLRs of one transport block's HARQ soft buffer: C * N.
    size_t soft_buffer_size() const { return size_t(m_seg.C) * size_t(m_seg.N); }

    /// llr: count * G LLRs (L = ln P(0)/P(1)); a: count * A bits. soft
    /// (optional): count soft buffers of soft_buffer_size() LLRs that the
    /// caller keeps per HARQ process, zero before the first transmission: this
    /// transmission is added into them and they are decoded, so retransmissions
    /// combine (incremental redundancy across rv, Chase combining for one rv).
    /// Null: each block decodes from this transmission alone. A non-finite LLR,
    /// or a soft buffer that is not finite, throws std::invalid_argument naming
    /// its transport block: nothing decoded, no soft buffer changed. Received
    /// copies are bounded to +-1e30 each, so sums of huge LLRs stay finite.
    /// extrinsic (optional): count * G LLRs in llr's order, each sent bit's
    /// a-posteriori LLR less its received LLR (an iterative receiver's prior for
    /// its detector); 0 for code blocks without information.
    std::vector<transport_block_result> decode(const float* llr,
                                               size_t count,
                                               uint8_t* a,
                                               float* soft = nullptr,
                                               float* extrinsic = nullptr);

    /// Device memory, asynchronous on `stream` (CUDA backend only, else
    /// std::logic_error): d_llr count * G LLRs, float or int8 read as
    /// scale * value (finite, > 0); d_a count * A bits; d_soft (optional)
    /// count soft buffers of soft_buffer_size() in device memory, as decode()
    /// takes them. De-rate-matching, LDPC decoding, desegmentation and the
    /// CRCs run on the GPU: decodes what decode() decodes from the same floats
    /// to the same bits, results and soft buffers. A batch with a NaN or Inf
    /// LLR (or a soft buffer that is not finite) changes no soft buffer and is
    /// reported by device_results, naming the transport block. One call at a
    /// time per decoder; count 0 decodes nothing (device_results: none).
    /// d_extrinsic (optional): count * G extrinsic LLRs of the received bits,
    /// what decode() gives for the same floats, float op for float op (an
    /// iterative receiver's priors on the GPU).
    void decode_device(const float* d_llr,
                       size_t count,
                       uint8_t* d_a,
                       cuda_stream_t stream,
                       float* d_soft = nullptr,
                       float* d_extrinsic = nullptr);
    void decode_device(const int8_t* d_llr,
                       float scale,
                       size_t count,
                       uint8_t* d_a,
                       cuda_stream_t stream,
                       float* d_soft = nullptr,
                       float* d_extrinsic = nullptr);
    /// Waits for `stream`: the last decode_device's results, as decode()
    /// returns them; a transport block with a non-finite LLR throws
    /// std::invalid_argument naming it.
    std::vector<transport_block_result> device_results(cuda_stream_t stream);

private:
    detail::nr_transport_block_device& device();
    nr_transport_block_format m_format;
    nr_segmentation m_seg;
    std::vector<nr_rate_matcher> m_matchers; ///< per code block (E differs)
    ldpc_decoder m_decoder;
    std::vector<float> m_soft, m_codeword, m_app;
    std::vector<uint8_t> m_bits;
    std::unique_ptr<detail::nr_transport_block_device> m_device; ///< made on first use
};

} // namespace mimo_gpu
