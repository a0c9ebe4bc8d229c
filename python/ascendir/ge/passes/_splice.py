"""Replacing a subgraph of an ascendir graph by a replacement graph (the engine under
``PatternFusionPass``, ``DecomposePass`` and ``SubgraphRewriter``), with the optional numeric
check of the replacement against the subgraph it replaces."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from ... import _core, passes
from ...rewriter import VerificationError, _compare, _random
from ..error import GeError, GeValueError

_CONSTS = ("Const", "Constant")
_ids = itertools.count()


def _key(v: _core.Value) -> tuple[_core.Node, int]:
    return (v.producer(), v.index)


def data_index(n: _core.Node) -> int:
    """A replacement input's index attribute."""
    idx = n.attrs.get("index")
    if not isinstance(idx, int):
        raise GeValueError(f"replacement input '{n.name}' has no integer 'index' attribute")
    return idx


def check_replacement(repl: _core.Graph, n_inputs: int, n_outputs: int, where: str) -> None:
    """Raise :class:`GeValueError` when ``repl``'s inputs / outputs do not fit the boundary."""
    for n in repl.nodes:
        if n.type == "Data" and not 0 <= data_index(n) < n_inputs:
            raise GeValueError(f"{where}: replacement input '{n.name}' has index "
                               f"{data_index(n)}, the boundary has {n_inputs} inputs")
    if len(repl.outputs) != n_outputs:
        raise GeValueError(f"{where}: the replacement has {len(repl.outputs)} outputs, the "
                           f"replaced subgraph {n_outputs}")


def check_closed(nodes: Sequence[_core.Node], outputs: Sequence[_core.Value],
                 where: str) -> None:
    """Raise :class:`GeError` when a value of ``nodes`` other than ``outputs`` (a constant
    excepted: it stays) is read outside ``nodes``."""
    inside = set(nodes)
    outs = {_key(v) for v in outputs}
    graph_outs: set[tuple[_core.Node, int]] = set()
    if nodes:
        graph_outs = {(n, k) for n, k in nodes[0].graph.outputs}
    for n in nodes:
        if n.type in _CONSTS:
            continue
        for v in n.outputs:
            if _key(v) in outs:
                continue
            if (n, v.index) in graph_outs or any(u.node not in inside for u in v.uses()):
                raise GeError(f"{where}: output {v.index} of '{n.name}' is read outside the "
                              "replaced subgraph but is not one of its outputs")


def extract(name: str, inputs: Sequence[_core.Value | None], nodes: Sequence[_core.Node],
            outputs: Sequence[_core.Value]) -> _core.Graph:
    """``nodes`` (in topological order) as a standalone graph over ``inputs`` (``in0``,
    ``in1``, ...) computing ``outputs``."""
    g = _core.Graph(name)
    values: dict[tuple[_core.Node, int], _core.Value] = {}
    for i, v in enumerate(inputs):
        if v is not None and _key(v) not in values:
            values[_key(v)] = g.add_input(f"in{i}", v.desc.copy()).outputs[0]
    for n in nodes:
        new = g.add_node(n.op_desc.copy())
        for k, src in enumerate(n.inputs):
            if src is not None:
                mine = values.get(_key(src))
                if mine is None:
                    raise GeError(f"'{n.name}' reads '{src.producer().name}', outside the "
                                  "subgraph and not one of its inputs")
                mine.producer().out_data_anchor(mine.index).link_to(new.in_data_anchor(k))
        for k, v in enumerate(new.outputs):
            values[(n, k)] = v
    g.set_outputs([values[_key(v)] for v in outputs])
    return g


def bind_inputs(repl: _core.Graph, inputs: Sequence[_core.Value | None]) -> _core.Graph:
    """A copy of ``repl`` whose inputs have the descs of ``inputs``, shapes inferred."""
    g = repl.copy()
    for n in g.nodes:
        if n.type == "Data":
            v = inputs[data_index(n)]
            if v is None:
                raise GeValueError(f"replacement input '{n.name}' reads an unlinked input")
            d = v.desc.copy()
            n.op_desc.update_input_desc(0, d)
            n.op_desc.update_output_desc(0, d.copy())
    g.infer_shapes()
    return g


def verify(pass_name: str, what: str, inputs: Sequence[_core.Value | None],
           nodes: Sequence[_core.Node], outputs: Sequence[_core.Value],
           repl: _core.Graph, seed: int = 0) -> None:
    """Raise :class:`ascendir.rewriter.VerificationError` when ``repl`` computes something
    else than ``nodes`` on the same random inputs (per-dtype tolerance)."""
    from ...evaluator import evaluate

    where = f"pass '{pass_name}', {what}"
    try:
        original = extract(f"original_{pass_name}", inputs, nodes, outputs)
        mine = bind_inputs(repl, inputs)
        rng = np.random.default_rng(seed)
        arrays = [None if v is None else _random(v.desc, rng, pass_name) for v in inputs]
        feeds_o = {n.name: arrays[int(n.name[2:])] for n in original.nodes if n.type == "Data"}
        feeds_r = {n.name: arrays[data_index(n)] for n in mine.nodes if n.type == "Data"}
        want = list(evaluate(original, feeds_o).values())
        got = list(evaluate(mine, feeds_r).values())
    except VerificationError:
        raise
    except Exception as e:
        raise VerificationError(f"{where}: cannot check the replacement: {e}",
                                pass_name=pass_name) from e
    for j, (w, r) in enumerate(zip(want, got, strict=True)):
        try:
            _compare(np.asarray(w), np.asarray(r), pass_name, outputs[j].producer().name)
        except VerificationError as e:
            raise VerificationError(f"{where}, output {j}: {e}", pass_name=pass_name) from e


