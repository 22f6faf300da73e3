#!/usr/bin/env python3
# -*- coding: utf-8 -*-

#
# SPDX-License-Identifier: GPL-3.0
#
# GNU Radio Python Flow Graph
# Title: MIMO-OFDM loopback (transmit side, channel, receiver) with its block error rate
# Author: gr-mimo_gpu developers
# Description: The whole MIMO-OFDM link in one flowgraph: tb_source (LTE transport blocks, turbo coded) -> ofdm_tx -> ofdm_channel_model (3GPP EPA, CFO, noise; Doppler optional) -> ofdm_rx -> mimo_detector -> tb_stream_decoder -> a link monitor that prints the blocks, CRC failures and BLER when the flowgraph ends. Every block on the chosen backend; on CUDA the streams stay in GPU memory (device buffers) from the transport blocks to the decoded bits.
# GNU Radio version: 3.10.5.1

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




class ofdm_loopback(gr.top_block):

    def __init__(self, grid='lte1.4', snr=30, doppler=0, frames=200, backend='auto'):
        gr.top_block.__init__(self, "MIMO-OFDM loopback (transmit side, channel, receiver) with its block error rate", catch_exceptions=True)

        ##################################################
        # Parameters
        ##################################################
        self.grid = grid
        self.snr = snr
        self.doppler = doppler
        self.frames = frames
        self.backend = backend

        ##################################################
        # Variables
        ##################################################
        self.antennas = antennas = 2
        self.coded_bits = coded_bits = 2 * 6 * {"lte1.4": 72, "lte3": 180, "lte5": 300, "lte10": 600, "lte15": 900, "lte20": 1200, "nr20": 612, "nr40": 1272, "nr100": 3276}[grid] * antennas * 4
        self.tb_bits = tb_bits = coded_bits // 2 - 24

        ##################################################
        # Blocks
        ##################################################

        self.tx = mimo_gpu.ofdm_tx('lte1.4', antennas, '16qam', 2, 6, 'auto', True, pilot_positions=[0])
        self.source = mimo_gpu.tb_source(tb_bits, coded_bits, 4, 1, 0, 0, 64, frames, 'auto', True, 'turbo')
        self.sent = blocks.null_sink(gr.sizeof_char*tb_bits)
        self.rx = mimo_gpu.ofdm_rx('lte1.4', antennas, antennas, '16qam', 2, 6, 'hold', 'lmmse', 'auto', True, pilot_positions=[0], noise_per_antenna=True, across_frames=False, gpu_batch_speed=2.0)
        self.monitor = mimo_gpu.link_monitor(tb_bits, 100, 'loopback')
        self.detector = mimo_gpu.mimo_detector('mmse', antennas, antennas, '16qam', 'llr_clip={mmse_llr_clip},cublas={mmse_cublas}'.format(mmse_llr_clip=0, mmse_cublas=0), 0.01, 6, 'auto', 8400, 'erase', True)
        self.decoder = mimo_gpu.tb_stream_decoder(tb_bits, coded_bits, 4, 1, 0, (antennas * 4), 'max-log-map', 6, 0.75, 64, 'auto', 0, True, 'turbo')
        self.decoder.set_max_wait_ms(0)
        self.channel = mimo_gpu.ofdm_channel_model('lte1.4', antennas, antennas, 2, 6, 'epa', snr, 0.05, 64, 1, 0, 0, doppler, 'auto', True, pilot_positions=[0], antenna_noise_db=[])
        self.bler = blocks.null_sink(gr.sizeof_float*1)


        ##################################################
        # Connections
        ##################################################
        self.connect((self.channel, 1), (self.rx, 1))
        self.connect((self.channel, 0), (self.rx, 0))
        self.connect((self.decoder, 0), (self.monitor, 0))
        self.connect((self.detector, 0), (self.decoder, 0))
        self.connect((self.monitor, 1), (self.bler, 1))
        self.connect((self.monitor, 0), (self.bler, 0))
        self.connect((self.rx, 0), (self.detector, 0))
        self.connect((self.rx, 1), (self.detector, 1))
        self.connect((self.source, 1), (self.sent, 0))
        self.connect((self.source, 0), (self.tx, 0))
        self.connect((self.tx, 1), (self.channel, 1))
        self.connect((self.tx, 0), (self.channel, 0))


    def get_grid(self):
        return self.grid

    def set_grid(self, grid):
        self.grid = grid
        self.set_coded_bits(2 * 6 * {"lte1.4": 72, "lte3": 180, "lte5": 300, "lte10": 600, "lte15": 900, "lte20": 1200, "nr20": 612, "nr40": 1272, "nr100": 3276}[self.grid] * self.antennas * 4)

    def get_snr(self):
        return self.snr

    def set_snr(self, snr):
        self.snr = snr
        self.channel.set_snr_db(self.snr)

    def get_doppler(self):
        return self.doppler

    def set_doppler(self, doppler):
        self.doppler = doppler

    def get_frames(self):
        return self.frames

    def set_frames(self, frames):
        self.frames = frames

    def get_backend(self):
        return self.backend

    def set_backend(self, backend):
        self.backend = backend

    def get_antennas(self):
        return self.antennas

    def set_antennas(self, antennas):
        self.antennas = antennas
        self.set_coded_bits(2 * 6 * {"lte1.4": 72, "lte3": 180, "lte5": 300, "lte10": 600, "lte15": 900, "lte20": 1200, "nr20": 612, "nr40": 1272, "nr100": 3276}[self.grid] * self.antennas * 4)

    def get_coded_bits(self):
        return self.coded_bits

    def set_coded_bits(self, coded_bits):
        self.coded_bits = coded_bits
        self.set_tb_bits(self.coded_bits // 2 - 24)

    def get_tb_bits(self):
        return self.tb_bits

    def set_tb_bits(self, tb_bits):
        self.tb_bits = tb_bits



def argument_parser():
    description = 'The whole MIMO-OFDM link in one flowgraph: tb_source (LTE transport blocks, turbo coded) -> ofdm_tx -> ofdm_channel_model (3GPP EPA, CFO, noise; Doppler optional) -> ofdm_rx -> mimo_detector -> tb_stream_decoder -> a link monitor that prints the blocks, CRC failures and BLER when the flowgraph ends. Every block on the chosen backend; on CUDA the streams stay in GPU memory (device buffers) from the transport blocks to the decoded bits.'
    parser = ArgumentParser(description=description)
    parser.add_argument(
        "--grid", dest="grid", type=str, default='lte1.4',
        help="Set Grid [default=%(default)r]")
    parser.add_argument(
        "--snr", dest="snr", type=eng_float, default=eng_notation.num_to_str(float(30)),
        help="Set SNR (dB) [default=%(default)r]")
    parser.add_argument(
        "--doppler", dest="doppler", type=eng_float, default=eng_notation.num_to_str(float(0)),
        help="Set Max Doppler (Hz) [default=%(default)r]")
    parser.add_argument(
        "--frames", dest="frames", type=intx, default=200,
        help="Set Frames [default=%(default)r]")
    parser.add_argument(
        "--backend", dest="backend", type=str, default='auto',
        help="Set Backend [default=%(default)r]")
    return parser


def main(top_block_cls=ofdm_loopback, options=None):
    if options is None:
        options = argument_parser().parse_args()
    tb = top_block_cls(grid=options.grid, snr=options.snr, doppler=options.doppler, frames=options.frames, backend=options.backend)

    def sig_handler(sig=None, frame=None):
        tb.stop()
        tb.wait()

        sys.exit(0)

    signal.signal(signal.SIGINT, sig_handler)
    signal.signal(signal.SIGTERM, sig_handler)

    tb.start()

    tb.wait()


if __name__ == '__main__':
    main()
