#!/usr/bin/env python3
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""The turbo code blocks in flowgraphs: turbo_encoder -> BPSK LLRs -> turbo_decoder
(fixed K and length-tagged mixed K), and tb_encoder -> LLRs -> tb_decoder on PDUs.
Bad input (wrong lengths, NaN LLRs) is dropped with an error and the flowgraph
goes on; a partial code block at the end of the stream does not hang."""

import time

import numpy as np
import pmt
from gnuradio import blocks, gr, gr_unittest

from gnuradio import mimo_gpu
from mimo_flowgraph import run_with_timeout

LEN_KEY = "packet_len"
CRC_OK = pmt.intern("crc_ok")
ITERATIONS = pmt.intern("iterations")
PDU_IN = pmt.intern("in")
PDU_OUT = pmt.intern("out")


def bits_of(count, seed):
    return np.random.default_rng(seed).integers(0, 2, count, dtype=np.uint8)


def length_tags(lengths, key=LEN_KEY):
    tags, offset = [], 0
    for length in lengths:
        tag = gr.tag_t()
        tag.offset = offset
        tag.key = pmt.intern(key)
        tag.value = pmt.from_long(length)
        tags.append(tag)
        offset += length
    return tags


def tags_by_key(sink, key):
    return [(t.offset, pmt.to_python(t.value)) for t in sink.tags() if pmt.eq(t.key, pmt.intern(key))]


class llr_chain(gr.hier_block2):
    """Coded bits (bytes) -> BPSK LLRs 8 (1 - 2b) plus Gaussian noise (sigma 0.5).
    `length` must be the exact length of the coded stream: GNU Radio's add_ff
    loses the last items of its first input when the second runs longer."""

    def __init__(self, length, seed=3):
        gr.hier_block2.__init__(self, "llr_chain",
                                gr.io_signature(1, 1, gr.sizeof_char),
                                gr.io_signature(1, 1, gr.sizeof_float))
        noise = np.random.default_rng(seed).normal(0.0, 0.5, length).astype(np.float32)
        self.to_float = blocks.char_to_float(1, 1)
        self.scale = blocks.multiply_const_ff(-16.0)
        self.offset = blocks.add_const_ff(8.0)
        self.noise = blocks.vector_source_f(noise.tolist(), False)
        self.add = blocks.add_ff()
        self.connect(self, self.to_float, self.scale, self.offset, (self.add, 0))
        self.connect(self.noise, (self.add, 1))
        self.connect(self.add, self)


class bits_to_llr_pdu(gr.basic_block):
    """PDU of bits -> PDU of BPSK LLRs (8 (1 - 2b) + noise); the PDUs numbered in
    `flip` get their signs flipped (a transport block that must fail its CRC)."""

    def __init__(self, flip=()):
        gr.basic_block.__init__(self, "bits_to_llr_pdu", None, None)
        self.message_port_register_in(PDU_IN)
        self.message_port_register_out(PDU_OUT)
        self.set_msg_handler(PDU_IN, self.handle)
        self.flip = set(flip)
        self.count = 0
        self.rng = np.random.default_rng(9)

    def handle(self, pdu):
        bits = np.array(pmt.u8vector_elements(pmt.cdr(pdu)), dtype=np.float32)
        llr = 8.0 * (1.0 - 2.0 * bits) + self.rng.normal(0.0, 0.5, bits.size)
        if self.count in self.flip:
            llr = -llr
        self.count += 1
        self.message_port_pub(PDU_OUT, pmt.cons(pmt.car(pdu), pmt.init_f32vector(llr.size, llr.astype(np.float32).tolist())))


def bits_pdu(bits, seq):
    meta = pmt.dict_add(pmt.make_dict(), pmt.intern("seq"), pmt.from_long(seq))
    return pmt.cons(meta, pmt.init_u8vector(len(bits), bits.tolist()))


def llr_pdu(llr, seq):
    meta = pmt.dict_add(pmt.make_dict(), pmt.intern("seq"), pmt.from_long(seq))
    return pmt.cons(meta, pmt.init_f32vector(len(llr), np.asarray(llr, dtype=np.float32).tolist()))


def run_pdus(tb, first_block, pdus, sink, expected, seconds=60):
    """Posts `pdus` to first_block's "in", runs until `sink` holds `expected` messages."""
    for pdu in pdus:
        first_block.to_basic_block()._post(PDU_IN, pdu)
    tb.start()
    deadline = time.monotonic() + seconds
    while sink.num_messages() < expected and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.1)  # anything beyond `expected` would arrive now
    tb.stop()
    tb.wait()
    if sink.num_messages() < expected:
        raise AssertionError(f"{sink.num_messages()} of {expected} PDUs within {seconds} s")
    return [sink.get_message(i) for i in range(sink.num_messages())]


