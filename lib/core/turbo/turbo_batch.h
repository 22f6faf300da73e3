// How a batch of code blocks is laid out for decoding (CPU and CUDA alike):
// per-block and per-window descriptors, and the flat buffers every half
// iteration reads and writes. decode_window() is the unit of parallel work.
#pragma once

#include "../runtime/host_device.h"
#include "turbo_trellis.h"

#include <cstddef>
#include <cstdint>

namespace mimo_gpu {
namespace detail {

struct turbo_block_desc {
    int K;
    int windows;
    size_t llr_offset;    ///< into the input: 3 (K + 4) floats [d0 | d1 | d2]
    size_t bit_offset;    ///< into per-bit buffers (extrinsics, APP, alpha scratch / 8)
    size_t window_offset; ///< first window of the block in the window list
    size_t pi_offset;     ///< the block's QPP permutation in the permutation table
};

struct turbo_window_desc {
    int block;
    window_span span; ///< its stages, training prefixes included (turbo_batch_plan)
};

/// Boundary state metrics of one window, for each constituent decoder and
/// each of two buffers (read one, write the other, alternating per
/// iteration, so windows decoded at once never race).
constexpr int k_boundary_floats =
    2 /*decoders*/ * 2 /*buffers*/ * 2 /*alpha, beta*/ * k_states;

struct turbo_batch_view {
    const turbo_block_desc* blocks;
    const turbo_window_desc* windows;
    size_t n_windows;
    const float* llr;
    const int32_t* permutations;
    float* extrinsic1; ///< per bit: decoder 1's output, decoder 2's a-priori
    float* extrinsic2; ///< per bit: decoder 2's output, decoder 1's a-priori
    float* app;        ///< per bit: a-posteriori LLR after decoder 2
    /// k_stage_words * max_window * n_windows floats (stage_scratch layout)
    float* scratch;
    /// Window w's part of `scratch`.
    MIMO_HD stage_scratch scratch_of(size_t w) const
    {
        return stage_scratch{ scratch + w, n_windows };
    }
    float* boundaries;   ///< k_boundary_floats per window
    const uint8_t* done; ///< per block: early termination reached, skip it
    float extrinsic_scale;
    /// Iteration whose APP LLRs are the output; earlier iterations write them
    /// only for the early-termination CRC (decoder 2's APP writes are scattered,
    /// so skipping them saves memory traffic).
    int final_iteration;
    bool app_every_iteration;
    /// Per block: decoder 1's then decoder 2's parity a-posteriori LLRs (K each,
    /// at 2 * bit_offset), written every iteration when not null.
    float* parity_app = nullptr;
};

/// What one window of one half iteration reads and writes: its inputs and
/// outputs, its starting metrics (from the neighbours' previous iteration, the
/// encoder's start state or the tail) and where its own boundary metrics go.
struct window_job {
    half_iteration_io io;
    window_span span;
    float alpha_start[k_states], beta_end[k_states];
    float* alpha_out;
    float* beta_out;
};

/// Sets up window w for decoder `decoder` (0 or 1) of iteration `iteration`;
/// false when its code block has already passed its CRC (nothing to do).
template <bool LogMap>
MIMO_HD bool prepare_window(
    const turbo_batch_view& v, size_t w, int decoder, int iteration, window_job& job)
{
    const turbo_window_desc win = v.windows[w];
    const turbo_block_desc blk = v.blocks[win.block];
    if (v.done[win.block])
        return false;
    const int K = blk.K, D = K + 4;
    const float* d0 = v.llr + blk.llr_offset;
    const float* d1 = d0 + D;
    const float* d2 = d1 + D;

    half_iteration_io& io = job.io;
    io.K = K;
    io.systematic = d0;
    io.extrinsic_scale = v.extrinsic_scale;
    if (decoder == 0) {
        io.parity = d1;
        io.apriori = v.extrinsic2 + blk.bit_offset;
        io.extrinsic = v.extrinsic1 + blk.bit_offset;
        io.app = nullptr;
        io.parity_app = v.parity_app ? v.parity_app + 2 * blk.bit_offset : nullptr;
        io.pi = nullptr;
        const float t[6] = { d0[K], d1[K], d2[K], d0[K + 1], d1[K + 1], d2[K + 1] };
        for (int i = 0; i < 6; ++i)
            io.tail[i] = channel_llr(t[i]);
    } else {
        io.parity = d2;
        io.apriori = v.extrinsic1 + blk.bit_offset;
        io.extrinsic = v.extrinsic2 + blk.bit_offset;
        io.app = iteration == v.final_iteration || v.app_every_iteration
                     ? v.app + blk.bit_offset
                     : nullptr;
        io.parity_app = v.parity_app ? v.parity_app + 2 * blk.bit_offset + K : nullptr;
        io.pi = v.permutations + blk.pi_offset;
        const float t[6] = { d0[K + 2], d1[K + 2], d2[K + 2],
                             d0[K + 3], d1[K + 3], d2[K + 3] };
        for (int i = 0; i < 6; ++i)
            io.tail[i] = channel_llr(t[i]);
    }
    job.span = win.span;

    const int read = iteration & 1, write = read ^ 1;
    auto slot = [&](size_t window, int buffer, int beta) {
        return v.boundaries + window * k_boundary_floats +
               ((decoder * 2 + buffer) * 2 + beta) * k_states;
    };
    // A recursion that starts at the block's first stage (the first window, or a
    // training prefix reaching it) starts from the encoder's state 0; one that
    // starts at stage K from the tail; others from the neighbour's metrics there.
    if (win.span.first == 0) {
        for (int s = 0; s < k_states; ++s)
            job.alpha_start[s] = s == 0 ? 0.0f : k_impossible;
    } else {
        const float* a = slot(w - 1, read, 0);
        for (int s = 0; s < k_states; ++s)
            job.alpha_start[s] = a[s];
    }
    if (win.span.last == K) {
        tail_beta<LogMap>(io.tail, job.beta_end);
    } else {
        const float* b = slot(w + 1, read, 1);
        for (int s = 0; s < k_states; ++s)
            job.beta_end[s] = b[s];
    }
    job.alpha_out = slot(w, write, 0);
    job.beta_out = slot(w, write, 1);
    return true;
}

/// Window w of a half iteration by one thread (the CPU engine; the CUDA engine's
/// thread-per-window kernel).
template <bool LogMap, bool ParityApp = false>
MIMO_HD void decode_window(const turbo_batch_view& v,
                           size_t w,
                           int decoder,
                           int iteration,
                           const stage_scratch& scratch)
{
    window_job job;
    if (prepare_window<LogMap>(v, w, decoder, iteration, job))
        map_window<LogMap, ParityApp>(job.io,
                                      job.span,
                                      job.alpha_start,
                                      job.beta_end,
                                      job.alpha_out,
                                      job.beta_out,
                                      scratch);
}

/// The extrinsic LLR of input position i of block d (its 3 (K + 4) coded bits,
/// [d0 | d1 | d2] as the decoder takes them): the bit's a-posteriori LLR less
/// the LLR the decoder was given for it, i.e. what decoding added, which an
/// iterative receiver hands back to the detector as its prior. Tail bits: 0.
/// app: the block's systematic APP (natural order); parity_app: decoder 1's
/// then decoder 2's parity APP (K each).
MIMO_HD float coded_extrinsic(const turbo_block_desc& d,
                              const float* llr,
                              const float* app,
                              const float* parity_app,
                              int i)
{
    const int K = d.K, D = K + 4, stream = i / D, k = i % D;
    if (k >= K)
        return 0.0f;
    const float given = channel_llr(llr[d.llr_offset + size_t(i)]);
    const float post = stream == 0
                           ? app[d.bit_offset + size_t(k)]
                           : parity_app[2 * d.bit_offset + size_t(stream - 1) * K + k];
    return post - given;
}

} // namespace detail
} // namespace mimo_gpu
