#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Loopback through a simulated MIMO channel, in a GNU Radio flowgraph:

    random bits -> head -> stream_to_vector(nt*Q) -> mimo_channel (H, y)
        -> mimo_detector (any registered family: nway, ml, mtt, ot, ...) -> LLRs -> ber_counter
    (the transmitted bits go to the ber_counter's other input)

It prints the bit error rate of the LLRs' hard decisions. The same flowgraph
is in mimo_gpu_loopback.grc. Run it with GNU Radio's Python (/usr/bin/python3).
With --symbols-per-channel S the channel draws one H per S consecutive problems
and the detector takes S received vectors per H (channel reuse), e.g. massive MIMO:
    mimo_gpu_loopback.py --nr 128 --nt 16 --detector mmse --symbols-per-channel 14 --snr 0
"""

import argparse
import time

from gnuradio import analog, blocks, gr, mimo_gpu

BITS_PER_SYMBOL = {"qpsk": 2, "16qam": 4, "64qam": 6, "256qam": 8, "1024qam": 10}


class mimo_gpu_loopback(gr.top_block):
    def __init__(self, nr=4, nt=4, modulation="16qam", detector="nway", parameters="passes=4",
                 snr_db=20.0, problems=10000, seed=1, backend="auto", symbols_per_channel=1):
        gr.top_block.__init__(self, "mimo_gpu loopback")
        bits = nt * BITS_PER_SYMBOL[modulation]
        noise_var = 10.0 ** (-snr_db / 10.0)  # the channel's noise_var tags keep it in step
        self.source = analog.random_uniform_source_b(0, 2, seed)
        S = symbols_per_channel
        problems = -(-problems // S) * S  # whole channels of S problems
        self.head = blocks.head(gr.sizeof_char, problems * bits)
        self.to_vector = blocks.stream_to_vector(gr.sizeof_char, bits)
        self.channel = mimo_gpu.mimo_channel(nr, nt, modulation, snr_db, seed + 1, S)
        self.receiver = mimo_gpu.mimo_detector(detector, nr, nt, modulation, parameters, noise_var,
                                               symbols_per_channel=S, backend=backend)
        self.ber = mimo_gpu.ber_counter(bits)
        self.connect(self.source, self.head, self.to_vector, self.channel)
        self.connect((self.channel, 0), (self.receiver, 0))
        self.connect((self.channel, 1), (self.receiver, 1))
        self.connect(self.receiver, (self.ber, 1))
        self.connect(self.to_vector, (self.ber, 0))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nr", type=int, default=4)
    parser.add_argument("--nt", type=int, default=4)
    parser.add_argument("--modulation", default="16qam", choices=sorted(BITS_PER_SYMBOL))
    parser.add_argument("--detector", default="nway", choices=mimo_gpu.mimo_detector.algorithms())
    parser.add_argument("--parameters", default=None,
                        help='the detector\'s parameters, e.g. "passes=2,llr_clip=8" (default for nway: passes=nt)')
    parser.add_argument("--snr", type=float, default=20.0, help="Es/N0 per receive antenna, dB")
    parser.add_argument("--problems", type=int, default=10000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--backend", default="auto", choices=["auto", "cpu", "cuda"])
    parser.add_argument("--symbols-per-channel", type=int, default=1,
                        help="consecutive problems sharing one channel matrix (problems rounded up to whole channels)")
    args = parser.parse_args()

    parameters = args.parameters
    if parameters is None:
        parameters = f"passes={args.nt}" if args.detector == "nway" else ""
    tb = mimo_gpu_loopback(args.nr, args.nt, args.modulation, args.detector, parameters, args.snr,
                           args.problems, args.seed, args.backend, args.symbols_per_channel)
    start = time.monotonic()
    tb.run()
    seconds = time.monotonic() - start
    detector = f"{args.detector} ({parameters})" if parameters else args.detector
    print(f"{args.nr}x{args.nt} {args.modulation}, {detector}, SNR {args.snr:g} dB: "
          f"{tb.ber.errors()} errors in {tb.ber.bits()} bits, BER {tb.ber.ber():g} ({seconds:.2f} s)")


if __name__ == "__main__":
    main()
