/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include "pydoc_macros.h"
#define D(...) DOC(gr, mimo_gpu, __VA_ARGS__)
/*
  Docstrings of the Python bindings, written from the block header's comments.
 */

static const char* __doc_gr_mimo_gpu_mimo_channel_source =
    R"doc(Simulation source: random bits through an i.i.d. Rayleigh MIMO channel, drawn on the GPU (device buffers) or the CPU from a counter-based generator. Outputs H, y and the bits. Input 0 (optional): the bits to send instead of drawn ones (uint8, non-zero is 1), bits_per_input_item per item (nt*Q, or a multiple such as a transport block's G coded bits from tb_source); the stream then ends with the input, and output 2 (the bits) may be left unconnected.)doc";
static const char* __doc_gr_mimo_gpu_mimo_channel_source_make =
    R"doc(make(nr, nt, modulation, snr_db, seed, symbols_per_channel=1, problems=0 (endless), backend="auto", max_batch=65536, device_buffers=True, bits_per_input_item=0 (nt*Q; else a multiple of nt*Q)))doc";
static const char* __doc_gr_mimo_gpu_mimo_channel_source_set_snr_db =
    R"doc(Es/N0 per receive antenna in dB; a noise_var tag follows.)doc";
static const char* __doc_gr_mimo_gpu_mimo_channel_source_snr_db =
    R"doc(The SNR in dB.)doc";
static const char* __doc_gr_mimo_gpu_mimo_channel_source_noise_var =
    R"doc(N0 of the current SNR.)doc";
static const char* __doc_gr_mimo_gpu_mimo_channel_source_active_backend =
    R"doc("cpu" or "cuda".)doc";
