#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""What the block QA tests share: random bits, tags, and running a flowgraph
with a time limit (a hung flowgraph must fail the test, not stall ctest)."""

import threading

import numpy as np
import pmt
from gnuradio import gr

NOISE_VAR = pmt.intern("noise_var")


def random_bits(items, bits_per_item, seed=1):
    return np.random.default_rng(seed).integers(0, 2, (items, bits_per_item), dtype=np.uint8)


def noise_var_tag(offset, noise_var):
    tag = gr.tag_t()
    tag.offset = offset
    tag.key = NOISE_VAR
    tag.value = pmt.from_double(noise_var)
    return tag


def noise_var_tags(sink):
    """(offset, N0) of the noise_var tags a vector sink received, in arrival order."""
    return [(t.offset, pmt.to_double(t.value)) for t in sink.tags() if pmt.eq(t.key, NOISE_VAR)]


def run_with_timeout(tb, seconds=60):
    """tb.run() in a thread; raises AssertionError when it has not returned in time."""
    runner = threading.Thread(target=tb.run, daemon=True)
    runner.start()
    runner.join(seconds)
    if runner.is_alive():
        tb.stop()
        raise AssertionError(f"flowgraph did not finish within {seconds} s (hung?)")


def as_array(sink, dtype, vlen):
    return np.asarray(sink.data(), dtype=dtype).reshape(-1, vlen)
