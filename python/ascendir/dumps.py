"""Graph dump folders as a timeline, graph diffs and cycles.

GE writes the graph at each compile stage when ``DUMP_GE_GRAPH`` is set, into
``$DUMP_GRAPH_PATH/pid_<pid>_deviceid_<dev>/`` (``pid_<pid>/`` in older releases), as
``ge_proto_<NNNNNNNN>_graph_<id>_<Stage>.txt`` (``DUMP_GRAPH_FORMAT`` ``ge_proto``),
``ge_onnx_<NNNNN>_graph_<id>_<Stage>.pbtxt`` (``onnx``) and
``ge_readable_<NNNNNNNN>_graph_<id>_<Stage>.txt`` (``readable``); older releases and the
single-op compiler leave out ``graph_<id>_`` (``ge_proto_00017_<Stage>.txt``) or write
``aclop_graph_<id>_``. ``ascendir compile --dump-stages`` (``air.compile(...,
dump_stages=True)``) writes ``stages/<NN>_<stage>.txt``, the text dump of
:meth:`ascendir.Graph.dump`, for the stages that hold a graph.

:func:`open` indexes every such file under a folder (any depth) as a :class:`DumpFolder` of
:class:`DumpEntry`, ordered by stage number, then name; :func:`diff` compares two graphs (the
algorithm is in Rust: nodes matched by name, then by structure); :func:`cycle_links` names the
links of a cycle. docs/VIEWING.md describes the command line (``ascendir dumps``, ``ascendir
diff``, ``ascendir cycle``) and the JSON schema of a diff.
"""

from __future__ import annotations

import builtins
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from . import _core
from ._core import Graph
from .errors import DecodeError, InvalidArgumentError, NotFoundError

__all__ = [
    "FORMATS",
    "DumpEntry",
    "DumpFolder",
    "GraphDiff",
    "cycle_links",
    "diff",
    "diff_text",
    "load_file",
    "open",
    "parse_name",
]

FORMATS = ("ge_proto", "ge_onnx", "ge_readable", "stage_dump")
"""The dump formats: GE's three ``DUMP_GRAPH_FORMAT`` forms and ``stage_dump``, the text dump
``air.compile(..., dump_stages=True)`` writes."""

_GE_NAME = re.compile(
    r"^ge_(?P<kind>proto|onnx|readable)_(?P<num>\d+)_"
    r"(?:(?:aclop_)?graph_(?P<graph>\d+)_)?(?P<stage>.+)\.(?P<ext>txt|pbtxt)$"
)
_OUR_NAME = re.compile(r"^(?P<num>\d{2})_(?P<stage>[A-Za-z0-9_]+)\.txt$")
_PID_DIR = re.compile(r"^pid_?(?P<pid>\d+)(?:_deviceid_(?P<dev>\d+))?$")


@dataclass(frozen=True)
class DumpEntry:
    """One dump file: its stage ``number`` and ``stage`` name, the ``graph_id`` its name gives
    (None when absent), its ``format`` (one of :data:`FORMATS`), ``path``, and the ``pid``
    (and ``device``) of the ``pid_*`` folder holding it (None outside one)."""

    number: int
    stage: str
    format: str
    path: str
    graph_id: int | None = None
    pid: int | None = None
    device: int | None = None

    def load(self) -> Graph:
        """The graph of the file: ``air.load`` for GE's formats, the text dump reader for a
        stage dump (an approximation: see docs/VIEWING.md). Raises :class:`DecodeError` for
        a file that is not what its name says."""
        if self.format == "stage_dump":
            with builtins.open(self.path, encoding="utf-8", errors="replace") as f:
                text = f.read()
            try:
                return _core._read_dump_text(text)
            except DecodeError as e:
                raise DecodeError(f"'{self.path}': {e}", offset=getattr(e, "offset", None),
                                  path=None) from e
        from .serialization import load

        return load(self.path)

    @cached_property
    def node_count(self) -> int:
        """Nodes of the root graph (a stage dump's header says it; other files are loaded)."""
        if self.format == "stage_dump":
            with builtins.open(self.path, encoding="utf-8", errors="replace") as f:
                head = f.readline()
            m = re.search(r"\((\d+) nodes\)\s*$", head)
            if m is not None:
                return int(m.group(1))
        return len(self.load())

    @property
    def label(self) -> str:
        """``<number> <stage>`` (with ``pid <pid>`` when in a pid folder)."""
        where = f" (pid {self.pid})" if self.pid is not None else ""
        return f"{self.number} {self.stage}{where}"


