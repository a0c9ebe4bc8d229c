"""Flatten a ``torch.export.ExportedProgram`` into the plain arrays ``_core._torch_convert``
takes (the encoding is described in the ``ascendir-torch`` crate, module ``program``).

Symbols: every dynamic dim of a user input gets its own name ``s0, s1, …`` in input order,
then dim order — the rule of the compiler's symbolize stage, so ``air.compile`` names them
the same. Dims that torch proves equal (one ``torch.export.Dim`` used twice) keep their own
names and are tied by an ``Eq(s0, s1)`` guard; expressions elsewhere use the first name.
"""
# Optional dependencies (torch): absent or untyped where the package is checked
# mypy: disable-error-code="import-not-found,import-untyped"

from __future__ import annotations

import importlib
import os
import re
import struct
from typing import Any

from ..types import _ARRAY_NAMES, DataType

__all__ = ["GE_DTYPES", "FlatProgram", "NeedsDecomposition", "flatten"]

FlatProgram = tuple[Any, ...]
"""The positional arguments of ``_core._torch_convert``."""

# ge::DataType numbers of the torch dtypes, by torch's name (the package's one dtype table;
# whole-byte elements only: torch's sub-byte dtypes are not packed as GE packs them).
GE_DTYPES: dict[str, int] = {
    name: int(DataType[member]) for member, name in _ARRAY_NAMES.items()
    if (DataType[member].bit_width or 0) % 8 == 0
}

_FRAME = re.compile(r'File "([^"]+)", line (\d+), in (\S+)')

# Argument tags (see the crate's program module).
_NONE, _NODE, _INT, _FLOAT, _BOOL, _STR, _LIST, _DTYPE, _KW, _OTHER = range(10)


class NeedsDecomposition(Exception):
    """The program has an in-place op whose mutation another node may see."""


def _returns_alias(target: Any) -> bool:
    return any(r.alias_info is not None for r in target._schema.returns)


def _check_in_place(node: Any, fresh: set[Any]) -> None:
    """An in-place op converts as its functional form only when nothing else can see the
    mutation: it mutates a fresh result (no view; an in-place op already checked counts)
    whose only user it is. ``fresh`` collects the checked in-place nodes."""
    import torch

    target = node.target
    if not isinstance(target, torch._ops.OpOverload) or not target._schema.is_mutable:
        return
    x = node.args[0] if node.args else None
    producer = getattr(x, "target", None)
    if (not isinstance(x, torch.fx.Node) or x.op != "call_function" or len(x.users) != 1
            or not isinstance(producer, torch._ops.OpOverload)
            or (_returns_alias(producer) and x not in fresh)):
        raise NeedsDecomposition(node.name)
    fresh.add(node)


def _dtype_code(dtype: Any) -> int:
    name = str(dtype).removeprefix("torch.")
    code = GE_DTYPES.get(name)
    if code is None:
        from ..errors import TorchExportError

        raise TorchExportError(f"dtype {dtype} has no GE counterpart")
    return code


def _target_name(target: Any) -> str:
    import torch

    if isinstance(target, torch._ops.OpOverload):
        return str(target)
    if isinstance(target, torch._ops.HigherOrderOperator):
        return f"torch.ops.higher_order.{getattr(target, '__name__', None) or target._name}"
    module = getattr(target, "__module__", None) or "builtins"
    name = getattr(target, "__qualname__", None) or getattr(target, "__name__", repr(target))
    return f"{module}.{name}"


def _module_entry(path: str, ty: Any) -> str:
    if isinstance(ty, type):
        ty = f"{ty.__module__}.{ty.__qualname__}"
    return f"{path or '<root>'} ({ty})"


