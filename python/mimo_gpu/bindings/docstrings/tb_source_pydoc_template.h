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


static const char* __doc_gr_mimo_gpu_tb_source =
    R"doc(Simulation source of LTE transport blocks: random information bits, CRC24A, segmentation, turbo coding and rate matching (36.212), one item per transport block on each output.
Output 0: the G coded bits of a transport block (uint8 0/1, vlen G), for a channel (mimo_channel_source's bits input). Output 1: its A information bits (uint8 0/1, vlen A), for an error counter behind the decoder.
The blocks are drawn and encoded once, when the block is made: the stream cycles through `pool` distinct transport blocks (seeded), so that a GPU chain is not held back by a CPU encoder; a pool of 1 repeats one block. On CUDA with device_buffers the pool lives in GPU memory and the outputs are device buffers.)doc";


static const char* __doc_gr_mimo_gpu_tb_source_tb_source_0 = R"doc()doc";


static const char* __doc_gr_mimo_gpu_tb_source_tb_source_1 = R"doc()doc";


static const char* __doc_gr_mimo_gpu_tb_source_make =
    R"doc(Make a source. A, G, Qm, NL, rv: the format, as tb_encoder; seed: the information bits' seed; pool: distinct transport blocks, cycled (>= 1); blocks: transport blocks to send before the stream ends (0: endless); backend: auto, cpu or cuda (where the pool lives); device_buffers: on CUDA, outputs in GPU memory (the default); code: "turbo" (LTE 36.212, the default) or "ldpc" (NR 38.212, the format as nr_tb_encoder's).)doc";


static const char* __doc_gr_mimo_gpu_tb_source_active_backend =
    R"doc(The backend in use: "cpu" or "cuda".)doc";


static const char* __doc_gr_mimo_gpu_tb_source_device_buffers =
    R"doc(Whether the outputs are in GPU memory.)doc";
