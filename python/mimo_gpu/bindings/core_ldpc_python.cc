/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// mimo_gpu.core's 5G NR LDPC functions on numpy arrays (issue 27, in progress):
//   d = core.ldpc_encode(c, base_graph=1, Zc=384)
//   bits, results = core.ldpc_decode(llr, base_graph, Zc, algorithm="offset-min-sum")
//   g = core.nr_tb_encode(a, A, G, Qm)
//   a, results = core.nr_tb_decode(llr, A, G, Qm, soft=buffers)  # HARQ: buffers kept
//   core.nr_segmentation(A, G) -> dict

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <mimo_gpu/nr_ldpc.h>
#include <mimo_gpu/nr_transport_block.h>

#include "numpy_arrays.h"

#include <string>
#include <vector>

namespace py = pybind11;

namespace {

using mimo_gpu_python::carray;
using mimo_gpu_python::shape_error;

/// Rows of a (n,) or (count, n) array: 1 or count.
size_t
rows_of(const py::array& a, const std::string& name, int n, const std::string& what)
{
    if (a.ndim() == 1 && a.shape(0) == n)
        return 1;
    if (a.ndim() == 2 && a.shape(1) == n)
        return size_t(a.shape(0));
    shape_error(
        name, "(" + what + " = " + std::to_string(n) + ",) or (count, " + what + ")", a);
}

template <typename T>
py::array_t<T> shaped_like(const py::array& a, size_t count, int n)
{
    if (a.ndim() == 1)
        return py::array_t<T>(std::vector<py::ssize_t>{ n });
    return py::array_t<T>(std::vector<py::ssize_t>{ py::ssize_t(count), n });
}

void check_bits(const carray<uint8_t>& b, const char* name)
{
    for (py::ssize_t i = 0; i < b.size(); ++i)
        if (b.data()[i] > 1)
            throw py::value_error(std::string(name) + " must hold bits 0/1, got " +
                                  std::to_string(b.data()[i]) + " at flat index " +
                                  std::to_string(i));
}

::mimo_gpu::ldpc_decoder_config decoder_config(const std::string& algorithm,
                                               int iterations,
                                               float scale,
                                               float offset,
                                               bool early_termination)
{
    ::mimo_gpu::ldpc_decoder_config c;
    c.algorithm = ::mimo_gpu::ldpc_algorithm_from_string(algorithm);
    c.iterations = iterations;
    c.scale = scale;
    c.offset = offset;
    c.early_termination = early_termination;
    c.validate();
    return c;
}

py::array_t<uint8_t>
ldpc_encode(const carray<uint8_t>& c, int base_graph, int Zc, bool full)
{
    const ::mimo_gpu::ldpc_code code{ base_graph, Zc };
    const ::mimo_gpu::ldpc_encoder enc(code);
    const size_t count = rows_of(c, "c", code.K(), "K");
    check_bits(c, "c");
    const int n = full ? code.codeword_bits() : code.N();
    auto out = shaped_like<uint8_t>(c, count, n);
    {
        py::gil_scoped_release release;
        for (size_t t = 0; t < count; ++t) {
            if (full)
                enc.encode_full(c.data() + t * code.K(), out.mutable_data() + t * n);
            else
                enc.encode(c.data() + t * code.K(), out.mutable_data() + t * n);
        }
    }
    return out;
}

py::tuple ldpc_decode(const carray<float>& llr,
                      int base_graph,
                      int Zc,
                      const std::string& algorithm,
                      int iterations,
                      float scale,
                      float offset,
                      bool early_termination,
                      const std::string& backend)
{
    const ::mimo_gpu::ldpc_code code{ base_graph, Zc };
    const ::mimo_gpu::ldpc_decoder dec(
        code,
        decoder_config(algorithm, iterations, scale, offset, early_termination),
        ::mimo_gpu::backend_from_string(backend));
    const size_t count = rows_of(llr, "llr", code.codeword_bits(), "codeword_bits");
    auto bits = shaped_like<uint8_t>(llr, count, code.K());
    std::vector<::mimo_gpu::ldpc_block_result> results;
    {
        py::gil_scoped_release release;
        results = dec.decode(llr.data(), count, bits.mutable_data());
    }
    py::list list;
    for (const auto& r : results) {
        py::dict d;
        d["iterations"] = r.iterations;
        d["parity_ok"] = r.parity_ok;
        list.append(d);
    }
    return py::make_tuple(bits, list);
}

::mimo_gpu::nr_transport_block_format
nr_format(int A, int G, int Qm, int NL, int rv, int base_graph)
{
    ::mimo_gpu::nr_transport_block_format f;
    f.A = A;
    f.G = G;
    f.Qm = Qm;
    f.NL = NL;
    f.rv = rv;
    f.base_graph = base_graph;
    f.validate();
    return f;
}

py::array_t<uint8_t> nr_tb_encode(
    const carray<uint8_t>& a, int A, int G, int Qm, int NL, int rv, int base_graph)
{
    const ::mimo_gpu::nr_transport_block_encoder enc(
        nr_format(A, G, Qm, NL, rv, base_graph));
    const size_t count = rows_of(a, "a", A, "A");
    check_bits(a, "a");
    auto g = shaped_like<uint8_t>(a, count, G);
    {
        py::gil_scoped_release release;
        for (size_t t = 0; t < count; ++t)
            enc.encode(a.data() + t * size_t(A), g.mutable_data() + t * size_t(G));
    }
    return g;
}

py::tuple nr_tb_decode(const carray<float>& llr,
                       int A,
                       int G,
                       int Qm,
                       int NL,
                       int rv,
                       int base_graph,
                       const py::object& soft,
                       const std::string& algorithm,
                       int iterations,
                       const std::string& backend)
{
    ::mimo_gpu::nr_transport_block_decoder dec(
        nr_format(A, G, Qm, NL, rv, base_graph),
        decoder_config(algorithm, iterations, 0.75f, 0.5f, true),
        ::mimo_gpu::backend_from_string(backend));
    const size_t count = rows_of(llr, "llr", G, "G");
    float* buffers = nullptr;
    py::array_t<float> soft_array;
    if (!soft.is_none()) {
        // The caller's HARQ soft buffers, updated in place: float32, C-contiguous.
        soft_array = py::cast<py::array_t<float>>(soft);
        const size_t want = count * dec.soft_buffer_size();
        if (!(soft_array.flags() & py::array::c_style) ||
            size_t(soft_array.size()) != want ||
            !py::isinstance<py::array_t<float>>(soft))
            throw py::value_error("soft must be a C-contiguous float32 array of " +
                                  std::to_string(want) + " values (count * " +
                                  std::to_string(dec.soft_buffer_size()) +
                                  ", see "
                                  "nr_segmentation()['soft_buffer'])");
        buffers = soft_array.mutable_data();
    }
    auto a = shaped_like<uint8_t>(llr, count, A);
    std::vector<::mimo_gpu::transport_block_result> results;
    {
        py::gil_scoped_release release;
        results = dec.decode(llr.data(), count, a.mutable_data(), buffers);
    }
    py::list list;
    for (const auto& r : results) {
        py::dict d;
        d["crc_ok"] = r.crc_ok;
        d["code_blocks"] = r.code_blocks;
        d["code_blocks_crc_ok"] = r.code_blocks_crc_ok;
        d["code_blocks_no_information"] = r.code_blocks_no_information;
        d["iterations"] = r.max_iterations;
        list.append(d);
    }
    return py::make_tuple(a, list);
}

py::dict nr_segmentation(int A, int G, int Qm, int NL, int base_graph)
{
    const auto f = nr_format(A, G, Qm, NL, 0, base_graph);
    const ::mimo_gpu::nr_segmentation s = f.segmentation();
    py::dict d;
    d["tb_crc"] = s.tb_crc;
    d["B"] = s.B;
    d["base_graph"] = s.base_graph;
    d["C"] = s.C;
    d["cb_crc"] = s.cb_crc;
    d["K_prime"] = s.K_prime;
    d["Zc"] = s.Zc;
    d["K"] = s.K;
    d["F"] = s.F;
    d["N"] = s.N;
    d["E"] = f.rate_matched_sizes();
    d["soft_buffer"] = size_t(s.C) * size_t(s.N);
    return d;
}

} // namespace

