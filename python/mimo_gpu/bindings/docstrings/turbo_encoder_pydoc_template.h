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


static const char* __doc_gr_mimo_gpu_turbo_encoder =
    R"doc(LTE turbo encoder (TS 36.212 5.1.3.2): bits (bytes 0/1) in, 3(K+4) coded bits [d0 | d1 | d2] per code block out.
Without a length tag key every K bits are one code block; with a key each packet is one code block of K = its length (a table K <= K), its output packet tagged with the same key.)doc";


static const char* __doc_gr_mimo_gpu_turbo_encoder_turbo_encoder_0 = R"doc()doc";


static const char* __doc_gr_mimo_gpu_turbo_encoder_turbo_encoder_1 = R"doc()doc";


static const char* __doc_gr_mimo_gpu_turbo_encoder_make =
    R"doc(Make an encoder. K: code block size of table 5.1.3-3 (with a key: the largest); length_tag_key: "" for a plain stream.)doc";


static const char* __doc_gr_mimo_gpu_turbo_encoder_K =
    R"doc(The code block size (with a key: the largest).)doc";


static const char* __doc_gr_mimo_gpu_turbo_encoder_length_tag_key =
    R"doc(The packet length tag key ("" for a plain stream).)doc";
