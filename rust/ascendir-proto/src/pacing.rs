//! Whether running part of a small job on other threads pays off on this machine, learnt from
//! how fast the helpers of recent jobs were.
//!
//! With a spare core, a helper thread takes about a fifth off the decode of a GE dump. On a
//! virtual machine whose second CPU is shared with other tenants (or is a hyperthread of the
//! first), a helper runs at half speed or not at all, and the concurrent work (the helper's
//! chunks, their memory freed by another thread, a graph freed on a pool thread) slows the
//! calling thread more than the help gains: on the 2-vCPU machines we test on, dump 00046
//! decodes in 0.24 ms helped while the second CPU is free, but in 0.40 ms helped against
//! 0.32 ms alone while it is not, and the machine goes from one state to the other over minutes.
//!
//! So each helped job reports its helpers' speed (items per second while they worked) relative
//! to its caller's; a running average of that ratio decides: small jobs get helpers while it is
//! at least [`FAST_ENOUGH`], and otherwise every sixteenth small job still gets them, to notice
//! when the machine is free again (a few such jobs move the average across the threshold; each
//! costs a quarter more than running alone while the machine is not free). Jobs of at least
//! [`ALWAYS_HELP_FROM`] items always get helpers: their parallel part is most of their time.

use std::sync::atomic::{AtomicU64, Ordering};

/// Jobs with at least this many items are always helped.
pub(crate) const ALWAYS_HELP_FROM: usize = 16_384;

/// Helpers pay off while they run at least this fraction (in thousandths) of the caller's
/// speed.
pub(crate) const FAST_ENOUGH: u64 = 700;

/// Running average of the helpers' speed relative to the caller's, in thousandths;
/// `u64::MAX` until a helped job has reported.
static SPEED: AtomicU64 = AtomicU64::new(u64::MAX);
/// Small jobs started, to pick the ones that get helpers anyway.
static JOBS: AtomicU64 = AtomicU64::new(0);

/// One small job in this many gets helpers while they do not pay off.
const PROBE_EVERY: u64 = 16;

/// Whether a small job about to start should get helpers.
pub(crate) fn help_small_job() -> bool {
    let job = JOBS.fetch_add(1, Ordering::Relaxed);
    parallel_helps() != Some(false) || job % PROBE_EVERY == PROBE_EVERY - 1
}

/// A helped job's helpers ran at `speed` thousandths of its caller's speed (0: they got no
/// work done in time).
pub(crate) fn record(speed: u64) {
    let speed = speed.min(4_000);
    let old = SPEED.load(Ordering::Relaxed);
    let new = if old == u64::MAX {
        speed
    } else {
        old - old / 4 + speed / 4
    };
    // Races between threads only lose an update of the average.
    SPEED.store(new, Ordering::Relaxed);
}

/// Whether helper threads have recently been fast enough to make small decodes faster on this
/// machine (`None` until a helped decode has reported). Other concurrent work of a caller (the
/// encoder's helpers, freeing a graph on a pool thread) follows this verdict.
pub fn parallel_helps() -> Option<bool> {
    match SPEED.load(Ordering::Relaxed) {
        u64::MAX => None,
        speed => Some(speed >= FAST_ENOUGH),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Report `speed` until the verdict is `want` (other tests in this process decode
    /// concurrently and report too); `false` if it never is.
    fn settle(speed: u64, want: bool) -> bool {
        (0..100).any(|_| {
            for _ in 0..16 {
                record(speed);
            }
            parallel_helps() == Some(want)
        })
    }

    #[test]
    fn the_verdict_follows_the_reported_speeds() {
        assert!(settle(100, false));
        // Some small jobs still get helpers.
        assert!((0..PROBE_EVERY).any(|_| help_small_job()));
        assert!(settle(1_000, true));
    }
}
