// mimo_gpu_flowgraph_bench --chain ofdm: the receiver a user with antennas
// runs, as GNU Radio blocks: nr host sample streams -> ofdm_rx -> mimo_detector
// -> tb_stream_decoder -> a sink that checks each decoded transport block. It
// reports frames per second against the frames' air time, GNU Radio's own
// ceiling for the same sample streams and buffers (sources -> heads -> null
// sinks, measured in the same run), and the latency at real-time pacing (a
// source that emits the samples at the sample rate, as a radio does).
#pragma once

#include "json_writer.h"

#include <mimo_gpu/constellation.h>
#include <mimo_gpu/detector_registry.h>
#include <mimo_gpu/ofdm_grid.h>

#include <cstdint>
#include <string>
#include <vector>

namespace mimo_gpu_apps {

struct ofdm_chain_settings {
    std::string grid = "nr100";
    int nr = 4, nt = 4;
    ::mimo_gpu::modulation mod = ::mimo_gpu::modulation::qam16;
    int slots = 2, data_symbols = 13;
    std::vector<int> pilot_positions{ 0 }; // where each slot's pilot symbols sit
    std::string profile = "epa";
    double doppler = 0; ///< Hz: the loopback's and the transmit side's channel model
    double snr_db = 30;
    double code_rate = 0.5;  // one transport block per frame, A from it
    uint64_t frames = 2000;  // through the throughput run
    int distinct_frames = 8; // drawn once, repeated by the sources
    long source_buffer = 0;  // min output buffer of sources and heads (0: default)
    std::string backend = "auto";
    int max_blocks = 0;      // tb_stream_decoder's; 0: the block's default
    int decoder_window = 64; // tb_stream_decoder's turbo window (its default)
    std::string device_buffers = "default"; // detector and decoder: default, on or off
    uint64_t paced_frames = 0; // frames of the latency run at real-time pacing (0: none)
    double pace = 1.0;         // the paced source's rate over the sample rate
    /// How far the chain goes: "rx" (ofdm_rx -> null sinks), "detector" (-> mimo_detector
    /// -> null sink) or "decoder" (the whole receiver, the default).
    std::string stage = "decoder";
    /// ofdm_rx's time interpolation: hold (a channel per slot, the block's
    /// default), linear or lmmse (a channel per data symbol)
    std::string time_interpolation = "hold";
    /// ofdm_rx's noise_per_antenna (each antenna's noise measured, whitened
    /// where apart; the block's default)
    bool noise_per_antenna = true;
    /// ofdm_rx's across_frames (estimation across frames; LMMSE in time)
    bool across_frames = false;
    /// Frames the buffers between ofdm_rx, the detector and the decoder hold at
    /// least (0: GNU Radio's sizes, about two).
    int block_buffer_frames = 0;
    double decoder_max_wait_ms = -1; // tb_stream_decoder's max_wait_ms (< 0: its default)
};

/// The frame the settings describe, validated (std::invalid_argument).
::mimo_gpu::ofdm_grid grid_of(const ofdm_chain_settings& settings);

/// Runs the chain once per detector; returns the number of runs that lost frames
/// or failed a CRC (each a failure of the run, printed).
/// The frame the settings describe, validated (std::invalid_argument).
::mimo_gpu::ofdm_grid grid_of(const ofdm_chain_settings& settings);

int run_ofdm_chains(const ofdm_chain_settings& settings,
                    const std::vector<::mimo_gpu::detector_spec>& detectors,
                    json_writer* json);

} // namespace mimo_gpu_apps
