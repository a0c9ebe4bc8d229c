//! How much memory the process may still take, for the checks that let a large decode or
//! import fail with an error before it starts instead of aborting the process halfway (an
//! allocation failure in Rust aborts).

/// Bytes of address space left under the process's address-space limit (`RLIMIT_AS`, as set
/// by `ulimit -v` or `resource.setrlimit`): the limit minus the current virtual size
/// (`/proc/self/statm`). `None` when no limit is set or either cannot be read (then only the
/// allocation probe of [`crate::error::reserve_probe`] applies).
pub fn address_space_left() -> Option<usize> {
    let limit = address_space_limit()?;
    let used = virtual_size()?;
    Some(limit.saturating_sub(used))
}

/// Address space kept free beyond a decode's estimate when an address-space limit is set: the
/// allocator's arenas, thread caches and the growth of its mappings.
pub const RESERVE_SLACK: usize = 64 << 20;

/// Check that `needed` bytes can be allocated now (an allocation that is given back at once),
/// and, when the process has an address-space limit (`RLIMIT_AS`), that `needed + address`
/// bytes (plus [`RESERVE_SLACK`]) of address space are left under it. `address` is what the
/// work needs beyond `needed` that an allocation now cannot show (what it builds as it goes).
/// `Err(bytes)`: how much was asked for when either check fails.
pub fn reserve(needed: usize, address: usize) -> Result<(), usize> {
    if let Some(left) = address_space_left() {
        let want = needed.saturating_add(address).saturating_add(RESERVE_SLACK);
        if want > left {
            return Err(want);
        }
    }
    let mut probe: Vec<u8> = Vec::new();
    probe.try_reserve_exact(needed).map_err(|_| needed)
}

#[cfg(unix)]
fn address_space_limit() -> Option<usize> {
    let lim = rustix::process::getrlimit(rustix::process::Resource::As);
    lim.current.and_then(|v| usize::try_from(v).ok())
}

#[cfg(not(unix))]
fn address_space_limit() -> Option<usize> {
    None
}

/// The process's virtual size in bytes (Linux: the first field of `/proc/self/statm`, in
/// pages).
fn virtual_size() -> Option<usize> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: usize = statm.split_whitespace().next()?.parse().ok()?;
    pages.checked_mul(page_size())
}

#[cfg(unix)]
fn page_size() -> usize {
    rustix::param::page_size()
}

#[cfg(not(unix))]
fn page_size() -> usize {
    4096
}

#[cfg(test)]
mod tests {
    #[test]
    fn without_a_limit_nothing_is_reported() {
        // The test runner sets no address-space limit.
        if super::address_space_limit().is_none() {
            assert_eq!(super::address_space_left(), None);
        }
        #[cfg(target_os = "linux")]
        assert!(super::virtual_size().is_some_and(|v| v > 0));
    }
}
