// mimo_gpu_detect_file: soft MIMO detection from raw files to a raw LLR file,
// in batches, with the core library alone (no GNU Radio needed).
#include "command_line.h"
#include "raw_item_file.h"

#include <mimo_gpu/channel_simulator.h>
#include <mimo_gpu/detector_registry.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <vector>

using namespace mimo_gpu_apps;
namespace core = ::mimo_gpu;

namespace {

const char* k_formats =
    R"(File formats (raw, no header, native little-endian, as GNU Radio's
file_sink and file_source read and write them):
  --H    complex64 (gr_complex: float32 re, float32 im), one item of nr*nt values
         per channel, the matrix row-major: H[r*nt + t]. A file_sink on an
         H stream with vlen nr*nt writes exactly this. Each H item serves
         --symbols-per-channel S consecutive y items (default 1).
  --y    complex64, one item of nr values per problem (y = H s + n).
  --out  float32 LLRs, nt*Q per problem (Q = bits per symbol): stream t's bits
         at [t*Q, t*Q+Q) in 3GPP TS 36.211/38.211 label order;
         L = ln P(b=0|y)/P(b=1|y), positive means bit 0.
  --bits optional, uint8 one bit (0/1) per byte, nt*Q per problem, same order
         as the LLRs: the transmitted bits; the hard-decision BER is printed.
y must hold S times as many items as H. A file whose size is not a whole
number of items, a FIFO or device instead of a regular file, and an --out that
is one of the inputs are refused (exit 1) with a message naming the file.
The LLR file is written to a temporary file beside --out and renamed when the
run succeeds: a failed run leaves no output and an existing --out unchanged.
A bad problem (a NaN or Inf in H or y, or a rank-deficient H) is erased with
--policy erase (the default): its LLRs are 0, the rest is detected, and the
count and the first positions in the files are printed. --policy stop ends the
run there instead (exit 1, the position named, no output).
SNR convention: Es/N0 per receive antenna, N0 = 10^(-SNR/10), unit-energy symbols.

Example (record with GNU Radio file_sinks on the H and y streams of a 4x4 system):
  mimo_gpu_detect_file --nr 4 --nt 4 --modulation 16qam --detector nway:4 \
      --noise-var 0.05 --H h.c64 --y y.c64 --out llr.f32
)";

/// Hard-decision error count of LLRs against transmitted bits.
struct bit_error_count {
    uint64_t bits = 0, errors = 0;
    void add(const float* llr, const uint8_t* tx, size_t count)
    {
        for (size_t i = 0; i < count; ++i)
            errors += uint8_t(llr[i] < 0.0f) != (tx[i] != 0);
        bits += count;
    }
};

/// The run's settings, checked (a bad one is a usage error).
struct settings {
    core::mimo_shape shape;
    core::modulation mod;
    core::detector_spec detector;
    int symbols_per_channel;
    float n0;
    core::backend backend;
    size_t batch; // problems per detector call (whole channels of S)
    core::bad_problem_policy policy;

    static settings from(const command_line& cli)
    {
        return checked_setup([&] {
            settings v;
            v.shape = { int(cli.integer("nr", 1, core::k_largest_shape)),
                        int(cli.integer("nt", 1, core::k_largest_shape)) };
            v.shape.validate();
            v.mod = core::modulation_from_string(cli.text("modulation"));
            v.detector = core::parse_detector_spec(cli.text("detector"));
            v.symbols_per_channel = int(cli.integer("symbols-per-channel", 1, 1 << 16));
            if (cli.is_set("noise-var") == cli.is_set("snr"))
                throw usage_error("give exactly one of --noise-var N0 and --snr DB");
            v.n0 = cli.is_set("noise-var")
                       ? float(cli.real("noise-var"))
                       : core::noise_variance_from_snr_db(cli.real("snr"));
            core::check_noise_variance(v.n0);
            v.backend = core::backend_from_string(cli.text("backend"));
            v.batch = size_t(cli.integer("batch", 1, 1 << 24));
            v.policy = core::parse_bad_problem_policy(cli.text("policy"));
            return v;
        });
    }
};

/// The run's files: one reader item is one channel (its H, its S received
/// vectors, their bits and LLRs).
struct detection_files {
    raw_item_reader H, y;
    std::unique_ptr<raw_item_reader> bits; // --bits, optional
    raw_item_writer out; // written to a temporary file, renamed at the end