class _Flattener:
    def __init__(self, ep: Any) -> None:
        import torch

        sympy = importlib.import_module("sympy")  # torch's dependency (untyped)

        self.torch_dir = os.path.dirname(torch.__file__) + os.sep
        self.symbol_class = sympy.Symbol
        self.ep = ep
        self.strings: list[str] = []
        self.string_index: dict[str, int] = {}
        self.rename: dict[Any, Any] = {}
        self.expr_cache: dict[Any, int] = {}
        self.source_cache: dict[str, int] = {}
        self.symbols: list[tuple[str, int, int, str]] = []
        self.guards: list[str] = []

    def s(self, text: str) -> int:
        i = self.string_index.get(text)
        if i is None:
            i = len(self.strings)
            self.strings.append(text)
            self.string_index[text] = i
        return i

    # ------------------------------------------------------------------ symbols

    def _range(self, sym: Any) -> tuple[int, int]:
        vr = self.ep.range_constraints.get(sym)
        if vr is None:
            return 0, -1
        lo = int(vr.lower) if vr.lower.is_finite else 0
        hi = int(vr.upper) if vr.upper.is_finite and int(vr.upper) < 2**62 else -1
        return lo, hi

    def name_symbols(self, user_inputs: list[Any]) -> None:
        """Name every dynamic dim of the user inputs (compiler order) and record guards."""
        import torch

        symbol = self.symbol_class
        pending: list[tuple[str, Any]] = []
        k = 0
        for i, node in enumerate(user_inputs):
            val = node.meta.get("val")
            shape = getattr(val, "shape", None)
            if shape is None:
                continue
            for j, d in enumerate(shape):
                if not isinstance(d, torch.SymInt):
                    continue
                expr = d.node.expr
                if expr.is_number:
                    continue
                name = f"s{k}"
                k += 1
                lo, hi = (0, -1)
                if isinstance(expr, symbol):
                    lo, hi = self._range(expr)
                    if expr in self.rename:
                        self.guards.append(f"Eq({self.rename[expr]}, {name})")
                    else:
                        self.rename[expr] = symbol(name, integer=True, positive=True)
                else:
                    pending.append((name, expr))
                self.symbols.append((name, lo, hi, f"input {i} dim {j}"))
        # Symbols only seen inside composite dims get the next names.
        for _, expr in pending:
            for sym in sorted(expr.free_symbols, key=str):
                if sym not in self.rename:
                    name = f"s{k}"
                    k += 1
                    self.rename[sym] = symbol(name, integer=True, positive=True)
                    lo, hi = self._range(sym)
                    self.symbols.append((name, lo, hi, "derived"))
        for name, expr in pending:
            self.guards.append(f"Eq({name}, {self.expr_text(expr)})")
        for name, lo, hi, source in list(self.symbols):
            if source == "derived" or not any(g.endswith(f", {name})") for g in self.guards):
                if lo > 0:
                    self.guards.append(f"Ge({name}, {lo})")
                if hi >= 0:
                    self.guards.append(f"Le({name}, {hi})")

    def expr_text(self, expr: Any) -> str:
        return str(expr.xreplace(self.rename))

    def dim(self, d: Any) -> int:
        if isinstance(d, int):
            return d
        expr = d.node.expr
        if expr.is_number:
            return int(expr)
        i = self.expr_cache.get(expr)
        if i is None:
            i = self.s(self.expr_text(expr))
            self.expr_cache[expr] = i
        return -i - 1

    # ------------------------------------------------------------------ metadata

    def meta(self, val: Any, out: list[int]) -> None:
        import torch

        if isinstance(val, torch.Tensor):
            out.append(_dtype_code(val.dtype))
            out.append(val.dim())
            out.extend(self.dim(d) for d in val.shape)
        elif isinstance(val, torch.SymInt | int) and not isinstance(val, bool):
            out.extend((-1, 1, self.dim(val)))
        else:
            out.extend((-2, 0))

    def metas(self, val: Any, out: list[int]) -> None:
        if isinstance(val, list | tuple):
            out.append(len(val))
            for v in val:
                self.meta(v, out)
        elif val is None:
            out.append(0)
        else:
            out.append(1)
            self.meta(val, out)

    def module(self, node: Any) -> int:
        stack = node.meta.get("nn_module_stack")
        if not stack:
            return -1
        entries = [_module_entry(path, ty) for path, ty in stack.values()]
        return self.s("\n".join(entries))

    def source(self, node: Any) -> int:
        trace = node.meta.get("stack_trace")
        if not trace:
            return -1
        i = self.source_cache.get(trace)
        if i is None:
            frames = _FRAME.findall(trace)
            # The innermost frame of user code (not of torch itself), else the innermost.
            user = [fr for fr in frames if not fr[0].startswith(self.torch_dir)]
            if not frames:
                i = -1
            else:
                file, line, fn = (user or frames)[-1]
                i = self.s(f"{file}:{line} in {fn}")
            self.source_cache[trace] = i
        return i

    # ------------------------------------------------------------------ arguments

    def arg(self, a: Any, index: dict[Any, int], out: list[int]) -> None:
        import torch

        if a is None:
            out.append(_NONE)
        elif isinstance(a, torch.fx.Node):
            out.extend((_NODE, index[a]))
        elif isinstance(a, bool):
            out.extend((_BOOL, int(a)))
        elif isinstance(a, int):
            out.extend((_INT, a) if -(2**63) <= a < 2**63 else (_OTHER, self.s(str(a))))
        elif isinstance(a, float):
            out.extend((_FLOAT, struct.unpack("<q", struct.pack("<d", a))[0]))
        elif isinstance(a, str):
            out.extend((_STR, self.s(a)))
        elif isinstance(a, list | tuple):
            out.extend((_LIST, len(a)))
            for x in a:
                self.arg(x, index, out)
        elif isinstance(a, torch.dtype):
            out.extend((_DTYPE, _dtype_code(a)))
        else:
            out.extend((_OTHER, self.s(str(a))))


