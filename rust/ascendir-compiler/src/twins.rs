//! Structural twins among a model's clusters: clusters whose HintGraphs differ only in their
//! nodes' names (a model's repeated layers) are scheduled and tiled once; each twin takes the
//! first one's ImplGraphs with its own names carried over
//! ([`ascendir_asc::schedule::rename_for_twin`]), or is scheduled itself where the names
//! cannot be carried over exactly. The result is byte for byte what scheduling every cluster
//! would give.

use std::sync::Arc;

use ascendir_asc::schedule::TwinSource;
use ascendir_asc::tiling::TilingData;
use ascendir_asc::AscGraph;
use rustc_hash::FxHashMap;
use sha2::{Digest, Sha256};

use crate::realize::Realized;

/// A built kernel: the realized HintGraph, its scheduled ImplGraphs, their tiling, and
/// whether the ImplGraphs came from the kernel cache.
pub(crate) type Art = (Realized, Vec<AscGraph>, TilingData, bool);

/// A HintGraph's structure: the digest of its
/// [`structure_key`](ascendir_asc::schedule::structure_key).
pub(crate) type Key = [u8; 32];

/// The structure of `hint`.
pub(crate) fn key(hint: &AscGraph) -> Key {
    Sha256::digest(hint.structure_bytes()).into()
}

/// The bytes of `hint` and its structure.
pub(crate) fn bytes_and_key(hint: &AscGraph) -> (Vec<u8>, Key) {
    let (bytes, structure) = hint.to_bytes_and_structure();
    (bytes, Sha256::digest(structure).into())
}

/// The kernel a structure was first built as.
pub(crate) struct Source {
    impls: TwinSource,
    tiling: TilingData,
    from_cache: bool,
}

/// What building a structure gave: its kernel, or why it does not schedule or tile.
pub(crate) type Built = Result<Arc<Source>, String>;

/// Build outcomes by structure.
#[derive(Default)]
pub(crate) struct Memo(FxHashMap<Key, Built>);

impl Memo {
    /// The outcome recorded for structure `k`.
    pub(crate) fn get(&self, k: &Key) -> Option<&Built> {
        self.0.get(k)
    }

    /// Record the first build of structure `k`.
    pub(crate) fn record(&mut self, k: Key, built: &Result<Art, String>) {
        self.0.entry(k).or_insert_with(|| match built {
            Ok((r, impls, tiling, from_cache)) => Ok(Arc::new(Source {
                impls: TwinSource::new(r.hint.clone(), impls.clone()),
                tiling: tiling.clone(),
                from_cache: *from_cache,
            })),
            Err(e) => Err(e.clone()),
        });
    }
}

/// A twin's kernel: the names and bytes of its ImplGraphs, their tiling and cache flag.
pub(crate) type TwinKernel = (Vec<(String, Vec<u8>)>, TilingData, bool);

/// The kernel of a cluster with HintGraph `hint`, built as its twin `src` was; `None` when the
/// names cannot be carried over (the caller schedules it).
pub(crate) fn built_as(src: &Source, hint: &AscGraph) -> Option<TwinKernel> {
    let impls = src.impls.bytes_for(hint)?;
    Some((impls, src.tiling.clone(), src.from_cache))
}
