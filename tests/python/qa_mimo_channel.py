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

    def make_flowgraph(self, bits, snr_db, seed, S=1, nr=NR, nt=NT):
        self.src = blocks.vector_source_b(bits.ravel().tolist(), False, bits.shape[1])
        self.channel = mimo_gpu.mimo_channel(nr, nt, self.MOD, snr_db, seed, S)
        self.h_sink = blocks.vector_sink_c(nr * nt)
        self.y_sink = blocks.vector_sink_c(nr)
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

    def test_symbols_sharing_a_channel_get_one_h_item(self):
        # S = 5, 1003 problems: 200 channels, and 3 problems that do not fill one.
        S, nr, nt = 5, 16, 4
        bits = random_bits(1003, nt * self.Q, seed=4)
        self.make_flowgraph(bits, snr_db=9.0, seed=3, S=S, nr=nr, nt=nt)
        self.assertEqual(self.channel.symbols_per_channel(), S)
        run_with_timeout(self.tb)
        H = as_array(self.h_sink, np.complex64, nr * nt)
        y = as_array(self.y_sink, np.complex64, nr)
        self.assertEqual(H.shape[0], 200)
        self.assertEqual(y.shape[0], 1000)
        H_ref, y_ref = mimo_gpu.core.simulate(bits[:1000], nr, nt, self.MOD, 9.0, 3, symbols_per_channel=S)
        self.assertEqual(y_ref.shape, (200, S, nr))
        np.testing.assert_array_equal(H, H_ref.reshape(200, -1))
        np.testing.assert_array_equal(y, y_ref.reshape(1000, nr))
        # The noise_var tag marks the first item of either output.
        for sink in (self.h_sink, self.y_sink):
            self.assertEqual([offset for offset, _ in noise_var_tags(sink)], [0])

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
        with self.assertRaises(ValueError):
            mimo_gpu.mimo_channel(2, 2, "qpsk", 10.0, 0, 0)  # S = 0
        # Massive MIMO shapes are the detectors' business: the channel takes them.
        self.assertEqual(mimo_gpu.mimo_channel(128, 16, "16qam", 10.0, 0, 14).symbols_per_channel(), 14)


if __name__ == "__main__":
    gr_unittest.run(qa_mimo_channel)
