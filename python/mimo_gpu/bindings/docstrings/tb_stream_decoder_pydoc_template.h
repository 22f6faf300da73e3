/*
 * Copyright 2026 gr-mimo_gpu authors
 *
 * This file is part of gr-mimo_gpu
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 */
#include "pydoc_macros.h"
#define D(...) DOC(gr, mimo_gpu, __VA_ARGS__)
/*
  Docstrings of the Python bindings, written from the block header's comments
  (the build copies this template to <name>_pydoc.h).
 */


static const char* __doc_gr_mimo_gpu_tb_stream_decoder =
    R"doc(Transport-block decoder on a stream, LTE turbo or NR LDPC (code): a detector's LLRs in, the decoded information bits out, one item per transport block.
Input 0: LLRs (float, vlen llrs_per_item: the detector's nt*Q), positive means bit 0; every G of them, from the start of the stream, are one transport block. Output 0: its A decoded bits (uint8 0/1, vlen A). A block whose CRC fails gets a "crc_ok" tag (False) on its item and is counted. De-rate-matching, decoding, desegmentation and the CRCs run in one batch of up to max_blocks transport blocks per call.
With device_buffers (CUDA) the LLRs are read where the detector left them and the bits stay in GPU memory. Non-finite LLRs fail their transport block (logged), not the stream. LLRs left at the end of the stream that make no whole block are counted (dropped_llrs).)doc";


static const char* __doc_gr_mimo_gpu_tb_stream_decoder_tb_stream_decoder_0 = R"doc()doc";


static const char* __doc_gr_mimo_gpu_tb_stream_decoder_tb_stream_decoder_1 = R"doc()doc";


static const char* __doc_gr_mimo_gpu_tb_stream_decoder_make =
    R"doc(Make a decoder. A, G, Qm, NL, rv: the format, as tb_encoder; llrs_per_item: LLRs per input item (G a multiple of it); algorithm: "" (the code's default), max-log-map or log-map (turbo), offset-min-sum, normalized-min-sum or sum-product (ldpc); iterations: 0 (the code's default: 6 turbo, 10 ldpc) or the most per code block; extrinsic_scale: (0, 1] (turbo); window: trellis stages per parallel window (turbo); backend: auto, cpu or cuda; max_blocks: most transport blocks per decoder call; device_buffers: GPU-memory input and output (needs CUDA); code: "turbo" (LTE 36.212) or "ldpc" (NR 38.212).)doc";


static const char* __doc_gr_mimo_gpu_tb_stream_decoder_set_rv =
    R"doc(Set the redundancy version (0..3).)doc";


static const char* __doc_gr_mimo_gpu_tb_stream_decoder_rv =
    R"doc(The redundancy version.)doc";


static const char* __doc_gr_mimo_gpu_tb_stream_decoder_active_backend =
    R"doc(The backend in use: "cpu" or "cuda".)doc";


static const char* __doc_gr_mimo_gpu_tb_stream_decoder_device_buffers =
    R"doc(Whether the input and output are in GPU memory.)doc";


static const char* __doc_gr_mimo_gpu_tb_stream_decoder_code =
    R"doc(The channel code: "turbo" or "ldpc".)doc";


static const char* __doc_gr_mimo_gpu_tb_stream_decoder_blocks =
    R"doc(Transport blocks decoded so far.)doc";


static const char* __doc_gr_mimo_gpu_tb_stream_decoder_crc_failures =
    R"doc(Transport blocks whose CRC24A failed.)doc";


static const char* __doc_gr_mimo_gpu_tb_stream_decoder_dropped_llrs =
    R"doc(LLRs at the end of the stream that made no whole transport block.)doc";


static const char* __doc_gr_mimo_gpu_tb_stream_decoder_set_max_wait_ms =
    R"doc(Longest wait (ms) of fewer transport blocks than max_blocks before they are decoded all the same (default 5), as mimo_detector's.)doc";


static const char* __doc_gr_mimo_gpu_tb_stream_decoder_max_wait_ms =
    R"doc(Longest wait (ms) of a partial batch.)doc";


static const char* __doc_gr_mimo_gpu_tb_stream_decoder_max_blocks =
    R"doc(Transport blocks per decoder call at most (make's max_blocks, or the one chosen from G).)doc";
