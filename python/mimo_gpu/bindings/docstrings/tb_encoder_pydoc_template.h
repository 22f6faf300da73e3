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


static const char* __doc_gr_mimo_gpu_tb_encoder =
    R"doc(LTE transport block encoder on PDUs: CRC24A, segmentation (CRC24B), turbo coding, rate matching (TS 36.212 5.1).
Message port "in": (meta, u8vector of A bits); "out": (meta, u8vector of G coded bits). A PDU of another length is logged and dropped.)doc";


static const char* __doc_gr_mimo_gpu_tb_encoder_tb_encoder_0 = R"doc()doc";


static const char* __doc_gr_mimo_gpu_tb_encoder_tb_encoder_1 = R"doc()doc";


static const char* __doc_gr_mimo_gpu_tb_encoder_make =
    R"doc(Make an encoder. A: transport block bits; G: coded bits (a multiple of NL*Qm); Qm: 1, 2, 4, 6, 8 or 10; NL: layers; rv: redundancy version 0..3.)doc";


static const char* __doc_gr_mimo_gpu_tb_encoder_set_rv =
    R"doc(Set the redundancy version (0..3).)doc";


static const char* __doc_gr_mimo_gpu_tb_encoder_rv = R"doc(The redundancy version.)doc";
