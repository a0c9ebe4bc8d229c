"""Build a one-million-node graph from numpy arrays without a Python call per node."""

import time

import numpy as np

import ascendir as air

n = 1_000_000
rng = np.random.default_rng(0)
types = np.full(n, 1)
types[0] = 0
i = np.arange(1, n)
edges = np.stack([rng.integers(0, i), np.zeros_like(i), i, np.zeros_like(i)], axis=1)
start = time.perf_counter()
g = air.Graph.from_edges(types, edges, type_names=["Data", "Relu"],
                         ports={"Data": (["x"], ["y"]), "Relu": (["x"], ["y"])},
                         desc=air.TensorDesc([1, 64], air.float32), name="random_tree")
print(f"{len(g)} nodes, {g.num_links} links in {time.perf_counter() - start:.2f} s")
