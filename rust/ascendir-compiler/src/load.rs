//! Stage 0, load: a model file or its bytes as a Graph, the format told by the bytes first and
//! the file suffix second (ONNX, binary GE `ModelDef`, protobuf text, OM).

use std::path::{Path, PathBuf};

use ascendir_ir::Graph;
use bytes::Bytes;

use crate::error::{CompileError, CompileResult, Stage};

/// A model file format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// ONNX `ModelProto`.
    Onnx,
    /// Binary GE `ModelDef`.
    Pb,
    /// Protobuf text of a `ModelDef` (a GE dump).
    Txt,
    /// An OM model file.
    Om,
}

impl Format {
    /// `"onnx"`, `"pb"`, `"txt"`, `"om"`.
    pub fn name(self) -> &'static str {
        match self {
            Format::Onnx => "onnx",
            Format::Pb => "pb",
            Format::Txt => "txt",
            Format::Om => "om",
        }
    }

    /// The format a file suffix names (lower-cased), if any.
    pub fn of_suffix(path: &Path) -> Option<Format> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        Some(match ext.as_str() {
            "onnx" => Format::Onnx,
            "pb" | "bin" | "air" => Format::Pb,
            "txt" | "pbtxt" | "prototxt" => Format::Txt,
            "om" => Format::Om,
            _ => return None,
        })
    }
}

/// Top-level fields (number, wire type) only `onnx.ModelProto` has.
const ONNX_ONLY: [(u64, u64); 10] = [
    (1, 0),
    (2, 2),
    (4, 2),
    (5, 0),
    (6, 2),
    (8, 2),
    (14, 2),
    (20, 2),
    (25, 2),
    (26, 2),
];
/// Top-level fields only `ge.proto.ModelDef` has.
const GE_ONLY: [(u64, u64); 3] = [(1, 2), (2, 0), (11, 2)];
/// Top-level fields looked at before giving up.
const MAX_FIELDS: usize = 64;

fn varint(d: &[u8], mut at: usize) -> Option<(u64, usize)> {
    ascendir_wire::varint(d, &mut at).map(|v| (v, at))
}

/// `Onnx` or `Pb` from the first top-level field that only one of the two messages has.
fn protobuf_kind(d: &[u8]) -> Option<Format> {
    let mut at = 0usize;
    for _ in 0..MAX_FIELDS {
        if at >= d.len() {
            return None;
        }
        let (tag, next) = varint(d, at)?;
        at = next;
        let (number, wire) = (tag >> 3, tag & 7);
        if number == 0 {
            return None;
        }
        if ONNX_ONLY.contains(&(number, wire)) {
            return Some(Format::Onnx);
        }
        if GE_ONLY.contains(&(number, wire)) {
            return Some(Format::Pb);
        }
        at = match wire {
            0 => varint(d, at)?.1,
            1 => at.checked_add(8)?,
            5 => at.checked_add(4)?,
            2 => {
                let (n, after) = varint(d, at)?;
                after.checked_add(usize::try_from(n).ok()?)?
            }
            _ => return None,
        };
    }
    None
}