class qa_turbo_blocks(gr_unittest.TestCase):

    def setUp(self):
        self.tb = gr.top_block()

    def tearDown(self):
        self.tb = None

    def code_block_chain(self, bits, K, key="", src_tags=(), coded_length=None, crc="none", max_blocks=256):
        src = blocks.vector_source_b(bits.tolist(), False, 1, list(src_tags))
        encoder = mimo_gpu.turbo_encoder(K, key)
        if coded_length is None:
            coded_length = len(bits) // K * 3 * (K + 4)
        chain = llr_chain(coded_length)
        decoder = mimo_gpu.turbo_decoder(K, key, "max-log-map", 6, 0.75, 64, crc, "auto", max_blocks)
        sink = blocks.vector_sink_b()
        self.tb.connect(src, encoder, chain, decoder, sink)
        run_with_timeout(self.tb)
        return np.asarray(sink.data(), dtype=np.uint8), sink, decoder

    def test_fixed_k_round_trip_with_a_partial_block_at_the_end(self):
        K, blocks_in = 1024, 9
        bits = bits_of(K * blocks_in + 500, 1)  # 500 bits of a tenth block never complete
        out, sink, decoder = self.code_block_chain(bits, K, max_blocks=4)
        self.assertEqual(out.size, K * blocks_in)
        np.testing.assert_array_equal(out, bits[:K * blocks_in])
        iterations = tags_by_key(sink, "iterations")
        self.assertEqual([o for o, _ in iterations], [b * K for b in range(blocks_in)])
        self.assertTrue(all(1 <= n <= 6 for _, n in iterations))
        self.assertEqual(tags_by_key(sink, "crc_ok"), [])  # crc "none": no crc_ok tags
        self.assertIn(decoder.active_backend(), ("cpu", "cuda"))

    def test_crc_ok_tags_and_early_termination(self):
        K, blocks_in = 512, 6
        bits = np.concatenate([mimo_gpu.core.crc_attach(bits_of(K - 24, 10 + b), "crc24b") for b in range(blocks_in)])
        out, sink, _ = self.code_block_chain(bits, K, crc="crc24b")
        np.testing.assert_array_equal(out, bits)
        self.assertEqual(tags_by_key(sink, "crc_ok"), [(b * K, True) for b in range(blocks_in)])
        # High SNR: the CRC passes after the first iteration, the decoder stops there.
        self.assertTrue(all(n < 6 for _, n in tags_by_key(sink, "iterations")))

    def test_tagged_mixed_k_round_trip(self):
        sizes = [40, 1024, 6144, 40, 2048, 6144, 104]
        bits = bits_of(sum(sizes), 2)
        coded = sum(3 * (k + 4) for k in sizes)
        out, sink, _ = self.code_block_chain(bits, 6144, LEN_KEY, length_tags(sizes), coded_length=coded)
        np.testing.assert_array_equal(out, bits)
        offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).tolist()
        self.assertEqual(tags_by_key(sink, LEN_KEY), list(zip(offsets, sizes)))
        self.assertEqual([o for o, _ in tags_by_key(sink, "iterations")], offsets)

    def test_encoder_matches_the_core_and_drops_a_bad_packet(self):
        sizes = [40, 41, 48]  # 41 is no code block size: logged and dropped
        bits = bits_of(sum(sizes), 4)
        src = blocks.vector_source_b(bits.tolist(), False, 1, length_tags(sizes))
        encoder = mimo_gpu.turbo_encoder(6144, LEN_KEY)
        sink = blocks.vector_sink_b()
        self.tb.connect(src, encoder, sink)
        run_with_timeout(self.tb)
        expected = np.concatenate([mimo_gpu.core.turbo_encode(bits[:40]).ravel(),
                                   mimo_gpu.core.turbo_encode(bits[81:]).ravel()])
        np.testing.assert_array_equal(np.asarray(sink.data(), dtype=np.uint8), expected)
        self.assertEqual(tags_by_key(sink, LEN_KEY), [(0, 132), (132, 156)])

    def test_decoder_drops_bad_packets_and_goes_on(self):
        good = [bits_of(40, 5), bits_of(56, 6), bits_of(40, 7)]
        llr = [8.0 * (1.0 - 2.0 * mimo_gpu.core.turbo_encode(b).ravel().astype(np.float32)) for b in good]
        nan_packet = llr[0].copy()
        nan_packet[17] = np.nan
        packets = [llr[0], np.ones(100, np.float32), nan_packet, llr[1], llr[2]]
        src = blocks.vector_source_f(np.concatenate(packets).tolist(), False, 1,
                                     length_tags([p.size for p in packets]))
        decoder = mimo_gpu.turbo_decoder(6144, LEN_KEY)
        sink = blocks.vector_sink_b()
        self.tb.connect(src, decoder, sink)
        run_with_timeout(self.tb)
        np.testing.assert_array_equal(np.asarray(sink.data(), dtype=np.uint8), np.concatenate(good))
        self.assertEqual(tags_by_key(sink, LEN_KEY), [(0, 40), (40, 56), (96, 40)])
        self.assertEqual(decoder.dropped_llrs(), 100 + 132)  # the bad-length and the NaN packet

    def test_partial_tagged_packet_at_the_end_does_not_hang(self):
        llr = 8.0 * (1.0 - 2.0 * mimo_gpu.core.turbo_encode(bits_of(40, 8)).ravel().astype(np.float32))
        # The second packet's tag says 132 LLRs, but the stream ends after 50.
        data = np.concatenate([llr, llr[:50]])
        src = blocks.vector_source_f(data.tolist(), False, 1, length_tags([132, 132]))
        decoder = mimo_gpu.turbo_decoder(40, LEN_KEY)
        sink = blocks.vector_sink_b()
        self.tb.connect(src, decoder, sink)
        run_with_timeout(self.tb)
        np.testing.assert_array_equal(np.asarray(sink.data(), dtype=np.uint8), bits_of(40, 8))
        self.assertEqual(decoder.dropped_llrs(), 50)  # counted (and logged) at stop

    def test_partial_fixed_block_at_the_end_does_not_hang(self):
        llr = 8.0 * (1.0 - 2.0 * mimo_gpu.core.turbo_encode(bits_of(40, 8)).ravel().astype(np.float32))
        src = blocks.vector_source_f(np.concatenate([llr, llr, llr[:70]]).tolist(), False)
        decoder = mimo_gpu.turbo_decoder(40)
        sink = blocks.vector_sink_b()
        self.tb.connect(src, decoder, sink)
        run_with_timeout(self.tb)
        np.testing.assert_array_equal(np.asarray(sink.data(), dtype=np.uint8), np.tile(bits_of(40, 8), 2))
        self.assertEqual(decoder.dropped_llrs(), 70)  # counted (and logged) at stop

    def test_transport_block_pdu_round_trip_reports_crc(self):
        A, G, Qm = 7000, 21000, 2  # two code blocks
        count, flipped = 6, 3
        data = [bits_of(A, 20 + n) for n in range(count)]
        encoder = mimo_gpu.tb_encoder(A, G, Qm)
        to_llr = bits_to_llr_pdu(flip=[flipped])
        decoder = mimo_gpu.tb_decoder(A, G, Qm, 1, 0, "max-log-map", 6, 0.75, 64, "auto", 4)
        sink = blocks.message_debug()
        coded = blocks.message_debug()
        self.tb.msg_connect(encoder, "out", to_llr, "in")
        self.tb.msg_connect(encoder, "out", coded, "store")
        self.tb.msg_connect(to_llr, "out", decoder, "in")
        self.tb.msg_connect(decoder, "out", sink, "store")
        messages = run_pdus(self.tb, encoder, [bits_pdu(d, n) for n, d in enumerate(data)], sink, count)
        self.assertEqual(len(messages), count)
        for n in range(count):
            np.testing.assert_array_equal(np.array(pmt.u8vector_elements(pmt.cdr(coded.get_message(n)))),
                                          mimo_gpu.core.tb_encode(data[n], A, G, Qm))
        for message in messages:
            meta = pmt.to_python(pmt.car(message))
            n = meta["seq"]
            bits = np.array(pmt.u8vector_elements(pmt.cdr(message)), dtype=np.uint8)
            self.assertEqual(bits.size, A)
            self.assertEqual(meta["code_blocks"], 2)
            if n == flipped:  # reported, not hidden
                self.assertFalse(meta["crc_ok"])
                self.assertLess(meta["code_blocks_crc_ok"], 2)
                self.assertEqual(meta["iterations"], 6)
            else:
                self.assertTrue(meta["crc_ok"])
                self.assertEqual(meta["code_blocks_crc_ok"], 2)
                self.assertGreaterEqual(meta["iterations"], 1)
                np.testing.assert_array_equal(bits, data[n])

    def test_tb_decoder_drops_bad_pdus_and_goes_on(self):
        A, G, Qm = 100, 600, 2
        data = [bits_of(A, 30 + n) for n in range(3)]
        llr = [8.0 * (1.0 - 2.0 * mimo_gpu.core.tb_encode(d, A, G, Qm).astype(np.float32)) for d in data]
        nan_llr = llr[1].copy()
        nan_llr[5] = np.inf
        pdus = [llr_pdu(llr[0], 0),
                llr_pdu(llr[0][:-1], 10),                             # G - 1 LLRs
                pmt.cons(pmt.make_dict(), pmt.init_u8vector(G, [0] * G)),  # not LLRs
                pmt.intern("not a pdu"),
                llr_pdu(nan_llr, 11),
                llr_pdu(llr[1], 1),
                llr_pdu(llr[2], 2)]
        decoder = mimo_gpu.tb_decoder(A, G, Qm)
        sink = blocks.message_debug()
        self.tb.msg_connect(decoder, "out", sink, "store")
        messages = run_pdus(self.tb, decoder, pdus, sink, 3)
        self.assertEqual(len(messages), 3)
        for n, message in enumerate(messages):
            meta = pmt.to_python(pmt.car(message))
            self.assertEqual(meta["seq"], n)
            self.assertTrue(meta["crc_ok"])
            np.testing.assert_array_equal(np.array(pmt.u8vector_elements(pmt.cdr(message))), data[n])

    def test_tb_encoder_drops_bad_pdus(self):
        A, G, Qm = 100, 600, 2
        encoder = mimo_gpu.tb_encoder(A, G, Qm)
        sink = blocks.message_debug()
        self.tb.msg_connect(encoder, "out", sink, "store")
        good = bits_of(A, 40)
        pdus = [bits_pdu(bits_of(A + 1, 41), 9), bits_pdu(np.full(A, 3, np.uint8), 8), bits_pdu(good, 0)]
        messages = run_pdus(self.tb, encoder, pdus, sink, 1)
        self.assertEqual(len(messages), 1)
        np.testing.assert_array_equal(np.array(pmt.u8vector_elements(pmt.cdr(messages[0]))),
                                      mimo_gpu.core.tb_encode(good, A, G, Qm))

    def test_setters(self):
        decoder = mimo_gpu.turbo_decoder(40)
        decoder.set_iterations(3)
        self.assertEqual(decoder.iterations(), 3)
        decoder.set_extrinsic_scale(0.5)
        self.assertAlmostEqual(decoder.extrinsic_scale(), 0.5)
        with self.assertRaises(ValueError):
            decoder.set_iterations(0)
        self.assertEqual(decoder.iterations(), 3)
        self.assertEqual(decoder.K(), 40)
        tb_dec = mimo_gpu.tb_decoder(100, 600, 2)
        tb_dec.set_iterations(8)
        tb_dec.set_rv(2)
        self.assertEqual((tb_dec.iterations(), tb_dec.rv()), (8, 2))
        with self.assertRaises(ValueError):
            tb_dec.set_rv(4)
        tb_enc = mimo_gpu.tb_encoder(100, 600, 2)
        tb_enc.set_rv(1)
        self.assertEqual(tb_enc.rv(), 1)
        self.assertEqual(mimo_gpu.turbo_encoder(6144, LEN_KEY).length_tag_key(), LEN_KEY)

    def test_bad_parameters_raise(self):
        with self.assertRaises(ValueError):
            mimo_gpu.turbo_encoder(41)
        with self.assertRaises(ValueError):
            mimo_gpu.turbo_decoder(40, "", "map")
        with self.assertRaises(ValueError):
            mimo_gpu.turbo_decoder(40, "", "log-map", 0)
        with self.assertRaises(ValueError):
            mimo_gpu.turbo_decoder(40, "", "log-map", 6, 1.5)
        with self.assertRaises(ValueError):
            mimo_gpu.turbo_decoder(40, "", "log-map", 6, 0.75, 64, "crc32")
        with self.assertRaises(ValueError):
            mimo_gpu.turbo_decoder(40, "", "log-map", 6, 0.75, 64, "none", "opencl")
        with self.assertRaises(ValueError) as caught:
            mimo_gpu.turbo_decoder(40, "", "log-map", 6, 0.75, 64, "none", "auto", 0)
        self.assertIn("max_blocks must be > 0, got 0", str(caught.exception))
        with self.assertRaises(ValueError):
            mimo_gpu.tb_encoder(0, 600, 2)
        with self.assertRaises(ValueError):
            mimo_gpu.tb_encoder(100, 601, 2)  # G not a multiple of Qm
        with self.assertRaises(ValueError):
            mimo_gpu.tb_decoder(100, 600, 3)
        with self.assertRaises(ValueError):
            mimo_gpu.tb_decoder(100, 2, 2)  # 2 coded bits for 124 bits of data and CRC


if __name__ == "__main__":
    gr_unittest.run(qa_turbo_blocks)
