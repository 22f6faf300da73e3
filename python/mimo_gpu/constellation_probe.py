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

EVM (with `modulation` set): decision-directed, per frame and per stream, over
the kept vectors (a sample of one in `every`: an estimate of the frame's EVM).
Each kept symbol is equalised unbiased (the MMSE estimate over its gain
(W H)_kk) and compared with the constellation point nearest to it:
EVM_k = sqrt(sum |z - d|^2 / sum |d|^2), the definition of mimo_gpu.measure_evm
without the symbols sent (it equals the data-aided EVM while no symbol crosses
a decision boundary). A frame ends where the next one's "ofdm_frame" tag (from
ofdm_rx) arrives on y, or, once two frames have given their length, when its
last item is in. Its EVM goes out as a message on the "evm" port and as an
"evm" tag on the first output item the probe writes from then on (a dict:
per_stream (f64vector, fractions), overall, measured (symbols), frame_start
(the ofdm_frame tag's, or -1)); last_evm() returns the same as a Python dict.
"""

import numpy as np
import pmt
from gnuradio import gr


def _pam_levels(modulation):
    """The unit-energy square QAM's levels per dimension (Gray labels do not
    matter for decisions), or None for no EVM."""
    bits = {"": 0, "qpsk": 2, "16qam": 4, "64qam": 6, "256qam": 8, "1024qam": 10}
    if modulation not in bits:
        raise ValueError("constellation_probe: modulation must be one of qpsk, 16qam, 64qam, "
                         "256qam, 1024qam (or empty: no EVM), got %r" % modulation)
    if not bits[modulation]:
        return None
    m = 2 ** (bits[modulation] // 2)
    levels = np.arange(-(m - 1), m, 2, dtype=np.float64)
    return levels / np.sqrt(2 * (m * m - 1) / 3.0)


class constellation_probe(gr.basic_block):
    def __init__(self, nr=2, nt=2, symbols_per_channel=1, every=16, noise_var=0.01, modulation=""):
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
        self.levels = _pam_levels(modulation)
        self.set_tag_propagation_policy(gr.TPP_DONT)
        self.message_port_register_out(pmt.intern("evm"))
        self._error = np.zeros(nt)  # the current frame's sums per stream
        self._power = np.zeros(nt)
        self._measured = 0
        self._frame_start = -1
        self._open = False  # a frame (from its ofdm_frame tag) is being measured
        self._begin = None  # its first y item
        self._period = 0  # y items from one frame's tag to the next's
        self._last = None
        self._pending = []  # finished frames' dicts, tagged on the next output item

    def last_evm(self):
        """The last finished frame's EVM: {"per_stream": [...], "overall": x,
        "measured": n, "frame_start": s}, or None before the first."""
        return self._last

    def _decide(self, z):
        """The nearest constellation point of each value (per dimension)."""
        def nearest(v):
            return self.levels[np.abs(v[..., None] - self.levels).argmin(axis=-1)]
        return nearest(z.real) + 1j * nearest(z.imag)

    def _finish_frame(self):
        if not self._open:
            return
        self._open = False
        if self._measured == 0:
            return
        with np.errstate(invalid="ignore", divide="ignore"):
            per_stream = np.sqrt(self._error / self._power)
            overall = float(np.sqrt(self._error.sum() / self._power.sum()))
        self._last = {"per_stream": per_stream.tolist(), "overall": overall,
                      "measured": int(self._measured), "frame_start": int(self._frame_start)}
        value = pmt.make_dict()
        value = pmt.dict_add(value, pmt.intern("per_stream"), pmt.init_f64vector(self.nt, per_stream.tolist()))
        value = pmt.dict_add(value, pmt.intern("overall"), pmt.from_double(overall))
        value = pmt.dict_add(value, pmt.intern("measured"), pmt.from_long(int(self._measured)))
        value = pmt.dict_add(value, pmt.intern("frame_start"), pmt.from_long(int(self._frame_start)))
        self.message_port_pub(pmt.intern("evm"), value)
        self._pending.append(value)
        self._error[:] = 0
        self._power[:] = 0
        self._measured = 0

    def _measure(self, x, gain):
        """Adds kept vectors' symbols (rows of x, their gains) to the frame's sums."""
        with np.errstate(invalid="ignore", divide="ignore"):
            z = x / gain
        ok = np.all(np.isfinite(z), axis=1)  # a vector with a non-finite symbol is left out
        z = z[ok]
        d = self._decide(z)
        self._error += (np.abs(z - d) ** 2).sum(axis=0)
        self._power += (np.abs(d) ** 2).sum(axis=0)
        self._measured += z.shape[0] * self.nt

    def stop(self):
        self._finish_frame()
        return True

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
        # Frames (for EVM) begin at ofdm_frame tags: the kept vectors are measured
        # in runs between them.
        base = self.nitems_read(1)
        starts = []
        if self.levels is not None:
            for tag in self.get_tags_in_window(1, 0, channels * self.S, pmt.intern("ofdm_frame")):
                start = pmt.dict_ref(tag.value, pmt.intern("frame_start"), pmt.PMT_NIL)
                starts.append((tag.offset - base, pmt.to_uint64(start) if pmt.is_uint64(start) else -1))
        if kept:
            k = np.asarray(kept)
            H = H_in[k // self.S].reshape(-1, self.nr, self.nt)
            y = y_in[k].reshape(-1, self.nr, 1)
            Hh = np.conj(np.transpose(H, (0, 2, 1)))
            A = Hh @ H + self.n0 * np.eye(self.nt, dtype=np.complex64)
            try:
                W = np.linalg.solve(A, Hh)  # the MMSE filters, nt x nr
                x = (W @ y).reshape(-1, self.nt)
                gain = np.einsum("vkr,vrk->vk", W, H).real
            except np.linalg.LinAlgError:  # a singular channel: nothing to show for this call
                x = np.zeros((len(kept), self.nt), dtype=np.complex64)
                gain = np.full((len(kept), self.nt), np.nan)
            output_items[0][: x.size] = x.reshape(-1)
        if self.levels is not None:
            at = 0
            for offset, frame_start in starts + [(channels * self.S, None)]:
                upto = at + int(np.searchsorted(np.asarray(kept[at:], dtype=np.int64), offset))
                if upto > at and self._open:
                    self._measure(x[at:upto], gain[at:upto])
                at = upto
                if frame_start is not None:  # a frame begins: the one before ends
                    self._finish_frame()
                    if self._begin is not None:
                        self._period = base + offset - self._begin
                    self._begin, self._frame_start, self._open = base + offset, frame_start, True
            # ofdm_rx's frames follow one another: a frame of the period's length is
            # whole once its last item is in (the stream's last one too)
            end = base + channels * self.S
            if self._open and self._period and end >= self._begin + self._period:
                self._finish_frame()
            for value in self._pending if kept else []:
                self.add_item_tag(0, self.nitems_written(0), pmt.intern("evm"), value)
            if kept:
                self._pending = []
        self.consume(0, channels)
        self.consume(1, channels * self.S)
        return len(kept) * self.nt
