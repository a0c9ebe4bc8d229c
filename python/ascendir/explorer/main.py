"""The Model Explorer adapter extension for every model format ascendir reads:
``model-explorer model.om --extensions=ascendir.explorer`` (GE ``ModelDef`` binary or
text, OM, ONNX, GE's dump formats; Model Explorer imports an extension package's ``main``
module, this one). Importing it needs ``ai-edge-model-explorer``
(``pip install 'ascendir[explorer]'``)."""

from __future__ import annotations

import types
from typing import Any

from model_explorer import (  # type: ignore[import-untyped]
    Adapter,
    AdapterMetadata,
    graph_builder,
)

from ..formats import SUFFIXES

__all__ = ["AscendIRAdapter", "to_graph"]


def _edge(e: dict[str, str]) -> Any:
    return graph_builder.IncomingEdge(sourceNodeId=e["sourceNodeId"],
                                      sourceNodeOutputId=e["sourceNodeOutputId"],
                                      targetNodeInputId=e["targetNodeInputId"])


def _items(items: list[dict[str, Any]]) -> list[Any]:
    return [graph_builder.MetadataItem(
        id=m["id"], attrs=[graph_builder.KeyValue(key=a["key"], value=a["value"])
                           for a in m["attrs"]]) for m in items]


def to_graph(data: dict[str, Any]) -> Any:
    """One graph of :func:`ascendir.explorer.graphs_json` as Model Explorer's
    ``graph_builder.Graph``."""
    nodes = [graph_builder.GraphNode(
        id=n["id"], label=n["label"], namespace=n.get("namespace", ""),
        subgraphIds=list(n.get("subgraphIds", [])),
        attrs=[graph_builder.KeyValue(key=a["key"], value=a["value"]) for a in n["attrs"]],
        incomingEdges=[_edge(e) for e in n["incomingEdges"]],
        outputsMetadata=_items(n.get("outputsMetadata", [])),
        inputsMetadata=_items(n.get("inputsMetadata", []))) for n in data["nodes"]]
    return graph_builder.Graph(id=data["id"], nodes=nodes,
                               groupNodeAttributes=data.get("groupNodeAttributes"))


def _convert(self: Any, model_path: str, settings: dict[str, Any]) -> dict[str, Any]:
    """The graphs of the model at ``model_path``."""
    from .. import load
    from . import graphs_json, report_beside

    g = load(model_path)
    data = graphs_json(g, report=report_beside(model_path, g))
    return {"graphs": [to_graph(x) for x in data["graphs"]]}


def _adapter_class() -> Any:
    # Model Explorer registers an adapter when its class is created (the metaclass of its
    # base class); made by a call so that the untyped base stays out of the typed surface.
    def body(ns: dict[str, Any]) -> None:
        ns["__module__"] = __name__
        ns["__doc__"] = ("Reads a model with ``ascendir.load`` and shows it (compiled graphs "
                         "with their kernels as groups holding the HintGraphs).")
        ns["metadata"] = AdapterMetadata(
            id="ascendir", name="ascendir (GE graphs)",
            description="GE ModelDef, OM, ONNX and GE dump files read by ascendir",
            fileExts=sorted({s.lstrip(".") for s in SUFFIXES}))
        ns["convert"] = _convert

    return types.new_class("AscendIRAdapter", (Adapter,), {}, body)


AscendIRAdapter: Any = _adapter_class()
"""The adapter class (a ``model_explorer.Adapter``), registered with Model Explorer on
import."""
