//! Batch compilation: many models on one rayon pool of `jobs` threads — models in
//! parallel, and inside a model its kernels in parallel (work stealing balances one large model
//! against many small ones). At most `jobs` models are in flight: inputs given as paths are
//! read when a worker takes them, and each compiled model is handed to the caller as soon as
//! it is done (as the compiled model, or as its result archive when it must cross a process
//! boundary), so memory is bounded by the models in flight, not by the batch. Results are
//! reported with their input index; a model's result does not depend on `jobs` or on the
//! other models.

use std::borrow::Cow;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

use ascendir_ir::infer::CustomInfer;
use ascendir_ir::Graph;

use crate::archive::{into_archive, to_archive};
use crate::cache::{model_key, DirCache};
use crate::error::{CompileError, CompileResult, ErrorKind, Stage};
use crate::load::{load_bytes, load_bytes_reporting, read_source, Source};
use crate::options::CompileOptions;
use crate::pipeline::{compile_with, CompiledModel, Control};

/// One model of a batch.
#[derive(Debug)]
pub enum Input {
    /// A graph (the batch owns this copy).
    Graph(Box<Graph>),
    /// A file or model bytes, read when a worker takes it.
    Source(Source),
}

/// A compiled model of a batch, and whether it came whole from the cache.
#[derive(Debug)]
pub struct Done {
    /// The model: compiled here, or its result archive.
    pub output: Output,
    /// Read from the model cache (not compiled).
    pub cached: bool,
}

/// How a batch hands out a compiled model.
#[derive(Debug)]
pub enum Output {
    /// The result archive ([`crate::archive`]): always for cache hits, and for every model
    /// when [`BatchSpec::archives`] is set.
    Archive(Vec<u8>),
    /// The compiled model itself (an in-process caller: nothing is encoded).
    Model(Box<CompiledModel>),
}

impl Output {
    /// The result archive (encoding a compiled model).
    pub fn into_archive(self) -> CompileResult<Vec<u8>> {
        match self {
            Output::Archive(a) => Ok(a),
            Output::Model(cm) => into_archive(*cm),
        }
    }
}

/// Counters a caller polls while a batch runs, and the cancellation flag.
#[derive(Debug, Default)]
pub struct Progress {
    /// Models finished (compiled or failed).
    pub done: AtomicUsize,
    /// Models that failed.
    pub failed: AtomicUsize,
    /// Models being loaded or compiled now.
    pub in_flight: AtomicUsize,
    /// The most models in flight at once.
    pub peak_in_flight: AtomicUsize,
    /// Set to stop: models not started fail as cancelled, running ones stop at their next
    /// stage or kernel.
    pub cancel: AtomicBool,
}

/// What a batch runs with.
#[derive(Debug)]
pub struct BatchSpec<'a> {
    /// The compile options of every model.
    pub opts: &'a CompileOptions,
    /// Threads (and models in flight); 0 is taken as 1.
    pub jobs: usize,
    /// Keep the stage dumps in the archives.
    pub dump: bool,
    /// The compile cache.
    pub cache: Option<&'a DirCache>,
    /// Hand out every model as its result archive (for a caller that sends it on), instead
    /// of as the compiled model.
    pub archives: bool,
}

struct InFlight<'a>(&'a Progress);