fn looks_like_text(d: &[u8]) -> bool {
    let head = &d[..d.len().min(4096)];
    if head.contains(&0) {
        return false;
    }
    let text = match std::str::from_utf8(head) {
        Ok(t) => t,
        // A character cut at the end of the window is fine.
        Err(e) if e.error_len().is_none() || e.valid_up_to() + 3 >= head.len() => {
            match std::str::from_utf8(&head[..e.valid_up_to()]) {
                Ok(t) => t,
                Err(_) => return false,
            }
        }
        Err(_) => return false,
    };
    if text
        .chars()
        .any(|c| (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r' | '\x0c' | '\x0b'))
    {
        return false;
    }
    match text.trim_start().chars().next() {
        Some(c) => c.is_alphabetic() || c == '#' || c == '_',
        None => false,
    }
}

/// The format of model bytes, or `None` when the bytes do not say (empty, too short, not a
/// model). Binary ONNX and GE `ModelDef` are told apart by their top-level fields.
pub fn sniff(data: &[u8]) -> Option<Format> {
    if data.is_empty() {
        return None;
    }
    if ascendir_proto::om::is_om(data) {
        return Some(Format::Om);
    }
    if looks_like_text(data) {
        return Some(Format::Txt);
    }
    protobuf_kind(data)
}

/// The format of `data` read from `where_` (a path or `<bytes>`): what the bytes say, else
/// what the suffix says.
pub fn detect(where_: &str, data: &[u8]) -> CompileResult<Format> {
    if data.is_empty() {
        return Err(load_err(format!("'{where_}' is empty"), Some(0)));
    }
    if let Some(f) = sniff(data) {
        return Ok(f);
    }
    if let Some(f) = Format::of_suffix(Path::new(where_)) {
        return Ok(f);
    }
    Err(load_err(
        format!(
            "cannot tell the model format of '{where_}': its bytes are not ONNX, a GE ModelDef \
             (binary or text) or an OM file, and its suffix is not one of .air, .bin, .om, \
             .onnx, .pb, .pbtxt, .prototxt, .txt"
        ),
        Some(0),
    ))
}

fn load_err(reason: String, offset: Option<usize>) -> CompileError {
    let mut e = CompileError::new(Stage::Load, reason);
    e.offset = offset;
    e
}

/// Where a model comes from.
#[derive(Clone, Debug)]
pub enum Source {
    /// A file (external ONNX data relative to its directory).
    Path(PathBuf),
    /// Model bytes; `base_dir` resolves external ONNX data.
    Bytes {
        /// The bytes.
        data: Bytes,
        /// Directory of external data files.
        base_dir: Option<PathBuf>,
    },
}

impl Source {
    /// The path, or `<bytes>`.
    pub fn describe(&self) -> String {
        match self {
            Source::Path(p) => p.display().to_string(),
            Source::Bytes { .. } => "<bytes>".to_string(),
        }
    }

    /// Where external ONNX data files are looked up: a file's directory, or the given one.
    pub fn base_dir(&self) -> Option<PathBuf> {
        match self {
            Source::Path(p) => Some(p.parent().map(PathBuf::from).unwrap_or_default()),
            Source::Bytes { base_dir, .. } => base_dir.clone(),
        }
    }
}

/// Read the model's bytes (a path is read whole).
pub fn read_source(src: &Source) -> CompileResult<Bytes> {
    match src {
        Source::Path(p) => {
            let fail = |e: std::io::Error| {
                let why = e.to_string();
                let why = why.split(" (os error").next().unwrap_or(&why).to_string();
                load_err(format!("{}: {why}", p.display()), None)
            };
            // Checked before opening: a FIFO blocks the open, a device has no end.
            if !std::fs::metadata(p).map_err(fail)?.is_file() {
                return Err(load_err(
                    format!(
                        "{}: not a regular file (a directory, FIFO or device)",
                        p.display()
                    ),
                    None,
                ));
            }
            std::fs::read(p).map(Bytes::from).map_err(fail)
        }
        Source::Bytes { data, .. } => Ok(data.clone()),
    }
}

/// Load a model as a Graph (its main graph with subgraphs). Errors are `load`-stage
/// [`CompileError`]s with the byte offset when the decoder gives one.
pub fn load(src: &Source) -> CompileResult<Graph> {
    let data = read_source(src)?;
    load_bytes(data, &src.describe(), src.base_dir())
}

/// Load model bytes read from `where_` (a path, or `<bytes>`); `base_dir` resolves external
/// ONNX data.
pub fn load_bytes(data: Bytes, where_: &str, base_dir: Option<PathBuf>) -> CompileResult<Graph> {
    load_bytes_reporting(data, where_, base_dir).map(|(g, _)| g)
}

/// [`load_bytes`], with the paths of the external data files the model read (every byte
/// the result depends on besides `data`), sorted.
pub fn load_bytes_reporting(
    data: Bytes,
    where_: &str,
    base_dir: Option<PathBuf>,
) -> CompileResult<(Graph, Vec<PathBuf>)> {
    let kind = detect(where_, &data)?;
    let bad = |e: String, off: Option<usize>| {
        load_err(
            format!("{where_}: cannot read the {} model: {e}", kind.name()),
            off,
        )
    };
    let proto = |e: ascendir_proto::ProtoError| {
        let off = e.offset();
        bad(e.to_string(), off)
    };
    match kind {
        Format::Onnx => {
            let opts = ascendir_onnx::ImportOptions {
                base_dir: base_dir.clone(),
            };
            ascendir_onnx::import_model(data, &opts)
                .map(|(g, report)| {
                    let dir = base_dir.unwrap_or_default();
                    let files = report
                        .external_files
                        .iter()
                        .map(|loc| dir.join(loc))
                        .collect();
                    (g, files)
                })
                .map_err(|e| {
                    let off = match &e {
                        ascendir_onnx::OnnxError::Decode { offset, .. } => Some(*offset),
                        _ => None,
                    };
                    bad(e.to_string(), off)
                })
        }
        Format::Om => {
            let om = ascendir_proto::om::read(&data).map_err(proto)?;
            let def = om.model_def().map_err(proto)?.clone();
            ascendir_proto::decode_model_bytes(def)
                .and_then(ascendir_proto::first_graph)
                .map(|g| (g, Vec::new()))
                .map_err(proto)
        }
        Format::Txt => {
            let text = std::str::from_utf8(&data).map_err(|e| {
                load_err(
                    format!("{where_}: not valid UTF-8 text (byte {})", e.valid_up_to()),
                    Some(e.valid_up_to()),
                )
            })?;
            let bytes = ascendir_proto::text::parse_to_bytes(text, "ModelDef").map_err(proto)?;
            ascendir_proto::decode_model_bytes(Bytes::from(bytes))
                .and_then(ascendir_proto::first_graph)
                .map(|g| (g, Vec::new()))
                .map_err(proto)
        }
        Format::Pb => ascendir_proto::decode_model_bytes(data)
            .and_then(ascendir_proto::first_graph)
            .map(|g| (g, Vec::new()))
            .map_err(proto),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniffs_each_format() {
        assert_eq!(sniff(b""), None);
        assert_eq!(sniff(b"name: \"m\"\ngraph {}\n"), Some(Format::Txt));
        // ONNX: ir_version (field 1, varint).
        assert_eq!(sniff(&[0x08, 0x07]), Some(Format::Onnx));
        // ModelDef: name (field 1, bytes).
        assert_eq!(sniff(&[0x0a, 0x01, b'm']), Some(Format::Pb));
        assert_eq!(sniff(&[0xff; 3]), None);
    }

    #[test]
    fn detect_falls_back_to_the_suffix_and_says_why() {
        assert_eq!(detect("m.onnx", &[0xff; 3]).unwrap(), Format::Onnx);
        let e = detect("m.xyz", &[0xff; 3]).unwrap_err();
        assert_eq!(e.stage, Stage::Load);
        assert!(e.reason.contains("cannot tell"));
        assert_eq!(detect("m.onnx", b"").unwrap_err().offset, Some(0));
    }

    #[test]
    fn a_missing_file_is_a_load_error() {
        let e = load(&Source::Path("/nonexistent/m.onnx".into())).unwrap_err();
        assert_eq!(e.stage, Stage::Load);
        assert!(e.reason.contains("m.onnx"), "{}", e.reason);
    }
}
