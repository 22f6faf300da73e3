#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
import numpy as np
from gnuradio import blocks, gr, gr_unittest

from gnuradio import mimo_gpu
from mimo_flowgraph import as_array, noise_var_tags, random_bits, run_with_timeout


class qa_mimo_channel(gr_unittest.TestCase):
    NR, NT, MOD, Q = 4, 2, "16qam", 4

    def setUp(self):
        self.tb = gr.top_block()

    def tearDown(self):
        self.tb = None

    def make_flowgraph(self, bits, snr_db, seed):
        self.src = blocks.vector_source_b(bits.ravel().tolist(), False, bits.shape[1])
        self.channel = mimo_gpu.mimo_channel(self.NR, self.NT, self.MOD, snr_db, seed)
        self.h_sink = blocks.vector_sink_c(self.NR * self.NT)
        self.y_sink = blocks.vector_sink_c(self.NR)
        self.tb.connect(self.src, self.channel)
        self.tb.connect((self.channel, 0), self.h_sink)
        self.tb.connect((self.channel, 1), self.y_sink)

    def test_every_item_arrives_and_matches_the_core_simulator(self):
        bits = random_bits(1001, self.NT * self.Q)
        self.make_flowgraph(bits, snr_db=12.0, seed=7)
        run_with_timeout(self.tb)
        H = as_array(self.h_sink, np.complex64, self.NR * self.NT)
        y = as_array(self.y_sink, np.complex64, self.NR)
        self.assertEqual(H.shape[0], 1001)
        self.assertEqual(y.shape[0], 1001)
        # The block is a thin wrapper: the same seed gives the core's stream.
        H_ref, y_ref = mimo_gpu.core.simulate(bits, self.NR, self.NT, self.MOD, 12.0, 7)
        np.testing.assert_array_equal(H, H_ref.reshape(1001, -1))
        np.testing.assert_array_equal(y, y_ref)

    def test_noise_var_tag_at_start_and_after_each_snr_change(self):
        bits = random_bits(300, self.NT * self.Q)
        self.make_flowgraph(bits, snr_db=10.0, seed=1)
        run_with_timeout(self.tb)
        self.channel.set_snr_db(20.0)
        self.assertAlmostEqual(self.channel.snr_db(), 20.0)
        self.assertAlmostEqual(self.channel.noise_var(), 0.01, places=6)
        # Each run restarts the item counters: the change is tagged at the
        # first item of the second run, and an unchanged SNR is not tagged again.
        for _ in range(2):
            self.src.rewind()
            run_with_timeout(self.tb)
        self.assertEqual(len(self.y_sink.data()), 3 * 300 * self.NR)
        for sink in (self.h_sink, self.y_sink):
            tags = noise_var_tags(sink)
            self.assertEqual([offset for offset, _ in tags], [0, 0])
            self.assertAlmostEqual(tags[0][1], 0.1, places=6)
            self.assertAlmostEqual(tags[1][1], 0.01, places=6)

    def test_bad_parameters_raise(self):
        with self.assertRaises(ValueError):
            mimo_gpu.mimo_channel(4, 2, "8psk", 10.0, 0)
        with self.assertRaises(ValueError):
            mimo_gpu.mimo_channel(2, 4, "qpsk", 10.0, 0)  # nt > nr
        with self.assertRaises(ValueError):
            mimo_gpu.mimo_channel(2000, 2, "qpsk", 10.0, 0)  # more than 1024 antennas
        with self.assertRaises(ValueError):
            mimo_gpu.mimo_channel(2, 2, "qpsk", float("nan"), 0)


if __name__ == "__main__":
    gr_unittest.run(qa_mimo_channel)
