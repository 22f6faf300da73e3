#!/usr/bin/env python3
# -*- coding: utf-8 -*-

#
# SPDX-License-Identifier: GPL-3.0
#
# GNU Radio Python Flow Graph
# Title: MIMO GPU iterative receiver loopback (MMSE-PIC + turbo, BLER)
# Author: gr-mimo_gpu developers
# Description: Iterative detection and decoding over a simulated 4x4 16-QAM channel: tb_source (LTE turbo-coded transport blocks) -> mimo_channel_source -> idd_receiver (soft MMSE-PIC and the turbo decoder exchanging extrinsic LLRs) -> ber_counter. Prints the block error rate and the passes when the stream ends. Headless: compile with grcc, run the .py.
# GNU Radio version: 3.10.5.1

from gnuradio import gr
from gnuradio.filter import firdes
from gnuradio.fft import window
import sys
import signal
from argparse import ArgumentParser
from gnuradio.eng_arg import eng_float, intx
from gnuradio import eng_notation
from gnuradio import mimo_gpu


def snipfcn_print_bler(self):
    rx = self.mimo_gpu_idd_receiver_0
    print("idd_loopback: {} blocks, {} CRC failures, {} block errors, {:.2f} passes a block".format(
        rx.blocks(), rx.crc_failures(), self.mimo_gpu_ber_counter_0.item_errors(),
        rx.passes() / max(rx.blocks(), 1)))


def snippets_main_after_stop(tb):
    snipfcn_print_bler(tb)


class idd_loopback(gr.top_block):

    def __init__(self, snr_db=6, blocks=200, outer=3):
        gr.top_block.__init__(self, "MIMO GPU iterative receiver loopback (MMSE-PIC + turbo, BLER)", catch_exceptions=True)

        ##################################################
        # Parameters
        ##################################################
        self.snr_db = snr_db
        self.blocks = blocks
        self.outer = outer

        ##################################################
        # Variables
        ##################################################
        self.G = G = 2048
        self.A = A = 1000

        ##################################################
        # Blocks
        ##################################################

        self.mimo_gpu_tb_source_0 = mimo_gpu.tb_source(A, G, 4, 4, 0, 7, 64, blocks, 'auto', False, 'turbo')
        self.mimo_gpu_mimo_channel_source_0 = mimo_gpu.mimo_channel_source(4, 4, '16qam', snr_db, 3, 1, 0, 'auto', 4096, False, G)
        self.mimo_gpu_idd_receiver_0 = mimo_gpu.idd_receiver('mmse', 4, 4, '16qam', A, G, '', 0, outer, 6, 0.1, 1, 'auto', 32, 'turbo')
        self.mimo_gpu_ber_counter_0 = mimo_gpu.ber_counter(A, False, 'hard')


        ##################################################
        # Connections
        ##################################################
        self.connect((self.mimo_gpu_idd_receiver_0, 0), (self.mimo_gpu_ber_counter_0, 1))
        self.connect((self.mimo_gpu_mimo_channel_source_0, 1), (self.mimo_gpu_idd_receiver_0, 1))
        self.connect((self.mimo_gpu_mimo_channel_source_0, 0), (self.mimo_gpu_idd_receiver_0, 0))
        self.connect((self.mimo_gpu_tb_source_0, 1), (self.mimo_gpu_ber_counter_0, 0))
        self.connect((self.mimo_gpu_tb_source_0, 0), (self.mimo_gpu_mimo_channel_source_0, 0))


    def get_snr_db(self):
        return self.snr_db

    def set_snr_db(self, snr_db):
        self.snr_db = snr_db
        self.mimo_gpu_mimo_channel_source_0.set_snr_db(self.snr_db)

    def get_blocks(self):
        return self.blocks

    def set_blocks(self, blocks):
        self.blocks = blocks

    def get_outer(self):
        return self.outer

    def set_outer(self, outer):
        self.outer = outer
        self.mimo_gpu_idd_receiver_0.set_outer_iterations(self.outer)

    def get_G(self):
        return self.G

    def set_G(self, G):
        self.G = G

    def get_A(self):
        return self.A

    def set_A(self, A):
        self.A = A



def argument_parser():
    description = 'Iterative detection and decoding over a simulated 4x4 16-QAM channel: tb_source (LTE turbo-coded transport blocks) -> mimo_channel_source -> idd_receiver (soft MMSE-PIC and the turbo decoder exchanging extrinsic LLRs) -> ber_counter. Prints the block error rate and the passes when the stream ends. Headless: compile with grcc, run the .py.'
    parser = ArgumentParser(description=description)
    parser.add_argument(
        "--snr-db", dest="snr_db", type=eng_float, default=eng_notation.num_to_str(float(6)),
        help="Set SNR (dB) [default=%(default)r]")
    parser.add_argument(
        "--blocks", dest="blocks", type=intx, default=200,
        help="Set Transport blocks [default=%(default)r]")
    parser.add_argument(
        "--outer", dest="outer", type=intx, default=3,
        help="Set Outer iterations [default=%(default)r]")
    return parser


def main(top_block_cls=idd_loopback, options=None):
    if options is None:
        options = argument_parser().parse_args()
    tb = top_block_cls(snr_db=options.snr_db, blocks=options.blocks, outer=options.outer)

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
