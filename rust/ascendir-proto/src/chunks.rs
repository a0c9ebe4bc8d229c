//! Work split into chunks that the calling thread runs itself, helped by other threads.
//!
//! `par_chunks` hands every chunk to the rayon pool and blocks the caller until the pool is
//! done. For the small graphs GE dumps are made of (a few hundred ops, well under a millisecond
//! of work) that costs more than it saves: the caller sleeps, a worker must be woken for all of
//! the work, and each chunk starts with cold caches. Worse, on a machine whose cores are shared
//! (virtual CPUs), a helper that took a chunk can be descheduled for longer than the whole job
//! takes, and waiting for it costs more than the help gave.
//!
//! Here the caller takes chunks in order from a shared counter, keeping one thread state (its
//! caches) for all the chunks it runs, while helpers take chunks from the same counter as soon
//! as they are running. When the counter is exhausted the caller does not wait for chunks a
//! helper is still on: it runs them itself, and whichever result comes first is kept (chunks are
//! pure functions of their input, so both results are equal). The caller never waits for a
//! helper in [`ChunkPlan::run`]; a helper that is late finds the plan finished and stops.

use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use crate::error::{ProtoError, ProtoResult};

/// Items per chunk for `n` items: about eight chunks per thread, between `min` and 1024 items.
pub(crate) fn chunk_len(n: usize, min: usize) -> usize {
    (n / (rayon::current_num_threads().max(1) * 8)).clamp(min.max(1), 1024)
}

/// How many helpers to start next to the calling thread for `n` items in chunks of `chunk`.
pub(crate) fn helpers_for(n: usize, chunk: usize) -> usize {
    rayon::current_num_threads()
        .saturating_sub(1)
        .min(n.div_ceil(chunk.max(1)).saturating_sub(1))
}

/// The chunks of one job and their results, shared by the caller and its helpers.
pub(crate) struct ChunkPlan<T> {
    n: usize,
    chunk: usize,
    next: AtomicUsize,
    /// Set when the caller has every result (or an error): helpers stop taking chunks.
    finished: AtomicBool,
    /// The lowest failing chunk so far (`usize::MAX`: none); no chunk after it starts.
    first_failed: AtomicUsize,
    slots: Vec<Mutex<Option<ProtoResult<T>>>>,
    /// Items done and nanoseconds spent on them by the helpers, and by the caller while it
    /// took chunks from the counter: how fast the helpers were (see `pacing`).
    helper_work: Work,
    caller_work: Work,
}

/// Items done and the nanoseconds they took.
#[derive(Default)]
struct Work {
    items: AtomicUsize,
    ns: AtomicU64,
}

impl Work {
    fn add(&self, items: usize, since: Instant) {
        let ns = u64::try_from(since.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.items.fetch_add(items, Ordering::Relaxed);
        self.ns.fetch_add(ns, Ordering::Relaxed);
    }
}

impl<T> ChunkPlan<T> {
    /// A plan for `n` items in chunks of `chunk` items.
    pub(crate) fn new(n: usize, chunk: usize) -> Self {
        let chunk = chunk.max(1);
        let n_chunks = n.div_ceil(chunk);
        ChunkPlan {
            n,
            chunk,
            next: AtomicUsize::new(0),
            finished: AtomicBool::new(false),
            first_failed: AtomicUsize::new(usize::MAX),
            slots: (0..n_chunks).map(|_| Mutex::new(None)).collect(),
            helper_work: Work::default(),
            caller_work: Work::default(),
        }
    }

    /// The helpers' speed (items per second while working) in thousandths of the caller's, once
    /// the caller is done: 0 when they finished no chunk in time.
    pub(crate) fn helper_speed(&self) -> u64 {
        let items = |w: &Work| w.items.load(Ordering::Relaxed) as u128;
        let ns = |w: &Work| w.ns.load(Ordering::Relaxed).max(1) as u128;
        let (h, c) = (&self.helper_work, &self.caller_work);
        if items(c) == 0 {
            return 1_000;
        }
        let speed = items(h) * ns(c) * 1_000 / (ns(h) * items(c));
        u64::try_from(speed).unwrap_or(u64::MAX)
    }

    fn range(&self, c: usize) -> Range<usize> {
        c * self.chunk..self.n.min((c + 1) * self.chunk)
    }

    fn slot(&self, c: usize) -> std::sync::MutexGuard<'_, Option<ProtoResult<T>>> {
        // A poisoned lock (a panic in another thread's chunk) still holds a usable slot.
        self.slots[c].lock().unwrap_or_else(|e| e.into_inner())
    }

    fn is_done(&self, c: usize) -> bool {
        self.slot(c).is_some()
    }

    /// Run chunk `c` and keep its result unless another thread's came first.
    fn run_chunk(&self, c: usize, work: &mut impl FnMut(Range<usize>) -> ProtoResult<T>) {
        let r = work(self.range(c));
        if r.is_err() {
            self.first_failed.fetch_min(c, Ordering::Relaxed);
        }
        let mut slot = self.slot(c);
        if slot.is_none() {
            *slot = Some(r);
        }
    }

    /// Take chunks from the counter until none is left, the plan is finished or a chunk has
    /// failed; each chunk's items and time go to `done`.
    fn take_chunks(&self, work: &mut impl FnMut(Range<usize>) -> ProtoResult<T>, done: &Work) {
        while !self.finished.load(Ordering::Relaxed) {
            let c = self.next.fetch_add(1, Ordering::Relaxed);
            if c >= self.slots.len() || c > self.first_failed.load(Ordering::Relaxed) {
                break;
            }
            let start = Instant::now();
            self.run_chunk(c, work);
            done.add(self.range(c).len(), start);
        }
    }

