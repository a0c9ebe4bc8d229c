"""Batch compilation (docs/BATCH.md): ``air.compile_many`` and ``air.compile_iter``.

Without an executor the whole batch runs in Rust on a pool of ``jobs`` threads with the GIL
released: models in parallel, inside a model its kernels in parallel, at most ``jobs`` models
loaded at once. The caller's thread only waits for results (a wait that lets Ctrl-C through)
and draws the progress. With ``executor=`` (any ``concurrent.futures.Executor``, or a Dask
``distributed.Client``) each model is one task that takes bytes plus the options as JSON and
returns the result archive as bytes, so nothing Rust-backed crosses a process boundary.
"""
# Optional dependencies (tqdm and distributed): absent or untyped where the package is checked
# mypy: disable-error-code="import-not-found,import-untyped"

from __future__ import annotations

import hashlib
import math
import os
import sys
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Executor, Future
from concurrent.futures import as_completed as _futures_as_completed
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from .. import _core
from .._core import Graph
from ..errors import CompileError, InvalidArgumentError
from ..formats import read_model_bytes

__all__ = [
    "CompileResult",
    "available_cpus",
    "compile_iter",
    "compile_many",
    "default_cache_dir",
]

_Model = Graph | str | os.PathLike[str] | bytes
_ProgressFn = Callable[[int, int, int], None]
_POLL_SECONDS = 0.1
if TYPE_CHECKING:
    _CacheMode = Literal["readwrite", "read", "off"]


@dataclass
class CompileResult:
    """The outcome of one model of a batch: ``ok`` and ``value`` (a
    :class:`~ascendir.compiler.CompiledModel`), or ``error`` (a
    :class:`~ascendir.errors.CompileError` with ``stage``, ``node`` and ``reason``)."""

    index: int
    source: str
    value: Any = None
    error: CompileError | None = None
    cached: bool = False
    task_key: str | None = None

    @property
    def ok(self) -> bool:
        """The model compiled."""
        return self.error is None

    def __repr__(self) -> str:
        what = "ok" if self.ok else f"failed at {self.error.stage if self.error else '?'}"
        return f"<CompileResult #{self.index} {self.source!r}: {what}>"


def available_cpus() -> int:
    """The CPUs this process may use: its affinity mask, capped by the cgroup CPU quota."""
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        n = os.cpu_count() or 1
    quota = _cgroup_quota()
    if quota is not None:
        n = min(n, max(1, math.ceil(quota)))
    return max(1, n)


def _cgroup_quota() -> float | None:
    """CPUs allowed by the cgroup (v2 ``cpu.max``, v1 ``cpu.cfs_quota_us``), or None."""
    try:
        with open("/sys/fs/cgroup/cpu.max", encoding="ascii") as f:
            quota, period = f.read().split()[:2]
        if quota != "max":
            return int(quota) / int(period)
        return None
    except (OSError, ValueError):
        pass
    try:
        with open("/sys/fs/cgroup/cpu/cpu.cfs_quota_us", encoding="ascii") as f:
            q = int(f.read())
        with open("/sys/fs/cgroup/cpu/cpu.cfs_period_us", encoding="ascii") as f:
            p = int(f.read())
        return q / p if q > 0 and p > 0 else None
    except (OSError, ValueError):
        return None


def default_cache_dir() -> str:
    """``ASCENDIR_CACHE_DIR``, else the user cache directory of the platform."""
    env = os.environ.get("ASCENDIR_CACHE_DIR")
    if env:
        return env
    if sys.platform == "darwin":
        return os.path.expanduser("~/Library/Caches/ascendir")
    if os.name == "nt":
        base = os.environ.get("LOCALAPPDATA") or os.path.expanduser("~")
        return os.path.join(base, "ascendir", "Cache")
    base = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    return os.path.join(base, "ascendir")


def _describe(model: Any) -> str:
    if isinstance(model, Graph):
        return f"<graph {model.name!r}>"
    if isinstance(model, (bytes, bytearray, memoryview)):
        return "<bytes>"
    return os.fspath(model)


def _error_of(stage: str, node: str | None, reason: str, offset: int | None,
              message: str) -> CompileError:
    return CompileError(message, stage=stage, node=node, reason=reason, offset=offset)


