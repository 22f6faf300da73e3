#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""constellation_probe: the equalised symbols of a MIMO receiver's H and y
streams, for a constellation display.

Inputs: H (complex, vlen nr*nt, one item per channel) and y (complex, vlen nr,
symbols_per_channel items per H item), as ofdm_rx gives them. Output: complex
symbols, the MMSE estimate x = (H^H H + N0 I)^-1 H^H y of every stream of one
received vector in `every` (nt values per kept vector, stream after stream).
N0 follows the receiver's noise_var tags on y (noise_var until the first).
For displays (numpy on the host): keep `every` large at high rates.
"""

import numpy as np
import pmt
from gnuradio import gr


class constellation_probe(gr.basic_block):
    def __init__(self, nr=2, nt=2, symbols_per_channel=1, every=16, noise_var=0.01):
        if nt < 1 or nr < nt:
            raise ValueError("constellation_probe: need 1 <= nt <= nr, got nt=%d nr=%d" % (nt, nr))
        if symbols_per_channel < 1 or every < 1:
            raise ValueError("constellation_probe: symbols_per_channel and every must be >= 1")
        if not noise_var >= 0:
            raise ValueError("constellation_probe: noise_var must be >= 0")
        gr.basic_block.__init__(self, name="constellation_probe",
                                in_sig=[(np.complex64, nr * nt), (np.complex64, nr)],
                                out_sig=[np.complex64])
        self.nr, self.nt, self.S, self.every = nr, nt, symbols_per_channel, every
        self.n0 = float(noise_var)
        self.set_tag_propagation_policy(gr.TPP_DONT)

    def forecast(self, noutput_items, ninputs):
        return [1, self.S]

    def general_work(self, input_items, output_items):
        H_in, y_in = input_items
        channels = min(len(H_in), len(y_in) // self.S)
        kept = [k for k in range(channels * self.S) if (self.nitems_read(1) + k) % self.every == 0]
        room = len(output_items[0]) // self.nt
        if len(kept) > room:
            kept = kept[:room]
            channels = kept[-1] // self.S + 1 if kept else 0
        for tag in self.get_tags_in_window(1, 0, channels * self.S, pmt.intern("noise_var")):
            value = pmt.to_double(tag.value)
            if np.isfinite(value) and value > 0:
                self.n0 = value
        if kept:
            k = np.asarray(kept)
            H = H_in[k // self.S].reshape(-1, self.nr, self.nt)
            y = y_in[k].reshape(-1, self.nr, 1)
            Hh = np.conj(np.transpose(H, (0, 2, 1)))
            A = Hh @ H + self.n0 * np.eye(self.nt, dtype=np.complex64)
            try:
                x = np.linalg.solve(A, Hh @ y).reshape(-1)
            except np.linalg.LinAlgError:  # a singular channel: nothing to show for this call
                x = np.zeros(len(kept) * self.nt, dtype=np.complex64)
            output_items[0][: len(x)] = x
        self.consume(0, channels)
        self.consume(1, channels * self.S)
        return len(kept) * self.nt