void bind_core_ldpc(py::module m)
{
    m.def("ldpc_lifting_sizes",
          &::mimo_gpu::ldpc_lifting_sizes,
          "The 51 lifting sizes Zc of 38.212 Table 5.3.2-1.");
    m.def("ldpc_encode",
          &ldpc_encode,
          py::arg("c"),
          py::arg("base_graph") = 1,
          py::arg("Zc") = 384,
          py::arg("full") = false,
          "NR LDPC encoder (38.212 5.3.2): c (K,) or (count, K) uint8 bits, K = 22 Zc "
          "(BG1) or 10 Zc (BG2) -> the N bits sent (x without its first 2 Zc), or with "
          "full=True the codeword x = [c | w] whose parity checks hold.");
    m.def("ldpc_decode",
          &ldpc_decode,
          py::arg("llr"),
          py::arg("base_graph") = 1,
          py::arg("Zc") = 384,
          py::arg("algorithm") = "offset-min-sum",
          py::arg("iterations") = 10,
          py::arg("scale") = 0.75f,
          py::arg("offset") = 0.5f,
          py::arg("early_termination") = true,
          py::arg("backend") = "auto",
          "Layered NR LDPC decoder: llr (codeword_bits,) or (count, codeword_bits) "
          "float32, L = ln P(0)/P(1) of the full codeword (punctured bits 0) -> (bits "
          "(K,) or (count, K) uint8, a dict per block with iterations and parity_ok). "
          "algorithm: normalized-min-sum, offset-min-sum or sum-product.");
    m.def("nr_tb_encode",
          &nr_tb_encode,
          py::arg("a"),
          py::arg("A"),
          py::arg("G"),
          py::arg("Qm") = 2,
          py::arg("NL") = 1,
          py::arg("rv") = 0,
          py::arg("base_graph") = 0,
          "NR transport block encoder (CRC, segmentation, LDPC, rate matching): a (A,) "
          "or (count, A) uint8 -> (G,) or (count, G) uint8. base_graph 0: chosen by "
          "38.212 7.2.2.");
    m.def("nr_tb_decode",
          &nr_tb_decode,
          py::arg("llr"),
          py::arg("A"),
          py::arg("G"),
          py::arg("Qm") = 2,
          py::arg("NL") = 1,
          py::arg("rv") = 0,
          py::arg("base_graph") = 0,
          py::arg("soft") = py::none(),
          py::arg("algorithm") = "offset-min-sum",
          py::arg("iterations") = 10,
          py::arg("backend") = "auto",
          "NR transport block decoder: llr (G,) or (count, G) float32 -> (a, a dict per "
          "transport block: crc_ok, code_blocks, code_blocks_crc_ok, "
          "code_blocks_no_information, iterations). soft: the HARQ soft buffers, a "
          "float32 array of count * nr_segmentation(...)['soft_buffer'] zeros before the "
          "first transmission, updated in place (retransmissions combine).");
    m.def("nr_segmentation",
          &nr_segmentation,
          py::arg("A"),
          py::arg("G"),
          py::arg("Qm") = 2,
          py::arg("NL") = 1,
          py::arg("base_graph") = 0,
          "38.212 segmentation of a transport block: dict of tb_crc, B, base_graph, C, "
          "cb_crc, K_prime, Zc, K, F, N, E (per code block), soft_buffer.");
}
