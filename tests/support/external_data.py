"""An ONNX model whose weight lives in an external data file."""

from __future__ import annotations

from pathlib import Path

import numpy as np


def mul_exp_model(folder: Path, w: np.ndarray, location: str = "model.onnx.data") -> Path:
    """``exp(x * w)`` on ``x[2, 3, 4]``, saved as ``folder/model.onnx`` with ``w`` in the
    external file ``location`` beside it; returns the model's path."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    graph = helper.make_graph(
        [helper.make_node("Mul", ["x", "w"], ["m"]), helper.make_node("Exp", ["m"], ["y"])],
        "ext",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3, 4])],
        [numpy_helper.from_array(w, "w")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    path = folder / "model.onnx"
    onnx.save_model(model, str(path), save_as_external_data=True,
                    all_tensors_to_one_file=True, location=location, size_threshold=0)
    return path
