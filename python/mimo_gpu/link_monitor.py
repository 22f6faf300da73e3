#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""link_monitor: block error rate and throughput of a stream of decoded
transport blocks, for live displays and logs.

Input: decoded transport blocks (bytes, vlen A) with tb_stream_decoder's
"crc_ok" tags (False on a block whose CRC failed). Outputs, one value per
block: the BLER over the last `window` blocks, and the information bits per
second of CRC-passed blocks over the last `window` blocks (Mbit/s, wall
clock). blocks(), crc_failures(), bler() and throughput_mbps() give the totals;
stop() prints them (with `name`) so that a headless run leaves a summary.
"""

import collections
import time

import numpy as np
import pmt
from gnuradio import gr


class link_monitor(gr.sync_block):
    def __init__(self, block_bits=1000, window=100, name="link"):
        if block_bits < 1 or window < 1:
            raise ValueError("link_monitor: block_bits and window must be >= 1")
        gr.sync_block.__init__(self, name="link_monitor",
                               in_sig=[(np.uint8, block_bits)],
                               out_sig=[np.float32, np.float32])
        self.A, self.window, self.label = block_bits, window, name
        self.recent = collections.deque(maxlen=window)  # (time, crc ok)
        self.total = self.failures = 0
        self.started = None

    def work(self, input_items, output_items):
        n = len(input_items[0])
        failed = set()
        for tag in self.get_tags_in_window(0, 0, n, pmt.intern("crc_ok")):
            if not pmt.to_bool(tag.value):
                failed.add(tag.offset - self.nitems_read(0))
        now = time.monotonic()
        if self.started is None:
            self.started = now
        for k in range(n):
            ok = k not in failed
            self.total += 1
            self.failures += 0 if ok else 1
            self.recent.append((now, ok))
            errors = sum(1 for _, good in self.recent if not good)
            output_items[0][k] = errors / len(self.recent)
            span = self.recent[-1][0] - self.recent[0][0]
            passed = len(self.recent) - errors
            output_items[1][k] = passed * self.A / span / 1e6 if span > 0 else 0.0
        return n

    def blocks(self):
        return self.total

    def crc_failures(self):
        return self.failures

    def bler(self):
        return self.failures / self.total if self.total else 0.0

    def throughput_mbps(self):
        if not self.recent:
            return 0.0
        span = self.recent[-1][0] - self.recent[0][0]
        passed = sum(1 for _, good in self.recent if good)
        return passed * self.A / span / 1e6 if span > 0 else 0.0

    def stop(self):
        print("%s: %d blocks, %d CRC failures, BLER %.4f" % (self.label, self.total, self.failures, self.bler()),
              flush=True)
        return True
