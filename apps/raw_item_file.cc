#include "raw_item_file.h"

#include <system_error>
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include <csignal>

#include <sys/stat.h>
#include <unistd.h>

namespace mimo_gpu_apps {

namespace {
std::string in_quotes(const std::string& path) { return "'" + path + "'"; }
} // namespace

raw_item_reader::raw_item_reader(const std::string& path,
                                 size_t item_size,
                                 const std::string& role)
    : m_path(path), m_role(role), m_item_size(item_size)
{
    if (item_size == 0)
        throw std::invalid_argument("raw_item_reader: item size 0");
    std::error_code ec;
    const auto status = std::filesystem::status(path, ec);
    if (ec || !std::filesystem::exists(status))
        throw file_error("cannot open " + role + " " + in_quotes(path) +
                         ": no such file");
    if (std::filesystem::is_directory(status))
        throw file_error("cannot read " + role + " " + in_quotes(path) +
                         ": it is a directory");
    // A FIFO or a device has no size, and opening a FIFO would wait for a writer.
    if (!std::filesystem::is_regular_file(status))
        throw file_error(
            "cannot read " + role + " " + in_quotes(path) +
            ": not a regular file (a FIFO, socket or device); copy the data to a "
            "file first");
    m_in.open(path, std::ios::binary);
    if (!m_in)
        throw file_error("cannot open " + role + " " + in_quotes(path) + ": " +
                         std::strerror(errno));
    m_in.seekg(0, std::ios::end);
    const std::streamoff end = m_in.tellg();
    m_in.seekg(0, std::ios::beg);
    if (end < 0 || !m_in)
        throw file_error("cannot determine the size of " + role + " " + in_quotes(path) +
                         " (it must be a regular file)");
    m_size = uint64_t(end);
    if (m_size % m_item_size != 0)
        throw file_error(role + " " + in_quotes(path) + " has " + std::to_string(m_size) +
                         " bytes, not a whole number of " + std::to_string(m_item_size) +
                         "-byte items (" + std::to_string(items()) + " items and " +
                         std::to_string(m_size % m_item_size) +
                         " bytes over): truncated, or written with other dimensions");
}

size_t raw_item_reader::read(void* dst, size_t max_items)
{
    const uint64_t left = items() - m_items_read;
    const size_t want = size_t(std::min<uint64_t>(left, max_items));
    if (want == 0)
        return 0;
    m_in.read(static_cast<char*>(dst), std::streamsize(want * m_item_size));
    if (size_t(m_in.gcount()) != want * m_item_size)
        throw file_error("read error in " + describe() + " at item " +
                         std::to_string(m_items_read) +
                         " (did the file change while it was read?)");
    m_items_read += want;
    return want;
}

std::string raw_item_reader::describe() const
{
    return m_role + " " + in_quotes(m_path) + " (" + std::to_string(m_size) + " bytes, " +
           std::to_string(items()) + " items of " + std::to_string(m_item_size) +
           " bytes)";
}

void require_same_item_count(const raw_item_reader& a, const raw_item_reader& b)
{
    if (a.items() != b.items())
        throw file_error("item counts differ: " + a.describe() + " but " + b.describe() +
                         "; both must hold one item per problem");
}

void require_not_input(const std::string& path,
                       const std::string& role,
                       const std::string& input,
                       const std::string& input_role)
{
    std::error_code ec;
    if (std::filesystem::exists(path, ec) && std::filesystem::equivalent(path, input, ec))
        throw file_error(role + " " + in_quotes(path) + " is the same file as the " +
                         input_role + " " + in_quotes(input) +
                         ": writing it would destroy the input");
}

void require_not_input(const std::string& path,
                       const std::string& role,
                       const raw_item_reader& input)
{
    require_not_input(path, role, input.path(), input.role());
}

// ---- temporary files removed on fatal signals --------------------------------

namespace {

constexpr int k_max_temporaries = 16;
constexpr size_t k_max_path = 4096;
// Written only with the signals blocked; read by the handler (async-signal-safe:
// unlink, signal, raise).
char g_temporaries[k_max_temporaries][k_max_path];
volatile std::sig_atomic_t g_used[k_max_temporaries];
constexpr int k_fatal_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGXFSZ };

extern "C" void remove_temporaries_and_die(int sig)
{
    for (int i = 0; i < k_max_temporaries; ++i)
        if (g_used[i])
            ::unlink(g_temporaries[i]);
    std::signal(sig, SIG_DFL);
    std::raise(sig);
}

/// Blocks the fatal signals while the table changes.
struct signals_blocked {
    sigset_t old;
    signals_blocked()
    {
        sigset_t set;
        sigemptyset(&set);
        for (int sig : k_fatal_signals)
            sigaddset(&set, sig);
        sigprocmask(SIG_BLOCK, &set, &old);
    }
    ~signals_blocked() { sigprocmask(SIG_SETMASK, &old, nullptr); }
};

void install_handlers_once()
{
    static const bool installed = [] {
        for (int sig : k_fatal_signals) {
            struct sigaction current {
            };
            sigaction(sig, nullptr, &current);
            if (current.sa_handler == SIG_IGN) // e.g. SIGHUP under nohup: left ignored
                continue;
            struct sigaction action {
            };
            action.sa_handler = remove_temporaries_and_die;
            sigemptyset(&action.sa_mask);
            sigaction(sig, &action, nullptr);
        }
        return true;
    }();
    (void)installed;
}

/// Removes registered temporary files when the process is stopped by SIGINT,
/// SIGTERM, SIGHUP or SIGXFSZ, then dies of that signal as it would have.
/// At most 16 paths at a time; register returns false when full.
bool register_temporary_file(const std::string& path)
{
    if (path.size() >= k_max_path)
        return false;
    install_handlers_once();
    signals_blocked blocked;
    for (int i = 0; i < k_max_temporaries; ++i)
        if (!g_used[i]) {
            std::memcpy(g_temporaries[i], path.c_str(), path.size() + 1);
            g_used[i] = 1;
            return true;
        }
    return false;
}

void unregister_temporary_file(const std::string& path)
{
    signals_blocked blocked;
    for (int i = 0; i < k_max_temporaries; ++i)
        if (g_used[i] && path == g_temporaries[i]) {
            g_used[i] = 0;
            return;
        }
}

/// Whether `path` names something other than a regular file or nothing: a
/// FIFO, socket, device, directory or a symbolic link (not followed).
bool is_special_path(const std::string& path)
{
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0)
        return false; // absent (or unreachable: opening it will say why)
    return !S_ISREG(st.st_mode);
}

} // namespace

