"""The interpreter behind :func:`ascendir.evaluate`: plans, frames, the kernel registry.

A graph is compiled once per :func:`run` into a :class:`_Plan`: its nodes in topological order,
each with its kernel, its attributes (read once), and the value slots its inputs come from.
Running a plan fills a flat list of slots; a value is dropped after its last reader. Subgraphs
(If, While, Loop, ...) are planned on first use and cached for the whole run; their nesting
is bounded by :data:`MAX_DEPTH` (an :class:`~ascendir.EvaluateError` beyond it), so no Python
recursion grows with the input.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import numpy as np

from .._core import Graph, Node
from ..errors import AscendIRError, EvaluateError, UnsupportedOpError
from ..types import DataType

__all__ = [
    "MAX_DEPTH",
    "Ctx",
    "Kernel",
    "kernel",
    "kernels",
    "np_dtype",
    "output_keys",
    "run",
]

MAX_DEPTH = 64
"""How deep subgraph calls (If inside Loop inside ...) may nest."""

Kernel = Callable[["Ctx", list[Any]], Any]
"""A kernel: ``(ctx, inputs) -> output array | sequence of output arrays``; ``inputs`` follow
the node's input ports (None for an unlinked optional input)."""

_KERNELS: dict[str, Kernel] = {}


_K = TypeVar("_K", bound=Kernel)


def kernel(*types: str) -> Callable[[_K], _K]:
    """Register the decorated function as the kernel of the GE op ``types``."""

    def deco(fn: _K) -> _K:
        for t in types:
            if t in _KERNELS:
                raise ValueError(f"kernel of {t!r} registered twice")
            _KERNELS[t] = fn
        return fn

    return deco


def kernels() -> dict[str, Kernel]:
    """Every registered kernel by GE op type (a copy)."""
    return dict(_KERNELS)


_NP_OF: dict[int, Any] = {}


def np_dtype(dtype: Any) -> np.dtype[Any]:
    """The numpy dtype of a GE data type (a :class:`DataType`, its number or a dtype)."""
    if isinstance(dtype, np.dtype):
        return dtype
    if isinstance(dtype, DataType | int):
        key = int(dtype)
        hit = _NP_OF.get(key)
        if hit is None:
            try:
                hit = DataType(key).to_numpy()
            except (ValueError, AscendIRError) as e:
                raise EvaluateError(f"data type {key} has no numpy equivalent") from e
            _NP_OF[key] = hit
        return hit
    return np.dtype(dtype)


