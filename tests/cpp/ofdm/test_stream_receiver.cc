// ofdm_stream_receiver: the front end on a stream cut into calls as a radio or
// GNU Radio cuts it. The same frames (to the bit) however the stream is cut;
// frames across calls, gaps of noise, a stream ending mid-frame, non-finite
// samples; CUDA against the CPU on fresh streams, host and device outputs.
#include "../../../lib/core/ofdm/arrival_pace.h"
#include "../../../lib/core/ofdm/frame_search.h"
#include "../../../lib/core/runtime/thread_pool.h"
#include "../test_support.h"
#include "front_end_fixtures.h"

#include <mimo_gpu/device_memory.h>
#include <mimo_gpu/multipath_channel.h>
#include <mimo_gpu/ofdm_stream_receiver.h>
#include <mimo_gpu/ofdm_transmitter.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <random>
#include <thread>

using namespace mimo_gpu;
using namespace mimo_gpu_test;

namespace {

ofdm_grid stream_grid(const std::string& preset, int nt)
{
    ofdm_grid g = ofdm_grid::preset(preset);
    g.nt = nt;
    g.mod = modulation::qam16;
    g.slots = 2;
    g.data_symbols = 6;
    return g;
}

ofdm_receiver_config stream_config(int nr, backend b)
{
    ofdm_receiver_config c;
    c.nr = nr;
    c.requested = b;
    return c;
}

/// Frames through a multipath channel, with noise of random length between
/// them: one sample vector per antenna, and where each frame's preamble body
/// (after its CP) starts.
struct recorded_stream {
    std::vector<std::vector<cfloat>> antennas;
    std::vector<size_t> bodies;
    size_t spread = 0;

    recorded_stream(const ofdm_grid& g, int nr, int frames, uint64_t seed)
    {
        ofdm_transmitter tx(g);
        multipath_config mc = epa_channel(g, nr, 28, seed);
        mc.cfo = 0.17 * g.subcarrier_spacing();
        mc.timing_offset = 30;
        multipath_channel ch(mc);
        spread = size_t(ch.delay_spread_samples());
        antennas.assign(size_t(nr), {});
        std::mt19937_64 rng(seed);
        std::normal_distribution<float> noise(0.0f,
                                              float(std::sqrt(ch.noise_variance() / 2)));
        std::vector<uint8_t> bits(g.frame_bits());
        std::vector<cfloat> samples(size_t(g.frame_samples()) * g.nt),
            received(ch.output_samples(size_t(g.frame_samples())) * nr);
        for (int f = 0; f < frames; ++f) {
            const size_t gap = size_t(rng() % 3000);
            for (auto& a : antennas)
                for (size_t n = 0; n < gap; ++n)
                    a.push_back(cfloat(noise(rng), noise(rng)));
            bodies.push_back(antennas[0].size() + size_t(mc.timing_offset + g.cp_length));
            for (auto& b : bits)
                b = uint8_t(rng() & 1);
            tx.modulate(bits.data(), samples.data());
            ch.run(samples.data(), size_t(g.frame_samples()), received.data());
            for (size_t n = 0; n < received.size() / size_t(nr); ++n)
                for (int r = 0; r < nr; ++r)
                    antennas[size_t(r)].push_back(received[n * size_t(nr) + size_t(r)]);
        }
    }
    size_t length() const { return antennas[0].size(); }
};

/// What a receiver gave for a stream: the frames and their outputs back to back.
struct received_stream {
    std::vector<stream_frame> frames;
    std::vector<cfloat> H, y;
    uint64_t outside = 0, dropped = 0;

    /// A receive() call's frames, their H and y from the front of H and y
    /// (hn and yn items a frame).
    void add(const std::vector<stream_frame>& got,
             const std::vector<cfloat>& H_out,
             const std::vector<cfloat>& y_out,
             size_t hn,
             size_t yn)
    {
        for (size_t f = 0; f < got.size(); ++f) {
            frames.push_back(got[f]);
            H.insert(H.end(),
                     H_out.begin() + ptrdiff_t(f * hn),
                     H_out.begin() + ptrdiff_t((f + 1) * hn));
            y.insert(y.end(),
                     y_out.begin() + ptrdiff_t(f * yn),
                     y_out.begin() + ptrdiff_t((f + 1) * yn));
        }
    }
};

/// Pushes `length` samples of the stream in chunks from `chunk` (1..max) and asks
/// for up to `room` (0..max) frames a call, at random; ends the stream after.
/// scratch (a buffer of max_chunk samples per antenna): each chunk is pushed
/// from there, and the buffers are poisoned with NaN as each receive() returns
/// (the caller's memory is then free).
received_stream receive_cut(ofdm_stream_receiver& rx,
                            const recorded_stream& s,
                            size_t length,
                            uint64_t seed,
                            size_t max_chunk,
                            size_t max_room,
                            bool device_outputs = false,
                            const std::vector<cfloat*>& scratch = {})
{
    std::mt19937_64 rng(seed);
    const size_t hn = rx.H_items_per_frame() * size_t(s.antennas.size()) *
                      size_t(rx.grid().nt),
                 yn = rx.y_items_per_frame() * size_t(s.antennas.size());
    received_stream out;
    std::vector<cfloat> H(hn * max_room), y(yn * max_room);
    cfloat* d_H = nullptr;
    cfloat* d_y = nullptr;
    if (device_outputs) {
        d_H = static_cast<cfloat*>(allocate_device(H.size() * sizeof(cfloat)));
        d_y = static_cast<cfloat*>(allocate_device(y.size() * sizeof(cfloat)));
    }
    std::vector<const cfloat*> at(s.antennas.size());
    for (size_t pos = 0;;) {
        const size_t n =
            std::min({ size_t(1 + rng() % max_chunk), length - pos, rx.room() });
        for (size_t r = 0; r < at.size(); ++r) {
            at[r] = s.antennas[r].data() + pos;
            if (!scratch.empty()) {
                std::copy_n(at[r], n, scratch[r]);
                at[r] = scratch[r];
            }
        }
        rx.push(at.data(), n);
        pos += n;
        if (pos == length && !rx.ended())
            rx.end_stream();
        const size_t room = rng() % (max_room + 1);
        const auto frames = rx.receive(room,
                                       device_outputs ? d_H : H.data(),
                                       device_outputs ? d_y : y.data(),
                                       device_outputs);
        for (cfloat* p : scratch)
            std::fill_n(p, max_chunk, cfloat(NAN, NAN));
        if (device_outputs && !frames.empty()) {
            copy_memory(H.data(),
                        d_H,
                        frames.size() * hn * sizeof(cfloat),
                        copy_direction::device_to_host);
            copy_memory(y.data(),
                        d_y,
                        frames.size() * yn * sizeof(cfloat),
                        copy_direction::device_to_host);
        }
        out.add(frames, H, y, hn, yn);
        if (rx.ended() && frames.empty() && !rx.frames_waiting() && room > 0)
            break;
    }
    free_device(d_H);
    free_device(d_y);
    out.outside = rx.samples_outside_frames();
    out.dropped = rx.frames_dropped();
    return out;
}

/// As receive_cut, but with several pushes (1..max_pushes at random) before each
/// receive(), from device memory when device_input: the window fills with
/// samples no search has seen, up to its capacity (a caller that gathers frames
/// for larger batches, or falls behind).
received_stream receive_gathered(ofdm_stream_receiver& rx,
                                 const recorded_stream& s,
                                 uint64_t seed,
                                 size_t max_chunk,
                                 size_t max_pushes,
                                 size_t max_room,
                                 bool device_input)
{
    std::mt19937_64 rng(seed);
    const size_t length = s.length(), nr = s.antennas.size();
    const size_t hn = rx.H_items_per_frame() * nr * size_t(rx.grid().nt),
                 yn = rx.y_items_per_frame() * nr;
    std::vector<cfloat*> d_in(nr, nullptr);
    if (device_input)
        for (size_t r = 0; r < nr; ++r) {
            d_in[r] = static_cast<cfloat*>(allocate_device(length * sizeof(cfloat)));
            copy_memory(d_in[r],
                        s.antennas[r].data(),
                        length * sizeof(cfloat),
                        copy_direction::host_to_device);
        }
    received_stream out;
    std::vector<cfloat> H(hn * max_room), y(yn * max_room);
    std::vector<const cfloat*> at(nr);
    for (size_t pos = 0;;) {
        const size_t pushes = 1 + rng() % max_pushes;
        for (size_t k = 0; k < pushes && pos < length && rx.room() > 0; ++k) {
            const size_t n =
                std::min({ size_t(1 + rng() % max_chunk), length - pos, rx.room() });
            for (size_t r = 0; r < nr; ++r)
                at[r] = (device_input ? d_in[r] : s.antennas[r].data()) + pos;
            rx.push(at.data(), n);
            pos += n;
        }
        if (pos == length && !rx.ended())
            rx.end_stream();
        const size_t room = 1 + rng() % max_room;
        const auto frames = rx.receive(room, H.data(), y.data(), false);
        out.add(frames, H, y, hn, yn);
        if (rx.ended() && frames.empty() && !rx.frames_waiting())
            break;
    }
    for (cfloat* d : d_in)
        free_device(d);
    out.outside = rx.samples_outside_frames();
    out.dropped = rx.frames_dropped();
    return out;
}

/// The largest difference between two receptions' H and y, relative to the
/// first's magnitude where it exceeds 1; infinity where their sizes differ.
double worst_relative_difference(const received_stream& a, const received_stream& b)
{
    double worst = 0;
    for (const auto& [x, y] :
         { std::make_pair(&a.H, &b.H), std::make_pair(&a.y, &b.y) }) {
        if (x->size() != y->size())
            return INFINITY;
        for (size_t i = 0; i < x->size(); ++i)
            worst = std::max(
                worst,
                double(std::abs((*x)[i] - (*y)[i]) / std::max(1.0f, std::abs((*x)[i]))));
    }
    return worst;
}

received_stream
receive_whole(const ofdm_grid& g, int nr, backend b, const recorded_stream& s)
{
    ofdm_stream_receiver rx(g, stream_config(nr, b));
    return receive_cut(rx, s, s.length(), 1, s.length(), 8);
}

} // namespace

