"""Graphs in Model Explorer (``ai-edge-model-explorer``, Google's graph viewer, which lays out
large graphs hierarchically).

:func:`graphs_json` turns an :class:`ascendir.Graph` or a compiled model into Model Explorer's
graph JSON (no viewer needed: ``ascendir view MODEL --json out.json`` writes it for sharing);
:func:`view` starts Model Explorer's server on it; :mod:`ascendir.explorer` is the
adapter extension for Model Explorer's own command line
(``model-explorer model.om --extensions=ascendir.explorer``). The viewer is an optional
extra: ``pip install 'ascendir[explorer]'``. See docs/VIEWING.md.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..errors import InvalidArgumentError
from ._build import graphs_of, scope_of

if TYPE_CHECKING:
    from .._core import Graph
    from ..compiler import CompiledModel

__all__ = ["graphs_json", "node_data", "report_beside", "save_json", "scope_of", "url_for",
           "view", "view_file"]


def _parts(obj: Graph | CompiledModel,
           report: Mapping[str, Any] | None) -> tuple[Graph, Mapping[str, Any] | None]:
    from .. import _core
    from ..compiler import CompiledModel

    if isinstance(obj, CompiledModel):
        return obj.graph, report if report is not None else obj.report.data
    if isinstance(obj, _core.Graph):
        return obj, report
    raise InvalidArgumentError(
        f"Model Explorer shows an ascendir.Graph or a CompiledModel, not {type(obj).__name__}")


def graphs_json(obj: Graph | CompiledModel, *,
                report: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """``obj`` as Model Explorer's graph JSON (``{"graphs": [...]}``): the root graph, then
    each subgraph. Layers come from the node names' scopes; in a compiled graph each
    ``AscBackend`` kernel is a group holding its HintGraph. ``report`` (a compile report's
    ``data``; a :class:`~ascendir.compiler.CompiledModel` gives its own) adds the kernels'
    figures to their groups and the refusal codes and barrier reasons to the nodes."""
    g, rep = _parts(obj, report)
    return graphs_of(g, report=rep)


def node_data(obj: Graph | CompiledModel, *,
              report: Mapping[str, Any] | None = None) -> dict[str, Any] | None:
    """Model Explorer node data (``ModelNodeData`` JSON) of a compiled graph: the bytes each
    kernel saves, on the nodes of its group; ``None`` without a report."""
    g, rep = _parts(obj, report)
    if rep is None:
        return None
    return _node_data_of(graphs_of(g, report=rep)["graphs"][0], rep)


def _node_data_of(graph: Mapping[str, Any], rep: Mapping[str, Any]) -> dict[str, Any]:
    """:func:`node_data` from the root graph's JSON already built."""
    saved = {k["name"]: int(k["bytes_saved"]) for k in rep.get("kernels", [])}
    results: dict[str, dict[str, int]] = {}
    for n in graph["nodes"]:
        kernel = next((a["value"] for a in n["attrs"] if a["key"] == "kernel"), None)
        if kernel in saved:
            results[n["id"]] = {"value": saved[kernel]}
    return {graph["id"]: {"name": "bytes saved", "results": results,
                          "gradient": [{"stop": 0, "bgColor": "#ffffff"},
                                       {"stop": 1, "bgColor": "#2e7d32"}]}}


def save_json(obj: Graph | CompiledModel, path: str | os.PathLike[str], *,
              report: Mapping[str, Any] | None = None) -> None:
    """Write :func:`graphs_json` of ``obj`` to ``path`` (Model Explorer opens it as is)."""
    with open(path, "w", encoding="utf-8") as f:
        json.dump(graphs_json(obj, report=report), f, separators=(",", ":"))


def _model_explorer() -> Any:
    try:
        import model_explorer  # type: ignore[import-untyped]
    except ImportError as e:
        raise InvalidArgumentError(
            "Model Explorer is not installed: pip install 'ascendir[explorer]'") from e
    return model_explorer


def _config(obj: Graph | CompiledModel, name: str,
            report: Mapping[str, Any] | None) -> Any:
    cfg = _model_explorer().config()
    # A graphs JSON string is what the viewer's server sends as is (the form it keeps for
    # models converted in process).
    _, rep = _parts(obj, report)
    graphs = graphs_json(obj, report=report)
    cfg.graphs_list.append(json.dumps(graphs, separators=(",", ":")))
    cfg.model_sources.append({"url": f"graphs://{name}/{len(cfg.graphs_list) - 1}"})
    if rep is not None:  # the node data of the JSON just built, not built again
        data = _node_data_of(graphs["graphs"][0], rep)
        cfg.add_node_data("bytes saved", json.dumps(data), model_name=name)
    return cfg


def report_beside(path: str | os.PathLike[str], graph: Graph) -> dict[str, Any] | None:
    """The compile report saved beside a compiled model (``report.json`` in its folder, as
    ``ascendir compile`` writes them) when it describes this graph's kernels, else None."""
    kernels = {n.name for n in graph.nodes if n.type == "AscBackend"}
    if not kernels:
        return None
    where = os.path.join(os.path.dirname(os.path.abspath(os.fspath(path))), "report.json")
    try:
        with open(where, encoding="utf-8") as f:
            report = json.load(f)
    except (OSError, ValueError):
        return None
    named = {k.get("name") for k in report.get("kernels", [])} if isinstance(report, dict) \
        else set()
    return report if isinstance(report, dict) and named == kernels else None


def view_file(path: str | os.PathLike[str], *, host: str = "localhost", port: int = 8080,
              open_browser: bool = True) -> None:
    """Serve the model file at ``path`` in Model Explorer through the adapter extension
    (:mod:`ascendir.explorer.main`) until interrupted; a compiled model's ``report.json``
    beside it adds the kernels' figures and the bytes-saved node data. Prints the page's
    address."""
    from .. import load

    me = _model_explorer()
    full = os.path.abspath(os.fspath(path))
    g = load(full)
    cfg = me.config()
    cfg.add_model_from_path(full, adapterId="ascendir")
    report = report_beside(full, g)
    if report is not None:
        data = node_data(g, report=report)
        cfg.add_node_data("bytes saved", json.dumps(data), model_name=os.path.basename(full))
    from model_explorer import server

    print(f"http://{host}:{port}/?data={cfg.to_url_param_value()}", flush=True)
    server.start(host=host, port=port, config=cfg, no_open_in_browser=not open_browser,
                 extensions=["ascendir.explorer"])


def url_for(obj: Graph | CompiledModel, *, host: str = "localhost", port: int = 8080,
            name: str | None = None, report: Mapping[str, Any] | None = None) -> tuple[Any, str]:
    """The Model Explorer config holding ``obj`` and the page address that opens it on a
    server at ``host:port``."""
    g, _ = _parts(obj, report)
    label = name or g.name or "graph"
    cfg = _config(obj, label, report)
    return cfg, f"http://{host}:{port}/?data={cfg.to_url_param_value()}"


def view(obj: Graph | CompiledModel, *, host: str = "localhost", port: int = 8080,
         open_browser: bool = True, name: str | None = None,
         report: Mapping[str, Any] | None = None) -> None:
    """Serve ``obj`` in Model Explorer at ``host:port`` until interrupted (prints the page's
    address; opens it in the browser unless ``open_browser=False``)."""
    cfg, url = url_for(obj, host=host, port=port, name=name, report=report)
    server = _model_explorer().server

    print(url, flush=True)
    server.start(host=host, port=port, config=cfg, no_open_in_browser=not open_browser)