def parse_name(path: str) -> DumpEntry | None:
    """The entry of a dump file path from its name and its ``pid_*`` folder, or None when the
    name is no dump name. A compile stage name is only taken for a file whose first line is a
    graph dump's (``graph <name> (<n> nodes)``), since the compiler's other stage files
    (``01_validate.txt``, ``07_realize.txt``) hold no graph."""
    base = os.path.basename(path)
    pid = device = None
    parent = os.path.basename(os.path.dirname(os.path.abspath(path)))
    pm = _PID_DIR.match(parent)
    if pm is not None:
        pid = int(pm.group("pid"))
        device = int(pm.group("dev")) if pm.group("dev") is not None else None
    m = _GE_NAME.match(base)
    if m is not None:
        graph = m.group("graph")
        return DumpEntry(int(m.group("num")), m.group("stage"), f"ge_{m.group('kind')}",
                         path, int(graph) if graph is not None else None, pid, device)
    m = _OUR_NAME.match(base)
    if m is None:
        return None
    try:
        with builtins.open(path, encoding="utf-8", errors="replace") as f:
            head = f.readline()
    except OSError:
        return None
    if not (head.startswith("graph ") and head.rstrip().endswith(" nodes)")):
        return None
    return DumpEntry(int(m.group("num")), m.group("stage"), "stage_dump", path, None, pid,
                     device)


class DumpFolder:
    """The dumps under a folder, ordered by stage number then file name: iterate it, index it
    by position (``folder.entries[i]``), look a stage up by number or name (:meth:`get`)."""

    def __init__(self, root: str, entries: list[DumpEntry]) -> None:
        self.root = root
        self.entries = entries

    def __iter__(self) -> Iterator[DumpEntry]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    def __getitem__(self, key: int | str) -> DumpEntry:
        return self.get(key)

    def __repr__(self) -> str:
        return f"<DumpFolder {self.root!r}: {len(self.entries)} dumps>"

    @property
    def pids(self) -> list[int]:
        """The pids of the ``pid_*`` folders holding dumps, sorted."""
        return sorted({e.pid for e in self.entries if e.pid is not None})

    def get(self, key: int | str, *, pid: int | None = None,
            format: str | None = None) -> DumpEntry:
        """The dump of stage ``key`` (its number, or its stage name; a string of digits is a
        number), among those of ``pid`` and ``format`` when given. Raises
        :class:`~ascendir.NotFoundError` when none matches and
        :class:`~ascendir.InvalidArgumentError` when several do (naming them: pass ``pid``
        or ``format``)."""
        if isinstance(key, str) and key.isdigit():
            key = int(key)
        found = [e for e in self.entries
                 if (e.number == key if isinstance(key, int) else e.stage == key)
                 and (pid is None or e.pid == pid) and (format is None or e.format == format)]
        what = f"stage {key}" if isinstance(key, int) else f"stage '{key}'"
        if pid is not None:
            what += f" of pid {pid}"
        if not found:
            raise NotFoundError(f"no dump of {what} under '{self.root}'")
        if len(found) > 1:
            which = ", ".join(os.path.relpath(e.path, self.root) for e in found)
            hint = "pid" if len({e.pid for e in found}) > 1 else "format"
            raise InvalidArgumentError(
                f"{what} is in {len(found)} dumps under '{self.root}' ({which}); "
                f"choose one with {hint}=")
        return found[0]


def open(root: str | os.PathLike[str]) -> DumpFolder:  # noqa: A001 - the module's verb
    """Index the dump files under ``root`` (every depth; see the module documentation for the
    names read). Raises :class:`~ascendir.InvalidArgumentError` when ``root`` is not a
    folder."""
    where = os.fspath(root)
    if not os.path.exists(where):
        raise InvalidArgumentError(f"'{where}' does not exist (a dump folder was expected)")
    if not os.path.isdir(where):
        raise InvalidArgumentError(f"'{where}' is not a folder")
    entries = []
    for dirpath, dirnames, filenames in os.walk(where):
        dirnames.sort()
        for name in sorted(filenames):
            e = parse_name(os.path.join(dirpath, name))
            if e is not None:
                entries.append(e)
    entries.sort(key=lambda e: (e.number, os.path.basename(e.path), e.pid or -1, e.path))
    return DumpFolder(where, entries)