TEST(ofdm_stream_receiver, frames_are_the_same_however_the_stream_is_cut)
{
    const uint64_t seed = fresh_seed();
    for (int nt : { 2, 4 }) {
        const ofdm_grid g = stream_grid("lte1.4", nt);
        const recorded_stream s(g, nt, 5, seed + uint64_t(nt));
        const received_stream whole = receive_whole(g, nt, backend::cpu, s);
        ASSERT_EQ(whole.frames.size(), 5u) << nt << "x" << nt;
        for (size_t f = 0; f < 5; ++f) { // each window inside its preamble's CP, to the
                                         // path finder's 2 samples
            EXPECT_LE(whole.frames[f].start, s.bodies[f] + 1) << "frame " << f;
            EXPECT_GE(whole.frames[f].start + size_t(g.cp_length) + 2,
                      s.bodies[f] + s.spread)
                << "frame " << f;
            EXPECT_NEAR(whole.frames[f].cfo, 0.17, 0.05);
        }
        EXPECT_GT(whole.outside, 0u); // the gaps
        for (int cut = 0; cut < 4; ++cut) {
            ofdm_stream_receiver rx(g, stream_config(nt, backend::cpu));
            const size_t chunk =
                cut == 0 ? 1 : size_t(1) << (4 * cut); // 1, 16, 256, 4096 at most
            const received_stream part =
                receive_cut(rx, s, s.length(), seed + uint64_t(cut), chunk, 3);
            ASSERT_EQ(part.frames.size(), whole.frames.size())
                << "chunks up to " << chunk;
            for (size_t f = 0; f < part.frames.size(); ++f) {
                EXPECT_EQ(part.frames[f].start, whole.frames[f].start);
                EXPECT_EQ(part.frames[f].cfo, whole.frames[f].cfo);
                EXPECT_EQ(part.frames[f].n0, whole.frames[f].n0);
            }
            EXPECT_TRUE(part.H == whole.H) << "chunks up to " << chunk;
            EXPECT_TRUE(part.y == whole.y) << "chunks up to " << chunk;
            EXPECT_EQ(part.outside, whole.outside);
            EXPECT_EQ(rx.frames_received(), 5u);
        }
    }
}

TEST(ofdm_stream_receiver, a_stream_ending_mid_frame_gives_its_whole_frames)
{
    const ofdm_grid g = stream_grid("lte1.4", 2);
    const recorded_stream s(g, 2, 3, fresh_seed());
    ofdm_stream_receiver rx(g, stream_config(2, backend::cpu));
    const size_t cut = s.bodies[2] + size_t(g.frame_samples()) / 2;
    const received_stream got = receive_cut(rx, s, cut, 3, 700, 2);
    ASSERT_EQ(got.frames.size(), 2u);
    EXPECT_FALSE(rx.frames_waiting());
    EXPECT_EQ(rx.samples_pushed(), cut);
    // The cut frame's samples count as outside frames.
    EXPECT_GE(got.outside, cut - s.bodies[2]);
    EXPECT_THROW(rx.push(nullptr, 1), std::logic_error); // nothing after the end
}

namespace {
/// Samples [begin, end) of every antenna of the stream into the receiver.
void push_samples(ofdm_stream_receiver& rx,
                  const recorded_stream& s,
                  size_t begin,
                  size_t end)
{
    std::vector<const cfloat*> from(s.antennas.size());
    for (size_t r = 0; r < from.size(); ++r)
        from[r] = s.antennas[r].data() + begin;
    rx.push(from.data(), end - begin);
}
} // namespace

