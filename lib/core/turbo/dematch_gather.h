// De-rate-matching of a transport block's code blocks as a gather, one output
// LLR at a time: written once for the host (tests) and the transport block
// decoder's CUDA kernel, and float op for float op what rate_matcher::dematch
// followed by the decoder's filler fill computes, so the turbo decoder behind it
// decodes to the same bits on both paths.
#pragma once

#include "../runtime/host_device.h"
#include "turbo_trellis.h"

#include <mimo_gpu/lte_turbo_decoder.h>

#include <cstdint>
#include <vector>

namespace mimo_gpu {
namespace detail {

/// LLR of a filler bit: known to be 0, so certain: the largest the decoder takes.
constexpr float k_filler_llr = k_turbo_llr_limit;

/// A received LLR as de-rate-matching adds it to the other copies of its bit:
/// finite values bounded to +-1e30, so that a sum of copies (a block repeated
/// a million times over) never overflows to Inf, which the decoder would refuse
/// with the whole batch; the decoder saturates at k_turbo_llr_limit (1e4)
/// anyway. NaN and Inf pass unchanged, to be refused.
constexpr float k_received_llr_bound = 1e30f;
MIMO_HD float bounded_copy(float x)
{
    constexpr float largest = 3.40282347e38f; // FLT_MAX: Inf is not bounded
    if (x > k_received_llr_bound && x <= largest)
        return k_received_llr_bound;
    if (x < -k_received_llr_bound && x >= -largest)
        return -k_received_llr_bound;
    return x;
}

/// One code block of a transport block, for the gather.
struct dematch_block {
    int32_t table;    ///< its first-occurrence table (rate_matcher::dematch_order) in
                      ///< dematch_plan::tables
    int32_t outputs;  ///< 3 (K + 4): [d0 | d1 | d2]
    int32_t filler;   ///< d0 positions below this are filler bits
    int32_t period;   ///< bits sent per turn of the circular buffer
    int32_t E;        ///< coded bits of the block
    int64_t e_offset; ///< its first coded bit in the transport block's G
    int64_t d_offset; ///< its first output in the transport block's decoder input
};

/// The blocks of one transport block format and their tables for one rv. Code
/// blocks of equal K and filler share a table (at most three differ: K_minus,
/// K_plus, and block 0 with filler), so the tables stay small for any C.
struct dematch_plan {
    std::vector<dematch_block> blocks; ///< C; the same for every rv
    std::vector<int32_t> tables;
    size_t outputs = 0; ///< decoder input floats per transport block
};

/// Throws std::invalid_argument on a bad rv (the format itself has been validated).
dematch_plan
make_dematch_plan(const code_block_segmentation& seg, const std::vector<int>& E, int rv);

/// Received LLRs as floats,
struct float_llrs {
    const float* e;
    MIMO_HD float operator()(int64_t j) const { return e[j]; }
};
/// or int8 with a scale (LLR = scale * value), dequantised where they are read.
struct int8_llrs {
    const int8_t* e;
    float scale;
    MIMO_HD float operator()(int64_t j) const { return scale * float(e[j]); }
};

/// Decoder input s (< b.outputs) of block b from its transport block's received
/// LLRs `e` (G of them): k_filler_llr for a filler bit of d0; else the sum from
/// 0.0f, in transmission order, of every received copy of the bit (0 for a bit
/// never sent), each bounded (bounded_copy), the order in which dematch() adds them.
template <class Llrs>
MIMO_HD float dematch_gather(const int32_t* tables, const dematch_block& b, int s, Llrs e)
{
    if (s < b.filler)
        return k_filler_llr;
    float sum = 0.0f;
    const int first = tables[b.table + s];
    if (first >= 0)
        for (int64_t j = first; j < b.E; j += b.period)
            sum += bounded_copy(e(b.e_offset + j));
    return sum;
}

/// The plan's first-occurrence tables inverted, for the extrinsic LLRs of the
/// transmitted bits: coded bit j of code block r carries decoder input
/// inputs[offsets[r] + j % period] (-1: none, a filler bit). Blocks that share
/// a table share its inverse.
struct dematch_inverse {
    std::vector<int32_t> inputs;
    std::vector<int32_t> offsets; ///< per code block
};
dematch_inverse invert_dematch_plan(const dematch_plan& plan);

/// What decoding added to coded bit j of code block b (an iterative receiver's
/// prior for its detector): that bit's decoder input's a-posteriori LLR
/// (coded_extrinsic + the input, as the decoder saturates it) less the received
/// LLR of this copy (bounded and saturated alike); 0 for a filler bit and for a
/// code block without information. block_llr and coded_extrinsic point at the
/// transport block's decoder input, e at its G received LLRs. The host and the
/// CUDA kernel compute it float op for float op alike.
template <class Llrs>
MIMO_HD float coded_bit_extrinsic(const int32_t* inputs,
                                  int32_t offset,
                                  const dematch_block& b,
                                  int64_t j,
                                  Llrs e,
                                  const float* block_llr,
                                  const float* coded_extrinsic,
                                  bool no_information)
{
    const int32_t s = inputs[offset + int32_t(j % b.period)];
    if (no_information || s < 0)
        return 0.0f;
    const float received = channel_llr(bounded_copy(e(b.e_offset + j)));
    const float post =
        coded_extrinsic[b.d_offset + s] + channel_llr(block_llr[b.d_offset + s]);
    return saturate(post - received, k_turbo_extrinsic_limit);
}

} // namespace detail
} // namespace mimo_gpu
