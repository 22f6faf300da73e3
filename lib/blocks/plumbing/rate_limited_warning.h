/* -*- c++ -*- */
/*
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
// A warning that can repeat once per item or call (a bad tag, an erasure) must
// not flood the log: the first few are logged, then only the 2^k-th with the
// count so far, and the total is always known.
#ifndef INCLUDED_MIMO_GPU_RATE_LIMITED_WARNING_H
#define INCLUDED_MIMO_GPU_RATE_LIMITED_WARNING_H

#include <gnuradio/logger.h>

#include <atomic>
#include <cstdint>
#include <string>

namespace gr {
namespace mimo_gpu {

class rate_limited_warning
{
public:
    /// what: the repeated event in the plural, for the count ("ignored noise_var tags").
    rate_limited_warning(gr::logger_ptr logger, std::string what, uint64_t first = 10)
        : m_logger(std::move(logger)), m_what(std::move(what)), m_first(first)
    {
    }

    /// Counts one event; logs `message` if it is among the first, or the 2^k-th.
    void warn(const std::string& message)
    {
        warn_with([&] { return message; });
    }
    /// The same, the message built only when it is logged (make() -> std::string).
    template <typename MakeMessage>
    void warn_with(MakeMessage make)
    {
        const uint64_t n = ++m_count;
        if (n > m_first && (n & (n - 1)) != 0)
            return; // counted, not logged
        const std::string message = make();
        if (n < m_first)
            m_logger->warn("{}", message);
        else if (n == m_first)
            m_logger->warn(
                "{} ({} {}; further ones are counted and logged at powers of two)",
                message,
                n,
                m_what);
        else
            m_logger->warn("{} ({} {} so far)", message, n, m_what);
        ++m_logged;
    }
    uint64_t count() const { return m_count.load(); }
    uint64_t logged() const { return m_logged.load(); } ///< messages written

private:
    gr::logger_ptr m_logger;
    std::string m_what;
    uint64_t m_first;
    std::atomic<uint64_t> m_count{ 0 }, m_logged{ 0 };
};

} // namespace mimo_gpu
} // namespace gr

#endif
