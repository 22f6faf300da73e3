#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Plots the BER-vs-SNR curves of a mimo_gpu_simulate JSON file into a PNG.

One curve per detector (any registered family: N-way, MTT, OT, exhaustive ML, ...),
log-scale BER. Points where a detector made no error are left out of its curve
(log scale) and listed below the plot instead.

A result of `mimo_gpu_simulate --coded` gets three panels: the detectors' BER
before decoding (on the coded bits), the coded BER after the turbo decoder, and
the block error rate (BLER) of the transport blocks.
"""

import argparse
import math
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def load(path):
    try:
        with open(path) as f:
            data = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        sys.exit(f"mimo_gpu_plot.py: cannot read {path}: {e}")
    if data.get("program") != "mimo_gpu_simulate" or not data.get("points"):
        sys.exit(f"mimo_gpu_plot.py: {path} is not a mimo_gpu_simulate result with points")
    return data


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
    """SNR where the curve first falls to `target`, interpolated linearly in
    log10(BER) between the two points around it; None if it never does."""
    for (s0, b0, _, _), (s1, b1, _, _) in zip(pts, pts[1:]):
        if b0 > target >= b1 and b1 > 0:
            t = (math.log10(target) - math.log10(b0)) / (math.log10(b1) - math.log10(b0))
            return s0 + t * (s1 - s0)
    return None


def print_snr_table(data, target, what="BER", table=None):
    print(f"SNR [dB] at which each detector reaches {what} {target:g}:")
    found = {}
    for name, pts in (table or curves(data)).items():
        found[name] = snr_at_ber(pts, target)
        where = f"{found[name]:.2f}" if found[name] is not None else "not reached"
        print(f"  {name:>10}: {where}")
    ref = next((n for n in found if is_ml(n)), None)
    if ref is not None and found[ref] is not None:
        for name, snr in found.items():
            if name != ref and snr is not None:
                print(f"  {name} needs {snr - found[ref]:+.2f} dB relative to ML")


def is_ml(name):
    """The exact reference: 'ml' (older files: 'ML')."""
    return name in ("ml", "ML")


def draw(ax, table, ylabel, title, zero_notes, zero_what="errors", target=None):
    """One log-scale panel, a curve per detector; error-free points go to zero_notes.
    With a target, each legend entry gives the SNR at which the curve reaches it."""
    colors = plt.get_cmap("tab20").colors  # more detectors than the default 10 colours
    markers = "o^vD<>ph*X"
    for i, (name, pts) in enumerate(table.items()):
        shown = [(s, b) for s, b, _, e in pts if e > 0]
        zero = [s for s, _, _, e in pts if e == 0]
        style = (dict(color="black", linestyle="--", marker="s") if is_ml(name)
                 else dict(color=colors[(2 * i) % 20 + (i // 10) % 2], marker=markers[i % len(markers)]))
        label = "max-log ML" if is_ml(name) else name
        if target is not None:
            at = snr_at_ber(pts, target)
            label += f" ({at:.2f} dB at {target:g})" if at is not None else f" (not {target:g})"
        if shown:
            ax.semilogy([s for s, _ in shown], [b for _, b in shown], label=label, **style)
        if zero:
            zero_notes.append(f"{name}: 0 {zero_what} at {', '.join(f'{s:g}' for s in zero)} dB")
    ax.set_yscale("log")
    ax.set_xlabel("SNR, Es/N0 per receive antenna [dB]")
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8)


def plot(data, png, title=None):
    cfg, backend = data["config"], data.get("backend", {})
    coded = data.get("coded")
    bits = cfg["problems_per_point"] * cfg["nt"] * cfg["bits_per_symbol"]
    system = f"{cfg['nr']}x{cfg['nt']} MIMO, {cfg['modulation']}, i.i.d. Rayleigh"
    if cfg.get("symbols_per_channel", 1) > 1:
        system += f" (one channel per {cfg['symbols_per_channel']} symbols)"
    zero_notes = []
    if not coded:
        fig, ax = plt.subplots(figsize=(7, 5))
        draw(ax, curves(data), "uncoded bit error rate",
             title or f"{system}, {bits} bits/point ({backend.get('active', '?')} backend)", zero_notes,
             target=1e-2)
    else:
        fig, axes = plt.subplots(1, 3, figsize=(17, 5.5), sharex=True)
        draw(axes[0], curves(data), "bit error rate before decoding",
             f"detector, {bits} coded bits/point", zero_notes, target=1e-2)
        notes = []
        draw(axes[1], coded_curves(data, "ber"), "coded bit error rate (after turbo decoding)",
             f"decoded, {coded['blocks_per_point'] * coded['A']} bits/point", notes)
        zero_notes += [f"coded {n}" for n in notes]
        notes = []
        draw(axes[2], coded_curves(data, "bler"), "block error rate (transport blocks)",
             f"BLER, {coded['blocks_per_point']} blocks/point", notes, "block errors", target=0.1)
        zero_notes += [f"BLER {n}" for n in notes]
        fig.suptitle(title or f"{system}; LTE turbo code A = {coded['A']}, G = {coded['G']} "
                     f"(rate {coded['code_rate']:.3f}, {coded['code_blocks']} code block(s)), "
                     f"{coded['algorithm']}, {coded['iterations']} iterations "
                     f"({backend.get('active', '?')} detectors, {coded.get('decoder_backend', '?')} decoder)",
                     fontsize=11)
    if coded:
        snrs = [p["snr_db"] for p in data["points"]]
        pad = max(0.5, 0.05 * (max(snrs) - min(snrs)))
        axes[0].set_xlim(min(snrs) - pad, max(snrs) + pad)
        fig.tight_layout(rect=(0, 0.05 if zero_notes else 0, 1, 0.95))
    if zero_notes:
        fig.text(0.01, 0.01, "; ".join(zero_notes), fontsize=7, va="bottom", wrap=True)
        if not coded:
            fig.subplots_adjust(bottom=0.16)
    fig.savefig(png, dpi=120)
    plt.close(fig)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("json", help="result file of mimo_gpu_simulate --json")
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
    plot(data, png, args.title)
    print(f"mimo_gpu_plot.py: wrote {png}")
    if data.get("coded"):
        print_snr_table(data, args.target_ber, "BER before decoding")
        print_snr_table(data, args.target_bler, "BLER", coded_curves(data, "bler"))
    else:
        print_snr_table(data, args.target_ber)


if __name__ == "__main__":
    main()
