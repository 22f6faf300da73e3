/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// mimo_gpu.core.idd_receive: the iterative receiver (a detector with priors and
// the LTE transport-block decoder exchanging extrinsic LLRs) on numpy arrays:
//   a, results = core.idd_receive("kbest", H, y, noise_var, A=1000, G=2048,
//                                 modulation="16qam", outer_iterations=3, k=16)

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <mimo_gpu/detector_registry.h>
#include <mimo_gpu/iterative_receiver.h>

#include "numpy_arrays.h"

#include <string>
#include <vector>

namespace py = pybind11;
using ::mimo_gpu::cfloat;

namespace {

using mimo_gpu_python::carray;
using mimo_gpu_python::shape_error;

/// H (P, nr, nt) and y (P, nr) for P = count * G / (nt * Q) problems in order,
/// transport block t's at [t * G / (nt Q), ...).
py::tuple idd_receive(const std::string& algorithm,
                      carray<cfloat> H,
                      carray<cfloat> y,
                      double noise_var,
                      int A,
                      int G,
                      const std::string& modulation,
                      int outer_iterations,
                      int turbo_iterations,
                      const std::string& backend,
                      const py::kwargs& parameters)
{
    if (H.ndim() != 3 || y.ndim() != 2 || y.shape(0) != H.shape(0) ||
        y.shape(1) != H.shape(1))
        shape_error("H and y", "(P, nr, nt) and (P, nr)", H.ndim() == 3 ? y : H);
    ::mimo_gpu::detector_config config;
    config.shape = { int(H.shape(1)), int(H.shape(2)) };
    config.mod = ::mimo_gpu::modulation_from_string(modulation);
    for (const auto& [key, value] : parameters)
        config.parameters[py::cast<std::string>(key)] = py::cast<double>(value);
    const auto requested = ::mimo_gpu::backend_from_string(backend);
    auto det = ::mimo_gpu::make_detector(algorithm, config, requested);
    det->set_bad_problem_policy(::mimo_gpu::bad_problem_policy::erase);
    ::mimo_gpu::transport_block_format format;
    format.A = A;
    format.G = G;
    format.Qm = det->bits_per_symbol();
    ::mimo_gpu::turbo_decoder_config decoder;
    decoder.iterations = turbo_iterations;
    ::mimo_gpu::iterative_receiver_config rc;
    rc.outer_iterations = outer_iterations;
    ::mimo_gpu::iterative_receiver rx(std::move(det), format, decoder, rc, requested);
    const size_t P = size_t(H.shape(0)), per_block = size_t(rx.problems_per_block());
    if (P % per_block != 0)
        throw py::value_error("idd_receive: " + std::to_string(P) +
                              " problems are not whole transport blocks of " +
                              std::to_string(per_block));
    const size_t count = P / per_block;
    py::array_t<uint8_t> a(std::vector<py::ssize_t>{ py::ssize_t(count), A });
    ::mimo_gpu::detector_input in;
    in.H = H.data();
    in.y = y.data();
    in.channels = P;
    in.n0 = float(noise_var);
    std::vector<::mimo_gpu::idd_result> results;
    {
        py::gil_scoped_release release;
        results = rx.receive(in, count, a.mutable_data());
    }
    py::list out;
    for (const auto& r : results) {
        py::dict d;
        d["crc_ok"] = r.decoded.crc_ok;
        d["outer_iterations"] = r.outer_iterations;
        d["turbo_iterations"] = r.decoded.max_iterations;
        out.append(d);
    }
    return py::make_tuple(a, out);
}

} // namespace

void bind_core_receiver(py::module m)
{
    m.def("idd_receive",
          &idd_receive,
          py::arg("algorithm"),
          py::arg("H"),
          py::arg("y"),
          py::arg("noise_var"),
          py::arg("A"),
          py::arg("G"),
          py::arg("modulation") = "16qam",
          py::arg("outer_iterations") = 3,
          py::arg("turbo_iterations") = 6,
          py::arg("backend") = "auto",
          "Iterative detection and decoding of count transport blocks (A information "
          "bits on G coded bits each, the LTE chain at rv 0): H (P, nr, nt) and y (P, "
          "nr) complex64, P = count * G / (nt Q) problems in order; a detector family "
          "that takes a-priori LLRs (ml, kbest, sumis) with its parameters as keyword "
          "arguments. -> (a (count, A) uint8, a dict per block: crc_ok, "
          "outer_iterations, turbo_iterations). Bad problems are erased.");
}
