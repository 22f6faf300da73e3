#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Plots the BER-vs-SNR curves of a mimo_gpu_simulate JSON file into a PNG.

One curve per detector (any registered family: N-way, MTT, OT, exhaustive ML, ...),
log-scale BER. Points where a detector made no error are left out of its curve
(log scale) and listed below the plot instead.

A result of `mimo_gpu_simulate --coded` gets three panels: the detectors' BER
before decoding (on the coded bits), the coded BER after the turbo decoder, and
the block error rate (BLER) of the transport blocks.

A result of `mimo_gpu_ldpc_fer` gets one panel: each LDPC decoder's frame
error rate versus Eb/N0 beside the normal approximation.

A result of `mimo_gpu_idd` (iterative detection and decoding) gets one panel:
the BLER of each receiver, "mmse x3" being mmse with up to 3 outer
iterations and a bare name (e.g. "ml") a one-shot detector.
"""

import argparse
import math
import json
import sys
import textwrap

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def load(path):
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        sys.exit(f"mimo_gpu_plot.py: cannot read {path}: {e}")
    if data.get("program") == "mimo_gpu_idd" and data.get("receivers"):
        return data
    if data.get("program") == "mimo_gpu_ldpc_harq" and data.get("schemes"):
        return data
    if data.get("program") == "mimo_gpu_ldpc_fer" and data.get("decoders"):
        return data
    if data.get("program") != "mimo_gpu_simulate" or not data.get("points"):
        sys.exit(f"mimo_gpu_plot.py: {path} is not a mimo_gpu_simulate or mimo_gpu_idd "
                 "result with points")
    return data


def idd_curves(data):
    """{receiver: [(snr, bler, blocks, errors), ...]} of a mimo_gpu_idd result:
    "mmse x3" (up to 3 outer iterations), or the bare name of a one-shot detector."""
    out = {}
    for r in data["receivers"]:
        outer = r["outer_iterations"]
        name = f"{r['detector']} x{outer}" if outer > 0 else r["detector"]
        out[name] = [(p["snr_db"], p["bler"], data["blocks_per_point"], p["errors"])
                     for p in r["points"]]
    return out


def curves(data):
    """{detector name: [(snr, ber, bits, errors), ...]} in the order of the file."""
    out = {}
    for point in data["points"]:
        for d in point["detectors"]:
            out.setdefault(d["name"], []).append((point["snr_db"], d["ber"], d["bits"], d["errors"]))
    return out


def coded_curves(data, key):
    """{detector name: [(snr, rate, count, errors), ...]} of the coded link, where
    key is "ber" (decoded bits) or "bler" (transport blocks)."""
    count, errors = ("bits", "bit_errors") if key == "ber" else ("blocks", "block_errors")
    out = {}
    for point in data["coded"]["points"]:
        for d in point["detectors"]:
            out.setdefault(d["name"], []).append((point["snr_db"], d[key], d[count], d[errors]))
    return out


def snr_at_ber(pts, target):
    """SNR where the curve first falls to `target`: (snr, bounded) or None.

    Interpolated linearly in log10(rate) between the two points around the
    crossing. Where the curve steps from a rate above the target to a point
    with no errors at all, that point is taken at one error (1 / count, the
    largest rate its zero errors allow): the interpolated SNR is then an upper
    bound of the crossing (bounded=True; printed with '<=', legend '<='). If
    one error there would still be above the target, the count is too small
    to say: the curve is not reached at the target.
    """
    for (s0, b0, _, e0), (s1, b1, c1, e1) in zip(pts, pts[1:]):
        if not (e0 > 0 and b0 > target):
            continue
        if e1 > 0 and target >= b1:
            bounded = False
        elif e1 == 0 and c1 > 0 and target >= 1.0 / c1:
            b1, bounded = 1.0 / c1, True
        else:
            continue
        t = (math.log10(target) - math.log10(b0)) / (math.log10(b1) - math.log10(b0))
        return s0 + t * (s1 - s0), bounded
    return None


def snr_text(found):
    """'6.12', '<= 6.31' (an upper bound, see snr_at_ber) or 'not reached'."""
    if found is None:
        return "not reached"
    snr, bounded = found
    return f"{'<= ' if bounded else ''}{snr:.2f}"


def print_snr_table(data, target, what="BER", table=None):
    print(f"SNR [dB] at which each detector reaches {what} {target:g}:")
    found = {}
    for name, pts in (table or curves(data)).items():
        found[name] = snr_at_ber(pts, target)
        print(f"  {name:>10}: {snr_text(found[name])}")
    if any(f is not None and f[1] for f in found.values()):
        print("  (<=: the curve steps to zero errors; interpolated against one error at that point)")
    ref = next((n for n in found if is_ml(n)), None)
    if ref is not None and found[ref] is not None:
        for name, f in found.items():
            if name != ref and f is not None:
                print(f"  {name} needs {f[0] - found[ref][0]:+.2f} dB relative to ML")


def is_ml(name):
    """The exact reference: 'ml' (older files: 'ML')."""
    return name in ("ml", "ML")


def draw(ax, table, ylabel, title, zero_notes, zero_what="errors", target=None):
    """One log-scale panel, a curve per detector; error-free points go to zero_notes.
    With a target, a dotted line marks it and each legend entry gives the SNR at
    which the curve reaches it. Curves that lie on each other (the near-ML
    detectors) stay apart by hollow markers of different shapes and sizes and
    by line styles. The x range ends one step after the last point with errors."""
    colors = plt.get_cmap("tab20").colors  # more detectors than the default 10 colours
    markers = "o^vD<>ph*X"
    linestyles = ["-", "--", "-.", ":"]
    last_with_errors, steps = None, []
    for i, (name, pts) in enumerate(table.items()):
        shown = [(s, b) for s, b, _, e in pts if e > 0]
        zero = [s for s, _, _, e in pts if e == 0]
        steps += [b[0] - a[0] for a, b in zip(pts, pts[1:])]
        if shown:
            last_with_errors = max(last_with_errors or shown[-1][0], shown[-1][0])
        style = (dict(color="black", linestyle="--", marker="s", linewidth=2.0, markersize=7,
                      markerfacecolor="none", zorder=3) if is_ml(name)
                 else dict(color=colors[(2 * i) % 20 + (i // 10) % 2], marker=markers[i % len(markers)],
                           linestyle=linestyles[i % len(linestyles)], markersize=4 + (i % 3) * 1.5,
                           markerfacecolor="none", linewidth=1.2))
        label = "max-log ML" if is_ml(name) else name
        if target is not None:
            at = snr_at_ber(pts, target)
            label += f" ({snr_text(at)} dB at {target:g})" if at is not None else f" ({target:g} not reached)"
        if shown:
            ax.semilogy([s for s, _ in shown], [b for _, b in shown], label=label, **style)
        if zero:
            zero_notes.append(f"{name}: 0 {zero_what} at {', '.join(f'{s:g}' for s in zero)} dB")
    if target is not None:
        ax.axhline(target, color="gray", linestyle=":", linewidth=1.0, zorder=1)
    all_snr = [p[0] for pts in table.values() for p in pts]
    if all_snr:
        step = min(steps) if steps else 1.0
        right = (last_with_errors + step) if last_with_errors is not None else max(all_snr)
        ax.set_xlim(min(all_snr) - 0.25 * step, min(max(all_snr), right) + 0.25 * step)
    ax.set_yscale("log")
    ax.set_xlabel("SNR, Es/N0 per receive antenna [dB]")
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=7.5, loc="lower left")  # the curves fall from the upper left


def plot(data, png, title=None):
    cfg, backend = data["config"], data.get("backend", {})
    coded = data.get("coded")
    bits = cfg["problems_per_point"] * cfg["nt"] * cfg["bits_per_symbol"]
    system = f"{cfg['nr']}x{cfg['nt']} MIMO, {cfg['modulation']}, i.i.d. Rayleigh"
    if cfg.get("symbols_per_channel", 1) > 1:
        system += f" (one channel per {cfg['symbols_per_channel']} symbols)"
    zero_notes = []
    if not coded:
        width = 7.5
        fig, ax = plt.subplots(figsize=(width, 5.5))
        suptitle = title or f"{system}, {bits} bits/point ({backend.get('active', '?')} backend)"
        draw(ax, curves(data), "uncoded bit error rate", "", zero_notes, target=1e-2)
    else:
        width = 18
        fig, axes = plt.subplots(1, 3, figsize=(width, 6))
        draw(axes[0], curves(data), "bit error rate before decoding",
             f"detector, {bits} coded bits/point", zero_notes, target=1e-2)
        notes = []
        draw(axes[1], coded_curves(data, "ber"), "coded bit error rate (after turbo decoding)",
             f"decoded, {coded['blocks_per_point'] * coded['A']} bits/point", notes, target=1e-2)
        zero_notes += [f"coded {n}" for n in notes]
        notes = []
        draw(axes[2], coded_curves(data, "bler"), "block error rate (transport blocks)",
             f"BLER, {coded['blocks_per_point']} blocks/point", notes, "block errors", target=0.1)
        zero_notes += [f"BLER {n}" for n in notes]
        suptitle = title or (f"{system}; LTE turbo code A = {coded['A']}, G = {coded['G']} "
                             f"(rate {coded['code_rate']:.3f}, {coded['code_blocks']} code block(s)), "
                             f"{coded['algorithm']}, {coded['iterations']} iterations "
                             f"({backend.get('active', '?')} detectors, "
                             f"{coded.get('decoder_backend', '?')} decoder)")
    # Long titles and notes wrap to the figure's width instead of running off it
    # or over the axes' labels: their lines set the margins.
    chars = int(width * 13)
    title_lines = textwrap.wrap(suptitle, chars) or [""]
    note_lines = textwrap.wrap("; ".join(zero_notes), int(width * 16)) if zero_notes else []
    height = fig.get_size_inches()[1]
    line = 0.22 / height  # one text line as a fraction of the figure height
    top = 1 - (len(title_lines) + 0.6) * line
    bottom = (len(note_lines) + 0.5) * line * 0.8 if note_lines else 0
    fig.suptitle("\n".join(title_lines), fontsize=11, y=0.995, va="top")
    fig.tight_layout(rect=(0, bottom, 1, top))
    if note_lines:
        fig.text(0.01, 0.005, "\n".join(note_lines), fontsize=7, va="bottom", ha="left")
    fig.savefig(png, dpi=120)
    plt.close(fig)


def finish_one_panel(fig, suptitle, zero_notes, png):
    """The title and the notes of a one-panel figure wrapped to its width, and the PNG."""
    lines = textwrap.wrap(suptitle, 100)
    notes = textwrap.wrap("; ".join(zero_notes), 130) if zero_notes else []
    line = 0.22 / fig.get_size_inches()[1]
    fig.suptitle("\n".join(lines), fontsize=10, y=0.995, va="top")
    fig.tight_layout(rect=(0, (len(notes) + 0.5) * line * 0.8 if notes else 0, 1,
                           1 - (len(lines) + 0.6) * line))
    if notes:
        fig.text(0.01, 0.005, "\n".join(notes), fontsize=7, va="bottom", ha="left")
    fig.savefig(png, dpi=120)
    plt.close(fig)


def fer_curves(data):
    """{decoder: [(ebn0, fer, blocks, errors), ...]} of a mimo_gpu_ldpc_fer result."""
    return {d["decoder"]: [(p["ebn0_db"], p["fer"], p["blocks"], p["errors"])
                           for p in d["points"]] for d in data["decoders"]}


def plot_fer(data, png, title=None):
    zero_notes = []
    fig, ax = plt.subplots(figsize=(8, 5.8))
    draw(ax, fer_curves(data), "frame error rate", "", zero_notes, "frame errors",
         target=data.get("target_fer", 1e-2))
    # The normal approximation falls steeply: marked where it crosses the target.
    na_at = data["normal_approximation_ebn0_db"]
    ax.axvline(na_at, color="gray", linestyle="--", linewidth=1.0,
               label=f"normal approximation ({na_at:.2f} dB at {data.get('target_fer', 1e-2):g})")
    left, right = ax.get_xlim()
    ax.set_xlim(min(left, na_at - 0.1), right)
    ax.legend(fontsize=7.5, loc="lower left")
    ax.set_xlabel("Eb/N0 [dB]")
    suptitle = title or (f"NR LDPC BG{data['base_graph']}, K' = {data['K_prime']} on E = "
                         f"{data['E']} (Zc = {data['Zc']}), BPSK AWGN, {data['iterations']} "
                         f"layered iterations{'' if data.get('early_stop') else ' (no early stop)'}, "
                         f"{data.get('backend', '?')} backend")
    finish_one_panel(fig, suptitle, zero_notes, png)


def harq_curves(data):
    """{scheme: [(esn0, bler, blocks, errors), ...]} of a mimo_gpu_ldpc_harq result."""
    return {c["scheme"]: [(p["esn0_db"], p["bler"], p["blocks"], p["errors"])
                          for p in c["points"]] for c in data["schemes"]}


def plot_harq(data, png, title=None):
    zero_notes = []
    fig, ax = plt.subplots(figsize=(8, 5.8))
    draw(ax, harq_curves(data), "residual block error rate", "", zero_notes, "block errors",
         target=data.get("target_bler", 0.1))
    ax.legend(fontsize=7.5, loc="lower left")
    ax.set_xlabel("Es/N0 per coded bit and transmission [dB]")
    suptitle = title or (f"NR LDPC HARQ, A = {data['A']}, G = {data['G']} per transmission "
                         f"(BG{data['base_graph']}, Zc = {data['Zc']}), BPSK AWGN; IR: rv 0, 2, 3, 1; "
                         f"Chase: rv 0; {data['iterations']} iterations, "
                         f"{data.get('backend', '?')} backend")
    finish_one_panel(fig, suptitle, zero_notes, png)


def plot_idd(data, png, title=None):
    zero_notes = []
    fig, ax = plt.subplots(figsize=(8, 5.8))
    draw(ax, idd_curves(data), "block error rate (transport blocks)", "", zero_notes,
         "block errors", target=0.1)
    suptitle = title or (f"{data['nr']}x{data['nt']} MIMO, {data['modulation']}, i.i.d. Rayleigh; "
                         f"LTE turbo A = {data['A']}, G = {data['G']}; iterative detection and "
                         f"decoding (x N: up to N outer iterations), {data['blocks_per_point']} "
                         f"blocks/point, {data.get('backend', '?')} backend")
    finish_one_panel(fig, suptitle, zero_notes, png)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("json", help="result file of mimo_gpu_simulate --json or mimo_gpu_idd --json")
    parser.add_argument("-o", "--output", help="PNG to write (default: the JSON name with .png)")
    parser.add_argument("--title", help="plot title (default: the configuration)")
    parser.add_argument("--target-ber", type=float, default=1e-2,
                        help="also print the SNR at which each curve reaches this BER (default 1e-2)")
    parser.add_argument("--target-bler", type=float, default=1e-1,
                        help="coded results: also print the SNR at which each detector's BLER "
                             "reaches this value (default 1e-1)")
    args = parser.parse_args(argv)
    png = args.output or (args.json[:-5] if args.json.endswith(".json") else args.json) + ".png"
    data = load(args.json)
    if data["program"] == "mimo_gpu_ldpc_fer":
        plot_fer(data, png, args.title)
        print(f"mimo_gpu_plot.py: wrote {png}")
        print_snr_table(data, data.get("target_fer", 1e-2), "FER", fer_curves(data))
        return
    if data["program"] == "mimo_gpu_ldpc_harq":
        plot_harq(data, png, args.title)
        print(f"mimo_gpu_plot.py: wrote {png}")
        print_snr_table(data, data.get("target_bler", 0.1), "BLER", harq_curves(data))
        return
    if data["program"] == "mimo_gpu_idd":
        plot_idd(data, png, args.title)
        print(f"mimo_gpu_plot.py: wrote {png}")
        print_snr_table(data, args.target_bler, "BLER", idd_curves(data))
        return
    plot(data, png, args.title)
    print(f"mimo_gpu_plot.py: wrote {png}")
    if data.get("coded"):
        print_snr_table(data, args.target_ber, "BER before decoding")
        print_snr_table(data, args.target_bler, "BLER", coded_curves(data, "bler"))
    else:
        print_snr_table(data, args.target_ber)


if __name__ == "__main__":
    main()
