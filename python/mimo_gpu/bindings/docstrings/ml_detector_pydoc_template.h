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


static const char* __doc_gr_mimo_gpu_ml_detector = R"doc(Exhaustive max-log ML soft detector: H, y in; LLRs (float, vlen nt*Q) out. A "noise_var" tag on y sets N0.)doc";


static const char* __doc_gr_mimo_gpu_ml_detector_ml_detector_0 = R"doc()doc";


static const char* __doc_gr_mimo_gpu_ml_detector_ml_detector_1 = R"doc()doc";


static const char* __doc_gr_mimo_gpu_ml_detector_make = R"doc(Make an ML detector (refuses M^nt > 2^24). noise_var: N0 > 0; backend: auto, cpu or cuda.)doc";


static const char* __doc_gr_mimo_gpu_ml_detector_set_noise_var = R"doc(Set N0 (> 0).)doc";


static const char* __doc_gr_mimo_gpu_ml_detector_noise_var = R"doc(N0 in force.)doc";


static const char* __doc_gr_mimo_gpu_ml_detector_active_backend = R"doc(The backend in use: "cpu" or "cuda".)doc";

