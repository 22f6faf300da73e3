// mimo_gpu_flowgraph_bench --chain ofdm (bench_ofdm_chain.h says what it measures).
//
// The samples: `distinct_frames` frames, each one transport block (A random
// information bits at the code rate, CRC, turbo code, rate matching onto the
// frame's G coded bits) through ofdm_transmitter and a multipath channel (block
// fading per frame, a small timing offset, AWGN), drawn once on the CPU and
// repeated by the sources. A frame's period in the stream (the frame, the
// offset and the delay spread) over the sample rate is its air time.
#include "bench_ofdm_chain.h"

#include "flowgraph_probes.h"

#include <gnuradio/block_detail.h>
#include <gnuradio/blocks/head.h>
#include <gnuradio/blocks/null_sink.h>
#include <gnuradio/blocks/vector_source.h>
#include <gnuradio/high_res_timer.h>
#include <gnuradio/mimo_gpu/mimo_detector.h>
#include <gnuradio/mimo_gpu/ofdm_channel_model.h>
#include <gnuradio/mimo_gpu/ofdm_rx.h>
#include <gnuradio/mimo_gpu/ofdm_tx.h>
#include <gnuradio/mimo_gpu/tb_source.h>
#include <gnuradio/mimo_gpu/tb_stream_decoder.h>
#include <gnuradio/top_block.h>
#include <mimo_gpu/lte_turbo_decoder.h>
#include <mimo_gpu/multipath_channel.h>
#include <mimo_gpu/ofdm_grid.h>
#include <mimo_gpu/ofdm_transmitter.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <stdexcept>
#include <thread>

namespace mimo_gpu_apps {

namespace core = ::mimo_gpu;

::mimo_gpu::ofdm_grid grid_of(const ofdm_chain_settings& s)
{
    ::mimo_gpu::ofdm_grid g = ::mimo_gpu::ofdm_grid::preset(s.grid);
    g.nt = s.nt;
    g.mod = s.mod;
    g.slots = s.slots;
    g.data_symbols = s.data_symbols;
    g.pilot_positions = s.pilot_positions;
    g.validate();
    return g;
}

namespace {

constexpr int k_timing_offset = 64; // noise-only samples before each frame

/// The frames the sources repeat: per antenna, the frames back to back.
struct recorded_frames {
    core::ofdm_grid grid;
    core::transport_block_format format;
    size_t period = 0; // samples per frame in the stream (frame, offset, delay spread)
    std::vector<std::vector<gr_complex>> antennas; // nr streams of distinct * period
    std::vector<std::vector<uint8_t>> information; // A bits per distinct frame

