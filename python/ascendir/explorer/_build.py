"""A graph as Model Explorer's graph JSON (``{"graphs": [...]}``, the schema of
``model_explorer.graph_builder``), built as plain dictionaries.

The hierarchy comes from the node names' scopes (``a/b/MatMul`` sits in layer ``a`` → ``b``);
each subgraph of a node is a graph of its own, named by the node's ``subgraphIds``. In a
compiled graph every ``AscBackend`` kernel is a group: its HintGraph's nodes (``Data`` → ``Load``
→ the fused ops → ``Store`` → ``Output``) one level down, wired to the kernel's producers and
consumers, with the kernel's report entry as the group's attributes.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import _core

__all__ = ["HIDDEN", "KERNEL_ATTR", "WIDE_LAYER", "graphs_of", "scope_of", "split_wide_layers"]

KERNEL_ATTR = "_ascendir_ascgraph"
"""The attribute of an ``AscBackend`` node holding its HintGraph's bytes."""

_MAX_VALUE = 200  # characters of an attribute value shown in the side panel

WIDE_LAYER = 3000
"""The most nodes and layers one layer shows; a wider one is split into consecutive parts
(``part_<k>``) in graph order, so the viewer lays out a graph without name scopes (an ONNX
model whose ops are ``/Add_0``, ``/Add_1``, ...) one part at a time. Measured on the 21k-node
decoder in headless Chromium: the page shows the top level in 4.4–4.9 s with parts of 2000
to 5000 nodes, 24 s with parts of 500, and not within 5 minutes with parts of 100 (nested) or
with no parts: Model Explorer's work grows with the number of layers as well as with a
layer's width."""

Json = dict[str, Any]

HIDDEN = ("Const", "Constant")
"""Node labels the viewer hides (constants and weights: a graph's most numerous nodes, read
in the side panel of their readers' inputs)."""


def scope_of(name: str) -> str:
    """The layer path of a node name: its ``/``-separated scopes without the last one (empty
    components dropped: ``/model/Add_0`` is in ``model``)."""
    parts = [p for p in name.split("/") if p]
    return "/".join(parts[:-1])


def _short(text: str) -> str:
    return text if len(text) <= _MAX_VALUE else text[:_MAX_VALUE - 1] + "…"


def _value_text(v: Any) -> str:
    if isinstance(v, _core.Tensor):
        d = v.desc
        return f"Tensor {d.dtype.name.lower()}{list(d.shape)}"
    if isinstance(v, (bytes, bytearray, memoryview)):
        return f"<{len(v)} bytes>"
    return _short(str(v))


def _desc_attrs(d: Any) -> list[Json]:
    dtype = d.dtype.name.lower()
    shape = list(d.shape)
    fmt = _core_format_name(d.format)
    return [{"key": "tensor_shape", "value": f"{dtype}{shape}"},
            {"key": "format", "value": fmt}]


def _core_format_name(fmt: Any) -> str:
    name = getattr(fmt, "name", None)
    return str(name) if name is not None else str(fmt)


def _node_json(n: Any, graph_id: str, sub_ids: Mapping[str, str]) -> Json:
    op = n.op_desc
    edges: list[Json] = []
    for i, src in enumerate(n.inputs):
        if src is not None:
            edges.append({"sourceNodeId": src.producer().name,
                          "sourceNodeOutputId": str(src.index), "targetNodeInputId": str(i)})
    attrs = [{"key": "type", "value": n.type}]
    for key in sorted(op.attrs.keys()):
        if key == KERNEL_ATTR or key == "_ascendir_impl_graphs":
            continue
        attrs.append({"key": key, "value": _value_text(op.attrs[key])})
    ctrl = [m.name for m in n.in_control_nodes]
    if ctrl:
        attrs.append({"key": "control inputs", "value": _short(", ".join(ctrl))})
    node: Json = {
        "id": n.name, "label": n.type, "namespace": scope_of(n.name),
        "attrs": attrs, "incomingEdges": edges,
        "outputsMetadata": [{"id": str(k), "attrs": _desc_attrs(op.output_desc(k))}
                            for k in range(len(n.outputs))],
        "inputsMetadata": [{"id": str(i), "attrs": _desc_attrs(op.input_desc(i))}
                           for i in range(len(n.inputs))],
    }
    subs = [sub_ids[s] for s in op.subgraph_names if s in sub_ids]
    if subs:
        node["subgraphIds"] = subs
    return node


