"""ascendir: a Rust-core graph IR and AscGraph kernel engine compatible with the GE compiler.

The graph model is GE's AscendIR: a :class:`Graph` of :class:`Node` objects, each with an
:class:`OpDesc` whose named ports carry :class:`TensorDesc` descriptors, linked through
:class:`Anchor` objects. Storage and algorithms run in Rust; this package is the Python face.

``import ascendir`` stays fast: numpy, protobuf and the frontends are imported on first use.
"""

from __future__ import annotations

import importlib
import sys
from typing import TYPE_CHECKING, Any

from . import _core
from ._core import (
    Anchor,
    AttrMap,
    Graph,
    InsertionPoint,
    Node,
    OpDesc,
    Tensor,
    TensorDesc,
    Usage,
    Value,
    calc_tensor_mem_size_of,
    format_c0_value,
    format_parts,
    format_serial_string,
    get_num_threads,
    make_format,
    memory_size_of,
    release_memory,
    set_num_threads,
    size_in_bytes_of,
)
from .errors import (
    AscendIRError,
    CompileError,
    ConcurrentUseError,
    CxxBuildError,
    CycleError,
    DecodeError,
    DuplicateNameError,
    EvaluateError,
    ExternalDataError,
    ForeignHandleError,
    InferenceError,
    InternalError,
    InvalidArgumentError,
    KernelRunError,
    LinkError,
    NotFoundError,
    RegistryError,
    SizeOverflowError,
    StaleHandleError,
    TilingError,
    TorchExportError,
    UnsupportedOpError,
    ValidationError,
)
from .types import AttrKind, DataType, Format, NamedAttrs

# The extension's submodules, importable by their dotted names as their stubs describe them.
for _sub in ("asc", "asc_backend", "codegen", "compiler"):
    sys.modules.setdefault(f"{__name__}._core.{_sub}", getattr(_core, _sub))
del _sub

__version__: str = _core.__version__

# Module-level dtype aliases, as in numpy / torch.
float32 = DataType.FLOAT
float16 = DataType.FLOAT16
bfloat16 = DataType.BF16
float64 = DataType.DOUBLE
int4 = DataType.INT4
int8 = DataType.INT8
int16 = DataType.INT16
int32 = DataType.INT32
int64 = DataType.INT64
uint8 = DataType.UINT8
uint16 = DataType.UINT16
uint32 = DataType.UINT32
uint64 = DataType.UINT64
bool_ = DataType.BOOL
complex64 = DataType.COMPLEX64
complex128 = DataType.COMPLEX128
hifloat8 = DataType.HIFLOAT8
float8_e5m2 = DataType.FLOAT8_E5M2
float8_e4m3fn = DataType.FLOAT8_E4M3FN

# Submodules and names loaded on first use, so that importing the package stays cheap.
_LAZY_MODULES = {
    "asc", "cli", "compiler", "dumps", "evaluator", "formats", "onnx", "ops", "serialization",
    "topo", "infer", "torch",
}
_LAZY_NAMES = {
    "compile": "compiler",
    "compile_many": "compiler",
    "compile_iter": "compiler",
    "CompileResult": "compiler",
    "evaluate": "evaluator",
    "CompileOptions": "compiler",
    "CompileState": "compiler",
    "save": "serialization",
    "load": "serialization",
    "load_model": "serialization",
    "Model": "serialization",
    "TopoMode": "topo",
    "register_op": "ops",
    "OpDef": "ops",
    "Input": "ops",
    "OptionalInput": "ops",
    "DynamicInput": "ops",
    "Output": "ops",
    "DynamicOutput": "ops",
    "Attr": "ops",
    "TypeVar": "ops",
    "Subgraph": "ops",
    "TensorType": "ops",
    "InferContext": "ops",
}


if TYPE_CHECKING:  # what the lazy names are, for type checkers and IDEs (``X as X``: exported)
    from . import asc as asc
    from . import cli as cli
    from . import compiler as compiler
    from . import dumps as dumps
    from . import evaluator as evaluator
    from . import formats as formats
    from . import infer as infer
    from . import onnx as onnx
    from . import ops as ops
    from . import serialization as serialization
    from . import topo as topo
    from . import torch as torch
    from .compiler import CompileOptions as CompileOptions
    from .compiler import CompileResult as CompileResult
    from .compiler import CompileState as CompileState
    from .compiler import compile as compile
    from .compiler import compile_iter as compile_iter
    from .compiler import compile_many as compile_many
    from .evaluator import evaluate as evaluate
    from .ops import Attr as Attr
    from .ops import DynamicInput as DynamicInput
    from .ops import DynamicOutput as DynamicOutput
    from .ops import InferContext as InferContext
    from .ops import Input as Input
    from .ops import OpDef as OpDef
    from .ops import OptionalInput as OptionalInput
    from .ops import Output as Output
    from .ops import Subgraph as Subgraph
    from .ops import TensorType as TensorType
    from .ops import TypeVar as TypeVar
    from .ops import register_op as register_op
    from .serialization import Model as Model
    from .serialization import load as load
    from .serialization import load_model as load_model
    from .serialization import save as save
    from .topo import TopoMode as TopoMode


def __getattr__(name: str) -> Any:
    if name in _LAZY_MODULES:
        return importlib.import_module(f".{name}", __name__)
    module = _LAZY_NAMES.get(name)
    if module is not None:
        return getattr(importlib.import_module(f".{module}", __name__), name)
    raise AttributeError(f"module 'ascendir' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | _LAZY_MODULES | set(_LAZY_NAMES))


__all__ = [
    "Anchor",
    "AscendIRError",
    "AttrKind",
    "AttrMap",
    "CompileError",
    "ConcurrentUseError",
    "CxxBuildError",
    "CycleError",
    "DataType",
    "DecodeError",
    "DuplicateNameError",
    "EvaluateError",
    "ExternalDataError",
    "ForeignHandleError",
    "Format",
    "Graph",
    "InferenceError",
    "InsertionPoint",
    "InternalError",
    "InvalidArgumentError",
    "KernelRunError",
    "LinkError",
    "NamedAttrs",
    "Node",
    "NotFoundError",
    "OpDesc",
    "RegistryError",
    "SizeOverflowError",
    "StaleHandleError",
    "Tensor",
    "TensorDesc",
    "TilingError",
    "TorchExportError",
    "UnsupportedOpError",
    "Usage",
    "Value",
    "ValidationError",
    "calc_tensor_mem_size_of",
    "format_c0_value",
    "format_parts",
    "format_serial_string",
    "get_num_threads",
    "make_format",
    "memory_size_of",
    "release_memory",
    "set_num_threads",
    "size_in_bytes_of",
]
