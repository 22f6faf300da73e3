/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// mimo_gpu.core: the core library (namespace ::mimo_gpu) on numpy arrays, so a
// script can simulate a channel and run the QR and the detectors without a
// flowgraph, and the LTE turbo code (encoder, rate matching, decoder,
// transport blocks). Arrays are converted to C-contiguous complex64 / float32 / uint8;
// a wrong shape raises ValueError naming the expected one. The core's
// std::invalid_argument becomes ValueError, std::runtime_error RuntimeError.
// The GIL is released around every core call.

#include <pybind11/complex.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "numpy_arrays.h"
#include <mimo_gpu/backend.h>
#include <mimo_gpu/batched_qr.h>
#include <mimo_gpu/channel_simulator.h>
#include <mimo_gpu/constellation.h>
#include <mimo_gpu/detector_registry.h>
#include <mimo_gpu/lte_turbo_code.h>
#include <mimo_gpu/lte_turbo_decoder.h>
#include <mimo_gpu/nway_ssfe_detector.h>
#include <mimo_gpu/turbo_parameters.h>

#include <sstream>
#include <string>
#include <vector>

namespace py = pybind11;
using ::mimo_gpu::cfloat;

namespace {

using mimo_gpu_python::carray;
using mimo_gpu_python::shape_error;

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
                   uint64_t seed,
                   int symbols_per_channel)
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
    const int S = symbols_per_channel;
    if (S < 1)
        throw py::value_error("symbols_per_channel must be >= 1, got " +
                              std::to_string(S));
    if (batch % size_t(S) != 0)
        shape_error("bits",
                    "(C*S, nt*Q) with S = " + std::to_string(S) +
                        " (whole channels of S problems)",
                    bits);
    const size_t channels = batch / size_t(S);
    auto H = new_array<cfloat>({ py::ssize_t(channels), nr, nt });
    auto y = S == 1 ? new_array<cfloat>({ py::ssize_t(batch), nr })
                    : new_array<cfloat>({ py::ssize_t(channels), S, nr });
    const float n0 = ::mimo_gpu::noise_variance_from_snr_db(snr_db);
    {
        py::gil_scoped_release release;
        simulator.run(bits.data(), channels, S, n0, H.mutable_data(), y.mutable_data());
    }
    return py::make_tuple(H, y);
}

// ---- QR and detectors --------------------------------------------------------

