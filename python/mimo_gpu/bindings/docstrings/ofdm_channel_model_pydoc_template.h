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


static const char* __doc_gr_mimo_gpu_ofdm_channel_model =
    R"doc(nt -> nr multipath OFDM channel (flat/EPA/EVA/ETU, CFO, timing offset, AWGN), a frame at a time.)doc";


static const char* __doc_gr_mimo_gpu_ofdm_channel_model_make =
    R"doc(Make a channel: the frame (grid, nt, slots, data_symbols), nr, profile, snr_db, cfo (subcarrier spacings), timing_offset, seed, tx/rx correlation, doppler (Hz; 0: block fading, new taps per frame), backend (auto, cpu or cuda: the same samples to rounding), device_buffers (on CUDA, the receive streams in GPU memory; the default).)doc";


static const char* __doc_gr_mimo_gpu_ofdm_channel_model_set_snr_db =
    R"doc(Change the SNR from the next frame on.)doc";


static const char* __doc_gr_mimo_gpu_ofdm_channel_model_snr_db =
    R"doc(The current SNR in dB.)doc";


static const char* __doc_gr_mimo_gpu_ofdm_channel_model_active_backend =
    R"doc(Where the channel runs: cpu or cuda.)doc";


static const char* __doc_gr_mimo_gpu_ofdm_channel_model_device_buffers =
    R"doc(Whether the receive streams live in GPU memory.)doc";