def split_wide_layers(nodes: list[Json], limit: int = WIDE_LAYER) -> None:
    """Split every layer of more than ``limit`` items (nodes and child layers) into parts of
    at most ``limit`` consecutive items, in place. An item's place is its first node's; a
    node nothing feeds (a constant, a weight) takes the place of its first reader."""
    first_reader: dict[str, int] = {}
    for i, n in enumerate(nodes):
        for e in n["incomingEdges"]:
            first_reader.setdefault(e["sourceNodeId"], i)
    pos = [first_reader.get(n["id"], i) if not n["incomingEdges"] else i
           for i, n in enumerate(nodes)]
    comps = [[c for c in n["namespace"].split("/") if c] for n in nodes]
    changed = False
    # (depth, the nodes under one layer at that depth); a layer's items are its nodes (at
    # that depth) and its child layers (the next component).
    todo: list[tuple[int, list[int]]] = [(0, list(range(len(nodes))))]
    while todo:
        depth, members = todo.pop()
        items: dict[tuple[int, str], int] = {}
        for i in members:
            key = (0, nodes[i]["id"]) if len(comps[i]) == depth else (1, comps[i][depth])
            items[key] = min(items.get(key, pos[i]), pos[i])
        if len(items) > limit:
            order = sorted(items, key=lambda k: (items[k], k))
            part = {k: f"part_{j // limit}" for j, k in enumerate(order)}
            parts: dict[str, list[int]] = {}
            for i in members:
                key = (0, nodes[i]["id"]) if len(comps[i]) == depth else (1, comps[i][depth])
                comps[i].insert(depth, part[key])
                parts.setdefault(part[key], []).append(i)
            changed = True
            todo.extend((depth + 1, parts[p]) for p in sorted(parts, reverse=True))
            continue
        layers: dict[str, list[int]] = {}
        for i in members:
            if len(comps[i]) > depth:
                layers.setdefault(comps[i][depth], []).append(i)
        todo.extend((depth + 1, layers[k]) for k in sorted(layers, reverse=True))
    if changed:
        for n, c in zip(nodes, comps, strict=True):
            n["namespace"] = "/".join(c)


def _kernel_nodes(n: Any, hint: Any, group: str) -> tuple[list[Json], dict[int, str]]:
    """The HintGraph of kernel node ``n`` as nodes in layer ``group``, and the id of the
    node giving each kernel output."""
    nodes: list[Json] = []
    out_ids: dict[int, str] = {}
    ids = {h.name: f"{n.name}/{h.name}" for h in hint.nodes}
    for h in hint.nodes:
        edges: list[Json] = []
        if h.type == "Data":
            index = int(h.attr.ir_attr.index)
            src = n.inputs[index] if index < len(n.inputs) else None
            if src is not None:
                edges.append({"sourceNodeId": src.producer().name,
                              "sourceNodeOutputId": str(src.index), "targetNodeInputId": "0"})
        for i, name in enumerate(h.input_names):
            v = h.input(name)
            if v is not None:
                edges.append({"sourceNodeId": ids[v.node.name],
                              "sourceNodeOutputId": str(v.index), "targetNodeInputId": str(i)})
        if h.type == "Output":
            out_ids[int(h.attr.ir_attr.index)] = ids[h.name]
        outs = [{"id": str(k), "attrs": [
            {"key": "tensor_shape",
             "value": f"{o.dtype.name.lower()}[{', '.join(str(r) for r in o.repeats)}]"}]}
            for k, o in enumerate(h.outputs)]
        nodes.append({"id": ids[h.name], "label": h.type, "namespace": group,
                      "attrs": [{"key": "type", "value": h.type},
                                {"key": "kernel", "value": n.name}],
                      "incomingEdges": edges, "outputsMetadata": outs})
    return nodes, out_ids


