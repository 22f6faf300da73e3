#!/usr/bin/env python3
# -*- coding: utf-8 -*-

#
# SPDX-License-Identifier: GPL-3.0
#
# GNU Radio Python Flow Graph
# Title: MIMO-OFDM 2x2 receiver on a USRP (B210 / X310)
# Author: gr-mimo_gpu developers
# Description: Two receive channels of a UHD device -> ofdm_rx (LTE 1.4 MHz grid, 2 streams, 16-QAM) -> mimo_detector (MMSE) -> LLRs to a file. Pair with ofdm_usrp_tx_2x2 on a second radio.
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




class ofdm_usrp_rx_2x2(gr.top_block):

    def __init__(self, freq=2.45e9, gain=30, device='type=b200', llr_file='/tmp/ofdm_llrs.f32'):
        gr.top_block.__init__(self, "MIMO-OFDM 2x2 receiver on a USRP (B210 / X310)", catch_exceptions=True)

        ##################################################
        # Parameters
        ##################################################
        self.freq = freq
        self.gain = gain
        self.device = device
        self.llr_file = llr_file

        ##################################################
        # Variables
        ##################################################
        self.samp_rate = samp_rate = 1.92e6

        ##################################################
        # Blocks
        ##################################################

        self.uhd_usrp_source_0 = uhd.usrp_source(
            ",".join((device, '')),
            uhd.stream_args(
                cpu_format="fc32",
                args='',
                channels=list(range(0,2)),
            ),
        )
        self.uhd_usrp_source_0.set_samp_rate(samp_rate)
        self.uhd_usrp_source_0.set_time_now(uhd.time_spec(time.time()), uhd.ALL_MBOARDS)

        self.uhd_usrp_source_0.set_center_freq(freq, 0)
        self.uhd_usrp_source_0.set_antenna('RX2', 0)
        self.uhd_usrp_source_0.set_gain(gain, 0)

        self.uhd_usrp_source_0.set_center_freq(freq, 1)
        self.uhd_usrp_source_0.set_antenna('RX2', 1)
        self.uhd_usrp_source_0.set_gain(gain, 1)
        self.mimo_gpu_ofdm_rx_0 = mimo_gpu.ofdm_rx('lte1.4', 2, 2, '16qam', 2, 6, 'hold', 'lmmse', 'auto')
        self.mimo_gpu_mimo_detector_0 = mimo_gpu.mimo_detector('mmse', 2, 2, '16qam', 'llr_clip={mmse_llr_clip},cublas={mmse_cublas}'.format(nway_passes=1, nway_llr_clip=8, mtt_llr_clip=0, ot_llr_clip=8, fsd_full_levels=0, fsd_llr_clip=8, sfsd_niter=0, sfsd_full_levels=0, sfsd_llr_clip=8, kbest_k=16, kbest_llr_clip=8, mmse_llr_clip=0, mmse_cublas=0, mmse_cg_iterations=3, mmse_cg_llr_clip=0, mmse_cg_cublas=0, sumis_ns=0, sumis_stage2=1, sumis_llr_clip=0), 0.01, 6, 'auto', 8400, 'erase')
        self.blocks_file_sink_0 = blocks.file_sink(gr.sizeof_float*8, llr_file, False)
        self.blocks_file_sink_0.set_unbuffered(False)


        ##################################################
        # Connections
        ##################################################
        self.connect((self.mimo_gpu_mimo_detector_0, 0), (self.blocks_file_sink_0, 0))
        self.connect((self.mimo_gpu_ofdm_rx_0, 0), (self.mimo_gpu_mimo_detector_0, 0))
        self.connect((self.mimo_gpu_ofdm_rx_0, 1), (self.mimo_gpu_mimo_detector_0, 1))
        self.connect((self.uhd_usrp_source_0, 0), (self.mimo_gpu_ofdm_rx_0, 0))
        self.connect((self.uhd_usrp_source_0, 1), (self.mimo_gpu_ofdm_rx_0, 1))


    def get_freq(self):
        return self.freq

    def set_freq(self, freq):
        self.freq = freq
        self.uhd_usrp_source_0.set_center_freq(self.freq, 0)
        self.uhd_usrp_source_0.set_center_freq(self.freq, 1)

    def get_gain(self):
        return self.gain

    def set_gain(self, gain):
        self.gain = gain
        self.uhd_usrp_source_0.set_gain(self.gain, 0)
        self.uhd_usrp_source_0.set_gain(self.gain, 1)

    def get_device(self):
        return self.device

    def set_device(self, device):
        self.device = device

    def get_llr_file(self):
        return self.llr_file

    def set_llr_file(self, llr_file):
        self.llr_file = llr_file
        self.blocks_file_sink_0.open(self.llr_file)

    def get_samp_rate(self):
        return self.samp_rate

    def set_samp_rate(self, samp_rate):
        self.samp_rate = samp_rate
        self.uhd_usrp_source_0.set_samp_rate(self.samp_rate)



def argument_parser():
    description = 'Two receive channels of a UHD device -> ofdm_rx (LTE 1.4 MHz grid, 2 streams, 16-QAM) -> mimo_detector (MMSE) -> LLRs to a file. Pair with ofdm_usrp_tx_2x2 on a second radio.'
    parser = ArgumentParser(description=description)
    parser.add_argument(
        "--freq", dest="freq", type=eng_float, default=eng_notation.num_to_str(float(2.45e9)),
        help="Set Center frequency (Hz) [default=%(default)r]")
    parser.add_argument(
        "--gain", dest="gain", type=eng_float, default=eng_notation.num_to_str(float(30)),
        help="Set RX gain (dB) [default=%(default)r]")
    parser.add_argument(
        "--device", dest="device", type=str, default='type=b200',
        help="Set UHD device address [default=%(default)r]")
    parser.add_argument(
        "--llr-file", dest="llr_file", type=str, default='/tmp/ofdm_llrs.f32',
        help="Set LLR output file [default=%(default)r]")
    return parser


def main(top_block_cls=ofdm_usrp_rx_2x2, options=None):
    if options is None:
        options = argument_parser().parse_args()
    tb = top_block_cls(freq=options.freq, gain=options.gain, device=options.device, llr_file=options.llr_file)

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