    double air_seconds() const { return double(period) / grid.sample_rate; }
};


recorded_frames record_frames(const ofdm_chain_settings& s)
{
    recorded_frames r;
    r.grid = grid_of(s);
    r.format.G = int(r.grid.frame_bits());
    r.format.Qm = core::constellation(s.mod).bits_per_symbol();
    r.format.A = std::max(40, int(s.code_rate * r.format.G) - 24);
    r.format.validate_for_decoding();
    const core::transport_block_encoder encoder(r.format);
    core::ofdm_transmitter tx(r.grid);
    core::multipath_config mc;
    mc.nr = s.nr;
    mc.nt = s.nt;
    mc.profile = core::delay_profile_from_string(s.profile);
    mc.sample_rate = r.grid.sample_rate;
    mc.timing_offset = k_timing_offset;
    mc.cfo = 0.05 * r.grid.subcarrier_spacing();
    mc.snr_db = s.snr_db;
    mc.seed = 20261125;
    core::multipath_channel channel(mc);
    const size_t frame = size_t(r.grid.frame_samples());
    r.period = channel.output_samples(frame);
    r.antennas.assign(size_t(s.nr), {});
    for (auto& a : r.antennas)
        a.reserve(r.period * size_t(s.distinct_frames));
    std::mt19937_64 rng(7);
    std::vector<uint8_t> coded(size_t(r.format.G));
    std::vector<core::cfloat> samples(frame * size_t(s.nt)),
        received(r.period * size_t(s.nr));
    for (int f = 0; f < s.distinct_frames; ++f) {
        std::vector<uint8_t> bits(size_t(r.format.A));
        for (auto& b : bits)
            b = uint8_t(rng() & 1);
        encoder.encode(bits.data(), coded.data());
        tx.modulate(coded.data(), samples.data());
        channel.run(samples.data(), frame, received.data()); // new taps per frame
        for (size_t n = 0; n < r.period; ++n)
            for (int a = 0; a < s.nr; ++a)
                r.antennas[size_t(a)].push_back(received[n * size_t(s.nr) + size_t(a)]);
        r.information.push_back(std::move(bits));
    }
    return r;
}

double
steady_rate(const std::vector<std::pair<uint64_t, probe_clock::time_point>>& marks);

/// Decoded transport blocks in; block k is checked against frame k's bits, and
/// its arrival is stamped.
class block_checker : public gr::sync_block
{
public:
    /// Input 0: the decoded blocks; input 1, where connected (the loopback): the
    /// blocks sent, else the recorded frames' bits.
    explicit block_checker(const recorded_frames& frames)
        : gr::sync_block("block_checker",
                         gr::io_signature::make(1, 2, size_t(frames.format.A)),
                         gr::io_signature::make(0, 0, 0)),
          m_frames(frames)
    {
    }
    int work(int n, gr_vector_const_void_star& in, gr_vector_void_star&) override
    {
        const auto bits = static_cast<const uint8_t*>(in[0]);
        const size_t A = size_t(m_frames.format.A);
        const auto now = probe_clock::now();
        for (int k = 0; k < n; ++k) {
            const uint8_t* sent = in.size() > 1
                                      ? static_cast<const uint8_t*>(in[1]) + size_t(k) * A
                                      : m_frames
                                            .information[(nitems_read(0) + uint64_t(k)) %
                                                         m_frames.information.size()]
                                            .data();
            m_errors += std::memcmp(bits + size_t(k) * A, sent, A) != 0;
            m_arrivals.push_back(now);
        }
        return n;
    }
    uint64_t block_errors() const { return m_errors; }
    const std::vector<probe_clock::time_point>& arrivals() const { return m_arrivals; }
    /// Blocks per second once running (steady_rate).
    double steady_blocks_per_s() const
    {
        std::vector<std::pair<uint64_t, probe_clock::time_point>> marks;
        for (size_t k = 0; k < m_arrivals.size(); ++k)
            marks.emplace_back(uint64_t(k + 1), m_arrivals[k]);
        return steady_rate(marks);
    }

private:
    const recorded_frames& m_frames;
    uint64_t m_errors = 0;
    std::vector<probe_clock::time_point> m_arrivals;
};

/// Items per second from arrival stamps (count so far, time), the first tenth
/// of the items left out: the rate once the flowgraph runs, without its
/// start-up (CUDA contexts, allocations, FFT plans: a live receiver pays them
/// once). 0 where too few stamps.
double steady_rate(const std::vector<std::pair<uint64_t, probe_clock::time_point>>& marks)
{
    if (marks.size() < 3)
        return 0;
    const uint64_t skip = marks.back().first / 10;
    size_t k = 0;
    while (k + 2 < marks.size() && marks[k].first < skip)
        ++k;
    const double seconds =
        std::chrono::duration<double>(marks.back().second - marks[k].second).count();
    return seconds > 0 ? double(marks.back().first - marks[k].first) / seconds : 0;
}

/// A null sink that stamps what has arrived at each call (steady_rate).
class arrival_probe : public gr::sync_block
{
public:
    explicit arrival_probe(size_t item_size)
        : gr::sync_block("arrival_probe",
                         gr::io_signature::make(1, 1, int(item_size)),
                         gr::io_signature::make(0, 0, 0))
    {
    }
    int work(int n, gr_vector_const_void_star&, gr_vector_void_star&) override
    {
        m_marks.emplace_back(nitems_read(0) + uint64_t(n), probe_clock::now());
        return n;
    }
    double steady_items_per_s() const { return steady_rate(m_marks); }

private:
    std::vector<std::pair<uint64_t, probe_clock::time_point>> m_marks;
};

/// The recorded frames at the sample rate (times `pace`), in packets, as a radio
/// delivers them; remembers when each frame's last sample went out.
class paced_source : public gr::sync_block
{
public:
    paced_source(const recorded_frames& frames, uint64_t total_frames, double pace)
        : gr::sync_block("paced_source",
                         gr::io_signature::make(0, 0, 0),
                         gr::io_signature::make(int(frames.antennas.size()),
                                                int(frames.antennas.size()),
                                                sizeof(gr_complex))),
          m_frames(frames),
          m_total(total_frames * frames.period),
          m_rate(frames.grid.sample_rate * pace)
    {
    }
    bool start() override
    {
        m_start = probe_clock::now();
        return true;
    }
    int work(int n, gr_vector_const_void_star&, gr_vector_void_star& out) override
    {
        const uint64_t sent = nitems_written(0);
        if (sent >= m_total)
            return WORK_DONE;
        uint64_t due = samples_due();
        if (due < sent + k_packet) { // wait for the next packet's time
            const double at = double(sent + k_packet) / m_rate;
            std::this_thread::sleep_until(
                m_start + std::chrono::duration_cast<probe_clock::duration>(
                              std::chrono::duration<double>(at)));
            due = samples_due();
        }
        const uint64_t count =
            std::min<uint64_t>({ uint64_t(n), due - sent, m_total - sent });
        const size_t length = m_frames.antennas[0].size();
        for (size_t a = 0; a < out.size(); ++a) {
            auto o = static_cast<gr_complex*>(out[a]);
            for (uint64_t k = 0; k < count;) { // the recording repeats
                const size_t at = size_t((sent + k) % length);
                const size_t run = std::min<size_t>(size_t(count - k), length - at);
                std::memcpy(
                    o + k, m_frames.antennas[a].data() + at, run * sizeof(gr_complex));
                k += run;
            }
        }
        const auto now = probe_clock::now();
        while ((m_last_samples.size() + 1) * m_frames.period <= sent + count)
            m_last_samples.push_back(now);
        return int(count);
    }
    const std::vector<probe_clock::time_point>& frame_ends() const
    {
        return m_last_samples;
    }

private:
    static constexpr uint64_t k_packet = 4096;
    uint64_t samples_due() const
    {
        return uint64_t(
            std::chrono::duration<double>(probe_clock::now() - m_start).count() * m_rate);
    }
    const recorded_frames& m_frames;
    const uint64_t m_total;
    const double m_rate;
    probe_clock::time_point m_start;
    std::vector<probe_clock::time_point> m_last_samples;
};

/// Whether the chain ends in the decoder (the receiver, or the loopback).
bool decodes(const ofdm_chain_settings& s)
{
    return s.stage == "decoder" || s.stage == "loopback";
}

struct chain_blocks {
    gr::mimo_gpu::ofdm_rx::sptr rx;
    gr::mimo_gpu::mimo_detector::sptr detector;
    gr::mimo_gpu::tb_stream_decoder::sptr decoder;
};

/// The receiver's three blocks with the settings' parameters (the blocks'
/// defaults wherever the settings say "default").
chain_blocks make_chain(const ofdm_chain_settings& s,
                        const core::detector_spec& spec,
                        const recorded_frames& r)
{
    chain_blocks c;
    c.rx = gr::mimo_gpu::ofdm_rx::make(s.grid,
                                       s.nt,
                                       s.nr,
                                       core::to_string(s.mod),
                                       s.slots,
                                       s.data_symbols,
                                       s.time_interpolation,
                                       "lmmse",
                                       s.backend,
                                       true,
                                       s.pilot_positions,
                                       s.noise_per_antenna,
                                       s.across_frames);
    const std::string params = core::format_parameter_list(spec.parameters);
    const int S = c.rx->symbols_per_channel();
    const bool device_buffers =
        s.device_buffers != "off"; // the blocks' default: on (used on CUDA)
    c.detector = gr::mimo_gpu::mimo_detector::make(spec.name,
                                                   s.nr,
                                                   s.nt,
                                                   core::to_string(s.mod),
                                                   params,
                                                   1.0,
                                                   S,
                                                   s.backend,
                                                   8400,
                                                   "erase",
                                                   device_buffers);
    if (s.block_buffer_frames > 0) {
        const long frames = s.block_buffer_frames;
        c.rx->set_min_output_buffer(
            0, frames * long(r.grid.slots) * r.grid.used_subcarriers);
        c.rx->set_min_output_buffer(1, frames * long(r.grid.data_elements()));
        c.detector->set_min_output_buffer(0, frames * long(r.grid.data_elements()));
    }
    const int unit = s.nt * r.format.Qm;
    const auto& f = r.format;
    c.decoder = gr::mimo_gpu::tb_stream_decoder::make(f.A,
                                                      f.G,
                                                      f.Qm,
                                                      f.NL,
                                                      f.rv,
                                                      unit,
                                                      "max-log-map",
                                                      6,
                                                      0.75,
                                                      s.decoder_window,
                                                      s.backend,
                                                      s.max_blocks,
                                                      device_buffers);
    if (s.decoder_max_wait_ms >= 0)
        c.decoder->set_max_wait_ms(s.decoder_max_wait_ms);
    return c;
}

/// The chain up to the settings' stage; what it ends in is a null sink where the
/// decoder is not reached (frames are then counted at ofdm_rx).
void connect_chain(gr::top_block_sptr tb,
                   const ofdm_chain_settings& s,
                   const chain_blocks& c,
                   const std::shared_ptr<block_checker>& sink)
{
    if (s.stage == "rx") {
        tb->connect(
            c.rx,
            0,
            gr::blocks::null_sink::make(c.rx->output_signature()->sizeof_stream_item(0)),
            0);
        tb->connect(
            c.rx,
            1,
            gr::blocks::null_sink::make(c.rx->output_signature()->sizeof_stream_item(1)),
            0);
        return;
    }
    tb->connect(c.rx, 0, c.detector, 0);
    tb->connect(c.rx, 1, c.detector, 1);
    if (s.stage == "detector") {
        tb->connect(c.detector,
                    0,
                    gr::blocks::null_sink::make(
                        c.detector->output_signature()->sizeof_stream_item(0)),
                    0);
        return;
    }
    tb->connect(c.detector, 0, c.decoder, 0);
    tb->connect(c.decoder, 0, sink, 0);
}

/// Time in work() per frame of each block of the chain (GNU Radio's performance
/// counters, wall clock), in ms; 0 where a block did not run.
struct work_times {
    double rx = 0, detector = 0, decoder = 0;
    /// How full the blocks' first input and output buffers were on average
    /// (0..1, GNU Radio's counters): a full input says the block is the slower
    /// side, a full output that its reader is.
    double rx_in = 0, rx_out = 0, detector_in = 0, detector_out = 0, decoder_in = 0;
};

double work_ms_per_frame(gr::block& b, uint64_t frames)
{
    if (!b.detail() || frames == 0)
        return 0;
    return double(b.pc_work_time_total()) / double(gr::high_res_timer_tps()) * 1e3 /
           double(frames);
}

struct chain_result {
    double seconds = 0;
    /// Frames per second once running (decoder stage; 0 elsewhere), and the
    /// time to the first decoded block (the flowgraph's start-up).
    double steady_fps = 0, first_block_s = 0;
    uint64_t frames = 0, block_errors = 0, crc_failures = 0;
    long head_buffer = 0; // items of a source head's buffer, as GNU Radio made it
    std::string backend;
    double latency_median_ms = 0, latency_p99_ms = 0;
    work_times work;
    std::string rx_timing;
};

/// Frames out of the chain: decoded blocks, or frames received where the chain
/// ends before the decoder.
uint64_t
frames_out(const ofdm_chain_settings& s, const chain_blocks& c, block_checker& sink)
{
    return decodes(s) ? sink.nitems_read(0) : c.rx->frames_received();
}

/// The chain from c.rx on, run to its end: what every run reports.
chain_result run_to_end(gr::top_block_sptr tb,
                        const ofdm_chain_settings& s,
                        const chain_blocks& c,
                        const std::shared_ptr<block_checker>& sink)
{
    connect_chain(tb, s, c, sink);
    chain_result out;
    const auto start = std::chrono::steady_clock::now();
    tb->run();
    out.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    out.frames = frames_out(s, c, *sink);
    if (decodes(s) && !sink->arrivals().empty()) {
        out.steady_fps = sink->steady_blocks_per_s();
        out.first_block_s =
            std::chrono::duration<double>(sink->arrivals().front() - start).count();
    }
    out.block_errors = sink->block_errors();
    out.crc_failures = c.decoder->crc_failures();
    out.backend = c.detector->active_backend();
    return out;
}

void record_work_times(chain_result& r,
                       const ofdm_chain_settings& s,
                       const chain_blocks& c)
{
    r.work.rx = work_ms_per_frame(*c.rx, r.frames);
    if (c.rx->detail()) {
        r.work.rx_in = c.rx->pc_input_buffers_full_avg(0);
        r.work.rx_out = c.rx->pc_output_buffers_full_avg(0);
    }
    if (s.stage != "rx") {
        r.work.detector = work_ms_per_frame(*c.detector, r.frames);
        if (c.detector->detail()) {
            r.work.detector_in = c.detector->pc_input_buffers_full_avg(0);
            r.work.detector_out = c.detector->pc_output_buffers_full_avg(0);
        }
    }
    if (decodes(s)) {
        r.work.decoder = work_ms_per_frame(*c.decoder, r.frames);
        if (c.decoder->detail())
            r.work.decoder_in = c.decoder->pc_input_buffers_full_avg(0);
    }
}

std::vector<gr::blocks::vector_source_c::sptr> sources_of(const recorded_frames& r,
                                                          long min_buffer)
{
    std::vector<gr::blocks::vector_source_c::sptr> v;
    for (const auto& a : r.antennas) {
        v.push_back(gr::blocks::vector_source_c::make(a, true));
        if (min_buffer > 0)
            v.back()->set_min_output_buffer(min_buffer);
    }
    return v;
}

/// The transmit side on the settings' backend, every block at its defaults
/// (device buffers on CUDA): tb_source (a pool of 8 encoded blocks) -> ofdm_tx
/// -> ofdm_channel_model (block fading, the recorded frames' CFO, offset and
/// SNR).
struct transmit_side {
    gr::mimo_gpu::tb_source::sptr source;
    gr::mimo_gpu::ofdm_tx::sptr tx;
    gr::mimo_gpu::ofdm_channel_model::sptr channel;
};

transmit_side make_transmit_side(const ofdm_chain_settings& s,
                                 const recorded_frames& r,
                                 uint64_t blocks)
{
    const auto& f = r.format;
    transmit_side t;
    t.source = gr::mimo_gpu::tb_source::make(
        f.A, f.G, f.Qm, f.NL, f.rv, 1, 8, blocks, s.backend);
    t.tx = gr::mimo_gpu::ofdm_tx::make(s.grid,
                                       s.nt,
                                       core::to_string(s.mod),
                                       s.slots,
                                       s.data_symbols,
                                       s.backend,
                                       true,
                                       s.pilot_positions);
    t.channel = gr::mimo_gpu::ofdm_channel_model::make(s.grid,
                                                       s.nt,
                                                       s.nr,
                                                       s.slots,
                                                       s.data_symbols,
                                                       s.profile,
                                                       s.snr_db,
                                                       0.05,
                                                       k_timing_offset,
                                                       3,
                                                       0,
                                                       0,
                                                       s.doppler,
                                                       s.backend,
                                                       true,
                                                       s.pilot_positions);
    return t;
}

/// The loopback: the transmit side into the receiver, the blocks sent into the
/// checker's second input (a buffer for the frames the chain's buffers may hold
/// in flight, or the source would wait on it). Blocks pair by position: a lost
/// frame fails the run anyway (frames out < frames).
void connect_transmit_side(gr::top_block_sptr tb,
                           const ofdm_chain_settings& s,
                           const recorded_frames& r,
                           const gr::mimo_gpu::ofdm_rx::sptr& rx,
                           const std::shared_ptr<block_checker>& sink)
{
    const transmit_side t = make_transmit_side(s, r, uint64_t(s.frames));
    t.source->set_min_output_buffer(1, 64 + 4 * long(s.block_buffer_frames));
    tb->connect(t.source, 0, t.tx, 0);
    tb->connect(t.source, 1, sink, 1);
    for (int a = 0; a < s.nt; ++a)
        tb->connect(t.tx, a, t.channel, a);
    for (int a = 0; a < s.nr; ++a)
        tb->connect(t.channel, a, rx, a);
}

/// frames through sources -> heads -> the chain, as fast as it goes.
chain_result run_chain(const ofdm_chain_settings& s,
                       const core::detector_spec& spec,
                       const recorded_frames& r)
{
    auto tb = gr::make_top_block("ofdm_chain_bench");
    const chain_blocks c = make_chain(s, spec, r);
    auto sink = std::make_shared<block_checker>(r);
    if (s.stage == "loopback") {
        connect_transmit_side(tb, s, r, c.rx, sink);
        chain_result out = run_to_end(tb, s, c, sink);
        record_work_times(out, s, c);
        out.rx_timing = c.rx->timing_summary();
        return out;
    }
    const auto sources = sources_of(r, s.source_buffer);
    std::vector<gr::blocks::head::sptr> heads;
    for (size_t a = 0; a < sources.size(); ++a) {
        heads.push_back(gr::blocks::head::make(sizeof(gr_complex), s.frames * r.period));
        if (s.source_buffer > 0)
            heads.back()->set_min_output_buffer(s.source_buffer);
        tb->connect(sources[a], 0, heads[a], 0);
        tb->connect(heads[a], 0, c.rx, int(a));
    }
    chain_result out = run_to_end(tb, s, c, sink);
    record_work_times(out, s, c);
    out.rx_timing = c.rx->timing_summary();
    out.head_buffer = heads[0]->max_output_buffer(0);
    return out;
}

/// The transmit side alone: tb_source (a pool of encoded blocks) -> ofdm_tx
/// (-> ofdm_channel_model when `channel`) -> null sinks, in frames per second.
double
run_transmitter_fps(const ofdm_chain_settings& s, const recorded_frames& r, bool channel)
{
    auto tb = gr::make_top_block("ofdm_tx_bench");
    const transmit_side t = make_transmit_side(s, r, uint64_t(s.frames));
    tb->connect(t.source, 0, t.tx, 0);
    tb->connect(t.source, 1, gr::blocks::null_sink::make(size_t(r.format.A)), 0);
    if (channel) {
        for (int a = 0; a < s.nt; ++a)
            tb->connect(t.tx, a, t.channel, a);
        for (int a = 0; a < s.nr; ++a)
            tb->connect(t.channel, a, gr::blocks::null_sink::make(sizeof(gr_complex)), 0);
    } else
        for (int a = 0; a < s.nt; ++a)
            tb->connect(t.tx, a, gr::blocks::null_sink::make(sizeof(gr_complex)), 0);
    const auto start = std::chrono::steady_clock::now();
    tb->run();
    return double(s.frames) /
           std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
               .count();
}

/// GNU Radio's ceiling: the same sources and heads, with the chain's head
/// buffers, into null sinks (the first antenna's a probe), in frames per second
/// over the whole run and once running.
struct ceiling_rates {
    double whole = 0, steady = 0;
};

ceiling_rates
run_ceiling(const ofdm_chain_settings& s, const recorded_frames& r, long head_buffer)
{
    auto tb = gr::make_top_block("ofdm_chain_ceiling");
    const auto sources = sources_of(r, s.source_buffer);
    std::shared_ptr<arrival_probe> probe;
    for (const auto& source : sources) {
        auto head = gr::blocks::head::make(sizeof(gr_complex), s.frames * r.period);
        if (head_buffer > 0)
            head->set_min_output_buffer(head_buffer);
        tb->connect(source, 0, head, 0);
        if (!probe) {
            probe = std::make_shared<arrival_probe>(sizeof(gr_complex));
            tb->connect(head, 0, probe, 0);
        } else
            tb->connect(head, 0, gr::blocks::null_sink::make(sizeof(gr_complex)), 0);
    }
    const auto start = std::chrono::steady_clock::now();
    tb->run();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return { double(s.frames) / seconds, probe->steady_items_per_s() / double(r.period) };
}

double percentile(std::vector<double> v, double q)
{
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, size_t(q * double(v.size())))];
}

