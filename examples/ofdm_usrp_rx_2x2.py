#!/usr/bin/env python3
# -*- coding: utf-8 -*-

#
# SPDX-License-Identifier: GPL-3.0
#
# GNU Radio Python Flow Graph
# Title: MIMO-OFDM 2x2 receiver on a USRP (B210 / X310)
# Author: gr-mimo_gpu developers
# Description: Two receive channels of a UHD device (B210, or an X310 with two daughterboards; LTE 1.4 MHz grid, 2 streams, 16-QAM, one transport block per frame) -> ofdm_rx -> mimo_detector -> tb_stream_decoder, with the equalised constellation, the block error rate and the throughput live. Pair with ofdm_usrp_tx_2x2 on a second radio (the same transport block size). On CUDA the receiver runs on the GPU with device buffers between its blocks.
# GNU Radio version: 3.10.5.1

from packaging.version import Version as StrictVersion

if __name__ == '__main__':
    import ctypes
    import sys
    if sys.platform.startswith('linux'):
        try:
            x11 = ctypes.cdll.LoadLibrary('libX11.so')
            x11.XInitThreads()
        except:
            print("Warning: failed to XInitThreads()")

from PyQt5 import Qt
from gnuradio import qtgui
import sip
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



from gnuradio import qtgui

class ofdm_usrp_rx_2x2(gr.top_block, Qt.QWidget):

    def __init__(self, freq=2.45e9, gain=30, device='type=b200', tb_bits=3432, backend='auto'):
        gr.top_block.__init__(self, "MIMO-OFDM 2x2 receiver on a USRP (B210 / X310)", catch_exceptions=True)
        Qt.QWidget.__init__(self)
        self.setWindowTitle("MIMO-OFDM 2x2 receiver on a USRP (B210 / X310)")
        qtgui.util.check_set_qss()
        try:
            self.setWindowIcon(Qt.QIcon.fromTheme('gnuradio-grc'))
        except:
            pass
        self.top_scroll_layout = Qt.QVBoxLayout()
        self.setLayout(self.top_scroll_layout)
        self.top_scroll = Qt.QScrollArea()
        self.top_scroll.setFrameStyle(Qt.QFrame.NoFrame)
        self.top_scroll_layout.addWidget(self.top_scroll)
        self.top_scroll.setWidgetResizable(True)
        self.top_widget = Qt.QWidget()
        self.top_scroll.setWidget(self.top_widget)
        self.top_layout = Qt.QVBoxLayout(self.top_widget)
        self.top_grid_layout = Qt.QGridLayout()
        self.top_layout.addLayout(self.top_grid_layout)

        self.settings = Qt.QSettings("GNU Radio", "ofdm_usrp_rx_2x2")

        try:
            if StrictVersion(Qt.qVersion()) < StrictVersion("5.0.0"):
                self.restoreGeometry(self.settings.value("geometry").toByteArray())
            else:
                self.restoreGeometry(self.settings.value("geometry"))
        except:
            pass

        ##################################################
        # Parameters
        ##################################################
        self.freq = freq
        self.gain = gain
        self.device = device
        self.tb_bits = tb_bits
        self.backend = backend

        ##################################################
        # Variables
        ##################################################
        self.samp_rate = samp_rate = 1.92e6
        self.coded_bits = coded_bits = 6912

        ##################################################
        # Blocks
        ##################################################

        self.uhd_source = uhd.usrp_source(
            ",".join((device, '')),
            uhd.stream_args(
                cpu_format="fc32",
                args='',
                channels=list(range(0,2)),
            ),
        )
        self.uhd_source.set_samp_rate(samp_rate)
        self.uhd_source.set_time_now(uhd.time_spec(time.time()), uhd.ALL_MBOARDS)

        self.uhd_source.set_center_freq(freq, 0)
        self.uhd_source.set_antenna("RX2", 0)
        self.uhd_source.set_gain(gain, 0)

        self.uhd_source.set_center_freq(freq, 1)
        self.uhd_source.set_antenna("RX2", 1)
        self.uhd_source.set_gain(gain, 1)
        self.rx = mimo_gpu.ofdm_rx('lte1.4', 2, 2, '16qam', 2, 6, 'hold', 'lmmse', 'auto', True, pilot_positions=[0], noise_per_antenna=True, across_frames=False, gpu_batch_speed=2.0)
        self.probe = mimo_gpu.constellation_probe(2, 2, 6, 8, 0.01, '')
        self.monitor = mimo_gpu.link_monitor(tb_bits, 100, 'usrp')
        self.link_numbers = qtgui.number_sink(
            gr.sizeof_float,
            0,
            qtgui.NUM_GRAPH_HORIZ,
            2,
            None # parent
        )
        self.link_numbers.set_update_time(0.10)
        self.link_numbers.set_title("Link")

        labels = ['BLER', 'Throughput', '', '', '',
            '', '', '', '', '']
        units = ['', 'Mbit/s', '', '', '',
            '', '', '', '', '']
        colors = [("black", "black"), ("black", "black"), ("black", "black"), ("black", "black"), ("black", "black"),
            ("black", "black"), ("black", "black"), ("black", "black"), ("black", "black"), ("black", "black")]
        factor = [1, 1, 1, 1, 1,
            1, 1, 1, 1, 1]

        for i in range(2):
            self.link_numbers.set_min(i, 0)
            self.link_numbers.set_max(i, 1)
            self.link_numbers.set_color(i, colors[i][0], colors[i][1])
            if len(labels[i]) == 0:
                self.link_numbers.set_label(i, "Data {0}".format(i))
            else:
                self.link_numbers.set_label(i, labels[i])
            self.link_numbers.set_unit(i, units[i])
            self.link_numbers.set_factor(i, factor[i])

        self.link_numbers.enable_autoscale(False)
        self._link_numbers_win = sip.wrapinstance(self.link_numbers.qwidget(), Qt.QWidget)
        self.top_layout.addWidget(self._link_numbers_win)
        self.detector = mimo_gpu.mimo_detector('mmse', 2, 2, '16qam', 'llr_clip={mmse_llr_clip},cublas={mmse_cublas}'.format(mmse_llr_clip=0, mmse_cublas=0), 0.01, 6, 'auto', 8400, 'erase', True)
        self.decoder = mimo_gpu.tb_stream_decoder(tb_bits, coded_bits, 4, 1, 0, 8, 'max-log-map', 6, 0.75, 64, 'auto', 0, True, 'turbo')
        self.decoder.set_max_wait_ms(0)
        self.constellation = qtgui.const_sink_c(
            1024, #size
            "Equalised symbols (16-QAM)", #name
            1, #number of inputs
            None # parent
        )
        self.constellation.set_update_time(0.10)
        self.constellation.set_y_axis((-1.5), 1.5)
        self.constellation.set_x_axis((-1.5), 1.5)
        self.constellation.set_trigger_mode(qtgui.TRIG_MODE_FREE, qtgui.TRIG_SLOPE_POS, 0.0, 0, "")
        self.constellation.enable_autoscale(False)
        self.constellation.enable_grid(True)
        self.constellation.enable_axis_labels(True)


        labels = ['', '', '', '', '',
            '', '', '', '', '']
        widths = [1, 1, 1, 1, 1,
            1, 1, 1, 1, 1]
        colors = ["blue", "red", "red", "red", "red",
            "red", "red", "red", "red", "red"]
        styles = [0, 0, 0, 0, 0,
            0, 0, 0, 0, 0]
        markers = [0, 0, 0, 0, 0,
            0, 0, 0, 0, 0]
        alphas = [1.0, 1.0, 1.0, 1.0, 1.0,
            1.0, 1.0, 1.0, 1.0, 1.0]

        for i in range(1):
            if len(labels[i]) == 0:
                self.constellation.set_line_label(i, "Data {0}".format(i))
            else:
                self.constellation.set_line_label(i, labels[i])
            self.constellation.set_line_width(i, widths[i])
            self.constellation.set_line_color(i, colors[i])
            self.constellation.set_line_style(i, styles[i])
            self.constellation.set_line_marker(i, markers[i])
            self.constellation.set_line_alpha(i, alphas[i])

        self._constellation_win = sip.wrapinstance(self.constellation.qwidget(), Qt.QWidget)
        self.top_layout.addWidget(self._constellation_win)


        ##################################################
        # Connections
        ##################################################
        self.connect((self.decoder, 0), (self.monitor, 0))
        self.connect((self.detector, 0), (self.decoder, 0))
        self.connect((self.monitor, 0), (self.link_numbers, 0))
        self.connect((self.monitor, 1), (self.link_numbers, 1))
        self.connect((self.probe, 0), (self.constellation, 0))
        self.connect((self.rx, 1), (self.detector, 1))
        self.connect((self.rx, 0), (self.detector, 0))
        self.connect((self.rx, 1), (self.probe, 1))
        self.connect((self.rx, 0), (self.probe, 0))
        self.connect((self.uhd_source, 0), (self.rx, 0))
        self.connect((self.uhd_source, 1), (self.rx, 1))


    def closeEvent(self, event):
        self.settings = Qt.QSettings("GNU Radio", "ofdm_usrp_rx_2x2")
        self.settings.setValue("geometry", self.saveGeometry())
        self.stop()
        self.wait()

        event.accept()

    def get_freq(self):
        return self.freq

    def set_freq(self, freq):
        self.freq = freq
        self.uhd_source.set_center_freq(self.freq, 0)
        self.uhd_source.set_center_freq(self.freq, 1)

    def get_gain(self):
        return self.gain

    def set_gain(self, gain):
        self.gain = gain
        self.uhd_source.set_gain(self.gain, 0)
        self.uhd_source.set_gain(self.gain, 1)

    def get_device(self):
        return self.device

    def set_device(self, device):
        self.device = device

    def get_tb_bits(self):
        return self.tb_bits

    def set_tb_bits(self, tb_bits):
        self.tb_bits = tb_bits

    def get_backend(self):
        return self.backend

    def set_backend(self, backend):
        self.backend = backend

    def get_samp_rate(self):
        return self.samp_rate

    def set_samp_rate(self, samp_rate):
        self.samp_rate = samp_rate
        self.uhd_source.set_samp_rate(self.samp_rate)

    def get_coded_bits(self):
        return self.coded_bits

    def set_coded_bits(self, coded_bits):
        self.coded_bits = coded_bits



