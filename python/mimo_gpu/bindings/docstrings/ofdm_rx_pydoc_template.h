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


static const char* __doc_gr_mimo_gpu_ofdm_rx =
    R"doc(MIMO-OFDM receiver front end: nr antenna streams in; H (vlen nr*nt) and y (vlen nr) out for mimo_detector, noise_var and ofdm_frame tags per frame.)doc";


static const char* __doc_gr_mimo_gpu_ofdm_rx_make =
    R"doc(Make a receiver: the frame (grid, nt, modulation, slots, data_symbols), nr, time_interpolation (hold/linear/lmmse), frequency_interpolation (lmmse/linear), backend, device_buffers (on CUDA, H and y in GPU memory; the default).)doc";


static const char* __doc_gr_mimo_gpu_ofdm_rx_symbols_per_channel =
    R"doc(y items per H item (data_symbols with hold, 1 with linear).)doc";


static const char* __doc_gr_mimo_gpu_ofdm_rx_frames_received =
    R"doc(Frames received so far.)doc";


static const char* __doc_gr_mimo_gpu_ofdm_rx_samples_dropped =
    R"doc(Samples outside any frame so far.)doc";


static const char* __doc_gr_mimo_gpu_ofdm_rx_last_noise_var =
    R"doc(N0 of the last frame.)doc";


static const char* __doc_gr_mimo_gpu_ofdm_rx_last_cfo =
    R"doc(CFO (subcarrier spacings) of the last frame.)doc";


static const char* __doc_gr_mimo_gpu_ofdm_rx_frames_dropped =
    R"doc(Frames found whose pilots held non-finite samples: dropped.)doc";


static const char* __doc_gr_mimo_gpu_ofdm_rx_active_backend =
    R"doc(The backend the receiver runs on: cpu or cuda.)doc";


static const char* __doc_gr_mimo_gpu_ofdm_rx_device_buffers =
    R"doc(Whether H and y live in GPU memory.)doc";


static const char* __doc_gr_mimo_gpu_ofdm_rx_timing_summary =
    R"doc(Where the receiver's time went so far: taking samples in, searching, demodulating (ms per frame).)doc";


static const char* __doc_gr_mimo_gpu_ofdm_rx_frame_mismatch =
    R"doc(Whether the stream was refused: its ofdm_grid tag (a recording's frame) named another frame than this block's.)doc";
