#include "bench_front_end.h"

#include "bench_util.h"

#include <mimo_gpu/multipath_channel.h>
#include <mimo_gpu/ofdm_receiver.h>
#include <mimo_gpu/ofdm_transmitter.h>

#include <random>

namespace mimo_gpu_apps {

using namespace mimo_gpu;

namespace {

constexpr double k_nr100_elements_per_s =
    3276.0 * 28.0 * 1e3; // NR 100 MHz, 30 kHz: 3276 x 28 per ms

struct workload {
    const char* preset;
    int slots, data_symbols; // about 1 ms of air time
};

/// `frames` frames back to back through the channel, and where each was found.
struct capture {
    std::vector<cfloat> rx;
    size_t samples = 0;
    std::vector<sync_result> syncs;
};

capture
make_capture(const ofdm_grid& g, int nr, int frames, uint64_t seed, ofdm_receiver& finder)
{
    ofdm_transmitter tx(g);
    multipath_config mc;
    mc.nr = nr;
    mc.nt = g.nt;
    mc.profile = delay_profile::eva;
    mc.sample_rate = g.sample_rate;
    mc.cfo = 0.2 * g.subcarrier_spacing();
    mc.timing_offset = 100;
    mc.snr_db = 25;
    mc.seed = seed;
    multipath_channel ch(mc);
    capture c;
    std::mt19937_64 rng(seed);
    std::vector<uint8_t> bits(g.frame_bits());
    std::vector<cfloat> t(size_t(g.frame_samples()) * g.nt),
        r(ch.output_samples(size_t(g.frame_samples())) * nr);
    for (int f = 0; f < frames; ++f) {
        for (auto& b : bits)
            b = uint8_t(rng() & 1);
        tx.modulate(bits.data(), t.data());
        ch.run(t.data(), size_t(g.frame_samples()), r.data());
        c.rx.insert(c.rx.end(), r.begin(), r.end());
    }
    c.samples = c.rx.size() / size_t(nr);
    size_t from = 0;
    for (int f = 0; f < frames; ++f) {
        const sync_result s = finder.synchronize(c.rx.data(), c.samples, from);
        if (!s.found || !s.complete)
            throw std::runtime_error("front-end bench: frame " + std::to_string(f) +
                                     " not found");
        c.syncs.push_back(s);
        from = s.frame_start + size_t(g.frame_samples()) - size_t(g.cp_length);
    }
    return c;
}

} // namespace

std::vector<front_end_row>
bench_front_end(backend b, int trials, uint64_t seed, double h2d_bytes_per_s)
{
    std::vector<front_end_row> rows;
    const workload loads[] = { { "lte20", 2, 6 }, { "nr100", 2, 13 } };
    for (const workload& w : loads) {
        ofdm_grid g = ofdm_grid::preset(w.preset);
        g.nt = 4;
        g.slots = w.slots;
        g.data_symbols = w.data_symbols;
        const int nr = 4, K = g.frame_symbols();
        front_end_row base;
        base.preset = w.preset;
        base.nr = nr;
        base.nt = g.nt;
        base.frame_air_ms = double(g.frame_samples()) / g.sample_rate * 1e3;
        base.elements_per_frame = size_t(K) * g.used_subcarriers;
        // I/O bytes of one frame: the antenna samples in, y and H (hold) out.
        const double bytes = double(g.frame_samples()) * nr * 8 +
                             double(g.data_elements()) * nr * 8 +
                             double(g.slots) * g.used_subcarriers * nr * g.nt * 8;
        ofdm_receiver_config rc;
        rc.nr = nr;
        rc.requested = backend::cpu;
        ofdm_receiver cpu(g, rc);
        std::fprintf(
            stderr, "  front end %s 4x4 (%s) ...\n", w.preset, describe(g).c_str());
        {
            const capture c = make_capture(g, nr, 4, seed, cpu);
            front_end_row r = base;
            r.backend = "cpu";
            r.path = "sync (CPU)";
            r.frames = 1;
            r.ms_per_frame = host_median_ms(
                trials, [&](int) { cpu.synchronize(c.rx.data(), c.samples); });
            rows.push_back(r);
            r.path = "host to host";
            r.frames = 4;
            r.ms_per_frame =
                host_median_ms(
                    std::max(3, trials / 4),
                    [&](int) { cpu.receive_frames(c.rx.data(), c.samples, c.syncs); }) /
                r.frames;
            rows.push_back(r);
        }
#ifdef MIMO_GPU_HAVE_CUDA
        if (b == backend::cuda) {
            const int F = 16;
            const capture c = make_capture(g, nr, F, seed + 1, cpu);
            rc.requested = backend::cuda;
            ofdm_receiver gpu(g, rc);
            front_end_row r = base;
            r.backend = "cuda";
            r.frames = F;
            r.path = "host to host, pageable";
            r.floor_ms_per_frame =
                h2d_bytes_per_s > 0 ? bytes / h2d_bytes_per_s * 1e3 : -1;
            r.ms_per_frame =
                host_median_ms(
                    trials,
                    [&](int) { gpu.receive_frames(c.rx.data(), c.samples, c.syncs); }) /
                F;
            rows.push_back(r);
            cuda_array<cfloat> d_rx(c.rx.size(), false);
            BENCH_CHECK(cudaMemcpy(d_rx.p,
                                   c.rx.data(),
                                   c.rx.size() * sizeof(cfloat),
                                   cudaMemcpyHostToDevice));
            cudaStream_t st;
            BENCH_CHECK(cudaStreamCreate(&st));
            {
                // Host to host from and to page-locked memory (as a GPU block's
                // buffers would be): samples in by DMA, the device path, H, y and
                // N0 out by DMA, no per-call allocation.
                cuda_array<cfloat> h_rx(c.rx.size(), true);
                std::copy(c.rx.begin(), c.rx.end(), h_rx.p);
                const size_t yn = g.data_elements() * nr * F,
                             hn = size_t(g.slots) * g.used_subcarriers * nr * g.nt * F;
                cuda_array<cfloat> h_y(yn, true), h_H(hn, true);
                cuda_array<float> h_n0(F, true);
                r.path = "host to host, pinned";
                r.ms_per_frame =
                    host_median_ms(
                        trials,
                        [&](int) {
                            BENCH_CHECK(cudaMemcpyAsync(d_rx.p,
                                                        h_rx.p,
                                                        c.rx.size() * sizeof(cfloat),
                                                        cudaMemcpyHostToDevice,
                                                        st));
                            const auto out =
                                gpu.receive_device(d_rx.p,
                                                   c.samples,
                                                   c.syncs,
                                                   reinterpret_cast<cuda_stream_t>(st));
                            BENCH_CHECK(cudaMemcpyAsync(h_y.p,
                                                        out.y,
                                                        yn * sizeof(cfloat),
                                                        cudaMemcpyDeviceToHost,
                                                        st));
                            BENCH_CHECK(cudaMemcpyAsync(h_H.p,
                                                        out.H,
                                                        hn * sizeof(cfloat),
                                                        cudaMemcpyDeviceToHost,
                                                        st));
                            BENCH_CHECK(cudaMemcpyAsync(h_n0.p,
                                                        out.n0,
                                                        F * sizeof(float),
                                                        cudaMemcpyDeviceToHost,
                                                        st));
                            BENCH_CHECK(cudaStreamSynchronize(st));
                        }) /
                    F;
                rows.push_back(r);
                // The same with the synchronisation on the GPU too: every frame found
                // on the device (metric and matched filter there, decisions here).
                r.path = "host to host, pinned, GPU sync";
                std::vector<sync_result> found;
                r.ms_per_frame =
                    host_median_ms(
                        trials,
                        [&](int) {
                            BENCH_CHECK(cudaMemcpyAsync(d_rx.p,
                                                        h_rx.p,
                                                        c.rx.size() * sizeof(cfloat),
                                                        cudaMemcpyHostToDevice,
                                                        st));
                            found.clear();
                            size_t from = 0;
                            for (int f = 0; f < F; ++f) {
                                const sync_result s = gpu.synchronize_device(
                                    d_rx.p,
                                    c.samples,
                                    from,
                                    reinterpret_cast<cuda_stream_t>(st));
                                if (!s.found || !s.complete)
                                    throw std::runtime_error(
                                        "front-end bench: GPU sync lost frame " +
                                        std::to_string(f));
                                found.push_back(s);
                                from = s.frame_start + size_t(g.frame_samples()) -
                                       size_t(g.cp_length);
                            }
                            const auto out =
                                gpu.receive_device(d_rx.p,
                                                   c.samples,
                                                   found,
                                                   reinterpret_cast<cuda_stream_t>(st));
                            BENCH_CHECK(cudaMemcpyAsync(h_y.p,
                                                        out.y,
                                                        yn * sizeof(cfloat),
                                                        cudaMemcpyDeviceToHost,
                                                        st));
                            BENCH_CHECK(cudaMemcpyAsync(h_H.p,
                                                        out.H,
                                                        hn * sizeof(cfloat),
                                                        cudaMemcpyDeviceToHost,
                                                        st));
                            BENCH_CHECK(cudaMemcpyAsync(h_n0.p,
                                                        out.n0,
                                                        F * sizeof(float),
                                                        cudaMemcpyDeviceToHost,
                                                        st));
                            BENCH_CHECK(cudaStreamSynchronize(st));
                        }) /
                    F;
                rows.push_back(r);
            }
            cudaEvent_t e0, e1;
            BENCH_CHECK(cudaEventCreate(&e0));
            BENCH_CHECK(cudaEventCreate(&e1));
            std::vector<double> ms;
            for (int t = 0; t <= trials; ++t) {
                BENCH_CHECK(cudaEventRecord(e0, st));
                gpu.receive_device(
                    d_rx.p, c.samples, c.syncs, reinterpret_cast<cuda_stream_t>(st));
                BENCH_CHECK(cudaEventRecord(e1, st));
                BENCH_CHECK(cudaEventSynchronize(e1));
                float v = 0;
                BENCH_CHECK(cudaEventElapsedTime(&v, e0, e1));
                if (t > 0)
                    ms.push_back(v);
            }
            cudaEventDestroy(e0);
            cudaEventDestroy(e1);
            cudaStreamDestroy(st);
            r.path = "device to device";
            r.ms_per_frame = median(ms) / F;
            r.floor_ms_per_frame =
                bytes / 3.0e12 * 1e3; // the I/O once through HBM (about 3 TB/s)
            rows.push_back(r);
        }
#else
        (void)h2d_bytes_per_s;
#endif
    }
    return rows;
}

void print_front_end_table(const std::vector<front_end_row>& rows,
                           const std::string& device)
{
    std::printf("\nOFDM receiver front end (CFO, CP, FFT, LS pilots, interpolation, N0, "
                "H/y out), 4x4, %s; "
                "requirement: NR 100 MHz 4x4 = 3276 x 28 RE per ms = 91.7 M RE/s\n",
                device.c_str());
    std::printf("%-6s %-5s %-31s %6s | %10s %9s %11s %9s | %10s %9s\n",
                "grid",
                "back",
                "path",
                "frames",
                "ms/frame",
                "air ms",
                "M RE/s",
                "x NR100",
                "floor ms",
                "x floor");
    for (const front_end_row& r : rows) {
        const double res = r.ms_per_frame > 0 ? double(r.elements_per_frame) /
                                                    (r.ms_per_frame * 1e-3) / 1e6
                                              : -1;
        std::printf(
            "%-6s %-5s %-31s %6d | %10s %9.3f %11s %9s | %10s %9s\n",
            r.preset.c_str(),
            r.backend.c_str(),
            r.path.c_str(),
            r.frames,
            fmt(r.ms_per_frame, "%.4f").c_str(),
            r.frame_air_ms,
            fmt(res, "%.1f").c_str(),
            fmt(res > 0 ? res * 1e6 / k_nr100_elements_per_s : -1, "%.2f").c_str(),
            fmt(r.floor_ms_per_frame, "%.4f").c_str(),
            fmt(r.floor_ms_per_frame > 0 ? r.ms_per_frame / r.floor_ms_per_frame : -1,
                "%.2f")
                .c_str());
    }
}

void write_front_end_json(json_writer& j, const std::vector<front_end_row>& rows)
{
    j.begin_array("front_end");
    for (const front_end_row& r : rows) {
        j.begin_object();
        j.value("grid", r.preset).value("backend", r.backend).value("path", r.path);
        j.value("nr", r.nr).value("nt", r.nt).value("frames_per_call", r.frames);
        j.value("frame_air_ms", r.frame_air_ms)
            .value("elements_per_frame", (unsigned long)r.elements_per_frame);
        j.value("ms_per_frame", r.ms_per_frame)
            .value("floor_ms_per_frame", r.floor_ms_per_frame);
        const double res = r.ms_per_frame > 0
                               ? double(r.elements_per_frame) / (r.ms_per_frame * 1e-3)
                               : -1;
        j.value("elements_per_s", res)
            .value("nr100_4x4_requirement_elements_per_s", k_nr100_elements_per_s);
        j.end_object();
    }
    j.end_array();
}

} // namespace mimo_gpu_apps
