#!/usr/bin/python3
"""export_models.py - real model architectures as ONNX test-case folders.

Exports torchvision's squeezenet1_1, mobilenet_v2, resnet18,
mobilenet_v3_small, shufflenet_v2_x0_5 and regnet_x_400mf (random weights, batch 1,
3x224x224), a small CNN trained here on scikit-learn's digits data set and
a tiny transformer block with PyTorch's ONNX exporter, each into a folder
in the layout of ONNX's backend tests, the one `loom test-onnx` runs:

    OUT/NAME/model.onnx
    OUT/NAME/test_data_set_0/input_0.pb    TensorProto named like the graph input
    OUT/NAME/test_data_set_0/output_0.pb   PyTorch's own float32 eval-mode result
    OUT/NAME/test_data_set_1/...           (torchvision models) a second input
    OUT/NAME/calib/test_data_set_N/input_0.pb  (torchvision models, digits) calibration inputs
    OUT/NAME/eval/test_data_set_N/...          (digits_cnn) the labelled held-out test
    OUT/NAME/eval/labels.txt                   images: one class per sample, in order
    OUT/NAME/agree/...                         (digits_cnn) every digits image but the 64 of
                                               calib/ (1728, labelled): int8-vs-float agreement
    OUT/NAME/output_0_float64.pb           the same model run in float64 (not read by loom)
    OUT/NAME/meta.json                     how it was made (not read by loom)

NAME is ARCH_opsetN. Everything is seeded (weights, inputs, training), the
exporter runs with do_constant_folding=True and no dynamic axes. Existing
folders are kept unless --force; a folder is written under a temporary name
and renamed when complete, so a failed run leaves no half folder behind.
Errors stop the script with a non-zero exit status.

Needs Debian's python3-torch, python3-torchvision, python3-onnx and
python3-sklearn: run it with /usr/bin/python3. No weights or data are
downloaded (the digits data set ships inside scikit-learn).

    /usr/bin/python3 scripts/export_models.py [--out build/models] [--force]
                                              [--only NAME_OR_ARCH ...] [--list]
"""

import argparse
import hashlib
import json
import os
import shutil
import sys
import time
import zlib

try:
    import numpy as np
    import onnx
    from onnx import numpy_helper
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    import torchvision
except ImportError as e:  # fail loudly, with the fix
    sys.exit("export_models.py: %s\n  needs Debian's python3-torch python3-torchvision python3-onnx "
             "python3-sklearn, run with /usr/bin/python3 (the first python3 on PATH may be another "
             "interpreter)" % e)


# ------------------------------------------------------------------ models

def seed_of(arch):
    """a fixed seed per architecture: every opset of one model gets the same
    weights and inputs, and adding a model changes no other model's"""
    return zlib.crc32(arch.encode()) & 0x7FFFFFFF


def calibrate_batchnorm(model, shape, gen):
    """Random but realistic BatchNorm layers: scale and shift drawn around
    1 and 0, running statistics measured on random inputs (so activations
    stay near unit scale through the depth of the net, as in a trained one,
    instead of a freshly initialised net's mean 0 / variance 1)."""
    bns = [m for m in model.modules() if isinstance(m, nn.BatchNorm2d)]
    # the last BatchNorm of each residual branch gets a small scale, as in
    # trained residual nets (and torchvision's zero_init_residual): with
    # branch gains near 1 a random mobilenet_v2 amplifies any perturbation so
    # much that even ideal int8 fake quantization (PyTorch, per-channel
    # weights) ends at cosine 0.985 with its float output; with 0.1..0.5, 0.998
    branch_end = set()
    for mod in model.modules():
        if getattr(mod, "use_res_connect", False) or getattr(mod, "apply_residual", False):  # InvertedResidual (v2, v3, mnasnet)
            branch_end.add(id([b for b in mod.modules() if isinstance(b, nn.BatchNorm2d)][-1]))
        if type(mod).__name__ in ("BasicBlock", "Bottleneck"):  # torchvision ResNet
            branch_end.add(id(mod.bn3 if hasattr(mod, "bn3") else mod.bn2))
    with torch.no_grad():
        for m in bns:
            lo, hi = (0.1, 0.5) if id(m) in branch_end else (0.5, 1.5)
            m.weight.copy_(torch.empty_like(m.weight).uniform_(lo, hi, generator=gen))
            m.bias.copy_(torch.empty_like(m.bias).normal_(0.0, 0.2, generator=gen))
            m.reset_running_stats()
            m.momentum = None  # cumulative average over the calibration batch
        model.train()
        model(torch.randn((4,) + tuple(shape[1:]), generator=gen))
    model.eval()


