#!/usr/bin/python3
"""make_bad_models.py - broken ONNX models for loom compile's error tests.

Writes OUT/NAME.onnx (default OUT = build/models-bad), each a small model
with one defect, and OUT/expect.txt: per file, the text the error message
of `loom compile` must contain (the node, op type or tensor it names):

    unknown_op          a node of an op type no kernel implements
    wrong_attr_type     Conv with 'strides' given as FLOATS
    shape_mismatch      Add of [2,3] and [4,5] (no broadcast)
    missing_initializer a Conv whose weight tensor nobody produces
    cycle               two nodes reading each other's output
    truncated           a valid model cut in half
    bad_rank            Conv of a rank-2 tensor

Needs Debian's python3-onnx; run with /usr/bin/python3.
"""
import os
import sys

try:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError as e:
    sys.exit("make_bad_models.py: %s (needs python3-onnx; run with /usr/bin/python3)" % e)


def model(nodes, inputs, outputs, inits=()):
    g = helper.make_graph(nodes, "bad", inputs, outputs, initializer=list(inits))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def vi(name, shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "build/models-bad"
    os.makedirs(out, exist_ok=True)
    w = numpy_helper.from_array(np.ones((4, 3, 3, 3), np.float32), "w")
    cases = {}
    cases["unknown_op"] = (model([helper.make_node("FrobnicateTensor", ["x"], ["y"], name="frob_1")],
                                 [vi("x", [1, 3, 8, 8])], [vi("y", [1, 3, 8, 8])]),
                           "frob_1: operator FrobnicateTensor (opset 13)")
    n = helper.make_node("Conv", ["x", "w"], ["y"], name="conv_bad_attr")
    n.attribute.append(helper.make_attribute("strides", [1.0, 1.0]))
    cases["wrong_attr_type"] = (model([n], [vi("x", [1, 3, 8, 8])], [vi("y", [1, 4, 6, 6])], [w]),
                                "conv_bad_attr")
    cases["shape_mismatch"] = (model([helper.make_node("Add", ["a", "b"], ["y"], name="add_mismatch")],
                                     [vi("a", [2, 3]), vi("b", [4, 5])], [vi("y", [2, 3])]),
                               "add_mismatch")
    cases["missing_initializer"] = (model([helper.make_node("Conv", ["x", "w_gone"], ["y"], name="conv_no_w")],
                                          [vi("x", [1, 3, 8, 8])], [vi("y", [1, 4, 6, 6])]),
                                    "w_gone")
    cases["cycle"] = (model([helper.make_node("Relu", ["b"], ["a"], name="relu_a"),
                             helper.make_node("Relu", ["a"], ["b"], name="relu_b"),
                             helper.make_node("Add", ["x", "b"], ["y"], name="add_out")],
                            [vi("x", [1, 4])], [vi("y", [1, 4])]),
                      "cycle")
    cases["bad_rank"] = (model([helper.make_node("Conv", ["x", "w"], ["y"], name="conv_rank2")],
                               [vi("x", [3, 8])], [vi("y", [1, 4, 6, 6])], [w]),
                         "conv_rank2")
    good = model([helper.make_node("Relu", ["x"], ["y"], name="relu")], [vi("x", [1, 4])], [vi("y", [1, 4])])
    with open(os.path.join(out, "expect.txt"), "w") as f:
        for name, (m, text) in cases.items():
            with open(os.path.join(out, name + ".onnx"), "wb") as g:
                g.write(m.SerializeToString())
            f.write("%s.onnx\t%s\n" % (name, text))
        data = good.SerializeToString()
        with open(os.path.join(out, "truncated.onnx"), "wb") as g:
            g.write(data[: len(data) // 2])
        f.write("truncated.onnx\ttruncated.onnx\n")
    print("make_bad_models: %d models in %s" % (len(cases) + 1, out))


if __name__ == "__main__":
    main()
