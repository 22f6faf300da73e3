/*
 * Copyright 2020 Free Software Foundation, Inc.
 *
 * This file is part of GNU Radio
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 */

#include <pybind11/pybind11.h>

#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

namespace py = pybind11;

// Headers for binding functions
/**************************************/
// The following comment block is used for
// gr_modtool to insert function prototypes
// Please do not delete
/**************************************/
// BINDING_FUNCTION_PROTOTYPES(
void bind_mimo_channel(py::module& m);
void bind_mimo_channel_source(py::module& m);
void bind_ofdm_tx(py::module& m);
void bind_ofdm_channel_model(py::module& m);
void bind_ofdm_rx(py::module& m);
void bind_sigmf_file_source(py::module& m);
void bind_sigmf_file_sink(py::module& m);
void bind_qr_decomposition(py::module& m);
void bind_nway_detector(py::module& m);
void bind_mimo_detector(py::module& m);
void bind_ber_counter(py::module& m);
void bind_turbo_encoder(py::module& m);
void bind_turbo_decoder(py::module& m);
void bind_tb_encoder(py::module& m);
void bind_tb_decoder(py::module& m);
void bind_tb_source(py::module& m);
void bind_tb_stream_decoder(py::module& m);
void bind_idd_receiver(py::module& m);
void bind_nr_tb_encoder(py::module& m);
void bind_nr_tb_decoder(py::module& m);
// ) END BINDING_FUNCTION_PROTOTYPES


// We need this hack because import_array() returns NULL
// for newer Python versions.
// This function is also necessary because it ensures access to the C API
// and removes a warning.
void* init_numpy()
{
    import_array();
    return NULL;
}

// The core library on numpy arrays (core_python.cc), without a flowgraph.
void bind_core(py::module core);

PYBIND11_MODULE(mimo_gpu_python, m)
{
    // Initialize the numpy C API
    // (otherwise we will see segmentation faults)
    init_numpy();

    // Allow access to base block methods
    py::module::import("gnuradio.gr");

    /**************************************/
    // The following comment block is used for
    // gr_modtool to insert binding function calls
    // Please do not delete
    /**************************************/
    // BINDING_FUNCTION_CALLS(
    bind_mimo_channel(m);
    bind_mimo_channel_source(m);
    bind_ofdm_tx(m);
    bind_ofdm_channel_model(m);
    bind_ofdm_rx(m);
    bind_sigmf_file_source(m);
    bind_sigmf_file_sink(m);
    bind_qr_decomposition(m);
    bind_nway_detector(m);
    bind_mimo_detector(m);
    bind_ber_counter(m);
    bind_turbo_encoder(m);
    bind_turbo_decoder(m);
    bind_tb_encoder(m);
    bind_tb_decoder(m);
    bind_tb_source(m);
    bind_tb_stream_decoder(m);
    bind_idd_receiver(m);
    bind_nr_tb_encoder(m);
    bind_nr_tb_decoder(m);
    // ) END BINDING_FUNCTION_CALLS

    bind_core(m.def_submodule("core", "The mimo_gpu core library on numpy arrays"));
}
