"""Import time and G(n) construction: ascendir (Python API and bulk builder) side by side with
onnx-ir, networkx, rustworkx and onnx's ModelProto, each build in a fresh process, with the
resident memory per node after the first build."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from timing import import_time, measure, row, rss_bytes  # noqa: E402
from workloads import build_g_n_bulk, build_g_n_python, g_n_arrays, g_n_random_sources  # noqa: E402


def _onnx_ir(n: int):
    import onnx_ir as ir

    r = g_n_random_sources(n).tolist()
    ftype = ir.TensorType(ir.DataType.FLOAT)
    shape = ir.Shape([1, 64])
    x = ir.Value(name="x", shape=shape, type=ftype)
    nodes = []

    def add(op: str, inputs: list, name: str) -> None:
        node = ir.Node("", op, inputs=inputs, num_outputs=1, name=name)
        out = node.outputs[0]
        out.type = ftype
        out.shape = shape
        nodes.append(node)

    add("Data", [x], "n0")
    add("Relu", [nodes[0].outputs[0]], "n1")
    for i in range(2, n):
        add("Add", [nodes[i - 1].outputs[0], nodes[r[i - 2]].outputs[0]], f"n{i}")
    return ir.Graph(inputs=[x], outputs=[nodes[-1].outputs[0]], nodes=nodes, name="g")


def _onnx_proto(n: int):
    from onnx import TensorProto, helper

    r = g_n_random_sources(n).tolist()
    nodes = [helper.make_node("Data", ["x"], ["n0"], name="n0"),
             helper.make_node("Relu", ["n0"], ["n1"], name="n1")]
    for i in range(2, n):
        nodes.append(helper.make_node("Add", [f"n{i - 1}", f"n{r[i - 2]}"], [f"n{i}"],
                                      name=f"n{i}"))
    vi = [helper.make_tensor_value_info(f"n{i}", TensorProto.FLOAT, [1, 64]) for i in range(n)]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])
    return helper.make_graph(nodes, "g", [x], [vi[-1]], value_info=vi[:-1])


def _networkx(n: int):
    import networkx as nx

    r = g_n_random_sources(n).tolist()
    g = nx.MultiDiGraph()
    desc = ("float32", (1, 64), "ND")
    g.add_node(0, name="n0", type="Data", inputs=[desc], outputs=[desc])
    g.add_node(1, name="n1", type="Relu", inputs=[desc], outputs=[desc])
    g.add_edge(0, 1, src_out=0, dst_in=0)
    for i in range(2, n):
        g.add_node(i, name=f"n{i}", type="Add", inputs=[desc, desc], outputs=[desc])
        g.add_edge(i - 1, i, src_out=0, dst_in=0)
        g.add_edge(r[i - 2], i, src_out=0, dst_in=1)
    return g


def _rustworkx(n: int):
    import rustworkx as rx

    r = g_n_random_sources(n).tolist()
    g = rx.PyDiGraph(multigraph=True)
    desc = ("float32", (1, 64), "ND")
    g.add_node({"name": "n0", "type": "Data", "inputs": [desc], "outputs": [desc]})
    g.add_node({"name": "n1", "type": "Relu", "inputs": [desc], "outputs": [desc]})
    g.add_edge(0, 1, (0, 0))
    for i in range(2, n):
        g.add_node({"name": f"n{i}", "type": "Add", "inputs": [desc, desc], "outputs": [desc]})
        g.add_edge(i - 1, i, (0, 0))
        g.add_edge(r[i - 2], i, (0, 1))
    return g


def _rustworkx_bulk(n: int):
    import rustworkx as rx

    types, edges = g_n_arrays(n)
    g = rx.PyDiGraph(multigraph=True)
    g.add_nodes_from(types.tolist())
    g.add_edges_from(list(zip(edges[:, 0].tolist(), edges[:, 2].tolist(),
                              edges[:, 3].tolist(), strict=True)))
    return g


BUILDERS = {
    "ascendir python API": build_g_n_python,
    "ascendir bulk": build_g_n_bulk,
    "onnx_ir": _onnx_ir,
    "networkx": _networkx,
    "rustworkx": _rustworkx,
    "rustworkx bulk": _rustworkx_bulk,
    "onnx ModelProto": _onnx_proto,
}


def _worker(lib: str, n: int, repeat: int) -> None:
    """Build G(n) ``repeat`` times in this process; print timings and memory as JSON."""
    import gc

    build = BUILDERS[lib]
    gc.collect()
    before = rss_bytes()
    first = build(n)
    after = rss_bytes()
    del first
    gc.collect()
    med, lo, hi = measure(lambda: build(n), repeat)
    print(json.dumps({"median": med, "min": lo, "max": hi, "rss_per_node": (after - before) / n}))


def _spawn(lib: str, n: int, repeat: int) -> dict | None:
    proc = subprocess.run([sys.executable, __file__, "--worker", lib, str(n), str(repeat)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        return {"error": proc.stderr.strip().splitlines()[-1] if proc.stderr else "failed"}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def run(quick: bool) -> list[dict]:
    rows = []
    ours_import = import_time("ascendir")
    for peer in ("onnx", "onnx_ir", "rustworkx", "numpy"):
        rows.append(row("import time", ours_import, f"import {peer}", import_time(peer)))
    sizes = [10_000, 100_000] if quick else [100_000, 1_000_000]
    repeat = 3 if quick else 5
    for n in sizes:
        results = {lib: _spawn(lib, n, repeat if lib.startswith("ascendir") else 3)
                   for lib in BUILDERS}
        for ours_lib in ("ascendir python API", "ascendir bulk"):
            ours = results[ours_lib]
            if ours is None or "error" in ours:
                rows.append(row(f"build G({n}) {ours_lib}", None, note=str(ours)))
                continue
            for peer, got in results.items():
                if peer.startswith("ascendir"):
                    continue
                if got is None or "error" in got:
                    rows.append(row(f"build G({n}) {ours_lib}", ours["median"], peer,
                                    note=f"peer failed: {got}"))
                    continue
                rows.append(row(f"build G({n}) {ours_lib}", ours["median"], peer, got["median"],
                                note=f"warm min {ours['min']:.3f}s vs {got['min']:.3f}s"))
        for lib, got in results.items():
            if got and "error" not in got:
                rows.append({"name": f"memory G({n}) {lib}", "ours_s": None, "peer": "",
                             "peer_s": None, "ratio": None,
                             "note": f"{got['rss_per_node']:.0f} B/node RSS"})
    rows.append({"name": "build torch.fx", "ours_s": None, "peer": "torch.fx", "peer_s": None,
                 "ratio": None, "note": "not measured: torch is not installable on these machines"})
    return rows


if __name__ == "__main__":
    if len(sys.argv) >= 2 and sys.argv[1] == "--worker":
        _worker(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    else:
        for r in run("--quick" in sys.argv):
            print(r)
