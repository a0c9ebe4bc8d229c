//! Whether running part of a small job on other threads pays off on this machine, learnt from
//! recent jobs.
//!
//! With a spare core, a helper thread takes about a fifth off the decode of a GE dump. On a
//! virtual machine whose second CPU is shared with other tenants (or is a hyperthread of the
//! first), a helper runs at half speed or not at all, and the concurrent work (the helper's
//! chunks, their memory freed by another thread, a graph freed on a pool thread) slows the
//! calling thread more than the help gains: on the 2-vCPU machines we test on, dump 00046
//! decodes in 0.24 ms helped while the second CPU is free, but in 0.40 ms helped against
//! 0.30 ms alone while it is not, and the machine goes from one state to the other over minutes.
//!
//! Two signals, each a running average, must both say that helping pays: the helpers' speed
//! relative to the caller's while both work (at least [`FAST_ENOUGH`]), and the time a job takes
//! per input byte with helpers against without (at most [`WORTH_IT`]). Each alone is fooled in
//! one of the machine's states: in one the helpers keep pace with a caller they slow down (the
//! job's time shows it), in another the jobs' op-decoding phase gets faster with helpers while
//! the work around it (the helpers' late chunks and frees) makes the whole slower (the helpers'
//! speed shows it). Small jobs run the way the verdict says, and every sixteenth runs the other
//! way, so that the averages follow the machine; until they are all measured, jobs run the way
//! not yet measured. Jobs of at least [`ALWAYS_HELP_FROM`] items always get helpers: their
//! parallel part is most of their time.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Jobs with at least this many items are always helped.
pub(crate) const ALWAYS_HELP_FROM: usize = 16_384;

/// Helping can pay while helpers run at least this fraction (in thousandths) of the caller's
/// speed.
pub(crate) const FAST_ENOUGH: u64 = 700;

/// Helping pays when helped jobs take at most this fraction (in thousandths) of the time alone:
/// helpers also take a CPU from whatever else the machine runs.
pub(crate) const WORTH_IT: u64 = 950;

/// Running average of the helpers' speed relative to the caller's, in thousandths.
static SPEED: Average = Average::new();
/// Running averages of the time small jobs took per input byte (picoseconds), alone and helped.
static ALONE: Average = Average::new();
static HELPED: Average = Average::new();
/// Small jobs started, to pick the ones that run the other way.
static JOBS: AtomicU64 = AtomicU64::new(0);

/// One small job in this many runs the other way than the verdict says.
const PROBE_EVERY: u64 = 16;

/// A running average (a quarter weight to each new sample); unset until the first.
struct Average(AtomicU64);

impl Average {
    const UNSET: u64 = u64::MAX;

    const fn new() -> Self {
        Average(AtomicU64::new(Self::UNSET))
    }

    fn get(&self) -> Option<u64> {
        Some(self.0.load(Ordering::Relaxed)).filter(|&v| v != Self::UNSET)
    }

    fn add(&self, sample: u64) {
        let sample = sample.min(Self::UNSET - 1);
        let new = match self.get() {
            None => sample,
            Some(old) => old - old / 4 + sample / 4,
        };
        // Races between threads only lose an update of the average.
        self.0.store(new, Ordering::Relaxed);
    }
}

/// Whether a small job about to start should get helpers.
pub(crate) fn help_small_job() -> bool {
    let probe = JOBS.fetch_add(1, Ordering::Relaxed) % PROBE_EVERY == PROBE_EVERY - 1;
    match parallel_helps() {
        Some(helps) => helps != probe,
        // Helped jobs report both their time and their helpers' speed: one check covers both.
        None => HELPED.get().is_none(),
    }
}

/// A helped job's helpers ran at `speed` thousandths of its caller's speed (0: they got no
/// work done in time).
pub(crate) fn record_speed(speed: u64) {
    SPEED.add(speed.min(4_000));
}

/// A small job that could have been helped took `time` for `bytes` of input, `helped` or not.
pub(crate) fn record_time(helped: bool, time: Duration, bytes: usize) {
    let ps_per_byte = time.as_nanos().saturating_mul(1_000) / bytes.max(1) as u128;
    let average = if helped { &HELPED } else { &ALONE };
    average.add(u64::try_from(ps_per_byte).unwrap_or(u64::MAX));
}

/// Whether helper threads have lately made small decodes faster on this machine (`None` until
/// decodes have been measured both ways). Other concurrent work of a caller (the encoder's
/// helpers, freeing a graph on a pool thread) follows this verdict.
pub fn parallel_helps() -> Option<bool> {
    let (speed, alone, helped) = (SPEED.get()?, ALONE.get()?, HELPED.get()?);
    let faster = u128::from(helped) * 1_000 <= u128::from(alone) * u128::from(WORTH_IT);
    Some(speed >= FAST_ENOUGH && faster)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Report helpers at `speed` and jobs taking `alone` and `helped` (picoseconds per byte)
    /// until the verdict is `want` (other tests in this process decode concurrently and report
    /// too); `false` if it never is.
    fn settle(speed: u64, alone: u64, helped: u64, want: bool) -> bool {
        (0..100).any(|_| {
            for _ in 0..16 {
                record_speed(speed);
                record_time(false, Duration::from_nanos(alone), 1_000);
                record_time(true, Duration::from_nanos(helped), 1_000);
            }
            parallel_helps() == Some(want)
        })
    }

    #[test]
    fn the_verdict_needs_fast_helpers_and_faster_jobs() {
        assert!(settle(1_000, 1_000, 700, true));
        // Helpers that keep pace but do not make the job faster (or barely): no.
        assert!(settle(1_000, 1_000, 1_000, false));
        assert!(settle(1_000, 1_000, 980, false));
        // Slow helpers, whatever the job times say: no.
        assert!(settle(400, 1_000, 700, false));
        // Some small jobs still get helpers, to notice a change.
        assert!((0..PROBE_EVERY).any(|_| help_small_job()));
        assert!(settle(1_000, 1_000, 700, true));
        // And some run alone.
        assert!((0..PROBE_EVERY).any(|_| !help_small_job()));
    }
}
