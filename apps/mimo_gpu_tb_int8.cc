// mimo_gpu_tb_int8: what int8 LLRs cost the coded link. Transport blocks of A
// bits, coded onto G bits, over an nr x nt Rayleigh channel with AWGN, detected
// by a detector family (default: exhaustive max-log ML), then decoded from the
// detector's float LLRs and from the same LLRs quantised to int8 at each
// --scales value (q = clamp(round(L / scale), -127, 127), L = scale * q: the
// detector's int8 output at int8_scale 1 / scale). Every decoder sees the same
// noisy blocks, so the BLER columns differ by the quantisation alone. With the
// CUDA backend both go through transport_block_decoder::decode_device (int8
// dequantised on the GPU); on the CPU, decode() of scale * q gives the same
// decisions bit for bit.
#include "command_line.h"
#include "error_rate_curves.h"
#include "json_writer.h"

#include <mimo_gpu/channel_simulator.h>
#include <mimo_gpu/detector.h>
#include <mimo_gpu/detector_registry.h>
#include <mimo_gpu/device_memory.h>
#include <mimo_gpu/lte_turbo_decoder.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <vector>

using namespace mimo_gpu;
using namespace mimo_gpu_apps;

namespace {

/// A decoder input kind: float (scale 0) or int8 at a scale.
struct column {
    float scale = 0;
    uint64_t blocks = 0, errors = 0, clipped = 0, llrs = 0;
};

/// Device buffers of the CUDA path (decode_device), made once.
struct device_path {
    void* llr = nullptr;
    void* q = nullptr;
    void* a = nullptr;
    device_stream stream;
    device_path(size_t n_llr, size_t n_a)
        : llr(allocate_device(n_llr * sizeof(float))),
          q(allocate_device(n_llr)),
          a(allocate_device(n_a))
    {
    }
    ~device_path()
    {
        free_device(llr);
        free_device(q);
        free_device(a);
    }
    device_path(const device_path&) = delete;
    device_path& operator=(const device_path&) = delete;
};

} // namespace

