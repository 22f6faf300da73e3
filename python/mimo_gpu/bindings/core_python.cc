/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// mimo_gpu.core: the core library (namespace ::mimo_gpu) on numpy arrays, so a
// script can simulate a channel and run the QR and the detectors without a
// flowgraph. Arrays are converted to C-contiguous complex64 / float32 / uint8;
// a wrong shape raises ValueError naming the expected one. The core's
// std::invalid_argument becomes ValueError, std::runtime_error RuntimeError.
// The GIL is released around every core call.

#include <pybind11/complex.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <mimo_gpu/backend.h>
#include <mimo_gpu/channel_simulator.h>
#include <mimo_gpu/constellation.h>
#include <mimo_gpu/ml_detector.h>
#include <mimo_gpu/nway_detector.h>
#include <mimo_gpu/qr_decomposition.h>

#include <sstream>
#include <string>
#include <vector>

namespace py = pybind11;
using ::mimo_gpu::cfloat;

namespace {

template <typename T>
using carray = py::array_t<T, py::array::c_style | py::array::forcecast>;

std::string shape_string(const py::array& a)
{
    std::ostringstream out;
    out << "(";
    for (py::ssize_t d = 0; d < a.ndim(); ++d)
        out << (d ? ", " : "") << a.shape(d);
    out << (a.ndim() == 1 ? ",)" : ")");
    return out.str();
}

[[noreturn]] void
shape_error(const std::string& name, const std::string& expected, const py::array& got)
{
    throw py::value_error(name + " must have shape " + expected + ", got " +
                          shape_string(got));
}

/// H (B, nr, nt) and y (B, nr), checked against each other.
struct channel_arrays {
    carray<cfloat> H;
    carray<cfloat> y;
    size_t batch;
    ::mimo_gpu::mimo_shape shape;