def argument_parser():
    description = 'Two receive channels of a UHD device (B210, or an X310 with two daughterboards; LTE 1.4 MHz grid, 2 streams, 16-QAM, one transport block per frame) -> ofdm_rx -> mimo_detector -> tb_stream_decoder, with the equalised constellation, the block error rate and the throughput live. Pair with ofdm_usrp_tx_2x2 on a second radio (the same transport block size). On CUDA the receiver runs on the GPU with device buffers between its blocks.'
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
        "--tb-bits", dest="tb_bits", type=intx, default=3432,
        help="Set Transport block bits (A) [default=%(default)r]")
    parser.add_argument(
        "--backend", dest="backend", type=str, default='auto',
        help="Set Backend [default=%(default)r]")
    return parser


def main(top_block_cls=ofdm_usrp_rx_2x2, options=None):
    if options is None:
        options = argument_parser().parse_args()

    if StrictVersion("4.5.0") <= StrictVersion(Qt.qVersion()) < StrictVersion("5.0.0"):
        style = gr.prefs().get_string('qtgui', 'style', 'raster')
        Qt.QApplication.setGraphicsSystem(style)
    qapp = Qt.QApplication(sys.argv)

    tb = top_block_cls(freq=options.freq, gain=options.gain, device=options.device, tb_bits=options.tb_bits, backend=options.backend)

    tb.start()

    tb.show()

    def sig_handler(sig=None, frame=None):
        tb.stop()
        tb.wait()

        Qt.QApplication.quit()

    signal.signal(signal.SIGINT, sig_handler)
    signal.signal(signal.SIGTERM, sig_handler)

    timer = Qt.QTimer()
    timer.start(500)
    timer.timeout.connect(lambda: None)

    qapp.exec_()

if __name__ == '__main__':
    main()
