// Raw binary item files as GNU Radio's file_source/file_sink use them: a file is
// a plain concatenation of fixed-size items, no header (e.g. complex64 H items of
// nr*nt*8 bytes). Reading is batched, so a file of any size streams through a
// fixed buffer; a size that is not a whole number of items is refused up front.
#pragma once

#include <cstdint>
#include <fstream>
#include <stdexcept>
#include <string>

namespace mimo_gpu_apps {

/// Any problem with a file: missing, unreadable, truncated, mismatched, unwritable.
struct file_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

class raw_item_reader
{
public:
    /// role names the file in messages ("H file"). Throws file_error when the file
    /// cannot be opened or its size is not a multiple of item_size.
    raw_item_reader(const std::string& path, size_t item_size, const std::string& role);

    const std::string& path() const { return m_path; }
    const std::string& role() const { return m_role; }
    size_t item_size() const { return m_item_size; }
    uint64_t size_bytes() const { return m_size; }
    uint64_t items() const { return m_size / m_item_size; }
    uint64_t items_read() const { return m_items_read; }

    /// Reads up to max_items whole items into dst; returns how many (0 at the end).
    /// Throws file_error on a read error or a file that shrank while being read.
    size_t read(void* dst, size_t max_items);

    /// "H file 'h.bin' (4096 bytes, 128 items of 32 bytes)": for messages.
    std::string describe() const;

private:
    std::string m_path, m_role;
    size_t m_item_size;
    uint64_t m_size = 0, m_items_read = 0;
    std::ifstream m_in;
};

/// Throws file_error unless both files hold the same number of items.
void require_same_item_count(const raw_item_reader& a, const raw_item_reader& b);

/// Throws file_error when `path` names the same file as `input` (also through
/// links): writing it would destroy the input.
void require_not_input(const std::string& path,
                       const std::string& role,
                       const std::string& input,
                       const std::string& input_role);
void require_not_input(const std::string& path,
                       const std::string& role,
                       const raw_item_reader& input);

/// Writes items to a temporary file beside `path` and renames it to `path` in
/// close(), so a run that fails leaves no half-written output (the temporary
/// file is removed, also on SIGINT, SIGTERM, SIGHUP and SIGXFSZ) and an
/// existing file at `path` stays as it was. A `path` that is not a regular file
/// or absent (a FIFO, a device such as /dev/null, a link such as /dev/stdout)
/// is written directly: renaming over it would replace the special file itself.
class raw_item_writer
{
public:
    /// Creates the temporary file (or opens the special file); throws file_error
    /// naming `path` when that fails.
    raw_item_writer(const std::string& path, size_t item_size, const std::string& role);
    ~raw_item_writer(); ///< removes the temporary file unless close() succeeded
    raw_item_writer(const raw_item_writer&) = delete;
    raw_item_writer& operator=(const raw_item_writer&) = delete;

    void write(const void* src, size_t items); ///< throws file_error on a write error
    /// Flushes and renames the temporary file to path(); throws file_error on failure.
    void close();
    uint64_t items_written() const { return m_items_written; }
    const std::string& path() const { return m_path; }

private:
    std::string m_path, m_temporary, m_role;
    size_t m_item_size;
    uint64_t m_items_written = 0;
    bool m_done = false;
    bool m_in_place = false; ///< a special file, written directly
    std::ofstream m_out;
};


} // namespace mimo_gpu_apps
