"""Running the ONNX backend conformance cases: comparing outputs with the expected ones, the
cases ``air.evaluate`` is known not to reproduce (and why), and the ONNX runtimes and checker the
export is held to."""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper
from onnx.reference import ReferenceEvaluator

import ascendir as air

# Conformance cases that fail for a reason outside the evaluator (the ONNX mapping drops an
# ONNX default or maps a form to a GE op of other semantics) or that cannot be reproduced
# (random training dropout). A listed case may pass; an unlisted one must.
KNOWN = {
    "test_batchnorm_epsilon_training_mode": "ONNX running statistics vs GE batch statistics",
    "test_batchnorm_example_training_mode": "ONNX running statistics vs GE batch statistics",
    "test_layer_normalization_": "ONNX output 2 is InvStdDev, GE LayerNorm's is the variance",
    "test_mod_mixed_sign_int": "mapping omits ONNX's fmod=0 (GE Mod is C's remainder)",
    "test_training_dropout": "training-mode Dropout is random",
    "test_attention_3d_causal_bf16": "half precision: steps rounded one by one",
    "test_attention_4d_attn_mask_causal_bf16": "half precision: steps rounded one by one",
    "test_attention_4d_causal_bf16": "half precision: steps rounded one by one",
    "test_attention_4d_causal_fp16": "half precision: steps rounded one by one",
    "test_attention_4d_padded_kv_bf16": "half precision: steps rounded one by one",
    "test_attention_4d_causal_padded_kv_bf16": "half precision: steps rounded one by one",
    "test_resize_downsample_scales_cubic_antialias": "antialiased Resize is not evaluated",
    "test_resize_downsample_scales_linear_antialias": "antialiased Resize is not evaluated",
    "test_resize_downsample_sizes_cubic_antialias": "antialiased Resize is not evaluated",
    "test_resize_downsample_sizes_linear_antialias": "antialiased Resize is not evaluated",
}


def known_reason(name: str) -> str | None:
    for prefix, why in KNOWN.items():
        if name.startswith(prefix):
            return why
    return None


def as_array(v):
    return numpy_helper.to_array(v) if hasattr(v, "SerializeToString") else np.asarray(v)


def mismatch(got, exp, rtol, atol) -> str | None:
    got, exp = np.asarray(got), np.asarray(exp)
    if got.shape != exp.shape:
        return f"shape {list(got.shape)} != {list(exp.shape)}"
    if got.dtype != exp.dtype:
        return f"dtype {got.dtype} != {exp.dtype}"
    if exp.dtype.kind == "V" or exp.dtype.name.startswith(("float8", "bfloat", "float4")):
        got, exp = got.astype(np.float32), exp.astype(np.float32)
        return None if np.array_equal(got, exp, equal_nan=True) else "values differ"
    if exp.dtype.kind in "fc":
        ok = np.allclose(got, exp, rtol=rtol, atol=atol, equal_nan=True)
    else:
        ok = np.array_equal(got, exp)
    return None if ok else "values differ"


def run_case(case) -> tuple[str, str | None]:
    """("unmapped" | "pass" | "fail", why) for one conformance case."""
    g, rep = air.onnx.load(case.model, return_report=True, warn_unknown=False)
    if rep.unknown_ops:
        return "unmapped", None
    return evaluate_case(case, g)


def evaluate_case(case, g) -> tuple[str, str | None]:
    """("pass" | "fail", why) for the imported graph ``g`` of one conformance case."""
    for inputs, outputs in case.data_sets:
        try:
            got = air.evaluate(g, [as_array(v) for v in inputs])
        except air.AscendIRError as e:
            return "fail", f"{type(e).__name__}: {e}"
        if len(got) != len(outputs):
            return "fail", f"{len(got)} outputs, expected {len(outputs)}"
        for i, (a, e) in enumerate(zip(got.values(), outputs, strict=True)):
            why = mismatch(a, as_array(e), case.rtol, case.atol)
            if why:
                return "fail", f"output {i}: {why}"
    return "pass", None


def _reproduces(run, case) -> bool:
    """Whether ``run`` gives the expected outputs of every data set of ``case``."""
    try:
        for inputs, outputs in case.data_sets:
            got = run([as_array(v) for v in inputs])
            if len(got) != len(outputs):
                return False
            for a, e in zip(got, outputs, strict=True):
                if mismatch(a, as_array(e), case.rtol, case.atol):
                    return False
    except Exception:  # noqa: BLE001 - a runtime refusing the model counts as not reproducing
        return False
    return True


def reference_runner(m):
    """A runner of ``m`` on ``onnx.reference.ReferenceEvaluator``."""
    sess = ReferenceEvaluator(m)
    names = [i.name for i in m.graph.input]
    return lambda xs: sess.run(None, dict(zip(names, xs, strict=False)))


def onnxruntime_runner(m):
    """A runner of ``m`` on onnxruntime's CPU provider."""
    so = ort.SessionOptions()
    so.log_severity_level = 4
    sess = ort.InferenceSession(m.SerializeToString(), so, providers=["CPUExecutionProvider"])
    names = [i.name for i in sess.get_inputs()]
    return lambda xs: sess.run(None, dict(zip(names, xs, strict=False)))


def reproduces_with(make, m, case) -> bool:
    """Whether the runtime ``make`` builds a runner of ``m`` that reproduces ``case``."""
    try:
        run = make(m)
    except Exception:  # noqa: BLE001 - a runtime refusing the model counts as not reproducing
        return False
    return _reproduces(run, case)


def checks(m) -> str | None:
    """The first line of the full ONNX checker's complaint about ``m``, or None."""
    try:
        onnx.checker.check_model(m, full_check=True)
    except Exception as e:  # noqa: BLE001 - the checker's own error types vary by version
        return str(e).splitlines()[0] if str(e) else type(e).__name__
    return None
