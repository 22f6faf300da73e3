/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// mimo_gpu.core.detector: every registered detector family as an object that
// keeps its state (CUDA stream, device and pinned buffers) across calls:
//   det = core.detector("mtt", nr=2, nt=2, modulation="16qam")
//   llr = det.detect(H, y, noise_var)
//   z, sinr = det.equalize(H, y, noise_var)   (mmse / mmse_cg only)
// and core.detector_families() describing each family.

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <mimo_gpu/detector_registry.h>
#include <mimo_gpu/mmse_detector.h>

#include "numpy_arrays.h"

#include <limits>
#include <sstream>
#include <string>
#include <vector>

namespace py = pybind11;
using ::mimo_gpu::cfloat;

namespace {

using mimo_gpu_python::carray;
using mimo_gpu_python::shape_error;

py::dict capabilities_of(const ::mimo_gpu::detector_capabilities& c)
{
    py::dict d;
    d["max_nr"] = c.max_nr;
    d["max_nt"] = c.max_nt;
    std::vector<std::string> mods;
    for (auto m : c.modulations)
        mods.push_back(::mimo_gpu::to_string(m));
    d["modulations"] = mods;
    d["soft_output"] = c.soft_output;
    d["exact_max_log"] = c.exact_max_log;
    d["accepts_priors"] = c.accepts_priors;
    d["reuses_channels"] = c.reuses_channels;
    d["erases_rank_deficient"] = c.erases_rank_deficient;
    d["bit_identical_backends"] = c.bit_identical_backends;
    d["device_path"] = c.device_path;
    return d;
}

/// A Python number as a double; anything else (a string, None) is a ValueError
/// naming `what`, not pybind11's "Unable to cast Python instance to C++ type".
double number_argument(const py::handle& value, const std::string& what)
{
    if (py::isinstance<py::str>(value) || py::isinstance<py::bytes>(value) ||
        value.is_none())
        throw py::value_error(what + " must be a number, got " +
                              std::string(py::repr(value)));
    try {
        return py::cast<double>(value);
    } catch (const py::cast_error&) {
        throw py::value_error(what + " must be a number, got " +
                              std::string(py::repr(value)));
    }
}

/// A Python integer for symbols_per_channel (ValueError otherwise).
py::ssize_t integer_argument(const py::handle& value, const std::string& what)
{
    try {
        if (!py::isinstance<py::int_>(value))
            throw py::cast_error();
        return py::cast<py::ssize_t>(value);
    } catch (const py::cast_error&) {
        throw py::value_error(what + " must be an integer, got " +
                              std::string(py::repr(value)));
    }
}

std::unique_ptr<::mimo_gpu::detector> make(const std::string& algorithm,
                                           int nr,
                                           int nt,
                                           const std::string& modulation,
                                           const std::string& backend,
                                           const py::kwargs& parameters)
{
    ::mimo_gpu::detector_config config;
    config.shape.nr = nr;
    config.shape.nt = nt;
    config.mod = ::mimo_gpu::modulation_from_string(modulation);
    auto policy = ::mimo_gpu::bad_problem_policy::stop;
    for (const auto& [key, value] : parameters) {
        const auto name = py::cast<std::string>(key);
        if (name == "policy") {
            if (!py::isinstance<py::str>(value))
                throw py::value_error("detector '" + algorithm +
                                      "': policy must be 'erase' or 'stop', got " +
                                      std::string(py::repr(value)));
            policy = ::mimo_gpu::parse_bad_problem_policy(py::cast<std::string>(value));
        } else {
            config.parameters[name] =
                number_argument(value, "detector '" + algorithm + "': parameter " + name);
        }
    }
    auto det = ::mimo_gpu::make_detector(
        algorithm, config, ::mimo_gpu::backend_from_string(backend));
    det->set_bad_problem_policy(policy);
    return det;
}

py::dict report_dict(const ::mimo_gpu::detection_report& r)
{
    py::dict d;
    d["problems"] = r.problems;
    d["erased"] = r.erased;
    py::list first;
    for (const auto& e : r.first_erased)
        first.append(py::make_tuple(e.index, ::mimo_gpu::to_string(e.cause)));
    d["first_erased"] = first;
    return d;
}

/// H (C, nr, nt); y (C, nr) or (C, S, nr); priors and the result shaped like y
/// with nt*Q in place of nr. Float LLRs, or int8 when int8_scale is given.
py::object detect(::mimo_gpu::detector& det,
                  carray<cfloat> H,
                  carray<cfloat> y,
                  double noise_var,
                  const py::object& priors,
                  const py::object& int8_scale,
                  bool report)
{
    const int nr = det.shape().nr, nt = det.shape().nt, L = det.llrs_per_problem();
    const std::string hs = "(C, " + std::to_string(nr) + ", " + std::to_string(nt) + ")";
    if (H.ndim() != 3 || H.shape(1) != nr || H.shape(2) != nt)
        shape_error("H", hs, H);
    const py::ssize_t C = H.shape(0);
    const bool shared = y.ndim() == 3;
    if (!(y.ndim() == 2 || shared) || y.shape(0) != C || y.shape(y.ndim() - 1) != nr)
        shape_error("y",
                    "(C, nr) or (C, S, nr) with C = " + std::to_string(C) +
                        ", nr = " + std::to_string(nr),
                    y);
    const py::ssize_t S = shared ? y.shape(1) : 1;
    if (S < 1 || S > std::numeric_limits<int>::max())
        shape_error("y", "(C, S, nr) with 1 <= S <= 2^31 - 1", y);
    std::vector<py::ssize_t> out_shape =
        shared ? std::vector<py::ssize_t>{ C, S, L } : std::vector<py::ssize_t>{ C, L };
    ::mimo_gpu::detector_input in;
    in.H = H.data();
    in.y = y.data();
    in.channels = size_t(C);
    in.symbols_per_channel = int(S);
    in.n0 = float(noise_var); // checked by detect() (in float: 1e-50 is refused there)
    carray<float> prior_array;
    if (!priors.is_none()) {
        prior_array = py::cast<carray<float>>(priors);
        std::vector<py::ssize_t> got(prior_array.shape(),
                                     prior_array.shape() + prior_array.ndim());
        if (got != out_shape)
            shape_error("priors",
                        "the output's shape (" + std::to_string(C) + ", ...)",
                        prior_array);
        in.priors = prior_array.data();
    }
    ::mimo_gpu::detection_report r;
    py::array result;
    if (!int8_scale.is_none()) {
        const float scale = float(number_argument(int8_scale, "detect: int8_scale"));
        py::array_t<int8_t> out(out_shape);
        {
            py::gil_scoped_release release;
            r = det.detect(in, out.mutable_data(), scale);
        }
        result = std::move(out);
    } else {
        py::array_t<float> out(out_shape);
        {
            py::gil_scoped_release release;
            r = det.detect(in, out.mutable_data());
        }
        result = std::move(out);
    }
    if (report)
        return py::make_tuple(result, report_dict(r));
    return result;
}

/// H (C, nr, nt); y (C, nr), or (C, S, nr), or (C*S, nr) with symbols_per_channel = S;
/// z (complex64) and sinr (float32) shaped like y with nt in place of nr.
py::tuple equalize(::mimo_gpu::detector& det,
                   carray<cfloat> H,
                   carray<cfloat> y,
                   double noise_var,
                   const py::object& symbols_per_channel,
                   bool report)
{
    auto* mmse = dynamic_cast<::mimo_gpu::mmse_detector*>(&det);
    if (!mmse)
        throw py::type_error("equalize: detector '" + det.name() +
                             "' has no equalised symbols (only the MMSE families do: "
                             "mmse, mmse_cg); use detect() for its LLRs");
    const int nr = det.shape().nr, nt = det.shape().nt;
    if (H.ndim() != 3 || H.shape(1) != nr || H.shape(2) != nt)
        shape_error(
            "H", "(C, " + std::to_string(nr) + ", " + std::to_string(nt) + ")", H);
    const py::ssize_t C = H.shape(0);
    py::ssize_t S = 1;
    std::vector<py::ssize_t> out_shape;
    if (y.ndim() == 3) {
        S = y.shape(1);
        if (y.shape(0) != C || y.shape(2) != nr || S < 1)
            shape_error("y",
                        "(C, S, nr) with C = " + std::to_string(C) +
                            ", S >= 1, nr = " + std::to_string(nr),
                        y);
        if (!symbols_per_channel.is_none() &&
            integer_argument(symbols_per_channel, "equalize: symbols_per_channel") != S)
            throw py::value_error(
                "equalize: symbols_per_channel = " +
                std::to_string(py::cast<py::ssize_t>(symbols_per_channel)) +
                " but y has S = " + std::to_string(S) + " symbols per channel (axis 1)");
        out_shape = { C, S, nt };
    } else {
        if (!symbols_per_channel.is_none())
            S = integer_argument(symbols_per_channel, "equalize: symbols_per_channel");
        if (S < 1)
            throw py::value_error("equalize: symbols_per_channel must be >= 1, got " +
                                  std::to_string(S));
        if (y.ndim() != 2 || y.shape(0) != C * S || y.shape(1) != nr)
            shape_error("y",
                        "(C*S, nr) = (" + std::to_string(C * S) + ", " +
                            std::to_string(nr) + ") or (C, S, nr)",
                        y);
        out_shape = { C * S, nt };
    }
    if (S > std::numeric_limits<int>::max())
        throw py::value_error("equalize: symbols_per_channel is too large");
    ::mimo_gpu::detector_input in;
    in.H = H.data();
    in.y = y.data();
    in.channels = size_t(C);
    in.symbols_per_channel = int(S);
    in.n0 = float(noise_var); // checked by equalize() (in float)
    py::array_t<cfloat> z(out_shape);
    py::array_t<float> sinr(out_shape);
    ::mimo_gpu::detection_report r;
    {
        py::gil_scoped_release release;
        r = mmse->equalize(in, z.mutable_data(), sinr.mutable_data());
    }
    if (report)
        return py::make_tuple(z, sinr, report_dict(r));
    return py::make_tuple(z, sinr);
}

} // namespace