TEST(ofdm_stream_receiver,
     a_stream_in_small_pieces_is_searched_where_a_frame_can_complete)
{
    // Frames start where the walk goes on or later, so a search before the
    // samples reach that plus a frame's reach finds nothing it can take: the
    // receiver waits for them. A stream pushed an eighth of a frame at a time
    // (NR 100 MHz in GNU Radio's buffers comes about half a frame a call) is
    // searched at most three times a frame (where a frame could complete;
    // after a gap, where the next preamble's run can be decided and where its
    // frame ends), not in about half the calls as before (74-90 searches for these
    // 12 frames); the frames are those of the stream pushed whole.
    const uint64_t seed = fresh_seed();
    const ofdm_grid g = stream_grid("lte1.4", 2);
    const recorded_stream s(g, 2, 12, seed);
    const received_stream whole = receive_whole(g, 2, backend::cpu, s);
    ASSERT_EQ(whole.frames.size(), 12u);
    ofdm_stream_receiver rx(g, stream_config(2, backend::cpu));
    const size_t piece = size_t(g.frame_samples()) / 8;
    const size_t hn = rx.H_items_per_frame() * 2 * size_t(g.nt),
                 yn = rx.y_items_per_frame() * 2;
    std::vector<cfloat> H(hn), y(yn);
    std::vector<size_t> starts;
    uint64_t calls = 0;
    for (size_t pos = 0;;) {
        const size_t n = std::min(piece, s.length() - pos);
        push_samples(rx, s, pos, pos + n);
        pos += n;
        if (pos == s.length() && !rx.ended())
            rx.end_stream();
        // A frame a call: no batch to wait for.
        const auto frames = rx.receive(1, H.data(), y.data(), false);
        ++calls;
        for (const auto& f : frames)
            starts.push_back(f.start);
        if (rx.ended() && frames.empty() && !rx.frames_waiting())
            break;
    }
    ASSERT_EQ(starts.size(), whole.frames.size());
    for (size_t f = 0; f < starts.size(); ++f)
        EXPECT_EQ(starts[f], whole.frames[f].start) << "frame " << f;
    const uint64_t searches = rx.timing().searches;
    EXPECT_LE(searches, 3 * starts.size() + 4)
        << calls << " calls; a search a call would be " << calls;
    std::printf("[ counted ] lte1.4 2x2, 12 frames with gaps in %llu pieces of an "
                "eighth of a frame: %llu searches\n",
                (unsigned long long)calls,
                (unsigned long long)searches);
}

TEST(ofdm_stream_receiver,
     frames_already_pushed_come_out_a_frame_a_call_without_new_samples)
{
    // A source that pauses: every frame is in the window, the caller has room
    // for one frame a call and pushes nothing more. frames_waiting() stays
    // true until every whole frame is out (a search stopped at max_frames
    // says so where samples for another frame are there).
    const ofdm_grid g = stream_grid("lte1.4", 2);
    const recorded_stream s(g, 2, 6, fresh_seed());
    for (backend b : { backend::cpu, backend::cuda }) {
        if (b == backend::cuda && !cuda_available())
            continue;
        ofdm_stream_receiver rx(g, stream_config(2, b));
        rx.set_frames_in_flight(b == backend::cuda);
        push_samples(rx, s, 0, s.length());
        const size_t hn = rx.H_items_per_frame() * 2 * size_t(g.nt),
                     yn = rx.y_items_per_frame() * 2;
        std::vector<cfloat> H(hn), y(yn);
        size_t frames = 0, calls = 0;
        do {
            frames += rx.receive(1, H.data(), y.data(), false).size();
        } while (rx.frames_waiting() && ++calls < 100);
        EXPECT_EQ(frames, 6u) << to_string(b);
        EXPECT_LT(calls, 100u) << to_string(b) << ": frames_waiting() never ends";
    }
}

TEST(ofdm_stream_receiver, the_cpu_receiver_waits_for_a_batch_where_cores_are_free)
{
    // The CPU window demodulates a batch's frames side by side: after taking
    // the frames there are, it waits for a batch's samples (a frame a free
    // core, up to eight) before it searches again, rather than searching as
    // each frame completes; the stream's end gives what is left at once.
    const size_t batch = std::min<size_t>(8, detail::parallel_width());
    if (batch < 2)
        GTEST_SKIP() << "one core free: frames are taken as they complete";
    const ofdm_grid g = stream_grid("lte1.4", 2);
    const recorded_stream s(g, 2, 3, fresh_seed());
    ofdm_receiver_config c = stream_config(2, backend::cpu);
    c.max_batch_wait_ms = 1e9; // no timeout here (its own test below)
    ofdm_stream_receiver rx(g, c);
    const size_t frame = size_t(g.frame_samples());
    const size_t first = s.bodies[0] + frame + 100; // frame 0 whole
    auto push = [&](size_t begin, size_t end) { push_samples(rx, s, begin, end); };
    const size_t hn = rx.H_items_per_frame() * 4, yn = rx.y_items_per_frame() * 2;
    std::vector<cfloat> H(hn * 8), y(yn * 8);
    push(0, first);
    ASSERT_EQ(rx.receive(8, H.data(), y.data(), false).size(), 1u);
    EXPECT_GE(rx.samples_wanted(), (batch - 1) * frame)
        << "waits for a batch of frames after the one taken";
    EXPECT_FALSE(rx.frames_waiting());
    EXPECT_TRUE(rx.receive(8, H.data(), y.data(), false).empty());
    // The rest of the stream, then its end: the two frames left come at once.
    push(first, s.length());
    rx.end_stream();
    size_t more = 0;
    do
        more += rx.receive(8, H.data(), y.data(), false).size();
    while (rx.frames_waiting());
    EXPECT_EQ(more, 2u);
    EXPECT_EQ(rx.frames_received(), 3u);
}

TEST(ofdm_stream_receiver, a_batch_is_waited_for_no_longer_than_max_batch_wait)
{
    // Samples at the air rate fill a batch slowly: once max_batch_wait_ms has
    // passed, the receiver takes the frames there are (the latency a batch
    // adds is bounded), and asks only for what its last search stopped for.
    if (std::min<size_t>(8, detail::parallel_width()) < 2)
        GTEST_SKIP() << "one core free: frames are taken as they complete";
    const ofdm_grid g = stream_grid("lte1.4", 2);
    const recorded_stream s(g, 2, 3, fresh_seed());
    ofdm_receiver_config c = stream_config(2, backend::cpu);
    c.max_batch_wait_ms = 20;
    ofdm_stream_receiver rx(g, c);
    const size_t frame = size_t(g.frame_samples());
    auto push = [&](size_t begin, size_t end) { push_samples(rx, s, begin, end); };
    const size_t hn = rx.H_items_per_frame() * 4, yn = rx.y_items_per_frame() * 2;
    std::vector<cfloat> H(hn * 8), y(yn * 8);
    const size_t first = s.bodies[0] + frame + 100, second = s.bodies[1] + frame + 100;
    push(0, first);
    ASSERT_EQ(rx.receive(8, H.data(), y.data(), false).size(), 1u);
    push(first, second); // frame 1 whole, the batch not
    std::this_thread::sleep_for(std::chrono::milliseconds(40));
    EXPECT_TRUE(rx.frames_waiting()) << "the wait is over: the frame there is is due";
    EXPECT_LT(rx.samples_wanted(), frame) << "no longer asks for a batch";
    EXPECT_EQ(rx.receive(8, H.data(), y.data(), false).size(), 1u);
    EXPECT_THROW(
        {
            ofdm_receiver_config bad = c;
            bad.max_batch_wait_ms = -1;
            ofdm_stream_receiver r(g, bad);
        },
        std::invalid_argument);
}

