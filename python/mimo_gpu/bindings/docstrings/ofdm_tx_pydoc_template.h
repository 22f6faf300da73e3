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


static const char* __doc_gr_mimo_gpu_ofdm_tx =
    R"doc(MIMO-OFDM transmitter: one frame of coded bits (uint8, vlen frame_bits) in, nt antenna sample streams out (frame_samples per frame).)doc";


static const char* __doc_gr_mimo_gpu_ofdm_tx_make =
    R"doc(Make a transmitter: grid preset (lte1.4 ... nr100), nt, modulation, slots, data_symbols; backend: auto, cpu or cuda; device_buffers: on CUDA, the antenna streams in GPU memory (the default).)doc";


static const char* __doc_gr_mimo_gpu_ofdm_tx_frame_bits =
    R"doc(Coded bits per frame (the input vector length).)doc";


static const char* __doc_gr_mimo_gpu_ofdm_tx_frame_samples =
    R"doc(Samples per frame and antenna.)doc";


static const char* __doc_gr_mimo_gpu_ofdm_tx_active_backend =
    R"doc(Where the frames are modulated: cpu or cuda.)doc";


static const char* __doc_gr_mimo_gpu_ofdm_tx_device_buffers =
    R"doc(Whether the antenna streams live in GPU memory.)doc";
