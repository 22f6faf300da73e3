#include "command_line.h"

#include <cmath>
#include <iostream>
#include <sstream>

namespace mimo_gpu_apps {

command_line::command_line(std::string program, std::string summary, std::string details)
    : m_program(std::move(program)),
      m_summary(std::move(summary)),
      m_details(std::move(details))
{
}

void command_line::add_option(const std::string& name,
                              const std::string& value_name,
                              const std::string& help,
                              const std::string& default_value,
                              bool required)
{
    m_order.push_back(name);
    m_options[name] = option{ value_name, help, default_value, required, false, false };
}

void command_line::add_flag(const std::string& name,
                            const std::string& help,
                            bool negatable)
{
    m_order.push_back(name);
    m_options[name] = option{ "", help, "", false, true, negatable };
}

const command_line::option& command_line::find(const std::string& name) const
{
    auto it = m_options.find(name);
    if (it == m_options.end())
        throw std::logic_error("command_line: option --" + name + " was never declared");
    return it->second;
}

void command_line::parse(int argc, char** argv)
{
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        if (arg == "--help" || arg == "-h") {
            m_help = true;
            return;
        }
        if (arg.rfind("--", 0) != 0 || arg.size() == 2)
            throw usage_error("unexpected argument '" + arg +
                              "' (options start with --)");
        std::string name = arg.substr(2);
        std::optional<std::string> value;
        if (auto eq = name.find('='); eq != std::string::npos) {
            value = name.substr(eq + 1);
            name = name.substr(0, eq);
        }
        auto it = m_options.find(name);
        if (it == m_options.end() && name.rfind("no-", 0) == 0) {
            auto positive = m_options.find(name.substr(3));
            if (positive != m_options.end() && positive->second.negatable) {
                if (value)
                    throw usage_error("option --" + name + " takes no value");
                m_flags[name.substr(3)] = false;
                continue;
            }
        }
        if (it == m_options.end())
            throw usage_error("unknown option --" + name);
        if (it->second.is_flag) {
            if (value)
                throw usage_error("option --" + name + " takes no value");
            m_flags[name] = true;
            continue;
        }
        if (!value) {
            if (i + 1 >= argc)
                throw usage_error("option --" + name + " needs a value (" +
                                  it->second.value_name + ")");
            value = argv[++i];
        }
        m_values[name] = *value;
    }
    for (const auto& name : m_order) {
        const option& opt = m_options.at(name);
        if (opt.required && !m_values.count(name))
            throw usage_error("option --" + name + " " + opt.value_name + " is required");
    }
}

std::string command_line::usage() const
{
    std::ostringstream out;
    out << "Usage: " << m_program << " [OPTIONS]\n\n" << m_summary << "\n\nOptions:\n";
    for (const auto& name : m_order) {
        const option& opt = m_options.at(name);
        std::string left = "  --" + name;
        if (opt.is_flag && opt.negatable)
            left += ", --no-" + name;
        if (!opt.is_flag)
            left += " " + opt.value_name;
        out << left;
        if (left.size() < 28)
            out << std::string(28 - left.size(), ' ');
        else
            out << "\n" << std::string(28, ' ');
        out << opt.help;
        if (opt.required)
            out << " (required)";
        else if (!opt.default_value.empty())
            out << " (default " << opt.default_value << ")";
        out << "\n";
    }
    out << "  --help                    print this text and exit\n";
    if (!m_details.empty())
        out << "\n" << m_details;
    return out.str();
}

bool command_line::is_set(const std::string& name) const
{
    const option& opt = find(name);
    if (opt.is_flag)
        return m_flags.count(name) > 0;
    return m_values.count(name) > 0 || !opt.default_value.empty();
}

std::optional<bool> command_line::flag(const std::string& name) const
{
    find(name);
    auto it = m_flags.find(name);
    if (it == m_flags.end())
        return std::nullopt;
    return it->second;
}

std::string command_line::text(const std::string& name) const
{
    const option& opt = find(name);
    auto it = m_values.find(name);
    if (it != m_values.end())
        return it->second;
    if (opt.default_value.empty())
        throw usage_error("option --" + name + " " + opt.value_name + " is required");
    return opt.default_value;
}

namespace {

long long parse_integer(const std::string& name, const std::string& s)
{
    size_t used = 0;
    long long v = 0;
    try {
        v = std::stoll(s, &used, 0);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used == 0 || used != s.size())
        throw usage_error("option --" + name + ": '" + s + "' is not an integer");
    return v;
}

double parse_real(const std::string& name, const std::string& s)
{
    size_t used = 0;
    double v = 0;
    try {
        v = std::stod(s, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used == 0 || used != s.size() || !std::isfinite(v))
        throw usage_error("option --" + name + ": '" + s + "' is not a finite number");
    return v;
}

std::vector<std::string> split(const std::string& s, char sep)
{
    std::vector<std::string> parts;
    std::string part;
    std::istringstream in(s);
    while (std::getline(in, part, sep))
        parts.push_back(part);
    if (!s.empty() && s.back() == sep)
        parts.push_back("");
    return parts;
}

} // namespace

long long
command_line::integer(const std::string& name, long long min, long long max) const
{
    long long v = parse_integer(name, text(name));
    if (v < min || v > max)
        throw usage_error("option --" + name + ": " + std::to_string(v) + " is outside " +
                          std::to_string(min) + ".." + std::to_string(max));
    return v;
}

double command_line::real(const std::string& name) const
{
    return parse_real(name, text(name));
}

std::vector<int>
command_line::integer_list(const std::string& name, int min, int max) const
{
    std::vector<int> values;
    for (const auto& part : split(text(name), ',')) {
        long long v = parse_integer(name, part);
        if (v < min || v > max)
            throw usage_error("option --" + name + ": " + std::to_string(v) +
                              " is outside " + std::to_string(min) + ".." +
                              std::to_string(max));
        values.push_back(int(v));
    }
    if (values.empty())
        throw usage_error("option --" + name + ": empty list");
    return values;
}

std::vector<double> command_line::real_range(const std::string& name) const
{
    auto parts = split(text(name), ':');
    if (parts.size() == 1)
        return { parse_real(name, parts[0]) };
    if (parts.size() != 3)
        throw usage_error("option --" + name +
                          ": expected START:STOP:STEP or one number, got '" + text(name) +
                          "'");
    double start = parse_real(name, parts[0]), stop = parse_real(name, parts[1]),
           step = parse_real(name, parts[2]);
    if (step <= 0 || stop < start)
        throw usage_error("option --" + name + ": need STEP > 0 and STOP >= START in '" +
                          text(name) + "'");
    std::vector<double> values;
    const long long count = (long long)std::floor((stop - start) / step + 1e-9) + 1;
    if (count > 10000)
        throw usage_error("option --" + name + ": more than 10000 points");
    for (long long i = 0; i < count; ++i)
        values.push_back(start + double(i) * step);
    return values;
}

int run_program(command_line& cli,
                int argc,
                char** argv,
                const std::function<int()>& body)
{
    try {
        cli.parse(argc, argv);
        if (cli.help_requested()) {
            std::cout << cli.usage();
            return 0;
        }
        return body();
    } catch (const usage_error& e) {
        std::cerr << cli.program() << ": " << e.what() << "\nTry '" << cli.program()
                  << " --help' for the options.\n";
        return 2;
    } catch (const std::exception& e) {
        std::cerr << cli.program() << ": error: " << e.what() << "\n";
        return 1;
    }
}

} // namespace mimo_gpu_apps