def _fresh(graph: _core.Graph, pass_name: str, base: str) -> str:
    while True:
        name = f"{pass_name}/{base}_{next(_ids)}"
        if graph.find(name) is None:
            return name


def splice(graph: _core.Graph, inputs: Sequence[_core.Value | None], nodes: Sequence[_core.Node],
           outputs: Sequence[_core.Value], repl: _core.Graph, pass_name: str, where: str,
           *, do_verify: bool = False,
           dead: list[_core.Node] | None = None) -> list[_core.Node]:
    """Replace ``nodes`` (whose boundary is ``inputs`` → ``outputs``) by ``repl``: replacement
    input ``i`` reads ``inputs[i]``, every use of ``outputs[j]`` reads replacement output
    ``j``, then the nodes nothing reads any more are removed (or, with ``dead``, added to it
    for one later :func:`remove_unused`: nothing reads them). Returns the nodes created
    (named ``<pass>/<name>_<n>``, ``_created_by`` the pass). All or nothing: on any error the
    graph is as it was."""
    check_replacement(repl, len(inputs), len(outputs), where)
    check_closed(nodes, outputs, where)
    if do_verify:
        verify(pass_name, where, inputs, nodes, outputs, repl)
    anchor = outputs[-1].producer() if outputs else None
    mapped: dict[tuple[_core.Node, int], _core.Value] = {}
    created: list[_core.Node] = []
    moved: list[tuple[_core.Value, _core.Value, list[tuple[_core.Node, int]]]] = []
    graph_outputs: list[tuple[_core.Node, int]] | None = None
    try:
        for n in repl.nodes:
            if n.type == "Data":
                v = inputs[data_index(n)]
                if v is None:
                    raise GeValueError(f"replacement input '{n.name}' reads an unlinked input")
                for k in range(len(n.outputs)):
                    mapped[(n, k)] = v
                continue
            if n.type == "NetOutput":
                continue
            desc = n.op_desc.copy()
            desc.name = _fresh(graph, pass_name, n.name)
            if anchor is not None:
                with graph.inserting_before(anchor):
                    new = graph.add_node(desc)
            else:
                new = graph.add_node(desc)
            created.append(new)
            new.op_desc.attrs[passes.CREATED_BY] = pass_name
            for k, src in enumerate(n.inputs):
                if src is not None:
                    mine = mapped[_key(src)]
                    mine.producer().out_data_anchor(mine.index).link_to(new.in_data_anchor(k))
            for k, v in enumerate(new.outputs):
                mapped[(n, k)] = v
        graph_outputs = list(graph.outputs) if len(outputs) > 1 else None
        for j, (rn, rk) in enumerate(repl.outputs):
            new_v = mapped[(rn, rk)]
            if _key(new_v) != _key(outputs[j]):
                uses = [(u.node, u.index) for u in outputs[j].uses()]
                _move_uses(outputs[j], new_v, single=len(outputs) == 1)
                moved.append((outputs[j], new_v, uses))
    except Exception as e:
        for old, new_v, uses in reversed(moved):   # a later output failed: move back
            out_anchor = new_v.producer().out_data_anchor(new_v.index)
            back = old.producer().out_data_anchor(old.index)
            for node, k in uses:
                out_anchor.unlink(node.in_data_anchor(k))
                back.link_to(node.in_data_anchor(k))
        if moved and graph_outputs is not None:
            graph.set_outputs(graph_outputs)
        if created:
            graph.remove(created, safe=False)
        if isinstance(e, GeError):
            raise
        raise GeError(f"{where}: the replacement failed: {e}") from e
    if dead is None:
        remove_unused(graph, nodes)
    else:
        dead.extend(nodes)
    return created


def _move_uses(old: _core.Value, new: _core.Value, *, single: bool) -> None:
    """Every use of ``old`` reads ``new``. With one boundary output no cycle can arise (a
    path from the output back into a boundary input would be a cycle of the graph already),
    so the uses are relinked anchor by anchor; otherwise, or when ``old`` is a graph output,
    ``Value.replace_all_uses_with`` checks for cycles."""
    uses = old.uses()
    if not single or any(u.node.type == "NetOutput" for u in uses):
        old.replace_all_uses_with(new)
        return
    src = old.producer().out_data_anchor(old.index)
    dst_src = new.producer().out_data_anchor(new.index)
    for u in uses:
        anchor = u.node.in_data_anchor(u.index)
        src.unlink(anchor)
        dst_src.link_to(anchor)


def remove_unused(graph: _core.Graph, nodes: Sequence[_core.Node]) -> None:
    """Remove those of ``nodes`` nothing outside the removed ones reads (and no graph output
    names), in one call."""
    outs = {n for n, _k in graph.outputs}
    gone: set[_core.Node] = set()
    dead: list[_core.Node] = []
    todo = list(dict.fromkeys(nodes))
    while True:
        left = []
        for n in reversed(todo):
            if n in outs or any(u.node not in gone for v in n.outputs for u in v.uses()):
                left.append(n)
            else:
                dead.append(n)
                gone.add(n)
        if len(left) == len(todo):
            break
        todo = left[::-1]
    if dead:
        graph.remove(dead, safe=True)
