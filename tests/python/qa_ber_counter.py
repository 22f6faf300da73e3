#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
import numpy as np
from gnuradio import blocks, gr, gr_unittest

from gnuradio import mimo_gpu
from mimo_flowgraph import random_bits, run_with_timeout


class qa_ber_counter(gr_unittest.TestCase):

    def setUp(self):
        self.tb = gr.top_block()

    def tearDown(self):
        self.tb = None

    def test_counts_the_flipped_decisions(self):
        bits = random_bits(1001, 6)
        llr = np.where(bits == 0, 3.0, -3.0).astype(np.float32)  # positive LLR means 0
        flipped = [(0, 0), (17, 5), (1000, 3)]
        for item, bit in flipped:
            llr[item, bit] = -llr[item, bit]
        counter = mimo_gpu.ber_counter(6)
        self.tb.connect(blocks.vector_source_b(bits.ravel().tolist(), False, 6), (counter, 0))
        self.tb.connect(blocks.vector_source_f(llr.ravel().tolist(), False, 6), (counter, 1))
        run_with_timeout(self.tb)
        self.assertEqual(counter.bits(), 6006)
        self.assertEqual(counter.errors(), 3)
        self.assertAlmostEqual(counter.ber(), 3 / 6006)
        counter.reset()
        self.assertEqual(counter.bits(), 0)
        self.assertEqual(counter.ber(), 0.0)

    def test_bad_parameters_raise(self):
        with self.assertRaises(ValueError):
            mimo_gpu.ber_counter(0)


if __name__ == "__main__":
    gr_unittest.run(qa_ber_counter)
