#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""The Python blocks the examples display with: constellation_probe (equalised
symbols from H and y) and link_monitor (BLER and throughput of decoded blocks)."""
import numpy as np
import pmt
from gnuradio import blocks, gr, gr_unittest

from gnuradio import mimo_gpu
from mimo_flowgraph import run_with_timeout


class qa_example_helpers(gr_unittest.TestCase):

    def setUp(self):
        self.tb = gr.top_block()

    def tearDown(self):
        self.tb = None

    def test_constellation_probe_gives_the_sent_symbols_of_kept_vectors(self):
        rng = np.random.default_rng(3)
        nr, nt, S, channels, every = 4, 2, 3, 40, 5
        H = (rng.standard_normal((channels, nr, nt)) + 1j * rng.standard_normal((channels, nr, nt))) / np.sqrt(2)
        x = (rng.choice([-1, 1], (channels * S, nt)) + 1j * rng.choice([-1, 1], (channels * S, nt))) / np.sqrt(2)
        y = np.einsum('crt,cst->csr', H, x.reshape(channels, S, nt)).reshape(-1, nr)  # no noise
        probe = mimo_gpu.constellation_probe(nr, nt, S, every, 1e-9)
        sink = blocks.vector_sink_c()
        self.tb.connect(blocks.vector_source_c(H.astype(np.complex64).ravel().tolist(), False, nr * nt), (probe, 0))
        self.tb.connect(blocks.vector_source_c(y.astype(np.complex64).ravel().tolist(), False, nr), (probe, 1))
        self.tb.connect(probe, sink)
        run_with_timeout(self.tb)
        got = np.array(sink.data()).reshape(-1, nt)
        kept = np.arange(0, channels * S, every)
        self.assertEqual(len(got), len(kept))
        np.testing.assert_allclose(got, x[kept], atol=1e-4)

    def test_constellation_probe_refuses_bad_shapes(self):
        with self.assertRaises(ValueError):
            mimo_gpu.constellation_probe(2, 3)  # nt > nr
        with self.assertRaises(ValueError):
            mimo_gpu.constellation_probe(2, 2, 0)

    def test_link_monitor_counts_the_blocks_that_failed_their_crc(self):
        A, n = 16, 50
        failed = {3, 17, 49}
        tags = [gr.tag_utils.python_to_tag((k, pmt.intern("crc_ok"), pmt.PMT_F)) for k in sorted(failed)]
        source = blocks.vector_source_b([0] * (A * n), False, A, tags)
        monitor = mimo_gpu.link_monitor(A, 10, "qa")
        bler, mbps = blocks.vector_sink_f(), blocks.vector_sink_f()
        self.tb.connect(source, monitor)
        self.tb.connect((monitor, 0), bler)
        self.tb.connect((monitor, 1), mbps)
        run_with_timeout(self.tb)
        self.assertEqual(monitor.blocks(), n)
        self.assertEqual(monitor.crc_failures(), 3)
        self.assertAlmostEqual(monitor.bler(), 3 / n)
        self.assertEqual(len(bler.data()), n)
        self.assertAlmostEqual(bler.data()[-1], 1 / 10)  # one failure (49) in the last ten
        self.assertAlmostEqual(bler.data()[3], 1 / 4)
        self.assertTrue(all(v >= 0 for v in mbps.data()))


if __name__ == '__main__':
    gr_unittest.run(qa_example_helpers)
