"""Hardware targets of the tiling solver and the simulator.

``Target.ascend910b()`` (48 vector cores, 196352 bytes of UB, 32-byte blocks, 4 queues),
``Target.ascend910b3()`` (40 cores), ``Target.ascend950()`` (UB 253952 − 256, 14 queues), or
``Target(name, core_num=, ub_size=, block_size=, max_que_num=)`` for custom values.
"""

from __future__ import annotations

from .._core import asc_backend as _be

Target = _be.Target

__all__ = ["Target"]
