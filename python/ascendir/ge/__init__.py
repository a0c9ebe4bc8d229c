"""``ascendir.ge``: GE's own Python API (``ge.graph``, ``ge.es``, ``ge.passes``, ``ge.utils``)
offline, over ascendir graphs.

Code written for GE's ``ge`` package runs here with ``ge.`` changed to ``ascendir.ge.``:
``ascendir.ge.graph`` has GE's ``Graph``, ``Node``, ``TensorDesc``, ``Tensor`` and enums, and
``ascendir.ge.es`` GE's eager-style ``GraphBuilder``, ``TensorHolder`` and op functions
(``ascendir.ge.es.math``, ``.nn``, ``.all``, ``.custom``) generated from ascendir's op
registry; ``ascendir.ge.passes`` GE's fusion-pass API, run by ``run_passes``. Every
object wraps an ascendir object without copying it (``Graph.air``, ``Node.air``,
``TensorHolder.air``); no CANN library is loaded. See ``docs/GE_PYTHON.md``.

``import ascendir`` does not import this package; the submodules load on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__all__ = ["error", "es", "graph", "passes", "utils"]

if TYPE_CHECKING:
    from . import error as error
    from . import es as es
    from . import graph as graph
    from . import passes as passes
    from . import utils as utils


def __getattr__(name: str) -> Any:
    if name in __all__:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
