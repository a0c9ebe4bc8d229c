"""The graph compiler (``air.compile``): lower and fuse the vector regions of a GE graph into
``AscBackend`` kernels, schedule, allocate and tile them for an Ascend target.

The pipeline runs in Rust (crate ``ascendir-compiler``) on a copy of the graph, without the GIL;
this package only loads models, packs options and wraps the results::

    import ascendir as air
    cm = air.compile("model.onnx", target="ascend910b", input_shapes={"x": [8, 128]})
    print(cm.report.text())
    cm.save("out/")
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import _core
from .._core import Graph, Node
from ..errors import CompileError

if TYPE_CHECKING:
    from ..passes import Pass

__all__ = [
    "CompileError",
    "CompileOptions",
    "CompileReport",
    "CompileResult",
    "CompileState",
    "CompiledModel",
    "Kernel",
    "ToolMissingWarning",
    "available_cpus",
    "compile",
    "compile_iter",
    "compile_many",
    "default_cache_dir",
    "explain",
    "load",
    "load_model_file",
    "lowered_types",
    "lowering",
    "random_inputs",
    "VERIFY_FLAGS",
    "VerifyReport",
    "verify",
]



class ToolMissingWarning(UserWarning):
    """An optional output was not written because the tool it needs is not installed (the
    other outputs are)."""


_FAMILIES = ("elementwise", "broadcast", "reduce", "concat", "slice", "transpose", "split",
             "gather", "matmul_vector")
TARGETS = ("ascend910b", "ascend910b3", "ascend950")
EMITS = ("om", "pb", "txt", "report", "dot", "svg", "cpp")


@dataclass
class CompileOptions:
    """What to fuse and the limits (docs/COMPILER.md). Readable from a TOML file with
    :meth:`from_toml`."""

    target: str = "ascend910b"
    input_shapes: dict[str, list[int]] = field(default_factory=dict)
    fusion: bool = True
    fuse_attention: bool = True
    enable: list[str] = field(default_factory=list)
    disable: list[str] = field(default_factory=list)
    max_fusion_size: int = 64
    max_inputs: int = 8
    max_outputs: int = 8
    max_reduce_epilogue: int = 3
    min_cluster_ops: int = 2
    recompute: bool = False
    improve_precision: bool = True
    precision_blacklist: list[str] = field(default_factory=list)
    skip_types: list[str] = field(default_factory=list)
    skip_names: list[str] = field(default_factory=list)
    max_rounds: int = 10
    pair_attempts: int = 64
    min_shared_bytes: int = 1
    default_hint: int = 16
    report_rejections: int | None = 1000

    def to_json(self) -> str:
        """The options as the JSON the Rust pipeline reads."""
        for f in (*self.enable, *self.disable):
            if f not in _FAMILIES:
                raise CompileError(f"unknown op family '{f}' (one of {', '.join(_FAMILIES)})",
                                   stage="load", node=None,
                                   reason=f"unknown op family '{f}'")
        return json.dumps(dataclasses.asdict(self))

    @classmethod
    def from_toml(cls, path: str | os.PathLike[str]) -> CompileOptions:
        """Read options from a TOML file (keys as the field names; a ``[compile]`` table or
        top-level keys)."""
        if sys.version_info >= (3, 11):
            import tomllib
        else:  # pragma: no cover - Python 3.10
            import tomli as tomllib
        with open(path, "rb") as f:
            data = tomllib.load(f)
        data = data.get("compile", data)
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - names)
        if unknown:
            raise CompileError(f"{os.fspath(path)}: unknown option(s) {', '.join(unknown)}",
                               stage="load", node=None, reason="unknown options")
        return cls(**data)


class Kernel:
    """One fused kernel: the ``AscBackend`` node, its HintGraph and scheduled ImplGraphs (read
    from their bytes on first use)."""

    def __init__(self, data: Mapping[str, Any], graph: Graph | Callable[[], Graph],
                 target: str) -> None:
        self.name: str = data["name"]
        self.fuse_type: str = data["fuse_type"]
        self.members: list[str] = list(data["members"])
        self.member_types: list[str] = list(data["member_types"])
        self.cache_key: str = data["cache_key"]
        self.from_cache: bool = bool(data.get("from_cache", False))
        self._sources: dict[str, str] | None = None
        # The graphs' bytes: given, or read from the AscBackend node's attributes on first use.
        self._hint_bytes: bytes | None = bytes(data["hint"]) if "hint" in data else None
        self._impl_bytes: list[bytes] | None = (
            [bytes(b) for b in data["impls"]] if "impls" in data else None)
        self._hint: Any = None
        self._impls: list[Any] | None = None
        self._graph_of: Callable[[], Graph] = graph if callable(graph) else (lambda: graph)
        self._target = target
        self._tiling: Any = None

    def _bytes_from_node(self) -> None:
        from ..asc import ASCGRAPH_ATTR_KEY

        attrs = self.node.op_desc.attrs
        self._hint_bytes = bytes(attrs[ASCGRAPH_ATTR_KEY])
        stored = attrs["_ascendir_impl_graphs"] if "_ascendir_impl_graphs" in attrs else []
        self._impl_bytes = [bytes(b) for b in stored]

    @property
    def hint(self) -> Any:
        """The HintGraph (``asc.AscGraph``)."""
        if self._hint is None:
            from ..asc import AscGraph

            if self._hint_bytes is None:
                self._bytes_from_node()
            self._hint = AscGraph.from_bytes(self._hint_bytes or b"")
        return self._hint

    @property
    def impls(self) -> list[Any]:
        """The scheduled, allocated ImplGraphs in tiling-key order (re-scheduled from the
        HintGraph, deterministically, when a saved model carries none)."""
        if self._impls is None:
            from ..asc import AscGraph, schedule

            if self._impl_bytes is None:
                self._bytes_from_node()
            self._impls = ([AscGraph.from_bytes(b) for b in self._impl_bytes]
                           if self._impl_bytes else schedule(self.hint))
        return self._impls

    @property
    def sources(self) -> dict[str, str]:
        """The kernel's generated files (file name → text, docs/CODEGEN.md) for the compile target,
        generated on first use (:meth:`CompiledModel.generate` does every kernel at once)."""
        if self._sources is None:
            from ..asc import Target, generate_kernel

            self._sources = generate_kernel(self.impls, self.name,
                                            getattr(Target, self._target)(), hint=self.hint,
                                            cache_key=self.cache_key)
        return self._sources

    @property
    def node(self) -> Node:
        """The AscBackend node in the compiled graph."""
        return self._graph_of().node(self.name)

    @property
    def tiling(self) -> Any:
        """The tiling function of the kernel for the target (``asc.compile_tiling``)."""
        if self._tiling is None:
            from ..asc import Target, compile_tiling

            self._tiling = compile_tiling(self.impls, getattr(Target, self._target)())
        return self._tiling

    def __repr__(self) -> str:
        return (f"<Kernel {self.name!r} {self.fuse_type}: {len(self.members)} nodes, "
                f"{len(self.impls)} templates>")


class CompileReport:
    """The compile report: stage times, counts, kernels, refused pairs, barriers."""

    def __init__(self, data: dict[str, Any] | bytes, text: str, dot: str) -> None:
        self._data: dict[str, Any] | None = data if isinstance(data, dict) else None
        self._json: bytes | None = None if isinstance(data, dict) else data
        self._text = text
        self._dot = dot

    @property
    def data(self) -> dict[str, Any]:
        """The report as a dict (the fields above)."""
        if self._data is None:
            self._data = json.loads(self._json or b"{}")
        return self._data

    def text(self) -> str:
        """A compact table."""
        return self._text

    def to_json(self) -> str:
        """The report as JSON text."""
        return json.dumps(self.data, indent=2)

    def to_dot(self) -> str:
        """The compiled graph in Graphviz DOT, AscBackend nodes filled."""
        return self._dot

    def to_svg(self) -> str:
        """The DOT rendered by Graphviz ``dot`` (an optional tool; CompileError without it)."""
        exe = shutil.which("dot")
        if exe is None:
            raise CompileError("Graphviz 'dot' is not installed (apt-get install graphviz)",
                               stage="package", node=None, reason="dot not found")
        out = subprocess.run([exe, "-Tsvg"], input=self._dot.encode(), capture_output=True,
                             check=False)
        if out.returncode != 0:
            raise CompileError(f"dot failed: {out.stderr.decode(errors='replace').strip()}",
                               stage="package", node=None, reason="dot failed")
        return out.stdout.decode()

    @property
    def nodes_before(self) -> int:
        """Nodes of the model before compiling."""
        return int(self.data["nodes_before"])

    @property
    def nodes_after(self) -> int:
        """Nodes of the compiled graph."""
        return int(self.data["nodes_after"])

    @property
    def bytes_saved(self) -> int:
        """Read+write bytes saved (at the hint shapes)."""
        return int(self.data["bytes_saved"])

    def __repr__(self) -> str:
        return (f"<CompileReport nodes {self.nodes_before}->{self.nodes_after}, "
                f"kernels {len(self.data['kernels'])}>")


class CompiledModel:
    """The result of :func:`compile`: ``graph``, ``kernels``, ``report``."""

    def __init__(self, graph: Graph, kernels: list[Kernel], report: CompileReport,
                 options: CompileOptions, dumps: list[tuple[str, str]]) -> None:
        self._graph: Graph | None = graph
        # A result from an archive: its ModelDef (bytes, or held in the archive's buffer).
        self._model_pb: bytes | _core.compiler.ArchivedModel | None = None
        self._kernels: list[Kernel] | None = kernels
        self._kernel_meta: list[dict[str, Any]] = []
        self.report = report
        self.options = options
        self.dumps = dumps

    @property
    def graph(self) -> Graph:
        """The compiled Graph: vector clusters replaced by AscBackend nodes."""
        if self._graph is None:
            pb = self._model_pb
            self._graph = (Graph.from_bytes(pb or b"") if pb is None or isinstance(pb, bytes)
                           else pb.graph())
            self._model_pb = None
        return self._graph

    @property
    def kernels(self) -> list[Kernel]:
        """The kernels in cluster order."""
        if self._kernels is None:
            self._kernels = [Kernel(k, lambda: self.graph, self.options.target)
                             for k in self._kernel_meta]
        return self._kernels

    def to_bytes(self) -> bytes:
        """The compiled graph as GE ModelDef bytes."""
        from ..serialization import Model

        return bytes(Model(self.graph.name, [self.graph]).to_bytes())

    def save(self, out_dir: str | os.PathLike[str], emit: Iterable[str] = ("om", "report"),
             *, name: str | None = None) -> list[str]:
        """Write the outputs named by ``emit`` (⊆ om, pb, txt, report, dot, svg, cpp) into
        ``out_dir``; returns the paths written. ``cpp`` writes every kernel's generated files
        (docs/CODEGEN.md) into ``kernels/<name>/``."""
        from ..serialization import save as _save

        emit = list(emit)
        bad = [e for e in emit if e not in EMITS]
        if bad:
            raise CompileError(f"unknown emit kind(s) {', '.join(bad)} (one of "
                               f"{', '.join(EMITS)})", stage="package", node=None,
                               reason="bad emit")
        os.makedirs(out_dir, exist_ok=True)
        stem = name or (self.graph.name or "model")
        written = []
        for kind in emit:
            if kind in ("om", "pb", "txt"):
                p = os.path.join(out_dir, f"{stem}.{kind}")
                _save(self.graph, p)
            elif kind == "report":
                p = os.path.join(out_dir, "report.json")
                with open(p, "w", encoding="utf-8") as f:
                    f.write(self.report.to_json())
            elif kind == "dot":
                p = os.path.join(out_dir, "fusion.dot")
                with open(p, "w", encoding="utf-8") as f:
                    f.write(self.report.to_dot())
            elif kind == "cpp":
                written.extend(self._write_kernels(os.path.join(out_dir, "kernels")))
                continue
            else:
                if shutil.which("dot") is None:
                    # An optional picture: the compile's other outputs are written anyway.
                    warnings.warn("fusion.svg not written: Graphviz 'dot' is not installed "
                                  "(apt-get install graphviz); 'ascendir view' shows the "
                                  "compiled graph without it", ToolMissingWarning,
                                  stacklevel=2)
                    continue
                p = os.path.join(out_dir, "fusion.svg")
                with open(p, "w", encoding="utf-8") as f:
                    f.write(self.report.to_svg())
            written.append(p)
        for fname, text in self.dumps:
            d = os.path.join(out_dir, "stages")
            os.makedirs(d, exist_ok=True)
            p = os.path.join(d, fname)
            with open(p, "w", encoding="utf-8") as f:
                f.write(text)
            written.append(p)
        return written

    def generate(self) -> dict[str, dict[str, str]]:
        """Generate every kernel's files (docs/CODEGEN.md) for the compile target in one call, on
        the package's threads with the GIL released; fills each :attr:`Kernel.sources` and
        returns ``{kernel name: {file name: text}}`` in kernel order."""
        from ..asc import Target, generate_kernels

        todo = [k for k in self.kernels if k._sources is None]
        if todo:
            target = getattr(Target, self.options.target)()
            files = generate_kernels([(k.impls, k.name, k.hint, k.cache_key) for k in todo],
                                     target)
            for k, f in zip(todo, files, strict=True):
                k._sources = f
        return {k.name: k.sources for k in self.kernels}

    def _write_kernels(self, root: str) -> list[str]:
        written = []
        for kname, files in self.generate().items():
            for fname in sorted(files):
                p = os.path.join(root, kname, *fname.split("/"))
                os.makedirs(os.path.dirname(p), exist_ok=True)
                with open(p, "w", encoding="utf-8", newline="\n") as f:
                    f.write(files[fname])
                written.append(p)
        return written

    @classmethod
    def _from_archive(cls, data: bytes | list[tuple[str, Any]],
                      options: CompileOptions) -> CompiledModel:
        """A compiled model from its result archive, or the archive's ``(name, bytes)``
        sections (what batch compilation hands back; its ``model.pb`` may be an
        ``ArchivedModel`` holding the archive's buffer)."""
        # The graph, the kernels and the report are decoded on first use: a batch result (or a
        # cache hit) that is only saved or counted never builds them.
        sections = dict(_core.compiler.unpack_archive(data) if isinstance(data, bytes)
                        else data)
        report = CompileReport(bytes(sections["report.json"]),
                               bytes(sections["report.txt"]).decode(),
                               bytes(sections["fusion.dot"]).decode())
        dumps = [(n[len("stages/"):], bytes(d).decode()) for n, d in sections.items()
                 if n.startswith("stages/")]
        cm = cls.__new__(cls)
        cm._graph = None
        pb = sections["model.pb"]
        cm._model_pb = pb if isinstance(pb, _core.compiler.ArchivedModel) else bytes(pb)
        cm._kernels = None
        cm._kernel_meta = json.loads(sections["kernels.json"])
        cm.report = report
        cm.options = options
        cm.dumps = dumps
        return cm

    def __repr__(self) -> str:
        return f"<CompiledModel {self.graph.name!r}: {len(self.kernels)} kernels>"


def load_model_file(model: str | os.PathLike[str] | bytes) -> Graph:
    """Read a model (ONNX, GE ``.pb`` / ``.txt`` / ``.om``; sniffed from the bytes when the
    suffix does not say) as a Graph; failures are ``CompileError(stage="load")`` with the
    byte offset when the decoder gives one. An ONNX model at an opset the mapping was not
    written for gives an :class:`~ascendir.onnx.OpsetWarning`."""
    from ..onnx import warn_opset

    if isinstance(model, (bytes, bytearray, memoryview)):
        graph = _core.compiler.load_model(bytes(model))
    else:
        graph = _core.compiler.load_model(os.fspath(model))
    warn_opset(graph, stacklevel=3)
    return graph


def _options(target: str | None, input_shapes: Mapping[str, Sequence[int]] | None,
             options: CompileOptions | None) -> CompileOptions:
    opts = dataclasses.replace(options) if options is not None else CompileOptions()
    if target is not None:
        opts.target = target
    if input_shapes:
        opts.input_shapes = {str(k): [int(d) for d in v] for k, v in input_shapes.items()}
    return opts


def _from_parts(parts: tuple[Any, ...], opts: CompileOptions) -> CompiledModel:
    """A compiled model from the parts the Rust compiler hands back (``compile`` and the
    in-process batch)."""
    g, kernels, report_json, report_text, dot, dumps = parts
    report = CompileReport(report_json, report_text, dot)  # parsed when first read
    ks = [Kernel(k, g, opts.target) for k in kernels]
    return CompiledModel(g, ks, report, opts, list(dumps))


def compile(  # noqa: A001 - the public name of the spec
    model: Graph | str | os.PathLike[str] | bytes,
    target: str | None = None,
    input_shapes: Mapping[str, Sequence[int]] | None = None,
    options: CompileOptions | None = None,
    *,
    out_dir: str | os.PathLike[str] | None = None,
    emit: Iterable[str] = ("om", "report"),
    dump_stages: bool = False,
    passes: Sequence[tuple[str, str, Pass]] = (),
    ge_passes: bool = False,
) -> CompiledModel:
    """Compile a model: a :class:`~ascendir.Graph` (left unchanged), a path or the model bytes.

    ``input_shapes`` binds the symbols of ``-1`` dims (hints); ``options`` is a
    :class:`CompileOptions`. With ``out_dir`` the outputs named by ``emit`` are written there.
    The compile is ``passes.compile_pipeline(passes)`` — a pass manager of the compiler's own
    pass objects — run over a :class:`CompileState`. ``passes`` are user passes run inside
    it: ``(position, point, pass)`` with ``position`` ``"before"`` or ``"after"``, ``point`` a
    pass of the pipeline (``validate`` … ``package``) and ``pass`` an
    :class:`ascendir.passes.Pass`: a plain graph pass runs ``before`` ``lower`` at the latest,
    a :class:`~ascendir.passes.CompileStatePass` anywhere (docs/PASSES.md).
    ``ge_passes=True`` loads the GE Python pass files ``ASCEND_GE_PY_PASS_PATH`` names and
    runs the registered ``ascendir.ge.passes`` at the points of their stages
    (``ascendir.ge.passes.STAGE_POINTS``), after the ``passes`` given at the same point.
    Raises :class:`~ascendir.errors.CompileError` with ``stage``, ``node`` and ``reason``.
    """
    from ..passes import compile_pipeline

    opts = _options(target, input_shapes, options)
    graph = model if isinstance(model, Graph) else load_model_file(model)
    user = list(passes)
    if ge_passes:
        from ..ge.passes import load_pass_plugins
        from ..ge.passes.runner import stage_passes

        load_pass_plugins()
        user.extend(stage_passes())
    pipeline = compile_pipeline(user)
    state = CompileState(graph, options=opts, dump_stages=dump_stages)
    pipeline(state)  # type: ignore[arg-type]  # the manager runs a CompileState too
    cm = state.finish()
    if out_dir is not None:
        cm.save(out_dir, emit)
    return cm


from .lowering import lowering  # noqa: E402
from .state import CompileState  # noqa: E402


def lowered_types() -> list[str]:
    """GE op types with a registered lowering, sorted."""
    return list(_core.compiler.lowered_types())


def explain(model: Graph | str | os.PathLike[str] | bytes, a: str, b: str,
            **compile_kwargs: Any) -> str:
    """Why nodes ``a`` and ``b`` did or did not end up in one kernel (with the fusion codes
    of the report)."""
    graph = model if isinstance(model, Graph) else load_model_file(model)
    for n in (a, b):
        graph.node(n)  # NotFoundError when absent
    kwargs = dict(compile_kwargs)
    given = kwargs.pop("options", None)
    # Every refused pair, not just the report's top ones.
    opts = dataclasses.replace(given) if given is not None else CompileOptions()
    opts.report_rejections = None
    cm = compile(graph, options=opts, **kwargs)
    rep = cm.report.data
    where: dict[str, Any] = {}
    for k in rep["kernels"]:
        for m in k["members"]:
            where[m] = k
    lifted: dict[str, tuple[int, dict[str, Any]]] = {}
    for i, lf in enumerate(rep["lifted"]):
        for m in lf["members"]:
            lifted[m] = (i, lf)
    ka, kb = where.get(a), where.get(b)
    if ka is kb and ka is not None:
        return f"'{a}' and '{b}' are fused into {ka['name']}"
    for n in (a, b):
        for bar in rep["barriers"]:
            if bar["name"] == n:
                return (f"'{n}' is not lowered ({bar['category']}: {bar['reason']}), so it "
                        "fuses with nothing")

    # A refused pair names the first members of its clusters when it was refused; those
    # clusters may have grown since, into a kernel or a cluster lifted back out: the pair is
    # matched by where its nodes ended.
    def home(n: str) -> str:
        if n in where:
            return f"kernel {where[n]['name']}"
        if n in lifted:
            return f"lifted {lifted[n][0]}"
        return f"node {n}"

    def lifted_note(names: Iterable[str]) -> str:
        notes = [f"; '{n}' was then lifted back out of its cluster: {lifted[n][1]['reason']}"
                 for n in names if n in lifted]
        return "".join(notes)

    pair = {home(a), home(b)}
    if len(pair) > 1:
        for r in rep["rejected_pairs"]:
            if {home(r["a"]), home(r["b"])} == pair:
                return (f"'{a}' and '{b}' did not fuse: [{r['code']}] {r['reason']}"
                        + lifted_note((a, b)))
    if len(pair) == 1 and a in lifted:
        return (f"'{a}' and '{b}' were in one cluster, lifted back out: "
                f"{lifted[a][1]['reason']}")
    for n in (a, b):
        if n in lifted:
            return f"'{n}' was lifted back out of its cluster: {lifted[n][1]['reason']}"
    return (f"'{a}' and '{b}' did not fuse: their clusters were never a candidate pair "
            "(they touch no common tensor) [NF1001]")


def _kernel_of_node(graph: Graph, node: Node, target: str) -> Kernel:
    """The Kernel of an AscBackend node, from the node's attributes."""
    attrs = node.op_desc.attrs
    data = {
        "name": node.name,
        "fuse_type": str(attrs["_ascendir_fuse_type"]),
        "members": list(attrs["_datadump_original_op_names"]),
        "member_types": list(attrs["_datadump_original_op_types"]),
        "cache_key": str(attrs["_ascendir_cache_key"]),
    }
    return Kernel(data, graph, target)


def load(path: str | os.PathLike[str], target: str = "ascend910b") -> CompiledModel:
    """Load a saved compiled model: its AscBackend nodes' HintGraphs and ImplGraphs (the
    ImplGraphs re-scheduled deterministically when a file lacks them: the same ones as when
    it was compiled)."""
    graph = load_model_file(path)
    nodes = [node for node in graph.nodes if node.type == "AscBackend"]

    def position(item: tuple[int, Node]) -> tuple[int, int]:
        # The kernel order air.compile gave (``_ascendir_kernel_index``), then node order
        # for files written before the index was recorded.
        at, node = item
        attrs = node.op_desc.attrs
        index = attrs["_ascendir_kernel_index"] if "_ascendir_kernel_index" in attrs else None
        return (int(index) if isinstance(index, int) else len(nodes) + at, at)

    kernels = [_kernel_of_node(graph, node, target)
               for _, node in sorted(enumerate(nodes), key=position)]
    report = CompileReport({"nodes_before": len(graph.nodes), "nodes_after": len(graph.nodes),
                            "bytes_saved": 0, "kernels": []}, "", "")
    return CompiledModel(graph, kernels, report, CompileOptions(target=target), [])


from .batch import (  # noqa: E402
    CompileResult,
    available_cpus,
    compile_iter,
    compile_many,
    default_cache_dir,
)
from .verify import VERIFY_FLAGS, VerifyReport, random_inputs, verify  # noqa: E402