    detection_files(const command_line& cli, const settings& s, size_t llrs_per_item)
        : H(cli.text("H"),
            size_t(s.shape.nr) * s.shape.nt * sizeof(core::cfloat),
            "H file"),
          y(cli.text("y"),
            size_t(s.shape.nr) * s.symbols_per_channel * sizeof(core::cfloat),
            s.symbols_per_channel == 1
                ? "y file"
                : "y file (S = " + std::to_string(s.symbols_per_channel) +
                      " vectors per item)"),
          bits(cli.is_set("bits") ? std::make_unique<raw_item_reader>(
                                        cli.text("bits"), llrs_per_item, "bits file")
                                  : nullptr),
          out(checked_output(cli, *this),
              llrs_per_item * sizeof(float),
              "LLR output file")
    {
    }

private:
    /// The output's path, after the inputs agree and none of them is the output.
    static std::string checked_output(const command_line& cli, const detection_files& f)
    {
        require_same_item_count(f.H, f.y);
        if (f.bits)
            require_same_item_count(f.H, *f.bits);
        for (const raw_item_reader* input :
             { &f.H, &f.y, static_cast<const raw_item_reader*>(f.bits.get()) })
            if (input)
                require_not_input(cli.text("out"), "LLR output file", *input);
        return cli.text("out");
    }
};

/// What a run counted.
struct detection_totals {
    bit_error_count count;
    core::detection_report
        erasures; // problem indices counted from the start of the files
    double detect_seconds = 0, total_seconds = 0;
};

/// Detects every channel of the files, a batch at a time, and writes the LLRs.
detection_totals
detect_files(core::detector& detector, const settings& s, detection_files& f)
{
    const int S = s.symbols_per_channel;
    const size_t h_len = size_t(s.shape.nr) * s.shape.nt, y_len = size_t(s.shape.nr) * S;
    const size_t llr_len = size_t(detector.llrs_per_problem()) * S;
    // Buffers for --batch problems, or for what the files hold if that is less.
    const size_t batch = size_t(
        std::max<uint64_t>(1, std::min<uint64_t>(s.batch / size_t(S), f.H.items())));
    std::vector<core::cfloat> H(batch * h_len), y(batch * y_len);
    std::vector<float> llr(batch * llr_len);
    std::vector<uint8_t> tx(f.bits ? batch * llr_len : 0);
    detection_totals totals;
    const auto start = std::chrono::steady_clock::now();
    while (size_t n = f.H.read(H.data(), batch)) {
        f.y.read(y.data(), n);
        const auto t0 = std::chrono::steady_clock::now();
        core::detector_input in;
        in.H = H.data();
        in.y = y.data();
        in.channels = n;
        in.symbols_per_channel = S;
        in.n0 = s.n0;
        const uint64_t first = f.H.items_read() - n;
        try {
            totals.erasures.append(detector.detect(in, llr.data()), first * S);
        } catch (const std::invalid_argument& e) {
            // The core names the problem within the batch; say where the batch is in the
            // files.
            throw file_error("in the batch of H items " + std::to_string(first) + ".." +
                             std::to_string(first + n - 1) + " (y items " +
                             std::to_string(first * S) + ".." +
                             std::to_string((first + n) * S - 1) + "): " + e.what() +
                             "; no LLR file was written");
        }
        totals.detect_seconds +=
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        f.out.write(llr.data(), n);
        if (f.bits) {
            f.bits->read(tx.data(), n);
            totals.count.add(llr.data(), tx.data(), n * llr_len);
        }
    }
    f.out.close();
    totals.total_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return totals;
}