// ---- raw_item_writer ---------------------------------------------------------

raw_item_writer::raw_item_writer(const std::string& path,
                                 size_t item_size,
                                 const std::string& role)
    : m_path(path),
      m_temporary(path + ".partial-" + std::to_string(::getpid())),
      m_role(role),
      m_item_size(item_size),
      m_in_place(is_special_path(path))
{
    if (item_size == 0)
        throw std::invalid_argument("raw_item_writer: item size 0");
    std::error_code ec;
    if (m_in_place && std::filesystem::is_directory(path, ec))
        throw file_error("cannot write " + role + " " + in_quotes(path) +
                         ": it is a directory");
    if (m_in_place) {
        m_out.open(path,
                   std::ios::binary |
                       std::ios::out); // a FIFO or device: no truncation, no rename
    } else {
        register_temporary_file(m_temporary);
        m_out.open(m_temporary, std::ios::binary | std::ios::trunc);
    }
    if (!m_out) {
        const int error = errno;
        if (!m_in_place)
            unregister_temporary_file(m_temporary);
        throw file_error("cannot write " + role + " " + in_quotes(path) + ": " +
                         std::strerror(error));
    }
}

raw_item_writer::~raw_item_writer()
{
    if (m_done)
        return;
    if (m_out.is_open())
        m_out.close();
    if (m_in_place)
        return;
    std::error_code ec;
    std::filesystem::remove(m_temporary, ec);
    unregister_temporary_file(m_temporary);
}

void raw_item_writer::write(const void* src, size_t items)
{
    m_out.write(static_cast<const char*>(src), std::streamsize(items * m_item_size));
    if (!m_out)
        throw file_error("write error in " + m_role + " " + in_quotes(m_path) +
                         " after " + std::to_string(m_items_written) +
                         " items (disk full?)");
    m_items_written += items;
}

void raw_item_writer::close()
{
    if (m_done)
        return;
    m_out.flush();
    m_out.close();
    if (m_out.fail())
        throw file_error("cannot finish " + m_role + " " + in_quotes(m_path) +
                         " (disk full?)");
    if (!m_in_place) {
        std::error_code ec;
        std::filesystem::rename(m_temporary, m_path, ec);
        if (ec)
            throw file_error("cannot write " + m_role + " " + in_quotes(m_path) + ": " +
                             ec.message());
        unregister_temporary_file(m_temporary);
    }
    m_done = true;
}

} // namespace mimo_gpu_apps
