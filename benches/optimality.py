"""C14, the optimality probe: the compiler's greedy partition against the exhaustive best legal
partition, by bytes moved, on random small graphs of lowerable element-wise ops (with a barrier
now and then, so convexity matters).

Legality of a cluster, the compiler's rules for element-wise ops: its members are connected
through shared tensors (L1), no path leaves it and comes back through an outside node (L2), at
most ``max_inputs`` distinct inputs and ``max_outputs`` outputs (L6); one loop space holds for
every pair here (all values are ``[4, 16]`` or broadcast from ``[1, 16]``). A cluster of one
compute op is lifted (``min_cluster_ops`` 2), so it costs what the node costs.

Cost (the report's ``bytes_after``): every compute unit counts the bytes of each tensor it reads
and writes — a fused kernel each distinct outside tensor once, an unfused node once per input.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

UNARY = ["Abs", "Relu", "Tanh", "Sigmoid", "Neg"]
BINARY = ["Add", "Mul", "Sub", "Maximum"]
ROW = 16 * 4  # bytes of a [1, 16] float32 tensor
FULL = 4 * 16 * 4  # bytes of a [4, 16] float32 tensor


@dataclass
class Probe:
    """A random graph: nodes in topological order with their inputs (tensor names)."""

    nodes: list[tuple[str, str, list[str]]] = field(default_factory=list)  # (name, type, ins)
    sizes: dict[str, int] = field(default_factory=dict)  # tensor -> bytes
    outputs: list[str] = field(default_factory=list)

    def lowered(self) -> list[str]:
        return [n for n, t, _ in self.nodes if t != "MatMulV2"]


def random_probe(seed: int, max_lowered: int = 10) -> Probe:
    """Inputs ``x`` [4, 16] and ``y`` [1, 16], then up to ``max_lowered`` element-wise ops and
    sometimes a MatMul barrier, each reading earlier values at random (no two alike: the
    compiler would merge them before fusing)."""
    rng = np.random.default_rng(seed)
    p = Probe()
    p.sizes = {"x": FULL, "y": ROW, "w": 16 * 16 * 4}
    vals = ["x", "y"]
    n_low = int(rng.integers(3, max_lowered + 1))
    i = 0
    while len(p.lowered()) < n_low:
        name = f"n{i}"
        i += 1
        r = rng.random()
        pick = [v for v in vals if v != "y"] if r < 0.1 else vals
        a = pick[int(rng.integers(len(pick)))]
        if r < 0.1 and p.sizes[a] == FULL:
            p.nodes.append((name, "MatMulV2", [a, "w"]))
        elif r < 0.45:
            p.nodes.append((name, UNARY[int(rng.integers(len(UNARY)))], [a]))
        else:
            b = vals[int(rng.integers(len(vals)))]
            p.nodes.append((name, BINARY[int(rng.integers(len(BINARY)))], [a, b]))
        ins = p.nodes[-1][2]
        if any(t == p.nodes[-1][1] and i == ins for _, t, i in p.nodes[:-1]):
            p.nodes.pop()  # the compiler merges common subexpressions: draw again
            continue
        p.sizes[name] = FULL if any(p.sizes[v] == FULL for v in ins if v != "w") else ROW
        vals.append(name)
    used = {v for _, _, ins in p.nodes for v in ins}
    p.outputs = [n for n, _, _ in p.nodes if n not in used] or [p.nodes[-1][0]]
    return p


def to_graph(p: Probe):
    """The probe as an ascendir Graph."""
    import ascendir as air

    g = air.Graph("probe")
    val = {"x": g.add_input("x", air.TensorDesc([4, 16], air.float32)),
           "y": g.add_input("y", air.TensorDesc([1, 16], air.float32)),
           "w": g.add_const("w", np.zeros((16, 16), np.float32))}
    for name, ty, ins in p.nodes:
        val[name] = g.add_op(ty, [val[v] for v in ins], name=name)
    g.set_outputs([val[o] for o in p.outputs])
    return g


def _consumers(p: Probe) -> dict[str, list[str]]:
    c: dict[str, list[str]] = {}
    for n, _, ins in p.nodes:
        for v in ins:
            c.setdefault(v, []).append(n)
    return c


def cost(p: Probe, clusters: list[set[str]]) -> int:
    """Bytes moved with ``clusters`` fused (clusters of one node are left as nodes)."""
    cons = _consumers(p)
    ins_of = {n: ins for n, _, ins in p.nodes}
    unit = {m: k for k, c in enumerate(clusters) if len(c) > 1 for m in c}
    total = 0
    for k, c in enumerate(clusters):
        if len(c) < 2:
            continue
        reads = {v for m in c for v in ins_of[m] if v not in c}
        writes = {m for m in c if m in p.outputs or any(unit.get(u) != k for u in cons.get(m, []))}
        total += sum(p.sizes[v] for v in reads) + sum(p.sizes[v] for v in writes)
    for n, _, ins in p.nodes:
        if n not in unit:
            total += p.sizes[n] + sum(p.sizes[v] for v in ins)
    return total


def legal(p: Probe, c: set[str], max_inputs: int = 8, max_outputs: int = 8) -> bool:
    """Whether ``c`` may be one kernel (module docstring)."""
    if len(c) < 2:
        return True
    ins_of = {n: ins for n, _, ins in p.nodes}
    cons = _consumers(p)
    # L1: connected through shared tensors (producer-consumer or a common input).
    members = sorted(c)
    seen = {members[0]}
    stack = [members[0]]
    while stack:
        m = stack.pop()
        for o in members:
            if o in seen:
                continue
            shared = (m in ins_of[o] or o in ins_of[m]
                      or bool(set(ins_of[m]) & set(ins_of[o])))
            if shared:
                seen.add(o)
                stack.append(o)
    if len(seen) != len(c):
        return False
    # L2: no path c -> outside -> c.
    frontier = [u for m in c for u in cons.get(m, []) if u not in c]
    reach = set()
    while frontier:
        u = frontier.pop()
        if u in reach:
            continue
        reach.add(u)
        for w in cons.get(u, []):
            if w in c:
                return False
            frontier.append(w)
    # L6.
    reads = {v for m in c for v in ins_of[m] if v not in c}
    writes = {m for m in c if m in p.outputs or any(u not in c for u in cons.get(m, []))}
    return len(reads) <= max_inputs and len(writes) <= max_outputs


def partitions(items: list[str]) -> Iterator[list[set[str]]]:
    """Every set partition of ``items`` (restricted growth strings)."""
    n = len(items)
    if n == 0:
        yield []
        return
    blocks: list[set[str]] = []

    def rec(i: int) -> Iterator[list[set[str]]]:
        if i == n:
            yield [set(b) for b in blocks]
            return
        for b in blocks:
            b.add(items[i])
            yield from rec(i + 1)
            b.remove(items[i])
        blocks.append({items[i]})
        yield from rec(i + 1)
        blocks.pop()

    yield from rec(0)


def best(p: Probe) -> int:
    """The least cost over partitions of the lowered nodes into legal clusters."""
    low = p.lowered()
    memo: dict[frozenset[str], bool] = {}
    out = cost(p, [{n} for n in low])
    for part in partitions(low):
        ok = True
        for b in part:
            key = frozenset(b)
            if key not in memo:
                memo[key] = legal(p, b)
            if not memo[key]:
                ok = False
                break
        if ok:
            out = min(out, cost(p, part))
    return out


def greedy(p: Probe) -> tuple[int, int]:
    """``(cost of the compiler's partition by this model, the report's bytes_after)``."""
    import ascendir as air

    cm = air.compile(to_graph(p))
    clusters = [set(k.members) for k in cm.kernels]
    fused = {m for c in clusters for m in c}
    clusters += [{n} for n in p.lowered() if n not in fused]
    return cost(p, clusters), int(cm.report.data["bytes_after"])


def probe(count: int, max_lowered: int, seed0: int = 0) -> dict[str, float]:
    """Run the probe on ``count`` graphs; the share where greedy is optimal and the worst gap."""
    hit = 0
    worst = 0.0
    for s in range(seed0, seed0 + count):
        p = random_probe(s, max_lowered)
        g, _ = greedy(p)
        b = best(p)
        base = cost(p, [{n} for n in p.lowered()])
        saved_best = base - b
        saved_greedy = base - g
        if saved_greedy >= saved_best:
            hit += 1
        elif saved_best > 0:
            worst = max(worst, (saved_best - saved_greedy) / saved_best)
    return {"graphs": count, "optimal": hit / count, "worst_gap": worst}
