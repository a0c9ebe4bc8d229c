"""Small ONNX models of one mapped op, and the check that holds the mapping to onnxruntime,
``onnx.reference.ReferenceEvaluator`` and the export back to ONNX."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
from onnx import helper
from onnx.reference import ReferenceEvaluator

import ascendir as air


def vi(name, elem, shape):
    """A value info of element type ``elem``."""
    return helper.make_tensor_value_info(name, elem, shape)


def model(node, inputs, outputs, opset):
    """A model of one node (or a list of nodes) at ``opset``."""
    g = helper.make_graph([node] if not isinstance(node, list) else node, "m", inputs, outputs)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 10 if opset >= 23 else 8
    return m


def types_of(g):
    """The op types of ``g`` apart from its frame (Data, NetOutput, Const)."""
    return [n.type for n in g.nodes if n.type not in ("Data", "NetOutput", "Const")]


def run_ort(m, feeds):
    """The outputs of ``m`` on onnxruntime's CPU provider."""
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def check(m, feeds, ge_type, runtime=True, rtol=1e-5, atol=1e-6, oracle="both"):
    """The model maps to ``ge_type``; evaluate, onnxruntime, the reference and the export of
    the imported graph agree (``oracle="ort"``: onnxruntime alone, where the reference
    departs from PyTorch's semantics, which GE's and onnxruntime's follow)."""
    g = air.onnx.load(m.SerializeToString())
    assert ge_type in types_of(g), types_of(g)
    run = run_ort if oracle == "ort" else (lambda mm, f: ReferenceEvaluator(mm).run(None, f))
    want = run(m, feeds)
    if runtime and oracle != "ort":
        for a, b in zip(run_ort(m, feeds), want, strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)
    got = list(air.evaluate(g, feeds).values())
    assert len(got) == len(want)
    for a, b in zip(got, want, strict=True):
        assert a.shape == np.asarray(b).shape and a.dtype == np.asarray(b).dtype
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)
    back = onnx.load_from_string(air.onnx.to_bytes(g))
    onnx.checker.check_model(back, full_check=True)
    again = run(back, feeds)
    for a, b in zip(again, want, strict=True):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)
    return g


def unmapped(m, op):
    """``m`` imports with one node of ONNX ``op`` left unmapped."""
    _, rep = air.onnx.load(m.SerializeToString(), return_report=True, warn_unknown=False)
    assert rep.unknown_ops == {f"onnx::{op}": 1}
