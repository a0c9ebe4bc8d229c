"""``ascendir.ge.graph``: GE's ``ge.graph`` (Graph, Node, Tensor, TensorDesc, Shape and the
enumerations) over ascendir's graph objects."""

from __future__ import annotations

from .graph import DumpFormat, Graph
from .node import Node
from .tensor import Tensor
from .tensor_desc import Shape, TensorDesc
from .types import AttrValueType, DataType, Format, Placement

__all__ = [
    "AttrValueType",
    "DataType",
    "DumpFormat",
    "Format",
    "Graph",
    "Node",
    "Placement",
    "Shape",
    "Tensor",
    "TensorDesc",
]
