"""Random edit sequences through the Python API (a seeded fuzzer): every call either succeeds
or raises an ``AscendIRError`` and then leaves the graph exactly as it was; after every step the
structural invariants hold, and the whole tree round-trips through its ModelDef bytes.

CI runs a few hundred steps. The long run (see docs/FUZZING.md)::

    ASCENDIR_FUZZ_EDITS=200000 python -m pytest -q tests/test_fuzz_edits.py
"""

from __future__ import annotations

import os
import random

import numpy as np
import pytest

import ascendir as air

STEPS = int(os.environ.get("ASCENDIR_FUZZ_EDITS", "400"))
SEEDS = [int(s) for s in os.environ.get("ASCENDIR_FUZZ_EDIT_SEEDS", "1,2,3").split(",")]
TYPES = ["Relu", "Add", "Identity", "If", "PartitionedCall", "Cast", "Tile", "Reshape"]


class Fuzzer:
    """One root graph, its subgraphs, and a pool of names to pick from."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.root = air.Graph("root")
        self.root.add_input("x", air.TensorDesc([2, 3], air.float32))
        self.serial = 0
        self.ok = 0
        self.refused = 0

    def name(self, prefix: str) -> str:
        self.serial += 1
        # Sometimes a name that is already taken.
        if self.rng.random() < 0.05 and len(self.root):
            return self.rng.choice(self.root.nodes).name
        return f"{prefix}{self.serial}"

    def graphs(self) -> list[air.Graph]:
        return [self.root, *self.root.subgraphs]

    def pick_graph(self) -> air.Graph:
        return self.rng.choice(self.graphs())

    def pick_node(self, g: air.Graph) -> air.Node | None:
        nodes = g.nodes
        return self.rng.choice(nodes) if nodes else None

    def action(self) -> None:
        rng, g = self.rng, self.pick_graph()
        n = self.pick_node(g)
        kind = rng.randrange(15)
        if kind <= 3 and len(g) > 150:
            kind = rng.choice([4, 5, 9])  # keep graphs small: steps stay fast, edits varied
        if kind <= 3:
            ty = rng.choice(TYPES)
            srcs = [self.pick_node(g) for _ in range(rng.randrange(3))]
            g.add_op(ty, [s for s in srcs if s is not None], name=self.name("n"),
                     outputs=rng.randrange(1, 3))
        elif kind == 4 and n is not None:
            g.remove_node(n)
        elif kind == 5 and n is not None:
            g.erase_node(n)
        elif kind == 6 and n is not None:
            m = self.pick_node(g)
            if m is not None and n.out_data_anchors and m.in_data_anchors:
                rng.choice(n.out_data_anchors).link_to(rng.choice(m.in_data_anchors))
        elif kind == 7 and n is not None and n.in_data_anchors:
            a = rng.choice(n.in_data_anchors)
            if a.peer is not None:
                a.peer.unlink(a)
        elif kind == 8 and n is not None:
            sub = air.Graph(self.name("s"))
            d = sub.add_input(self.name("d"), air.TensorDesc([2, 3], air.float32))
            sub.set_outputs([sub.add_op("Relu", [d], name=self.name("r"))])
            g.add_subgraph(sub, parent=n, slot=rng.choice(["f", "then_branch", "body"]),
                           dynamic=rng.random() < 0.3)
        elif kind == 9 and self.root.subgraphs:
            self.root.remove_subgraph(rng.choice(self.root.subgraphs).name)
        elif kind == 10 and n is not None:
            od = n.op_desc.copy()
            if rng.random() < 0.5:
                od = air.OpDesc(n.name, rng.choice(TYPES))
                for i in range(rng.randrange(3)):
                    od.add_input(f"x{i}", air.TensorDesc([2], air.float32))
                od.add_output("y", air.TensorDesc([2], air.float32))
            g.replace_node(n, od)
        elif kind == 11:
            g.infer_shapes()
        elif kind == 12:
            g.add_const(self.name("c"), np.arange(rng.randrange(1, 5), dtype=np.int64))
        elif kind == 13 and n is not None:
            g.isolate_node(n)
        else:
            g.set_outputs([m for m in g.nodes[:2] if m.out_data_anchors])

    def step(self) -> None:
        before = self.root.dump()
        try:
            self.action()
            self.ok += 1
        except air.AscendIRError:
            self.refused += 1
            # A failed call changes nothing (inference included: it is failure-atomic).
            assert self.root.dump() == before
        for g in self.graphs():
            assert g.check_invariants() == [], g.name


@pytest.mark.parametrize("seed", SEEDS)
def test_random_edit_sequences_keep_the_graph_whole(seed: int) -> None:
    f = Fuzzer(seed)
    for i in range(STEPS):
        f.step()
        if i % 50 == 49:
            back = air.Graph.from_bytes(f.root.to_bytes())
            assert back.dump() == f.root.dump()
    assert f.ok + f.refused == STEPS
    assert f.ok > 0 and f.refused > 0
