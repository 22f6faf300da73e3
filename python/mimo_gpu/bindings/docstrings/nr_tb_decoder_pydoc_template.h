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


static const char* __doc_gr_mimo_gpu_nr_tb_decoder =
    R"doc(5G NR transport block decoder (38.212, layered LDPC) on PDUs with HARQ soft combining: "in" (meta, f32vector of G LLRs) -> "out" (meta plus crc_ok, code_blocks, code_blocks_crc_ok, code_blocks_no_information, iterations; u8vector of A bits). Meta "harq_process" (int) combines with that process's earlier transmissions (incremental redundancy, Chase for a repeated rv), "rv" sets the PDU's redundancy version, "new_data" (True) starts afresh; a process is cleared when its block passes.)doc";


static const char* __doc_gr_mimo_gpu_nr_tb_decoder_nr_tb_decoder_0 = R"doc()doc";


static const char* __doc_gr_mimo_gpu_nr_tb_decoder_nr_tb_decoder_1 = R"doc()doc";


static const char* __doc_gr_mimo_gpu_nr_tb_decoder_make =
    R"doc(Make a decoder. A, G, Qm, NL, rv, base_graph as the encoder; algorithm: offset-min-sum, normalized-min-sum or sum-product; iterations 1..100; backend auto, cpu or cuda; max_blocks: most transport blocks per call.)doc";


static const char* __doc_gr_mimo_gpu_nr_tb_decoder_set_rv =
    R"doc(Sets the redundancy version (0..3) of PDUs without an "rv".)doc";


static const char* __doc_gr_mimo_gpu_nr_tb_decoder_rv =
    R"doc(The redundancy version.)doc";


static const char* __doc_gr_mimo_gpu_nr_tb_decoder_active_backend =
    R"doc(The backend the decoder runs on.)doc";


static const char* __doc_gr_mimo_gpu_nr_tb_decoder_blocks =
    R"doc(Transport blocks decoded.)doc";


static const char* __doc_gr_mimo_gpu_nr_tb_decoder_crc_failures =
    R"doc(Transport blocks whose CRC failed.)doc";


static const char* __doc_gr_mimo_gpu_nr_tb_decoder_harq_processes =
    R"doc(HARQ processes holding a soft buffer.)doc";
