#include "json_text.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace mimo_gpu {
namespace detail {

json_value json_value::from_bool(bool b)
{
    json_value v;
    v.m_kind = kind::boolean;
    v.m_bool = b;
    return v;
}
json_value json_value::from_number(double d)
{
    json_value v;
    v.m_kind = kind::number;
    v.m_number = d;
    return v;
}
json_value json_value::from_string(std::string s)
{
    json_value v;
    v.m_kind = kind::string;
    v.m_string = std::move(s);
    return v;
}
json_value json_value::make_array()
{
    json_value v;
    v.m_kind = kind::array;
    return v;
}
json_value json_value::make_object()
{
    json_value v;
    v.m_kind = kind::object;
    return v;
}

const json_value* json_value::find(const std::string& key) const
{
    for (const auto& [k, v] : m_members)
        if (k == key)
            return &v;
    return nullptr;
}

json_value& json_value::set(const std::string& key, json_value v)
{
    for (auto& [k, old] : m_members)
        if (k == key) {
            old = std::move(v);
            return old;
        }
    m_members.emplace_back(key, std::move(v));
    return m_members.back().second;
}

json_value& json_value::push(json_value v)
{
    m_items.push_back(std::move(v));
    return m_items.back();
}

namespace {

class parser
{
public:
    explicit parser(const std::string& t) : m_text(t) {}
    json_value document()
    {
        json_value v = value(0);
        skip_space();
        if (m_at != m_text.size())
            fail("text after the JSON value");
        return v;
    }

private:
    [[noreturn]] void fail(const std::string& what) const
    {
        throw std::runtime_error("malformed JSON: " + what + " at byte " +
                                 std::to_string(m_at));
    }
    void skip_space()
    {
        while (m_at < m_text.size() && (m_text[m_at] == ' ' || m_text[m_at] == '\t' ||
                                        m_text[m_at] == '\n' || m_text[m_at] == '\r'))
            ++m_at;
    }
    char peek()
    {
        skip_space();
        if (m_at >= m_text.size())
            fail("unexpected end");
        return m_text[m_at];
    }
    void expect(const char* word)
    {
        for (const char* p = word; *p; ++p, ++m_at)
            if (m_at >= m_text.size() || m_text[m_at] != *p)
                fail(std::string("expected '") + word + "'");
    }
    json_value value(int depth)
    {
        if (depth > 64)
            fail("nesting deeper than 64");
        const char c = peek();
        if (c == '{')
            return object(depth);
        if (c == '[')
            return array(depth);
        if (c == '"')
            return json_value::from_string(string());
        if (c == 't') {
            expect("true");
            return json_value::from_bool(true);
        }
        if (c == 'f') {
            expect("false");
            return json_value::from_bool(false);
        }
        if (c == 'n') {
            expect("null");
            return json_value();
        }
        return number();
    }
    json_value object(int depth)
    {
        json_value o = json_value::make_object();
        ++m_at; // {
        if (peek() == '}') {
            ++m_at;
            return o;
        }
        for (;;) {
            if (peek() != '"')
                fail("expected a member name");
            std::string key = string();
            if (peek() != ':')
                fail("expected ':'");
            ++m_at;
            o.set(key, value(depth + 1));
            const char c = peek();
            ++m_at;
            if (c == '}')
                return o;
            if (c != ',')
                fail("expected ',' or '}'");
        }
    }
    json_value array(int depth)
    {
        json_value a = json_value::make_array();
        ++m_at; // [
        if (peek() == ']') {
            ++m_at;
            return a;
        }
        for (;;) {
            a.push(value(depth + 1));
            const char c = peek();
            ++m_at;
            if (c == ']')
                return a;
            if (c != ',')
                fail("expected ',' or ']'");
        }
    }
    static void utf8(std::string& out, unsigned cp)
    {
        if (cp < 0x80)
            out += char(cp);
        else if (cp < 0x800) {
            out += char(0xC0 | (cp >> 6));
            out += char(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            out += char(0xE0 | (cp >> 12));
            out += char(0x80 | ((cp >> 6) & 0x3F));
            out += char(0x80 | (cp & 0x3F));
        } else {
            out += char(0xF0 | (cp >> 18));
            out += char(0x80 | ((cp >> 12) & 0x3F));
            out += char(0x80 | ((cp >> 6) & 0x3F));
            out += char(0x80 | (cp & 0x3F));
        }
    }
    unsigned hex4()
    {
        if (m_at + 4 > m_text.size())
            fail("short \\u escape");
        unsigned v = 0;
        for (int k = 0; k < 4; ++k) {
            const char h = m_text[m_at++];
            v <<= 4;
            if (h >= '0' && h <= '9')
                v |= unsigned(h - '0');
            else if (h >= 'a' && h <= 'f')
                v |= unsigned(h - 'a' + 10);
            else if (h >= 'A' && h <= 'F')
                v |= unsigned(h - 'A' + 10);
            else
                fail("bad \\u escape");
        }
        return v;
    }
    std::string string()
    {
        ++m_at; // "
        std::string out;
        for (;;) {
            if (m_at >= m_text.size())
                fail("unterminated string");
            const char c = m_text[m_at++];
            if (c == '"')
                return out;
            if (static_cast<unsigned char>(c) < 0x20)
                fail("control character in a string");
            if (c != '\\') {
                out += c;
                continue;
            }
            if (m_at >= m_text.size())
                fail("unterminated escape");
            const char e = m_text[m_at++];
            switch (e) {
            case '"':
                out += '"';
                break;
            case '\\':
                out += '\\';
                break;
            case '/':
                out += '/';
                break;
            case 'b':
                out += '\b';
                break;
            case 'f':
                out += '\f';
                break;
            case 'n':
                out += '\n';
                break;
            case 'r':
                out += '\r';
                break;
            case 't':
                out += '\t';
                break;
            case 'u': {
                unsigned cp = hex4();
                if (cp >= 0xD800 && cp < 0xDC00 && m_at + 1 < m_text.size() &&
                    m_text[m_at] == '\\' && m_text[m_at + 1] == 'u') {
                    m_at += 2;
                    const unsigned lo = hex4();
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                }
                utf8(out, cp);
                break;
            }
            default:
                fail("bad escape");
            }
        }
    }
    json_value number()
    {
        const size_t start = m_at;
        if (m_at < m_text.size() && (m_text[m_at] == '-' || m_text[m_at] == '+'))
            ++m_at;
        while (m_at < m_text.size() &&
               (std::isdigit(static_cast<unsigned char>(m_text[m_at])) ||
                m_text[m_at] == '.' || m_text[m_at] == 'e' || m_text[m_at] == 'E' ||
                m_text[m_at] == '-' || m_text[m_at] == '+'))
            ++m_at;
        if (m_at == start)
            fail("unexpected character");
        const std::string t = m_text.substr(start, m_at - start);
        size_t used = 0;
        double v = 0;
        try {
            v = std::stod(t, &used);
        } catch (const std::exception&) {
            fail("bad number '" + t + "'");
        }
        if (used != t.size())
            fail("bad number '" + t + "'");
        return json_value::from_number(v);
    }

    const std::string& m_text;
    size_t m_at = 0;
};

void quote(std::string& out, const std::string& s)
{
    out += '"';
    for (const char c : s) {
        switch (c) {
        case '"':
            out += "\\\"";
            break;
        case '\\':
            out += "\\\\";
            break;
        case '\n':
            out += "\\n";
            break;
        case '\r':
            out += "\\r";
            break;
        case '\t':
            out += "\\t";
            break;
        default:
            if (static_cast<unsigned char>(c) < 0x20) {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\u%04x", unsigned(c));
                out += buf;
            } else
                out += c;
        }
    }
    out += '"';
}

} // namespace

json_value json_value::parse(const std::string& text) { return parser(text).document(); }

std::string json_value::dump(int indent) const
{
    std::string out;
    dump_to(out, indent, 0);
    out += '\n';
    return out;
}

void json_value::dump_to(std::string& out, int indent, int depth) const
{
    const std::string pad(size_t(indent) * size_t(depth + 1), ' '),
        end_pad(size_t(indent) * size_t(depth), ' ');
    switch (m_kind) {
    case kind::null:
        out += "null";
        break;
    case kind::boolean:
        out += m_bool ? "true" : "false";
        break;
    case kind::number: {
        char buf[40];
        if (std::isfinite(m_number) && m_number == std::floor(m_number) &&
            std::abs(m_number) < 1e15)
            std::snprintf(buf, sizeof buf, "%.0f", m_number);
        else if (std::isfinite(m_number))
            std::snprintf(buf, sizeof buf, "%.17g", m_number);
        else
            std::snprintf(buf, sizeof buf, "null"); // JSON has no NaN or infinity
        out += buf;
        break;
    }
    case kind::string:
        quote(out, m_string);
        break;
    case kind::array:
        out += '[';
        for (size_t k = 0; k < m_items.size(); ++k) {
            out += k ? ",\n" : "\n";
            out += pad;
            m_items[k].dump_to(out, indent, depth + 1);
        }
        out += m_items.empty() ? "]" : "\n" + end_pad + "]";
        break;
    case kind::object:
        out += '{';
        for (size_t k = 0; k < m_members.size(); ++k) {
            out += k ? ",\n" : "\n";
            out += pad;
            quote(out, m_members[k].first);
            out += ": ";
            m_members[k].second.dump_to(out, indent, depth + 1);
        }
        out += m_members.empty() ? "}" : "\n" + end_pad + "}";
        break;
    }
}

} // namespace detail
} // namespace mimo_gpu