class Ctx:
    """What a kernel sees of its node: name, type, attributes, ports, descs, and the run."""

    __slots__ = ("node", "name", "type", "attrs", "in_names", "out_names", "_in_index",
                 "run", "graph", "cache")

    def __init__(self, node: Node, run: _Run, graph: Graph) -> None:
        od = node.op_desc
        self.node = node
        self.name: str = node.name
        self.type: str = node.type
        self.attrs: dict[str, Any] = od.attrs.to_dict()
        self.in_names: list[str] = od.input_names
        self.out_names: list[str] = od.output_names
        self._in_index: dict[str, int] | None = None
        self.run = run
        self.graph = graph
        self.cache: dict[str, Any] = {}

    # ---------------------------------------------------------------- attributes

    def attr(self, key: str, default: Any = None) -> Any:
        """Attribute ``key`` (``default`` when absent)."""
        return self.attrs.get(key, default)

    def require(self, key: str) -> Any:
        """Attribute ``key``; an :class:`EvaluateError` naming the node when absent."""
        if key not in self.attrs:
            raise self.error(f"has no attribute '{key}'")
        return self.attrs[key]

    def ints(self, key: str, default: Sequence[int] | None = None) -> list[int]:
        """An integer-list attribute (a scalar becomes a one-element list)."""
        v = self.attrs.get(key)
        if v is None:
            if default is None:
                raise self.error(f"has no attribute '{key}'")
            return list(default)
        if isinstance(v, int | np.integer):
            return [int(v)]
        return [int(x) for x in v]

    def flag(self, key: str, default: bool = False) -> bool:
        """A boolean attribute (ints accepted)."""
        v = self.attrs.get(key)
        return default if v is None else bool(v)

    # ---------------------------------------------------------------- ports and descs

    def port(self, ins: list[Any], name: str) -> Any:
        """The value of input port ``name`` (None when the port is absent or unlinked)."""
        if self._in_index is None:
            self._in_index = {n: i for i, n in enumerate(self.in_names)}
        i = self._in_index.get(name)
        return None if i is None else ins[i]

    def has_port(self, name: str) -> bool:
        """Whether the node has input port ``name``."""
        return name in self.in_names

    def group(self, ins: list[Any], prefix: str) -> list[Any]:
        """The values of the dynamic input group ``prefix`` (``prefix0, prefix1, ...``)."""
        out = []
        for i, n in enumerate(self.in_names):
            if n.startswith(prefix) and n[len(prefix):].isdigit() and ins[i] is not None:
                out.append(ins[i])
        return out

    @property
    def num_outputs(self) -> int:
        """Output ports of the node."""
        return len(self.out_names)

    def out_desc_dtype(self, i: int = 0) -> np.dtype[Any] | None:
        """The dtype recorded on output ``i``'s desc (None when undefined or not numpy's)."""
        try:
            dt = self.node.op_desc.output_desc(i).dtype
        except (AscendIRError, IndexError):
            return None
        if dt == DataType.UNDEFINED:
            return None
        try:
            return np_dtype(dt)
        except EvaluateError:
            return None

    def out_dtype(self, i: int, attr: str | None, default: Any) -> np.dtype[Any]:
        """Output ``i``'s dtype: attribute ``attr`` when set, else the desc's, else
        ``default`` (a GE dtype)."""
        if attr is not None and self.attrs.get(attr) is not None:
            return np_dtype(self.attrs[attr])
        d = self.out_desc_dtype(i)
        return d if d is not None else np_dtype(default)

    def in_format(self, i: int) -> str:
        """The primary format name of input ``i``'s desc (``"ND"`` when unknown)."""
        try:
            f = self.node.op_desc.input_desc(i).format
        except (AscendIRError, IndexError):
            return "ND"
        return getattr(f, "name", "ND")

    def layout(self, i: int = 0, default: str = "NCHW") -> str:
        """The data layout of input ``i`` for NCHW/NHWC ops: its desc format when that is
        NCHW or NHWC, else the ``data_format`` attribute, else ``default``."""
        f = self.in_format(i)
        if f in ("NCHW", "NHWC"):
            return f
        df = self.attrs.get("data_format")
        return str(df) if df else default

    def error(self, message: str, cls: type[EvaluateError] = EvaluateError) -> EvaluateError:
        """An error naming this node."""
        return cls(f"{self.type} '{self.name}': {message}", node=self.name, op_type=self.type,
                   graph=self.graph.name)

    def subgraph(self, index: int) -> Graph:
        """The subgraph instance ``index`` of this node."""
        names = self.node.op_desc.subgraph_names
        if index >= len(names) or not names[index]:
            raise self.error(f"has no subgraph {index} (it has {len(names)})")
        root = self.graph.root_graph
        try:
            return root.subgraph(names[index])
        except AscendIRError as e:
            raise self.error(f"subgraph '{names[index]}' is not registered on the root "
                             "graph") from e

    def subgraph_of(self, ir_name: str) -> Graph:
        """The subgraph instance of the IR slot ``ir_name`` (``then_branch``, ``body``...)."""
        ir = [n for n, _ in self.node.op_desc.subgraph_ir_names]
        if ir_name not in ir:
            raise self.error(f"has no subgraph slot '{ir_name}' (slots: {', '.join(ir)})")
        return self.subgraph(ir.index(ir_name))

    def subgraph_count(self) -> int:
        """How many subgraph instances the node has."""
        return len(self.node.op_desc.subgraph_names)

    def call(self, sub: Graph, feeds: Mapping[int, Any], body_order: bool = False) -> list[Any]:
        """Run subgraph ``sub`` with its Data nodes fed by ``feeds`` (keyed by parent input
        index, ``_parent_node_index``); returns its outputs by parent output index, or in the
        order of its NetOutput's inputs with ``body_order`` (a Loop body, whose condition
        output feeds no parent output)."""
        return self.run.call(self, sub, feeds, body_order)


