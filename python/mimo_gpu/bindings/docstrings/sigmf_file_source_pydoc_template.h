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


static const char* __doc_gr_mimo_gpu_sigmf_file_source =
    R"doc(Plays a multi-antenna SigMF recording: one complex output per channel (cf32/ci16, interleaved or per channel).)doc";

static const char* __doc_gr_mimo_gpu_sigmf_file_source_make =
    R"doc(Make a source: path (BASE, BASE.sigmf-meta or BASE.sigmf-data), channels (must equal the recording's), repeat.)doc";

static const char* __doc_gr_mimo_gpu_sigmf_file_source_sample_rate =
    R"doc(The recording's sample rate.)doc";

static const char* __doc_gr_mimo_gpu_sigmf_file_source_samples_per_channel =
    R"doc(Samples per channel in the recording.)doc";
