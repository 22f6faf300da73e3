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


static const char* __doc_gr_mimo_gpu_ber_counter =
    R"doc(Counts bit errors of the decisions against the sent bits, and items with at least one error (block errors when an item is a transport block). Input 0: bits (uint8 0/1); input 1: LLRs (float, LLR < 0 means 1) with decisions "llr", or hard bits (uint8, non-zero is 1; a decoder's output) with "hard"; both vlen bits_per_item. With device_buffers (CUDA) both inputs are GPU memory and the errors are counted on the GPU.)doc";


static const char* __doc_gr_mimo_gpu_ber_counter_ber_counter_0 = R"doc()doc";


static const char* __doc_gr_mimo_gpu_ber_counter_ber_counter_1 = R"doc()doc";


static const char* __doc_gr_mimo_gpu_ber_counter_make =
    R"doc(Make a counter for items of bits_per_item bits. device_buffers: inputs in GPU memory (CUDA); decisions: "llr" (float LLRs) or "hard" (bytes).)doc";


static const char* __doc_gr_mimo_gpu_ber_counter_bits = R"doc(Bits counted.)doc";


static const char* __doc_gr_mimo_gpu_ber_counter_errors = R"doc(Bit errors counted.)doc";


static const char* __doc_gr_mimo_gpu_ber_counter_ber =
    R"doc(errors / bits (0 before any bit).)doc";


static const char* __doc_gr_mimo_gpu_ber_counter_items = R"doc(Items counted.)doc";


static const char* __doc_gr_mimo_gpu_ber_counter_item_errors =
    R"doc(Items with at least one bit error.)doc";


static const char* __doc_gr_mimo_gpu_ber_counter_reset = R"doc(Zero the counters.)doc";
