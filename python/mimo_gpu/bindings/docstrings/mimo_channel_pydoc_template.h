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


static const char* __doc_gr_mimo_gpu_mimo_channel =
    R"doc(Simulated MIMO channel: bits (uint8, vlen nt*Q) in; H (complex, vlen nr*nt) and y = Hs + n (complex, vlen nr) out.
H has one item per symbols_per_channel (S) y items: S consecutive problems share a channel.
Tags both outputs with "noise_var" (N0) at item 0 and after every set_snr_db.)doc";


static const char* __doc_gr_mimo_gpu_mimo_channel_mimo_channel_0 = R"doc()doc";


static const char* __doc_gr_mimo_gpu_mimo_channel_mimo_channel_1 = R"doc()doc";


static const char* __doc_gr_mimo_gpu_mimo_channel_make =
    R"doc(Make a channel. nr, nt: 1 <= nt <= nr <= 1024 (each detector states the shapes it takes); modulation: qpsk, 16qam, 64qam, 256qam or 1024qam; snr_db: Es/N0 per receive antenna; seed: generator seed; symbols_per_channel: S >= 1 problems per H item (default 1).)doc";


static const char* __doc_gr_mimo_gpu_mimo_channel_set_snr_db =
    R"doc(Change the SNR (dB); a noise_var tag marks the first item that uses it.)doc";


static const char* __doc_gr_mimo_gpu_mimo_channel_snr_db =
    R"doc(The current SNR in dB.)doc";


static const char* __doc_gr_mimo_gpu_mimo_channel_noise_var =
    R"doc(The current N0 = 10^(-snr_db/10).)doc";


static const char* __doc_gr_mimo_gpu_mimo_channel_symbols_per_channel =
    R"doc(S: consecutive problems (y items) sharing one H item.)doc";
