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


static const char* __doc_gr_mimo_gpu_idd_receiver =
    R"doc(Iterative detection and decoding: H and y in, decoded transport blocks out; a detector that takes a-priori LLRs and the LTE transport-block decoder exchange extrinsic LLRs for up to outer_iterations passes.
Input 0: H (complex, vlen nr*nt, row-major), one per symbols_per_channel received vectors. Input 1: y (complex, vlen nr); every G / (nt*Q) of them carry one transport block (whole channels). Output 0: its A decoded bits (uint8 0/1, vlen A), tagged "idd_iterations" (the passes it took) and, when its CRC24A fails, "crc_ok" (False).
A "noise_var" tag on y sets N0 from the transport block it falls in (at its first received vector) or the next one. Bad received vectors are erased: their block fails its CRC and the stream goes on.)doc";


static const char* __doc_gr_mimo_gpu_idd_receiver_idd_receiver_0 = R"doc()doc";


static const char* __doc_gr_mimo_gpu_idd_receiver_idd_receiver_1 = R"doc()doc";


static const char* __doc_gr_mimo_gpu_idd_receiver_make =
    R"doc(Make the receiver. algorithm: a family that takes a-priori LLRs (mmse, kbest, ml, sumis); nr, nt, modulation; A, G: the transport block format (Qm from the modulation, NL = min(nt, 4); G a multiple of nt*Qm); parameters: the family's, "name=value,..."; rv; outer_iterations: 1..16; turbo_iterations: the decoder's iterations per pass (turbo 1..32, LDPC 1..100); noise_var: N0; symbols_per_channel; backend: auto, cpu or cuda; max_blocks: most transport blocks per call; code: "turbo" (LTE, the default) or "ldpc" (NR).)doc";


static const char* __doc_gr_mimo_gpu_idd_receiver_algorithm =
    R"doc(The detector family.)doc";


static const char* __doc_gr_mimo_gpu_idd_receiver_active_backend =
    R"doc(The backend the detector runs on.)doc";


static const char* __doc_gr_mimo_gpu_idd_receiver_outer_iterations =
    R"doc(Most detector-decoder passes per transport block.)doc";


static const char* __doc_gr_mimo_gpu_idd_receiver_set_outer_iterations =
    R"doc(Sets the most passes (1..16) from the next call on.)doc";


static const char* __doc_gr_mimo_gpu_idd_receiver_set_noise_var =
    R"doc(Sets N0 (> 0) until a noise_var tag says otherwise.)doc";


static const char* __doc_gr_mimo_gpu_idd_receiver_noise_var = R"doc(N0 in force.)doc";


static const char* __doc_gr_mimo_gpu_idd_receiver_blocks =
    R"doc(Transport blocks decoded so far.)doc";


static const char* __doc_gr_mimo_gpu_idd_receiver_crc_failures =
    R"doc(Transport blocks whose CRC24A failed.)doc";


static const char* __doc_gr_mimo_gpu_idd_receiver_passes =
    R"doc(Detector-decoder passes of all transport blocks so far.)doc";


static const char* __doc_gr_mimo_gpu_idd_receiver_dropped_vectors =
    R"doc(Received vectors at the end of the stream that made no whole transport block.)doc";
