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


static const char* __doc_gr_mimo_gpu_qr_decomposition =
    R"doc(Batched QR of the real-valued MIMO model for `orders` detection orders: H, y in; QR items (float, vlen orders*2nt*(2nt+1)) out.)doc";


static const char* __doc_gr_mimo_gpu_qr_decomposition_qr_decomposition_0 = R"doc()doc";


static const char* __doc_gr_mimo_gpu_qr_decomposition_qr_decomposition_1 = R"doc()doc";


static const char* __doc_gr_mimo_gpu_qr_decomposition_make =
    R"doc(Make a QR block. orders: 1..nt; backend: auto, cpu or cuda; max_batch: most problems per core call.)doc";


static const char* __doc_gr_mimo_gpu_qr_decomposition_active_backend =
    R"doc(The backend in use: "cpu" or "cuda".)doc";


static const char* __doc_gr_mimo_gpu_qr_decomposition_erased_problems =
    R"doc(Problems erased so far (bad input), exact.)doc";