/// The chain fed at the sample rate: per frame, from its last sample leaving the
/// source to its decoded block reaching the sink (the first tenth left out).
chain_result run_paced(const ofdm_chain_settings& s,
                       const core::detector_spec& spec,
                       const recorded_frames& r)
{
    auto tb = gr::make_top_block("ofdm_chain_paced");
    const chain_blocks c = make_chain(s, spec, r);
    auto sink = std::make_shared<block_checker>(r);
    auto source = std::make_shared<paced_source>(r, s.paced_frames, s.pace);
    for (int a = 0; a < s.nr; ++a)
        tb->connect(source, a, c.rx, a);
    chain_result out = run_to_end(tb, s, c, sink);
    const auto& ends = source->frame_ends();
    const auto& arrivals = sink->arrivals();
    std::vector<double> ms;
    for (size_t f = std::min(ends.size(), arrivals.size()) / 10;
         f < std::min(ends.size(), arrivals.size());
         ++f)
        ms.push_back(
            std::chrono::duration<double, std::milli>(arrivals[f] - ends[f]).count());
    out.latency_median_ms = percentile(ms, 0.5);
    out.latency_p99_ms = percentile(ms, 0.99);
    return out;
}

} // namespace

int run_ofdm_chains(const ofdm_chain_settings& s,
                    const std::vector<core::detector_spec>& detectors,
                    json_writer* json)
{
    // GNU Radio's performance counters (time in each block's work(), wall clock)
    // for the per-block figures, unless the environment says otherwise; read
    // when a flowgraph starts, and only here (the other chains are not timed so).
    setenv("GR_CONF_PERFCOUNTERS_ON", "True", 0);
    setenv("GR_CONF_PERFCOUNTERS_CLOCK", "monotonic", 0);
    const auto t0 = std::chrono::steady_clock::now();
    const recorded_frames r = record_frames(s);
    std::printf(
        "ofdm chain: %dx%d %s, %s, %s %.0f dB, one transport block per frame (A %d, G "
        "%d), "
        "frame period %zu samples = %.4f ms of air; %d distinct frames drawn in %.1f s\n",
        s.nr,
        s.nt,
        core::to_string(s.mod).c_str(),
        core::describe(r.grid).c_str(),
        s.profile.c_str(),
        s.snr_db,
        r.format.A,
        r.format.G,
        r.period,
        1e3 * r.air_seconds(),
        s.distinct_frames,
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    std::fflush(stdout);
    if (s.stage == "tx" || s.stage == "tx-channel") {
        const double fps = run_transmitter_fps(s, r, s.stage == "tx-channel");
        std::printf("transmit side (tb_source -> ofdm_tx%s -> null sinks), %s: %.1f "
                    "frames/s = %.3fx real time\n",
                    s.stage == "tx" ? "" : " -> ofdm_channel_model",
                    s.backend.c_str(),
                    fps,
                    fps * r.air_seconds());
        if (json)
            json->begin_object()
                .value("chain", "ofdm")
                .value("stage", s.stage)
                .value("time_interpolation", s.time_interpolation)
                .value("noise_per_antenna", s.noise_per_antenna)
                .value("across_frames", s.across_frames)
                .value("pilot_positions", core::pilot_positions_text(s.pilot_positions))
                .value("grid", s.grid)
                .value("shape", std::to_string(s.nr) + "x" + std::to_string(s.nt))
                .value("modulation", core::to_string(s.mod))
                .value("frames_per_s", fps)
                .value("x_real_time", fps * r.air_seconds())
                .end_object();
        return 0;
    }
    int failures = 0;
    double ceiling_fps = 0, ceiling_steady_fps = 0;
    for (size_t k = 0; k < detectors.size(); ++k) {
        const core::detector_spec& spec = detectors[k];
        const chain_result c = run_chain(s, spec, r);
        const bool loopback = s.stage == "loopback"; // no recorded streams: no ceiling
        if (k == 0 && !loopback) { // the streams alone, with the buffers the chain had
            const ceiling_rates ceiling = run_ceiling(s, r, c.head_buffer);
            ceiling_fps = ceiling.whole;
            ceiling_steady_fps = ceiling.steady;
        }
        const double fps = double(c.frames) / c.seconds;
        // A lost frame fails the run; block errors are the link's accuracy (printed).
        const bool ok = c.frames == s.frames;
        failures += ok ? 0 : 1;
        std::printf("%s, %s, to the %s: %.1f frames/s = %.3fx real time (%llu of %llu "
                    "frames out, %llu block "
                    "errors, %llu CRC failures, %.2f s); GNU Radio ceiling for the same "
                    "streams %.1f frames/s = "
                    "%.3fx (%.0f%% of it; head buffers %ld items)\n",
                    spec.label().c_str(),
                    c.backend.c_str(),
                    s.stage.c_str(),
                    fps,
                    fps * r.air_seconds(),
                    (unsigned long long)c.frames,
                    (unsigned long long)s.frames,
                    (unsigned long long)c.block_errors,
                    (unsigned long long)c.crc_failures,
                    c.seconds,
                    ceiling_fps,
                    ceiling_fps * r.air_seconds(),
                    ceiling_fps > 0 ? 100.0 * fps / ceiling_fps : 0.0,
                    c.head_buffer);
        if (loopback)
            std::printf("  loopback: tb_source -> ofdm_tx -> ofdm_channel_model -> the "
                        "receiver, all on %s (no recorded streams: the ceiling line does "
                        "not apply)\n",
                        s.backend.c_str());
        if (c.steady_fps > 0)
            std::printf("  once running (the first tenth of the blocks left out): %.1f "
                        "frames/s = %.3fx real time; GNU Radio ceiling once running "
                        "%.1f frames/s = %.3fx (%.0f%% of it); first block %.0f ms "
                        "after the start\n",
                        c.steady_fps,
                        c.steady_fps * r.air_seconds(),
                        ceiling_steady_fps,
                        ceiling_steady_fps * r.air_seconds(),
                        ceiling_steady_fps > 0 ? 100.0 * c.steady_fps / ceiling_steady_fps
                                               : 0.0,
                        1e3 * c.first_block_s);
        if (c.work.rx > 0)
            std::printf("  work() per frame: ofdm_rx %.3f ms, mimo_detector %.3f ms, "
                        "tb_stream_decoder %.3f ms "
                        "(frame air time %.3f ms)\n",
                        c.work.rx,
                        c.work.detector,
                        c.work.decoder,
                        1e3 * r.air_seconds());
        if (c.work.rx > 0)
            std::printf("  buffers full on average: ofdm_rx in %.2f out %.2f, "
                        "mimo_detector in %.2f out %.2f, tb_stream_decoder in %.2f\n",
                        c.work.rx_in,
                        c.work.rx_out,
                        c.work.detector_in,
                        c.work.detector_out,
                        c.work.decoder_in);
        std::printf("  ofdm_rx %s\n", c.rx_timing.c_str());
        chain_result p;
        if (s.paced_frames > 0 && !loopback) {
            p = run_paced(s, spec, r);
            const bool paced_ok = p.frames == s.paced_frames;
            failures += paced_ok ? 0 : 1;
            std::printf("%s, paced at %.2fx the sample rate: latency from a frame's last "
                        "sample to its decoded "
                        "block median %.3f ms, 99th percentile %.3f ms (%llu of %llu "
                        "frames, %llu block errors)\n",
                        spec.label().c_str(),
                        s.pace,
                        p.latency_median_ms,
                        p.latency_p99_ms,
                        (unsigned long long)p.frames,
                        (unsigned long long)s.paced_frames,
                        (unsigned long long)p.block_errors);
        }
        std::fflush(stdout);
        if (json) {
            json->begin_object()
                .value("chain", "ofdm")
                .value("detector", spec.label())
                .value("backend", c.backend)
                .value("grid", s.grid)
                .value("shape", std::to_string(s.nr) + "x" + std::to_string(s.nt))
                .value("modulation", core::to_string(s.mod))
                .value("A", r.format.A)
                .value("G", r.format.G)
                .value("frame_air_ms", 1e3 * r.air_seconds())
                .value("frames", (unsigned long long)c.frames)
                .value("frames_expected", (unsigned long long)s.frames)
                .value("block_errors", (unsigned long long)c.block_errors)
                .value("crc_failures", (unsigned long long)c.crc_failures)
                .value("seconds", c.seconds)
                .value("frames_per_s", fps)
                .value("x_real_time", fps * r.air_seconds())
                .value("ceiling_frames_per_s", ceiling_fps)
                .value("ceiling_x_real_time", ceiling_fps * r.air_seconds())
                .value("fraction_of_ceiling", ceiling_fps > 0 ? fps / ceiling_fps : 0.0)
                .value("steady_frames_per_s", c.steady_fps)
                .value("steady_x_real_time", c.steady_fps * r.air_seconds())
                .value("ceiling_steady_frames_per_s", ceiling_steady_fps)
                .value("ceiling_steady_x_real_time", ceiling_steady_fps * r.air_seconds())
                .value("steady_fraction_of_ceiling",
                       ceiling_steady_fps > 0 ? c.steady_fps / ceiling_steady_fps : 0.0)
                .value("first_block_ms", 1e3 * c.first_block_s)
                .value("buffers_full_rx_in", c.work.rx_in)
                .value("buffers_full_rx_out", c.work.rx_out)
                .value("buffers_full_detector_in", c.work.detector_in)
                .value("buffers_full_detector_out", c.work.detector_out)
                .value("buffers_full_decoder_in", c.work.decoder_in)
                .value("head_buffer_items", (long long)c.head_buffer)
                .value("max_blocks", s.max_blocks)
                .value("decoder_window", s.decoder_window)
                .value("device_buffers", s.device_buffers)
                .value("stage", s.stage)
                .value("time_interpolation", s.time_interpolation)
                .value("noise_per_antenna", s.noise_per_antenna)
                .value("across_frames", s.across_frames)
                .value("pilot_positions", core::pilot_positions_text(s.pilot_positions))
                .value("work_ms_per_frame_rx", c.work.rx)
                .value("work_ms_per_frame_detector", c.work.detector)
                .value("work_ms_per_frame_decoder", c.work.decoder);
            if (s.paced_frames > 0 && !loopback)
                json->value("pace", s.pace)
                    .value("paced_frames", (unsigned long long)p.frames)
                    .value("paced_block_errors", (unsigned long long)p.block_errors)
                    .value("latency_median_ms", p.latency_median_ms)
                    .value("latency_p99_ms", p.latency_p99_ms);
            json->end_object();
        }
    }
    return failures;
}

} // namespace mimo_gpu_apps
