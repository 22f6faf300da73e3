#
# Copyright 2008,2009 Free Software Foundation, Inc.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#

# The presence of this file turns this directory into a Python package

'''
GPU (CUDA) MIMO receiver blocks for GNU Radio: mimo_channel, mimo_detector (every
detector family by name: nway, ml, mtt, ot, ...), qr_decomposition and nway_detector
(the N-way detector on QR items), ber_counter, and the LTE turbo code:
turbo_encoder, turbo_decoder (code blocks on streams), tb_encoder, tb_decoder
(transport blocks on PDUs), tb_source, tb_stream_decoder (transport blocks on
streams). Each runs on the CPU where no GPU is usable.
mimo_gpu.core runs the same algorithms on numpy arrays (core.detector(name, nr, nt, ...)).
'''
import os

# import pybind11 generated symbols into the mimo_gpu namespace
try:
    # this might fail if the module is python-only
    from .mimo_gpu_python import *
    from .mimo_gpu_python import core
except ModuleNotFoundError:
    pass

# import any pure python here
from .constellation_probe import constellation_probe
from .link_monitor import link_monitor
#