    channel_arrays(carray<cfloat> H_in, carray<cfloat> y_in)
        : H(std::move(H_in)), y(std::move(y_in))
    {
        if (H.ndim() != 3)
            shape_error("H", "(B, nr, nt)", H);
        batch = H.shape(0);
        shape.nr = static_cast<int>(H.shape(1));
        shape.nt = static_cast<int>(H.shape(2));
        if (y.ndim() != 2 || size_t(y.shape(0)) != batch || y.shape(1) != shape.nr)
            shape_error("y",
                        "(B, nr) = (" + std::to_string(batch) + ", " +
                            std::to_string(shape.nr) + ")",
                        y);
        shape.validate();
    }
};

template <typename T>
py::array_t<T> new_array(std::vector<py::ssize_t> shape)
{
    return py::array_t<T>(shape);
}

::mimo_gpu::modulation modulation_of(const std::string& name)
{
    return ::mimo_gpu::modulation_from_string(name);
}

int bits_per_symbol(const std::string& modulation)
{
    return ::mimo_gpu::constellation(modulation_of(modulation)).bits_per_symbol();
}

// ---- constellation --------------------------------------------------------

py::array_t<cfloat> map_bits(const carray<uint8_t>& bits, const std::string& modulation)
{
    const ::mimo_gpu::constellation constel(modulation_of(modulation));
    const size_t q = constel.bits_per_symbol();
    if (bits.ndim() != 1 || bits.shape(0) % q != 0)
        shape_error("bits", "(N*" + std::to_string(q) + ",) for " + modulation, bits);
    const size_t count = bits.shape(0) / q;
    auto symbols = new_array<cfloat>({ py::ssize_t(count) });
    {
        py::gil_scoped_release release;
        constel.map(bits.data(), symbols.mutable_data(), count);
    }
    return symbols;
}

py::array_t<uint8_t> hard_demap(const carray<cfloat>& symbols,
                                const std::string& modulation)
{
    const ::mimo_gpu::constellation constel(modulation_of(modulation));
    if (symbols.ndim() != 1)
        shape_error("symbols", "(N,)", symbols);
    const size_t count = symbols.shape(0);
    auto bits = new_array<uint8_t>({ py::ssize_t(count * constel.bits_per_symbol()) });
    {
        py::gil_scoped_release release;
        constel.hard_demap(symbols.data(), bits.mutable_data(), count);
    }
    return bits;
}

py::array_t<cfloat> constellation_points(const std::string& modulation)
{
    const ::mimo_gpu::constellation constel(modulation_of(modulation));
    const auto& points = constel.points();
    auto out = new_array<cfloat>({ py::ssize_t(points.size()) });
    std::copy(points.begin(), points.end(), out.mutable_data());
    return out;
}

// ---- channel ----------------------------------------------------------------

py::tuple simulate(const carray<uint8_t>& bits,
                   int nr,
                   int nt,
                   const std::string& modulation,
                   double snr_db,
                   uint64_t seed)
{
    ::mimo_gpu::mimo_shape shape;
    shape.nr = nr;
    shape.nt = nt;
    ::mimo_gpu::channel_simulator simulator(shape, modulation_of(modulation), seed);
    const int bits_per_problem = simulator.bits_per_problem();
    if (bits.ndim() != 2 || bits.shape(1) != bits_per_problem)
        shape_error(
            "bits", "(B, nt*Q) = (B, " + std::to_string(bits_per_problem) + ")", bits);
    const size_t batch = bits.shape(0);
    auto H = new_array<cfloat>({ py::ssize_t(batch), nr, nt });
    auto y = new_array<cfloat>({ py::ssize_t(batch), nr });
    const float n0 = ::mimo_gpu::noise_variance_from_snr_db(snr_db);
    {
        py::gil_scoped_release release;
        simulator.run(bits.data(), batch, n0, H.mutable_data(), y.mutable_data());
    }
    return py::make_tuple(H, y);
}

// ---- QR and detectors --------------------------------------------------------

py::array_t<float>
qr_decompose(carray<cfloat> H, carray<cfloat> y, int orders, const std::string& backend)
{
    const channel_arrays in(std::move(H), std::move(y));
    ::mimo_gpu::qr_decomposition qr(
        in.shape, orders, ::mimo_gpu::backend_from_string(backend));
    const auto layout = qr.layout();
    auto items =
        new_array<float>({ py::ssize_t(in.batch), orders, layout.rows(), layout.cols() });
    if (in.batch > 0) {
        py::gil_scoped_release release;
        qr.run(in.H.data(), in.y.data(), in.batch, items.mutable_data());
    }
    return items;
}

::mimo_gpu::nway_config nway_config_of(::mimo_gpu::mimo_shape shape,
                                       const std::string& modulation,
                                       int passes,
                                       float llr_clip)
{
    ::mimo_gpu::nway_config config;
    config.shape = shape;
    config.mod = modulation_of(modulation);
    config.passes = passes;
    config.llr_clip = llr_clip;
    config.validate();
    return config;
}

py::array_t<float> nway_detect(carray<cfloat> H,
                               carray<cfloat> y,
                               const std::string& modulation,
                               int passes,
                               float noise_var,
                               float llr_clip,
                               const std::string& backend)
{
    const channel_arrays in(std::move(H), std::move(y));
    ::mimo_gpu::nway_detector detector(
        nway_config_of(in.shape, modulation, passes, llr_clip),
        ::mimo_gpu::backend_from_string(backend));
    auto llr = new_array<float>({ py::ssize_t(in.batch), detector.llrs_per_problem() });
    if (in.batch > 0) {
        py::gil_scoped_release release;
        detector.detect(
            in.H.data(), in.y.data(), in.batch, noise_var, llr.mutable_data());
    }
    return llr;
}

py::array_t<float> nway_detect_qr(const carray<float>& items,
                                  const std::string& modulation,
                                  float noise_var,
                                  float llr_clip,
                                  const std::string& backend,
                                  int nr)
{
    // items: (B, passes, 2nt, 2nt+1), as qr_decomposition returns them.
    if (items.ndim() != 4 || items.shape(2) % 2 != 0 ||
        items.shape(3) != items.shape(2) + 1)
        shape_error("items", "(B, passes, 2nt, 2nt+1)", items);
    ::mimo_gpu::mimo_shape shape;
    shape.nt = static_cast<int>(items.shape(2) / 2);
    shape.nr = nr > 0 ? nr : shape.nt; // the items no longer depend on nr
    const int passes = static_cast<int>(items.shape(1));
    const size_t batch = items.shape(0);
    ::mimo_gpu::nway_detector detector(
        nway_config_of(shape, modulation, passes, llr_clip),
        ::mimo_gpu::backend_from_string(backend));
    auto llr = new_array<float>({ py::ssize_t(batch), detector.llrs_per_problem() });
    if (batch > 0) {
        py::gil_scoped_release release;
        detector.detect_qr(items.data(), batch, noise_var, llr.mutable_data());
    }
    return llr;
}

py::array_t<float> ml_detect(carray<cfloat> H,
                             carray<cfloat> y,
                             const std::string& modulation,
                             float noise_var,
                             const std::string& backend)
{
    const channel_arrays in(std::move(H), std::move(y));
    ::mimo_gpu::ml_detector detector(
        in.shape, modulation_of(modulation), ::mimo_gpu::backend_from_string(backend));
    auto llr = new_array<float>({ py::ssize_t(in.batch), detector.llrs_per_problem() });
    if (in.batch > 0) {
        py::gil_scoped_release release;
        detector.detect(
            in.H.data(), in.y.data(), in.batch, noise_var, llr.mutable_data());
    }
    return llr;
}

std::string resolve_backend(const std::string& name)
{
    return ::mimo_gpu::to_string(
        ::mimo_gpu::resolve_backend(::mimo_gpu::backend_from_string(name)));
}

} // namespace

