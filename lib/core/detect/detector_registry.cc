#include <mimo_gpu/detector_registry.h>

#include <cmath>
#include <cstdlib>
#include <sstream>
#include <stdexcept>

// The registered families: one line each. A family's folder (lib/core/detect/<name>/)
// defines detail::<name>_families(), which returns its detector_family entries.
// The order is that of listings and comparisons: the small-MIMO searches, the
// exact reference (ml) after them, then the large-MIMO families.
#define MIMO_GPU_DETECTOR_FAMILIES(X) \
    X(nway)                           \
    X(mtt)                            \
    X(fsd)                            \
    X(kbest)                          \
    X(ml)                             \
    X(mmse)                           \
    X(sumis)

namespace mimo_gpu {

namespace detail {
#define MIMO_GPU_DECLARE_FAMILY(name) std::vector<detector_family> name##_families();
MIMO_GPU_DETECTOR_FAMILIES(MIMO_GPU_DECLARE_FAMILY)
#undef MIMO_GPU_DECLARE_FAMILY
} // namespace detail

const std::vector<detector_family>& detector_families()
{
    static const std::vector<detector_family> all = [] {
        std::vector<detector_family> v;
#define MIMO_GPU_ADD_FAMILY(name)             \
    for (auto& f : detail::name##_families()) \
        v.push_back(std::move(f));
        MIMO_GPU_DETECTOR_FAMILIES(MIMO_GPU_ADD_FAMILY)
#undef MIMO_GPU_ADD_FAMILY
        return v;
    }();
    return all;
}

std::vector<std::string> detector_names()
{
    std::vector<std::string> names;
    for (const auto& f : detector_families())
        names.push_back(f.name);
    return names;
}

namespace {
std::string joined_names()
{
    std::string list;
    for (const auto& n : detector_names())
        list += (list.empty() ? "" : ", ") + n;
    return list;
}

std::string number(double v, int precision = 6)
{
    std::ostringstream out;
    out.precision(precision);
    out << v;
    return out.str();
}
} // namespace

const detector_family& find_detector_family(const std::string& name)
{
    for (const auto& f : detector_families())
        if (f.name == name)
            return f;
    throw std::invalid_argument("mimo_gpu: unknown detector '" + name +
                                "' (registered: " + joined_names() + ")");
}

const parameter_spec* detector_family::find(const std::string& parameter) const
{
    for (const auto& p : parameters)
        if (p.name == parameter)
            return &p;
    return nullptr;
}

const parameter_spec& detector_family::known(const std::string& parameter) const
{
    if (const parameter_spec* spec = find(parameter))
        return *spec;
    std::string list;
    for (const auto& p : parameters)
        list += (list.empty() ? "" : ", ") + p.name;
    throw std::invalid_argument("mimo_gpu: detector '" + name + "' has no parameter '" +
                                parameter + "' (" +
                                (list.empty() ? "it has none" : "it has " + list) + ")");
}

void parameter_spec::check(const std::string& family, double value) const
{
    if (!(value >= min && value <= max) || (integer && value != std::floor(value)))
        throw std::invalid_argument(
            "mimo_gpu: parameter '" + name + "' of detector '" + family + "' must be " +
            (integer ? "an integer " : "") + "in [" + number(min) + ", " + number(max) +
            "], got " + number(value));
}

detector_config detector_family::checked(const detector_config& config) const
{
    capabilities.check(name, config.shape, config.mod);
    detector_config out = config;
    for (const auto& [key, value] : config.parameters)
        known(key).check(name, value);
    for (const auto& p : parameters)
        out.parameters.emplace(p.name, p.default_value); // keeps given values
    if (validate)
        validate(out);
    return out;
}

bool detector_family::takes(const mimo_shape& shape, modulation mod) const
{
    return shape.nr >= 1 && shape.nt >= 1 && shape.nt <= shape.nr &&
           shape.nr <= capabilities.max_nr && shape.nt <= capabilities.max_nt &&
           capabilities.supports(mod);
}

double detector_family::cost_of(const detector_config& config) const
{
    return cost ? cost(checked(config)) : 0.0;
}

std::unique_ptr<detector>
make_detector(const std::string& name, const detector_config& config, backend requested)
{
    const detector_family& family = find_detector_family(name);
    return family.make(family, family.checked(config), requested);
}

std::unique_ptr<detector> make_detector(const detector_spec& spec,
                                        const mimo_shape& shape,
                                        modulation mod,
                                        backend requested)
{
    return make_detector(spec.name, { shape, mod, spec.parameters }, requested);
}

std::vector<detector_spec>
default_comparison(const mimo_shape& shape, modulation mod, double max_cost)
{
    std::vector<detector_spec> specs;
    for (const bool fallback : { false, true }) {
        if (fallback && !specs.empty())
            break;
        for (const detector_family& family : detector_families()) {
            if (family.comparison_fallback != fallback || !family.comparison_runs ||
                !family.takes(shape, mod))
                continue;
            for (const detector_parameters& parameters :
                 family.comparison_runs(shape, mod)) {
                try {
                    if (family.cost_of({ shape, mod, parameters }) <= max_cost)
                        specs.push_back({ family.name, parameters });
                } catch (const std::invalid_argument&) {
                    // a run the family's checks refuse for this shape is not listed
                }
            }
        }
    }
    return specs;
}

std::string detector_spec::label() const
{
    const detector_family& family = find_detector_family(name);
    std::string out = name;
    for (size_t i = 0; i < family.parameters.size(); ++i) {
        const auto it = parameters.find(family.parameters[i].name);
        if (it == parameters.end())
            continue;
        // A bare value only for a primary count ("nway:4", "kbest:16"); "ot:4"
        // would not say that 4 is the LLR clip.
        const bool bare = i == 0 && family.parameters[i].integer;
        out += ":" + (bare ? "" : it->first + "=") + number(it->second);
    }
    return out;
}

namespace {
double parse_number(const std::string& text, const std::string& what)
{
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || !std::isfinite(v))
        throw std::invalid_argument("mimo_gpu: " + what + ": '" + text +
                                    "' is not a finite number");
    return v;
}

std::vector<std::string> split(const std::string& text, const std::string& separators)
{
    std::vector<std::string> parts;
    std::string cur;
    for (char ch : text) {
        if (separators.find(ch) != std::string::npos) {
            parts.push_back(cur);
            cur.clear();
        } else {
            cur += ch;
        }
    }
    parts.push_back(cur);
    return parts;
}
} // namespace

detector_parameters parse_parameter_list(const std::string& text)
{
    detector_parameters out;
    for (const auto& part : split(text, ",:; ")) {
        if (part.empty())
            continue;
        const auto eq = part.find('=');
        if (eq == std::string::npos || eq == 0)
            throw std::invalid_argument("mimo_gpu: detector parameter '" + part +
                                        "' is not NAME=VALUE");
        const std::string name = part.substr(0, eq);
        if (out.count(name))
            throw std::invalid_argument("mimo_gpu: detector parameter '" + name +
                                        "' is given twice in '" + text + "'");
        out[name] = parse_number(part.substr(eq + 1), "parameter '" + name + "'");
    }
    return out;
}

std::string format_parameter_list(const detector_parameters& parameters)
{
    std::string out;
    for (const auto& [name, value] : parameters)
        out +=
            (out.empty() ? "" : ",") + name + "=" + number(value, 17); // exact round trip
    return out;
}

detector_spec parse_detector_spec(const std::string& text)
{
    const auto parts = split(text, ":");
    detector_spec spec;
    spec.name = parts[0];
    const detector_family& family = find_detector_family(spec.name);
    const auto set_once = [&](const std::string& name, double value) {
        if (!spec.parameters.emplace(name, value).second) // "nway:2:passes=3"
            throw std::invalid_argument("mimo_gpu: detector parameter '" + name +
                                        "' is given twice in '" + text + "'");
    };
    for (size_t i = 1; i < parts.size(); ++i) {
        const std::string& part = parts[i];
        if (part.find('=') == std::string::npos) {
            if (family.parameters.empty())
                throw std::invalid_argument("mimo_gpu: detector '" + spec.name +
                                            "' has no parameters, got '" + part +
                                            "' in '" + text + "'");
            set_once(family.parameters.front().name,
                     parse_number(part, "detector '" + text + "'"));
        } else {
            for (const auto& [k, v] : parse_parameter_list(part))
                set_once(k, v);
        }
    }
    // Unknown names and values out of range are reported now, not when a detector is
    // made.
    for (const auto& [key, value] : spec.parameters)
        family.known(key).check(spec.name, value);
    return spec;
}

std::vector<detector_spec> parse_detector_list(const std::string& text)
{
    std::vector<detector_spec> specs;
    for (const auto& part : split(text, ", ")) {
        if (!part.empty())
            specs.push_back(parse_detector_spec(part));
    }
    if (specs.empty())
        throw std::invalid_argument("mimo_gpu: no detector named in '" + text + "'");
    return specs;
}

} // namespace mimo_gpu
