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


static const char* __doc_gr_mimo_gpu_tb_decoder =
    R"doc(LTE transport block decoder on PDUs, batched: every PDU waiting (up to max_blocks) is decoded in one call.
Message port "in": (meta, f32vector of G LLRs); "out": (meta + crc_ok, code_blocks, code_blocks_crc_ok, code_blocks_no_information, iterations, u8vector of A bits); crc_ok is false when a code block had fewer non-zero LLRs than K. A PDU of another length or with a non-finite LLR is logged and dropped.)doc";


static const char* __doc_gr_mimo_gpu_tb_decoder_tb_decoder_0 = R"doc()doc";


static const char* __doc_gr_mimo_gpu_tb_decoder_tb_decoder_1 = R"doc()doc";


static const char* __doc_gr_mimo_gpu_tb_decoder_make =
    R"doc(Make a decoder. A, G, Qm, NL, rv: the format, as tb_encoder; algorithm: max-log-map or log-map; iterations: 1..32; extrinsic_scale: (0, 1]; window: trellis stages per parallel window; backend: auto, cpu or cuda; max_blocks: most transport blocks per decoder call.)doc";


static const char* __doc_gr_mimo_gpu_tb_decoder_set_rv =
    R"doc(Set the redundancy version (0..3).)doc";


static const char* __doc_gr_mimo_gpu_tb_decoder_rv = R"doc(The redundancy version.)doc";


static const char* __doc_gr_mimo_gpu_tb_decoder_set_iterations =
    R"doc(Set the most full iterations per code block (1..32).)doc";


static const char* __doc_gr_mimo_gpu_tb_decoder_iterations =
    R"doc(The most full iterations per code block.)doc";


static const char* __doc_gr_mimo_gpu_tb_decoder_set_extrinsic_scale =
    R"doc(Set the max-log-MAP extrinsic scaling ((0, 1]).)doc";


static const char* __doc_gr_mimo_gpu_tb_decoder_extrinsic_scale =
    R"doc(The max-log-MAP extrinsic scaling.)doc";


static const char* __doc_gr_mimo_gpu_tb_decoder_active_backend =
    R"doc(The backend in use: "cpu" or "cuda".)doc";