impl<'a> InFlight<'a> {
    fn enter(p: &'a Progress) -> InFlight<'a> {
        let now = p.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
        p.peak_in_flight.fetch_max(now, Ordering::SeqCst);
        InFlight(p)
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Whether model bytes may name external data files: an ONNX tensor's external data has a
/// `location` entry, so bytes without that word read nothing else.
fn may_read_external(data: &[u8]) -> bool {
    memchr::memmem::find(data, b"location").is_some()
}

fn compile_one(
    input: Input,
    spec: &BatchSpec<'_>,
    progress: &Progress,
    infer: &mut dyn CustomInfer,
) -> CompileResult<Done> {
    let encode = |g: &Graph| {
        ascendir_proto::encode_graph(g)
            .map_err(|e| CompileError::new(Stage::Load, format!("cannot encode the graph: {e}")))
    };
    // A cached result for `key`, when the cache holds a readable one.
    let cached = |key: &Option<String>| -> Option<Done> {
        let hit = spec.cache?.get_model(key.as_ref()?)?;
        crate::archive::sections(&hit).is_ok().then_some(Done {
            output: Output::Archive(hit),
            cached: true,
        })
    };
    // A key whose external files cannot be read again is no key: compile without the cache.
    let key_of = |model: &[u8], external: &[std::path::PathBuf]| {
        model_key(model, external, spec.opts, spec.dump).ok()
    };
    let (graph, key) = match input {
        Input::Graph(g) => {
            let key = match spec.cache {
                Some(_) => key_of(&encode(&g)?, &[]),
                None => None,
            };
            if let Some(done) = cached(&key) {
                return Ok(done);
            }
            (g, key)
        }
        Input::Source(src) => {
            let data = read_source(&src)?;
            if spec.cache.is_some() && may_read_external(&data) {
                // A model that may read external data files is loaded first: the key covers
                // the files it read.
                let (g, files) =
                    load_bytes_reporting(data.clone(), &src.describe(), src.base_dir())?;
                let key = key_of(&data, &files);
                if let Some(done) = cached(&key) {
                    return Ok(done);
                }
                (Box::new(g), key)
            } else {
                // The key is the file's bytes: a hit skips decoding it.
                let key = spec.cache.and_then(|_| key_of(&data, &[]));
                if let Some(done) = cached(&key) {
                    return Ok(done);
                }
                let g = load_bytes(data, &src.describe(), src.base_dir())?;
                (Box::new(g), key)
            }
        }
    };
    let ctl = Control {
        cancel: Some(&progress.cancel),
        cache: spec.cache.map(|c| c as &dyn crate::pipeline::KernelCache),
    };
    let cm = compile_with(Cow::Owned(*graph), spec.opts, infer, spec.dump, &ctl)?;
    let output = match (spec.cache, &key) {
        (Some(c), Some(k)) if spec.archives => {
            let archive = into_archive(cm)?;
            c.put_model(k, &archive);
            Output::Archive(archive)
        }
        (Some(c), Some(k)) => {
            c.put_model(k, &to_archive(&cm)?);
            Output::Model(Box::new(cm))
        }
        _ if spec.archives => Output::Archive(into_archive(cm)?),
        _ => Output::Model(Box::new(cm)),
    };
    Ok(Done {
        output,
        cached: false,
    })
}

fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".to_string())
}

/// Compile `inputs` on a pool of `spec.jobs` threads; `on_result(index, result)` is called
/// (from a worker thread) as each model finishes. `make_infer` gives each model its custom
/// inference callbacks. A failing (or panicking) model fails alone; after `progress.cancel`
/// is set, models not yet started fail as "cancelled". Returns when every model has been
/// reported and the pool's threads have been told to stop.
pub fn run_batch<F, I>(
    inputs: Vec<Input>,
    spec: &BatchSpec<'_>,
    progress: &Progress,
    make_infer: &F,
    on_result: &(dyn Fn(usize, CompileResult<Done>) + Sync),
) -> Result<(), String>
where
    F: Fn() -> I + Sync,
    I: CustomInfer,
{
    let n = inputs.len();
    let jobs = spec.jobs.clamp(1, n.max(1));
    let slots: Vec<Mutex<Option<Input>>> =
        inputs.into_iter().map(|i| Mutex::new(Some(i))).collect();
    let next = AtomicUsize::new(0);
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .thread_name(|i| format!("ascendir-compile-{i}"))
        .build()
        .map_err(|e| format!("cannot start {jobs} compile threads: {e}"))?;
    let worker = || loop {
        let i = next.fetch_add(1, Ordering::SeqCst);
        if i >= n {
            break;
        }
        let input = slots[i].lock().ok().and_then(|mut s| s.take());
        let result = match input {
            _ if progress.cancel.load(Ordering::SeqCst) => {
                Err(CompileError::from_kind(Stage::Load, ErrorKind::Cancelled))
            }
            None => Err(CompileError::new(
                Stage::Load,
                "the input was already taken",
            )),
            Some(input) => {
                let _f = InFlight::enter(progress);
                let mut infer = make_infer();
                catch_unwind(AssertUnwindSafe(|| {
                    compile_one(input, spec, progress, &mut infer)
                }))
                .unwrap_or_else(|p| {
                    Err(CompileError::new(
                        Stage::Load,
                        format!("internal error (please report it): {}", panic_text(&*p)),
                    ))
                })
            }
        };
        if result.is_err() {
            progress.failed.fetch_add(1, Ordering::SeqCst);
        }
        on_result(i, result);
        progress.done.fetch_add(1, Ordering::SeqCst);
    };
    pool.scope(|s| {
        for _ in 0..jobs {
            s.spawn(|_| worker());
        }
    });
    Ok(())
}

/// Compile `inputs` and return the results in input order (see [`run_batch`]).
pub fn compile_many<F, I>(
    inputs: Vec<Input>,
    spec: &BatchSpec<'_>,
    make_infer: &F,
) -> Result<Vec<CompileResult<Done>>, String>
where
    F: Fn() -> I + Sync,
    I: CustomInfer,
{
    let n = inputs.len();
    let out: Vec<Mutex<Option<CompileResult<Done>>>> = (0..n).map(|_| Mutex::new(None)).collect();
    let progress = Progress::default();
    run_batch(inputs, spec, &progress, make_infer, &|i, r| {
        if let Ok(mut slot) = out[i].lock() {
            *slot = Some(r);
        }
    })?;
    Ok(out
        .into_iter()
        .map(|m| {
            m.into_inner()
                .ok()
                .flatten()
                .unwrap_or_else(|| Err(CompileError::new(Stage::Load, "no result")))
        })
        .collect())
}
