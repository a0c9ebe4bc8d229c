"""The op functions of ``ascendir.ge.es.math`` / ``.nn`` / ``.all``, made from ascendir's op
registry on first use (one function per registered type, cached until the registration
changes).

A function follows GE's generated ES functions: the op's inputs positionally in declaration
order (a required one a :class:`TensorHolder` or a number / nested list, an optional one
defaulting to ``None``, a dynamic one a list), then for each dynamic output its count
``<name>_num``, then ``owner_builder`` (first, as ``owner_graph_builder``, for an op without
inputs; last when every input is optional); the attributes are keyword-only, with the
registry's defaults. It returns the output's :class:`TensorHolder`, the list of a lone dynamic
output, an ``<Op>Output`` named tuple for several outputs, or ``None`` for an op without
outputs. The node is added with ``ascendir.Graph.add_op``: attributes converted to their
declared kinds, dtypes checked and shapes inferred at once.
"""

from __future__ import annotations

import collections
import inspect
import keyword
import threading
from collections.abc import Callable
from typing import Any

from ... import _core
from ...errors import AscendIRError
from ..error import GeError, GeTypeError, GeValueError
from ..graph.tensor import Tensor
from ..graph.types import DataType
from .tensor_holder import TensorHolder
from .tensor_like import literal_to_tensor_holder

__all__ = ["GROUPS", "group_of", "op_function", "op_types"]

GROUPS = ("math", "nn", "all")

# GE's graph-structure and control-flow types: in ``all`` only (GE's ES packages leave them
# out of the math and nn libraries).
_STRUCTURE = frozenset({
    "Data", "RefData", "Const", "Constant", "NetOutput", "PlaceHolder", "End", "Aipp",
    "If", "StatelessIf", "While", "Case", "Loop", "PartitionedCall", "TransData",
})
# The families of neural-network ops (GE's ``es_nn``): a type is one when its name contains
# one of these words; every other computing type is a math op (GE's ``es_math``).
_NN_WORDS = (
    "Conv", "Pool", "Relu", "Elu", "Sigmoid", "Gelu", "Swish", "Mish", "Softmax", "Softplus",
    "Softsign", "Shrink", "HardMax", "Norm", "LRN", "Loss", "LSTM", "GRU", "Attention",
    "BatchMatMul", "BiasAdd", "FullyConnection", "Dropout", "Quant", "GridSampler",
    "Resize", "Pooling", "Eltwise", "Prelu",
)


def group_of(op_type: str) -> tuple[str, ...]:
    """The ES groups ``op_type`` is in: ``("nn", "all")``, ``("math", "all")`` or
    ``("all",)`` for GE's structural and control-flow types; a type registered by the user
    (not a builtin) is also in ``"custom"`` (GE's ``ge.es.custom``)."""
    if op_type in _STRUCTURE:
        return ("all",)
    base: tuple[str, ...] = (
        ("nn", "all") if any(w in op_type for w in _NN_WORDS) else ("math", "all"))
    from ...ops import is_builtin

    return base if is_builtin(op_type) else (*base, "custom")


def op_types(group: str) -> list[str]:
    """The registered types of ``group`` (``"math"``, ``"nn"``, ``"all"`` or ``"custom"``),
    sorted."""
    return sorted(t for t in _core._ops_types() if t.isidentifier() and not keyword.iskeyword(t)
                  and group in group_of(t) and not _has_subgraphs(t))


_subgraph_cache: dict[str, bool] = {}


def _has_subgraphs(op_type: str) -> bool:
    hit = _subgraph_cache.get(op_type)
    if hit is None:
        try:
            hit = bool(_core.OpDesc.from_type(op_type).subgraph_ir_names)
        except AscendIRError:
            hit = False
        _subgraph_cache[op_type] = hit
    return hit


_new_holder = object.__new__


def _read_attrs(kwargs: dict[str, Any], names: Any, required: Any,
                fail: Callable[[str], Exception], exempt: str | None) -> dict[str, Any]:
    """The attributes of an ES call's keywords (a trailing ``_`` escapes a Python keyword):
    an unknown keyword or a missing required attribute (but ``exempt``) raises ``fail``."""
    attrs: dict[str, Any] = {}
    for key, value in kwargs.items():
        name = key[:-1] if key.endswith("_") and key[:-1] in names else key
        if name not in names:
            raise fail(f"unexpected keyword argument '{key}'")
        attrs[name] = _attr_value(value)
    for n in required:
        if n not in attrs and n != exempt:
            raise fail(f"missing required attribute '{n}'")
    return attrs


def _attr_value(value: Any) -> Any:
    """A GE attribute value as ascendir takes it (enums as numbers, tensors unwrapped)."""
    if isinstance(value, DataType):
        return int(value)
    if isinstance(value, Tensor):
        return value.air
    if isinstance(value, list):
        return [_attr_value(v) for v in value]
    return value


