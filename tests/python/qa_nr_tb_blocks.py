#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""The NR LDPC transport block blocks: the PDU encoder -> BPSK LLRs -> PDU
decoder round trip with the CRC reported; HARQ processes in the PDU meta
combine retransmissions; bad PDUs are dropped and the rest go on; the stream
blocks with code "ldpc" (tb_source -> LLRs -> tb_stream_decoder) decode what
the source sent, and noise never passes the CRC."""

import time

import numpy as np
import pmt
from gnuradio import blocks, gr, gr_unittest

from gnuradio import mimo_gpu

PDU_IN = pmt.intern("in")


def meta_of(**entries):
    meta = pmt.make_dict()
    for key, value in entries.items():
        v = pmt.from_bool(value) if isinstance(value, bool) else pmt.from_long(value)
        meta = pmt.dict_add(meta, pmt.intern(key), v)
    return meta


def run_pdus(block, pdus, sink, expected, seconds=60):
    tb = gr.top_block()
    tb.msg_connect(block, "out", sink, "store")
    for pdu in pdus:
        block.to_basic_block()._post(PDU_IN, pdu)
    tb.start()
    deadline = time.monotonic() + seconds
    while sink.num_messages() < expected and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.1)
    tb.stop()
    tb.wait()
    return [sink.get_message(i) for i in range(sink.num_messages())]


def bpsk_llr(bits, snr_db, rng):
    sigma2 = 10.0 ** (-snr_db / 10.0)
    y = 1.0 - 2.0 * bits + rng.normal(0.0, np.sqrt(sigma2), bits.size)
    return (2.0 * y / sigma2).astype(np.float32)


class qa_nr_tb_blocks(gr_unittest.TestCase):

    def encode(self, encoder, a):
        sink = blocks.message_debug()
        msgs = run_pdus(encoder, [pmt.cons(meta_of(seq=i), pmt.init_u8vector(len(x), x.tolist()))
                                  for i, x in enumerate(a)], sink, len(a))
        self.assertEqual(len(msgs), len(a))
        return [np.array(pmt.u8vector_elements(pmt.cdr(m)), np.uint8) for m in msgs]

    def test_round_trip_and_a_dropped_pdu(self):
        rng = np.random.default_rng(3)
        A, G = 8456, 16896
        encoder = mimo_gpu.nr_tb_encoder(A, G, 4)
        self.assertEqual((encoder.code_blocks(), encoder.lifting_size()), (2, 208))
        a = [rng.integers(0, 2, A, dtype=np.uint8) for _ in range(3)]
        coded = self.encode(encoder, a)
        self.assertTrue(all(c.size == G for c in coded))
        decoder = mimo_gpu.nr_tb_decoder(A, G, 4, backend="cpu")
        pdus = [pmt.cons(meta_of(seq=i), pmt.init_f32vector(G, bpsk_llr(c, 6.0, rng).tolist()))
                for i, c in enumerate(coded)]
        pdus.insert(1, pmt.cons(meta_of(seq=9), pmt.init_f32vector(5, [1.0] * 5)))  # bad
        sink = blocks.message_debug()
        msgs = run_pdus(decoder, pdus, sink, 3)
        self.assertEqual(len(msgs), 3)
        for i, m in enumerate(msgs):
            meta = pmt.car(m)
            self.assertEqual(pmt.to_long(pmt.dict_ref(meta, pmt.intern("seq"), pmt.PMT_NIL)), i)
            self.assertTrue(pmt.to_bool(pmt.dict_ref(meta, pmt.intern("crc_ok"), pmt.PMT_F)))
            np.testing.assert_array_equal(np.array(pmt.u8vector_elements(pmt.cdr(m))), a[i])
        self.assertEqual((decoder.blocks(), decoder.crc_failures()), (3, 0))
        self.assertEqual(decoder.active_backend(), "cpu")

    def test_harq_processes_combine_retransmissions(self):
        # Rate 0.92, BPSK 3 dB: one transmission fails; rv 2 into the same process passes.
        rng = np.random.default_rng(8)
        A, G = 3840, 4224
        a = rng.integers(0, 2, A, dtype=np.uint8)
        enc0 = mimo_gpu.nr_tb_encoder(A, G, 2, base_graph=1)
        enc2 = mimo_gpu.nr_tb_encoder(A, G, 2, rv=2, base_graph=1)
        c0, c2 = self.encode(enc0, [a])[0], self.encode(enc2, [a])[0]
        decoder = mimo_gpu.nr_tb_decoder(A, G, 2, base_graph=1, backend="cpu")
        pdus = [pmt.cons(meta_of(harq_process=5, rv=0, new_data=True),
                         pmt.init_f32vector(G, bpsk_llr(c0, 3.0, rng).tolist())),
                pmt.cons(meta_of(harq_process=5, rv=2),
                         pmt.init_f32vector(G, bpsk_llr(c2, 3.0, rng).tolist())),
                pmt.cons(meta_of(harq_process=6, rv=0),   # another process stays
                         pmt.init_f32vector(G, bpsk_llr(c0, 3.0, rng).tolist())),
                pmt.cons(meta_of(harq_process=-1), pmt.init_f32vector(G, [1.0] * G))]  # bad
        sink = blocks.message_debug()
        msgs = run_pdus(decoder, pdus, sink, 3)
        self.assertEqual(len(msgs), 3)
        ok = [pmt.to_bool(pmt.dict_ref(pmt.car(m), pmt.intern("crc_ok"), pmt.PMT_F)) for m in msgs]
        self.assertEqual(ok, [False, True, False])
        np.testing.assert_array_equal(np.array(pmt.u8vector_elements(pmt.cdr(msgs[1]))), a)
        self.assertEqual(decoder.harq_processes(), 1)  # 5 is done, 6 waits

    def test_stream_source_and_decoder_with_ldpc(self):
        # Two code blocks of BG1 per transport block, 16-QAM-sized items.
        A, G, Qm, count, per_item = 10000, 21600, 4, 12, 16
        tb = gr.top_block()
        source = mimo_gpu.tb_source(A, G, Qm, 1, 0, 5, 4, count, "cpu", False, code="ldpc")
        bits = blocks.vector_to_stream(gr.sizeof_char, G)
        to_float = blocks.uchar_to_float()
        llr = blocks.multiply_const_ff(-16.0)
        shift = blocks.add_const_ff(8.0)  # bit 0 -> +8, bit 1 -> -8
        items = blocks.stream_to_vector(gr.sizeof_float, per_item)
        decoder = mimo_gpu.tb_stream_decoder(A, G, Qm, 1, 0, per_item, backend="cpu",
                                             device_buffers=False, code="ldpc")
        decoded, sent = blocks.vector_sink_b(A), blocks.vector_sink_b(A)
        tb.connect((source, 0), bits, to_float, llr, shift, items, decoder, decoded)
        tb.connect((source, 1), sent)
        tb.run()
        self.assertEqual(decoder.code(), "ldpc")
        self.assertEqual(decoder.blocks(), count)
        self.assertEqual(decoder.crc_failures(), 0)
        self.assertEqual(len(decoded.data()), count * A)
        self.assertEqual(list(decoded.data()), list(sent.data()))

        # Noise alone: every block fails its CRC and is tagged.
        rng = np.random.default_rng(7)
        noise = rng.normal(0.0, 3.0, 3 * G).astype(np.float32)
        tb = gr.top_block()
        src = blocks.vector_source_f(noise.tolist(), False, per_item)
        decoder = mimo_gpu.tb_stream_decoder(A, G, Qm, 1, 0, per_item, backend="cpu",
                                             device_buffers=False, code="ldpc")
        sink = blocks.vector_sink_b(A)
        tb.connect(src, decoder, sink)
        tb.run()
        self.assertEqual(decoder.blocks(), 3)
        self.assertEqual(decoder.crc_failures(), 3)
        self.assertEqual(sum(1 for t in sink.tags() if pmt.symbol_to_string(t.key) == "crc_ok"), 3)

    def test_bad_parameters_raise(self):
        with self.assertRaises(ValueError):
            mimo_gpu.tb_stream_decoder(10000, 21600, 4, 1, 0, 16, code="polar")
        with self.assertRaises(ValueError):
            mimo_gpu.tb_stream_decoder(10000, 21600, 4, 1, 0, 16, algorithm="max-log-map",
                                       code="ldpc")
        with self.assertRaises(ValueError):
            mimo_gpu.tb_source(10000, 21601, 4, code="ldpc")
        with self.assertRaises(ValueError):
            mimo_gpu.nr_tb_encoder(100, 601, 2)
        with self.assertRaises(ValueError):
            mimo_gpu.nr_tb_decoder(100, 600, 2, algorithm="viterbi")
        with self.assertRaises(ValueError):
            mimo_gpu.nr_tb_decoder(100, 600, 2, base_graph=3)
        decoder = mimo_gpu.nr_tb_decoder(100, 600, 2, backend="cpu")
        with self.assertRaises(ValueError):
            decoder.set_rv(4)
        decoder.set_rv(3)
        self.assertEqual(decoder.rv(), 3)


if __name__ == "__main__":
    gr_unittest.run(qa_nr_tb_blocks)