TEST(arrival_pace, judges_the_samples_rate_over_whole_spans)
{
    // A radio at LTE 20 MHz: 4096-sample packets at 30.72 Msps, a packet every
    // 133 us; then a recording at 8x in bursts of two frames' samples.
    using clock = detail::arrival_pace::clock;
    const double rate = 30.72e6;
    detail::arrival_pace pace(rate);
    clock::time_point t{};
    const auto packet = std::chrono::nanoseconds(int64_t(4096 / rate * 1e9));
    for (int k = 0; k < 20; ++k, t += packet)
        pace.note(4096, t);
    EXPECT_EQ(pace.speed(), 0.0) << "less than two spans since the first samples";
    for (int k = 0; k < 200; ++k, t += packet)
        pace.note(4096, t);
    EXPECT_NEAR(pace.speed(), 1.0, 0.1) << "at the air rate";
    const auto burst = std::chrono::nanoseconds(int64_t(2 * 30720 / rate * 1e9 / 8));
    for (int k = 0; k < 100; ++k, t += burst)
        pace.note(2 * 30720, t);
    EXPECT_NEAR(pace.speed(), 8.0, 0.5) << "a recording replayed";
    // A pause: the next span counts it.
    t += std::chrono::milliseconds(50);
    pace.note(4096, t);
    EXPECT_LT(pace.speed(), 1.0) << "below the air rate";
    // A radio's stream behind a receiver that stalls 4 ms every 40 ms: the
    // backlog drains at four packets a push, and one span closes inside the
    // drain (2.8x read alone); the slower of two spans stays at the air rate.
    detail::arrival_pace radio(rate);
    clock::time_point u{};
    double fastest = 0;
    uint64_t backlog = 0;
    for (int k = 0; k < 1200; ++k) {
        u += packet;
        ++backlog;
        if (k % 300 >= 150 && k % 300 < 180)
            continue;
        const uint64_t n = std::min<uint64_t>(backlog, 4);
        radio.note(4096 * n, u);
        backlog -= n;
        fastest = std::max(fastest, radio.speed());
    }
    EXPECT_LT(fastest, 2.0) << "a stream at the air rate, stalls and all";
}

TEST(ofdm_stream_receiver,
     non_finite_samples_drop_or_erase_their_frame_and_the_stream_goes_on)
{
    const ofdm_grid g = stream_grid("lte1.4", 2);
    recorded_stream s(g, 2, 4, fresh_seed());
    const received_stream clean = receive_whole(g, 2, backend::cpu, s);
    ASSERT_EQ(clean.frames.size(), 4u);
    const size_t SS = size_t(g.symbol_samples()), cp = size_t(g.cp_length);
    // Noise before frame 0: NaN and Inf (the search counts them as zero). The
    // noise before it may be short (a random offset): a third and two thirds in.
    const size_t noise = s.bodies[0] - cp; // ASan: bodies[0] - cp - 200 ran off the front
    ASSERT_GE(noise, 3u);
    s.antennas[0][noise / 3] = cfloat(NAN, 0.0f);
    s.antennas[1][2 * noise / 3] = cfloat(INFINITY, 1.0f);
    // Frame 1: a NaN inside its first pilot symbol (no estimate: dropped).
    s.antennas[1][s.bodies[1] + SS + 20] = cfloat(0.0f, NAN);
    // Frame 2: an Inf inside a data symbol (received; the detector erases what it
    // touches).
    s.antennas[0][s.bodies[2] + 2 * SS + 20] = cfloat(INFINITY, 0.0f);
    ofdm_stream_receiver rx(g, stream_config(2, backend::cpu));
    const received_stream got = receive_cut(rx, s, s.length(), 5, 900, 2);
    ASSERT_EQ(got.frames.size(), 3u);
    EXPECT_EQ(got.dropped, 1u);
    EXPECT_EQ(rx.frames_dropped(), 1u);
    EXPECT_EQ(got.frames[0].start, clean.frames[0].start);
    EXPECT_EQ(got.frames[1].start, clean.frames[2].start);
    EXPECT_EQ(got.frames[2].start, clean.frames[3].start);
    const size_t yn = rx.y_items_per_frame() * 2;
    size_t bad = 0;
    for (size_t k = 0; k < yn; ++k)
        bad +=
            !std::isfinite(got.y[yn + k].real()) || !std::isfinite(got.y[yn + k].imag());
    EXPECT_GT(bad, 0u) << "the data symbol with an Inf";
    EXPECT_LE(bad, size_t(g.used_subcarriers) * 2) << "only that symbol";
    // The last frame is exactly the clean stream's.
    EXPECT_TRUE(std::equal(got.y.begin() + ptrdiff_t(2 * yn),
                           got.y.end(),
                           clean.y.begin() + ptrdiff_t(3 * yn)));
}

TEST(ofdm_stream_receiver, bad_configurations_and_calls_are_clear_errors)
{
    const ofdm_grid g = stream_grid("lte1.4", 2);
    EXPECT_THROW(ofdm_stream_receiver(g, stream_config(1, backend::cpu)),
                 std::invalid_argument); // nr < nt
    ofdm_stream_receiver rx(g, stream_config(2, backend::cpu));
    std::vector<cfloat> a(rx.room() + 1), b(rx.room() + 1);
    const cfloat* at[2] = { a.data(), b.data() };
    EXPECT_THROW(rx.push(at, rx.room() + 1), std::invalid_argument);
    std::vector<cfloat> H(rx.H_items_per_frame() * 4), y(rx.y_items_per_frame() * 2);
    EXPECT_THROW(rx.receive(1, H.data(), y.data(), true),
                 std::invalid_argument); // device outputs on the CPU
    for (double speed : { -1.0, double(NAN) }) {
        ofdm_receiver_config bad = stream_config(2, backend::cpu);
        bad.gpu_batch_speed = speed;
        EXPECT_THROW(ofdm_stream_receiver(g, bad), std::invalid_argument) << speed;
    }
    if (!cuda_available()) {
        try {
            ofdm_stream_receiver cuda(g, stream_config(2, backend::cuda));
            FAIL() << "CUDA demanded without a GPU";
        } catch (const std::runtime_error& e) {
            EXPECT_NE(std::string(e.what()).find("CUDA"), std::string::npos) << e.what();
        }
    }
}

