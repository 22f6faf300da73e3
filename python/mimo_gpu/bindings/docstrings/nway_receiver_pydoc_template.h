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


static const char* __doc_gr_mimo_gpu_nway_receiver = R"doc(qr_decomposition followed by nway_detector: H, y in; LLRs out.)doc";


static const char* __doc_gr_mimo_gpu_nway_receiver_nway_receiver_0 = R"doc()doc";


static const char* __doc_gr_mimo_gpu_nway_receiver_nway_receiver_1 = R"doc()doc";


static const char* __doc_gr_mimo_gpu_nway_receiver_make = R"doc(Make the receiver; parameters as nway_detector (the QR uses orders = passes).)doc";


static const char* __doc_gr_mimo_gpu_nway_receiver_set_noise_var = R"doc(Set N0 (> 0) of the detector.)doc";


static const char* __doc_gr_mimo_gpu_nway_receiver_set_llr_clip = R"doc(Clip LLRs to +-llr_clip (0: off).)doc";

