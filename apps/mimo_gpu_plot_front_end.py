#!/usr/bin/env python3
"""Plots mimo_gpu_ofdm_link's JSON: coded BLER with estimated and perfect
channels, the channel-estimate MSE beside the LS theory, the estimated channel
magnitude per antenna pair over the subcarriers (beside the true one), the
equalised constellation, and (where the JSON has it) the EVM with estimated and
perfect channels, overall and per stream.

With several JSON files: the BLER curves of each (estimated solid, perfect
dashed), a panel per profile and modulation, and a table of the SNR at BLER
0.1 and the loss (markdown, on stdout).

usage: mimo_gpu_plot_front_end.py RESULT.json -o PLOT.png
       mimo_gpu_plot_front_end.py RUN1.json RUN2.json ... -o TABLE.png
"""
import argparse
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("json", nargs="+")
    ap.add_argument("-o", "--output", required=True)
    args = ap.parse_args()
    runs = []
    for name in args.json:
        try:
            with open(name) as f:
                runs.append(json.load(f))
            for key in ("points", "profile", "doppler_hz", "interpolation", "grid", "nr", "nt"):
                runs[-1][key]
        except (OSError, ValueError, KeyError) as e:
            sys.exit(f"mimo_gpu_plot_front_end: cannot read {name}: {e}")
    if len(runs) > 1:
        bler_table(runs, args.output)
        return
    r = runs[0]
    pts = r["points"]
    snr = [p["snr_db"] for p in pts]
    has_evm = all("evm_estimated_percent" in p for p in pts)
    fig, ax = plt.subplots(2, 3 if has_evm else 2, figsize=(18 if has_evm else 12, 9))
    title = f"{r['nr']}x{r['nt']} {r['grid']}, {r['profile'].upper()}, CFO {r['cfo_spacings']} spacings, {r['detector']}"
    fig.suptitle(title, fontsize=10)

    a = ax[0][0]
    # Points without a block error have no place on a log axis: they are not drawn
    # at a made-up floor (which read as a measured BLER), but marked as hollow
    # triangles on the bottom edge, "0 errors".
    for key, style, label, color in (("bler_estimated", "o-", "estimated channel", "C0"),
                                     ("bler_perfect", "s--", "perfect channel", "C1")):
        shown = [(p["snr_db"], p[key]) for p in pts if p[key] > 0]
        zero = [p["snr_db"] for p in pts if p[key] == 0]
        if shown:
            a.semilogy([s for s, _ in shown], [b for _, b in shown], style, color=color, label=label)
        if zero:
            a.plot(zero, [0.0] * len(zero), "v", color=color, markerfacecolor="none", clip_on=False,
                   transform=a.get_xaxis_transform(), label=f"{label}: 0 block errors")
    a.set_yscale("log")
    a.axhline(0.1, color="grey", lw=0.5)
    a.set_xlabel("SNR (dB)")
    a.set_ylabel("coded BLER (transport block)")
    est, perf = r.get("snr_at_bler_0.1_estimated"), r.get("snr_at_bler_0.1_perfect")
    if isinstance(est, (int, float)) and isinstance(perf, (int, float)):
        a.set_title(f"BLER 0.1: {est:.2f} dB vs {perf:.2f} dB (loss {est - perf:.2f} dB)", fontsize=9)
    a.grid(True, which="both", alpha=0.3)
    a.legend(fontsize=8)

    a = ax[0][1]
    a.semilogy(snr, [p["mse_pilots"] for p in pts], "o-", label="LS at pilots (measured)")
    a.semilogy(snr, [p["mse_pilots_theory"] for p in pts], "k--", label="LS theory N0/nt")
    a.semilogy(snr, [p["mse_interpolated"] for p in pts], "s-", label="interpolated (measured)")
    a.semilogy(snr, [p["mse_interpolated_theory"] for p in pts], "k:", label="interpolation noise theory")
    a.set_xlabel("SNR (dB)")
    a.set_ylabel("channel estimate MSE")
    a.grid(True, which="both", alpha=0.3)
    a.legend(fontsize=8)

    a = ax[1][0]
    U = r["snapshot_subcarriers"]
    est_abs, true_abs = r["snapshot_estimated_abs"], r["snapshot_true_abs"]
    pairs = len(est_abs) // U if U else 0
    for k in range(min(pairs, 4)):
        line = a.plot([est_abs[i * pairs + k] for i in range(U)], lw=1,
                      label=f"|H| pair {k // r['nt']},{k % r['nt']} estimated")
        a.plot([true_abs[i * pairs + k] for i in range(U)], "--", lw=0.8, color=line[0].get_color())
    a.set_xlabel("subcarrier (logical index)")
    a.set_ylabel("|H| (dashed: true)")
    a.set_title(f"channel magnitude at {pts[-1]['snr_db']} dB, slot 0", fontsize=9)
    a.legend(fontsize=7)

    a = ax[1][1]
    z = [v for v in r["snapshot_equalised"] if v[0] is not None and v[1] is not None]
    if z:
        a.plot([v[0] for v in z], [v[1] for v in z], ".", ms=1.5)
    a.set_aspect("equal")
    a.set_title(f"MMSE-equalised symbols at {pts[-1]['snr_db']} dB (estimated channel)", fontsize=9)
    a.grid(True, alpha=0.3)

    if has_evm:
        a = ax[0][2]
        def value(v, scale=1.0):
            return float("nan") if v is None else scale * v

        for key, style, label in (("evm_estimated_percent", "o-", "estimated channel"),
                                  ("evm_perfect_percent", "s--", "perfect channel")):
            a.semilogy(snr, [value(p[key]) for p in pts], style, label=label)
        a.set_xlabel("SNR (dB)")
        a.set_ylabel("EVM (%), RMS over streams and frames")
        a.set_title("EVM of the MMSE-equalised symbols (against the symbols sent)", fontsize=9)
        a.grid(True, which="both", alpha=0.3)
        a.legend(fontsize=8)
        a = ax[1][2]
        def stream(p, key, u):
            values = p.get(key, [])
            return value(values[u], 100.0) if u < len(values) else float("nan")

        for u in range(r["nt"]):
            line = a.semilogy(snr, [stream(p, "evm_estimated_per_stream", u) for p in pts], "-",
                              label=f"stream {u} estimated")
            a.semilogy(snr, [stream(p, "evm_perfect_per_stream", u) for p in pts], "--",
                       color=line[0].get_color())
        a.set_xlabel("SNR (dB)")
        a.set_ylabel("EVM (%) (dashed: perfect channel)")
        a.set_title("EVM per stream", fontsize=9)
        a.grid(True, which="both", alpha=0.3)
        a.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(args.output, dpi=110)
    print(f"wrote {args.output}")