def _payload(t: Any) -> Any:
    """A C-contiguous numpy view of a CPU tensor (a copy only when it must be)."""
    import torch

    t = t.detach()
    if t.device.type != "cpu":
        t = t.cpu()
    if not t.is_contiguous():
        t = t.contiguous()
    if t.dtype == torch.bfloat16:
        t = t.view(torch.int16)
    elif t.dtype in (torch.float8_e5m2, torch.float8_e4m3fn):
        t = t.view(torch.uint8)
    return t.numpy()


def _get_attr(root: Any, path: str) -> Any:
    obj = root
    for part in path.split("."):
        obj = getattr(obj, part, None)
    return obj


def flatten(ep: Any, name: str = "main") -> FlatProgram:
    """The arrays of ``ep`` (already decomposed to Core ATen), for ``_core._torch_convert``."""
    import torch
    from torch.export.graph_signature import InputKind, OutputKind

    from ..errors import TorchExportError

    f = _Flattener(ep)
    sig = ep.graph_signature
    kinds_by_name: dict[str, tuple[int, str]] = {}
    for spec in sig.input_specs:
        arg_name = getattr(spec.arg, "name", None)
        if arg_name is None:
            continue
        if spec.kind == InputKind.USER_INPUT:
            kinds_by_name[arg_name] = (0, arg_name)
        elif spec.kind in (InputKind.PARAMETER, InputKind.BUFFER, InputKind.CONSTANT_TENSOR):
            kinds_by_name[arg_name] = (1, str(spec.target))
        else:
            raise TorchExportError(
                f"placeholder '{arg_name}' is a {spec.kind.name} input, which is not supported",
                node=arg_name,
                target=str(spec.target),
            )
    user_out = [i for i, s in enumerate(sig.output_specs) if s.kind == OutputKind.USER_OUTPUT]
    graph = ep.graph
    nodes = list(graph.nodes)
    f.name_symbols([n for n in nodes if n.op == "placeholder" and kinds_by_name.get(n.name,
                                                                                  (1,))[0] == 0])
    index: dict[Any, int] = {}
    kinds: list[int] = []
    names: list[str] = []
    targets: list[str] = []
    code: list[int] = []
    code_off: list[int] = [0]
    meta: list[int] = []
    meta_off: list[int] = [0]
    info: list[int] = []
    consts: list[tuple[int, Any]] = []
    tensors = {**ep.state_dict, **ep.constants}
    fresh: set[Any] = set()
    for i, node in enumerate(nodes):
        index[node] = i
        names.append(node.name)
        val = node.meta.get("val")
        if node.op == "placeholder":
            kind, target = kinds_by_name.get(node.name, (0, node.name))
            kinds.append(kind)
            targets.append(target)
            if kind == 1:
                t = tensors.get(target)
                if not isinstance(t, torch.Tensor):
                    raise TorchExportError(
                        f"placeholder '{node.name}' ({target}) has no tensor in the program",
                        node=node.name, target=target)
                consts.append((i, _payload(t)))
                val = t
            info.extend((-1, -1, -1))
        elif node.op == "call_function":
            _check_in_place(node, fresh)
            kinds.append(2)
            target = node.target
            targets.append(_target_name(target))
            for a in node.args:
                f.arg(a, index, code)
            for key, a in node.kwargs.items():
                code.extend((_KW, f.s(key)))
                f.arg(a, index, code)
            schema = str(target._schema) if isinstance(target, torch._ops.OpOverload) else ""
            info.extend((f.module(node), f.source(node), f.s(schema) if schema else -1))
        elif node.op == "output":
            kinds.append(3)
            targets.append("output")
            outs = node.args[0]
            outs = outs if isinstance(outs, list | tuple) else [outs]
            f.arg([outs[k] for k in user_out if k < len(outs)], index, code)
            val = None
            info.extend((-1, -1, -1))
        elif node.op == "get_attr":
            attr = _get_attr(ep.graph_module, str(node.target))
            if isinstance(attr, torch.Tensor):
                kinds.append(1)
                targets.append(str(node.target))
                consts.append((i, _payload(attr)))
                val = attr
            else:  # a submodule (the body of a higher-order op): no value of its own
                kinds.append(2)
                targets.append(f"get_attr.{node.target}")
            info.extend((-1, -1, -1))
        else:  # call_module, call_method: not in an exported program
            kinds.append(2)
            targets.append(f"torch.{node.op}.{node.target}")
            info.extend((-1, -1, -1))
        code_off.append(len(code))
        f.metas(val, meta)
        meta_off.append(len(meta))
    return (name, kinds, names, targets, code, code_off, meta, meta_off, info, f.strings,
            consts, f.symbols, f.guards)
