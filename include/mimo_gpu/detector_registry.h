// Detector families by name: make_detector("mtt", config, backend).
#pragma once

#include <mimo_gpu/detector.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace mimo_gpu {

/// One registered family: its name, what it can do, its parameters, what
/// programs need to know about it, and its factory. The entry is the one
/// place a family states these; its detectors take them from here.
struct detector_family {
    std::string name;
    std::string summary; ///< one line for help texts and the GRC dropdown
    detector_capabilities capabilities;
    /// The first parameter is the family's primary one: "nway:4" sets it.
    std::vector<parameter_spec> parameters;
    std::function<std::unique_ptr<detector>(
        const detector_family&, const detector_config&, backend)>
        make;
    /// Checks beyond the capabilities and parameter ranges (throws
    /// std::invalid_argument); may be empty.
    std::function<void(const detector_config&)> validate;
    /// The work of one problem in candidate distances |y - Hs|^2 (or their
    /// equivalent), defaults filled in: programs leave out what costs more
    /// than they allow. Empty: cheap.
    std::function<double(const detector_config&)> cost;
    /// The parameter sets a comparison of detectors runs for a shape and
    /// modulation (the simulation's default list), in order; empty function
    /// or list: the family is left out there.
    std::function<std::vector<detector_parameters>(const mimo_shape&, modulation)>
        comparison_runs;
    /// In a comparison, listed only where no other family is (massive MIMO).
    bool comparison_fallback = false;

    /// The config with defaults filled in, checked: shape and modulation within
    /// the capabilities, every parameter known and in range, validate()
    /// (throws std::invalid_argument).
    detector_config checked(const detector_config& config) const;
    bool takes(const mimo_shape& shape, modulation mod) const;
    double cost_of(const detector_config& config) const;
    const parameter_spec* find(const std::string& parameter) const;
    /// As find, but an unknown name throws std::invalid_argument listing the family's
    /// parameters.
    const parameter_spec& known(const std::string& parameter) const;
};

/// Every family, in registration order.
const std::vector<detector_family>& detector_families();
std::vector<std::string> detector_names();
/// Throws std::invalid_argument listing the registered names for an unknown one.
const detector_family& find_detector_family(const std::string& name);

/// Makes a detector of family `name` (config checked first).
std::unique_ptr<detector> make_detector(const std::string& name,
                                        const detector_config& config,
                                        backend requested = backend::automatic);

/// A detector named as the programs and blocks take it: "nway:4",
/// "nway:passes=2:llr_clip=8", "mtt", "ml". A bare value sets the family's
/// primary parameter.
struct detector_spec {
    std::string name;
    detector_parameters parameters;
    /// "nway:4" style label for tables: the name and the non-default values given.
    std::string label() const;
};
/// Throws std::invalid_argument for an unknown family, parameter or a value that is not a
/// number.
detector_spec parse_detector_spec(const std::string& text);
/// The detectors a comparison runs by default for a shape and modulation:
/// every family's comparison_runs within max_cost distances per problem
/// (fallback families only where no other is listed), in registration order.
std::vector<detector_spec>
default_comparison(const mimo_shape& shape, modulation mod, double max_cost);
/// Makes a detector from a parsed spec.
std::unique_ptr<detector> make_detector(const detector_spec& spec,
                                        const mimo_shape& shape,
                                        modulation mod,
                                        backend requested = backend::automatic);
/// "nway:1,nway:4,mtt,ml" -> the specs, in order.
std::vector<detector_spec> parse_detector_list(const std::string& text);
/// "passes=2,llr_clip=8" (or ':' / ';' / space separated) -> values; "" -> none.
detector_parameters parse_parameter_list(const std::string& text);
/// The inverse: "llr_clip=8,passes=2" (what the GNU Radio detector block takes).
std::string format_parameter_list(const detector_parameters& parameters);

} // namespace mimo_gpu
