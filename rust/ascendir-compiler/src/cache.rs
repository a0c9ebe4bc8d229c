//! The compile cache: a content-addressed directory. Kernels are stored by the key of their
//! HintGraph, hint values, target, options, registry generation and build id (their
//! scheduled ImplGraphs); models by the hash of every byte they read (the model file and its
//! external data files), the options, the registry generation and the build id (their result
//! archive). Files are written to a temporary name and renamed, so concurrent compiles
//! (threads or processes) never see a partial entry; a damaged entry reads as a miss.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

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

/// The build id: the version and a digest of the sources this build was made from (every
/// crate of ours the compiler builds on, the protocol files, the lock file). A tree rebuilt
/// after a change at the same version has another id.
pub const BUILD_ID: &str = concat!(env!("CARGO_PKG_VERSION"), "+", env!("ASCENDIR_BUILD_ID"));

/// The change counters of the GE op, AscIR and lowering registries.
type RegistryStamp = (u64, u64, u64);

/// The last registry generation computed, with the registry counters it was computed at.
static GENERATION: Mutex<Option<(RegistryStamp, String)>> = Mutex::new(None);

/// The registry generation: a content hash over the GE op registry (prototypes and the
/// identity of attached inference functions), the AscIR registry and the lowering registry,
/// user registrations included. It changes whenever anything is registered, overridden or
/// removed, and two processes with the same registrations have the same one.
pub fn registry_generation() -> String {
    let stamp = (
        ascendir_ir::registry::generation(),
        ascendir_asc::registry::generation(),
        crate::lower::generation(),
    );
    let mut memo = GENERATION.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((s, g)) = memo.as_ref() {
        if *s == stamp {
            return g.clone();
        }
    }
    let mut h = blake3::Hasher::new();
    for (part, text) in [
        ("ge", ascendir_ir::registry::content_text()),
        (
            "ascir",
            without_addresses(&ascendir_asc::registry::content_text()),
        ),
        ("lowering", without_addresses(&crate::lower::content_text())),
    ] {
        h.update(part.as_bytes());
        h.update(&(text.len() as u64).to_le_bytes());
        h.update(text.as_bytes());
    }
    let g = h.finalize().to_hex()[..32].to_string();
    *memo = Some((stamp, g.clone()));
    g
}

/// `text` with every `0x` hex number (the address of a Rust function a registry entry holds,
/// which moves from process to process; the function itself is covered by the build id)
/// cut to `0x`.
fn without_addresses(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("0x") {
        out.push_str(&rest[..at + 2]);
        rest = rest[at + 2..].trim_start_matches(|c: char| c.is_ascii_hexdigit());
    }
    out.push_str(rest);
    out
}

/// The key a kernel carries as its identity (`_ascendir_cache_key`, the label of its
/// generated code): its HintGraph bytes, the target, the options (as JSON), the build id. It
/// leaves the registry generation out, so that registrations a model does not use do not
/// change its compiled bytes; the cache looks kernels up by [`kernel_key`], which carries it.
pub fn cache_key(hint_bytes: &[u8], target: &str, opts_json: &str) -> String {
    let mut h = Sha256::new();
    h.update(hint_bytes);
    h.update(target.as_bytes());
    h.update(opts_json.as_bytes());
    h.update(BUILD_ID.as_bytes());
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
    h.update(registry_generation().as_bytes());
    h.update(BUILD_ID.as_bytes());
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

/// The cache key of a model: its bytes, the external data files it reads (the contents
/// of each), the options, whether stages are dumped, the registry generation, the build id.
/// Hashed with BLAKE3: a second run over a batch is mostly this hash of every model's bytes
/// (SHA-256 took half of such a run; BLAKE3 is several times faster on the same bytes). An
/// external file that cannot be read is an error (the caller compiles without the cache).
pub fn model_key(
    model: &[u8],
    external: &[PathBuf],
    opts: &CompileOptions,
    dump: bool,
) -> std::io::Result<String> {
    let mut h = blake3::Hasher::new();
    h.update(b"model\0");
    h.update(&(model.len() as u64).to_le_bytes());
    h.update(model);
    // The model bytes name each file (its location); its contents are what the key adds.
    for f in external {
        h.update(b"external\0");
        let n = std::io::copy(&mut std::fs::File::open(f)?, &mut h)?;
        h.update(&n.to_le_bytes());
    }
    h.update(opts.to_json().as_bytes());
    h.update(&[u8::from(dump)]);
    h.update(registry_generation().as_bytes());
    h.update(BUILD_ID.as_bytes());
    Ok(h.finalize().to_hex().to_string())
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
