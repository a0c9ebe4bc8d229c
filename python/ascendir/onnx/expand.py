"""Expansion of ONNX function ops into their function bodies at import.

ONNX defines many operators (``Attention``, ``NegativeLogLikelihoodLoss``, ``ReduceL1``, ...) as
*functions*: a body of simpler ONNX ops with the same meaning, held in the ``onnx`` package's
operator schemas (some are *context dependent*: the body depends on the node's attributes and
input types). ``air.onnx.load(..., expand_functions=True)`` replaces every node the mapping
cannot express by its body, recursively, wherever the whole body then maps to GE types; a node
whose body would still hold an unmapped op stays ``onnx::<OpType>`` as without expansion.

The rules that keep the meaning exact:

- the body is the schema's function for the largest function opset not above the model's
  opset of the node's domain (the one ONNX's own expansion picks);
- every op of the body must have the same definition (schema ``since_version``) at the model's
  opset as at the body's opset — otherwise the node is not expanded;
- attribute references take the node's attribute, else the function's default, else the
  schema's default, else are dropped (ONNX's rule);
- a context-dependent body needs every present input's element type, taken from the model's
  declarations and ``onnx.shape_inference`` (with data propagation); a node with an unknown
  input type is not expanded;
- graphs inside a body (a Scan's, a Loop's) get the expansion's names too, and read the
  node's values where they read the function's.

Expanded values and nodes are named ``<node>/<body name>`` (made unique in the model). This
module needs the ``onnx`` package (``pip install onnx``); the plain import does not.
"""
# Optional dependencies (onnx): absent or untyped where the package is checked
# mypy: disable-error-code="import-not-found,import-untyped"

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import Any

from . import _legalize

_MAX_DEPTH = 8
"""Nested expansion rounds at most (a body's ops that are functions themselves)."""

_MAX_BODY_NODES = 10_000
"""Function bodies larger than this are not inlined."""


def _onnx() -> Any:
    try:
        import onnx
    except ImportError as e:  # pragma: no cover - the test extra installs onnx
        raise ImportError(
            "air.onnx.load(expand_functions=True) needs the onnx package: pip install onnx"
        ) from e
    return onnx


def _graphs(graph: Any) -> Iterator[Any]:
    """``graph`` and every subgraph under it (iterative, depth first)."""
    stack = [graph]
    while stack:
        g = stack.pop()
        yield g
        for n in g.node:
            for a in n.attribute:
                if a.type == 5:  # GRAPH
                    stack.append(a.g)
                elif a.type == 10:  # GRAPHS
                    stack.extend(a.graphs)


def _names(model: Any) -> set[str]:
    """Every node and value name of the model (all graphs)."""
    out: set[str] = set()
    for g in _graphs(model.graph):
        out.update(v.name for v in g.input)
        out.update(v.name for v in g.output)
        out.update(t.name for t in g.initializer)
        for n in g.node:
            out.add(n.name)
            out.update(n.input)
            out.update(n.output)
    return out


class _Consts:
    """Value name -> numpy array of a constant tensor, converted when first asked for."""

    def __init__(self, tensors: dict[str, Any], to_array: Callable[[Any], Any]) -> None:
        self._tensors, self._to_array = tensors, to_array
        self._arrays: dict[str, Any] = {}

    def get(self, name: str) -> Any | None:
        if name not in self._arrays:
            t = self._tensors.get(name)
            if t is None:
                return None
            self._arrays[name] = self._to_array(t)
        return self._arrays[name]