def _is_data(t: str) -> bool:
    return t in ("Data", "RefData")


def output_keys(graph: Graph) -> list[str]:
    """The result keys of :func:`ascendir.evaluate` for ``graph``, in NetOutput input order.

    Output ``i`` is keyed by the name of NetOutput's input desc ``i`` (the value name a
    frontend records, e.g. the ONNX output name); without one, by the producing node's name
    (``"node"`` for output 0, ``"node:k"`` for output ``k``), where an AscBackend output
    stands for the node it replaced (``_datadump_origin_name``). A repeated key gets
    ``"#i"`` appended (``i`` the NetOutput input index).
    """
    keys: list[str] = []
    outs = graph.outputs
    net = _net_output(graph)
    seen: set[str] = set()
    for i, (node, k) in enumerate(outs):
        key = None
        if net is not None:
            try:
                key = net.op_desc.input_desc(i).name
            except (AscendIRError, IndexError):
                key = None
        if not key:
            name, idx = node.name, k
            try:
                d = node.op_desc.output_desc(k)
                origin = d.attrs.get("_datadump_origin_name")
                if origin:
                    name = str(origin)
                    idx = int(d.attrs.get("_datadump_origin_output_index", 0))
            except (AscendIRError, IndexError):
                pass
            key = name if idx == 0 else f"{name}:{idx}"
        if key in seen:
            key = f"{key}#{i}"
        seen.add(key)
        keys.append(key)
    return keys


def _net_output(graph: Graph) -> Node | None:
    for n in graph.nodes:
        if n.type == "NetOutput":
            return n
    return None


class _Step:
    __slots__ = ("ctx", "fn", "ins", "out", "n_out", "free")

    def __init__(self, ctx: Ctx, fn: Kernel, ins: list[int | None], out: int, n_out: int) -> None:
        self.ctx = ctx
        self.fn = fn
        self.ins = ins
        self.out = out
        self.n_out = n_out
        self.free: list[int] = []


