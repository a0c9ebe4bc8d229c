"""Shape inference: ``Graph.infer_shapes`` on G(n) (elementwise Relu/Add, see workloads.py)
against ``onnx.shape_inference.infer_shapes(data_prop=True)`` on the equivalent ONNX model
(inputs are typed; intermediate value shapes are left for inference), built with
``onnx.helper``. Both sides propagate constant shape values (ours always, ONNX's with
``data_prop``)."""

from __future__ import annotations

import gc
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from timing import measure, row  # noqa: E402
from workloads import build_g_n_bulk, g_n_random_sources  # noqa: E402


def onnx_g_n(n: int) -> Any:
    """G(n) as an ONNX model: x -> Relu -> Add chain with the same random second inputs."""
    from onnx import TensorProto, helper

    r = g_n_random_sources(n).tolist()
    names = ["x", "v1"]
    nodes = [helper.make_node("Relu", ["x"], ["v1"], name="n1")]
    for i in range(2, n):
        out = f"v{i}"
        nodes.append(helper.make_node("Add", [names[i - 1], names[r[i - 2]]], [out], name=f"n{i}"))
        names.append(out)
    graph = helper.make_graph(
        nodes,
        f"G{n}",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])],
        [helper.make_tensor_value_info(names[-1], TensorProto.FLOAT, None)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _check_same_result(g: Any, model: Any) -> None:
    """Both sides must agree on the inferred shape of the last value."""
    last = g.nodes[-1].op_desc.output_desc(0)
    dims = [d.dim_value for d in model.graph.value_info[-1].type.tensor_type.shape.dim]
    assert tuple(last.shape) == tuple(dims) == (1, 64), (last.shape, dims)


def _model_rows(quick: bool) -> list[dict]:
    """The real-model workloads (benches/models.py) imported through the ONNX frontend:
    ``Graph.infer_shapes`` on the imported graph vs ``onnx.shape_inference.infer_shapes`` on
    the model."""
    try:
        from onnx import shape_inference

        import ascendir as air
        import models

        air.onnx  # noqa: B018 - the frontend must be importable
    except (ImportError, AttributeError):
        return []
    rows = []
    cases = {
        "resnet50": lambda: models.resnet50(),
        "bert": lambda: models.bert(),
        "decoder": lambda: models.decoder(layers=20 if quick else 180),
    }
    for name, make in cases.items():
        model = make()
        g = air.onnx.load(model)
        ours = measure(g.infer_shapes, 5)[0]
        peer_s = measure(
            lambda m=model: shape_inference.infer_shapes(m, data_prop=True), 3
        )[0]
        rows.append(
            row(
                f"infer_shapes {name} ({len(g)} nodes)",
                ours,
                "onnx.shape_inference.infer_shapes(data_prop)",
                peer_s,
            )
        )
    return rows


def run(quick: bool) -> list[dict]:
    """Rows for G(100k) (quick) or G(100k) and G(1M), then the real models."""
    rows = []
    sizes = [100_000] if quick else [100_000, 1_000_000]
    repeat = 3 if quick else 5
    for n in sizes:
        g = build_g_n_bulk(n)
        # Every desc starts as [-1, 64]; the graph input is [1, 64], so the first run rewrites
        # every output (later runs recompute every rule and find nothing to change).
        g.nodes[0].op_desc.input_desc(0).shape = [1, 64]
        for node in (g.nodes[1], g.nodes[-1]):
            node.op_desc.output_desc(0).shape = [-1, 64]
        ours = measure(g.infer_shapes, repeat)[0]
        peer_s = None
        try:
            from onnx import shape_inference

            model = onnx_g_n(n)
            gc.collect()
            peer_s = measure(
                lambda: shape_inference.infer_shapes(model, data_prop=True),  # noqa: B023
                max(1, repeat // 2),
            )[0]
            _check_same_result(g, shape_inference.infer_shapes(model))
        except ImportError:
            pass
        peer = "onnx.shape_inference.infer_shapes(data_prop)"
        rows.append(row(f"infer_shapes G({n})", ours, peer, peer_s))
        del g
        gc.collect()
    rows.extend(_model_rows(quick))
    return rows


if __name__ == "__main__":
    for r in run("--quick" in sys.argv):
        print(r)