py::array_t<float>
qr_decompose(carray<cfloat> H, carray<cfloat> y, int orders, const std::string& backend)
{
    const channel_arrays in(std::move(H), std::move(y));
    ::mimo_gpu::batched_qr qr(in.shape, orders, ::mimo_gpu::backend_from_string(backend));
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

/// The one-shot detector functions: a detector of the registry, used once.
py::array_t<float> detect_once(const std::string& algorithm,
                               carray<cfloat> H,
                               carray<cfloat> y,
                               const std::string& modulation,
                               ::mimo_gpu::detector_parameters parameters,
                               float noise_var,
                               const std::string& backend)
{
    const channel_arrays in(std::move(H), std::move(y));
    auto detector =
        ::mimo_gpu::make_detector(algorithm,
                                  { in.shape, modulation_of(modulation), parameters },
                                  ::mimo_gpu::backend_from_string(backend));
    auto llr = new_array<float>({ py::ssize_t(in.batch), detector->llrs_per_problem() });
    {
        py::gil_scoped_release release;
        detector->detect(
            in.H.data(), in.y.data(), in.batch, noise_var, llr.mutable_data());
    }
    return llr;
}

py::array_t<float> nway_detect(carray<cfloat> H,
                               carray<cfloat> y,
                               const std::string& modulation,
                               int passes,
                               float noise_var,
                               float llr_clip,
                               const std::string& backend)
{
    return detect_once("nway",
                       std::move(H),
                       std::move(y),
                       modulation,
                       { { "passes", passes }, { "llr_clip", llr_clip } },
                       noise_var,
                       backend);
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
    ::mimo_gpu::nway_ssfe_detector detector(
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
    return detect_once(
        "ml", std::move(H), std::move(y), modulation, {}, noise_var, backend);
}

std::string resolve_backend(const std::string& name)
{
    return ::mimo_gpu::to_string(
        ::mimo_gpu::resolve_backend(::mimo_gpu::backend_from_string(name)));
}

// ---- LTE turbo code ------------------------------------------------------------

using ::mimo_gpu::checked_code_block_size;
using ::mimo_gpu::crc_type_from_string;
using ::mimo_gpu::turbo_config;

py::array_t<int32_t> qpp_permutation(int K)
{
    const ::mimo_gpu::qpp_interleaver interleaver(checked_code_block_size(K));
    const auto& pi = interleaver.permutation();
    auto out = new_array<int32_t>({ py::ssize_t(pi.size()) });
    std::copy(pi.begin(), pi.end(), out.mutable_data());
    return out;
}

py::array_t<uint8_t> crc_attach(const carray<uint8_t>& bits, const std::string& crc)
{
    if (bits.ndim() != 1)
        shape_error("bits", "(N,)", bits);
    const auto type = crc_type_from_string(crc);
    const size_t count = bits.shape(0);
    auto out = new_array<uint8_t>({ py::ssize_t(count + ::mimo_gpu::crc_length(type)) });
    ::mimo_gpu::crc_attach(type, bits.data(), count, out.mutable_data());
    return out;
}

bool crc_check(const carray<uint8_t>& bits, const std::string& crc)
{
    if (bits.ndim() != 1)
        shape_error("bits", "(N,)", bits);
    const auto type = crc_type_from_string(crc);
    if (bits.shape(0) < ::mimo_gpu::crc_length(type))
        shape_error("bits",
                    "(N,) with N >= " + std::to_string(::mimo_gpu::crc_length(type)) +
                        " for " + crc,
                    bits);
    return ::mimo_gpu::crc_check(type, bits.data(), bits.shape(0));
}

py::dict segmentation(int B)
{
    const auto seg = ::mimo_gpu::code_block_segmentation::for_bits(B);
    py::dict d;
    d["B"] = seg.B;
    d["C"] = seg.C;
    d["K_plus"] = seg.K_plus;
    d["K_minus"] = seg.K_minus;
    d["C_plus"] = seg.C_plus;
    d["C_minus"] = seg.C_minus;
    d["F"] = seg.F;
    d["L"] = seg.L;
    d["K"] = seg.K;
    return d;
}

py::array_t<uint8_t> turbo_encode(const carray<uint8_t>& bits)
{
    if (bits.ndim() != 1)
        shape_error("bits", "(K,) for a code block size K", bits);
    const int K = checked_code_block_size(static_cast<int>(bits.shape(0)));
    for (int k = 0; k < K;
         ++k) // fillers (2) come from segmentation, not from a user's bits
        if (bits.data()[k] > 1)
            throw py::value_error("turbo_encode: bits must be 0 or 1, got " +
                                  std::to_string(int(bits.data()[k])) + " at index " +
                                  std::to_string(k));
    const int D = K + 4;
    auto d = new_array<uint8_t>({ 3, D });
    uint8_t* out = d.mutable_data();
    ::mimo_gpu::turbo_encode(bits.data(), K, out, out + D, out + 2 * D);
    return d;
}

py::array_t<uint8_t> rate_match(const carray<uint8_t>& d, int E, int rv, int Ncb)
{
    if (d.ndim() != 2 || d.shape(0) != 3)
        shape_error("d", "(3, K+4)", d);
    const int K = checked_code_block_size(static_cast<int>(d.shape(1)) - 4);
    const ::mimo_gpu::rate_matcher matcher(K, Ncb);
    if (E < 0)
        throw py::value_error("E must be >= 0, got " + std::to_string(E));
    auto e = new_array<uint8_t>({ py::ssize_t(E) });
    const uint8_t* in = d.data();
    matcher.match(in, in + K + 4, in + 2 * (K + 4), E, rv, e.mutable_data());
    return e;
}

py::array_t<float>
rate_dematch(const carray<float>& llr, int K, int rv, int filler, int Ncb)
{
    if (llr.ndim() != 1)
        shape_error("llr", "(E,)", llr);
    const ::mimo_gpu::rate_matcher matcher(checked_code_block_size(K), Ncb);
    auto d = new_array<float>({ 3, K + 4 });
    matcher.dematch(
        llr.data(), static_cast<int>(llr.shape(0)), rv, filler, d.mutable_data());
    return d;
}

/// turbo_decode's input: one (B, 3, K+4) array, or a list of (3, K_b+4) arrays.
struct turbo_input {
    std::vector<int> K;
    std::vector<float> llr; // back to back
    bool list = false;

    explicit turbo_input(const py::object& obj)
    {
        const std::string expected = "(B, 3, K+4) or a list of (3, K+4) arrays";
        if (py::isinstance<py::list>(obj) || py::isinstance<py::tuple>(obj)) {
            list = true;
            size_t b = 0;
            for (const auto& item : obj) {
                const auto a = carray<float>::ensure(item);
                if (!a)
                    throw py::value_error("llr[" + std::to_string(b) +
                                          "] is not a float array");
                if (a.ndim() != 2 || a.shape(0) != 3)
                    shape_error("llr[" + std::to_string(b) + "]", "(3, K+4)", a);
                append(a, static_cast<int>(a.shape(1)) - 4, b++);
            }
            return;
        }
        const auto a = carray<float>::ensure(obj);
        if (!a)
            throw py::value_error("llr must be a float array " + expected);
        if (a.ndim() != 3 || a.shape(1) != 3)
            shape_error("llr", expected, a);
        const int k = static_cast<int>(a.shape(2)) - 4;
        if (a.shape(0) > 0)
            checked_code_block_size(k);
        K.assign(a.shape(0), k);
        llr.assign(a.data(), a.data() + a.size());
    }

    void append(const carray<float>& a, int k, size_t b)
    {
        if (!::mimo_gpu::qpp_interleaver::is_block_size(k))
            throw py::value_error("llr[" + std::to_string(b) + "] has shape (3, " +
                                  std::to_string(k + 4) + "): K = " + std::to_string(k) +
                                  " is no code block size of TS 36.212 table 5.1.3-3");
        K.push_back(k);
        llr.insert(llr.end(), a.data(), a.data() + a.size());
    }
};

py::tuple turbo_decode(const py::object& llr_in,
                       const std::string& algorithm,
                       int iterations,
                       float extrinsic_scale,
                       int window,
                       const std::string& crc,
                       const std::string& backend,
                       bool app_llr)
{
    const turbo_input in(llr_in);
    ::mimo_gpu::lte_turbo_decoder decoder(
        turbo_config(algorithm, iterations, extrinsic_scale, window, crc),
        ::mimo_gpu::backend_from_string(backend));
    std::vector<uint8_t> bits(::mimo_gpu::lte_turbo_decoder::output_bits(in.K));
    std::vector<float> app(app_llr ? bits.size() : 0);
    std::vector<::mimo_gpu::turbo_block_result> results;
    if (!in.K.empty()) {
        py::gil_scoped_release release;
        results = decoder.decode(
            in.K, in.llr.data(), bits.data(), app_llr ? app.data() : nullptr);
    }

    py::list result_list;
    for (const auto& r : results) {
        py::dict d;
        d["iterations"] = r.iterations;
        // Without a CRC nothing was checked: None, not a False that reads as a failure.
        d["crc_ok"] = decoder.config().early_termination == ::mimo_gpu::crc_type::none
                          ? py::object(py::none())
                          : py::object(py::bool_(r.crc_ok));
        d["no_information"] = r.no_information;
        result_list.append(d);
    }
    py::object bits_out, app_out;
    if (in.list) {
        py::list bits_list, app_list;
        size_t offset = 0;
        for (int k : in.K) {
            auto b = new_array<uint8_t>({ k });
            std::copy_n(bits.data() + offset, k, b.mutable_data());
            bits_list.append(b);
            if (app_llr) {
                auto l = new_array<float>({ k });
                std::copy_n(app.data() + offset, k, l.mutable_data());
                app_list.append(l);
            }
            offset += k;
        }
        bits_out = bits_list;
        app_out = app_list;
    } else {
        const py::ssize_t B = in.K.size(), k = in.K.empty() ? 0 : in.K[0];
        auto b = new_array<uint8_t>({ B, k });
        std::copy(bits.begin(), bits.end(), b.mutable_data());
        bits_out = b;
        if (app_llr) {
            auto l = new_array<float>({ B, k });
            std::copy(app.begin(), app.end(), l.mutable_data());
            app_out = l;
        }
    }
    if (app_llr)
        return py::make_tuple(bits_out, result_list, app_out);
    return py::make_tuple(bits_out, result_list);
}

::mimo_gpu::transport_block_format tb_format(int A, int G, int Qm, int NL, int rv)
{
    ::mimo_gpu::transport_block_format format;
    format.A = A;
    format.G = G;
    format.Qm = Qm;
    format.NL = NL;
    format.rv = rv;
    format.validate();
    return format;
}

/// (count, n) or (n,) -> count; raises naming the expected shape otherwise.
size_t
rows_of(const py::array& a, const std::string& name, int n, const std::string& n_name)
{
    const std::string nn = n_name + " = " + std::to_string(n);
    if (a.ndim() == 1 && a.shape(0) == n)
        return 1;
    if (a.ndim() == 2 && a.shape(1) == n)
        return a.shape(0);
    shape_error(name, "(" + nn + ",) or (count, " + nn + ")", a);
}

py::array_t<uint8_t>
tb_encode(const carray<uint8_t>& a, int A, int G, int Qm, int NL, int rv)
{
    const ::mimo_gpu::transport_block_encoder encoder(tb_format(A, G, Qm, NL, rv));
    const size_t count = rows_of(a, "a", A, "A");
    for (py::ssize_t i = 0; i < a.size(); ++i)
        if (a.data()[i] > 1)
            throw py::value_error("a must hold bits 0/1, got " +
                                  std::to_string(a.data()[i]) + " at flat index " +
                                  std::to_string(i));
    std::vector<py::ssize_t> shape{ py::ssize_t(count), G };
    if (a.ndim() == 1)
        shape = { G };
    auto f = new_array<uint8_t>(shape);
    {
        py::gil_scoped_release release;
        for (size_t t = 0; t < count; ++t)
            encoder.encode(a.data() + t * A, f.mutable_data() + t * G);
    }
    return f;
}

py::tuple tb_decode(const carray<float>& llr,
                    int A,
                    int G,
                    int Qm,
                    int NL,
                    int rv,
                    const std::string& algorithm,
                    int iterations,
                    float extrinsic_scale,
                    int window,
                    const std::string& backend,
                    bool extrinsic)
{
    ::mimo_gpu::transport_block_decoder decoder(
        tb_format(A, G, Qm, NL, rv),
        turbo_config(algorithm, iterations, extrinsic_scale, window),
        ::mimo_gpu::backend_from_string(backend));
    const size_t count = rows_of(llr, "llr", G, "G");
    std::vector<py::ssize_t> shape{ py::ssize_t(count), A };
    if (llr.ndim() == 1)
        shape = { A };
    auto a = new_array<uint8_t>(shape);
    std::vector<py::ssize_t> llr_shape{ py::ssize_t(count), G };
    if (llr.ndim() == 1)
        llr_shape = { G };
    auto ext = new_array<float>(extrinsic ? llr_shape : std::vector<py::ssize_t>{ 0 });
    std::vector<::mimo_gpu::transport_block_result> results;
    if (count > 0) {
        py::gil_scoped_release release;
        results = decoder.decode(llr.data(),
                                 count,
                                 a.mutable_data(),
                                 extrinsic ? ext.mutable_data() : nullptr);
    }
    py::list result_list;
    for (const auto& r : results) {
        py::dict d;
        d["crc_ok"] = r.crc_ok;
        d["code_blocks"] = r.code_blocks;
        d["code_blocks_crc_ok"] = r.code_blocks_crc_ok;
        d["code_blocks_no_information"] = r.code_blocks_no_information;
        d["iterations"] = r.max_iterations;
        result_list.append(d);
    }
    if (extrinsic)
        return py::make_tuple(a, result_list, ext);
    return py::make_tuple(a, result_list);
}

} // namespace

void bind_core_detectors(py::module m); // core_detector_python.cc
void bind_core_receiver(py::module m);  // core_receiver_python.cc
void bind_core_ldpc(py::module m);      // core_ldpc_python.cc

void bind_core(py::module m)
{
    bind_core_detectors(m);
    bind_core_receiver(m);
    bind_core_ldpc(m);
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
          py::arg("symbols_per_channel") = 1,
          "Rayleigh channel plus AWGN: bits (B, nt*Q) uint8 -> (H (B, nr, nt), y (B, "
          "nr)) complex64. With symbols_per_channel = S > 1 (B = C*S), S consecutive "
          "problems share one channel: H (C, nr, nt), y (C, S, nr), the stream the "
          "mimo_channel block gives with the same seed and S.");

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
    // ---- LTE turbo code ----
    m.def("code_block_sizes",
          &::mimo_gpu::qpp_interleaver::block_sizes,
          "The 188 turbo code block sizes K of TS 36.212 table 5.1.3-3 (40..6144).");
    m.def("qpp_permutation",
          &qpp_permutation,
          py::arg("K"),
          "The QPP interleaver of K (int32, shape (K,)): c'_i = c_pi(i).");
    m.def(
        "crc_attach",
        &crc_attach,
        py::arg("bits"),
        py::arg("crc") = "crc24a",
        "bits (N,) uint8 followed by their CRC parity bits: crc24a, crc24b, crc16, crc8 "
        "or none.");
    m.def("crc_check",
          &crc_check,
          py::arg("bits"),
          py::arg("crc") = "crc24a",
          "True when the last L bits of bits (N,) are the CRC of those before them.");
    m.def("segmentation",
          &segmentation,
          py::arg("B"),
          "Code block segmentation (TS 36.212 5.1.2) of B bits (transport block + "
          "CRC24A): a dict with C, K_plus, K_minus, C_plus, C_minus, F, L and K (list).");
    m.def("turbo_encode",
          &turbo_encode,
          py::arg("bits"),
          "Turbo encoder (5.1.3.2): bits (K,) uint8 -> d (3, K+4) uint8 [d0; d1; d2] "
          "with the tail bits.");
    m.def("rate_match",
          &rate_match,
          py::arg("d"),
          py::arg("E"),
          py::arg("rv") = 0,
          py::arg("Ncb") = 0,
          "Rate matching (5.1.4.1) of one code block: d (3, K+4) uint8 -> e (E,) uint8, "
          "redundancy version rv; Ncb = 0: the whole circular buffer.");
    m.def("rate_dematch",
          &rate_dematch,
          py::arg("llr"),
          py::arg("K"),
          py::arg("rv") = 0,
          py::arg("filler") = 0,
          py::arg("Ncb") = 0,
          "Inverse rate matching: LLRs (E,) -> (3, K+4) float32, repeated bits added, "
          "bits not sent 0; filler: the F filler bits of this code block.");
    m.def(
        "turbo_decode",
        &turbo_decode,
        py::arg("llr"),
        py::arg("algorithm") = "max-log-map",
        py::arg("iterations") = 6,
        py::arg("extrinsic_scale") = 0.75f,
        py::arg("window") = 64,
        py::arg("crc") = "none",
        py::arg("backend") = "auto",
        py::arg("app_llr") = false,
        "Turbo decoder, all blocks in one batch: llr (B, 3, K+4) float32 -> (bits (B, "
        "K) uint8, results), or a list of (3, K_b+4) arrays (mixed K) -> (list of bits "
        "(K_b,), results). results: a dict per block (iterations, crc_ok: None without a "
        "crc, else whether the CRC ending the block passed (and early termination on "
        "it); no_information: the decoder had no information to decide the block by, "
        "crc_ok is then False). Finite LLRs are saturated to +-1e4. "
        "app_llr=True adds the a-posteriori LLRs as a third element, shaped like "
        "the bits.");
    m.def("tb_encode",
          &tb_encode,
          py::arg("a"),
          py::arg("A"),
          py::arg("G"),
          py::arg("Qm"),
          py::arg("NL") = 1,
          py::arg("rv") = 0,
          "Transport block encoder (CRC24A, segmentation, turbo, rate matching): a (A,) "
          "or (count, A) uint8 -> (G,) or (count, G) uint8.");
    m.def("tb_decode",
          &tb_decode,
          py::arg("llr"),
          py::arg("A"),
          py::arg("G"),
          py::arg("Qm"),
          py::arg("NL") = 1,
          py::arg("rv") = 0,
          py::arg("algorithm") = "max-log-map",
          py::arg("iterations") = 6,
          py::arg("extrinsic_scale") = 0.75f,
          py::arg("window") = 64,
          py::arg("backend") = "auto",
          py::arg("extrinsic") = false,
          "Transport block decoder, all blocks in one batch: llr (G,) or (count, G) "
          "float32 -> (a (A,) or (count, A) uint8, results: a dict per transport block "
          "with crc_ok, code_blocks, code_blocks_crc_ok, code_blocks_no_information, "
          "iterations). A G too small for A (a code block above rate 1) raises "
          "ValueError. extrinsic=True adds a third element, llr's shape: each "
          "transmitted bit's a-posteriori LLR less its received LLR (the detector's "
          "prior in an iterative receiver; 0 for blocks without information).");
}
