#!/usr/bin/python3
"""make_bad_inputs.py - data sets with one defect each, for the bad-input
suite (tests/models/bad_input.sh), written for a model of one float input
named INPUT of shape DIMS (e.g. the digits CNN: input 16x1x8x8):

    OUT/shape/input_0.pb    the input with its first dimension cut to 1
    OUT/type/input_0.pb     the right shape as int64
    OUT/extra/              input_0.pb and a second tensor input_1.pb
    OUT/missing/            no input_0.pb at all
    OUT/renamed/input_0.pb  the right type and shape, named 'image'
    OUT/nonfinite/input_0.pb  the right input with 3 NaN and 2 +Inf values

    /usr/bin/python3 tests/models/make_bad_inputs.py OUT INPUT 16x1x8x8

Needs Debian's python3-onnx (as scripts/make_bad_models.py does).
"""
import os
import sys

try:
    import numpy as np
    from onnx import numpy_helper
except ImportError as e:
    sys.exit("make_bad_inputs.py: %s (needs python3-onnx; run with /usr/bin/python3)" % e)


def write(out, case, k, a, name):
    d = os.path.join(out, case)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "input_%d.pb" % k), "wb") as f:
        f.write(numpy_helper.from_array(a, name).SerializeToString())


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: make_bad_inputs.py OUT INPUT_NAME D0xD1x...")
    out, name = sys.argv[1], sys.argv[2]
    dims = [int(d) for d in sys.argv[3].split("x")]
    x = np.random.RandomState(1).randn(*dims).astype(np.float32)
    write(out, "shape", 0, x[:1] if dims[0] > 1 else np.concatenate([x, x]), name)
    write(out, "type", 0, x.astype(np.int64), name)
    write(out, "extra", 0, x, name)
    write(out, "extra", 1, x, name + "_2")
    os.makedirs(os.path.join(out, "missing"), exist_ok=True)
    write(out, "renamed", 0, x, "image")
    y = x.copy().reshape(-1)
    y[:3] = np.nan
    y[3:5] = np.inf
    write(out, "nonfinite", 0, y.reshape(dims), name)


main()
