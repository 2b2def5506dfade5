#!/usr/bin/python3
"""odd_names.py - a model whose NPU layer is named with quotes, a
backslash, a newline, a tab and non-ASCII letters (tests/models/run_cli.sh):
the `loom run --trace` JSON and the --profile-csv CSV must give the name
back exactly.

    odd_names.py make OUT.onnx          a Conv + Relu model, the Conv so named
    odd_names.py check TRACE.json PROFILE.csv
"""

import csv
import json
import sys

NAME = 'conv "q" \\ back\nnew\ttab \u00e9 \u2713'


def make(path):
    import numpy as np
    import onnx
    from onnx import helper, TensorProto, numpy_helper
    w = numpy_helper.from_array(np.random.RandomState(0).randn(8, 8, 3, 3).astype(np.float32) * 0.1, "W")
    g = helper.make_graph([helper.make_node("Conv", ["x", "W"], ["y"], name=NAME, pads=[1, 1, 1, 1]),
                           helper.make_node("Relu", ["y"], ["z"], name="relu")], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 8, 8])],
                          [helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 8, 8, 8])], [w])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)


def check(trace, table):
    with open(trace, encoding="utf-8") as f:
        ev = json.load(f)["traceEvents"]
    with open(table, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    slices = [e for e in ev if e["ph"] == "X" and e["name"] == NAME]
    if not slices:
        sys.exit("no slice named %r: %r" % (NAME, [e["name"] for e in ev if e["ph"] == "X"]))
    if rows[0]["layer"] != NAME:
        sys.exit("CSV layer %r, not %r" % (rows[0]["layer"], NAME))
    print("%d slices and the CSV row named %s" % (len(slices), ascii(NAME)))


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2])
    else:
        check(sys.argv[2], sys.argv[3])