_UNSET: Any = object()


class _Spec:
    """One op type's ES signature, read from the registry."""

    def __init__(self, op_type: str, raw: Any) -> None:
        inputs, outputs, attrs, count_attr = raw
        self.op_type = op_type
        self.inputs = [(str(n), str(k)) for n, k in inputs]
        self.outputs = [(str(n), str(k)) for n, k in outputs]
        self.count_attr: str | None = count_attr
        self.dyn_outputs = [n for n, k in self.outputs if k == "dynamic"]
        self.attr_defaults: dict[str, Any] = {}
        self.required_attrs: list[str] = []
        for n, _kind, d, has in attrs:
            if has:
                self.attr_defaults[str(n)] = d
            else:
                self.required_attrs.append(str(n))
        self.attr_names = frozenset(self.attr_defaults) | frozenset(self.required_attrs)
        self.dyn_input_n = (
            "N" if "N" in self.attr_names and any(k == "dynamic" for _n, k in self.inputs)
            else None)
        self.no_inputs = not self.inputs
        self.all_optional = bool(self.inputs) and all(k == "optional" for _n, k in self.inputs)
        self.n_in = len(self.inputs)
        self.output_type: Any = None
        if len(self.outputs) > 1:
            fields = [n if n.isidentifier() and not keyword.iskeyword(n) else f"{n}_"
                      for n, _k in self.outputs]
            self.output_type = collections.namedtuple(f"{op_type}Output", fields)  # type: ignore[misc]
        self.signature = self._signature()
        # Per input: its type variable (shared with other inputs) and its allowed dtypes.
        self.type_vars: list[str | None] = [None] * len(self.inputs)
        self.fixed: list[Any] = [None] * len(self.inputs)
        try:
            from ... import ops as _air_ops

            decl = _air_ops.get(op_type)
            by_name = {i.name: i for i in decl.inputs}
            for i, (n, _k) in enumerate(self.inputs):
                d = by_name.get(n)
                if d is not None:
                    self.type_vars[i] = getattr(d, "type_var", None)
                    fixed = getattr(d, "fixed", None)
                    self.fixed[i] = tuple(fixed) if fixed else None
        except Exception:  # noqa: BLE001 - no declaration: literals keep GE's default types
            pass

    def _signature(self) -> inspect.Signature:
        P = inspect.Parameter
        params: list[inspect.Parameter] = []
        if self.no_inputs:
            params.append(P("owner_graph_builder", P.POSITIONAL_OR_KEYWORD))
        for n, k in self.inputs:
            default = None if k == "optional" else P.empty
            params.append(P(_pname(n), P.POSITIONAL_OR_KEYWORD, default=default))
        for n in self.dyn_outputs:
            params.append(P(f"{_pname(n)}_num", P.POSITIONAL_OR_KEYWORD))
        if self.all_optional:
            params.append(P("owner_builder", P.POSITIONAL_OR_KEYWORD, default=None))
        for n in self.required_attrs:
            # The count of a dynamic output may come from ``<output>_num`` instead.
            default = None if n == self.count_attr and self.dyn_outputs else P.empty
            params.append(P(_pname(n), P.KEYWORD_ONLY, default=default))
        for n, d in self.attr_defaults.items():
            params.append(P(_pname(n), P.KEYWORD_ONLY, default=d))
        if not self.no_inputs and not self.all_optional:
            params.append(P("owner_builder", P.KEYWORD_ONLY, default=None))
        return inspect.Signature(params)


def _pname(name: str) -> str:
    return f"{name}_" if keyword.iskeyword(name) else name


