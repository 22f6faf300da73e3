#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
import numpy as np
import pmt
from gnuradio import blocks, gr, gr_unittest

from gnuradio import mimo_gpu
from mimo_flowgraph import as_array, random_bits, run_with_timeout


class qa_qr_decomposition(gr_unittest.TestCase):
    NR, NT, ORDERS = 4, 3, 2

    def setUp(self):
        self.tb = gr.top_block()

    def tearDown(self):
        self.tb = None

    def run_qr(self, H, y, max_batch, policy="erase"):
        qr = mimo_gpu.qr_decomposition(self.NR, self.NT, self.ORDERS, "auto", max_batch, policy)
        item_floats = self.ORDERS * 2 * self.NT * (2 * self.NT + 1)
        sink = blocks.vector_sink_f(item_floats)
        self.tb.connect(blocks.vector_source_c(H.ravel().tolist(), False, self.NR * self.NT), (qr, 0))
        self.tb.connect(blocks.vector_source_c(y.ravel().tolist(), False, self.NR), (qr, 1))
        self.tb.connect(qr, sink)
        run_with_timeout(self.tb)
        self.qr_block, self.sink = qr, sink
        return as_array(sink, np.float32, item_floats)

    def channel(self, items):
        bits = random_bits(items, self.NT * 4, seed=3)
        return mimo_gpu.core.simulate(bits, self.NR, self.NT, "16qam", 15.0, 5)

    def test_matches_core_and_keeps_the_tail(self):
        # 1001 items in batches of 7: neither divides the other, the tail must arrive.
        H, y = self.channel(1001)
        items = self.run_qr(H, y, max_batch=7)
        self.assertEqual(items.shape[0], 1001)
        expected = mimo_gpu.core.qr_decomposition(H, y, self.ORDERS).reshape(1001, -1)
        np.testing.assert_allclose(items, expected, rtol=1e-5, atol=1e-5)

    def test_bad_problems_are_erased_and_the_stream_goes_on(self):
        H, y = self.channel(1001)
        H[600, 1, 2] = np.nan
        H[601] = 0  # rank-deficient
        items = self.run_qr(H, y, max_batch=50)
        self.assertEqual(items.shape[0], 1001)  # every item out
        self.assertTrue(np.all(np.isnan(items[600:602])))  # erased: NaN items
        good = np.r_[0:600, 602:1001]
        self.assertTrue(np.all(np.isfinite(items[good])))
        expected = mimo_gpu.core.qr_decomposition(H[good], y[good], self.ORDERS).reshape(len(good), -1)
        np.testing.assert_allclose(items[good], expected, rtol=1e-5, atol=1e-5)
        self.assertEqual(self.qr_block.erased_problems(), 2)
        tags = sorted((t.offset, pmt.symbol_to_string(t.value)) for t in self.sink.tags()
                      if pmt.symbol_to_string(t.key) == "erasure")
        self.assertEqual(tags, [(600, "non_finite_input"), (601, "singular_channel")])

    def test_stop_policy_ends_the_stream_without_hanging(self):
        H, y = self.channel(1001)
        H[600, 1, 2] = np.nan
        # run_with_timeout fails the test if the flowgraph hangs; the block logs
        # the error and ends its stream after the items before the bad batch.
        items = self.run_qr(H, y, max_batch=50, policy="stop")
        self.assertLessEqual(items.shape[0], 600)
        self.assertTrue(np.all(np.isfinite(items)))

    def test_bad_parameters_raise(self):
        with self.assertRaises(ValueError):
            mimo_gpu.qr_decomposition(2, 3, 1)  # nt > nr
        with self.assertRaises(ValueError):
            mimo_gpu.qr_decomposition(4, 2, 3)  # orders > nt
        with self.assertRaises(ValueError):
            mimo_gpu.qr_decomposition(4, 2, 1, "opencl")
        with self.assertRaises(ValueError):
            mimo_gpu.qr_decomposition(4, 2, 1, "auto", 0)  # max_batch
        with self.assertRaises(ValueError):
            mimo_gpu.qr_decomposition(4, 2, 1, "auto", 10, "skip")  # policy

    def test_reports_its_backend(self):
        qr = mimo_gpu.qr_decomposition(2, 2, 1, "cpu")
        self.assertEqual(qr.active_backend(), "cpu")
        if not mimo_gpu.core.cuda_available():
            with self.assertRaises(RuntimeError):
                mimo_gpu.qr_decomposition(2, 2, 1, "cuda")


if __name__ == "__main__":
    gr_unittest.run(qa_qr_decomposition)
