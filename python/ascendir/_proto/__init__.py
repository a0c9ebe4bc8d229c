"""Generated protobuf classes of ``ge_ir.proto`` (imported lazily; needs ``protobuf>=4.25``)."""