TEST(ofdm_stream_receiver_cuda, cuda_equals_cpu_on_fresh_cut_streams)
{
    MIMO_GPU_REQUIRE_CUDA();
    const uint64_t seed = fresh_seed();
    for (int nt : { 2, 4 })
        for (bool device_outputs : { false, true }) {
            const ofdm_grid g =
                nt == 2 ? stream_grid("lte1.4", 2) : stream_grid("nr20", 4);
            const recorded_stream s(g, nt, 4, seed + uint64_t(nt));
            const received_stream cpu = receive_whole(g, nt, backend::cpu, s);
            ofdm_stream_receiver rx(g, stream_config(nt, backend::cuda));
            ASSERT_EQ(rx.active_backend(), backend::cuda);
            const received_stream gpu =
                receive_cut(rx, s, s.length(), seed, 5000, 3, device_outputs);
            ASSERT_EQ(cpu.frames.size(), 4u);
            ASSERT_EQ(gpu.frames.size(), cpu.frames.size());
            for (size_t f = 0; f < cpu.frames.size(); ++f) {
                EXPECT_EQ(gpu.frames[f].start, cpu.frames[f].start) << "frame " << f;
                EXPECT_NEAR(gpu.frames[f].cfo, cpu.frames[f].cfo, 1e-4) << "frame " << f;
                EXPECT_NEAR(gpu.frames[f].n0 / cpu.frames[f].n0, 1.0, 1e-3)
                    << "frame " << f;
            }
            double worst = 0;
            auto compare = [&](const std::vector<cfloat>& a,
                               const std::vector<cfloat>& b,
                               const char* what) {
                ASSERT_EQ(a.size(), b.size()) << what;
                for (size_t i = 0; i < a.size(); ++i) {
                    const double e =
                        std::abs(a[i] - b[i]) / std::max(1.0f, std::abs(a[i]));
                    worst = std::max(worst, e);
                    ASSERT_LT(e, 1e-3) << what << " element " << i;
                }
            };
            compare(cpu.H, gpu.H, "H");
            compare(cpu.y, gpu.y, "y");
            std::printf("[ compared ] %dx%d %s, %s outputs, cut stream: 4 frames, worst "
                        "relative difference %.2e\n",
                        nt,
                        nt,
                        describe(g).c_str(),
                        device_outputs ? "device" : "host",
                        worst);
        }
}

TEST(ofdm_stream_receiver_cuda, a_window_filled_by_several_pushes_gives_every_frame)
{
    MIMO_GPU_REQUIRE_CUDA();
    // LTE 20 MHz: the window holds about 32 frames; 24 frames come in chunks of
    // up to two frames, up to six chunks before each receive().
    const uint64_t seed = fresh_seed();
    const ofdm_grid g = stream_grid("lte20", 2);
    const recorded_stream s(g, 2, 24, seed);
    const received_stream cpu = receive_whole(g, 2, backend::cpu, s);
    ASSERT_EQ(cpu.frames.size(), 24u);
    for (bool device_input : { false, true }) {
        ofdm_stream_receiver rx(g, stream_config(2, backend::cuda));
        const received_stream gpu = receive_gathered(
            rx, s, seed + 1, 2 * size_t(g.frame_samples()), 6, 8, device_input);
        ASSERT_EQ(gpu.frames.size(), cpu.frames.size())
            << (device_input ? "device" : "host") << " input";
        for (size_t f = 0; f < cpu.frames.size(); ++f)
            EXPECT_EQ(gpu.frames[f].start, cpu.frames[f].start) << "frame " << f;
        double worst = 0;
        for (size_t i = 0; i < cpu.y.size(); ++i)
            worst = std::max(worst,
                             double(std::abs(gpu.y[i] - cpu.y[i]) /
                                    std::max(1.0f, std::abs(cpu.y[i]))));
        EXPECT_LT(worst, 1e-3);
        std::printf("[ compared ] lte20 2x2, %s input, several pushes a receive: 24 "
                    "frames, worst relative difference of y %.2e\n",
                    device_input ? "device" : "host",
                    worst);
    }
}

TEST(ofdm_stream_receiver_cuda, frames_in_flight_are_the_frames_received_within_the_call)
{
    // The same stream, cut at random, through a receiver that hands frames on
    // in the call they are found and one that leaves them in flight to the
    // next call: the same frames (a frame with a NaN pilot dropped by both),
    // the same H and y, host and device outputs, rooms of 0 to 3 frames (a
    // call with less room than frames in flight hands on what fits).
    MIMO_GPU_REQUIRE_CUDA();
    const uint64_t seed = fresh_seed();
    for (int nt : { 2, 4 })
        for (bool device_outputs : { false, true }) {
            const ofdm_grid g =
                nt == 2 ? stream_grid("lte1.4", 2) : stream_grid("nr20", 4);
            recorded_stream s(g, nt, 6, seed + uint64_t(nt));
            s.antennas[0][s.bodies[2] + size_t(g.symbol_samples()) + 20] =
                cfloat(NAN, 0.0f); // frame 2's first pilot symbol
            ofdm_stream_receiver within(g, stream_config(nt, backend::cuda));
            const received_stream now =
                receive_cut(within, s, s.length(), seed, 5000, 3, device_outputs);
            ofdm_stream_receiver ahead(g, stream_config(nt, backend::cuda));
            ahead.set_frames_in_flight(true);
            const received_stream later =
                receive_cut(ahead, s, s.length(), seed + 7, 5000, 3, device_outputs);
            ASSERT_EQ(now.frames.size(), 5u);
            EXPECT_EQ(now.dropped, 1u);
            ASSERT_EQ(later.frames.size(), now.frames.size());
            EXPECT_EQ(later.dropped, 1u);
            EXPECT_EQ(later.outside, now.outside);
            EXPECT_EQ(ahead.frames_in_flight(), 0u);
            EXPECT_FALSE(ahead.frames_waiting());
            for (size_t f = 0; f < now.frames.size(); ++f) {
                EXPECT_EQ(later.frames[f].start, now.frames[f].start) << "frame " << f;
                EXPECT_EQ(later.frames[f].cfo, now.frames[f].cfo) << "frame " << f;
                EXPECT_NEAR(later.frames[f].n0 / now.frames[f].n0, 1.0, 1e-5)
                    << "frame " << f;
            }
            const double worst = worst_relative_difference(now, later);
            EXPECT_LT(worst, 1e-5);
            std::printf("[ compared ] %dx%d %s, %s outputs: 5 frames in flight and "
                        "within the call, worst relative difference %.2e\n",
                        nt,
                        nt,
                        describe(g).c_str(),
                        device_outputs ? "device" : "host",
                        worst);
        }
}

