#!/usr/bin/env python3
# -*- coding: utf-8 -*-

#
# SPDX-License-Identifier: GPL-3.0
#
# GNU Radio Python Flow Graph
# Title: MIMO-OFDM 2x2 transmitter on a USRP (B210 / X310)
# Author: gr-mimo_gpu developers
# Description: Random LTE transport blocks (tb_source) -> ofdm_tx (LTE 1.4 MHz grid, 2 streams, 16-QAM) -> two transmit channels of a UHD device.
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
from gnuradio import uhd
import time




class ofdm_usrp_tx_2x2(gr.top_block):

    def __init__(self, freq=2.45e9, gain=40, device='type=b200', tb_bits=3432):
        gr.top_block.__init__(self, "MIMO-OFDM 2x2 transmitter on a USRP (B210 / X310)", catch_exceptions=True)

        ##################################################
        # Parameters
        ##################################################
        self.freq = freq
        self.gain = gain
        self.device = device
        self.tb_bits = tb_bits

        ##################################################
        # Variables
        ##################################################
        self.samp_rate = samp_rate = 1.92e6
        self.frame_bits = frame_bits = 2 * 72 * 6 * 2 * 4

        ##################################################
        # Blocks
        ##################################################

        self.uhd_usrp_sink_0 = uhd.usrp_sink(
            ",".join((device, '')),
            uhd.stream_args(
                cpu_format="fc32",
                args='',
                channels=list(range(0,2)),
            ),
            '',
        )
        self.uhd_usrp_sink_0.set_samp_rate(samp_rate)
        self.uhd_usrp_sink_0.set_time_now(uhd.time_spec(time.time()), uhd.ALL_MBOARDS)

        self.uhd_usrp_sink_0.set_center_freq(freq, 0)
        self.uhd_usrp_sink_0.set_antenna('TX/RX', 0)
        self.uhd_usrp_sink_0.set_gain(gain, 0)

        self.uhd_usrp_sink_0.set_center_freq(freq, 1)
        self.uhd_usrp_sink_0.set_antenna('TX/RX', 1)
        self.uhd_usrp_sink_0.set_gain(gain, 1)
        self.mimo_gpu_tb_source_0 = mimo_gpu.tb_source(tb_bits, frame_bits, 4, 1, 0, 1, 64, 0, 'cpu', False, 'turbo')
        self.mimo_gpu_ofdm_tx_0 = mimo_gpu.ofdm_tx('lte1.4', 2, '16qam', 2, 6, 'auto', True, pilot_positions=[0])
        self.blocks_null_sink_0 = blocks.null_sink(gr.sizeof_char*tb_bits)
        self.blocks_multiply_const_vxx_1 = blocks.multiply_const_cc(0.3)
        self.blocks_multiply_const_vxx_0 = blocks.multiply_const_cc(0.3)


        ##################################################
        # Connections
        ##################################################
        self.connect((self.blocks_multiply_const_vxx_0, 0), (self.uhd_usrp_sink_0, 0))
        self.connect((self.blocks_multiply_const_vxx_1, 0), (self.uhd_usrp_sink_0, 1))
        self.connect((self.mimo_gpu_ofdm_tx_0, 0), (self.blocks_multiply_const_vxx_0, 0))
        self.connect((self.mimo_gpu_ofdm_tx_0, 1), (self.blocks_multiply_const_vxx_1, 0))
        self.connect((self.mimo_gpu_tb_source_0, 1), (self.blocks_null_sink_0, 0))
        self.connect((self.mimo_gpu_tb_source_0, 0), (self.mimo_gpu_ofdm_tx_0, 0))


    def get_freq(self):
        return self.freq

    def set_freq(self, freq):
        self.freq = freq
        self.uhd_usrp_sink_0.set_center_freq(self.freq, 0)
        self.uhd_usrp_sink_0.set_center_freq(self.freq, 1)

    def get_gain(self):
        return self.gain

    def set_gain(self, gain):
        self.gain = gain
        self.uhd_usrp_sink_0.set_gain(self.gain, 0)
        self.uhd_usrp_sink_0.set_gain(self.gain, 1)

    def get_device(self):
        return self.device

    def set_device(self, device):
        self.device = device

    def get_tb_bits(self):
        return self.tb_bits

    def set_tb_bits(self, tb_bits):
        self.tb_bits = tb_bits

    def get_samp_rate(self):
        return self.samp_rate

    def set_samp_rate(self, samp_rate):
        self.samp_rate = samp_rate
        self.uhd_usrp_sink_0.set_samp_rate(self.samp_rate)

    def get_frame_bits(self):
        return self.frame_bits

    def set_frame_bits(self, frame_bits):
        self.frame_bits = frame_bits



def argument_parser():
    description = 'Random LTE transport blocks (tb_source) -> ofdm_tx (LTE 1.4 MHz grid, 2 streams, 16-QAM) -> two transmit channels of a UHD device.'
    parser = ArgumentParser(description=description)
    parser.add_argument(
        "--freq", dest="freq", type=eng_float, default=eng_notation.num_to_str(float(2.45e9)),
        help="Set Center frequency (Hz) [default=%(default)r]")
    parser.add_argument(
        "--gain", dest="gain", type=eng_float, default=eng_notation.num_to_str(float(40)),
        help="Set TX gain (dB) [default=%(default)r]")
    parser.add_argument(
        "--device", dest="device", type=str, default='type=b200',
        help="Set UHD device address [default=%(default)r]")
    parser.add_argument(
        "--tb-bits", dest="tb_bits", type=intx, default=3432,
        help="Set Transport block bits (A) [default=%(default)r]")
    return parser


def main(top_block_cls=ofdm_usrp_tx_2x2, options=None):
    if options is None:
        options = argument_parser().parse_args()
    tb = top_block_cls(freq=options.freq, gain=options.gain, device=options.device, tb_bits=options.tb_bits)

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
