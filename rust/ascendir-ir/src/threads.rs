//! The package's threads: how many every parallel path may use, the one pool of helper threads
//! they share, and freeing large values off the caller's thread.
//!
//! Rules every parallel path follows:
//!
//! * **One knob.** [`num_threads`] is the number of threads a call may run on, the calling
//!   thread included: [`set_num_threads`], else the environment variable
//!   [`NUM_THREADS_ENV`] (`ASCENDIR_NUM_THREADS`), else the machine's available parallelism.
//!   With one thread every call runs on its caller's thread only.
//! * **Decided by size.** Whether a job is split, and into how many parts, depends on its size
//!   alone ([`threads_for`]): the same input gets the same schedule on every call. Nothing is
//!   timed.
//! * **Callers wait.** [`run_parts`] and [`par_map`] run part of the work on the calling thread
//!   and return once every helper is done; no helper outlives the call. The only detached work
//!   is [`free_in_background`], which owns what it frees.
//!
//! The helpers are `num_threads() - 1` threads of one rayon pool, started on first use and
//! replaced when the knob changes. Code running on a thread of another rayon pool (the batch
//! compiler's `jobs` threads) stays on that pool.

use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use crate::error::{IrError, IrResult};

/// The environment variable giving the default number of threads (a positive integer; any
/// other value is ignored).
pub const NUM_THREADS_ENV: &str = "ASCENDIR_NUM_THREADS";

/// The number of threads set by [`set_num_threads`] (0: not set).
static CONFIGURED: AtomicUsize = AtomicUsize::new(0);

/// The helper pool and the number of helpers it was built with.
static POOL: Mutex<Option<(usize, Arc<rayon::ThreadPool>)>> = Mutex::new(None);