TEST(ofdm_stream_receiver_cuda, frames_in_flight_across_the_ring_s_wrap)
{
    // LTE 20 MHz: frames enough to wrap the ring (~32 frames with room for
    // batches) twice, pushed in chunks of up to two frames, up to six before
    // each receive(), a frame or two of room a call: pushes land on ring slots
    // near frames still in flight. Then in batches (whatever the pace) with
    // up to 18 frames of room a call: a batch gathered beside one in flight.
    MIMO_GPU_REQUIRE_CUDA();
    const uint64_t seed = fresh_seed();
    const ofdm_grid g = stream_grid("lte20", 2);
    ofdm_stream_receiver within(g, stream_config(2, backend::cuda));
    const int frames = int(2 * within.room() / size_t(g.frame_samples())) + 4;
    ofdm_receiver_config batched_c = stream_config(2, backend::cuda);
    batched_c.gpu_batch_speed = 0;
    batched_c.max_batch_wait_ms = 1e9;
    ofdm_stream_receiver batched(g, batched_c);
    batched.set_frames_in_flight(true);
    ASSERT_EQ(batched.room(), within.room()) << "the same ring";
    const recorded_stream s(g, 2, frames, seed);
    ASSERT_LT(within.room(), s.length() / 2) << "the stream wraps the ring twice";
    const size_t chunk = 2 * size_t(g.frame_samples());
    const received_stream now = receive_gathered(within, s, seed + 1, chunk, 6, 2, false);
    ofdm_stream_receiver ahead(g, stream_config(2, backend::cuda));
    ahead.set_frames_in_flight(true);
    const received_stream later =
        receive_gathered(ahead, s, seed + 1, chunk, 6, 2, false);
    ASSERT_EQ(now.frames.size(), size_t(frames));
    ASSERT_EQ(later.frames.size(), now.frames.size());
    for (size_t f = 0; f < now.frames.size(); ++f)
        EXPECT_EQ(later.frames[f].start, now.frames[f].start) << "frame " << f;
    const double worst = worst_relative_difference(now, later);
    EXPECT_LT(worst, 1e-5);
    EXPECT_EQ(later.outside, now.outside);
    const received_stream many =
        receive_gathered(batched, s, seed + 1, chunk, 6, 18, false);
    ASSERT_EQ(many.frames.size(), now.frames.size());
    for (size_t f = 0; f < now.frames.size(); ++f)
        EXPECT_EQ(many.frames[f].start, now.frames[f].start) << "frame " << f;
    const double worst_batched = worst_relative_difference(now, many);
    EXPECT_LT(worst_batched, 1e-5);
    EXPECT_EQ(many.outside, now.outside);
    std::printf("[ compared ] lte20 2x2, %d frames across the ring's wrap, in flight "
                "and within the call: worst relative difference %.2e; in %llu "
                "batches: %.2e\n",
                frames,
                worst,
                (unsigned long long)batched.timing().batches,
                worst_batched);
}

TEST(ofdm_stream_receiver_cuda, a_fast_stream_is_searched_and_demodulated_in_batches)
{
    // The GPU's receiver waits for a batch of short frames (up to 8) while the
    // samples come ahead of the air rate (gpu_batch_speed; 0 here: whatever
    // the pace, so that the test does not depend on the machine's speed), and
    // takes each frame as it completes otherwise (infinity). The same frames,
    // H and y either way, in flight as the block runs it, host and device
    // outputs; far fewer searches batched.
    MIMO_GPU_REQUIRE_CUDA();
    const uint64_t seed = fresh_seed();
    const ofdm_grid g = stream_grid("lte1.4", 2);
    const recorded_stream s(g, 2, 24, seed);
    for (bool device_outputs : { false, true }) {
        ofdm_receiver_config one_c = stream_config(2, backend::cuda);
        one_c.gpu_batch_speed = INFINITY;
        ofdm_stream_receiver one(g, one_c);
        one.set_frames_in_flight(true);
        const size_t chunk = size_t(g.frame_samples()) / 2;
        const received_stream single =
            receive_cut(one, s, s.length(), seed, chunk, 12, device_outputs);
        ofdm_receiver_config batched_c = one_c;
        batched_c.gpu_batch_speed = 0;
        batched_c.max_batch_wait_ms = 1e9; // no timeout here
        ofdm_stream_receiver batched(g, batched_c);
        batched.set_frames_in_flight(true);
        const received_stream many =
            receive_cut(batched, s, s.length(), seed, chunk, 12, device_outputs);
        ASSERT_EQ(single.frames.size(), 24u);
        ASSERT_EQ(many.frames.size(), single.frames.size());
        for (size_t f = 0; f < single.frames.size(); ++f) {
            EXPECT_EQ(many.frames[f].start, single.frames[f].start) << "frame " << f;
            EXPECT_EQ(many.frames[f].cfo, single.frames[f].cfo) << "frame " << f;
        }
        const double worst = worst_relative_difference(single, many);
        EXPECT_LT(worst, 1e-5);
        EXPECT_EQ(many.outside, single.outside);
        const uint64_t searched_one = one.timing().searches,
                       searched_batched = batched.timing().searches;
        EXPECT_GE(searched_one, 12u) << "a search as each frame completes";
        EXPECT_LE(searched_batched, searched_one / 2) << "batches of up to 8 frames";
        std::printf("[ compared ] lte1.4 2x2, %s outputs, 24 frames: %llu searches "
                    "batched against %llu a frame at a time, worst relative "
                    "difference %.2e\n",
                    device_outputs ? "device" : "host",
                    (unsigned long long)searched_batched,
                    (unsigned long long)searched_one,
                    worst);
    }
}

TEST(ofdm_stream_receiver_cuda,
     the_callers_samples_may_be_overwritten_once_receive_returns)
{
    // The caller's memory is free when receive() returns (a GNU Radio block
    // then consumes its input, and the writer reuses it): samples read in
    // place (page-locked) have landed by then; pageable ones were staged on
    // the host and may still cross PCIe. Each push here comes from one
    // scratch buffer poisoned with NaN after every call: a copy reading it
    // late would drop or erase frames. The frames, H and y equal those of a
    // receiver fed from the recording itself; staged samples wait for no
    // transfer in calls that do not search (batches of short frames).
    MIMO_GPU_REQUIRE_CUDA();
    const uint64_t seed = fresh_seed();
    const ofdm_grid g = stream_grid("lte1.4", 2);
    const int nr = 2;
    const recorded_stream s(g, nr, 20, seed);
    ofdm_receiver_config c = stream_config(nr, backend::cuda);
    c.gpu_batch_speed = 0; // batches whatever the pace
    c.max_batch_wait_ms = 1e9;
    ofdm_stream_receiver reference(g, c);
    reference.set_frames_in_flight(true);
    const size_t chunk = size_t(g.frame_samples()) / 3;
    const received_stream expected =
        receive_cut(reference, s, s.length(), seed, chunk, 12);
    ASSERT_EQ(expected.frames.size(), 20u);
    for (bool pinned : { false, true }) {
        ofdm_stream_receiver rx(g, c);
        rx.set_frames_in_flight(true);
        std::vector<std::vector<cfloat>> pageable(nr, std::vector<cfloat>(chunk));
        std::vector<cfloat*> scratch(nr);
        for (int r = 0; r < nr; ++r)
            scratch[size_t(r)] =
                pinned ? static_cast<cfloat*>(allocate_pinned(chunk * sizeof(cfloat)))
                       : pageable[size_t(r)].data();
        // The same cuts as the reference's (the same seed).
        const received_stream got =
            receive_cut(rx, s, s.length(), seed, chunk, 12, false, scratch);
        if (pinned)
            for (cfloat* p : scratch)
                free_pinned(p);
        EXPECT_EQ(rx.frames_dropped(), 0u);
        ASSERT_EQ(got.frames.size(), expected.frames.size());
        for (size_t f = 0; f < got.frames.size(); ++f)
            EXPECT_EQ(got.frames[f].start, expected.frames[f].start) << "frame " << f;
        EXPECT_LT(worst_relative_difference(expected, got), 1e-5);
        const auto t = rx.timing();
        if (pinned)
            EXPECT_EQ(t.lands, t.pushes) << "read in place: every call waits";
        else {
            EXPECT_LT(t.lands, t.pushes) << "staged: only searches wait";
            EXPECT_LE(t.lands, t.searches + 1) << "a wait a search, and the end";
        }
        std::printf("[ compared ] %s samples: %llu pushes, %llu waits for them to "
                    "land, %llu searches\n",
                    pinned ? "page-locked" : "pageable",
                    (unsigned long long)t.pushes,
                    (unsigned long long)t.lands,
                    (unsigned long long)t.searches);
    }
}