void bind_core(py::module m)
{
    m.def("cuda_available",
          &::mimo_gpu::cuda_available,
          "True when the library was built with CUDA and a usable GPU is present.");
    m.def("cuda_unavailable_reason",
          &::mimo_gpu::cuda_unavailable_reason,
          "Why CUDA is not available ('' when it is).");
    m.def("resolve_backend",
          &resolve_backend,
          py::arg("backend") = "auto",
          "The backend ('cpu' or 'cuda') that 'auto', 'cpu' or 'cuda' resolves to here.");

    m.def("bits_per_symbol",
          &bits_per_symbol,
          py::arg("modulation"),
          "Q = log2(M) of a modulation name.");
    m.def("constellation_points",
          &constellation_points,
          py::arg("modulation"),
          "The M points (complex64), indexed by the label b0 b1 ... b(Q-1) read MSB "
          "first.");
    m.def("map",
          &map_bits,
          py::arg("bits"),
          py::arg("modulation"),
          "Maps bits (uint8 0/1, shape (N*Q,)) to N complex64 symbols (3GPP labels).");
    m.def("hard_demap",
          &hard_demap,
          py::arg("symbols"),
          py::arg("modulation"),
          "Nearest-point decision of N symbols into N*Q bits (uint8).");

    m.def("noise_variance_from_snr_db",
          &::mimo_gpu::noise_variance_from_snr_db,
          py::arg("snr_db"),
          "N0 = 10^(-snr_db/10) (unit-energy symbols, E|h|^2 = 1).");
    m.def("simulate",
          &simulate,
          py::arg("bits"),
          py::arg("nr"),
          py::arg("nt"),
          py::arg("modulation"),
          py::arg("snr_db"),
          py::arg("seed") = 0,
          "Rayleigh channel plus AWGN: bits (B, nt*Q) uint8 -> (H (B, nr, nt), y (B, "
          "nr)) complex64.");

    m.def("qr_decomposition",
          &qr_decompose,
          py::arg("H"),
          py::arg("y"),
          py::arg("orders") = 1,
          py::arg("backend") = "auto",
          "QR items of the real-valued model: (B, orders, 2nt, 2nt+1) float32, each [R | "
          "Q^T y].");
    m.def(
        "nway_detect",
        &nway_detect,
        py::arg("H"),
        py::arg("y"),
        py::arg("modulation"),
        py::arg("passes"),
        py::arg("noise_var"),
        py::arg("llr_clip") = 0.0f,
        py::arg("backend") = "auto",
        "N-way SSFE soft detection: H (B, nr, nt), y (B, nr) -> LLRs (B, nt*Q) float32.");
    m.def("nway_detect_qr",
          &nway_detect_qr,
          py::arg("items"),
          py::arg("modulation"),
          py::arg("noise_var"),
          py::arg("llr_clip") = 0.0f,
          py::arg("backend") = "auto",
          py::arg("nr") = 0,
          "N-way detection from QR items (B, passes, 2nt, 2nt+1) -> LLRs (B, nt*Q) "
          "float32.");
    m.def("ml_detect",
          &ml_detect,
          py::arg("H"),
          py::arg("y"),
          py::arg("modulation"),
          py::arg("noise_var"),
          py::arg("backend") = "auto",
          "Exhaustive max-log ML: H (B, nr, nt), y (B, nr) -> LLRs (B, nt*Q) float32.");
}
