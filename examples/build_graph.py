"""Build a small graph through the Python API, edit it, and print its text dump."""

import numpy as np

import ascendir as air

g = air.Graph("example")
x = g.add_input("x", air.TensorDesc([1, 3, 32, 32], air.float16, format="NCHW"))
w = g.add_const("w", np.ones((8, 3, 3, 3), np.float16))
conv = g.add_op("Conv2D", [x, w], name="conv", input_names=["x", "filter"], outputs=["y"],
                output_descs=[air.TensorDesc([1, 8, 30, 30], air.float16, format="NCHW")],
                attrs={"strides": [1, 1, 1, 1], "pads": [0, 0, 0, 0]})
relu = g.add_op("Relu", [conv], name="relu", input_names=["x"], outputs=["y"],
                output_descs=[conv.op_desc.output_desc(0).copy()])
g.set_outputs([relu])

# Splice a Cast between the convolution and the ReLU: anchors, not edge objects.
cast = air.OpDesc("cast", "Cast")
cast.add_input("x", conv.op_desc.output_desc(0).copy())
cast.add_output("y", air.TensorDesc([1, 8, 30, 30], air.float32, format="NCHW"))
cast.attrs["dst_type"] = air.float32
conv.out_data_anchor(0).insert(cast)

print(g.dump())