TEST(ofdm_stream_receiver_cuda, frames_in_flight_wait_for_the_next_call_and_for_room)
{
    MIMO_GPU_REQUIRE_CUDA();
    const ofdm_grid g = stream_grid("lte1.4", 2);
    const recorded_stream s(g, 2, 3, fresh_seed());
    ofdm_stream_receiver rx(g, stream_config(2, backend::cuda));
    rx.set_frames_in_flight(true);
    const size_t hn = rx.H_items_per_frame() * 4, yn = rx.y_items_per_frame() * 2;
    std::vector<cfloat> H(hn * 8), y(yn * 8);
    push_samples(rx, s, 0, s.length());
    rx.end_stream();
    EXPECT_TRUE(rx.receive(8, H.data(), y.data(), false).empty())
        << "the frames found are in flight";
    EXPECT_EQ(rx.frames_in_flight(), 3u);
    EXPECT_TRUE(rx.frames_waiting());
    EXPECT_THROW(rx.set_frames_in_flight(false), std::logic_error);
    EXPECT_TRUE(rx.receive(0, H.data(), y.data(), false).empty()) << "no room";
    // Handed on without a search (a caller with nothing to overlap them with).
    ASSERT_EQ(rx.hand_on_frames_in_flight(1, H.data(), y.data(), false).size(), 1u);
    EXPECT_EQ(rx.frames_in_flight(), 2u);
    for (size_t left = 2; left > 0; --left) { // a frame of room a call
        const auto got = rx.receive(1, H.data(), y.data(), false);
        ASSERT_EQ(got.size(), 1u);
        EXPECT_EQ(rx.frames_in_flight(), left - 1);
        EXPECT_EQ(rx.frames_received(), 4 - left);
    }
    EXPECT_TRUE(rx.hand_on_frames_in_flight(8, H.data(), y.data(), false).empty());
    // The call without room left the search to go on: it finds nothing more.
    EXPECT_TRUE(rx.receive(8, H.data(), y.data(), false).empty());
    EXPECT_FALSE(rx.frames_waiting());
    EXPECT_EQ(rx.frames_received(), 3u);
    // A receiver destroyed with frames in flight waits for them.
    {
        ofdm_stream_receiver gone(g, stream_config(2, backend::cuda));
        gone.set_frames_in_flight(true);
        push_samples(gone, s, 0, s.length());
        gone.end_stream();
        EXPECT_TRUE(gone.receive(8, H.data(), y.data(), false).empty());
        EXPECT_EQ(gone.frames_in_flight(), 3u);
    }
}

TEST(ofdm_stream_receiver, a_cpu_receiver_hands_frames_on_within_the_call)
{
    const ofdm_grid g = stream_grid("lte1.4", 2);
    const recorded_stream s(g, 2, 2, fresh_seed());
    ofdm_stream_receiver rx(g, stream_config(2, backend::cpu));
    rx.set_frames_in_flight(true); // nothing to overlap on the CPU: ignored
    const size_t hn = rx.H_items_per_frame() * 4, yn = rx.y_items_per_frame() * 2;
    std::vector<cfloat> H(hn * 8), y(yn * 8);
    push_samples(rx, s, 0, s.length());
    rx.end_stream();
    size_t got = 0;
    do
        got += rx.receive(8, H.data(), y.data(), false).size();
    while (rx.frames_waiting());
    EXPECT_EQ(got, 2u);
    EXPECT_EQ(rx.frames_in_flight(), 0u);
}

TEST(frame_search_walk, a_list_of_runs_cut_short_is_searched_again_from_the_last_frame)
{
    // The GPU search decides a batch of runs and marks where the next starts.
    // A frame's run, then runs inside that frame (fragments of its metric) and
    // the mark, also inside it: the walk takes the frame and stops there, more
    // to come, instead of taking every run as looked at and going on from the
    // end of the positions searched (which lost the frames after: 20 of 24 in
    // the CUDA window test above with MIMO_GPU_TEST_SEED=11162936203415888174).
    const ofdm_grid g = ofdm_grid::preset("lte20");
    ofdm_receiver_config c;
    c.nr = 2;
    const detail::sync_rule rule(g, c, 0);
    std::vector<detail::run_decision> runs;
    auto run = [&](size_t start, size_t frame_start, bool decided, bool beyond) {
        detail::run_decision r;
        r.start = start;
        r.last = start + 100;
        r.decided = decided;
        r.beyond = beyond;
        r.sync.found = !beyond;
        r.sync.frame_start = frame_start;
        runs.push_back(r);
    };
    const size_t frame = 270000, samples = 500000,
                 positions_end = samples - size_t(g.fft_size) + 1;
    auto walk = [&](std::vector<detail::run_decision>& list, size_t from) {
        return detail::walk_runs(
            list,
            [&](size_t k) { return list[k].decided; },
            rule,
            samples,
            frame - 2000,
            positions_end,
            from,
            2);
    };
    run(frame - 200, frame, true, false);
    for (size_t k = 1; k <= 4; ++k) // inside the frame: before the walk's next position
        run(frame + 2000 * k, frame + 2000 * k, true, false);
    run(frame + 12000, 0, false, true);
    const detail::walk_result w = walk(runs, frame - 1000);
    ASSERT_EQ(w.frames.size(), 1u);
    EXPECT_EQ(w.frames[0].frame_start, frame);
    EXPECT_TRUE(w.more) << "runs follow that were not listed";
    EXPECT_EQ(w.next_from, rule.after(frame)) << "not the end of the positions searched";
    EXPECT_EQ(w.needs, 0u);
    // A batch whose runs all lie inside the frame before (found by an earlier
    // search): nothing taken, more to come, the position unchanged (the GPU
    // search then decides the next batch rather than listing this one again).
    std::vector<detail::run_decision> inside(runs.begin() + 1, runs.end());
    const detail::walk_result stalled = walk(inside, rule.after(frame));
    EXPECT_TRUE(stalled.frames.empty());
    EXPECT_TRUE(stalled.more);
    EXPECT_EQ(stalled.next_from, rule.after(frame));
    // The same list without the mark (every run listed): on to the end.
    runs.pop_back();
    const detail::walk_result all = walk(runs, frame - 1000);
    EXPECT_FALSE(all.more);
    EXPECT_EQ(all.next_from, positions_end);
}

