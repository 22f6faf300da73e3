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


static const char* __doc_gr_mimo_gpu_nway_detector =
    R"doc(N-way parallel SSFE soft detector: QR items (orders = passes) in, LLRs (float, vlen nt*Q, positive means 0) out.
A "noise_var" tag sets N0 from its item on.)doc";


static const char* __doc_gr_mimo_gpu_nway_detector_nway_detector_0 = R"doc()doc";


static const char* __doc_gr_mimo_gpu_nway_detector_nway_detector_1 = R"doc()doc";


static const char* __doc_gr_mimo_gpu_nway_detector_make =
    R"doc(Make a detector. passes: 1..nt; noise_var: N0 > 0; llr_clip (default 8; an unreached counter-hypothesis gets +-llr_clip): 0 disables clipping; backend: auto, cpu or cuda.)doc";


static const char* __doc_gr_mimo_gpu_nway_detector_set_noise_var =
    R"doc(Set N0 (> 0).)doc";


static const char* __doc_gr_mimo_gpu_nway_detector_noise_var = R"doc(N0 in force.)doc";


static const char* __doc_gr_mimo_gpu_nway_detector_set_llr_clip =
    R"doc(Clip LLRs to +-llr_clip (0: off).)doc";


static const char* __doc_gr_mimo_gpu_nway_detector_llr_clip =
    R"doc(The LLR clip (0: off).)doc";


static const char* __doc_gr_mimo_gpu_nway_detector_active_backend =
    R"doc(The backend in use: "cpu" or "cuda".)doc";


static const char* __doc_gr_mimo_gpu_nway_detector_erased_problems =
    R"doc(Problems erased so far (bad input), exact.)doc";