void bind_core_detectors(py::module m)
{
    using ::mimo_gpu::detector;
    py::class_<detector>(
        m,
        "detector",
        "A MIMO detector of a registered family, made once and used for many "
        "batches (its buffers and CUDA stream are kept). Not for concurrent use "
        "from several threads.")
        .def(py::init(&make),
             py::arg("algorithm"),
             py::arg("nr"),
             py::arg("nt"),
             py::arg("modulation") = "16qam",
             py::arg("backend") = "auto",
             "detector(algorithm, nr, nt, modulation='16qam', backend='auto', "
             "**parameters), "
             "e.g. detector('nway', 4, 4, '16qam', passes=2, policy='erase'). Unknown "
             "names, parameters, "
             "or "
             "shapes and modulations the family does not take raise ValueError.")
        .def("detect",
             &detect,
             py::arg("H"),
             py::arg("y"),
             py::arg("noise_var"),
             py::arg("priors") = py::none(),
             py::arg("int8_scale") = py::none(),
             py::arg("report") = false,
             "LLRs of H (C, nr, nt) complex64 and y (C, nr), or y (C, S, nr) for S "
             "received "
             "vectors per channel: float32 (C, nt*Q) or (C, S, nt*Q), positive means bit "
             "0; "
             "int8 (q = round(L * int8_scale), saturated at +-127) when int8_scale is "
             "given. "
             "priors: a-priori LLRs shaped like the output, for families that take them. "
             "A problem with NaN/Inf input or a rank-deficient H gets LLRs 0; with "
             "policy 'stop' (the default) the call then raises ValueError, with 'erase' "
             "it does not. report=True returns (llr, {'problems', 'erased', "
             "'first_erased': [(index, cause), ...]}).")
        .def("equalize",
             &equalize,
             py::arg("H"),
             py::arg("y"),
             py::arg("noise_var"),
             py::arg("symbols_per_channel") = py::none(),
             py::arg("report") = false,
             "MMSE families (mmse, mmse_cg) only: the equalised symbols and their SINRs "
             "behind the LLRs. H (C, nr, nt) complex64; y (C, nr), (C, S, nr), or "
             "(C*S, nr) with symbols_per_channel=S (problem c*S + s uses H[c]). Returns "
             "(z, sinr) shaped like y with nt in place of nr: z = x_hat / lambda, the "
             "unbiased MMSE estimate of each user's symbol (complex64), and sinr = rho, "
             "its post-equalisation SINR (float32). A bad problem (NaN/Inf, singular H) "
             "gets 0 in both; the policy applies as in detect(). report=True appends "
             "the report dict. Other families raise TypeError.")
        .def_property(
            "policy",
            [](const detector& d) {
                return std::string(::mimo_gpu::to_string(d.bad_problems()));
            },
            [](detector& d, const std::string& p) {
                d.set_bad_problem_policy(::mimo_gpu::parse_bad_problem_policy(p));
            },
            "What a bad problem does: 'stop' (raise ValueError) or 'erase' (LLRs 0, "
            "reported).")
        .def_property_readonly("name", &detector::name)
        .def_property_readonly("nr", [](const detector& d) { return d.shape().nr; })
        .def_property_readonly("nt", [](const detector& d) { return d.shape().nt; })
        .def_property_readonly(
            "modulation",
            [](const detector& d) { return ::mimo_gpu::to_string(d.mod()); })
        .def_property_readonly(
            "backend",
            [](const detector& d) { return ::mimo_gpu::to_string(d.active_backend()); })
        .def_property_readonly("llrs_per_problem", &detector::llrs_per_problem)
        .def_property_readonly("parameters", &detector::parameters)
        .def_property_readonly(
            "capabilities",
            [](const detector& d) { return capabilities_of(d.capabilities()); })
        .def("parameter", &detector::parameter, py::arg("name"))
        .def("set_parameter",
             &detector::set_parameter,
             py::arg("name"),
             py::arg("value"),
             "Change a parameter the family lets change (e.g. llr_clip).")
        .def("__repr__", [](const detector& d) {
            return "<mimo_gpu.core.detector " + d.name() + " " +
                   std::to_string(d.shape().nr) + "x" + std::to_string(d.shape().nt) +
                   " " + ::mimo_gpu::to_string(d.mod()) + " (" +
                   ::mimo_gpu::format_parameter_list(d.parameters()) + ") on " +
                   ::mimo_gpu::to_string(d.active_backend()) + ">";
        });

    m.def("detector_names",
          &::mimo_gpu::detector_names,
          "The registered detector families.");
    m.def(
        "detector_families",
        [] {
            py::list out;
            for (const auto& f : ::mimo_gpu::detector_families()) {
                py::dict d;
                d["name"] = f.name;
                d["summary"] = f.summary;
                d["capabilities"] = capabilities_of(f.capabilities);
                py::list params;
                for (const auto& p : f.parameters) {
                    py::dict q;
                    q["name"] = p.name;
                    q["default"] = p.default_value;
                    q["min"] = p.min;
                    q["max"] = p.max;
                    q["integer"] = p.integer;
                    q["settable"] = p.settable;
                    q["help"] = p.help;
                    params.append(q);
                }
                d["parameters"] = params;
                out.append(d);
            }
            return out;
        },
        "Each registered family: name, summary, capabilities and parameters.");
}
