"""Shared benchmark workloads (see the project's benchmark conventions).

G(n): node 0 is ``Data`` (one input desc, unconnected); node 1 is ``Relu`` fed by node 0; every
node i >= 2 is ``Add`` with input ``x0`` from node i-1 and input ``x1`` from node r, r uniform in
[0, i-2] (seeded RNG); every tensor desc is float32 [1, 64], format ND; one output ``y``.
"""

from __future__ import annotations

import numpy as np

SEED = 20261130
TYPE_NAMES = ["Data", "Relu", "Add"]
PORTS = {"Data": (["x"], ["y"]), "Relu": (["x"], ["y"]), "Add": (["x0", "x1"], ["y"])}


def g_n_random_sources(n: int) -> np.ndarray:
    """The second producer r of every node i >= 2 (index i-2 of the result)."""
    rng = np.random.default_rng(SEED)
    i = np.arange(2, n, dtype=np.int64)
    return (rng.random(n - 2) * (i - 1)).astype(np.int64)


def g_n_arrays(n: int) -> tuple[np.ndarray, np.ndarray]:
    """``(types, edges)`` of G(n) for ``ascendir.Graph.from_edges``: edges are
    ``(src, src_out, dst, dst_in)`` rows, each node's inputs in order."""
    types = np.full(n, 2, dtype=np.int64)
    types[0] = 0
    if n > 1:
        types[1] = 1
    r = g_n_random_sources(n)
    i = np.arange(2, n, dtype=np.int64)
    zeros = np.zeros(n - 2, dtype=np.int64)
    first = np.stack([i - 1, zeros, i, zeros], axis=1)
    second = np.stack([r, zeros, i, zeros + 1], axis=1)
    body = np.stack([first, second], axis=1).reshape(-1, 4)
    head = np.array([[0, 0, 1, 0]], dtype=np.int64) if n > 1 else np.zeros((0, 4), np.int64)
    return types, np.concatenate([head, body])


def build_g_n_bulk(n: int):
    """G(n) through the bulk builder."""
    import ascendir as air

    types, edges = g_n_arrays(n)
    desc = air.TensorDesc([1, 64], air.float32)
    return air.Graph.from_edges(types, edges, type_names=TYPE_NAMES, ports=PORTS, desc=desc,
                                name=f"G{n}")


def build_g_n_python(n: int):
    """G(n) through the Python API, one ``add_op`` call per node."""
    import ascendir as air

    r = g_n_random_sources(n).tolist()
    td = air.TensorDesc([1, 64], air.float32)
    g = air.Graph(f"G{n}")
    nodes = [g.add_input("n0", td)]
    add_op = g.add_op
    nodes.append(add_op("Relu", [nodes[0]], name="n1", input_names=["x"], outputs=["y"],
                        output_descs=[td]))
    descs = [td]
    names = ["x0", "x1"]
    outs = ["y"]
    for i in range(2, n):
        nodes.append(add_op("Add", [nodes[i - 1], nodes[r[i - 2]]], name=f"n{i}",
                            input_names=names, outputs=outs, output_descs=descs))
    return g