int main(int argc, char** argv)
{
    command_line cli("mimo_gpu_tb_int8",
                     "Transport block error rates from float LLRs and from int8 LLRs at "
                     "several scales, "
                     "the same noisy blocks for each.",
                     "Each SNR point sends --blocks transport blocks. int8: q = "
                     "clamp(round(L / S), -127, "
                     "127), decoded as L = S * q. The last table gives the SNR at BLER "
                     "--target of each "
                     "column (log-linear between the points around it) and its distance "
                     "from float's.");
    cli.add_option("A", "N", "information bits per transport block", "6120");
    cli.add_option(
        "G", "N", "coded bits per transport block (a multiple of nt * Qm)", "18432");
    cli.add_option("modulation", "NAME", "qpsk, 16qam, 64qam", "qpsk");
    cli.add_option("nr", "N", "receive antennas", "2");
    cli.add_option("nt", "N", "streams", "2");
    cli.add_option("detector", "NAME", "detector family", "ml");
    cli.add_option(
        "snr", "LIST", "SNR points in dB (Es/N0 per receive antenna)", "0,0.5,1,1.5");
    cli.add_option("scales", "LIST", "int8 scales S (LLR = S * q)", "0.0625,0.125,0.25");
    cli.add_option("blocks", "N", "transport blocks per SNR point", "1024");
    cli.add_option("batch", "N", "transport blocks per decoder call", "128");
    cli.add_option("target", "BLER", "BLER of the crossing table", "0.1");
    cli.add_option(
        "backend", "NAME", "decoder and detector backend: auto, cpu or cuda", "auto");
    cli.add_option("seed", "N", "seed of bits, channel and noise", "1");
    cli.add_option("json", "FILE", "also write the results as JSON");
    return run_program(cli, argc, argv, [&]() -> int {
        transport_block_format f;
        f.A = int(cli.integer("A", 1, 1 << 20));
        f.G = int(cli.integer("G", 1, 1 << 24));
        const modulation mod =
            checked_setup([&] { return modulation_from_string(cli.text("modulation")); });
        const mimo_shape shape{ int(cli.integer("nr", 1, 64)),
                                int(cli.integer("nt", 1, 64)) };
        detector_config dc;
        dc.shape = shape;
        dc.mod = mod;
        const backend be = checked_setup(
            [&] { return resolve_backend(backend_from_string(cli.text("backend"))); });
        std::unique_ptr<detector> det =
            checked_setup([&] { return make_detector(cli.text("detector"), dc, be); });
        const int bits_per_problem = det->llrs_per_problem();
        f.Qm = det->bits_per_symbol();
        if (f.G % bits_per_problem != 0)
            throw usage_error(
                "G = " + std::to_string(f.G) +
                " is not a multiple of nt * Qm = " + std::to_string(bits_per_problem));
        checked_setup([&] {
            f.validate_for_decoding();
            return 0;
        });
        const std::vector<double> snrs = number_list(cli.text("snr"));
        std::vector<column> base(1);
        for (double s : number_list(cli.text("scales"))) {
            if (!(s > 0))
                throw usage_error("--scales must be > 0");
            base.push_back({ float(s) });
        }
        const size_t blocks = size_t(cli.integer("blocks", 1, 1LL << 40));
        const size_t batch = size_t(cli.integer("batch", 1, 100000));
        const double target = cli.real("target");
        const uint64_t seed = uint64_t(cli.integer("seed", 0, 1LL << 62));

        transport_block_encoder enc(f);
        transport_block_decoder dec(f, turbo_decoder_config{}, be);
        const bool on_device = dec.active_backend() == backend::cuda;
        std::unique_ptr<device_path> dev;
        if (on_device)
            dev = std::make_unique<device_path>(batch * f.G, batch * f.A);
        const size_t problems = size_t(f.G / bits_per_problem);
        std::vector<uint8_t> a(batch * f.A), coded(batch * f.G), decoded(batch * f.A);
        std::vector<cfloat> H(problems * shape.nr * shape.nt), y(problems * shape.nr);
        std::vector<float> llr(batch * f.G), x(batch * f.G);
        std::vector<int8_t> q(batch * f.G);
        std::vector<std::vector<column>> table;
        std::printf(
            "A = %d, G = %d (rate %.3f, C = %d), %dx%d %s, detector %s, decoder %s\n",
            f.A,
            f.G,
            double(f.A) / f.G,
            f.segmentation().C,
            shape.nr,
            shape.nt,
            to_string(mod).c_str(),
            det->name().c_str(),
            to_string(dec.active_backend()).c_str());
        for (double snr : snrs) {
            std::vector<column> cols = base;
            channel_simulator sim(
                shape, mod, seed + uint64_t(std::llround(snr * 1000)) * 7919);
            const float n0 = noise_variance_from_snr_db(snr);
            for (size_t done = 0; done < blocks; done += batch) {
                const size_t n = std::min(batch, blocks - done);
                sim.random_bits(a.data(), n * f.A);
                for (size_t t = 0; t < n; ++t) {
                    enc.encode(a.data() + t * f.A, coded.data() + t * f.G);
                    sim.run(coded.data() + t * f.G, problems, n0, H.data(), y.data());
                    det->detect(H.data(), y.data(), problems, n0, llr.data() + t * f.G);
                }
                for (column& c : cols) {
                    const size_t nl = n * f.G;
                    const float* in = llr.data();
                    if (c.scale > 0) {
                        // the detector's quantiser, read back as scale * q
                        llrs_to_int8(llr.data(), nl, 1.0f / c.scale, q.data());
                        for (size_t i = 0; i < nl; ++i) {
                            x[i] = c.scale * float(q[i]);
                            c.clipped += q[i] == 127 || q[i] == -127;
                        }
                        c.llrs += nl;
                        in = x.data();
                    }
                    std::vector<transport_block_result> r;
                    if (on_device) {
                        if (c.scale > 0) {
                            copy_memory(
                                dev->q, q.data(), nl, copy_direction::host_to_device);
                            dec.decode_device(static_cast<const int8_t*>(dev->q),
                                              c.scale,
                                              n,
                                              static_cast<uint8_t*>(dev->a),
                                              dev->stream.get());
                        } else {
                            copy_memory(dev->llr,
                                        llr.data(),
                                        nl * sizeof(float),
                                        copy_direction::host_to_device);
                            dec.decode_device(static_cast<const float*>(dev->llr),
                                              n,
                                              static_cast<uint8_t*>(dev->a),
                                              dev->stream.get());
                        }
                        r = dec.device_results(dev->stream.get());
                        copy_memory(decoded.data(),
                                    dev->a,
                                    n * f.A,
                                    copy_direction::device_to_host);
                    } else {
                        r = dec.decode(in, n, decoded.data());
                    }
                    for (size_t t = 0; t < n; ++t) {
                        const bool right =
                            r[t].crc_ok && std::equal(a.begin() + t * f.A,
                                                      a.begin() + (t + 1) * f.A,
                                                      decoded.begin() + t * f.A);
                        c.errors += !right;
                    }
                    c.blocks += n;
                }
            }
            table.push_back(cols);
            std::printf("SNR %5.2f dB:", snr);
            for (const column& c : cols)
                std::printf("  %s BLER %.4f (%llu/%llu)",
                            c.scale > 0 ? ("int8 S=" + std::to_string(c.scale)).c_str()
                                        : "float",
                            double(c.errors) / double(c.blocks),
                            (unsigned long long)c.errors,
                            (unsigned long long)c.blocks);
            std::printf("\n");
            std::fflush(stdout);
        }

        std::printf(
            "\n%-16s %14s %10s %12s\n", "input", "SNR at BLER", "vs float", "clipped");
        std::vector<double> at(base.size());
        for (size_t k = 0; k < base.size(); ++k) {
            std::vector<double> bler;
            uint64_t clipped = 0, llrs = 0;
            for (const auto& cols : table) {
                bler.push_back(double(cols[k].errors) / double(cols[k].blocks));
                clipped += cols[k].clipped;
                llrs += cols[k].llrs;
            }
            at[k] = crossing(snrs, bler, target);
            char name[40];
            std::snprintf(
                name, sizeof name, k ? "int8 S=%g" : "float", double(base[k].scale));
            std::printf("%-16s %11.3f dB %+9.3f %11.2e\n",
                        name,
                        at[k],
                        at[k] - at[0],
                        llrs ? double(clipped) / double(llrs) : 0.0);
        }

        if (cli.is_set("json") && !cli.text("json").empty()) {
            std::ofstream out(cli.text("json"));
            if (!out)
                throw std::runtime_error("cannot write " + cli.text("json"));
            json_writer j(out);
            j.begin_object();
            j.value("program", "mimo_gpu_tb_int8").value("A", f.A).value("G", f.G);
            j.value("modulation", to_string(mod))
                .value("nr", shape.nr)
                .value("nt", shape.nt);
            j.value("detector", det->name())
                .value("backend", to_string(dec.active_backend()));
            j.value("target_bler", target);
            j.begin_array("points");
            for (size_t i = 0; i < snrs.size(); ++i)
                for (const column& c : table[i]) {
                    j.begin_object();
                    j.value("snr_db", snrs[i])
                        .value("input", c.scale > 0 ? "int8" : "float");
                    j.value("scale", double(c.scale))
                        .value("blocks", (unsigned long long)c.blocks);
                    j.value("block_errors", (unsigned long long)c.errors);
                    j.value("clipped_fraction",
                            c.llrs ? double(c.clipped) / double(c.llrs) : 0.0);
                    j.end_object();
                }
            j.end_array();
            j.begin_array("crossings");
            for (size_t k = 0; k < base.size(); ++k) {
                j.begin_object();
                j.value("input", k ? "int8" : "float")
                    .value("scale", double(base[k].scale));
                j.value("snr_db", at[k]).value("vs_float_db", at[k] - at[0]);
                j.end_object();
            }
            j.end_array();
            j.end_object();
            out << "\n";
        }
        return 0;
    });
}
