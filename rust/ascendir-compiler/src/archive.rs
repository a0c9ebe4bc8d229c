//! The result archive of a compile: what crosses a process boundary or sits in the compile
//! cache. Plain bytes: the magic `ASCENDIR-RESULT\x01`, a section count (u32, little-endian),
//! then per section its name (u32 length, UTF-8) and its data (u64 length, bytes). Sections:
//! `model.pb` (the compiled graph as a binary GE ModelDef, every AscBackend node carrying its
//! HintGraph and ImplGraphs), `kernels.json`, `report.json`, `report.txt`, `fusion.dot`, and
//! `stages/<file>` per stage dump.

use serde_json::json;

use crate::error::{CompileError, CompileResult, Stage};
use crate::model::CompiledModel;

/// The archive's first bytes.
pub const MAGIC: &[u8; 16] = b"ASCENDIR-RESULT\x01";

/// The named sections of an archive, in order.
pub type Sections = Vec<(String, Vec<u8>)>;

/// Pack sections.
pub fn pack(sections: &[(String, Vec<u8>)]) -> Vec<u8> {
    let mut w = Writer::new(sections.len());
    for (name, data) in sections {
        w.section(name, data);
    }
    w.out
}

/// Writes an archive section by section into one buffer.
struct Writer {
    out: Vec<u8>,
}

impl Writer {
    fn new(count: usize) -> Writer {
        let mut out = Vec::new();
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&(count as u32).to_le_bytes());
        Writer { out }
    }

    fn section(&mut self, name: &str, data: &[u8]) {
        self.out.reserve(12 + name.len() + data.len());
        self.out
            .extend_from_slice(&(name.len() as u32).to_le_bytes());
        self.out.extend_from_slice(name.as_bytes());
        self.out
            .extend_from_slice(&(data.len() as u64).to_le_bytes());
        self.out.extend_from_slice(data);
    }
}

fn bad(at: usize, what: &str) -> CompileError {
    let mut e = CompileError::new(
        Stage::Load,
        format!("not a compile result archive: {what} at byte {at}"),
    );
    e.offset = Some(at);
    e
}

/// The sections of an archive as slices of it (checked: every length within the data).
pub fn sections(d: &[u8]) -> CompileResult<Vec<(String, &[u8])>> {
    if d.get(..MAGIC.len()) != Some(MAGIC.as_slice()) {
        return Err(bad(0, "bad magic"));
    }
    let mut at = MAGIC.len();
    let take = |at: &mut usize, n: usize, what: &str| -> CompileResult<&[u8]> {
        let end = at.checked_add(n).ok_or_else(|| bad(*at, what))?;
        let s = d.get(*at..end).ok_or_else(|| bad(*at, what))?;
        *at = end;
        Ok(s)
    };
    let u32_at = |b: &[u8]| u32::from_le_bytes(b.try_into().unwrap_or([0; 4]));
    let count = u32_at(take(&mut at, 4, "truncated count")?);
    let mut out = Vec::new();
    for _ in 0..count {
        let n = u32_at(take(&mut at, 4, "truncated name")?);
        let name = std::str::from_utf8(take(&mut at, n as usize, "truncated name")?)
            .map_err(|_| bad(at, "a section name is not UTF-8"))?
            .to_string();
        let len = u64::from_le_bytes(
            take(&mut at, 8, "truncated length")?
                .try_into()
                .unwrap_or([0; 8]),
        );
        let len = usize::try_from(len).map_err(|_| bad(at, "a section too large"))?;
        out.push((name, take(&mut at, len, "truncated section")?));
    }
    if at != d.len() {
        return Err(bad(at, "trailing bytes"));
    }
    Ok(out)
}

/// Unpack an archive into owned sections.
pub fn unpack(d: &[u8]) -> CompileResult<Sections> {
    Ok(sections(d)?
        .into_iter()
        .map(|(n, s)| (n, s.to_vec()))
        .collect())
}

/// The archive of a compiled model.
pub fn to_archive(cm: &CompiledModel) -> CompileResult<Vec<u8>> {
    let model = ascendir_proto::encode_graph(&cm.graph)
        .map_err(|e| CompileError::new(Stage::Package, format!("cannot encode the graph: {e}")))?;
    let dot = crate::report::to_dot(&cm.graph);
    Ok(write(cm, model, dot))
}

/// The archive of a compiled model, freeing the graph as soon as it is encoded (the batch
/// path: the model's memory is not held twice).
pub fn into_archive(mut cm: CompiledModel) -> CompileResult<Vec<u8>> {
    let model = ascendir_proto::encode_graph(&cm.graph)
        .map_err(|e| CompileError::new(Stage::Package, format!("cannot encode the graph: {e}")))?;
    let dot = crate::report::to_dot(&cm.graph);
    cm.graph = ascendir_ir::Graph::new("");
    Ok(write(&cm, model, dot))
}

fn write(cm: &CompiledModel, model: Vec<u8>, dot: String) -> Vec<u8> {
    let kernels: Vec<serde_json::Value> = cm
        .kernels
        .iter()
        .map(|k| {
            json!({
                "name": k.name,
                "fuse_type": k.fuse_type,
                "members": k.members,
                "member_types": k.member_types,
                "cache_key": k.cache_key,
                "from_cache": k.from_cache,
            })
        })
        .collect();
    let kernels = serde_json::to_vec(&kernels).unwrap_or_default();
    let report = cm.report.to_json_bytes();
    let text = cm.report.text();
    let mut w = Writer::new(5 + cm.dumps.len());
    w.out
        .reserve(model.len() + kernels.len() + report.len() + text.len() + dot.len() + 128);
    w.section("model.pb", &model);
    drop(model);
    w.section("kernels.json", &kernels);
    w.section("report.json", &report);
    w.section("report.txt", text.as_bytes());
    w.section("fusion.dot", dot.as_bytes());
    for (name, text) in &cm.dumps {
        w.section(&format!("stages/{name}"), text.as_bytes());
    }
    w.out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_truncation() {
        let s: Sections = vec![("a".into(), b"xyz".to_vec()), ("b/c".into(), vec![])];
        let p = pack(&s);
        assert_eq!(unpack(&p).unwrap(), s);
        for cut in 0..p.len() {
            assert!(unpack(&p[..cut]).is_err(), "cut at {cut}");
        }
        let mut long = p.clone();
        long.push(0);
        assert!(unpack(&long).is_err());
    }
}