    /// A helper's part: take chunks while there are any.
    pub(crate) fn help(&self, mut work: impl FnMut(Range<usize>) -> ProtoResult<T>) {
        self.take_chunks(&mut work, &self.helper_work);
    }

    /// The caller's part: take chunks, then run every chunk still without a result (up to the
    /// first failure) itself, and return the results in order, or the error of the first
    /// failing chunk.
    pub(crate) fn run(
        &self,
        mut work: impl FnMut(Range<usize>) -> ProtoResult<T>,
    ) -> ProtoResult<Vec<T>> {
        self.take_chunks(&mut work, &self.caller_work);
        for c in 0..self.slots.len() {
            if c > self.first_failed.load(Ordering::Relaxed) {
                break;
            }
            if !self.is_done(c) {
                self.run_chunk(c, &mut work);
            }
        }
        self.finished.store(true, Ordering::Relaxed);
        let mut out = Vec::with_capacity(self.slots.len());
        for c in 0..self.slots.len() {
            match self.slot(c).take() {
                Some(r) => out.push(r?),
                // Every chunk up to the first failing one has run, so the loop has returned
                // that failure before reaching an empty slot; this would be a bug here.
                None => return Err(ProtoError::invalid("", "a chunk of the work was not run")),
            }
        }
        Ok(out)
    }
}

/// `work` over consecutive ranges of `0..n` of `chunk` items, the results in range order, on
/// the calling thread helped by the rayon pool. Each participating thread makes its state with
/// `state` once (only if it gets a chunk). For borrowed data: the pool's helpers are waited for
/// at the end (see [`ChunkPlan`] for owned data that needs no wait).
pub(crate) fn run_chunks<S, T: Send>(
    n: usize,
    chunk: usize,
    state: impl Fn() -> S + Sync,
    work: impl Fn(&mut S, Range<usize>) -> ProtoResult<T> + Sync,
) -> ProtoResult<Vec<T>> {
    let plan = ChunkPlan::new(n, chunk);
    // Small jobs go without helpers while the decoder finds they do not pay off.
    let alone =
        n < crate::pacing::ALWAYS_HELP_FROM && crate::pacing::parallel_helps() == Some(false);
    let helpers = if alone { 0 } else { helpers_for(n, chunk) };
    let caller = || {
        let mut s: Option<S> = None;
        plan.run(|r| work(s.get_or_insert_with(&state), r))
    };
    if helpers == 0 {
        return caller();
    }
    rayon::in_place_scope(|scope| {
        for _ in 0..helpers {
            scope.spawn(|_| {
                let mut s: Option<S> = None;
                plan.help(|r| work(s.get_or_insert_with(&state), r));
            });
        }
        caller()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn results_come_in_order_and_cover_every_item() {
        for n in [0usize, 1, 5, 64, 1000, 4099] {
            for chunk in [1usize, 3, 64, 5000] {
                let got = run_chunks(n, chunk, || (), |_, r| Ok(r.collect::<Vec<_>>())).unwrap();
                let flat: Vec<usize> = got.into_iter().flatten().collect();
                assert_eq!(flat, (0..n).collect::<Vec<_>>(), "n={n} chunk={chunk}");
            }
        }
    }

    #[test]
    fn the_first_failing_chunk_is_reported() {
        for _ in 0..50 {
            let r = run_chunks(
                1000,
                10,
                || (),
                |_, r| {
                    if r.start >= 300 {
                        Err(ProtoError::invalid(format!("chunk {}", r.start), "bad"))
                    } else {
                        Ok(r.len())
                    }
                },
            );
            let e = r.unwrap_err().to_string();
            assert!(e.contains("chunk 300"), "{e}");
        }
    }

    #[test]
    fn state_is_made_once_per_thread_and_reused() {
        let made = AtomicUsize::new(0);
        let got = run_chunks(
            500,
            5,
            || {
                made.fetch_add(1, Ordering::Relaxed);
                0usize
            },
            |calls, _| {
                *calls += 1;
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(got.len(), 100);
        assert!(made.load(Ordering::Relaxed) <= rayon::current_num_threads().max(1));
    }

    #[test]
    fn the_caller_finishes_without_waiting_for_a_stalled_helper() {
        // A helper that takes a chunk and then stalls (a descheduled thread): the caller runs
        // that chunk itself and returns; the helper's late result is dropped.
        let plan = Arc::new(ChunkPlan::<usize>::new(40, 4));
        let (took, release) = (
            Arc::new(AtomicBool::new(false)),
            Arc::new(AtomicBool::new(false)),
        );
        let helper = {
            let (plan, took, release) = (plan.clone(), took.clone(), release.clone());
            std::thread::spawn(move || {
                plan.help(|r| {
                    took.store(true, Ordering::SeqCst);
                    while !release.load(Ordering::SeqCst) {
                        std::thread::yield_now();
                    }
                    Ok(r.start + 1000)
                })
            })
        };
        while !took.load(Ordering::SeqCst) {
            std::thread::yield_now();
        }
        let got = plan.run(|r| Ok(r.start)).unwrap();
        assert_eq!(got, (0..40).step_by(4).collect::<Vec<_>>());
        release.store(true, Ordering::SeqCst);
        helper.join().unwrap();
    }

    #[test]
    fn chunks_after_a_failure_are_not_started() {
        let plan = ChunkPlan::<usize>::new(100, 10);
        let runs = AtomicUsize::new(0);
        let r = plan.run(|r| {
            runs.fetch_add(1, Ordering::Relaxed);
            if r.start == 20 {
                Err(ProtoError::invalid("chunk 20", "bad"))
            } else {
                Ok(r.start)
            }
        });
        assert!(r.unwrap_err().to_string().contains("chunk 20"));
        assert_eq!(runs.load(Ordering::Relaxed), 3);
    }
}