class _Expander:
    """One expansion run over a model: rounds of expanding the nodes of the unknown op types."""

    def __init__(self, model: Any, skip: set[str]) -> None:
        self.onnx = _onnx()
        self.model = model
        self.skip = skip
        self.opsets = {(o.domain or ""): o.version for o in model.opset_import}
        self.opsets.setdefault("ai.onnx", self.opsets.get("", 0))
        self.used = _names(model)
        self.root: dict[str, str] = {}  # expanded node name -> name of the original node
        self.count: dict[str, int] = {}  # original op type -> nodes expanded
        self.stable: dict[tuple[str, str, int, int], bool] = {}

    # ------------------------------------------------------------------ naming

    def fresh(self, base: str) -> str:
        name, k = base, 1
        while name in self.used:
            k += 1
            name = f"{base}_{k}"
        self.used.add(name)
        return name

    # ------------------------------------------------------------------ types

    def consts(self) -> _Consts:
        """The initializers and ``Constant`` tensors by value name, read as numpy on demand
        (a rule reads a few small ones; the weights are never copied)."""
        found: dict[str, Any] = {}
        for g in _graphs(self.model.graph):
            for t in g.initializer:
                if not t.external_data:
                    found[t.name] = t
            for n in g.node:
                if n.op_type == "Constant" and n.domain in ("", "ai.onnx"):
                    for a in n.attribute:
                        if a.name == "value" and a.type == 4:  # TENSOR
                            found[n.output[0]] = a.t
        return _Consts(found, self.onnx.numpy_helper.to_array)

    def types(self) -> dict[str, Any]:
        """Value name -> TypeProto over every graph, from declarations and ONNX inference."""
        onnx = self.onnx
        try:
            inferred = onnx.shape_inference.infer_shapes(self.model, data_prop=True)
        except Exception:  # inference is best effort: declared types are still used
            inferred = self.model
        out: dict[str, Any] = {}
        for g in _graphs(inferred.graph):
            for v in (*g.input, *g.output, *g.value_info):
                if v.type.HasField("tensor_type") and v.type.tensor_type.elem_type:
                    out.setdefault(v.name, v.type)
            for t in g.initializer:
                out.setdefault(t.name, onnx.helper.make_tensor_type_proto(t.data_type, t.dims))
            for n in g.node:
                if n.op_type == "Constant" and n.domain in ("", "ai.onnx"):
                    for a in n.attribute:
                        if a.name == "value" and a.type == 4:  # TENSOR
                            out.setdefault(
                                n.output[0],
                                onnx.helper.make_tensor_type_proto(a.t.data_type, a.t.dims),
                            )
        return out

    # ------------------------------------------------------------------ bodies

    def same_definitions(self, body: Any) -> bool:
        """Whether every op of ``body`` means the same at the model's opset as at the body's."""
        defs = self.onnx.defs
        body_opsets = {(o.domain or ""): o.version for o in body.opset_import}
        nodes = [n for g in _graphs(body) for n in g.node]
        if len(nodes) > _MAX_BODY_NODES:
            return False
        for n in nodes:
            if any(a.ref_attr_name and a.type in (5, 10) for a in n.attribute):
                return False  # a graph passed in by attribute reference
            dom = n.domain or ""
            have = self.opsets.get(dom)
            want = body_opsets.get(dom, have)
            if have is None or want is None:
                return False
            key = (n.op_type, dom, have, want)
            if key not in self.stable:
                try:
                    a = defs.get_schema(n.op_type, have, dom).since_version
                    b = defs.get_schema(n.op_type, want, dom).since_version
                    self.stable[key] = a == b
                except Exception:
                    self.stable[key] = False
            if not self.stable[key]:
                return False
        return True

    def body(self, node: Any, types: dict[str, Any]) -> tuple[Any, Any] | None:
        """The schema and the function body of ``node`` at the model's opset, if it has one."""
        onnx = self.onnx
        dom = node.domain or ""
        version = self.opsets.get(dom)
        if version is None:
            return None
        try:
            schema = onnx.defs.get_schema(node.op_type, version, dom)
        except Exception:
            return None
        proto = onnx.FunctionProto()
        fixed = [v for v in schema.function_opset_versions if v <= version]
        dependent = [v for v in schema.context_dependent_function_opset_versions if v <= version]
        try:
            if fixed and (not dependent or max(fixed) >= max(dependent)):
                proto.ParseFromString(schema.get_function_with_opset_version(max(fixed)))
            elif dependent:
                tps = []
                for name in node.input:
                    if not name:
                        tps.append(onnx.TypeProto())
                    elif name in types:
                        tps.append(types[name])
                    else:
                        return None
                proto.ParseFromString(
                    schema.get_context_dependent_function_with_opset_version(
                        max(dependent),
                        node.SerializeToString(),
                        [t.SerializeToString() for t in tps],
                    )
                )
            else:
                return None
        except Exception:  # the schema's builder refused this node (e.g. unsupported form)
            return None
        if not proto.node or not self.same_definitions(proto):
            return None
        return schema, proto

    def inline(self, node: Any, schema: Any, body: Any, origin: str) -> list[Any]:
        """The nodes of ``body`` bound to ``node``'s inputs, outputs and attributes."""
        onnx = self.onnx
        base = node.name or node.op_type
        ren: dict[str, str] = {}
        for i, formal in enumerate(body.input):
            ren[formal] = node.input[i] if i < len(node.input) else ""
        for i, formal in enumerate(body.output):
            ren[formal] = node.output[i] if i < len(node.output) else ""
        attrs: dict[str, Any] = {}
        for name, sa in schema.attributes.items():
            if sa.default_value.type:
                attrs[name] = sa.default_value
        for a in body.attribute_proto:
            attrs[a.name] = a
        for a in node.attribute:
            attrs[a.name] = a

        def bind(name: str) -> str:
            if not name:
                return ""
            if name not in ren:
                ren[name] = self.fresh(f"{base}/{name}")
            return ren[name]

        out = []
        for j, bn in enumerate(body.node):
            nn = onnx.NodeProto()
            nn.op_type, nn.domain = bn.op_type, bn.domain
            nn.input.extend(bind(x) for x in bn.input)
            nn.output.extend(bind(x) for x in bn.output)
            nn.name = self.fresh(f"{base}/{bn.name or bn.op_type + str(j)}")
            for a in bn.attribute:
                if a.ref_attr_name:
                    if a.ref_attr_name in attrs:
                        v = onnx.AttributeProto()
                        v.CopyFrom(attrs[a.ref_attr_name])
                        v.name = a.name
                        nn.attribute.append(v)
                elif a.type == 5:  # GRAPH: renamed into the expansion's names
                    v = onnx.AttributeProto()
                    v.CopyFrom(a)
                    self.rename_graph(v.g, bind, base)
                    nn.attribute.append(v)
                elif a.type == 10:  # GRAPHS
                    v = onnx.AttributeProto()
                    v.CopyFrom(a)
                    for sub in v.graphs:
                        self.rename_graph(sub, bind, base)
                    nn.attribute.append(v)
                else:
                    nn.attribute.append(a)
            self.root[nn.name] = origin
            out.append(nn)
        return out

    def rename_graph(self, g: Any, outer: Callable[[str], str], base: str) -> None:
        """Rename, in place, every name of the body graph ``g`` (and the graphs under it): the
        names it defines get fresh ones, the names it reads from the function's scope the
        scope's binding ``outer``."""
        # (graph, lookup of the scope around it); iterative over the nesting
        stack: list[tuple[Any, Callable[[str], str]]] = [(g, outer)]
        while stack:
            graph, around = stack.pop()
            local: dict[str, str] = {}
            defined = [v.name for v in graph.input] + [t.name for t in graph.initializer]
            defined += [o for n in graph.node for o in n.output if o]
            for name in defined:
                local.setdefault(name, self.fresh(f"{base}/{name}"))

            def look(name: str, local: dict[str, str] = local, around: Any = around) -> str:
                return "" if not name else local[name] if name in local else around(name)

            for v in (*graph.input, *graph.output, *graph.value_info):
                v.name = look(v.name)
            for t in graph.initializer:
                t.name = look(t.name)
            for n in graph.node:
                n.name = self.fresh(f"{base}/{n.name or n.op_type}")
                ins, outs = [look(x) for x in n.input], [look(x) for x in n.output]
                del n.input[:], n.output[:]
                n.input.extend(ins)
                n.output.extend(outs)
                for a in n.attribute:
                    if a.type == 5:
                        stack.append((a.g, look))
                    elif a.type == 10:
                        stack.extend((sub, look) for sub in a.graphs)

    def legalize(
        self, node: Any, types: dict[str, Any], consts: _Consts, origin: str
    ) -> list[Any] | None:
        """The nodes of ascendir's own expansion of ``node`` (:mod:`._legalize`), if one applies."""
        rule = _legalize.RULES.get(node.op_type) if node.domain in ("", "ai.onnx") else None
        if rule is None:
            return None
        cx = _legalize.Ctx(
            self.onnx, self.opsets.get("", 0), types, consts, self.fresh, node.name or node.op_type
        )
        try:
            applied = rule(cx, node)
        except (ValueError, IndexError, KeyError, TypeError):
            return None  # a malformed node (a missing attribute, a short list): left as it is
        if not applied:
            return None
        for n in (*cx.nodes, *cx.inner):
            self.root[n.name] = origin
        return cx.nodes

    # ------------------------------------------------------------------ rounds

    def round(self, unknown: set[str]) -> bool:
        """Expand every node of an ``unknown`` op type once; whether any was."""
        types, consts = self.types(), self.consts()
        changed = False
        for g in _graphs(self.model.graph):
            new = []
            here = False
            for n in g.node:
                origin = self.root.get(n.name, n.name)
                key = f"{n.domain}::{n.op_type}" if n.domain else n.op_type
                if key not in unknown or origin in self.skip:
                    new.append(n)
                    continue
                found = self.body(n, types)
                made: list[Any] | None
                if found is not None:
                    made = self.inline(n, found[0], found[1], origin)
                else:
                    made = self.legalize(n, types, consts, origin)
                if made is None:
                    new.append(n)
                    continue
                if origin == n.name:
                    self.count[key] = self.count.get(key, 0) + 1
                new.extend(made)
                here = True
            if here:
                changed = True
                del g.node[:]
                g.node.extend(new)
        return changed


