// Command-line options of the mimo_gpu programs: declaration, parsing, usage text
// and the exit-code convention (2 for a usage error, 1 for a run-time error).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace mimo_gpu_apps {

/// A bad or missing option: the program prints the message and exits with code 2.
struct usage_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

class command_line
{
public:
    /// summary: one paragraph printed under the usage line; details: printed after the
    /// options.
    command_line(std::string program, std::string summary, std::string details = "");

    /// --name VALUE (or --name=VALUE). An empty default_value with required=false means
    /// "unset".
    void add_option(const std::string& name,
                    const std::string& value_name,
                    const std::string& help,
                    const std::string& default_value = "",
                    bool required = false);
    /// --name, and also --no-name when negatable.
    void
    add_flag(const std::string& name, const std::string& help, bool negatable = false);

    /// Parses argv. Throws usage_error on an unknown option, a missing value or a
    /// missing required option. After --help, help_requested() is true and nothing
    /// else is checked.
    void parse(int argc, char** argv);
    bool help_requested() const { return m_help; }
    std::string usage() const;
    const std::string& program() const { return m_program; }

    bool
    is_set(const std::string& name) const; ///< given on the command line or has a default
    /// --name -> true, --no-name -> false, neither -> nullopt.
    std::optional<bool> flag(const std::string& name) const;

    std::string text(const std::string& name) const;
    long long integer(const std::string& name, long long min, long long max) const;
    double real(const std::string& name) const;
    /// "1,2,4" -> {1,2,4}; each element checked against [min, max].
    std::vector<int> integer_list(const std::string& name, int min, int max) const;
    /// "start:stop:step" (stop included) or a single number -> the values.
    std::vector<double> real_range(const std::string& name) const;

private:
    struct option {
        std::string value_name, help, default_value;
        bool required = false, is_flag = false, negatable = false;
    };
    const option& find(const std::string& name) const;

    std::string m_program, m_summary, m_details;
    std::vector<std::string> m_order;
    std::map<std::string, option> m_options;
    std::map<std::string, std::string> m_values;
    std::map<std::string, bool> m_flags;
    bool m_help = false;
};

/// Parses argv into `cli`, prints the usage on --help, else runs `body`, and maps
/// exceptions to the programs' exit codes: prints usage errors with a hint to --help
/// (exit 2), other errors as "PROGRAM: error: ..." (exit 1).
int run_program(command_line& cli,
                int argc,
                char** argv,
                const std::function<int()>& body);

} // namespace mimo_gpu_apps

namespace mimo_gpu_apps {

/// Runs `setup` (which builds objects from option values) and turns the
/// std::invalid_argument that the core throws for a bad parameter into a usage_error.
template <class F>
auto checked_setup(F&& setup) -> decltype(setup())
{
    try {
        return setup();
    } catch (const std::invalid_argument& e) {
        throw usage_error(e.what());
    }
}

} // namespace mimo_gpu_apps