def _cache_args(cache: _CacheMode, cache_dir: str | os.PathLike[str] | None
                ) -> tuple[str | None, str]:
    if cache not in ("readwrite", "read", "off"):
        raise CompileError(f"unknown cache mode {cache!r} (readwrite, read or off)",
                           stage="load", node=None, reason="bad cache mode")
    if cache == "off":
        return None, "off"
    return os.fspath(cache_dir) if cache_dir is not None else default_cache_dir(), cache


class _Bar:
    """Progress: a callable ``progress(done, total, failed)``, or ``True`` for a bar on stderr
    (tqdm)."""

    def __init__(self, progress: bool | _ProgressFn | None, total: int) -> None:
        self.fn: _ProgressFn | None = None
        self.bar: Any = None
        self.last = (-1, -1)
        if callable(progress):
            self.fn = progress
        elif progress:
            from tqdm import tqdm

            self.bar = tqdm(total=total, unit="model", file=sys.stderr, dynamic_ncols=True)

    def update(self, done: int, total: int, failed: int) -> None:
        if (done, failed) == self.last:
            return
        if self.fn is not None:
            self.fn(done, total, failed)
        if self.bar is not None:
            self.bar.update(done - max(self.last[0], 0))
            self.bar.set_postfix(failed=failed, refresh=False)
        self.last = (done, failed)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _from_archive(data: bytes | list[tuple[str, bytes]], options: Any) -> Any:
    from . import CompiledModel

    return CompiledModel._from_archive(data, options)


def _from_parts(parts: tuple[Any, ...], options: Any) -> Any:
    from . import _from_parts as build

    return build(parts, options)


def _iter_local(models: list[Any], opts_json: str, options: Any, jobs: int, dump: bool,
                cache: tuple[str | None, str], bar: _Bar) -> Iterator[tuple[int, CompileResult]]:
    items = [m if isinstance(m, (Graph, bytes)) else
             (bytes(m) if isinstance(m, (bytearray, memoryview)) else os.fspath(m))
             for m in models]
    batch = _core.compiler.Batch(items, opts_json, jobs, dump, cache[0], cache[1])
    handed = 0
    try:
        while handed < len(items):
            got = batch.next(_POLL_SECONDS)
            done, failed, total, _, _ = batch.progress()
            bar.update(done, total, failed)
            if got is None:
                continue
            handed += 1
            i = got[0]
            r = CompileResult(index=i, source=_describe(models[i]))
            if isinstance(got[1], CompileError):
                r.error = got[1]
            else:
                r.value = (_from_archive(got[1], options) if isinstance(got[1], list)
                           else _from_parts(got[1], options))
                r.cached = bool(got[2])
            yield i, r
    finally:
        batch.cancel()
        batch.join()
        done, failed, total, _, _ = batch.progress()
        bar.update(done, total, failed)


def _compile_task(payload: bytes | str, options_json: str, version: str, dump: bool,
                  cache_mode: str, cache_dir: str | None = None) -> tuple[Any, ...]:
    """An executor task: compile one model (bytes, or a path the worker can read) and return
    ``("ok", archive, cached)`` or ``("error", stage, node, reason, offset, message)``; plain
    data only, so any executor can carry it. Checks that the worker runs the client's version."""
    from .. import __version__

    if version != __version__:
        msg = (f"version mismatch: the worker runs ascendir {__version__}, the client "
               f"{version}; install the same version everywhere")
        return ("error", "load", None, msg, None, msg)
    directory = cache_dir if cache_dir is not None else default_cache_dir()
    try:
        archive, cached = _core.compiler.compile_archive(
            payload, options_json, available_cpus(), dump,
            directory if cache_mode != "off" else None, cache_mode)
    except CompileError as e:
        return ("error", e.stage, e.node, e.reason, getattr(e, "offset", None), str(e))
    return ("ok", bytes(archive), bool(cached))


def _is_dask_client(executor: Any) -> bool:
    return (type(executor).__module__.split(".")[0] == "distributed"
            and hasattr(executor, "scatter") and hasattr(executor, "gather"))


