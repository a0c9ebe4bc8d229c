"""Every function the Rust extension exposes to Python runs its body behind the panic guard
(``crate::errors::guard`` / ``guard_res``), which turns a Rust panic into
``ascendir.errors.InternalError``: no ``PanicException`` reaches Python from any binding, not
only from the graph accessors and decoders. Checked on the sources, so a new binding without
the guard fails here."""

from __future__ import annotations

import pytest

import ascendir as air
from ascendir import _core
from support.rust_bindings import BINDINGS, binding_files, exposed, is_guarded, mask

pytestmark = pytest.mark.skipif(not BINDINGS.is_dir(), reason="the Rust sources are not here")


def test_the_source_scanner_sees_every_binding():
    fns = [f for p in binding_files() for f in exposed(p)]
    names = {f.name for f in fns}
    # A sample from every area: graph, decoders, engine, compiler, codegen, torch.
    for name in ("add_op", "from_text", "_text_to_bytes", "tile_split", "run_hook", "to_bytes"):
        assert name in names, name
    assert len(fns) > 400


def test_every_exposed_function_is_guarded():
    unguarded = []
    for p in binding_files():
        src = p.read_text()
        for f in exposed(p):
            if not is_guarded(src, f):
                unguarded.append(f"{p.relative_to(BINDINGS)}:{f.line} {f.name}")
    assert not unguarded, "bindings outside the panic guard:\n" + "\n".join(unguarded)


def test_the_masker_blanks_strings_comments_and_chars_but_not_lifetimes():
    src = "fn f<'py>(x: &'py str) -> char { let s = \"}{\"; // }\n '}' /* { */ }"
    m = mask(src)
    assert len(m) == len(src)
    assert m.count("{") == m.count("}") == 1
    assert "'py" in m


def test_a_panic_inside_a_binding_is_an_internal_error():
    with pytest.raises(air.errors.InternalError, match="internal error"):
        _core._test_panic()
