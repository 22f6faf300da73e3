#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""The OFDM front end blocks from Python: ofdm_tx -> ofdm_channel_model ->
ofdm_rx -> mimo_detector at 30 dB gives the transmitted bits back."""
import numpy as np
import pmt
from gnuradio import blocks, gr, gr_unittest

from gnuradio import mimo_gpu
from mimo_flowgraph import run_with_timeout


def connect_front_end(tb, src, tx, channel, rx, nt, nr):
    """src -> ofdm_tx -> ofdm_channel_model -> ofdm_rx, every antenna."""
    tb.connect(src, tx)
    for t in range(nt):
        tb.connect((tx, t), (channel, t))
    for r in range(nr):
        tb.connect((channel, r), (rx, r))


class qa_ofdm_front_end(gr_unittest.TestCase):
    def test_chain_returns_the_bits_at_30_db(self):
        self.run_chain(doppler=0.0)

    def test_chain_under_doppler_fading(self):
        # EPA 5 Hz (36.101's EPA5): continuous fading across the frames.
        self.run_chain(doppler=5.0)

    def run_chain(self, doppler):
        nt = nr = 2
        tx = mimo_gpu.ofdm_tx("lte1.4", nt, "16qam", 2, 6)
        frames = 3
        bits = np.random.default_rng(5).integers(0, 2, size=frames * tx.frame_bits(), dtype=np.uint8)
        tb = gr.top_block()
        src = blocks.vector_source_b(bits.tolist(), False, tx.frame_bits())
        channel = mimo_gpu.ofdm_channel_model("lte1.4", nt, nr, 2, 6, "epa", 30.0, 0.25, 100, 3, doppler=doppler)
        rx = mimo_gpu.ofdm_rx("lte1.4", nt, nr, "16qam", 2, 6, "hold", "lmmse", "auto")
        det = mimo_gpu.mimo_detector("mmse", nr, nt, "16qam", "", 1.0, rx.symbols_per_channel())
        sink = blocks.vector_sink_f(nt * 4)
        connect_front_end(tb, src, tx, channel, rx, nt, nr)
        tb.connect((rx, 0), (det, 0))
        tb.connect((rx, 1), (det, 1))
        tb.connect(det, sink)
        run_with_timeout(tb)
        llr = np.array(sink.data())
        self.assertEqual(llr.size, bits.size)
        errors = np.count_nonzero((llr < 0) != (bits != 0))
        self.assertLess(errors, bits.size // 100)
        self.assertEqual(rx.frames_received(), frames)
        self.assertAlmostEqual(rx.last_cfo(), 0.25, delta=0.05)

    def test_a_pilot_layout_and_the_evm_of_each_frame(self):
        # Two pilot symbols a slot (pilot_positions) from Python through every
        # block, EPA 300 Hz at 30 dB, LMMSE in time; the constellation probe
        # measures each frame's EVM per stream from ofdm_rx's frame tags.
        nt = nr = 2
        pilots = [1, 4]
        tx = mimo_gpu.ofdm_tx("lte1.4", nt, "16qam", 2, 6, pilot_positions=pilots)
        frames = 4
        bits = np.random.default_rng(9).integers(0, 2, size=frames * tx.frame_bits(), dtype=np.uint8)
        tb = gr.top_block()
        src = blocks.vector_source_b(bits.tolist(), False, tx.frame_bits())
        channel = mimo_gpu.ofdm_channel_model("lte1.4", nt, nr, 2, 6, "epa", 30.0, 0.1, 100, 4,
                                              doppler=300.0, pilot_positions=pilots)
        rx = mimo_gpu.ofdm_rx("lte1.4", nt, nr, "16qam", 2, 6, "lmmse", "lmmse", "auto",
                              pilot_positions=pilots)
        probe = mimo_gpu.constellation_probe(nr, nt, rx.symbols_per_channel(), 1, 1e-3, "16qam")
        messages = blocks.message_debug()
        connect_front_end(tb, src, tx, channel, rx, nt, nr)
        tb.connect((rx, 0), (probe, 0))
        tb.connect((rx, 1), (probe, 1))
        tb.connect(probe, blocks.null_sink(gr.sizeof_gr_complex))
        tb.msg_connect((probe, "evm"), (messages, "store"))
        run_with_timeout(tb)
        self.assertEqual(rx.frames_received(), frames)
        self.assertEqual(messages.num_messages(), frames)
        evm = probe.last_evm()
        print("[ measured ] EPA 300 Hz, 30 dB, pilots %s: last frame's EVM per stream %s"
              % (pilots, ["%.2f %%" % (100 * v) for v in evm["per_stream"]]))
        self.assertEqual(len(evm["per_stream"]), nt)
        self.assertEqual(evm["measured"], 2 * 72 * 6 * nt)
        for v in evm["per_stream"]:  # 30 dB: 3.2 % from the noise alone, less than 16-QAM's spacing
            self.assertGreater(v, 0.02)
            self.assertLess(v, 0.2)
        with self.assertRaises(ValueError):
            mimo_gpu.ofdm_tx("lte1.4", nt, "16qam", 2, 6, pilot_positions=[7])

    def test_each_antennas_noise_in_the_frame_tags(self):
        # Receive antenna 3's chain 12 dB noisier (ofdm_channel_model's
        # antenna_noise_db): ofdm_rx measures each antenna's noise, whitens,
        # and says so in the ofdm_frame tag; with noise_per_antenna off, one
        # N0 for all and no whitening.
        nt, nr = 2, 4
        tx = mimo_gpu.ofdm_tx("lte1.4", nt, "16qam", 2, 6)
        frames = 3
        bits = np.random.default_rng(11).integers(0, 2, size=frames * tx.frame_bits(), dtype=np.uint8)
        for per_antenna in (True, False):
            tb = gr.top_block()
            src = blocks.vector_source_b(bits.tolist(), False, tx.frame_bits())
            channel = mimo_gpu.ofdm_channel_model("lte1.4", nt, nr, 2, 6, "epa", 25.0, 0.1, 100, 6,
                                                  antenna_noise_db=[0.0, 0.0, 0.0, 12.0])
            rx = mimo_gpu.ofdm_rx("lte1.4", nt, nr, "16qam", 2, 6, "hold", "lmmse", "auto",
                                  noise_per_antenna=per_antenna)
            y_sink = blocks.vector_sink_c(nr)
            connect_front_end(tb, src, tx, channel, rx, nt, nr)
            tb.connect((rx, 0), blocks.null_sink(gr.sizeof_gr_complex * nr * nt))
            tb.connect((rx, 1), y_sink)
            run_with_timeout(tb)
            infos = [t.value for t in y_sink.tags() if pmt.symbol_to_string(t.key) == "ofdm_frame"]
            self.assertEqual(len(infos), frames)
            for info in infos:
                n0 = pmt.f64vector_elements(pmt.dict_ref(info, pmt.intern("antenna_n0"), pmt.PMT_NIL))
                whitened = pmt.to_bool(pmt.dict_ref(info, pmt.intern("whitened"), pmt.PMT_NIL))
                self.assertEqual(len(n0), nr)
                self.assertEqual(whitened, per_antenna)
                if per_antenna:  # 12 dB = 15.8x
                    self.assertGreater(n0[3], 8 * max(n0[:3]))
                    self.assertLess(n0[3], 32 * min(n0[:3]))
                else:
                    self.assertEqual(len(set(n0)), 1)
            print("[ measured ] antenna noise %s, whitened %s" % (["%.2e" % v for v in n0], whitened))

    def test_frames_of_a_slow_stream_are_estimated_across_frames(self):
        # EPA 5 Hz, LMMSE in time, across_frames: every frame after the first
        # adds the frame before's pilot symbols (the ofdm_frame tag's linked),
        # and the bits come back; off, no frame is linked; hold refuses it.
        nt = nr = 2
        tx = mimo_gpu.ofdm_tx("lte1.4", nt, "16qam", 2, 6)
        frames = 4
        bits = np.random.default_rng(13).integers(0, 2, size=frames * tx.frame_bits(), dtype=np.uint8)
        for across in (True, False):
            tb = gr.top_block()
            src = blocks.vector_source_b(bits.tolist(), False, tx.frame_bits())
            channel = mimo_gpu.ofdm_channel_model("lte1.4", nt, nr, 2, 6, "epa", 25.0, 0.1, 100, 7,
                                                  doppler=5.0)
            rx = mimo_gpu.ofdm_rx("lte1.4", nt, nr, "16qam", 2, 6, "lmmse", "lmmse", "auto",
                                  across_frames=across)
            det = mimo_gpu.mimo_detector("mmse", nr, nt, "16qam", "", 1.0, rx.symbols_per_channel())
            sink = blocks.vector_sink_f(nt * 4)
            y_sink = blocks.vector_sink_c(nr)
            connect_front_end(tb, src, tx, channel, rx, nt, nr)
            tb.connect((rx, 0), (det, 0))
            tb.connect((rx, 1), (det, 1))
            tb.connect((rx, 1), y_sink)
            tb.connect(det, sink)
            run_with_timeout(tb)
            linked = [pmt.to_bool(pmt.dict_ref(t.value, pmt.intern("linked"), pmt.PMT_NIL))
                      for t in y_sink.tags() if pmt.symbol_to_string(t.key) == "ofdm_frame"]
            self.assertEqual(linked, [across and f > 0 for f in range(frames)])
            llr = np.array(sink.data())
            self.assertEqual(llr.size, bits.size)
            self.assertLess(np.count_nonzero((llr < 0) != (bits != 0)), bits.size // 100)
        with self.assertRaises(ValueError):
            mimo_gpu.ofdm_rx("lte1.4", nt, nr, "16qam", 2, 6, "hold", "lmmse", "auto", across_frames=True)

    def test_bad_parameters_raise(self):
        with self.assertRaises(ValueError):
            mimo_gpu.ofdm_tx("lte7")
        with self.assertRaises(ValueError):
            mimo_gpu.ofdm_rx("lte1.4", 4, 2)
        for speed in (-1.0, float("nan")):
            with self.assertRaises(ValueError):
                mimo_gpu.ofdm_rx("lte1.4", 2, 2, gpu_batch_speed=speed)
        for doppler in (-1.0, float("nan"), 1e6):
            with self.assertRaises(ValueError):
                mimo_gpu.ofdm_channel_model("lte1.4", 2, 2, 2, 6, "epa", 20.0, doppler=doppler)
        for antenna_noise_db in ([0.0], [0.0, float("nan")], [0.0, 200.0]):
            with self.assertRaises(ValueError):
                mimo_gpu.ofdm_channel_model("lte1.4", 2, 2, 2, 6, "epa", 20.0,
                                            antenna_noise_db=antenna_noise_db)


if __name__ == "__main__":
    gr_unittest.run(qa_ofdm_front_end)