def _payload(model: Any, paths_are_shared: bool) -> bytes | str:
    if isinstance(model, Graph):
        return bytes(model.to_bytes())
    if isinstance(model, (bytes, bytearray, memoryview)):
        return bytes(model)
    path = os.fspath(model)
    if paths_are_shared:
        return os.path.abspath(path)
    try:
        return read_model_bytes(path)
    except InvalidArgumentError as e:
        raise CompileError(f"{path}: {e}", stage="load", node=None,
                           reason="not a regular file") from None
    except OSError as e:
        raise CompileError(f"{path}: {e.strerror}", stage="load", node=None,
                           reason=str(e.strerror)) from None


def _resources(resources: Mapping[str, float] | None,
               executor: Any) -> dict[str, float] | None:
    """The checked ``resources=`` of a batch: names to positive amounts, Dask only."""
    if resources is None:
        return None
    if executor is None or not _is_dask_client(executor):
        raise CompileError("resources= needs executor= to be a Dask distributed.Client "
                           "(worker resources are a Dask feature)", stage="load", node=None,
                           reason="bad resources")
    out: dict[str, float] = {}
    for name, amount in dict(resources).items():
        try:
            value = float(amount)
        except (TypeError, ValueError):
            value = float("nan")
        if not isinstance(name, str) or not name or not value > 0 or value == float("inf"):
            raise CompileError(f"resources: {name!r}={amount!r} is not a resource name with a "
                               "positive finite amount", stage="load", node=None,
                               reason="bad resources")
        out[name] = value
    return out


def _iter_executor(models: list[Any], opts_json: str, options: Any, executor: Any, dump: bool,
                   cache_mode: str, cache_dir: str | None, paths_are_shared: bool, retries: int,
                   resources: dict[str, float] | None,
                   bar: _Bar) -> Iterator[tuple[int, CompileResult]]:
    from .. import __version__

    dask = _is_dask_client(executor)
    futures: dict[Any, tuple[int, str]] = {}
    failed = 0
    early: list[tuple[int, CompileResult]] = []
    for i, m in enumerate(models):
        try:
            payload = _payload(m, paths_are_shared)
        except CompileError as e:
            early.append((i, CompileResult(index=i, source=_describe(m), error=e)))
            continue
        digest = hashlib.sha256(payload if isinstance(payload, bytes) else payload.encode())
        digest.update(opts_json.encode())
        digest.update(__version__.encode())
        digest.update(b"\x01" if dump else b"\x00")
        key = f"ascendir-compile-{digest.hexdigest()}"
        args = (opts_json, __version__, dump, cache_mode, cache_dir)
        if dask:
            data: Any = payload
            if isinstance(payload, bytes) and len(payload) > (1 << 20):
                data = executor.scatter(payload, hash=True)
            fut = executor.submit(_compile_task, data, *args, key=key, pure=True,
                                  retries=retries, resources=resources)
        else:
            fut = executor.submit(_compile_task, payload, *args)
        futures[fut] = (i, key)
    total = len(models)
    done = 0
    for i, r in early:
        done += 1
        failed += 1
        bar.update(done, total, failed)
        yield i, r
    if dask:
        from distributed import as_completed as dask_as_completed

        finished: Iterable[Any] = dask_as_completed(list(futures))
    else:
        finished = _futures_as_completed(list(futures))
    try:
        for fut in finished:
            i, key = futures[fut]
            r = CompileResult(index=i, source=_describe(models[i]), task_key=key)
            try:
                out = fut.result()
            except Exception as e:  # noqa: BLE001 - a task that raised, whatever the executor
                out = ("error", "load", None, f"the task failed: {e!r}", None,
                       f"the compile task of model {i} failed: {e!r}")
            if out[0] == "ok":
                r.value = _from_archive(out[1], options)
                r.cached = bool(out[2])
            else:
                r.error = _error_of(*out[1:])
                failed += 1
            done += 1
            bar.update(done, total, failed)
            yield i, r
    finally:
        # Cancel only what has not finished (an early close or Ctrl-C). A finished Dask future is
        # released by dropping it: a cancel travels on its own connection and may reach the
        # scheduler after a later submission of the same content key, cancelling that one.
        for fut in futures:
            if (isinstance(fut, Future) or dask) and not fut.done():
                fut.cancel()


