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


static const char* __doc_gr_mimo_gpu_sigmf_file_sink =
    R"doc(Records channels complex streams as one SigMF recording (meta written at stop).)doc";

static const char* __doc_gr_mimo_gpu_sigmf_file_sink_make =
    R"doc(Make a sink: base, channels, sample_rate, center_frequency, format (cf32/ci16), full_scale, and optionally the frame (grid, nt, modulation, slots, data_symbols) and a description.)doc";

static const char* __doc_gr_mimo_gpu_sigmf_file_sink_samples_written =
    R"doc(Samples per channel written so far.)doc";


static const char* __doc_gr_mimo_gpu_sigmf_file_sink_values_clipped =
    R"doc(ci16: int16 values clipped so far (beyond full scale or not finite); the meta records the count.)doc";