def _make(spec: _Spec) -> Callable[..., Any]:
    op_type = spec.op_type
    inputs = spec.inputs
    n_in = spec.n_in
    dyn_outputs = spec.dyn_outputs
    n_dyn = len(dyn_outputs)
    count_attr = spec.count_attr
    attr_names = spec.attr_names
    required_attrs = spec.required_attrs
    no_inputs = spec.no_inputs
    all_optional = spec.all_optional
    dyn_input_n = spec.dyn_input_n
    outputs = spec.outputs
    output_type = spec.output_type
    simple = (not no_inputs and not all_optional and n_dyn == 0
              and all(k == "required" for _n, k in inputs))
    single = len(outputs) == 1 and outputs[0][1] == "required"

    def fail(msg: str) -> GeTypeError:
        return GeTypeError(f"{op_type}(): {msg}")

    def call(*args: Any, **kwargs: Any) -> Any:
        # Positional parameters: [owner_graph_builder] inputs... counts... [owner_builder].
        owner = kwargs.pop("owner_builder", None)
        pos = list(args)
        if no_inputs:
            if pos:
                owner = pos.pop(0)
            elif "owner_graph_builder" in kwargs:
                owner = kwargs.pop("owner_graph_builder")
        given: list[Any] = pos[:n_in]
        rest = pos[n_in:]
        for i in range(len(given), n_in):
            n, k = inputs[i]
            v = kwargs.pop(_pname(n), _UNSET)
            if v is _UNSET:
                if k != "optional":
                    raise fail(f"missing required input '{n}'")
                v = None
            given.append(v)
        counts: list[Any] = rest[:n_dyn]
        rest = rest[n_dyn:]
        for n in dyn_outputs[len(counts):]:
            v = kwargs.pop(f"{_pname(n)}_num", _UNSET)
            if v is _UNSET:
                raise fail(f"missing the output count '{n}_num'")
            counts.append(v)
        if rest and all_optional and owner is None:
            owner = rest.pop(0)
        if rest:
            raise fail(f"takes {n_in + n_dyn} positional arguments but {len(args)} were given")
        attrs = _read_attrs(kwargs, attr_names, required_attrs, fail,
                            count_attr if counts else None)
        for c in counts:
            if not isinstance(c, int) or isinstance(c, bool) or c < 0:
                raise fail(f"an output count is a non-negative integer, got {c!r}")
        if count_attr is not None and counts:
            if count_attr in attrs and attrs[count_attr] != counts[0]:
                raise GeValueError(
                    f"{op_type}(): {dyn_outputs[0]}_num={counts[0]} disagrees with "
                    f"{count_attr}={attrs[count_attr]}")
            attrs[count_attr] = counts[0]
        # The builder: the first holder among the inputs, else owner_builder.
        builder = None
        for v in given:
            if isinstance(v, TensorHolder):
                builder = v._builder
                break
            if isinstance(v, list):
                for t in v:
                    if isinstance(t, TensorHolder):
                        builder = t._builder
                        break
                if builder is not None:
                    break
        if builder is None:
            builder = owner
        if builder is None:
            raise GeValueError(
                f"{op_type}(): Please ensure at least one input tensor or an explicit "
                "owner_builder is provided when supported")
        from .graph_builder import GraphBuilder

        if not isinstance(builder, GraphBuilder):
            raise fail(f"owner_builder must be a GraphBuilder, got {type(builder).__name__}")
        builder._check_usable(f"build {op_type}")
        g = builder._g
        made: list[Any] = []
        try:
            srcs: list[Any] = []
            for i, ((n, k), v) in enumerate(zip(inputs, given, strict=True)):
                if k == "dynamic":
                    if not isinstance(v, list):
                        raise fail(f"input '{n}' is dynamic and takes a list, got "
                                   f"{type(v).__name__}")
                    items = []
                    for t in v:
                        items.append(_src(t, builder, made, op_type, spec, i, given))
                    srcs.append(items)
                    if dyn_input_n is not None and dyn_input_n not in attrs:
                        attrs[dyn_input_n] = len(items)
                elif v is None:
                    if k == "required":
                        raise fail(f"the required input '{n}' is None")
                    srcs.append(None)
                else:
                    srcs.append(_src(v, builder, made, op_type, spec, i, given))
            if count_attr is None and counts:
                node = g.add_op(op_type, srcs, attrs=attrs, outputs=sum(counts) + len(outputs)
                                - n_dyn)
            else:
                node = g.add_op(op_type, srcs, attrs=attrs)
        except AscendIRError as e:
            _undo(g, made)
            if isinstance(e, (GeError, GeTypeError, GeValueError)):
                raise
            raise GeError(f"Failed to build {op_type}: {e}") from e
        except BaseException:
            _undo(g, made)
            raise
        return _results(node, builder, outputs, output_type, single)

    if simple and single:
        # The common case (required inputs, one output): the shortest path.
        def fast(*args: Any, **kwargs: Any) -> Any:
            if len(args) != n_in or "owner_builder" in kwargs:
                return call(*args, **kwargs)
            builder = None
            srcs = []
            for v in args:
                if type(v) is not TensorHolder:
                    return call(*args, **kwargs)
                if builder is None:
                    builder = v._builder
                elif v._builder is not builder:
                    return call(*args, **kwargs)
                srcs.append(v._src)
            if builder is None or builder._is_built:
                return call(*args, **kwargs)
            try:
                if kwargs or required_attrs:
                    attrs = _read_attrs(kwargs, attr_names, required_attrs, fail, None)
                    node = builder._g.add_op(op_type, srcs, attrs=attrs)
                else:
                    node = builder._g.add_op(op_type, srcs)
            except AscendIRError as e:
                raise GeError(f"Failed to build {op_type}: {e}") from e
            # Output 0 of a node just made: the holder's fields set directly.
            out = _new_holder(TensorHolder)
            out._node, out._index, out._src, out._builder = node, 0, node, builder
            if builder._scoped():
                builder._apply_scope_infos_to_node(out)
            return out

        fn = fast
    else:
        fn = call
    fn.__name__ = op_type
    fn.__qualname__ = op_type
    fn.__doc__ = f"Add one ``{op_type}`` node (see :mod:`ascendir.ge.es._ops`)."
    fn.__signature__ = spec.signature  # type: ignore[attr-defined]
    return fn