def compile_iter(
    models: Iterable[_Model],
    *,
    target: str | None = None,
    input_shapes: Mapping[str, Sequence[int]] | None = None,
    options: Any = None,
    jobs: int | None = None,
    executor: Executor | Any | None = None,
    on_error: Literal["collect", "raise"] = "collect",
    progress: bool | _ProgressFn | None = None,
    cache: _CacheMode = "off",
    cache_dir: str | os.PathLike[str] | None = None,
    dump_stages: bool = False,
    paths_are_shared: bool = False,
    retries: int = 0,
    resources: Mapping[str, float] | None = None,
) -> Generator[tuple[int, CompileResult], None, None]:
    """Compile many models, yielding ``(index, result)`` as each finishes (see
    :func:`compile_many` for the arguments). Closing the iterator early, or Ctrl-C, cancels
    the models not yet started and waits for the compile threads to stop."""
    from . import _options

    models = list(models)
    if on_error not in ("collect", "raise"):
        raise CompileError(f"on_error must be 'collect' or 'raise', not {on_error!r}",
                           stage="load", node=None, reason="bad on_error")
    opts = _options(target, input_shapes, options)
    opts_json = opts.to_json()
    cdir, cmode = _cache_args(cache, cache_dir)
    res = _resources(resources, executor)
    bar = _Bar(progress, len(models))
    try:
        if executor is None:
            n = available_cpus() if jobs is None else int(jobs)
            if n < 1:
                raise CompileError(f"jobs must be at least 1, not {n}", stage="load",
                                   node=None, reason="bad jobs")
            it = _iter_local(models, opts_json, opts, n, dump_stages, (cdir, cmode), bar)
        else:
            # The workers' own cache directory unless one is named (a path of this machine
            # may not exist on theirs).
            wdir = os.fspath(cache_dir) if cache_dir is not None else None
            it = _iter_executor(models, opts_json, opts, executor, dump_stages, cmode, wdir,
                                paths_are_shared, retries, res, bar)
        try:
            for i, r in it:
                if on_error == "raise" and r.error is not None:
                    raise r.error
                yield i, r
        finally:
            close = getattr(it, "close", None)
            if close is not None:
                close()
    finally:
        bar.close()


def compile_many(
    models: Iterable[_Model],
    *,
    target: str | None = None,
    input_shapes: Mapping[str, Sequence[int]] | None = None,
    options: Any = None,
    jobs: int | None = None,
    executor: Executor | Any | None = None,
    on_error: Literal["collect", "raise"] = "collect",
    progress: bool | _ProgressFn | None = None,
    cache: _CacheMode = "off",
    cache_dir: str | os.PathLike[str] | None = None,
    dump_stages: bool = False,
    paths_are_shared: bool = False,
    retries: int = 0,
    resources: Mapping[str, float] | None = None,
) -> list[CompileResult]:
    """Compile many models (Graphs, paths or bytes); the results in input order.

    Without ``executor`` the batch runs on ``jobs`` threads (default: the CPUs this process may
    use) with the GIL released. ``executor`` is any ``concurrent.futures.Executor`` or a Dask
    ``distributed.Client`` (tasks keyed by content, so resubmitting a model is free); with
    ``paths_are_shared`` paths are sent as paths instead of bytes. A failing model fails alone:
    its result carries the :class:`~ascendir.errors.CompileError` (``on_error="raise"`` raises
    the first instead). ``progress`` is ``True`` for a bar on stderr, or a callable
    ``progress(done, total, failed)`` called from this thread. ``cache`` is ``"off"`` unless
    asked for: ``"readwrite"`` or ``"read"`` uses the compile cache in ``cache_dir`` (default
    :func:`default_cache_dir`) for whole models and single kernels, keyed by every byte a model
    reads, the options, the registry generation and the build id. ``resources`` (Dask only)
    are the worker resources each task needs, e.g. ``{"ascendir": 1}`` to run only on workers
    started with ``--resources ascendir=1``; ``retries`` is Dask's per-task retry count.
    """
    models = list(models)
    out: list[CompileResult | None] = [None] * len(models)
    for i, r in compile_iter(models, target=target, input_shapes=input_shapes, options=options,
                             jobs=jobs, executor=executor, on_error=on_error, progress=progress,
                             cache=cache, cache_dir=cache_dir, dump_stages=dump_stages,
                             paths_are_shared=paths_are_shared, retries=retries,
                             resources=resources):
        out[i] = r
    return [r if r is not None else CompileResult(index=i, source=_describe(models[i]),
                                                  error=CompileError("no result", stage="load"))
            for i, r in enumerate(out)]
