/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// What the numpy bindings of the core share: C-contiguous converted arrays and
// the ValueError for an array of the wrong shape.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <sstream>
#include <string>

namespace mimo_gpu_python {

namespace py = pybind11;

template <typename T>
using carray = py::array_t<T, py::array::c_style | py::array::forcecast>;

/// "(3, 4)", "(5,)".
inline std::string shape_string(const py::array& a)
{
    std::ostringstream out;
    out << "(";
    for (py::ssize_t d = 0; d < a.ndim(); ++d)
        out << (d ? ", " : "") << a.shape(d);
    out << (a.ndim() == 1 ? ",)" : ")");
    return out.str();
}

/// Raises ValueError: "NAME must have shape EXPECTED, got (...)".
[[noreturn]] inline void
shape_error(const std::string& name, const std::string& expected, const py::array& got)
{
    throw py::value_error(name + " must have shape " + expected + ", got " +
                          shape_string(got));
}

} // namespace mimo_gpu_python
