"""Plain Python numbers and nested lists as op inputs (GE's ``TensorLike``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..error import GeTypeError, GeValueError

if TYPE_CHECKING:
    from .graph_builder import GraphBuilder
    from .tensor_holder import TensorHolder

__all__ = ["Number", "TensorLike", "convert_to_tensor_holder", "resolve_builder"]

Number = int | float
TensorLike = int | float | list[Any]


def convert_to_tensor_holder(value: Any, owner_builder: GraphBuilder) -> TensorHolder | None:
    """``value`` as a :class:`TensorHolder` of ``owner_builder``: a holder stays itself,
    ``None`` stays ``None``, an ``int`` becomes an int64 scalar constant, a ``float`` a float
    scalar constant, a nested list a constant of its shape (float when any leaf is a float,
    int64 otherwise). GE's ``TypeError`` for anything else."""
    from .tensor_holder import TensorHolder

    if value is None or isinstance(value, TensorHolder):
        return value
    if isinstance(value, bool):
        raise GeTypeError(
            "Value must be TensorHolder or int|float or nested lists of int|float or None")
    if isinstance(value, int):
        return owner_builder.create_scalar_int64(value)
    if isinstance(value, float):
        return owner_builder.create_scalar_float(value)
    if isinstance(value, list):
        flat, shape = _flatten_and_infer_shape(value)
        if any(isinstance(v, float) for v in flat):
            return owner_builder.create_const_float(flat, shape=shape)
        return owner_builder.create_const_int64([int(v) for v in flat], shape=shape)
    raise GeTypeError(
        "Value must be TensorHolder or int|float or nested lists of int|float or None")


def literal_to_tensor_holder(value: Any, owner_builder: GraphBuilder,
                             like: Any = None) -> TensorHolder:
    """A number or nested list as a constant of ``owner_builder``. With ``like`` (an
    :class:`ascendir.DataType`, or ``None``) the constant takes that type when the literal
    fits it (an int literal any numeric type, a float literal a float type); otherwise the
    rule of :func:`convert_to_tensor_holder` applies."""
    if isinstance(value, bool) or not isinstance(value, (int, float, list)):
        raise GeTypeError(
            "Value must be TensorHolder or int|float or nested lists of int|float or None")
    if isinstance(value, list):
        flat, shape = _flatten_and_infer_shape(value)
    else:
        flat, shape = [value], []
    is_float = any(isinstance(v, float) for v in flat)
    dtype = "float32" if is_float else "int64"
    if like is not None:
        try:
            np_type = like.to_numpy()
        except Exception:  # noqa: BLE001 - a type numpy lacks: keep the default
            np_type = None
        if np_type is not None and np_type.kind in ("f", "i", "u"):
            if not is_float or np_type.kind == "f":
                dtype = np_type.name
    return owner_builder._const(flat, shape, dtype, dtype)


def resolve_builder(*values: Any) -> GraphBuilder:
    """The builder of the first :class:`GraphBuilder` or :class:`TensorHolder` among
    ``values`` (GE's ``ValueError`` when there is none)."""
    if not values:
        raise GeValueError("At least one argument is required to resolve GraphBuilder")
    from .graph_builder import GraphBuilder
    from .tensor_holder import TensorHolder

    for value in values:
        if isinstance(value, GraphBuilder):
            return value
        if isinstance(value, TensorHolder):
            return value._builder
    raise GeValueError(
        "Please ensure at least one input tensor or an explicit owner_builder is provided "
        "when supported")


def _flatten_and_infer_shape(value: list[Any]) -> tuple[list[Any], list[int]]:
    """A nested list's leaves in row-major order and its shape (``[]`` gives shape ``[0]``);
    GE's ``TypeError`` for a non-number leaf, ``ValueError`` for ragged lists."""
    if not value:
        return [], [0]

    def walk(cur: Any) -> tuple[list[Any], list[int]]:
        if isinstance(cur, (int, float)) and not isinstance(cur, bool):
            return [cur], []
        if not isinstance(cur, list) or not cur:
            raise GeTypeError("Value must be int|float or nested lists of int|float")
        flat, inner = walk(cur[0])
        acc = list(flat)
        for elem in cur[1:]:
            sub, sub_shape = walk(elem)
            if sub_shape != inner:
                raise GeValueError(
                    "Irregular nested list: all sub-lists must have the same shape")
            acc.extend(sub)
        return acc, [len(cur)] + inner

    return walk(value)