def _src(value: Any, builder: Any, made: list[Any], op_type: str, spec: _Spec, i: int,
         given: list[Any]) -> Any:
    """The ascendir source of input ``i`` (a constant made for a number or list: of the
    type of a holder sharing the input's type variable, else of the input's one allowed
    type, else GE's int64 / float32)."""
    if isinstance(value, TensorHolder):
        if value._builder is not builder:
            raise GeValueError(
                f"{op_type}(): tensors from different GraphBuilders ('{builder.name}' vs "
                f"'{value._builder.name}')")
        _adapt_loose_input(value, builder, spec.fixed[i])
        return value._src
    like = None
    tv = spec.type_vars[i]
    if tv is not None:
        for j, other in enumerate(given):
            if spec.type_vars[j] != tv:
                continue
            for t in other if isinstance(other, list) else (other,):
                if isinstance(t, TensorHolder):
                    like = t._dtype()
                    break
            if like is not None:
                break
    elif spec.fixed[i] is not None and len(spec.fixed[i]) >= 1:
        like = spec.fixed[i][0]
    holder = literal_to_tensor_holder(value, builder, like)
    made.append(holder._node)
    return holder._src


def _adapt_loose_input(holder: TensorHolder, builder: Any, allowed: Any) -> None:
    """An input made with neither shape nor dtype, not read yet, takes the first dtype a
    port of fixed dtypes allows when its float default is not one of them (GE fills such
    placeholder inputs from the graph they replace; ascendir checks dtypes as it builds)."""
    if not allowed or holder._node.name not in builder._loose_inputs:
        return
    node = holder._node
    desc = node.op_desc.output_desc(0)
    if desc.dtype in allowed or any(True for v in node.outputs for _u in v.uses()):
        return
    d = desc.copy()
    d.dtype = allowed[0]
    node.op_desc.update_input_desc(0, d)
    node.op_desc.update_output_desc(0, d.copy())


def _undo(g: Any, made: list[Any]) -> None:
    """Remove the constants a failed call made, so the graph is as it was."""
    if made:
        g.remove(made, safe=False)


def _results(node: Any, builder: Any, outputs: list[tuple[str, str]], output_type: Any,
             single: bool) -> Any:
    if single:
        out = TensorHolder._create_from(node, builder)
        if builder._scoped():
            builder._apply_scope_infos_to_node(out)
        return out
    if not outputs:
        if builder._scoped():
            builder._apply_scope_infos_to_node(TensorHolder._create_from(node, builder))
        return None
    op = node.op_desc
    names = op.output_names
    holders: list[Any] = []
    all_holders: list[TensorHolder] = []
    for name, kind in outputs:
        if kind == "dynamic":
            # A dynamic output ``y`` is the ports ``y0``, ``y1``, ...
            idx = [i for i, n in enumerate(names)
                   if n.startswith(name) and n[len(name):].isdigit()]
            group = [TensorHolder._create_from(node, builder, i) for i in idx]
            holders.append(group)
            all_holders.extend(group)
        else:
            h = TensorHolder._create_from(node, builder, op.output_index(name))
            holders.append(h)
            all_holders.append(h)
    if all_holders and builder._scoped():
        builder._apply_scope_infos_to_node(all_holders[0])
    if output_type is None:
        return holders[0]
    return output_type(*holders)


_lock = threading.Lock()
_cache: dict[str, tuple[Any, Callable[..., Any]]] = {}


def op_function(op_type: str, group: str = "all") -> Callable[..., Any]:
    """The ES function of ``op_type`` in ``group`` (``AttributeError`` when the type is not
    registered, not in the group, or has subgraphs)."""
    raw = _core._ops_signature(op_type)
    if raw is None or group not in group_of(op_type) or _has_subgraphs(op_type):
        where = f"ascendir.ge.es.{group}"
        raise AttributeError(f"{where} has no op function '{op_type}'")
    with _lock:
        hit = _cache.get(op_type)
        if hit is not None and hit[0] == raw:
            return hit[1]
        fn = _make(_Spec(op_type, raw))
        _cache[op_type] = (raw, fn)
        return fn
