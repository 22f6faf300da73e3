// Multi-antenna recordings as SigMF (sigmf.org, v1.x): BASE.sigmf-data holds
// the samples, BASE.sigmf-meta the JSON description. One file of all channels:
// "core:num_channels" channels, interleaved by sample (SigMF's own
// multichannel layout: sample k of channel c at k * channels + c) or, with
// "mimo_gpu:channel_layout": "per_channel", one channel after another.
// Samples are cf32_le or ci16_le (int16 pairs, 32767 = ci16_full_scale). The
// module's frame parameters (ofdm_grid) and how a recording was made go in the
// "mimo_gpu" namespace, so a capture can be decoded offline
// (docs/front_end.md, "Recordings").
#pragma once

#include <mimo_gpu/ofdm_grid.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

namespace mimo_gpu {

enum class sample_format { cf32, ci16 };

struct sigmf_meta {
    double sample_rate = 0;      ///< Hz, finite and > 0
    double center_frequency = 0; ///< Hz (captures[0]["core:frequency"])
    int channels = 1;            ///< >= 1
    sample_format format = sample_format::cf32;
    bool interleaved = true;      ///< false: per-channel blocks
    float ci16_full_scale = 1.0f; ///< the float value of int16 32767 (ci16 only)
    std::string description, hardware, author;
    bool has_grid = false; ///< the frame parameters below are present
    ofdm_grid grid;
    /// How the recording was made (optional): SNR in dB and maximum Doppler
    /// frequency in Hz (NaN: absent), and the transport block size A of each
    /// frame (0: absent).
    double snr_db = 0.0 / 0.0;
    double doppler_hz = 0.0 / 0.0;
    int transport_block_bits = 0;
    /// ci16: how many int16 values the writer had to clip (rounding beyond
    /// +-32767, infinities included) or replace (NaN, written as 0). Set by the
    /// writers; read back from the meta ("mimo_gpu:ci16_values_clipped"), so a
    /// clipped capture says so (sigmf_file_source and mimo_gpu_ofdm_file
    /// --decode warn).
    uint64_t ci16_values_clipped = 0;
};

/// Writes BASE.sigmf-data, then BASE.sigmf-meta (a recording with a meta is
/// complete). samples: samples_per_channel * channels, interleaved by channel
/// whatever the file layout. ci16 values beyond full scale are clipped (and
/// counted in the meta). Returns the number of int16 values clipped (0 for cf32).
/// Throws std::invalid_argument for a bad meta, std::runtime_error (with the
/// path) when a file cannot be written.
uint64_t write_sigmf(const std::string& base,
                     const sigmf_meta& meta,
                     const cfloat* samples,
                     size_t samples_per_channel);

/// Writes a recording as it streams in (interleaved layout only): samples are
/// appended to BASE.sigmf-data, BASE.sigmf-meta is written by close() (or the
/// destructor), so a recording with a meta is complete.
class sigmf_writer
{
public:
    /// Throws std::invalid_argument for a bad meta or a per-channel layout,
    /// std::runtime_error when the data file cannot be created.
    sigmf_writer(const std::string& base, const sigmf_meta& meta);
    ~sigmf_writer();
    sigmf_writer(const sigmf_writer&) = delete;
    sigmf_writer& operator=(const sigmf_writer&) = delete;
    /// samples: count * channels, interleaved by channel.
    void write(const cfloat* samples, size_t count);
    void close();
    size_t samples_written() const { return m_written; }
    /// ci16: int16 values clipped so far (beyond full scale or not finite).
    uint64_t values_clipped() const { return m_meta.ci16_values_clipped; }

private:
    std::string m_base;
    sigmf_meta m_meta;
    std::FILE* m_file = nullptr;
    size_t m_written = 0;
};

class sigmf_reader
{
public:
    /// `path`: BASE, BASE.sigmf-meta or BASE.sigmf-data. Throws std::runtime_error
    /// naming the file for a missing or malformed meta or data file, a missing
    /// or mistyped field, an unknown datatype, or a data size that is not a
    /// whole number of samples of every channel ("truncated").
    explicit sigmf_reader(const std::string& path);
    ~sigmf_reader();
    sigmf_reader(const sigmf_reader&) = delete;
    sigmf_reader& operator=(const sigmf_reader&) = delete;

    const sigmf_meta& meta() const { return m_meta; }
    size_t samples_per_channel() const { return m_samples; }
    const std::string& data_path() const { return m_data_path; }
    const std::string& meta_path() const { return m_meta_path; }
    /// Throws std::invalid_argument "... has N channels, ... needs M" unless equal.
    void require_channels(int channels) const;
    /// Reads up to max_samples samples per channel from where the last read
    /// stopped, channel-interleaved into out; returns how many per channel.
    size_t read(cfloat* out, size_t max_samples);

private:
    sigmf_meta m_meta;
    std::string m_data_path, m_meta_path;
    size_t m_samples = 0, m_position = 0;
    std::FILE* m_file = nullptr;
};

} // namespace mimo_gpu
