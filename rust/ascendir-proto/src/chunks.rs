//! Work split into chunks that the calling thread runs itself, helped by the rayon pool.
//!
//! `par_chunks` hands every chunk to the pool and blocks the caller until the pool is done. For
//! the small graphs GE dumps are made of (a few hundred ops, well under a millisecond of work)
//! that costs more than it saves: the caller sleeps and a worker must be woken for all of the
//! work, even when no second core is free, and each chunk starts with cold caches. Here the
//! caller takes chunks in order from a shared counter, one thread state (cache) for all the
//! chunks it runs, while helper jobs in the pool take chunks from the same counter as soon as a
//! worker is free. Without a free core the caller simply does all the work.

use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

use crate::error::{ProtoError, ProtoResult};

/// Items per chunk for `n` items: about eight chunks per thread, at least `min` and at most
/// 4096 items each.
pub(crate) fn chunk_len(n: usize, min: usize) -> usize {
    (n / (rayon::current_num_threads().max(1) * 8)).clamp(min, 4096)
}

/// `work` over consecutive ranges of `0..n` of `chunk` items, the results in range order. Each
/// participating thread makes its state with `state` once (only if it gets a chunk). After an
/// error no new chunk starts; the error of the first failing chunk is returned (every chunk
/// before it has run, as chunks are taken in order).
pub(crate) fn run_chunks<S, T: Send>(
    n: usize,
    chunk: usize,
    state: impl Fn() -> S + Sync,
    work: impl Fn(&mut S, Range<usize>) -> ProtoResult<T> + Sync,
) -> ProtoResult<Vec<T>> {
    let chunk = chunk.max(1);
    let n_chunks = n.div_ceil(chunk);
    if n_chunks <= 1 {
        let mut s = state();
        return (0..n_chunks).map(|_| work(&mut s, 0..n)).collect();
    }
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let slots: Vec<Mutex<Option<ProtoResult<T>>>> =
        (0..n_chunks).map(|_| Mutex::new(None)).collect();
    let take_chunks = || {
        let mut s: Option<S> = None;
        while !failed.load(Ordering::Relaxed) {
            let c = next.fetch_add(1, Ordering::Relaxed);
            if c >= n_chunks {
                break;
            }
            let s = s.get_or_insert_with(&state);
            let r = work(s, c * chunk..n.min((c + 1) * chunk));
            if r.is_err() {
                failed.store(true, Ordering::Relaxed);
            }
            // A poisoned lock (a panic in another chunk) still holds a usable slot.
            *slots[c].lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
        }
    };
    // The caller is one of the threads: one helper fewer than the pool has threads.
    let helpers = rayon::current_num_threads()
        .saturating_sub(1)
        .min(n_chunks - 1);
    rayon::in_place_scope(|scope| {
        for _ in 0..helpers {
            scope.spawn(|_| take_chunks());
        }
        take_chunks();
    });
    let mut out = Vec::with_capacity(n_chunks);
    for slot in slots {
        match slot.into_inner().unwrap_or_else(|e| e.into_inner()) {
            Some(r) => out.push(r?),
            // Chunks are taken in order and a skipped chunk follows a failed one, whose error
            // has been returned above; an empty slot here would be a bug in this function.
            None => return Err(ProtoError::invalid("", "a chunk of the work was not run")),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