void print_summary(const command_line& cli,
                   const settings& s,
                   const core::detector& detector,
                   const detection_files& f,
                   const detection_totals& t)
{
    const int S = s.symbols_per_channel;
    const size_t llr_len = size_t(detector.llrs_per_problem()) * S;
    const uint64_t problems = f.out.items_written() * uint64_t(S);
    const double bits = double(f.out.items_written()) * double(llr_len);
    std::printf("%s: %d x %d %s, detector %s (%s), S = %d, backend %s, N0 %.6g\n",
                cli.program().c_str(),
                s.shape.nr,
                s.shape.nt,
                core::to_string(s.mod).c_str(),
                s.detector.label().c_str(),
                core::format_parameter_list(detector.parameters()).c_str(),
                S,
                core::to_string(detector.active_backend()).c_str(),
                double(s.n0));
    std::printf("problems: %llu, LLRs written: %llu to '%s' (%llu bytes)\n",
                (unsigned long long)problems,
                (unsigned long long)(f.out.items_written() * llr_len),
                f.out.path().c_str(),
                (unsigned long long)(f.out.items_written() * llr_len * sizeof(float)));
    std::printf("time: detection %.3f s (%.2f Mbit/s), total with file I/O %.3f s (%.2f "
                "Mbit/s)\n",
                t.detect_seconds,
                t.detect_seconds > 0 ? bits / t.detect_seconds / 1e6 : 0.0,
                t.total_seconds,
                t.total_seconds > 0 ? bits / t.total_seconds / 1e6 : 0.0);
    std::printf("erased: %llu problem(s) (LLRs 0)\n",
                (unsigned long long)t.erasures.erased);
    for (size_t i = 0; i < t.erasures.first_erased.size() && i < 10; ++i) {
        const core::erased_problem& e = t.erasures.first_erased[i];
        std::printf("  y item %llu (H item %llu): %s\n",
                    (unsigned long long)e.index,
                    (unsigned long long)(e.index / S),
                    core::to_string(e.cause));
    }
    if (f.bits)
        std::printf("bit errors: %llu of %llu (BER %.6g)\n",
                    (unsigned long long)t.count.errors,
                    (unsigned long long)t.count.bits,
                    t.count.bits ? double(t.count.errors) / t.count.bits : 0.0);
}

int run(const command_line& cli)
{
    const settings s = settings::from(cli);
    std::unique_ptr<core::detector> detector = checked_setup([&] {
        auto d = core::make_detector(s.detector, s.shape, s.mod, s.backend);
        d->set_bad_problem_policy(s.policy);
        return d;
    });
    detection_files files(
        cli, s, size_t(detector->llrs_per_problem()) * s.symbols_per_channel);
    const detection_totals totals = detect_files(*detector, s, files);
    print_summary(cli, s, *detector, files, totals);
    return 0;
}

} // namespace

int main(int argc, char** argv)
{
    command_line cli(
        "mimo_gpu_detect_file",
        "Soft-output MIMO detection of recorded (H, y) problems: reads H and y from raw\n"
        "complex64 files, writes max-log LLRs as raw float32. Streams the files in\n"
        "batches of --batch problems, so their size is not limited by memory.",
        k_formats);
    cli.add_option("nr", "NR", "receive antennas", "", true);
    cli.add_option("nt", "NT", "transmitted streams (NT <= NR)", "", true);
    cli.add_option(
        "modulation", "NAME", "qpsk, 16qam, 64qam, 256qam or 1024qam", "16qam");
    cli.add_option("detector",
                   "SPEC",
                   "a registered detector, FAMILY[:VALUE][:NAME=VALUE...], e.g. nway:4, "
                   "mtt, ot:llr_clip=4, ml",
                   "nway:1");
    cli.add_option(
        "symbols-per-channel", "S", "received vectors (y items) per H item", "1");
    cli.add_option("noise-var", "N0", "noise variance per complex receive sample");
    cli.add_option("snr", "DB", "instead of --noise-var: Es/N0 in dB, N0 = 10^(-DB/10)");
    cli.add_option(
        "backend", "NAME", "auto, cpu or cuda (auto honours MIMO_GPU_BACKEND)", "auto");
    cli.add_option("batch",
                   "B",
                   "problems per detector call (rounded down to whole channels)",
                   "8400");
    cli.add_option("policy",
                   "NAME",
                   "a bad problem: erase (LLRs 0, counted, go on) or stop (exit 1)",
                   "erase");
    cli.add_option("H", "FILE", "channel matrices, complex64", "", true);
    cli.add_option("y", "FILE", "received vectors, complex64", "", true);
    cli.add_option("out", "FILE", "LLR output, float32", "", true);
    cli.add_option(
        "bits", "FILE", "transmitted bits, uint8: print the hard-decision BER");
    return run_program(cli, argc, argv, [&] { return run(cli); });
}
