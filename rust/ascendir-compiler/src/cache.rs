//! The compile cache: a content-addressed directory. Kernels are stored by the key of their
//! HintGraph, hint values, target, options and version (their scheduled ImplGraphs); models by
//! the hash of their bytes, the options and the version (their result archive). Files are
//! written to a temporary name and renamed, so concurrent compiles (threads or processes)
//! never see a partial entry; a damaged entry reads as a miss.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use sha2::{Digest, Sha256};

use crate::options::CompileOptions;
use ascendir_asc::AscGraph;

use crate::symbolize::SymTable;

/// A store of scheduled kernels by content key (the compile cache's kernel half): `get`
/// returns what `put` stored for the key, or `None`.
pub trait KernelCache: Sync {
    /// The bytes stored for `key`.
    fn get(&self, key: &str) -> Option<Vec<u8>>;
    /// Store `data` for `key` (best effort: a cache that cannot write drops it).
    fn put(&self, key: &str, data: &[u8]);
}

/// The cache key of a kernel: its HintGraph bytes, the target, the options (as JSON), the
/// version.
pub fn cache_key(hint_bytes: &[u8], target: &str, opts_json: &str) -> String {
    let mut h = Sha256::new();
    h.update(hint_bytes);
    h.update(target.as_bytes());
    h.update(opts_json.as_bytes());
    h.update(env!("CARGO_PKG_VERSION").as_bytes());
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// The key a kernel's ImplGraphs are cached under: its HintGraph (as realized, before it is
/// named), the hint values of its size symbols, the target, the options and the version.
pub(crate) fn kernel_key(
    hint: &AscGraph,
    syms: &SymTable,
    target: &str,
    opts_json: &str,
) -> String {
    let mut h = Sha256::new();
    h.update(b"kernel\0");
    h.update(hint.to_bytes());
    let mut free: Vec<String> = hint
        .size_vars()
        .iter()
        .flat_map(|s| s.free_symbols())
        .collect();
    free.sort();
    free.dedup();
    for f in free {
        let v = syms.hints.get(&f).copied().unwrap_or(-1);
        h.update(format!("{f}={v};").as_bytes());
    }
    h.update(target.as_bytes());
    h.update(opts_json.as_bytes());
    h.update(env!("CARGO_PKG_VERSION").as_bytes());
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// ImplGraphs as one byte string: per graph its length (8 bytes, little-endian), its bytes.
pub(crate) fn encode_impls(impls: &[AscGraph]) -> Vec<u8> {
    let mut out = Vec::new();
    for i in impls {
        let b = i.to_bytes();
        out.extend_from_slice(&(b.len() as u64).to_le_bytes());
        out.extend_from_slice(&b);
    }
    out
}

/// The inverse of [`encode_impls`]; `None` for bytes it did not write.
pub(crate) fn decode_impls(mut d: &[u8]) -> Option<Vec<AscGraph>> {
    let mut out = Vec::new();
    while !d.is_empty() {
        let n = usize::try_from(u64::from_le_bytes(d.get(..8)?.try_into().ok()?)).ok()?;
        let body = d.get(8..8usize.checked_add(n)?)?;
        out.push(AscGraph::from_bytes(body).ok()?);
        d = &d[8 + n..];
    }
    (!out.is_empty()).then_some(out)
}

/// What the cache may do (GE's `op_compiler_cache_mode`: enable / force-read / disable).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheMode {
    /// Read hits and store misses.
    ReadWrite,
    /// Read hits, store nothing.
    Read,
    /// No cache.
    Off,
}

impl CacheMode {
    /// `"readwrite"`, `"read"` or `"off"`.
    pub fn parse(s: &str) -> Option<CacheMode> {
        match s {
            "readwrite" => Some(CacheMode::ReadWrite),
            "read" => Some(CacheMode::Read),
            "off" => Some(CacheMode::Off),
            _ => None,
        }
    }
}

/// A cache directory.
#[derive(Debug)]
pub struct DirCache {
    root: PathBuf,
    mode: CacheMode,
    hits: AtomicUsize,
    misses: AtomicUsize,
}

static TMP_COUNTER: AtomicU64 = AtomicU64::new(0);

impl DirCache {
    /// A cache under `dir` (created on the first store); entries live in a subdirectory per
    /// ascendir version.
    pub fn new(dir: &Path, mode: CacheMode) -> DirCache {
        DirCache {
            root: dir.join(env!("CARGO_PKG_VERSION")),
            mode,
            hits: AtomicUsize::new(0),
            misses: AtomicUsize::new(0),
        }
    }

    /// Kernel hits and misses so far.
    pub fn stats(&self) -> (usize, usize) {
        (
            self.hits.load(Ordering::Relaxed),
            self.misses.load(Ordering::Relaxed),
        )
    }

    fn path(&self, kind: &str, key: &str) -> Option<PathBuf> {
        // Keys are hex digests; anything else is not looked up (no path can escape the root).
        if key.len() < 3 || !key.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        Some(self.root.join(kind).join(&key[..2]).join(key))
    }

    fn read(&self, kind: &str, key: &str) -> Option<Vec<u8>> {
        if self.mode == CacheMode::Off {
            return None;
        }
        std::fs::read(self.path(kind, key)?).ok()
    }

    fn write(&self, kind: &str, key: &str, data: &[u8]) {
        if self.mode != CacheMode::ReadWrite {
            return;
        }
        let Some(path) = self.path(kind, key) else {
            return;
        };
        let Some(dir) = path.parent() else { return };
        if std::fs::create_dir_all(dir).is_err() {
            return;
        }
        let n = TMP_COUNTER.fetch_add(1, Ordering::Relaxed);
        let tmp = dir.join(format!(".{key}.{}.{n}.tmp", std::process::id()));
        if std::fs::write(&tmp, data).is_ok() && std::fs::rename(&tmp, &path).is_ok() {
            return;
        }
        let _ = std::fs::remove_file(&tmp);
    }

    /// The stored result archive of a model.
    pub fn get_model(&self, key: &str) -> Option<Vec<u8>> {
        self.read("models", key)
    }

    /// Store a model's result archive.
    pub fn put_model(&self, key: &str, archive: &[u8]) {
        self.write("models", key, archive)
    }
}

impl KernelCache for DirCache {
    fn get(&self, key: &str) -> Option<Vec<u8>> {
        let r = self.read("kernels", key);
        let c = if r.is_some() {
            &self.hits
        } else {
            &self.misses
        };
        c.fetch_add(1, Ordering::Relaxed);
        r
    }

    fn put(&self, key: &str, data: &[u8]) {
        self.write("kernels", key, data)
    }
}

/// The cache key of a model: its bytes, the options, whether stages are dumped, the version.
/// Hashed with BLAKE3: a second run over a batch is mostly this hash of every model's bytes
/// (SHA-256 took half of such a run; BLAKE3 is several times faster on the same bytes).
pub fn model_key(model: &[u8], opts: &CompileOptions, dump: bool) -> String {
    let mut h = blake3::Hasher::new();
    h.update(b"model\0");
    h.update(&(model.len() as u64).to_le_bytes());
    h.update(model);
    h.update(opts.to_json().as_bytes());
    h.update(&[u8::from(dump)]);
    h.update(env!("CARGO_PKG_VERSION").as_bytes());
    h.finalize().to_hex().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_and_keys() {
        let dir = std::env::temp_dir().join(format!("ascendir-cache-test-{}", std::process::id()));
        let rw = DirCache::new(&dir, CacheMode::ReadWrite);
        rw.put("abcdef", b"x");
        assert_eq!(rw.get("abcdef").as_deref(), Some(&b"x"[..]));
        assert_eq!(rw.get("../etc"), None);
        let ro = DirCache::new(&dir, CacheMode::Read);
        ro.put("abcd00", b"y");
        assert_eq!(ro.get("abcd00"), None);
        assert_eq!(ro.get("abcdef").as_deref(), Some(&b"x"[..]));
        let off = DirCache::new(&dir, CacheMode::Off);
        assert_eq!(off.get("abcdef"), None);
        assert_eq!(rw.stats(), (1, 1));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