def modulation_of(r):
    """The modulation from the grid's description (e.g. "... nt=4 16qam 2 slots ...")."""
    for word in r["grid"].split():
        if word in ("qpsk", "16qam", "64qam", "256qam", "1024qam"):
            return word
    return "?"


def layout_of(r):
    """Pilot symbols and data symbols a slot ("pilots 1,5 + 6 data"); runs from
    before pilot layouts had one pilot symbol first."""
    pilots = r.get("pilot_positions", "0")
    data = r.get("data_symbols")
    return f"pilots {pilots}" + (f" + {data} data" if data is not None else "")


def setting_of(r):
    """The pilot layout, estimation across frames (--across-frames) and
    inter-carrier interference cancellation (--ici-passes) where they ran, and where the receive antennas' noise differs
    (--antenna-noise), the offsets and whether the receiver measured it per
    antenna ("pilots 0 + 6 data; antennas +0/+3/+6/+12 dB, per antenna")."""
    text = layout_of(r)
    if r.get("across_frames", False):
        text += "; across frames"
    if r.get("ici_passes", 0):
        text += f"; ICI cancelled ({r['ici_passes']} passes)"
    offsets = r.get("antenna_noise_db") or []
    if offsets:
        text += "; antennas " + "/".join(f"{v:+g}" for v in offsets) + " dB, " + \
            ("per antenna" if r.get("noise_per_antenna", True) else "one N0")
    return text


def bler_table(runs, output):
    """BLER curves of several runs, a panel per (profile, modulation), and the
    markdown table of SNR at BLER 0.1 (estimated, perfect, loss)."""
    def number(v):
        return v if isinstance(v, (int, float)) and v == v else None

    order = ["qpsk", "16qam", "64qam", "256qam", "1024qam", "?"]
    panels = sorted({(r["profile"], modulation_of(r)) for r in runs},
                    key=lambda pm: (pm[0], order.index(pm[1])))
    fig, ax = plt.subplots(1, len(panels), figsize=(5.5 * len(panels), 4.5), squeeze=False)
    print("| profile | modulation | Doppler | pilot layout (a slot) | time interpolation | estimated | perfect | loss |")
    print("|---|---|---|---|---|---|---|---|")
    for r in sorted(runs, key=lambda r: (r["profile"], order.index(modulation_of(r)), r["doppler_hz"],
                                         r["interpolation"], setting_of(r))):
        a = ax[0][panels.index((r["profile"], modulation_of(r)))]
        snr = [p["snr_db"] for p in r["points"]]
        label = f"{r['doppler_hz']:g} Hz, {r['interpolation']}, {setting_of(r)}"
        line = a.semilogy(snr, [max(p["bler_estimated"], 1e-3) for p in r["points"]], "o-", label=label)
        a.semilogy(snr, [max(p["bler_perfect"], 1e-3) for p in r["points"]], "--",
                   color=line[0].get_color(), lw=0.8)
        a.set_title(f"{r['nr']}x{r['nt']} {r['profile'].upper()} {modulation_of(r)} "
                    "(dashed: perfect channel; 1e-3: no error)", fontsize=9)
        est, perf = number(r.get("snr_at_bler_0.1_estimated")), number(r.get("snr_at_bler_0.1_perfect"))
        print(f"| {r['profile'].upper()} | {modulation_of(r)} | {r['doppler_hz']:g} Hz | {setting_of(r)} | "
              f"{r['interpolation']} | "
              + (f"{est:.2f} dB" if est is not None else "not reached") + " | "
              + (f"{perf:.2f} dB" if perf is not None else "not reached") + " | "
              + (f"{est - perf:.2f} dB" if est is not None and perf is not None else "") + " |")
    for a in ax[0]:
        a.axhline(0.1, color="grey", lw=0.5)
        a.set_xlabel("SNR (dB)")
        a.set_ylabel("coded BLER")
        a.grid(True, which="both", alpha=0.3)
        a.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(output, dpi=100)
    print(f"wrote {output}")


if __name__ == "__main__":
    main()
