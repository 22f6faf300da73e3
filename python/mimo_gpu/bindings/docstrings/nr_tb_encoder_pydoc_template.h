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


static const char* __doc_gr_mimo_gpu_nr_tb_encoder =
    R"doc(5G NR transport block encoder (38.212: CRC, base graph, segmentation, LDPC, rate matching) on PDUs: "in" (meta, u8vector of A bits) -> "out" (meta, u8vector of G coded bits). A bad PDU is logged and dropped.)doc";


static const char* __doc_gr_mimo_gpu_nr_tb_encoder_nr_tb_encoder_0 = R"doc()doc";


static const char* __doc_gr_mimo_gpu_nr_tb_encoder_nr_tb_encoder_1 = R"doc()doc";


static const char* __doc_gr_mimo_gpu_nr_tb_encoder_make =
    R"doc(Make an encoder. A, G; Qm (1, 2, 4, 6, 8, 10); NL (1..4); rv (0..3); base_graph: 0 chosen by 38.212 7.2.2, or 1, 2.)doc";


static const char* __doc_gr_mimo_gpu_nr_tb_encoder_set_rv =
    R"doc(Sets the redundancy version (0..3) of the following PDUs.)doc";


static const char* __doc_gr_mimo_gpu_nr_tb_encoder_rv =
    R"doc(The redundancy version.)doc";


static const char* __doc_gr_mimo_gpu_nr_tb_encoder_code_blocks =
    R"doc(Code blocks per transport block.)doc";


static const char* __doc_gr_mimo_gpu_nr_tb_encoder_lifting_size =
    R"doc(The lifting size Zc.)doc";
