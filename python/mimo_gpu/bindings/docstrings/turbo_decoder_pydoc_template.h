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


static const char* __doc_gr_mimo_gpu_turbo_decoder =
    R"doc(LTE turbo decoder (max-log-MAP or log-MAP, parallel windows): LLRs (float, positive means 0), 3(K+4) per code block [d0 | d1 | d2], in; K hard bits (bytes) per code block out.
Each call decodes all complete code blocks waiting (up to max_blocks) in one batch. Tags on the first bit of each block: "iterations" (long), with a crc "crc_ok" (bool), and "no_information" (bool true) on a block with fewer than K non-zero LLRs (crc_ok is then false). Finite LLRs are saturated to +-1e4; untagged or left-over LLRs are dropped with a warning and counted by dropped_llrs().)doc";


static const char* __doc_gr_mimo_gpu_turbo_decoder_turbo_decoder_0 = R"doc()doc";


static const char* __doc_gr_mimo_gpu_turbo_decoder_turbo_decoder_1 = R"doc()doc";


static const char* __doc_gr_mimo_gpu_turbo_decoder_make =
    R"doc(Make a decoder. K: code block size (with a length tag key: the largest; each packet of 3(K+4) LLRs is one block); algorithm: max-log-map or log-map; iterations: 1..32; extrinsic_scale: (0, 1]; window: trellis stages per parallel window; crc: none, crc24a, crc24b, crc16 or crc8; backend: auto, cpu or cuda; max_blocks: most code blocks per decoder call.)doc";


static const char* __doc_gr_mimo_gpu_turbo_decoder_K =
    R"doc(The code block size (with a key: the largest).)doc";


static const char* __doc_gr_mimo_gpu_turbo_decoder_set_iterations =
    R"doc(Set the full iterations (1..32).)doc";


static const char* __doc_gr_mimo_gpu_turbo_decoder_iterations =
    R"doc(Full iterations per code block.)doc";


static const char* __doc_gr_mimo_gpu_turbo_decoder_set_extrinsic_scale =
    R"doc(Set the max-log-MAP extrinsic scaling ((0, 1]).)doc";


static const char* __doc_gr_mimo_gpu_turbo_decoder_extrinsic_scale =
    R"doc(The max-log-MAP extrinsic scaling.)doc";


static const char* __doc_gr_mimo_gpu_turbo_decoder_active_backend =
    R"doc(The backend in use: "cpu" or "cuda".)doc";


static const char* __doc_gr_mimo_gpu_turbo_decoder_dropped_llrs =
    R"doc(Input LLRs dropped so far without being decoded: packets of a bad length or with a non-finite LLR, untagged LLRs, and, once the flowgraph has stopped, a partial code block or packet left at the end.)doc";