class _Plan:
    """One graph, ready to run: steps in topological order over numbered value slots."""

    def __init__(self, graph: Graph, run: _Run) -> None:
        self.graph = graph
        order = graph.topo_order()
        # Values are keyed by node name: unique in a graph, unlike the op id (GE gives an added
        # node the node count as its id, which an earlier node keeps after a removal).
        slot_of: dict[tuple[str, int], int] = {}
        nslots = 0
        for n in order:
            for k in range(len(n.out_data_anchors)):
                slot_of[(n.name, k)] = nslots
                nslots += 1
        self.nslots = nslots
        self.steps: list[_Step] = []
        self.data: list[tuple[int, Node]] = []  # (slot, Data node)
        self.outputs: list[int | None] = []
        missing: list[str] = []
        for n in order:
            t = n.type
            base = slot_of.get((n.name, 0), -1)
            if t == "NetOutput":
                self.outputs = [self._src(a, slot_of) for a in n.in_data_anchors]
                continue
            if _is_data(t):
                self.data.append((base, n))
                continue
            fn = _KERNELS.get(t)
            if fn is None:
                missing.append(f"'{n.name}' ({t})")
                continue
            ins = [self._src(a, slot_of) for a in n.in_data_anchors]
            self.steps.append(_Step(Ctx(n, run, graph), fn, ins, base,
                                    len(n.out_data_anchors)))
        if missing:
            more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
            first = missing[0].split("'")[1]
            from ._ge import NOT_EVALUATED

            ty = missing[0].rsplit("(", 1)[1][:-1]
            why = f" ({ty}: {NOT_EVALUATED[ty]})" if ty in NOT_EVALUATED else ""
            raise UnsupportedOpError(
                f"graph '{graph.name}': no evaluate kernel for node {', '.join(missing[:5])}"
                f"{more}{why}", node=first, op_type=missing[0].rsplit("(", 1)[1][:-1],
                graph=graph.name)
        if not self.outputs and _net_output(graph) is None:
            raise EvaluateError(f"graph '{graph.name}' has no NetOutput: nothing to return",
                                graph=graph.name)
        # Drop each value after its last reader (outputs are kept).
        last: dict[int, int] = {}
        for i, s in enumerate(self.steps):
            for src in s.ins:
                if src is not None:
                    last[src] = i
        keep = {o for o in self.outputs if o is not None}
        for src, i in last.items():
            if src not in keep:
                self.steps[i].free.append(src)

    @staticmethod
    def _src(anchor: Any, slot_of: dict[tuple[str, int], int]) -> int | None:
        peer = anchor.peer
        if peer is None:
            return None
        return slot_of[(peer.node.name, peer.index)]

    def execute(self, data_values: list[Any]) -> list[Any]:
        """Run with the Data nodes' values (in :attr:`data` order); the NetOutput inputs."""
        vals: list[Any] = [None] * self.nslots
        for (slot, _), v in zip(self.data, data_values, strict=True):
            if slot >= 0:
                vals[slot] = v
        for s in self.steps:
            ctx = s.ctx
            args = [None if i is None else vals[i] for i in s.ins]
            try:
                res = s.fn(ctx, args)
            except EvaluateError:
                raise
            except AscendIRError as e:
                raise ctx.error(str(e)) from e
            except (ValueError, TypeError, IndexError, KeyError, ArithmeticError,
                    np.linalg.LinAlgError) as e:
                raise ctx.error(f"{type(e).__name__}: {e}") from e
            if s.n_out == 1:
                if isinstance(res, list | tuple):
                    res = res[0]
                vals[s.out] = res
            elif s.n_out > 1:
                if not isinstance(res, list | tuple) or len(res) < s.n_out:
                    raise ctx.error(f"kernel returned {type(res).__name__} for {s.n_out} "
                                    "outputs")
                for k in range(s.n_out):
                    vals[s.out + k] = res[k]
            for f in s.free:
                vals[f] = None
        return [None if o is None else vals[o] for o in self.outputs]


class _Run:
    """One :func:`run`: the plan cache and the subgraph depth."""

    def __init__(self) -> None:
        self.plans: dict[str, _Plan] = {}
        self.depth = 0
        self.root_inputs: dict[int, np.ndarray] = {}
        """The root graph's feeds by Data ``index`` (AscBackend symbols name them)."""

    def plan(self, graph: Graph, key: str | None = None) -> _Plan:
        """The plan of ``graph``; subgraphs are cached by name (unique on their root)."""
        if key is None:
            return _Plan(graph, self)
        p = self.plans.get(key)
        if p is None:
            p = _Plan(graph, self)
            self.plans[key] = p
        return p

    def call(self, ctx: Ctx, sub: Graph, feeds: Mapping[int, Any],
             body_order: bool = False) -> list[Any]:
        if self.depth >= MAX_DEPTH:
            raise ctx.error(f"subgraphs nest deeper than {MAX_DEPTH} levels")
        plan = self.plan(sub, sub.name)
        values = []
        for pos, (_, d) in enumerate(plan.data):
            a = d.attrs
            p = a.get("_parent_node_index")
            if p is None:
                p = a.get("index", pos)
            p = int(p)
            if p not in feeds:
                raise ctx.error(f"subgraph '{sub.name}': Data '{d.name}' reads parent input {p}"
                                f", which the node does not provide")
            values.append(feeds[p])
        self.depth += 1
        try:
            outs = plan.execute(values)
        finally:
            self.depth -= 1
        net = _net_output(sub)
        if net is None or body_order:
            return outs
        order: list[Any] = [None] * len(outs)
        for i in range(len(outs)):
            p = net.op_desc.input_desc(i).attrs.get("_parent_node_index")
            j = i if p is None else int(p)
            if not 0 <= j < len(outs):
                raise ctx.error(f"subgraph '{sub.name}': output {i} maps to parent output {j}"
                                f" of {len(outs)}")
            order[j] = outs[i]
        return order