def torchvision_model(fn):
    def build(arch):
        gen = torch.Generator().manual_seed(seed_of(arch) + 1)
        torch.manual_seed(seed_of(arch))
        m = fn(weights=None)
        # torchvision draws classifier weights from N(0, 0.01): logits of a few
        # hundredths, which a tolerance of 1e-5 barely tests; variance-preserving
        # N(0, 1/fan_in) instead gives logits of order one
        with torch.no_grad():
            for lin in (x for x in m.modules() if isinstance(x, nn.Linear)):
                lin.weight.normal_(0.0, lin.in_features ** -0.5, generator=gen)
        shape = (1, 3, 224, 224)
        calibrate_batchnorm(m, shape, gen)
        # inputs: real photographs, not white noise (a random net's response
        # to white noise is chaotic: half a quantization step of input noise
        # moves mobilenet_v2's logits to cosine 0.99; on a photograph 0.998)
        photos = sample_photos()
        x = photo_crop(photos[0], 0.5, 0.5, 1.0)
        extra = [photo_crop(photos[1], 0.5, 0.5, 1.0)]
        calib = [photo_crop(photos[k % 2], float(u), float(v), float(z)) for k, (u, v, z) in
                 enumerate(torch.rand((8, 3), generator=gen).tolist())]
        return m, x, {"_extra_inputs": extra, "_calib_inputs": calib,
                      "inputs": "scikit-learn's sample photographs china.jpg, flower.jpg (224x224 crops, "
                                "ImageNet normalisation); calib/: 8 other crops"}
    return build


def sample_photos():
    """scikit-learn's two sample photographs (427x640 RGB, shipped with it)"""
    from sklearn.datasets import load_sample_images
    return [torch.tensor(np.asarray(i), dtype=torch.float32).permute(2, 0, 1)[None] / 255.0
            for i in load_sample_images().images]


def photo_crop(img, u, v, zoom):
    """a square crop (side = zoom-scaled between 60% and 100% of the height,
    at relative position u, v), resized to 224x224, ImageNet-normalised"""
    h, w = img.shape[2], img.shape[3]
    side = int(h * (0.6 + 0.4 * zoom))
    y0 = int((h - side) * v)
    x0 = int((w - side) * u)
    a = F.interpolate(img[:, :, y0:y0 + side, x0:x0 + side], size=(224, 224), mode="bilinear",
                      align_corners=False)
    mean = torch.tensor([0.485, 0.456, 0.406])[None, :, None, None]
    std = torch.tensor([0.229, 0.224, 0.225])[None, :, None, None]
    return ((a - mean) / std).contiguous()


