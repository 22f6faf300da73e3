#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Plots the BER-vs-SNR curves of a mimo_gpu_simulate JSON file into a PNG.

One curve per detector (N-way with N = 1..nt search passes, and exhaustive ML),
log-scale BER. Points where a detector made no error are left out of its curve
(log scale) and listed below the plot instead.
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


def snr_at_ber(pts, target):
    """SNR where the curve first falls to `target`, interpolated linearly in
    log10(BER) between the two points around it; None if it never does."""
    for (s0, b0, _, _), (s1, b1, _, _) in zip(pts, pts[1:]):
        if b0 > target >= b1 and b1 > 0:
            t = (math.log10(target) - math.log10(b0)) / (math.log10(b1) - math.log10(b0))
            return s0 + t * (s1 - s0)
    return None


def print_snr_table(data, target):
    print(f"SNR [dB] at which each detector reaches BER {target:g}:")
    found = {}
    for name, pts in curves(data).items():
        found[name] = snr_at_ber(pts, target)
        where = f"{found[name]:.2f}" if found[name] is not None else "not reached"
        print(f"  {name:>5}: {where}")
    if found.get("ML") is not None:
        for name, snr in found.items():
            if name != "ML" and snr is not None:
                print(f"  {name} needs {snr - found['ML']:+.2f} dB relative to ML")


def plot(data, png, title=None):
    cfg, backend = data["config"], data.get("backend", {})
    fig, ax = plt.subplots(figsize=(7, 5))
    zero_notes = []
    for name, pts in curves(data).items():
        shown = [(s, b) for s, b, _, e in pts if e > 0]
        zero = [s for s, _, _, e in pts if e == 0]
        style = dict(color="black", linestyle="--", marker="s") if name == "ML" else dict(marker="o")
        label = "max-log ML" if name == "ML" else f"N-way, {name}"
        if shown:
            ax.semilogy([s for s, _ in shown], [b for _, b in shown], label=label, **style)
        if zero:
            zero_notes.append(f"{name}: 0 errors at {', '.join(f'{s:g}' for s in zero)} dB")
    bits = cfg["problems_per_point"] * cfg["nt"] * cfg["bits_per_symbol"]
    ax.set_yscale("log")
    ax.set_xlabel("SNR, Es/N0 per receive antenna [dB]")
    ax.set_ylabel("uncoded bit error rate")
    ax.set_title(title or f"{cfg['nr']}x{cfg['nt']} MIMO, {cfg['modulation']}, i.i.d. Rayleigh, "
                 f"{bits} bits/point ({backend.get('active', '?')} backend)")
    ax.grid(True, which="both", alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend()
    if zero_notes:
        fig.text(0.01, 0.01, "; ".join(zero_notes), fontsize=7, va="bottom")
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
    args = parser.parse_args(argv)
    png = args.output or (args.json[:-5] if args.json.endswith(".json") else args.json) + ".png"
    plot(load(args.json), png, args.title)
    print(f"mimo_gpu_plot.py: wrote {png}")
    print_snr_table(load(args.json), args.target_ber)


if __name__ == "__main__":
    main()
