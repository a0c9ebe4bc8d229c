//! The compile pipeline (stages 0–9 and 12, docs/COMPILER.md): `compile(graph, options)` runs
//! the passes of [`pipeline`] over one [`CompileCtx`].

use std::borrow::Cow;
use std::sync::atomic::{AtomicBool, Ordering};

use ascendir_ir::infer::CustomInfer;
use ascendir_ir::Graph;

pub use crate::cache::KernelCache;
use crate::error::{CompileError, CompileResult, ErrorKind, Stage};
pub use crate::model::{CompiledModel, Kernel};
use crate::options::CompileOptions;
use crate::passes::{
    Build, Fuse, Infer, Lower, Package, PassManager, Simplify, Symbolize, Validate,
};

/// How one compile runs besides its options: a cancellation flag checked between passes and
/// kernels, and the kernel cache.
#[derive(Clone, Copy, Default)]
pub struct Control<'a> {
    /// Set to stop the compile at the next check (a `CompileError` "cancelled").
    pub cancel: Option<&'a AtomicBool>,
    /// Scheduled kernels by content key.
    pub cache: Option<&'a dyn KernelCache>,
}

impl std::fmt::Debug for Control<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Control")
            .field("cancel", &self.cancel)
            .field("cache", &self.cache.is_some())
            .finish()
    }
}

impl Control<'_> {
    /// A [`ErrorKind::Cancelled`] error of `stage` when the compile was cancelled.
    pub fn check(&self, stage: Stage) -> CompileResult<()> {
        match self.cancel {
            Some(c) if c.load(Ordering::Relaxed) => {
                Err(CompileError::from_kind(stage, ErrorKind::Cancelled))
            }
            _ => Ok(()),
        }
    }
}

/// The passes of a compile, in order: stages 1–12 after loading.
pub fn pipeline() -> PassManager {
    PassManager::new(
        "compile",
        vec![
            Box::new(Validate),
            Box::new(Infer),
            Box::new(Symbolize),
            Box::new(Simplify),
            Box::new(Lower),
            Box::new(Fuse),
            Box::new(Build),
            Box::new(Package),
        ],
    )
}

/// Compile `input` (left unchanged) with `opts`; `infer` runs custom inference callbacks.
pub fn compile(
    input: &Graph,
    opts: &CompileOptions,
    infer: &mut dyn CustomInfer,
    dump: bool,
) -> CompileResult<CompiledModel> {
    compile_with(Cow::Borrowed(input), opts, infer, dump, &Control::default())
}

/// [`compile`] of a borrowed (copied, left unchanged) or owned graph, under `ctl`. The
/// kernels of the final clusters are built in parallel (`ascendir_ir::threads::par_map`: the
/// package's helper threads, or the batch compiler's pool when called from it); the result
/// does not depend on the thread count.
pub fn compile_with(
    input: Cow<'_, Graph>,
    opts: &CompileOptions,
    infer: &mut dyn CustomInfer,
    dump: bool,
    ctl: &Control<'_>,
) -> CompileResult<CompiledModel> {
    crate::passes::graph::compile_with_hooks(input, opts, infer, dump, ctl, Vec::new())
}
