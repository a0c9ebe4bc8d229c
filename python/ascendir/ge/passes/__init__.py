"""``ascendir.ge.passes``: GE's Python pass API (``ge.passes``) offline, on ascendir's graph.

Passes are written as for GE — ``FusionBasePass.run(graph, context)``, ``PatternFusionPass``
with ``@pattern`` methods (or ``patterns()``), ``meet_requirements`` and ``replacement``,
``DecomposePass`` for ``op_types`` — and registered with ``register_fusion_pass`` /
``register_decompose_pass`` at a :class:`PassStage`. :func:`load_pass_plugins` imports the
pass files ``ASCEND_GE_PY_PASS_PATH`` names; :func:`run_passes` runs the registered passes
over a graph (``verify=True`` checks each replacement numerically), and
``air.compile(..., ge_passes=True)`` runs them at the pipeline points of their stages.
Matching goes through ascendir's Rust pattern matcher. See ``docs/GE_PYTHON.md``.
"""

from __future__ import annotations

from .base import (
    DecomposePass,
    FusionBasePass,
    MatchResult,
    PassContext,
    PassStage,
    PatternFusionPass,
    PatternMatcherConfig,
    PatternMatcherConfigBuilder,
)
from .bootstrap import ENV_PY_PASS_PATH, load_pass_plugins
from .fuse_inspector import FuseCheckResult, can_fuse, report_fuse
from .pattern import NodeIo, Pattern, create_pattern, pattern
from .registry import (
    clear_registered_passes,
    get_registered_pass_by_descriptor_key,
    get_registered_pass_dicts,
    get_registered_passes,
    register_decompose_pass,
    register_fusion_pass,
)
from .replacement import create_replacement
from .runner import STAGE_POINTS, PassRun, run_passes
from .subgraph import SubgraphBoundary, SubgraphInput, SubgraphOutput, SubgraphRewriter

__all__ = [
    "ENV_PY_PASS_PATH",
    "STAGE_POINTS",
    "DecomposePass",
    "FuseCheckResult",
    "FusionBasePass",
    "MatchResult",
    "NodeIo",
    "PassContext",
    "PassRun",
    "PassStage",
    "Pattern",
    "PatternFusionPass",
    "PatternMatcherConfig",
    "PatternMatcherConfigBuilder",
    "SubgraphBoundary",
    "SubgraphInput",
    "SubgraphOutput",
    "SubgraphRewriter",
    "can_fuse",
    "clear_registered_passes",
    "create_pattern",
    "create_replacement",
    "get_registered_pass_by_descriptor_key",
    "get_registered_pass_dicts",
    "get_registered_passes",
    "load_pass_plugins",
    "pattern",
    "register_decompose_pass",
    "register_fusion_pass",
    "report_fuse",
    "run_passes",
]
