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


static const char* __doc_gr_mimo_gpu_mimo_detector =
    R"doc(Soft MIMO detector of any registered family (mimo_detector.algorithms()): H (vlen nr*nt, one per S received vectors) and y (vlen nr) in, LLRs (float, vlen nt*Q, positive means bit 0) out. A "noise_var" tag on y sets N0 from the first symbol of its channel.)doc";


static const char* __doc_gr_mimo_gpu_mimo_detector_make =
    R"doc(Make a detector: algorithm (nway, ml, mtt, ot, ...), nr, nt, modulation, parameters ("passes=2,llr_clip=8"; the family's defaults for the rest), noise_var N0 > 0, symbols_per_channel S >= 1, backend (auto, cpu, cuda), max_batch. Unknown names, parameters or shapes the family does not take raise ValueError.)doc";


static const char* __doc_gr_mimo_gpu_mimo_detector_algorithms =
    R"doc(The registered detector families.)doc";


static const char* __doc_gr_mimo_gpu_mimo_detector_algorithm =
    R"doc(This block's detector family.)doc";


static const char* __doc_gr_mimo_gpu_mimo_detector_set_noise_var =
    R"doc(Set N0 (> 0, finite in single precision).)doc";


static const char* __doc_gr_mimo_gpu_mimo_detector_noise_var =
    R"doc(The N0 in force (before any tag in flight).)doc";


static const char* __doc_gr_mimo_gpu_mimo_detector_set_parameter =
    R"doc(Change a parameter the family allows to change while running (e.g. llr_clip).)doc";


static const char* __doc_gr_mimo_gpu_mimo_detector_parameter =
    R"doc(A parameter's value.)doc";


static const char* __doc_gr_mimo_gpu_mimo_detector_active_backend =
    R"doc("cpu" or "cuda".)doc";
static const char* __doc_gr_mimo_gpu_mimo_detector_erased_problems =
    R"doc(Received vectors erased so far (non-finite input or a rank-deficient H): LLRs 0, tagged "erasure", counted exactly.)doc";
static const char* __doc_gr_mimo_gpu_mimo_detector_set_max_wait_ms =
    R"doc(Longest wait (ms) of fewer received vectors than max_batch before they are detected all the same (default 5).)doc";
static const char* __doc_gr_mimo_gpu_mimo_detector_max_wait_ms =
    R"doc(Longest wait (ms) of a partial batch.)doc";
static const char* __doc_gr_mimo_gpu_mimo_detector_device_buffers =
    R"doc(Whether H, y and the LLRs live in GPU memory.)doc";
