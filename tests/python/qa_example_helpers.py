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

    def test_constellation_probe_evm_equals_its_definition_per_frame_and_stream(self):
        # H = I (2x2), y = x + a known error per stream and frame, smaller than half
        # a decision distance: the unbiased MMSE symbol is y itself, so stream k's
        # EVM over a frame is sqrt(sum |e_k|^2 / sum |x_k|^2).
        rng = np.random.default_rng(7)
        nt, per_frame, frames = 2, 60, 3
        level = 1 / np.sqrt(10)  # 16-QAM, unit energy: levels +-1, +-3 times this
        x = (rng.choice([-3, -1, 1, 3], (frames * per_frame, nt))
             + 1j * rng.choice([-3, -1, 1, 3], (frames * per_frame, nt))) * level
        e = 0.3 * level * (rng.uniform(-1, 1, x.shape) + 1j * rng.uniform(-1, 1, x.shape))
        e[:per_frame, 1] *= 2  # frames and streams differ
        y = (x + e).astype(np.complex64)
        H = np.tile(np.eye(nt, dtype=np.complex64).ravel(), frames * per_frame)
        tags = []
        for f in range(frames):
            info = pmt.dict_add(pmt.make_dict(), pmt.intern("frame_start"), pmt.from_uint64(1000 * f))
            tags.append(gr.tag_utils.python_to_tag((f * per_frame, pmt.intern("ofdm_frame"), info)))
        probe = mimo_gpu.constellation_probe(nt, nt, 1, 1, 1e-9, "16qam")
        sink = blocks.vector_sink_c()
        messages = blocks.message_debug()
        self.tb.connect(blocks.vector_source_c(H.tolist(), False, nt * nt), (probe, 0))
        self.tb.connect(blocks.vector_source_c(y.ravel().tolist(), False, nt, tags), (probe, 1))
        self.tb.connect(probe, sink)
        self.tb.msg_connect((probe, "evm"), (messages, "store"))
        run_with_timeout(self.tb)
        want = [np.sqrt((np.abs(e[f * per_frame:(f + 1) * per_frame]) ** 2).sum(axis=0)
                        / (np.abs(x[f * per_frame:(f + 1) * per_frame]) ** 2).sum(axis=0))
                for f in range(frames)]
        self.assertEqual(messages.num_messages(), frames)
        for f in range(frames):
            m = messages.get_message(f)
            got = np.array(pmt.f64vector_elements(pmt.dict_ref(m, pmt.intern("per_stream"), pmt.PMT_NIL)))
            np.testing.assert_allclose(got, want[f], rtol=1e-4)
            self.assertEqual(pmt.to_long(pmt.dict_ref(m, pmt.intern("frame_start"), pmt.PMT_NIL)), 1000 * f)
            self.assertEqual(pmt.to_long(pmt.dict_ref(m, pmt.intern("measured"), pmt.PMT_NIL)), per_frame * nt)
        self.assertGreater(want[0][1], 1.5 * want[0][0])
        last = probe.last_evm()
        np.testing.assert_allclose(last["per_stream"], want[-1], rtol=1e-4)
        overall = np.sqrt((np.abs(e[-per_frame:]) ** 2).sum() / (np.abs(x[-per_frame:]) ** 2).sum())
        self.assertAlmostEqual(last["overall"], overall, places=5)
        # each frame's EVM as a tag on the output too (the last one's once its
        # length, learned from the first two, is in)
        evm_tags = [t for t in sink.tags() if pmt.symbol_to_string(t.key) == "evm"]
        self.assertEqual(len(evm_tags), frames)
        for f, t in enumerate(evm_tags):
            self.assertEqual(pmt.to_long(pmt.dict_ref(t.value, pmt.intern("frame_start"), pmt.PMT_NIL)), 1000 * f)
        with self.assertRaises(ValueError):
            mimo_gpu.constellation_probe(2, 2, 1, 1, 0.01, "8psk")

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
