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


static const char* __doc_gr_mimo_gpu_ber_counter = R"doc(Counts bit errors of LLR hard decisions (LLR < 0 means 1) against the sent bits. Inputs: bits (uint8), LLRs (float), both vlen bits_per_item.)doc";


static const char* __doc_gr_mimo_gpu_ber_counter_ber_counter_0 = R"doc()doc";


static const char* __doc_gr_mimo_gpu_ber_counter_ber_counter_1 = R"doc()doc";


static const char* __doc_gr_mimo_gpu_ber_counter_make = R"doc(Make a counter for items of bits_per_item bits.)doc";


static const char* __doc_gr_mimo_gpu_ber_counter_bits = R"doc(Bits counted.)doc";


static const char* __doc_gr_mimo_gpu_ber_counter_errors = R"doc(Bit errors counted.)doc";


static const char* __doc_gr_mimo_gpu_ber_counter_ber = R"doc(errors / bits (0 before any bit).)doc";


static const char* __doc_gr_mimo_gpu_ber_counter_reset = R"doc(Zero the counters.)doc";