def _check_feed(node: Node, value: Any) -> np.ndarray:
    desc = node.op_desc.output_desc(0) if node.op_desc.num_outputs else None
    want = None
    if desc is not None and desc.dtype != DataType.UNDEFINED:
        try:
            want = np_dtype(desc.dtype)
        except EvaluateError:
            want = None
    if isinstance(value, np.ndarray | np.generic):
        arr = np.asarray(value)
        if want is not None and arr.dtype != want:
            raise EvaluateError(f"feed '{node.name}' has dtype {arr.dtype}, the graph input "
                                f"is {want}", input=node.name)
    else:
        arr = np.asarray(value, dtype=want)
    if desc is not None:
        shape = tuple(desc.shape)
        if shape != (-2,) and shape:
            ok = len(shape) == arr.ndim and all(
                d < 0 or d == a for d, a in zip(shape, arr.shape, strict=True))
            if not ok:
                raise EvaluateError(f"feed '{node.name}' has shape {list(arr.shape)}, the "
                                    f"graph input is {list(shape)} (-1: any)", input=node.name)
        elif shape == () and desc.is_valid and arr.ndim != 0 and not desc.is_unknown_shape:
            if arr.size != 1:
                raise EvaluateError(f"feed '{node.name}' has shape {list(arr.shape)}, the "
                                    "graph input is a scalar", input=node.name)
            arr = arr.reshape(())
    return arr


def run(graph: Graph, feeds: Mapping[str, Any] | Sequence[Any]) -> dict[str, np.ndarray]:
    """Evaluate ``graph`` (see :func:`ascendir.evaluate`)."""
    if not isinstance(graph, Graph):
        raise EvaluateError(f"expected an ascendir.Graph, not {type(graph).__name__}")
    r = _Run()
    plan = r.plan(graph)
    data = [n for _, n in plan.data]
    if isinstance(feeds, Mapping):
        names = {n.name for n in data}
        extra = sorted(str(k) for k in feeds if k not in names)
        if extra:
            raise EvaluateError(f"graph '{graph.name}' has no input named "
                                f"{', '.join(repr(e) for e in extra)} (inputs: "
                                f"{', '.join(sorted(names)) or 'none'})", input=extra[0])
        values = []
        for n in data:
            if n.name not in feeds:
                raise EvaluateError(f"no feed for graph input '{n.name}'", input=n.name)
            values.append(_check_feed(n, feeds[n.name]))
    else:
        ordered = graph.inputs
        if len(feeds) != len(ordered):
            raise EvaluateError(f"graph '{graph.name}' has {len(ordered)} inputs, got "
                                f"{len(feeds)} feeds")
        by_name = {n.name: _check_feed(n, v) for n, v in zip(ordered, feeds, strict=True)}
        missing = [n.name for n in data if n.name not in by_name]
        if missing:
            raise EvaluateError(f"graph input '{missing[0]}' is not in Graph.inputs",
                                input=missing[0])
        values = [by_name[n.name] for n in data]
    for pos, (n, v) in enumerate(zip(data, values, strict=True)):
        r.root_inputs[int(n.attrs.get("index", pos))] = v
    outs = plan.execute(values)
    keys = output_keys(graph)
    result: dict[str, np.ndarray] = {}
    for key, v in zip(keys, outs, strict=True):
        if v is None:
            raise EvaluateError(f"graph output '{key}' is not connected", graph=graph.name)
        result[key] = v if isinstance(v, np.ndarray) else np.asarray(v)
    return result
