#!/usr/bin/env python3
# -*- coding: utf-8 -*-

#
# SPDX-License-Identifier: GPL-3.0
#
# GNU Radio Python Flow Graph
# Title: MIMO GPU loopback (N-way detector BER)
# Author: gr-mimo_gpu developers
# Description: Loopback through a simulated MIMO channel: random bits -> mimo_channel -> mimo_detector (N-way) -> ber_counter. Prints the bit error rate when the head block ends the stream. Headless: compile with grcc, run the .py.
# GNU Radio version: 3.10.5.1

from gnuradio import analog
from gnuradio import blocks
from gnuradio import gr
from gnuradio.filter import firdes
from gnuradio.fft import window
import sys
import signal
from argparse import ArgumentParser
from gnuradio.eng_arg import eng_float, intx
from gnuradio import eng_notation
from gnuradio import mimo_gpu


def snipfcn_print_ber(self):
    print("mimo_gpu_loopback: {} errors in {} bits, BER {:g}".format(
        self.mimo_gpu_ber_counter_0.errors(), self.mimo_gpu_ber_counter_0.bits(), self.mimo_gpu_ber_counter_0.ber()))


def snippets_main_after_stop(tb):
    snipfcn_print_ber(tb)


class mimo_gpu_loopback(gr.top_block):

    def __init__(self, snr_db=20, problems=10000):
        gr.top_block.__init__(self, "MIMO GPU loopback (N-way detector BER)", catch_exceptions=True)

        ##################################################
        # Parameters
        ##################################################
        self.snr_db = snr_db
        self.problems = problems

        ##################################################
        # Variables
        ##################################################
        self.nt = nt = 4
        self.passes = passes = nt
        self.nr = nr = 4
        self.bits_per_symbol = bits_per_symbol = 4

        ##################################################
        # Blocks
        ##################################################

        self.mimo_gpu_mimo_detector_0 = mimo_gpu.mimo_detector('nway', nr, nt, '16qam', 'passes={nway_passes},llr_clip={nway_llr_clip}'.format(nway_passes=passes, nway_llr_clip=8), (10 ** (-snr_db / 10)), 1, 'auto', 8400, 'erase', True)
        self.mimo_gpu_mimo_channel_0 = mimo_gpu.mimo_channel(nr, nt, '16qam', snr_db, 2, 1)
        self.mimo_gpu_ber_counter_0 = mimo_gpu.ber_counter((nt * bits_per_symbol), False, 'llr')
        self.blocks_stream_to_vector_0 = blocks.stream_to_vector(gr.sizeof_char*1, (nt * bits_per_symbol))
        self.blocks_head_0 = blocks.head(gr.sizeof_char*1, (problems * nt * bits_per_symbol))
        self.analog_random_uniform_source_x_0 = analog.random_uniform_source_b(0, 2, 1)


        ##################################################
        # Connections
        ##################################################
        self.connect((self.analog_random_uniform_source_x_0, 0), (self.blocks_head_0, 0))
        self.connect((self.blocks_head_0, 0), (self.blocks_stream_to_vector_0, 0))
        self.connect((self.blocks_stream_to_vector_0, 0), (self.mimo_gpu_ber_counter_0, 0))
        self.connect((self.blocks_stream_to_vector_0, 0), (self.mimo_gpu_mimo_channel_0, 0))
        self.connect((self.mimo_gpu_mimo_channel_0, 0), (self.mimo_gpu_mimo_detector_0, 0))
        self.connect((self.mimo_gpu_mimo_channel_0, 1), (self.mimo_gpu_mimo_detector_0, 1))
        self.connect((self.mimo_gpu_mimo_detector_0, 0), (self.mimo_gpu_ber_counter_0, 1))


    def get_snr_db(self):
        return self.snr_db

    def set_snr_db(self, snr_db):
        self.snr_db = snr_db
        self.mimo_gpu_mimo_channel_0.set_snr_db(self.snr_db)
        self.mimo_gpu_mimo_detector_0.set_noise_var((10 ** (-self.snr_db / 10)))

    def get_problems(self):
        return self.problems

    def set_problems(self, problems):
        self.problems = problems
        self.blocks_head_0.set_length((self.problems * self.nt * self.bits_per_symbol))

    def get_nt(self):
        return self.nt

    def set_nt(self, nt):
        self.nt = nt
        self.set_passes(self.nt)
        self.blocks_head_0.set_length((self.problems * self.nt * self.bits_per_symbol))

    def get_passes(self):
        return self.passes

    def set_passes(self, passes):
        self.passes = passes

    def get_nr(self):
        return self.nr

    def set_nr(self, nr):
        self.nr = nr

    def get_bits_per_symbol(self):
        return self.bits_per_symbol

    def set_bits_per_symbol(self, bits_per_symbol):
        self.bits_per_symbol = bits_per_symbol
        self.blocks_head_0.set_length((self.problems * self.nt * self.bits_per_symbol))



def argument_parser():
    description = 'Loopback through a simulated MIMO channel: random bits -> mimo_channel -> mimo_detector (N-way) -> ber_counter. Prints the bit error rate when the head block ends the stream. Headless: compile with grcc, run the .py.'
    parser = ArgumentParser(description=description)
    parser.add_argument(
        "--snr-db", dest="snr_db", type=eng_float, default=eng_notation.num_to_str(float(20)),
        help="Set SNR (dB) [default=%(default)r]")
    parser.add_argument(
        "--problems", dest="problems", type=intx, default=10000,
        help="Set Problems [default=%(default)r]")
    return parser


def main(top_block_cls=mimo_gpu_loopback, options=None):
    if options is None:
        options = argument_parser().parse_args()
    tb = top_block_cls(snr_db=options.snr_db, problems=options.problems)

    def sig_handler(sig=None, frame=None):
        tb.stop()
        tb.wait()
        snippets_main_after_stop(tb)
        sys.exit(0)

    signal.signal(signal.SIGINT, sig_handler)
    signal.signal(signal.SIGTERM, sig_handler)

    tb.start()

    tb.wait()
    snippets_main_after_stop(tb)

if __name__ == '__main__':
    main()
