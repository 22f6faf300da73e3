// A small JSON value with a parser and a writer, for SigMF metadata (the core
// takes no JSON dependency). Objects keep their keys in order.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace mimo_gpu {
namespace detail {

class json_value
{
public:
    enum class kind { null, boolean, number, string, array, object };

    json_value() = default;
    static json_value from_bool(bool b);
    static json_value from_number(double v);
    static json_value from_string(std::string s);
    static json_value make_array();
    static json_value make_object();

    /// Throws std::runtime_error "... at byte N" on malformed text.
    static json_value parse(const std::string& text);
    std::string dump(int indent = 2) const;

    kind type() const { return m_kind; }
    bool is(kind k) const { return m_kind == k; }
    bool as_bool() const { return m_bool; }
    double as_number() const { return m_number; }
    const std::string& as_string() const { return m_string; }
    const std::vector<json_value>& items() const { return m_items; }
    const std::vector<std::pair<std::string, json_value>>& members() const
    {
        return m_members;
    }

    /// Object member, or nullptr.
    const json_value* find(const std::string& key) const;
    json_value& set(const std::string& key, json_value v); ///< object: adds or replaces
    json_value& push(json_value v);                        ///< array: appends

private:
    void dump_to(std::string& out, int indent, int depth) const;

    kind m_kind = kind::null;
    bool m_bool = false;
    double m_number = 0;
    std::string m_string;
    std::vector<json_value> m_items;
    std::vector<std::pair<std::string, json_value>> m_members;
};

} // namespace detail
} // namespace mimo_gpu