/// The number of threads when none is set: [`NUM_THREADS_ENV`] if it holds a positive integer,
/// else the machine's available parallelism (1 when unknown).
pub fn default_num_threads() -> usize {
    std::env::var(NUM_THREADS_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&n| n > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// The number of threads a call may run on, the calling thread included (at least 1).
pub fn num_threads() -> usize {
    match CONFIGURED.load(Ordering::Relaxed) {
        0 => {
            let n = default_num_threads();
            // The first reader fixes the default: later changes of the environment variable do
            // not change it (as with other libraries' thread knobs).
            match CONFIGURED.compare_exchange(0, n, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => n,
                Err(set) => set,
            }
        }
        n => n,
    }
}

/// Set the number of threads every parallel path may use, the calling thread included. `1`
/// makes every call single-threaded. Calls already running keep the helpers they started with.
pub fn set_num_threads(n: usize) -> IrResult<()> {
    if n == 0 {
        return Err(IrError::InvalidArgument(
            "set_num_threads: the number of threads must be at least 1, got 0".into(),
        ));
    }
    CONFIGURED.store(n, Ordering::Relaxed);
    Ok(())
}

/// The shared pool with `num_threads() - 1` helper threads; `None` with one thread or when the
/// threads cannot be started (the work then runs on the caller).
fn helper_pool() -> Option<Arc<rayon::ThreadPool>> {
    let helpers = num_threads().saturating_sub(1);
    if helpers == 0 {
        return None;
    }
    let mut slot = POOL.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some((n, pool)) = slot.as_ref() {
        if *n == helpers {
            return Some(Arc::clone(pool));
        }
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(helpers)
        .thread_name(|i| format!("ascendir-worker-{i}"))
        .build()
        .ok()
        .map(Arc::new)?;
    *slot = Some((helpers, Arc::clone(&pool)));
    Some(pool)
}

/// How many threads a job of `items` items gets when each thread should have at least
/// `min_per_thread` of them: between 1 and [`num_threads`].
pub fn threads_for(items: usize, min_per_thread: usize) -> usize {
    (items / min_per_thread.max(1)).clamp(1, num_threads())
}

/// Part `p` of `0..n` split into `parts` contiguous ranges whose lengths differ by at most one.
fn part_range(n: usize, parts: usize, p: usize) -> Range<usize> {
    let (base, extra) = (n / parts, n % parts);
    let start = p * base + p.min(extra);
    let len = base + usize::from(p < extra);
    start..start + len
}

/// Run `work` on `parts` contiguous ranges of `0..n` (lengths differing by at most one): the
/// first on the calling thread, the others on helper threads, and return the results in range
/// order once all are done. `parts` is clamped to `1..=n` (callers size it with
/// [`threads_for`]). With one thread, or when called on a thread of a rayon pool (a helper's
/// nested call, the batch compiler's threads), every part runs on the calling thread, in order.
/// A panic in a part is raised on the caller after the others finish.
pub fn run_parts<T: Send>(
    n: usize,
    parts: usize,
    work: impl Fn(Range<usize>) -> T + Sync,
) -> Vec<T> {
    let parts = parts.clamp(1, n.max(1));
    let pool = if parts > 1 && rayon::current_thread_index().is_none() {
        helper_pool()
    } else {
        None
    };
    let Some(pool) = pool else {
        trace::note();
        if parts == 1 {
            return vec![work(0..n)];
        }
        return (0..parts).map(|p| work(part_range(n, parts, p))).collect();
    };
    let mut slots: Vec<Option<T>> = (0..parts).map(|_| None).collect();
    let work = &work;
    if let Some((first, rest)) = slots.split_first_mut() {
        pool.in_place_scope(|scope| {
            for (i, slot) in rest.iter_mut().enumerate() {
                scope.spawn(move |_| {
                    trace::note();
                    *slot = Some(work(part_range(n, parts, i + 1)));
                });
            }
            trace::note();
            *first = Some(work(part_range(n, parts, 0)));
        });
    }
    // The scope returns only once every spawned part has stored its result (a panicking part
    // is re-raised above), so every slot is filled.
    slots.into_iter().flatten().collect()
}

/// `f` over `items`, the results in item order, on the calling thread and the helper threads,
/// which take the next item as they become free (for items of very different cost). On a
/// thread of another rayon pool the items go to that pool; with one thread they run on the
/// caller, in order. Returns once every item is done.
pub fn par_map<I: Send, T: Send>(items: Vec<I>, f: impl Fn(I) -> T + Sync) -> Vec<T> {
    if rayon::current_thread_index().is_some() {
        use rayon::prelude::*;
        let f = &f;
        return items.into_par_iter().map(f).collect();
    }
    let pool = if items.len() > 1 { helper_pool() } else { None };
    let Some(pool) = pool else {
        trace::note();
        return items.into_iter().map(f).collect();
    };
    let n = items.len();
    let inputs: Vec<Mutex<Option<I>>> = items.into_iter().map(|i| Mutex::new(Some(i))).collect();
    let outputs: Vec<Mutex<Option<T>>> = (0..n).map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    let take = || loop {
        let i = next.fetch_add(1, Ordering::Relaxed);
        if i >= n {
            break;
        }
        let input = inputs[i]
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(input) = input {
            trace::note();
            let out = f(input);
            *outputs[i].lock().unwrap_or_else(PoisonError::into_inner) = Some(out);
        }
    };
    let helpers = pool.current_num_threads().min(n - 1);
    pool.in_place_scope(|scope| {
        for _ in 0..helpers {
            scope.spawn(|_| take());
        }
        take();
    });
    // Every index below `n` was taken by exactly one thread, which stored its result before
    // the scope ended.
    outputs
        .into_iter()
        .filter_map(|m| m.into_inner().unwrap_or_else(PoisonError::into_inner))
        .collect()
}

/// Values with at least this many items (nodes of a graph, nodes of a decoded model) are freed
/// by [`free_in_background`] on a helper thread. Freeing takes some 2–4% of the time decoding
/// took (0.04 ms for a GE dump of 700 ops, 0.6 ms for 16,384 ops, 60 ms for a million): below
/// this size handing it to another thread gains less than the concurrent frees cost the
/// caller on a machine whose cores are shared.
pub const FREE_IN_BACKGROUND_FROM: usize = 16_384;

/// Values handed to a helper thread to be freed and not freed yet.
static PENDING_FREES: AtomicUsize = AtomicUsize::new(0);

/// Drop `value`, which holds `items` items (the nodes of a graph, say): on a helper thread when
/// it is large ([`FREE_IN_BACKGROUND_FROM`]) and helpers are allowed ([`num_threads`] > 1), so
/// that the caller returns at once; else here. Freeing touches every node, attribute and desc
/// (about a fifth of the time building them took). `value` must not need the calling thread
/// (no thread-bound handles).
pub fn free_in_background<T: Send + 'static>(value: T, items: usize) {
    let pool = if items >= FREE_IN_BACKGROUND_FROM {
        helper_pool()
    } else {
        None
    };
    let Some(pool) = pool else {
        drop(value);
        return;
    };
    PENDING_FREES.fetch_add(1, Ordering::SeqCst);
    pool.spawn(move || {
        trace::note();
        drop(value);
        PENDING_FREES.fetch_sub(1, Ordering::SeqCst);
    });
}

/// How many values handed to [`free_in_background`] are not freed yet.
pub fn pending_frees() -> usize {
    PENDING_FREES.load(Ordering::SeqCst)
}

/// Which threads ran parallel work, for tests that check the thread knob is honoured: every
/// part of [`run_parts`] and [`par_map`] and every background free notes its thread while a
/// trace is on. A thread is named by a token unique in the process.
#[doc(hidden)]
pub mod trace {
    use super::*;

    static ON: AtomicBool = AtomicBool::new(false);
    static SEEN: Mutex<Vec<u64>> = Mutex::new(Vec::new());
    static NEXT_TOKEN: AtomicU64 = AtomicU64::new(1);

    thread_local! {
        static TOKEN: u64 = NEXT_TOKEN.fetch_add(1, Ordering::Relaxed);
    }

    /// The calling thread's token.
    pub fn token() -> u64 {
        TOKEN.with(|t| *t)
    }

    /// Start recording (forgetting what was recorded before).
    pub fn start() {
        SEEN.lock().unwrap_or_else(PoisonError::into_inner).clear();
        ON.store(true, Ordering::SeqCst);
    }

    /// Stop recording; the tokens of the threads that ran parallel work since [`start`], sorted.
    pub fn stop() -> Vec<u64> {
        ON.store(false, Ordering::SeqCst);
        let mut seen = std::mem::take(&mut *SEEN.lock().unwrap_or_else(PoisonError::into_inner));
        seen.sort_unstable();
        seen.dedup();
        seen
    }

    /// Record the calling thread if a trace is on.
    pub fn note() {
        if ON.load(Ordering::Relaxed) {
            let t = token();
            let mut seen = SEEN.lock().unwrap_or_else(PoisonError::into_inner);
            if !seen.contains(&t) {
                seen.push(t);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_cover_the_range_in_order() {
        for n in [0usize, 1, 2, 7, 100, 1001] {
            for parts in 1..6 {
                let got: Vec<usize> = run_parts(n, parts, |r| r.collect::<Vec<_>>())
                    .into_iter()
                    .flatten()
                    .collect();
                assert_eq!(got, (0..n).collect::<Vec<_>>(), "n={n} parts={parts}");
            }
        }
    }

    #[test]
    fn part_lengths_differ_by_at_most_one() {
        for n in [5usize, 16, 17, 999] {
            for parts in 1..8 {
                let lens: Vec<usize> = (0..parts).map(|p| part_range(n, parts, p).len()).collect();
                assert_eq!(lens.iter().sum::<usize>(), n);
                let (lo, hi) = (lens.iter().min(), lens.iter().max());
                assert!(hi.zip(lo).is_some_and(|(h, l)| h - l <= 1), "{lens:?}");
            }
        }
    }

    #[test]
    fn par_map_keeps_item_order() {
        let got = par_map((0..500).collect(), |i: i32| i * 2);
        assert_eq!(got, (0..500).map(|i| i * 2).collect::<Vec<_>>());
    }

    #[test]
    fn threads_for_is_bounded_by_the_knob() {
        let n = num_threads();
        assert_eq!(threads_for(0, 100), 1);
        assert_eq!(threads_for(99, 100), 1);
        assert_eq!(threads_for(1 << 40, 100), n);
        assert!(set_num_threads(0).is_err());
    }
}
