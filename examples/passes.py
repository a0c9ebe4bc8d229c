"""Three graph passes written with the pass layer only (values and uses, the typed builders,
insertion points, ``ascendir.passes``), and a run of them over a Hugging Face BERT imported
through ``torch.onnx.export``:

- :class:`FoldIdentityArithmetic`: ``x * 1`` and ``x + 0`` (a constant of ones / zeros that does
  not broadcast ``x`` to a bigger shape or another dtype) read ``x`` instead;
- :class:`FuseMatMulBias`: ``MatMulV2`` / ``BatchMatMulV2`` followed by ``Add`` of a bias over
  the last dim becomes one matmul with its ``bias`` input (GE's ``MatMulV2`` with bias);
- :class:`RemoveLosslessCastPairs`: ``Cast(Cast(x, T1 → T2), T2 → T1)`` reads ``x`` when every
  value of ``T1`` survives ``T2`` (``float16 → float32 → float16``); a lossy pair
  (``float32 → float16 → float32``) stays.

Run: ``python examples/passes.py`` (needs torch, transformers, onnxscript and onnxruntime).
"""

from __future__ import annotations

import numpy as np

import ascendir as air
from ascendir import passes

# Widening conversions: every value of the first dtype is a value of the second.
_EXACT = {
    "DT_BOOL": {"DT_INT8", "DT_UINT8", "DT_INT16", "DT_UINT16", "DT_INT32", "DT_UINT32",
                "DT_INT64", "DT_UINT64", "DT_FLOAT16", "DT_BF16", "DT_FLOAT", "DT_DOUBLE"},
    "DT_INT8": {"DT_INT16", "DT_INT32", "DT_INT64", "DT_FLOAT16", "DT_FLOAT", "DT_DOUBLE"},
    "DT_UINT8": {"DT_INT16", "DT_UINT16", "DT_INT32", "DT_UINT32", "DT_INT64", "DT_UINT64",
                 "DT_FLOAT16", "DT_FLOAT", "DT_DOUBLE"},
    "DT_INT16": {"DT_INT32", "DT_INT64", "DT_FLOAT", "DT_DOUBLE"},
    "DT_UINT16": {"DT_INT32", "DT_UINT32", "DT_INT64", "DT_UINT64", "DT_FLOAT", "DT_DOUBLE"},
    "DT_INT32": {"DT_INT64", "DT_DOUBLE"},
    "DT_UINT32": {"DT_INT64", "DT_UINT64", "DT_DOUBLE"},
    "DT_FLOAT16": {"DT_FLOAT", "DT_DOUBLE"},
    "DT_BF16": {"DT_FLOAT", "DT_DOUBLE"},
    "DT_FLOAT": {"DT_DOUBLE"},
}


def _const(v: air.Value | None) -> np.ndarray | None:
    """The value of a ``Const`` producer, or None."""
    if v is None or v.producer().type not in ("Const", "Constant"):
        return None
    return np.asarray(v.producer().attrs["value"])


def _same_desc(a: air.Value, b: air.Value) -> bool:
    da, db = a.desc, b.desc
    return da.dtype == db.dtype and list(da.shape) == list(db.shape)


class FoldIdentityArithmetic(passes.InPlacePass):
    """``x * 1`` and ``x + 0`` become ``x`` where the result is ``x`` itself (same shape and
    dtype: the constant does not broadcast)."""

    def call(self, graph: air.Graph) -> passes.PassResult:
        """Bypass every foldable ``Mul`` / ``Add``."""
        folded = 0
        for op, unit in (("Mul", 1), ("Add", 0)):
            for node in graph.find_nodes(op_type=op):
                for k in (0, 1):
                    c, x = _const(node.inputs[1 - k]), node.inputs[k]
                    if c is None or x is None or not np.all(c == unit):
                        continue
                    if _same_desc(x, node.outputs[0]):
                        graph.bypass(node, input=k)
                        folded += 1
                        break
        return passes.PassResult(graph, folded > 0)


