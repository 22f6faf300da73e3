// SigMF recordings: the meta as JSON (json_text.h), the data as raw samples.
#include <mimo_gpu/sigmf.h>

#include "json_text.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace mimo_gpu {

namespace {

using detail::json_value;

const char* k_data_suffix = ".sigmf-data";
const char* k_meta_suffix = ".sigmf-meta";

bool ends_with(const std::string& s, const std::string& tail)
{
    return s.size() >= tail.size() &&
           s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

std::string base_of(const std::string& path)
{
    for (const char* suffix : { k_data_suffix, k_meta_suffix })
        if (ends_with(path, suffix))
            return path.substr(0, path.size() - std::string(suffix).size());
    return path;
}

size_t sample_bytes(sample_format f) { return f == sample_format::cf32 ? 8 : 4; }

/// A number as a message shows it (1e-300, not 0.000000).
std::string shown_number(double v)
{
    std::ostringstream out;
    out << v;
    return out.str();
}

void check_meta(const sigmf_meta& m)
{
    if (m.channels < 1 || m.channels > 1024)
        throw std::invalid_argument("mimo_gpu: sigmf: channels must be in 1..1024, got " +
                                    std::to_string(m.channels));
    if (!(m.sample_rate >= 1.0) ||
        !std::isfinite(m.sample_rate)) // 1e-300 Hz is no sample rate
        throw std::invalid_argument(
            "mimo_gpu: sigmf: sample_rate must be finite and at least 1 Hz, got " +
            shown_number(m.sample_rate));
    if (!std::isfinite(m.center_frequency))
        throw std::invalid_argument("mimo_gpu: sigmf: center_frequency must be finite");
    if (m.format == sample_format::ci16 &&
        !(m.ci16_full_scale > 0 && std::isfinite(m.ci16_full_scale)))
        throw std::invalid_argument(
            "mimo_gpu: sigmf: ci16_full_scale must be finite and > 0");
    if (m.has_grid)
        m.grid.validate();
}

/// One part of a sample as int16 (32767 = full_scale); a value that rounds
/// beyond +-32767 is clipped (infinities too) and a NaN written as 0, and
/// both are counted.
int16_t to_ci16(float part, float full_scale, uint64_t& clipped)
{
    const float x = std::round(part / full_scale * 32767.0f);
    if (std::abs(x) <= 32767.0f)
        return int16_t(x);
    ++clipped;
    return std::isnan(x) ? int16_t(0) : int16_t(x > 0 ? 32767 : -32767);
}

/// The meta's JSON (SigMF core fields and the mimo_gpu namespace).
std::string meta_text(const sigmf_meta& m)
{
    json_value global = json_value::make_object();
    global.set(
        "core:datatype",
        json_value::from_string(m.format == sample_format::cf32 ? "cf32_le" : "ci16_le"));
    global.set("core:sample_rate", json_value::from_number(m.sample_rate));
    global.set("core:version", json_value::from_string("1.0.0"));
    global.set("core:num_channels", json_value::from_number(m.channels));
    if (!m.description.empty())
        global.set("core:description", json_value::from_string(m.description));
    if (!m.hardware.empty())
        global.set("core:hw", json_value::from_string(m.hardware));
    if (!m.author.empty())
        global.set("core:author", json_value::from_string(m.author));
    global.set("core:recorder", json_value::from_string("gr-mimo_gpu"));
    json_value extensions = json_value::make_array();
    json_value ext = json_value::make_object();
    ext.set("name", json_value::from_string("mimo_gpu"));
    ext.set("version", json_value::from_string("1.0.0"));
    ext.set("optional", json_value::from_bool(false));
    extensions.push(ext);
    global.set("core:extensions", extensions);
    global.set("mimo_gpu:channel_layout",
               json_value::from_string(m.interleaved ? "interleaved" : "per_channel"));
    if (m.format == sample_format::ci16) {
        global.set("mimo_gpu:ci16_full_scale",
                   json_value::from_number(m.ci16_full_scale));
        global.set("mimo_gpu:ci16_values_clipped",
                   json_value::from_number(double(m.ci16_values_clipped)));
    }
    if (m.has_grid) {
        const ofdm_grid& g = m.grid;
        global.set("mimo_gpu:fft_size", json_value::from_number(g.fft_size));
        global.set("mimo_gpu:cp_length", json_value::from_number(g.cp_length));
        global.set("mimo_gpu:used_subcarriers",
                   json_value::from_number(g.used_subcarriers));
        global.set("mimo_gpu:dc_null", json_value::from_bool(g.dc_null));
        global.set("mimo_gpu:nt", json_value::from_number(g.nt));
        global.set("mimo_gpu:data_symbols", json_value::from_number(g.data_symbols));
        global.set("mimo_gpu:slots", json_value::from_number(g.slots));
        json_value positions = json_value::make_array();
        for (const int p : g.pilot_positions)
            positions.push(json_value::from_number(p));
        global.set("mimo_gpu:pilot_positions", std::move(positions));
        global.set("mimo_gpu:modulation", json_value::from_string(to_string(g.mod)));
    }
    if (std::isfinite(m.snr_db))
        global.set("mimo_gpu:snr_db", json_value::from_number(m.snr_db));
    if (std::isfinite(m.doppler_hz))
        global.set("mimo_gpu:doppler_hz", json_value::from_number(m.doppler_hz));
    if (m.transport_block_bits > 0)
        global.set("mimo_gpu:transport_block_bits",
                   json_value::from_number(m.transport_block_bits));
    json_value capture = json_value::make_object();
    capture.set("core:sample_start", json_value::from_number(0));
    capture.set("core:frequency", json_value::from_number(m.center_frequency));
    json_value captures = json_value::make_array();
    captures.push(capture);
    json_value root = json_value::make_object();
    root.set("global", global);
    root.set("captures", captures);
    root.set("annotations", json_value::make_array());
    return root.dump();
}

[[noreturn]] void bad_meta(const std::string& path, const std::string& what)
{
    throw std::runtime_error("mimo_gpu: sigmf: " + path + ": " + what);
}

const json_value& field(const json_value& obj,
                        const std::string& key,
                        json_value::kind k,
                        const std::string& path)
{
    const json_value* v = obj.find(key);
    if (!v)
        bad_meta(path, "missing field \"" + key + "\"");
    if (!v->is(k))
        bad_meta(path, "field \"" + key + "\" has the wrong type");
    return *v;
}

int whole(const json_value& obj, const std::string& key, const std::string& path)
{
    const double v = field(obj, key, json_value::kind::number, path).as_number();
    if (!(v == std::floor(v)) || std::abs(v) > 1e9)
        bad_meta(path, "field \"" + key + "\" must be a whole number");
    return int(v);
}

sigmf_meta parse_meta(const std::string& text, const std::string& path)
{
    json_value root;
    try {
        root = json_value::parse(text);
    } catch (const std::runtime_error& e) {
        bad_meta(path, e.what());
    }
    if (!root.is(json_value::kind::object))
        bad_meta(path, "the meta is not a JSON object");
    const json_value& g = field(root, "global", json_value::kind::object, path);
    sigmf_meta m;
    const std::string type =
        field(g, "core:datatype", json_value::kind::string, path).as_string();
    if (type == "cf32_le")
        m.format = sample_format::cf32;
    else if (type == "ci16_le")
        m.format = sample_format::ci16;
    else
        bad_meta(path,
                 "datatype \"" + type +
                     "\" is not supported (supported: cf32_le, ci16_le)");
    m.sample_rate =
        field(g, "core:sample_rate", json_value::kind::number, path).as_number();
    if (!(m.sample_rate >= 1.0) || !std::isfinite(m.sample_rate))
        bad_meta(path,
                 "core:sample_rate must be finite and at least 1 Hz, got " +
                     shown_number(m.sample_rate));
    m.channels = g.find("core:num_channels") ? whole(g, "core:num_channels", path) : 1;
    if (m.channels < 1)
        bad_meta(path,
                 "core:num_channels must be >= 1, got " + std::to_string(m.channels));
    if (const json_value* d = g.find("core:description");
        d && d->is(json_value::kind::string))
        m.description = d->as_string();
    if (const json_value* d = g.find("core:hw"); d && d->is(json_value::kind::string))
        m.hardware = d->as_string();
    if (const json_value* d = g.find("core:author"); d && d->is(json_value::kind::string))
        m.author = d->as_string();
    if (const json_value* l = g.find("mimo_gpu:channel_layout")) {
        if (!l->is(json_value::kind::string) ||
            (l->as_string() != "interleaved" && l->as_string() != "per_channel"))
            bad_meta(
                path,
                "mimo_gpu:channel_layout must be \"interleaved\" or \"per_channel\"");
        m.interleaved = l->as_string() == "interleaved";
    }
    if (g.find("mimo_gpu:ci16_full_scale"))
        m.ci16_full_scale =
            float(field(g, "mimo_gpu:ci16_full_scale", json_value::kind::number, path)
                      .as_number());
    if (g.find("mimo_gpu:ci16_values_clipped")) {
        const double c =
            field(g, "mimo_gpu:ci16_values_clipped", json_value::kind::number, path)
                .as_number();
        if (!(c >= 0 && c == std::floor(c) && c < 9e15))
            bad_meta(
                path,
                "field \"mimo_gpu:ci16_values_clipped\" must be a whole number >= 0");
        m.ci16_values_clipped = uint64_t(c);
    }
    if (g.find("mimo_gpu:fft_size")) {
        m.has_grid = true;
        m.grid.fft_size = whole(g, "mimo_gpu:fft_size", path);
        m.grid.cp_length = whole(g, "mimo_gpu:cp_length", path);
        m.grid.used_subcarriers = whole(g, "mimo_gpu:used_subcarriers", path);
        m.grid.dc_null =
            field(g, "mimo_gpu:dc_null", json_value::kind::boolean, path).as_bool();
        m.grid.nt = whole(g, "mimo_gpu:nt", path);
        m.grid.data_symbols = whole(g, "mimo_gpu:data_symbols", path);
        m.grid.slots = whole(g, "mimo_gpu:slots", path);
        // Recordings from before pilot layouts have the default one.
        if (const json_value* positions = g.find("mimo_gpu:pilot_positions")) {
            if (!positions->is(json_value::kind::array))
                bad_meta(path, "field \"mimo_gpu:pilot_positions\" must be an array");
            m.grid.pilot_positions.clear();
            for (const json_value& p : positions->items()) {
                if (!p.is(json_value::kind::number) ||
                    p.as_number() != std::floor(p.as_number()) ||
                    std::abs(p.as_number()) > 1e6)
                    bad_meta(
                        path,
                        "field \"mimo_gpu:pilot_positions\" must hold whole numbers");
                m.grid.pilot_positions.push_back(int(p.as_number()));
            }
        }
        try {
            m.grid.mod = modulation_from_string(
                field(g, "mimo_gpu:modulation", json_value::kind::string, path)
                    .as_string());
        } catch (const std::invalid_argument& e) {
            bad_meta(path, e.what());
        }
    }
    if (g.find("mimo_gpu:snr_db"))
        m.snr_db =
            field(g, "mimo_gpu:snr_db", json_value::kind::number, path).as_number();
    if (g.find("mimo_gpu:doppler_hz"))
        m.doppler_hz =
            field(g, "mimo_gpu:doppler_hz", json_value::kind::number, path).as_number();
    if (g.find("mimo_gpu:transport_block_bits"))
        m.transport_block_bits = whole(g, "mimo_gpu:transport_block_bits", path);
    if (const json_value* caps = root.find("captures");
        caps && caps->is(json_value::kind::array) && !caps->items().empty()) {
        if (const json_value* f = caps->items()[0].find("core:frequency");
            f && f->is(json_value::kind::number))
            m.center_frequency = f->as_number();
    }
    if (m.has_grid)
        m.grid.sample_rate = m.sample_rate;
    try {
        check_meta(m);
    } catch (const std::invalid_argument& e) {
        bad_meta(path, e.what());
    }
    return m;
}

} // namespace

uint64_t write_sigmf(const std::string& base_path,
                     const sigmf_meta& meta,
                     const cfloat* samples,
                     size_t samples_per_channel)
{
    check_meta(meta);
    const std::string base = base_of(base_path);
    const size_t C = size_t(meta.channels);
    uint64_t clipped = 0;
    {
        std::ofstream data(base + k_data_suffix, std::ios::binary | std::ios::trunc);
        if (!data)
            throw std::runtime_error("mimo_gpu: sigmf: cannot write " + base +
                                     k_data_suffix);
        auto put = [&](const cfloat& v) {
            if (meta.format == sample_format::cf32) {
                data.write(reinterpret_cast<const char*>(&v), sizeof v);
                return;
            }
            const int16_t iq[2] = { to_ci16(v.real(), meta.ci16_full_scale, clipped),
                                    to_ci16(v.imag(), meta.ci16_full_scale, clipped) };
            data.write(reinterpret_cast<const char*>(iq), sizeof iq);
        };
        if (meta.interleaved)
            for (size_t k = 0; k < samples_per_channel * C; ++k)
                put(samples[k]);
        else
            for (size_t c = 0; c < C; ++c)
                for (size_t k = 0; k < samples_per_channel; ++k)
                    put(samples[k * C + c]);
        if (!data)
            throw std::runtime_error("mimo_gpu: sigmf: writing " + base + k_data_suffix +
                                     " failed");
    }
    std::ofstream out(base + k_meta_suffix, std::ios::trunc);
    if (!out)
        throw std::runtime_error("mimo_gpu: sigmf: cannot write " + base + k_meta_suffix);
    sigmf_meta written = meta;
    written.ci16_values_clipped = clipped;
    out << meta_text(written);
    if (!out)
        throw std::runtime_error("mimo_gpu: sigmf: writing " + base + k_meta_suffix +
                                 " failed");
    return clipped;
}

sigmf_writer::sigmf_writer(const std::string& base, const sigmf_meta& meta)
    : m_base(base_of(base)), m_meta(meta)
{
    check_meta(meta);
    m_meta.ci16_values_clipped = 0; // counted by write()
    if (!meta.interleaved)
        throw std::invalid_argument(
            "mimo_gpu: sigmf: a streamed recording is interleaved by channel");
    m_file = std::fopen((m_base + k_data_suffix).c_str(), "wb");
    if (!m_file)
        throw std::runtime_error("mimo_gpu: sigmf: cannot write " + m_base +
                                 k_data_suffix);
}

sigmf_writer::~sigmf_writer()
{
    try {
        close();
    } catch (
        ...) { // a destructor does not throw; close() reports to callers that call it
    }
}

void sigmf_writer::write(const cfloat* samples, size_t count)
{
    if (!m_file)
        throw std::logic_error("mimo_gpu: sigmf: write after close");
    const size_t C = size_t(m_meta.channels);
    if (m_meta.format == sample_format::cf32) {
        if (std::fwrite(samples, sizeof(cfloat), count * C, m_file) != count * C)
            throw std::runtime_error("mimo_gpu: sigmf: writing " + m_base +
                                     k_data_suffix + " failed");
    } else {
        std::vector<int16_t> iq(count * C * 2);
        for (size_t k = 0; k < count * C; ++k) {
            iq[2 * k] = to_ci16(
                samples[k].real(), m_meta.ci16_full_scale, m_meta.ci16_values_clipped);
            iq[2 * k + 1] = to_ci16(
                samples[k].imag(), m_meta.ci16_full_scale, m_meta.ci16_values_clipped);
        }
        if (std::fwrite(iq.data(), sizeof(int16_t), iq.size(), m_file) != iq.size())
            throw std::runtime_error("mimo_gpu: sigmf: writing " + m_base +
                                     k_data_suffix + " failed");
    }
    m_written += count;
}

void sigmf_writer::close()
{
    if (!m_file)
        return;
    const bool ok = std::fclose(m_file) == 0;
    m_file = nullptr;
    if (!ok)
        throw std::runtime_error("mimo_gpu: sigmf: writing " + m_base + k_data_suffix +
                                 " failed");
    std::ofstream out(m_base + k_meta_suffix, std::ios::trunc);
    out << meta_text(m_meta);
    if (!out)
        throw std::runtime_error("mimo_gpu: sigmf: cannot write " + m_base +
                                 k_meta_suffix);
}

namespace {
void require_regular_or_absent(const std::string& path)
{
    std::error_code ec;
    const auto status = std::filesystem::status(path, ec);
    if (!ec && std::filesystem::exists(status) &&
        !std::filesystem::is_regular_file(status))
        throw std::runtime_error(
            "mimo_gpu: sigmf: " + path +
            " is not a regular file (a FIFO, socket, device or directory); "
            "copy the recording to a file first");
}
} // namespace

sigmf_reader::sigmf_reader(const std::string& path)
{
    const std::string base = base_of(path), meta_path = base + k_meta_suffix;
    m_data_path = base + k_data_suffix;
    m_meta_path = meta_path;
    // A FIFO would block the open until a writer came, and has no size.
    require_regular_or_absent(meta_path);
    require_regular_or_absent(m_data_path);
    std::ifstream meta(meta_path);
    if (!meta)
        throw std::runtime_error("mimo_gpu: sigmf: no meta file " + meta_path);
    std::stringstream text;
    text << meta.rdbuf();
    if (text.str().size() > (size_t(1) << 26))
        throw std::runtime_error("mimo_gpu: sigmf: " + meta_path +
                                 " is larger than 64 MiB");
    m_meta = parse_meta(text.str(), meta_path);
    m_file = std::fopen(m_data_path.c_str(), "rb");
    if (!m_file)
        throw std::runtime_error("mimo_gpu: sigmf: no data file " + m_data_path);
    std::fseek(m_file, 0, SEEK_END);
    const long bytes = std::ftell(m_file);
    std::fseek(m_file, 0, SEEK_SET);
    const size_t frame = sample_bytes(m_meta.format) * size_t(m_meta.channels);
    if (bytes < 0 || size_t(bytes) % frame != 0) {
        std::fclose(m_file);
        m_file = nullptr;
        throw std::runtime_error("mimo_gpu: sigmf: " + m_data_path +
                                 " is truncated: " + std::to_string(bytes) +
                                 " bytes, not a whole number of " +
                                 std::to_string(frame) + "-byte samples of " +
                                 std::to_string(m_meta.channels) + " channels");
    }
    m_samples = size_t(bytes) / frame;
}

sigmf_reader::~sigmf_reader()
{
    if (m_file)
        std::fclose(m_file);
}

void sigmf_reader::require_channels(int channels) const
{
    if (channels != m_meta.channels)
        throw std::invalid_argument("mimo_gpu: sigmf: the recording " + m_data_path +
                                    " has " + std::to_string(m_meta.channels) +
                                    " channels, the receiver needs " +
                                    std::to_string(channels));
}

size_t sigmf_reader::read(cfloat* out, size_t max_samples)
{
    const size_t C = size_t(m_meta.channels),
                 n = std::min(max_samples, m_samples - m_position);
    if (n == 0)
        return 0;
    const size_t bytes = sample_bytes(m_meta.format);
    std::vector<char> raw(n * bytes);
    auto convert = [&](const char* p) {
        if (m_meta.format == sample_format::cf32) {
            cfloat v;
            std::copy(p, p + sizeof v, reinterpret_cast<char*>(&v));
            return v;
        }
        int16_t iq[2];
        std::copy(p, p + sizeof iq, reinterpret_cast<char*>(iq));
        const float s = m_meta.ci16_full_scale / 32767.0f;
        return cfloat(iq[0] * s, iq[1] * s);
    };
    auto load = [&](long offset, size_t count) {
        if (std::fseek(m_file, offset, SEEK_SET) != 0 ||
            std::fread(raw.data(), bytes, count, m_file) != count)
            throw std::runtime_error("mimo_gpu: sigmf: reading " + m_data_path +
                                     " failed");
    };
    if (m_meta.interleaved) {
        raw.resize(n * C * bytes);
        load(long(m_position * C * bytes), n * C);
        for (size_t k = 0; k < n * C; ++k)
            out[k] = convert(&raw[k * bytes]);
    } else
        for (size_t c = 0; c < C; ++c) {
            load(long((c * m_samples + m_position) * bytes), n);
            for (size_t k = 0; k < n; ++k)
                out[k * C + c] = convert(&raw[k * bytes]);
        }
    m_position += n;
    return n;
}

} // namespace mimo_gpu