class DigitsCNN(nn.Module):
    """8x8 grey digits: conv/relu/conv/relu/maxpool/linear/relu/linear"""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.fc1 = nn.Linear(32 * 4 * 4, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = self.pool(F.relu(self.conv2(x)))
        x = torch.flatten(x, 1)
        return self.fc2(F.relu(self.fc1(x)))


def digits_cnn(arch):
    """trained for a few epochs on scikit-learn's digits (1797 8x8 images,
    bundled with the package); the test set's first 16 images are the input,
    their logits the output"""
    from sklearn.datasets import load_digits
    torch.manual_seed(seed_of(arch))
    gen = torch.Generator().manual_seed(seed_of(arch) + 1)
    d = load_digits()
    xs = torch.tensor(d.images, dtype=torch.float32).unsqueeze(1) / 16.0
    ys = torch.tensor(d.target, dtype=torch.int64)
    perm = torch.randperm(len(xs), generator=gen)
    test, train = perm[:297], perm[297:]
    m = DigitsCNN()
    opt = torch.optim.Adam(m.parameters(), lr=3e-3)
    m.train()
    for _ in range(8):
        order = train[torch.randperm(len(train), generator=gen)]
        for i in range(0, len(order), 32):
            b = order[i:i + 32]
            opt.zero_grad()
            F.cross_entropy(m(xs[b]), ys[b]).backward()
            opt.step()
    m.eval()
    with torch.no_grad():
        acc = (m(xs[test]).argmax(1) == ys[test]).float().mean().item()
    x = xs[test[:16]].clone()
    # calibration: 64 training images; evaluation (loom eval, make run): the
    # held-out test images in batches of 16 (288 of 297) with their labels;
    # agreement of int8 with float (loom eval --min-agreement): every image
    # but the calibration ones, test images first (1728 of 1733)
    calib = [xs[train[16 * k:16 * (k + 1)]].clone() for k in range(4)]
    evals = [(xs[test[16 * k:16 * (k + 1)]].clone(), ys[test[16 * k:16 * (k + 1)]].tolist())
             for k in range(len(test) // 16)]
    rest = torch.cat([test, train[64:]])
    agree = [(xs[rest[16 * k:16 * (k + 1)]].clone(), ys[rest[16 * k:16 * (k + 1)]].tolist())
             for k in range(len(rest) // 16)]
    return m, x, {"test_accuracy": round(acc, 4), "test_images": 297,
                  "labels": ys[test[:16]].tolist(), "epochs": 8,
                  "_calib_inputs": calib, "_eval_sets": evals, "_agree_sets": agree}


class DigitsQDQ(nn.Module):
    """DigitsCNN in QDQ form, as ONNX Runtime's quantization tool or a QAT
    export writes it: every activation through a per-tensor uint8
    QuantizeLinear/DequantizeLinear pair (scales from min/max over the
    training images), every weight through a per-channel int8 symmetric
    pair; PyTorch exports fake_quantize_* as those pairs"""

    def __init__(self, m, ranges):
        super().__init__()
        self.m = m
        self.q = {k: self.affine(lo, hi) for k, (lo, hi) in ranges.items()}

    @staticmethod
    def affine(lo, hi):
        lo, hi = min(lo, 0.0), max(hi, 0.0)
        s = (hi - lo) / 255.0 or 1.0
        return s, int(min(255, max(0, round(-lo / s))))

    def act(self, x, k):
        s, zp = self.q[k]
        return torch.fake_quantize_per_tensor_affine(x, s, zp, 0, 255)

    @staticmethod
    def wq(w):
        s = w.detach().abs().flatten(1).max(1).values.clamp_min(1e-8) / 127.0
        return torch.fake_quantize_per_channel_affine(w, s, torch.zeros(len(s), dtype=torch.int32), 0, -128, 127)

    def forward(self, x):
        m = self.m
        x = self.act(x, "in")
        x = self.act(F.relu(F.conv2d(x, self.wq(m.conv1.weight), m.conv1.bias, padding=1)), "c1")
        x = self.act(m.pool(F.relu(F.conv2d(x, self.wq(m.conv2.weight), m.conv2.bias, padding=1))), "c2")
        x = torch.flatten(x, 1)
        x = self.act(F.relu(F.linear(x, self.wq(m.fc1.weight), m.fc1.bias)), "f1")
        return self.act(F.linear(x, self.wq(m.fc2.weight), m.fc2.bias), "out")


def digits_qdq(arch):
    """the trained digits CNN, quantized in QDQ form (DigitsQDQ); the
    reference output is PyTorch's fake-quantized result"""
    m, x, info = digits_cnn("digits_cnn")
    from sklearn.datasets import load_digits
    xs = torch.tensor(load_digits().images, dtype=torch.float32).unsqueeze(1) / 16.0
    with torch.no_grad():
        c1 = F.relu(m.conv1(xs))
        c2 = m.pool(F.relu(m.conv2(c1)))
        f1 = F.relu(m.fc1(torch.flatten(c2, 1)))
        out = m.fc2(f1)
    r = lambda t: (float(t.min()), float(t.max()))
    q = DigitsQDQ(m, {"in": r(xs), "c1": r(c1), "c2": r(c2), "f1": r(f1), "out": r(out)})
    info = dict(info)
    info.pop("_eval_sets", None)
    info.pop("_agree_sets", None)
    info["qdq"] = "uint8 per-tensor activations, int8 per-channel weights"
    return q, x, info


def digits_outlier(arch):
    """the trained digits CNN with an outlier channel: conv1's output channel
    of the largest activation scaled by 100 (its weights and bias; ReLU
    commutes with a positive scale) and conv2's weights of that input
    channel divided by 100. The float function is the same; the tensor
    between them has one channel 100 times the others, so one per-tensor
    int8 range (min-max) leaves the other 15 channels a few steps (loom
    compile --accuracy's test case)"""
    m, x, info = digits_cnn("digits_cnn")
    from sklearn.datasets import load_digits
    xs = torch.tensor(load_digits().images, dtype=torch.float32).unsqueeze(1) / 16.0
    with torch.no_grad():
        k = int(F.relu(m.conv1(xs)).amax(dim=(0, 2, 3)).argmax())
        m.conv1.weight[k] *= 100.0
        m.conv1.bias[k] *= 100.0
        m.conv2.weight[:, k] /= 100.0
    info = dict(info)
    info.pop("_agree_sets", None)
    info["outlier"] = "conv1 output channel %d x100, conv2 input channel %d /100" % (k, k)
    return m, x, info


class NpuOps(nn.Module):
    """one small net with every operator the NPU lowering claims: zero Pad,
    Conv + BatchNorm (folded), SiLU, dilated depthwise Conv, HardSwish,
    grouped Conv, LeakyRelu, AveragePool, a standalone BatchNorm, a
    squeeze-excitation gate (GlobalAveragePool, Relu, HardSigmoid, Mul per
    channel), channel Slice, Clip (ReLU6), Concat, channel shuffle (Reshape,
    Transpose, Reshape), MaxPool with ceil_mode, Add, Sigmoid, Flatten, Gemm"""

    def __init__(self):
        super().__init__()
        self.pad = nn.ZeroPad2d((1, 2, 1, 0))
        self.c1 = nn.Conv2d(3, 16, 3)
        self.bn1 = nn.BatchNorm2d(16)
        self.dw = nn.Conv2d(16, 16, 3, padding=2, dilation=2, groups=16)
        self.g = nn.Conv2d(16, 32, 3, padding=1, stride=2, groups=4)
        self.bn2 = nn.BatchNorm2d(32)
        self.se1 = nn.Conv2d(32, 8, 1)
        self.se2 = nn.Conv2d(8, 32, 1)
        self.b1 = nn.Conv2d(16, 16, 1)
        self.fc = nn.Linear(32, 10)

    def forward(self, x):
        x = self.pad(x)
        x = F.silu(self.bn1(self.c1(x)))
        x = F.hardswish(self.dw(x))
        x = F.leaky_relu(self.g(x), 0.1)
        x = self.bn2(F.avg_pool2d(x, 3, stride=1, padding=1, count_include_pad=True))
        s = F.hardsigmoid(self.se2(F.relu(self.se1(F.adaptive_avg_pool2d(x, 1)))))
        x = x * s
        a, b = x[:, :16], x[:, 16:]
        x = torch.cat([a, F.relu6(self.b1(b))], 1)
        n, c, h, w = x.shape
        x = x.view(n, 2, c // 2, h, w).transpose(1, 2).reshape(n, c, h, w)
        x = F.max_pool2d(x, 3, stride=2, ceil_mode=True)
        x = torch.sigmoid(x + F.max_pool2d(x, 3, stride=1, padding=1))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


def npu_ops(arch):
    gen = torch.Generator().manual_seed(seed_of(arch) + 1)
    torch.manual_seed(seed_of(arch))
    m = NpuOps()
    calibrate_batchnorm(m, (1, 3, 32, 32), gen)
    photos = sample_photos()
    small = lambda t: F.interpolate(t, size=(32, 32), mode="bilinear", align_corners=False)
    x = small(photo_crop(photos[0], 0.5, 0.5, 1.0))
    extra = [small(photo_crop(photos[1], 0.5, 0.5, 1.0))]
    calib = [small(photo_crop(photos[k % 2], float(u), float(v), float(z))) for k, (u, v, z) in
             enumerate(torch.rand((8, 3), generator=gen).tolist())]
    return m, x, {"_extra_inputs": extra, "_calib_inputs": calib}


class TinyTransformer(nn.Module):
    """one pre-norm encoder block: LayerNorm, 2-head self-attention (Linear,
    Reshape, Transpose, MatMul, Softmax), residual, LayerNorm, ReLU MLP,
    residual (no GELU)"""

    def __init__(self, dim=32, heads=2, hidden=64):
        super().__init__()
        self.heads, self.hd = heads, dim // heads
        self.ln1 = nn.LayerNorm(dim)
        self.q = nn.Linear(dim, dim)
        self.k = nn.Linear(dim, dim)
        self.v = nn.Linear(dim, dim)
        self.proj = nn.Linear(dim, dim)
        self.ln2 = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)

    def forward(self, x):
        b, s, c = x.shape
        h = self.ln1(x)
        q = self.q(h).reshape(b, s, self.heads, self.hd).transpose(1, 2)
        k = self.k(h).reshape(b, s, self.heads, self.hd).transpose(1, 2)
        v = self.v(h).reshape(b, s, self.heads, self.hd).transpose(1, 2)
        a = torch.softmax(torch.matmul(q, k.transpose(2, 3)) * (self.hd ** -0.5), dim=-1)
        o = torch.matmul(a, v).transpose(1, 2).reshape(b, s, c)
        x = x + self.proj(o)
        return x + self.fc2(F.relu(self.fc1(self.ln2(x))))


def tiny_transformer(arch):
    gen = torch.Generator().manual_seed(seed_of(arch) + 1)
    torch.manual_seed(seed_of(arch))
    m = TinyTransformer()
    with torch.no_grad():  # LayerNorm affine parameters off their 1/0 defaults
        for ln in (m.ln1, m.ln2):
            ln.weight.copy_(torch.empty_like(ln.weight).uniform_(0.5, 1.5, generator=gen))
            ln.bias.copy_(torch.empty_like(ln.bias).normal_(0.0, 0.2, generator=gen))
    m.eval()
    return m, torch.randn((1, 8, 32), generator=gen), {}


TV = torchvision.models
SEG = torchvision.models.segmentation
# (arch, builder, opsets): opset 11 covers the older variants (Split, Squeeze,
# Softmax, Reduce* with attributes, Clip with inputs); resnet18 (45 MB) once
ARCHS = [
    ("squeezenet1_1", torchvision_model(TV.squeezenet1_1), (11, 13, 17)),
    ("mobilenet_v2", torchvision_model(TV.mobilenet_v2), (13, 17)),
    ("resnet18", torchvision_model(TV.resnet18), (13,)),
    ("mobilenet_v3_small", torchvision_model(TV.mobilenet_v3_small), (13, 17)),
    ("shufflenet_v2_x0_5", torchvision_model(TV.shufflenet_v2_x0_5), (13, 17)),
    ("regnet_x_400mf", torchvision_model(TV.regnet_x_400mf), (13,)),
    ("digits_cnn", digits_cnn, (13, 17)),
    ("digits_qdq", digits_qdq, (13,)),
    ("digits_outlier", digits_outlier, (13,)),
    ("npu_ops", npu_ops, (9, 11, 13)),
    ("tiny_transformer", tiny_transformer, (11, 13, 17)),
]


class SegOut(nn.Module):
    """a torchvision segmentation model's "out" logits (its forward returns a dict)"""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, x):
        return self.m(x)["out"]


def torchvision_seg(fn):
    # weights_backbone=None: the default would download ImageNet weights
    return torchvision_model(lambda weights=None: SegOut(fn(weights=None, weights_backbone=None)))


# exported only when named with --only: make bench's compile time of
# ResNet-50 (resnet50) and its table of other torchvision networks
# (scripts/bench_field.sh: classification at several opsets, grouped and
# dilated convolutions, SiLU / GELU / HardSwish, segmentation heads)
BENCH_ARCHS = [
    ("resnet50", torchvision_model(TV.resnet50), (13,)),
    ("efficientnet_b0", torchvision_model(TV.efficientnet_b0), (13,)),
    ("mobilenet_v3_large", torchvision_model(TV.mobilenet_v3_large), (13,)),
    ("mnasnet0_5", torchvision_model(TV.mnasnet0_5), (13,)),
    ("regnet_y_400mf", torchvision_model(TV.regnet_y_400mf), (13,)),
    ("resnext50_32x4d", torchvision_model(TV.resnext50_32x4d), (13,)),
    ("googlenet", torchvision_model(TV.googlenet), (13,)),
    ("densenet121", torchvision_model(TV.densenet121), (13,)),
    ("convnext_tiny", torchvision_model(TV.convnext_tiny), (17,)),
    ("alexnet", torchvision_model(TV.alexnet), (11,)),
    ("squeezenet1_0", torchvision_model(TV.squeezenet1_0), (9,)),
    ("deeplabv3_mobilenet_v3_large", torchvision_seg(SEG.deeplabv3_mobilenet_v3_large), (11,)),
    ("lraspp_mobilenet_v3_large", torchvision_seg(SEG.lraspp_mobilenet_v3_large), (13,)),
]


# ------------------------------------------------------------------ export

def write_tensor(path, array, name):
    t = numpy_helper.from_array(np.ascontiguousarray(array), name)
    with open(path, "wb") as f:
        f.write(t.SerializeToString())


def export_one(arch, build, opset, folder):
    t0 = time.time()
    model, x, info = build(arch)
    model.eval()
    x = x.float().contiguous()
    with torch.no_grad():
        y = model(x)
        # PyTorch's own float32 error, against the same model in float64:
        # a floor for any tolerance the runner is given
        try:
            y64 = model.double()(x.double())
        except RuntimeError:  # fake quantization has no float64 kernel: float32 is exact there
            y64 = y.double()
        model.float()
    if not torch.isfinite(y).all():
        raise RuntimeError("%s: non-finite reference output" % arch)
    e_abs = (y.double() - y64).abs()
    fp32_err = {"max_abs": float(e_abs.max()),
                "max_rel": float((e_abs / y64.abs().clamp_min(1e-6)).max()),
                "max_abs_output": float(y64.abs().max())}

    tmp = folder + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(os.path.join(tmp, "test_data_set_0"))
    onnx_path = os.path.join(tmp, "model.onnx")
    with torch.no_grad():
        torch.onnx.export(model, (x,), onnx_path, export_params=True, opset_version=opset,
                          do_constant_folding=True, input_names=["input"], output_names=["output"],
                          dynamic_axes=None, training=torch.onnx.TrainingMode.EVAL,
                          keep_initializers_as_inputs=False)
    m = onnx.load(onnx_path)
    onnx.checker.check_model(m)
    got_opset = [o.version for o in m.opset_import if o.domain in ("", "ai.onnx")]
    if got_opset != [opset]:
        raise RuntimeError("%s: asked for opset %d, the model imports %s" % (arch, opset, got_opset))
    inits = {i.name for i in m.graph.initializer}
    gin = [i.name for i in m.graph.input if i.name not in inits]
    gout = [o.name for o in m.graph.output]
    if gin != ["input"] or gout != ["output"]:
        raise RuntimeError("%s: graph inputs %s, outputs %s; expected ['input'], ['output']" % (arch, gin, gout))
    ops = sorted({n.op_type for n in m.graph.node})

    write_tensor(os.path.join(tmp, "test_data_set_0", "input_0.pb"), x.numpy(), "input")
    write_tensor(os.path.join(tmp, "test_data_set_0", "output_0.pb"), y.numpy(), "output")
    # more data sets with PyTorch's outputs; calibration inputs (no outputs) under calib/
    for k, xe in enumerate(info.pop("_extra_inputs", []), 1):
        d = os.path.join(tmp, "test_data_set_%d" % k)
        os.makedirs(d)
        with torch.no_grad():
            ye = model(xe.float())
        write_tensor(os.path.join(d, "input_0.pb"), xe.numpy(), "input")
        write_tensor(os.path.join(d, "output_0.pb"), ye.numpy(), "output")
    for k, xc in enumerate(info.pop("_calib_inputs", [])):
        d = os.path.join(tmp, "calib", "test_data_set_%d" % k)
        os.makedirs(d)
        write_tensor(os.path.join(d, "input_0.pb"), xc.numpy(), "input")
    # a labelled evaluation set (loom eval): eval/test_data_set_N with
    # PyTorch's outputs, eval/labels.txt with one class per sample in order
    # (agree/: the same without the outputs)
    for sub, key in (("eval", "_eval_sets"), ("agree", "_agree_sets")):
        evals = info.pop(key, [])
        for k, (xe, labels) in enumerate(evals):
            d = os.path.join(tmp, sub, "test_data_set_%d" % k)
            os.makedirs(d)
            write_tensor(os.path.join(d, "input_0.pb"), xe.numpy(), "input")
            if sub == "eval":
                with torch.no_grad():
                    ye = model(xe.float())
                write_tensor(os.path.join(d, "output_0.pb"), ye.numpy(), "output")
        if evals:
            with open(os.path.join(tmp, sub, "labels.txt"), "w") as f:
                for _, labels in evals:
                    f.write("".join("%d\n" % v for v in labels))
    # the same model in float64, beside the data set (loom reads only test_data_set_N):
    # for measuring how far a float32 executor is from the exact result
    write_tensor(os.path.join(tmp, "output_0_float64.pb"), y64.numpy(), "output")
    meta = {
        "arch": arch, "opset": opset, "seed": seed_of(arch),
        "input": list(x.shape), "output": list(y.shape), "operators": ops,
        "nodes": len(m.graph.node),
        "parameters": int(sum(p.numel() for p in model.parameters())),
        "pytorch_fp32_vs_fp64": fp32_err,
        "torch": torch.__version__, "torchvision": torchvision.__version__, "onnx": onnx.__version__,
        "model_sha256": hashlib.sha256(open(onnx_path, "rb").read()).hexdigest(),
    }
    meta.update(info)
    with open(os.path.join(tmp, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1, sort_keys=True)
        f.write("\n")
    shutil.rmtree(folder, ignore_errors=True)
    os.rename(tmp, folder)
    return meta, time.time() - t0


def folder_size(p):
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(p) for f in fs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="build/models", help="where the case folders go (default build/models)")
    ap.add_argument("--force", action="store_true", help="re-export folders that exist")
    ap.add_argument("--only", nargs="+", metavar="NAME", help="only these cases (ARCH_opsetN) or architectures")
    ap.add_argument("--list", action="store_true", help="print the case names and exit")
    args = ap.parse_args()

    cases = [(a, b, o, "%s_opset%d" % (a, o)) for a, b, ops in ARCHS for o in ops]
    if args.only:
        cases += [(a, b, o, "%s_opset%d" % (a, o)) for a, b, ops in BENCH_ARCHS for o in ops]
        unknown = [n for n in args.only if not any(n in (c[0], c[3]) for c in cases)]
        if unknown:
            sys.exit("export_models.py: unknown case(s) %s; --list shows them" % " ".join(unknown))
        cases = [c for c in cases if c[0] in args.only or c[3] in args.only]
    if args.list:
        print("\n".join(c[3] for c in cases))
        return 0

    torch.set_num_threads(max(1, min(4, os.cpu_count() or 1)))
    os.makedirs(args.out, exist_ok=True)
    t_all = time.time()
    made = kept = 0
    for arch, build, opset, name in cases:
        folder = os.path.join(args.out, name)
        done = os.path.isfile(os.path.join(folder, "model.onnx")) and \
            os.path.isfile(os.path.join(folder, "test_data_set_0", "output_0.pb"))
        if done and not args.force:
            print("kept  %-30s %7.1f MB (exists; --force re-exports)" % (name, folder_size(folder) / 1e6))
            kept += 1
            continue
        meta, dt = export_one(arch, build, opset, folder)
        err = meta["pytorch_fp32_vs_fp64"]
        extra = "  digits test accuracy %.3f" % meta["test_accuracy"] if "test_accuracy" in meta else ""
        print("wrote %-30s %7.1f MB %5.1fs  %d nodes, input %s -> output %s, max|y| %.3g, "
              "fp32 vs fp64 max abs %.2g%s" % (folder, folder_size(folder) / 1e6, dt, meta["nodes"],
                                              "x".join(map(str, meta["input"])),
                                              "x".join(map(str, meta["output"])),
                                              err["max_abs_output"], err["max_abs"], extra))
        print("      ops: %s" % " ".join(meta["operators"]))
        sys.stdout.flush()
        made += 1
    print("export_models: %d written, %d kept, %.1f MB in %s, %.1fs" %
          (made, kept, folder_size(args.out) / 1e6, args.out, time.time() - t_all))
    return 0


if __name__ == "__main__":
    sys.exit(main())