class FuseMatMulBias(passes.InPlacePass):
    """``Add(MatMul(a, b), bias)`` → ``MatMul(a, b, bias=bias)`` when the matmul has no bias,
    its value has that one use, and ``bias`` is a 1-D constant over the result's last dim."""

    def call(self, graph: air.Graph) -> passes.PassResult:
        """Fuse every such pair."""
        fused = 0
        for add in graph.find_nodes(op_type="Add"):
            for k in (0, 1):
                mm_v, bias_v = add.inputs[k], add.inputs[1 - k]
                if mm_v is None or bias_v is None:
                    continue
                mm = mm_v.producer()
                bias = _const(bias_v)
                if (mm.type not in ("MatMulV2", "BatchMatMulV2")
                        or any(v is not None for v in mm.inputs[2:])
                        or len(mm_v.uses()) != 1 or bias is None or bias.ndim != 1
                        or not _same_desc(mm_v, add.outputs[0])
                        or bias.shape[0] != mm_v.desc.shape[-1]
                        or bias_v.desc.dtype != mm_v.desc.dtype):
                    continue
                attrs = {key: mm.attrs[key] for key in mm.attrs if not key.startswith("_")}
                build = air.ops.MatMulV2 if mm.type == "MatMulV2" else air.ops.BatchMatMulV2
                with graph.inserting_before(add):
                    fused_v = build(mm.inputs[0], mm.inputs[1], bias=bias_v,
                                    name=f"{mm.name}_bias", **attrs)
                add.outputs[0].replace_all_uses_with(fused_v)
                graph.remove([add, mm])
                fused += 1
                break
        return passes.PassResult(graph, fused > 0)


class RemoveLosslessCastPairs(passes.InPlacePass):
    """``Cast(Cast(x, T1 → T2), T2 → T1)`` reads ``x`` when ``T1 → T2`` is exact; the first
    Cast goes too when nothing else reads it."""

    def call(self, graph: air.Graph) -> passes.PassResult:
        """Remove every lossless round trip."""
        removed = 0
        for outer in graph.find_nodes(op_type="Cast"):
            mid = outer.inputs[0]
            if mid is None or mid.producer().type != "Cast":
                continue
            inner = mid.producer()
            x = inner.inputs[0]
            if x is None or x.desc.dtype != outer.outputs[0].desc.dtype:
                continue
            if mid.desc.dtype.serial_name not in _EXACT.get(x.desc.dtype.serial_name, ()):
                continue
            outer.outputs[0].replace_all_uses_with(x)
            graph.remove([outer] + ([inner] if len(mid.uses()) == 1 else []))
            removed += 1
        return passes.PassResult(graph, removed > 0)


def _bert_onnx() -> bytes:
    import os
    import tempfile

    import torch
    import transformers

    torch.manual_seed(0)
    cfg = transformers.BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2,
                                  num_attention_heads=2, intermediate_size=64)
    model = transformers.BertModel(cfg).eval()
    ids = torch.randint(0, 100, (2, 8))
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "bert.onnx")
        torch.onnx.export(model, (ids,), path, dynamo=True, verbose=False,
                          external_data=False)
        with open(path, "rb") as f:
            return f.read()


def main() -> None:
    """Run the three passes over BERT and compare with onnxruntime."""
    import onnxruntime as ort

    data = _bert_onnx()
    g = air.onnx.from_bytes(data)
    ids = np.random.default_rng(0).integers(0, 100, (2, 8)).astype(np.int64)
    # The fusion first: BERT's freshly initialized biases are zeros, which the fold would drop.
    pm = passes.PassManager([FuseMatMulBias(), FoldIdentityArithmetic(),
                             RemoveLosslessCastPairs()], steps=2)
    result = pm(g)
    for rec in pm.log:
        print(f"{rec.name:26} step {rec.step} modified {rec.modified!s:5} "
              f"nodes {rec.nodes_before} -> {rec.nodes_after}")
    sess = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
    want = sess.run(None, {sess.get_inputs()[0].name: ids})[0]
    got = list(air.evaluate(result.graph, [ids]).values())[0]
    print("max |ours - onnxruntime| =", float(np.max(np.abs(got - want))))


if __name__ == "__main__":
    main()
