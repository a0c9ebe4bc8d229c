"""Topological sorting of G(n) in each GE mode, side by side with rustworkx and networkx on the
same topology; and isolating / removing 10% of G(n)'s nodes, side by side with onnx-ir's
``Graph.remove`` of the same nodes."""

from __future__ import annotations

import gc
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from timing import measure, row  # noqa: E402
from workloads import build_g_n_bulk, g_n_arrays, g_n_random_sources  # noqa: E402

MODES = ("dfs", "bfs", "rdfs", "stable_rdfs")


def _edges(n: int) -> list[tuple[int, int]]:
    _, edges = g_n_arrays(n)
    return list(zip(edges[:, 0].tolist(), edges[:, 2].tolist(), strict=True))


def _sort_rows(n: int, repeat: int) -> list[dict]:
    rows = []
    g = build_g_n_bulk(n)
    pairs = _edges(n)
    peers: dict[str, float | None] = {}
    try:
        import rustworkx as rx

        dg = rx.PyDiGraph(multigraph=True)
        dg.add_nodes_from(range(n))
        dg.add_edges_from_no_data(pairs)
        peers["rustworkx.topological_sort"] = measure(
            lambda: rx.topological_sort(dg), repeat)[0]  # noqa: B023
    except ImportError:
        peers["rustworkx.topological_sort"] = None
    try:
        import networkx as nx

        if n <= 1_000_000:
            ng = nx.MultiDiGraph()
            ng.add_nodes_from(range(n))
            ng.add_edges_from(pairs)
            peers["networkx.topological_sort"] = measure(
                lambda: list(nx.topological_sort(ng)), max(1, repeat // 3))[0]
    except ImportError:
        peers["networkx.topological_sort"] = None
    gc.collect()
    for mode in MODES:
        for mp in (False, True):
            if mp and mode in ("rdfs", "stable_rdfs"):
                continue
            ours = measure(lambda m=mode, p=mp: g.topo_sort(m, memory_priority=p), repeat)[0]
            label = f"topo_sort G({n}) {mode}{' +memory_priority' if mp else ''}"
            for peer, peer_s in peers.items():
                rows.append(row(label, ours, peer, peer_s))
    return rows


def _onnx_ir_graph(n: int):
    import onnx_ir as ir

    r = g_n_random_sources(n).tolist()
    ftype = ir.TensorType(ir.DataType.FLOAT)
    shape = ir.Shape([1, 64])
    x = ir.Value(name="x", shape=shape, type=ftype)
    nodes = []
    for i in range(n):
        if i == 0:
            inputs = [x]
            op = "Data"
        elif i == 1:
            inputs = [nodes[0].outputs[0]]
            op = "Relu"
        else:
            inputs = [nodes[i - 1].outputs[0], nodes[r[i - 2]].outputs[0]]
            op = "Add"
        node = ir.Node("", op, inputs=inputs, num_outputs=1, name=f"n{i}")
        node.outputs[0].type = ftype
        node.outputs[0].shape = shape
        nodes.append(node)
    return ir.Graph(inputs=[x], outputs=[nodes[-1].outputs[0]], nodes=nodes, name="g"), nodes


def _victims(n: int) -> list[int]:
    rng = np.random.default_rng(7)
    return sorted(rng.choice(np.arange(2, n - 1), size=n // 10, replace=False).tolist())


def _remove_rows(n: int) -> list[dict]:
    rows = []
    victims = _victims(n)
    peer_s = None
    try:
        og, onodes = _onnx_ir_graph(n)
        targets = [onodes[i] for i in victims]
        import time

        start = time.perf_counter()
        for node in targets:
            og.remove(node, safe=False)
        peer_s = time.perf_counter() - start
        del og, onodes, targets
    except ImportError:
        pass
    gc.collect()
    for op in ("remove_node", "isolate_node"):
        g = build_g_n_bulk(n)
        nodes = g.nodes
        targets = [nodes[i] for i in victims]
        del nodes
        fn = getattr(g, op)
        import time

        start = time.perf_counter()
        for node in targets:
            fn(node)
        ours = time.perf_counter() - start
        rows.append(row(f"{op} 10% of G({n})", ours, "onnx_ir Graph.remove(safe=False)", peer_s,
                        note="ours keeps every dependency (re-links + control full-connect)"))
        del g, targets
        gc.collect()
    return rows


def run(quick: bool) -> list[dict]:
    """Benchmark rows (see ``benches/run.py``)."""
    n = 100_000 if quick else 1_000_000
    repeat = 3 if quick else 5
    rows = _sort_rows(n, repeat)
    rows += _remove_rows(10_000 if quick else n)
    return rows


if __name__ == "__main__":
    import json

    print(json.dumps(run("--quick" in sys.argv), indent=1))
