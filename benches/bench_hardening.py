"""Generated worst cases of the hardening issue: work that used to grow faster than the input.

Each case is timed at size n and 4n; the note gives the growth t(4n) / t(n) (about 4 for
linear work, 16 for quadratic). Cases: ONNX import of one node with n outputs and of n If nodes
with two bodies each, ``problems()`` and ``remove_subgraph`` on a root with n subgraphs, and the
refusal of a ModelDef of n empty ops.
"""

from __future__ import annotations

import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from timing import row  # noqa: E402


def _best(fn: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def _many_outputs(n: int) -> bytes:
    from onnx import TensorProto, helper

    node = helper.make_node("Custom", ["x"], [f"y{i}" for i in range(n)], domain="my")
    g = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("y0", TensorProto.FLOAT, [1])],
    )
    ops = [helper.make_opsetid("", 17), helper.make_opsetid("my", 1)]
    return helper.make_model(g, opset_imports=ops).SerializeToString()


def _many_ifs(n: int) -> bytes:
    from onnx import TensorProto, helper

    def body(name: str, out: str) -> Any:
        return helper.make_graph([helper.make_node("Identity", ["x"], [out])], name, [],
                                 [helper.make_tensor_value_info(out, TensorProto.FLOAT, [1])])

    nodes = [helper.make_node("If", ["c"], [f"o{i}"], then_branch=body(f"t{i}", f"t{i}_y"),
                              else_branch=body(f"e{i}", f"e{i}_y")) for i in range(n)]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1]),
              helper.make_tensor_value_info("c", TensorProto.BOOL, [])]
    g = helper.make_graph(nodes, "g", inputs,
                          [helper.make_tensor_value_info("o0", TensorProto.FLOAT, [1])])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def _cases(quick: bool) -> list[tuple[str, int, Callable[[int], Callable[[], Any]]]]:
    import ascendir as air
    from support.hostile import field

    def onnx_outputs(n: int) -> Callable[[], Any]:
        data = _many_outputs(n)

        def go() -> None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                air.onnx.load(data)
        return go

    def onnx_ifs(n: int) -> Callable[[], Any]:
        data = _many_ifs(n)
        return lambda: air.onnx.load(data)

    def problems(n: int) -> Callable[[], Any]:
        g = air.onnx.load(_many_ifs(n // 2))
        return g.problems

    def remove(n: int) -> Callable[[], Any]:
        g = air.onnx.load(_many_ifs(n // 2))
        names = [f"t{k}" for k in range(8)]
        g.remove_subgraph(names.pop())  # the first removal also warms the caches
        return lambda: g.remove_subgraph(names.pop())

    def empty_ops(n: int) -> Callable[[], Any]:
        data = field(7, field(1, "g") + b"\x32\x00" * n)

        def go() -> None:
            try:
                air.Model.from_bytes(data)
            except air.DecodeError:
                pass
        return go

    k = 1 if quick else 4
    return [
        ("onnx import, one node with n outputs", 2_500 * k, onnx_outputs),
        ("onnx import, n If nodes (2n bodies)", 1_000 * k, onnx_ifs),
        ("problems(), n subgraphs", 4_000 * k, problems),
        ("remove_subgraph, n subgraphs", 4_000 * k, remove),
        ("ModelDef of n empty ops refused", 250_000 * k, empty_ops),
    ]


def run(quick: bool) -> list[dict[str, Any]]:
    rows = []
    repeat = 1 if quick else 3
    for name, n, make in _cases(quick):
        small = _best(make(n), repeat)
        large = _best(make(4 * n), repeat)
        rows.append(row(f"{name}, n={4 * n}", large,
                        note=f"t(n={n}) {small:.3f} s; growth t(4n)/t(n) {large / small:.1f}"))
    return rows


if __name__ == "__main__":
    for r in run("--quick" in sys.argv):
        print(f"{r['name']}: {r['ours_s']:.3f} s ({r['note']})")
