"""The context handed to Python ``infer`` and ``verify`` functions."""

from __future__ import annotations

from typing import Any

__all__ = ["InferContext"]


class InferContext:
    """What a Python inference or verification function sees of one op.

    ``inputs`` holds a :class:`ascendir.TensorDesc` per input slot (``None`` for an unset
    optional input); ``values`` the constant :class:`ascendir.Tensor` feeding each slot when
    its producer is a ``Const`` (else ``None``); ``attrs`` the op's attributes. The descs are
    copies: changing them does not change the graph.
    """

    def __init__(
        self,
        *,
        op_type: str,
        name: str,
        inputs: list[Any],
        input_names: list[str],
        output_names: list[str],
        attrs: dict[str, Any],
        values: list[Any],
    ) -> None:
        self.op_type = op_type
        self.name = name
        self.inputs = inputs
        self.input_names = input_names
        self.output_names = output_names
        self.attrs = attrs
        self.values = values

    @property
    def num_outputs(self) -> int:
        """Number of output slots."""
        return len(self.output_names)

    def input(self, key: int | str) -> Any:
        """The desc of input ``key`` (index or port name); ``None`` when unset."""
        return self.inputs[self._index(key)]

    def value(self, key: int | str) -> Any:
        """The constant feeding input ``key`` as a numpy array, or ``None``."""
        t = self.values[self._index(key)]
        return None if t is None else t.numpy()

    def attr(self, name: str, default: Any = None) -> Any:
        """Attribute ``name``, or ``default``."""
        return self.attrs.get(name, default)

    def _index(self, key: int | str) -> int:
        if isinstance(key, int):
            return key
        try:
            return self.input_names.index(key)
        except ValueError:
            raise KeyError(f"op '{self.name}' ({self.op_type}) has no input '{key}'") from None

    def __repr__(self) -> str:
        return f"<InferContext {self.op_type} '{self.name}' {len(self.inputs)} inputs>"