class GraphDiff:
    """What changed between two graphs: :attr:`data` is the JSON document of
    docs/VIEWING.md (schema ``ascendir.diff/1``); the properties read its lists."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data

    @property
    def added(self) -> list[str]:
        """Names of the nodes only the new graph has."""
        return [n["name"] for n in self.data["added"]]

    @property
    def removed(self) -> list[str]:
        """Names of the nodes only the old graph has."""
        return [n["name"] for n in self.data["removed"]]

    @property
    def kept(self) -> list[tuple[str, str]]:
        """``(old name, new name)`` of every node of both graphs."""
        return [(m["old"], m["new"]) for m in self.data["kept"]]

    @property
    def renamed(self) -> list[tuple[str, str]]:
        """``(old name, new name)`` of the nodes matched by structure."""
        return [(m["old"], m["new"]) for m in self.data["kept"] if m["by"] == "structure"]

    @property
    def empty(self) -> bool:
        """Whether nothing changed."""
        s = self.data["summary"]
        return (all(v == 0 for k, v in s.items() if k != "kept")
                and self.data["outputs"] is None)

    def to_json(self) -> str:
        """The document as JSON text (keys sorted, indented)."""
        return json.dumps(self.data, indent=2, sort_keys=True)

    def text(self) -> str:
        """A readable listing, one change a line (what ``ascendir diff`` prints)."""
        return diff_text(self.data)

    def __repr__(self) -> str:
        s = self.data["summary"]
        return (f"<GraphDiff +{s['added']} -{s['removed']} nodes, {s['renamed']} renamed, "
                f"{s['data_edges'] + s['control_edges']} relinks>")


def diff(old: Graph | DumpEntry | str | os.PathLike[str],
         new: Graph | DumpEntry | str | os.PathLike[str]) -> GraphDiff:
    """What changed from ``old`` to ``new`` (graphs, dump entries or model / dump files; the
    root graphs are compared). Nodes are matched by name, then by structure (docs/VIEWING.md).
    """
    a, b = _graph_of(old), _graph_of(new)
    return GraphDiff(json.loads(_core._graph_diff(a, b)))


def _graph_of(x: Graph | DumpEntry | str | os.PathLike[str]) -> Graph:
    if isinstance(x, Graph):
        return x
    if isinstance(x, DumpEntry):
        return x.load()
    return load_file(x)


def load_file(path: str | os.PathLike[str]) -> Graph:
    """The graph of one file: a stage dump by its first line, else ``air.load``."""
    where = os.fspath(path)
    e = parse_name(where)
    if e is not None:
        return e.load()
    if os.path.isfile(where):
        with builtins.open(where, "rb") as f:
            head = f.readline()
        if head.startswith(b"graph ") and head.rstrip().endswith(b" nodes)"):
            return DumpEntry(-1, "", "stage_dump", where).load()
    from .serialization import load

    return load(where)


def cycle_links(graph: Graph) -> list[tuple[str, str, str, str]] | None:
    """The links of one cycle of ``graph`` (``Graph.find_cycle``, in link order), each as
    ``(src node, src port, dst node, dst port)`` with ports ``"<index>"`` or ``"ctrl"``; None
    when the graph is acyclic. Of the links from one node to the next, the first data link
    (by input index) is named, else the control link."""
    cycle = graph.find_cycle()
    if cycle is None:
        return None
    nodes = list(cycle)
    links = []
    for i, src in enumerate(nodes):
        dst = nodes[(i + 1) % len(nodes)]
        link = None
        for a in dst.in_data_anchors:
            p = a.peer
            if p is not None and p.node.name == src.name:
                link = (src.name, str(p.index), dst.name, str(a.index))
                break
        if link is None:
            link = (src.name, "ctrl", dst.name, "ctrl")
        links.append(link)
    return links


def _src(s: str | None) -> str:
    return s if s is not None else "(unlinked)"


def _desc(d: dict[str, Any] | None) -> str:
    if d is None:
        return "(none)"
    shape = ",".join(str(x) for x in d["shape"])
    return f"{d['dtype']}[{shape}] {d['format']}"


def diff_text(data: dict[str, Any]) -> str:
    """The readable listing of a diff document: a summary line, then one change a line, the
    sections in the schema's order (renamed, added, removed, retyped, data and control links,
    attributes, descriptors, graph outputs)."""
    s = data["summary"]
    old, new = data["old"], data["new"]
    lines = [
        f"{old['graph']} ({old['nodes']} nodes) -> {new['graph']} ({new['nodes']} nodes): "
        f"{s['kept']} kept ({s['renamed']} renamed), {s['added']} added, "
        f"{s['removed']} removed, {s['retyped']} retyped, "
        f"{s['data_edges']} data and {s['control_edges']} control links changed, "
        f"{s['attrs']} attributes, {s['descs']} descriptors"
    ]
    for m in data["kept"]:
        if m["by"] == "structure":
            lines.append(f"renamed  {m['old']} -> {m['new']}")
    lines += [f"added    {n['name']} ({n['type']})" for n in data["added"]]
    lines += [f"removed  {n['name']} ({n['type']})" for n in data["removed"]]
    lines += [f"retyped  {r['node']}: {r['old']} -> {r['new']}" for r in data["retyped"]]
    lines += [f"relinked {e['node']}:{e['index']}: {_src(e['old'])} -> {_src(e['new'])}"
              for e in data["data_edges"]]
    lines += [f"control  {e['src']} -> {e['dst']}: {e['change']}"
              for e in data["control_edges"]]
    lines += [f"attr     {a['node']}.{a['key']}: {a['old'] if a['old'] is not None else '(none)'}"
              f" -> {a['new'] if a['new'] is not None else '(none)'}" for a in data["attrs"]]
    lines += [f"desc     {c['node']} {c['side']} {c['index']}: {_desc(c['old'])} -> "
              f"{_desc(c['new'])}" for c in data["descs"]]
    if data["outputs"] is not None:
        o = data["outputs"]
        lines.append(f"outputs  [{', '.join(o['old'])}] -> [{', '.join(o['new'])}]")
    return "\n".join(lines)