def _kernel_group_attrs(entry: Mapping[str, Any] | None, n: Any) -> dict[str, str]:
    attrs = n.op_desc.attrs
    members = (list(entry["members"]) if entry is not None
               else list(attrs["_datadump_original_op_names"])
               if "_datadump_original_op_names" in attrs else [])
    out = {"kernel": n.name, "members": _short(", ".join(members)),
           "member count": str(len(members))}
    if entry is not None:
        out.update({"fuse type": str(entry["fuse_type"]),
                    "bytes saved": str(entry["bytes_saved"]),
                    "bytes before": str(entry["bytes_before"]),
                    "bytes after": str(entry["bytes_after"]),
                    "templates": str(len(entry["templates"]))})
    elif "_ascendir_fuse_type" in attrs:
        out["fuse type"] = str(attrs["_ascendir_fuse_type"])
    return out


def _refusals(report: Mapping[str, Any] | None) -> dict[str, list[str]]:
    """The report's refusal codes and barrier reasons by node name."""
    out: dict[str, list[str]] = {}
    if report is None:
        return out
    for r in report.get("rejected_pairs", []):
        text = f"{r['code']} with {{}}: {r['reason']}"
        out.setdefault(r["a"], []).append(text.format(r["b"]))
        out.setdefault(r["b"], []).append(text.format(r["a"]))
    for b in report.get("barriers", []):
        out.setdefault(b["name"], []).append(f"barrier ({b['category']}): {b['reason']}")
    return out


def _graph_json(g: Any, graph_id: str, sub_ids: Mapping[str, str],
                report: Mapping[str, Any] | None, expand_kernels: bool) -> Json:
    from ..asc import AscGraph

    entries = {k["name"]: k for k in (report or {}).get("kernels", [])}
    refused = _refusals(report)
    nodes: list[Json] = []
    group_attrs: dict[str, dict[str, str]] = {}
    kernel_out: dict[str, dict[int, str]] = {}
    for n in g.nodes:
        attrs = n.op_desc.attrs
        if expand_kernels and n.type == "AscBackend" and KERNEL_ATTR in attrs:
            hint = AscGraph.from_bytes(bytes(attrs[KERNEL_ATTR]))
            group = "/".join(p for p in (scope_of(n.name), n.name) if p)
            members, outs = _kernel_nodes(n, hint, group)
            nodes.extend(members)
            kernel_out[n.name] = outs
            group_attrs[members[0]["id"]] = _kernel_group_attrs(entries.get(n.name), n)
            continue
        node = _node_json(n, graph_id, sub_ids)
        why = refused.get(n.name)
        if why:
            node["attrs"].append({"key": "fusion refusals", "value": _short("; ".join(why))})
        nodes.append(node)
    if kernel_out:
        # Edges leaving a kernel start at its HintGraph's Output node.
        for node in nodes:
            for e in node["incomingEdges"]:
                leaving = kernel_out.get(e["sourceNodeId"])
                if leaving is not None:
                    e["sourceNodeId"] = leaving[int(e["sourceNodeOutputId"])]
                    e["sourceNodeOutputId"] = "0"
    split_wide_layers(nodes)
    out: Json = {"id": graph_id, "nodes": nodes, "nodeLabelsToHide": list(HIDDEN)}
    if group_attrs:
        # Keyed by a member node until the layers are final: by the kernel's layer now.
        layer_of = {n["id"]: n["namespace"] for n in nodes}
        out["groupNodeAttributes"] = {layer_of[k]: v for k, v in group_attrs.items()}
    return out


def graphs_of(g: Any, *, report: Mapping[str, Any] | None = None,
              expand_kernels: bool = True) -> Json:
    """``g`` (an :class:`ascendir.Graph`) and its subgraphs as Model Explorer's graph JSON.
    ``report`` (a compile report's data) adds each kernel's figures to its group and the
    refusal codes to the nodes they name."""
    subs = list(g.subgraphs) if g.parent_graph is None else []
    sub_ids = {s.name: s.name for s in subs}
    graphs = [_graph_json(g, g.name or "graph", sub_ids, report, expand_kernels)]
    graphs += [_graph_json(s, s.name, sub_ids, None, expand_kernels) for s in subs]
    return {"graphs": graphs}
