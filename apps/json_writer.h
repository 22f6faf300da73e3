// Minimal streaming JSON writer for the programs' result files: objects, arrays,
// strings, numbers and booleans, indented, with commas handled for the caller.
#pragma once

#include <cmath>
#include <cstdio>
#include <ostream>
#include <string>
#include <vector>

namespace mimo_gpu_apps {

class json_writer
{
public:
    explicit json_writer(std::ostream& out) : m_out(out) {}

    json_writer& begin_object(const std::string& key = "") { return open(key, '{'); }
    json_writer& end_object() { return close('}'); }
    json_writer& begin_array(const std::string& key = "") { return open(key, '['); }
    json_writer& end_array() { return close(']'); }

    json_writer& value(const std::string& key, const std::string& v)
    {
        return raw(key, quote(v));
    }
    json_writer& value(const std::string& key, const char* v)
    {
        return raw(key, quote(v));
    }
    json_writer& value(const std::string& key, bool v)
    {
        return raw(key, v ? "true" : "false");
    }
    json_writer& value(const std::string& key, double v) { return raw(key, number(v)); }
    json_writer& value(const std::string& key, int v)
    {
        return raw(key, std::to_string(v));
    }
    json_writer& value(const std::string& key, long long v)
    {
        return raw(key, std::to_string(v));
    }
    json_writer& value(const std::string& key, unsigned long long v)
    {
        return raw(key, std::to_string(v));
    }
    json_writer& value(const std::string& key, unsigned long v)
    {
        return raw(key, std::to_string(v));
    }
    template <class T>
    json_writer& values(const std::string& key, const std::vector<T>& v)
    {
        begin_array(key);
        for (const auto& x : v)
            value("", x);
        return end_array();
    }

private:
    static std::string quote(const std::string& s)
    {
        std::string q = "\"";
        for (char c : s) {
            if (c == '"' || c == '\\')
                q += { '\\', c };
            else if (static_cast<unsigned char>(c) < 0x20) {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\u%04x", c);
                q += buf;
            } else
                q += c;
        }
        return q + "\"";
    }
    static std::string number(double v)
    {
        if (!std::isfinite(v))
            return "null";
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.9g", v);
        return buf;
    }
    void prefix(const std::string& key)
    {
        if (!m_first.empty()) {
            m_out << (m_first.back() ? "\n" : ",\n");
            m_first.back() = false;
        }
        m_out << std::string(2 * m_first.size(), ' ');
        if (!key.empty())
            m_out << quote(key) << ": ";
    }
    json_writer& raw(const std::string& key, const std::string& text)
    {
        prefix(key);
        m_out << text;
        return *this;
    }
    json_writer& open(const std::string& key, char bracket)
    {
        prefix(key);
        m_out << bracket;
        m_first.push_back(true);
        return *this;
    }
    json_writer& close(char bracket)
    {
        const bool empty = m_first.back();
        m_first.pop_back();
        if (!empty)
            m_out << "\n" << std::string(2 * m_first.size(), ' ');
        m_out << bracket;
        if (m_first.empty())
            m_out << "\n";
        return *this;
    }

    std::ostream& m_out;
    std::vector<bool> m_first; // per open container: no element written yet
};

} // namespace mimo_gpu_apps