def _name_original_nodes(model: Any) -> None:
    """Give every nameless node a unique name (so expansions can be traced to it)."""
    used = _names(model)
    for g in _graphs(model.graph):
        for i, n in enumerate(g.node):
            if not n.name:
                name, k = f"{n.op_type}_{i}", 1
                while name in used:
                    k += 1
                    name = f"{n.op_type}_{i}_{k}"
                used.add(name)
                n.name = name


def expand(
    model_bytes: bytes,
    unknown_ops: dict[str, int],
    reimport: Callable[[bytes], tuple[Any, dict[str, Any]]],
) -> tuple[Any, dict[str, Any], dict[str, int]] | None:
    """Expand the function ops among ``unknown_ops`` (keys ``onnx::<OpType>``).

    ``reimport(bytes)`` imports a model and returns ``(graph, raw report)``. Returns the graph and
    raw report of the expanded model and the expanded counts by ONNX op type, or ``None`` when no
    node could be expanded into mapped ops.
    """
    onnx = _onnx()
    skip: set[str] = set()
    for _ in range(_MAX_DEPTH):  # every pass adds to `skip` or ends
        model = onnx.ModelProto()
        model.ParseFromString(model_bytes)
        _name_original_nodes(model)
        ex = _Expander(model, skip)
        unknown = {k.removeprefix("onnx::") for k in unknown_ops}
        graph = raw = None
        for _depth in range(_MAX_DEPTH):
            if not unknown or not ex.round(unknown):
                break
            graph, raw = reimport(model.SerializeToString())
            unknown = {k.removeprefix("onnx::") for k in raw["unknown_ops"]}
        if graph is None or raw is None:
            return None
        bad = {
            ex.root[n.name]
            for n in graph.all_nodes()
            if n.type.startswith("onnx::") and n.name in ex.root
        }
        if not bad:
            return graph, raw, dict(sorted(ex.count.items()))
        skip |= bad
    return None


def original_path_bytes(path: str | os.PathLike[str]) -> bytes:
    """The bytes of an ONNX file (external data stays referenced, not loaded)."""
    with open(os.fspath(path), "rb") as f:
        return f.read()