TEST(frame_search_metric, vector_terms_equal_the_scalar_terms_to_the_bit)
{
    // The search's per-sample terms four samples at a time (AVX2, where the
    // processor has it) against the scalar loop, on random samples with
    // non-finite, signed-zero, huge and subnormal parts among them, every
    // antenna count the search unrolls and one it does not, ranges that start
    // and end off a multiple of four and products that stop before the end.
    // Where the processor lacks AVX2 both calls run the scalar loop.
    std::mt19937_64 rng(fresh_seed());
    std::normal_distribution<float> gauss(0.0f, 1.0f);
    const float specials[] = { NAN,  INFINITY, -INFINITY, -0.0f,
                               0.0f, 3e38f,    1e-42f,    -1e-39f };
    const double untouched = -12345.0;
    for (int trial = 0; trial < 200; ++trial) {
        const int nr = 1 + int(rng() % 5), L = 1 + int(rng() % 64);
        const size_t samples = 65 + rng() % 512; // more than L
        std::vector<cfloat> x(samples * size_t(nr));
        for (cfloat& v : x) {
            v = cfloat(gauss(rng), gauss(rng));
            if (rng() % 13 == 0)
                v.real(specials[rng() % 8]);
            if (rng() % 13 == 0)
                v.imag(specials[rng() % 8]);
        }
        const size_t end = size_t(L) + 1 + rng() % (samples - size_t(L)),
                     begin = rng() % end;
        const size_t terms = std::min(end - size_t(L), begin + rng() % (end - begin + 4));
        std::vector<double> cr[2], ci[2], e[2];
        for (int v = 0; v < 2; ++v) {
            cr[v].assign(samples, untouched);
            ci[v].assign(samples, untouched);
            e[v].assign(samples, untouched);
            detail::metric_sample_terms(x.data(),
                                        nr,
                                        L,
                                        begin,
                                        end,
                                        terms,
                                        cr[v].data(),
                                        ci[v].data(),
                                        e[v].data(),
                                        v == 0);
        }
        for (size_t m = 0; m < samples; ++m) {
            const bool energy = m >= begin && m < end, product = energy && m < terms;
            ASSERT_EQ(std::memcmp(&e[0][m], &e[1][m], sizeof(double)), 0)
                << "trial " << trial << " nr " << nr << " energy at " << m;
            ASSERT_EQ(std::memcmp(&cr[0][m], &cr[1][m], sizeof(double)), 0)
                << "trial " << trial << " nr " << nr << " product at " << m;
            ASSERT_EQ(std::memcmp(&ci[0][m], &ci[1][m], sizeof(double)), 0)
                << "trial " << trial << " nr " << nr << " product at " << m;
            EXPECT_EQ(e[1][m] != untouched, energy) << m;
            EXPECT_EQ(cr[1][m] != untouched, product) << m;
            if (energy) {
                ASSERT_TRUE(std::isfinite(e[1][m])) << "non-finite samples count as zero";
            }
        }
    }
}

TEST(frame_search_memory,
     a_decision_made_before_the_rest_of_its_frame_arrives_is_taken_again)
{
    // A stream's searches keep their decisions: the search that found a frame
    // the samples cut remembers its run's decision (equal to the one a search
    // of the whole frame makes), and the next search takes it as it is (a
    // marked CFO comes back) instead of running the matched filter again.
    const ofdm_grid g = stream_grid("lte1.4", 2);
    const int nr = 2;
    const recorded_stream s(g, nr, 2, fresh_seed());
    std::vector<cfloat> rx(s.length() * size_t(nr));
    for (size_t n = 0; n < s.length(); ++n)
        for (int r = 0; r < nr; ++r)
            rx[n * size_t(nr) + size_t(r)] = s.antennas[size_t(r)][n];
    const ofdm_receiver_config c = stream_config(nr, backend::cpu);
    const detail::frame_search search(g, c, g.cp_length / 8);
    const size_t cut = s.bodies[0] + size_t(g.frame_samples()) / 2; // inside frame 0
    std::vector<detail::run_decision> memory;
    const detail::walk_result first =
        search.find(rx.data(), cut, 0, 0, 4, false, 0, &memory);
    ASSERT_TRUE(first.cut.found) << "the first frame is cut by the samples";
    EXPECT_TRUE(first.frames.empty());
    ASSERT_EQ(memory.size(), 1u);
    const detail::walk_result whole = search.find(rx.data(), s.length(), 0, 0, 4, true);
    ASSERT_EQ(whole.frames.size(), 2u);
    EXPECT_EQ(memory[0].sync.frame_start, whole.frames[0].frame_start);
    EXPECT_EQ(memory[0].sync.cfo, whole.frames[0].cfo);
    EXPECT_EQ(memory[0].sync.metric, whole.frames[0].metric);

    memory[0].sync.cfo = 0.4375f; // a mark: taken as it is, not decided again
    const detail::walk_result next =
        search.find(rx.data(), s.length(), 0, 0, 4, true, 0, &memory);
    ASSERT_EQ(next.frames.size(), 2u);
    EXPECT_EQ(next.frames[0].cfo, 0.4375f);
    EXPECT_EQ(next.frames[0].frame_start, whole.frames[0].frame_start);
    EXPECT_EQ(next.frames[1].cfo, whole.frames[1].cfo) << "the second frame decided here";
    ASSERT_EQ(memory.size(), 2u) << "both decisions kept for a search after this one";

    // Stream positions: the same samples at another origin find the same run.
    std::vector<detail::run_decision> shifted = memory;
    const size_t origin = 4096;
    std::vector<cfloat> later(origin * size_t(nr), cfloat(0, 0));
    later.insert(later.end(), rx.begin(), rx.end());
    for (auto& run : shifted) {
        run.start += origin;
        run.sync.frame_start += origin;
    }
    const detail::walk_result moved = search.find(
        later.data() + origin * size_t(nr), s.length(), 0, 0, 4, true, origin, &shifted);
    ASSERT_EQ(moved.frames.size(), 2u);
    EXPECT_EQ(moved.frames[0].cfo, 0.4375f);
    EXPECT_EQ(moved.frames[0].frame_start, whole.frames[0].frame_start);
}
