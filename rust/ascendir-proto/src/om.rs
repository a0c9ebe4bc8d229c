//! GE model files (`.om`): a fixed 256-byte `ModelFileHeader`, then per model a partition
//! table and the partition payloads.
//!
//! Header fields used (little endian, byte offsets): magic `"IMOD"` (0, u32 0x444F4D49),
//! `headsize` (4, = 256), `version` (8), `checksum` (12, 64 bytes), `length` (76, u32),
//! `is_encrypt` (80), `is_checksum` (81), `modeltype` (82), `genmode` (83), `name` (84, 32
//! bytes), `ops` (116), `userdefineinfo` (120, 32 bytes), `om_ir_version` (152), `model_num`
//! (156), `platform_version` (160, 20 bytes), `platform_type` (180), `model_length` (184, u64).
//!
//! The partition table is `u64 num` followed by `num` entries `{u32 type, u32 pad,
//! u64 offset, u64 size}` (current GE); the older 32-bit table (`u32 num`, entries
//! `{u32 type, u32 offset, u32 size}`) is recognised too. Offsets are relative to the end of the
//! table. Partition types: MODEL_DEF 0, WEIGHTS_DATA 1, TASK_INFO 2, TBE_KERNELS 3,
//! CUST_AICPU_KERNELS 4, SO_BINS 5, FLOW_MODEL 6, FLOW_SUBMODEL 7, MODEL_INOUT_INFO 8.

use bytes::Bytes;

use crate::error::{ProtoError, ProtoResult};

/// Magic number of a model file (`"IMOD"` read as a little-endian u32).
pub const MAGIC: u32 = 0x444F_4D49;
/// Size of the fixed header.
pub const HEAD_SIZE: usize = 256;
/// The header `version` written by this crate (as in current GE files).
pub const FILE_VERSION: u32 = 0x2000_0000;

/// `ModelPartitionType` numbers.
pub mod partition {
    /// The `ModelDef` protobuf.
    pub const MODEL_DEF: u32 = 0;
    /// Weights (constant data).
    pub const WEIGHTS_DATA: u32 = 1;
    /// Task definitions.
    pub const TASK_INFO: u32 = 2;
    /// TBE kernel binaries.
    pub const TBE_KERNELS: u32 = 3;
    /// Custom AICPU kernels.
    pub const CUST_AICPU_KERNELS: u32 = 4;
    /// Shared objects.
    pub const SO_BINS: u32 = 5;
    /// Flow model.
    pub const FLOW_MODEL: u32 = 6;
    /// Flow submodel.
    pub const FLOW_SUBMODEL: u32 = 7;
    /// Model input/output description.
    pub const MODEL_INOUT_INFO: u32 = 8;
}

/// One partition of a model file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Partition {
    /// Index of the model (of `model_num`) whose table lists this partition.
    pub model: u32,
    /// `ModelPartitionType` number.
    pub kind: u32,
    /// Absolute byte offset of the payload in the file.
    pub offset: usize,
    /// The payload.
    pub data: Bytes,
}

/// A parsed model file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OmFile {
    /// Header `version`.
    pub version: u32,
    /// Model name from the header.
    pub name: String,
    /// Header `model_num`.
    pub model_num: u32,
    /// Every partition, in file order (all models).
    pub partitions: Vec<Partition>,
}

impl OmFile {
    /// The first partition of type `kind`.
    pub fn partition(&self, kind: u32) -> Option<&Partition> {
        self.partitions.iter().find(|p| p.kind == kind)
    }

    /// The MODEL_DEF payload (binary `ModelDef`).
    pub fn model_def(&self) -> ProtoResult<&Bytes> {
        self.partition(partition::MODEL_DEF)
            .map(|p| &p.data)
            .ok_or_else(|| ProtoError::Om {
                offset: HEAD_SIZE,
                message: "the file has no MODEL_DEF partition".to_string(),
            })
    }

    /// The WEIGHTS_DATA payload (empty when absent).
    pub fn weights(&self) -> Bytes {
        self.partition(partition::WEIGHTS_DATA)
            .map(|p| p.data.clone())
            .unwrap_or_default()
    }
}

fn u32_at(d: &[u8], at: usize) -> Option<u32> {
    d.get(at..at + 4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

fn u64_at(d: &[u8], at: usize) -> Option<u64> {
    d.get(at..at + 8).map(|b| {
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        u64::from_le_bytes(a)
    })
}

fn om_err(offset: usize, message: impl Into<String>) -> ProtoError {
    ProtoError::Om {
        offset,
        message: message.into(),
    }
}

/// Whether `data` starts with the model-file magic.
pub fn is_om(data: &[u8]) -> bool {
    u32_at(data, 0) == Some(MAGIC)
}

/// Try a partition table at `at`; returns the partitions and the end of their data. `wide`:
/// the 64-bit layout (count, offsets and sizes of 8 bytes, entries of 24 bytes), else the
/// 32-bit one (4 bytes, entries of 12). An entry is `kind` (u32, padded to the word), offset
/// from the end of the table, size. Every payload must lie inside the model data (`..end`)
/// and no two payloads of a table may overlap (GE writes them one after the other): the
/// partitions are slices of `d`, so a table cannot make the reader hold more bytes than the
/// file has.
fn table(
    d: &Bytes,
    at: usize,
    end: usize,
    wide: bool,
    model: u32,
) -> Result<(Vec<Partition>, usize), Option<String>> {
    let w = if wide { 8 } else { 4 };
    let word = |p: usize| -> Option<usize> {
        if wide {
            usize::try_from(u64_at(d, p)?).ok()
        } else {
            Some(u32_at(d, p)? as usize)
        }
    };
    let num = word(at).ok_or(None)?;
    if num == 0 || num > 1024 {
        return Err(None);
    }
    let data_start = at
        .checked_add(w)
        .and_then(|v| v.checked_add(3 * w * num))
        .filter(|&v| v <= end)
        .ok_or(None)?;
    // A wide table whose padding words are all zero is read as one: what is wrong with its
    // entries is an error, not a reason to try the 32-bit layout (which would read the same
    // bytes as other, meaningless entries).
    let committed = wide && (0..num).all(|k| u32_at(d, at + w + 3 * w * k + 4) == Some(0));
    let fail = |why: String| if committed { Some(why) } else { None };
    let mut parts = Vec::with_capacity(num);
    let mut data_end = data_start;
    let mut ranges: Vec<(usize, usize, usize)> = Vec::with_capacity(num);
    for k in 0..num {
        let e = at + w + 3 * w * k;
        let kind = u32_at(d, e).ok_or(None)?;
        let (Some(off), Some(size)) = (word(e + w), word(e + 2 * w)) else {
            return Err(fail(format!(
                "partition {k} has an offset or size beyond 64 bits"
            )));
        };
        let span = data_start
            .checked_add(off)
            .and_then(|s| Some((s, s.checked_add(size)?)))
            .filter(|&(_, t)| t <= end);
        let Some((s, t)) = span else {
            return Err(fail(format!(
                "partition {k} (offset {off}, {size} bytes) lies outside the model data"
            )));
        };
        data_end = data_end.max(t);
        if t > s {
            ranges.push((s, t, k));
        }
        parts.push(Partition {
            model,
            kind,
            offset: s,
            data: d.slice(s..t),
        });
    }
    ranges.sort_unstable();
    if let Some(r) = ranges.windows(2).find(|r| r[1].0 < r[0].1) {
        return Err(fail(format!(
            "partitions {} and {} overlap",
            r[0].2.min(r[1].2),
            r[0].2.max(r[1].2)
        )));
    }
    Ok((parts, data_end))
}

/// Parse a model file (the bytes are copied once; see [`read_bytes`]).
pub fn read(d: &[u8]) -> ProtoResult<OmFile> {
    read_bytes(Bytes::copy_from_slice(d))
}

/// Parse a model file held in `d`: every partition payload is a slice of `d` (no copy).
/// Partition tables whose entries leave the model data or overlap are errors.
pub fn read_bytes(d: Bytes) -> ProtoResult<OmFile> {
    let d = &d;
    if d.len() < HEAD_SIZE {
        return Err(om_err(
            d.len(),
            format!(
                "file of {} bytes is shorter than the 256-byte header",
                d.len()
            ),
        ));
    }
    let magic = u32_at(d, 0).unwrap_or(0);
    if magic != MAGIC {
        return Err(om_err(
            0,
            format!("bad magic 0x{magic:08x} (expected 0x{MAGIC:08x}, \"IMOD\")"),
        ));
    }
    let head = u32_at(d, 4).unwrap_or(0) as usize;
    if head != HEAD_SIZE {
        return Err(om_err(
            4,
            format!("header size {head}, expected {HEAD_SIZE}"),
        ));
    }
    if d[80] != 0 {
        return Err(om_err(80, "the model is encrypted"));
    }
    let version = u32_at(d, 8).unwrap_or(0);
    let name_raw = &d[84..116];
    let name_len = name_raw
        .iter()
        .position(|&b| b == 0)
        .unwrap_or(name_raw.len());
    let name = String::from_utf8_lossy(&name_raw[..name_len]).into_owned();
    let model_num = u32_at(d, 156).unwrap_or(0).max(1);
    let length32 = u32_at(d, 76).unwrap_or(0) as usize;
    let length64 = u64_at(d, 184).unwrap_or(0);
    let declared = if length64 != 0 {
        usize::try_from(length64).map_err(|_| om_err(184, "model_length does not fit in memory"))?
    } else {
        length32
    };
    let avail = d.len() - HEAD_SIZE;
    if declared > avail {
        return Err(om_err(
            if length64 != 0 { 184 } else { 76 },
            format!("the header declares {declared} bytes of model data, the file has {avail}"),
        ));
    }
    let end = if declared == 0 {
        d.len()
    } else {
        HEAD_SIZE + declared
    };
    let mut partitions = Vec::new();
    let mut at = HEAD_SIZE;
    for m in 0..model_num {
        let parsed = match table(d, at, end, true, m) {
            Err(None) => table(d, at, end, false, m),
            other => other,
        };
        let (parts, data_end) = match parsed {
            Ok(p) => p,
            Err(Some(why)) => {
                return Err(om_err(at, format!("bad partition table of model {m}: {why}")))
            }
            Err(None) => {
                return Err(om_err(
                    at,
                    format!(
                        "bad partition table of model {m} (malformed, a partition outside the model data, or two partitions that overlap)"
                    ),
                ))
            }
        };
        partitions.extend(parts);
        at = data_end;
        if at >= end {
            break;
        }
    }
    Ok(OmFile {
        version,
        name,
        model_num,
        partitions,
    })
}

/// Write a model file with one model of two partitions: MODEL_DEF and WEIGHTS_DATA.
pub fn write(name: &str, model_def: &[u8], weights: &[u8]) -> Vec<u8> {
    write_partitions(
        name,
        &[
            (partition::MODEL_DEF, model_def),
            (partition::WEIGHTS_DATA, weights),
        ],
    )
}

/// Write a model file with one model whose partition table lists `parts` (type number and
/// payload) in the given order; the payloads are copied byte for byte.
pub fn write_partitions(name: &str, parts: &[(u32, &[u8])]) -> Vec<u8> {
    let table_len = 8 + 24 * parts.len();
    let data_len = parts
        .iter()
        .fold(0usize, |n, p| n.saturating_add(p.1.len()));
    let model_len = table_len.saturating_add(data_len);
    let mut out = vec![0u8; HEAD_SIZE];
    out[0..4].copy_from_slice(&MAGIC.to_le_bytes());
    out[4..8].copy_from_slice(&(HEAD_SIZE as u32).to_le_bytes());
    out[8..12].copy_from_slice(&FILE_VERSION.to_le_bytes());
    if let Ok(l) = u32::try_from(model_len) {
        out[76..80].copy_from_slice(&l.to_le_bytes());
    }
    let nb = name.as_bytes();
    let n = nb.len().min(31);
    out[84..84 + n].copy_from_slice(&nb[..n]);
    out[156..160].copy_from_slice(&1u32.to_le_bytes());
    out[184..192].copy_from_slice(&(model_len as u64).to_le_bytes());
    out.reserve(model_len);
    out.extend_from_slice(&(parts.len() as u64).to_le_bytes());
    let mut off = 0u64;
    for (kind, data) in parts {
        out.extend_from_slice(&kind.to_le_bytes());
        out.extend_from_slice(&[0u8; 4]);
        out.extend_from_slice(&off.to_le_bytes());
        out.extend_from_slice(&(data.len() as u64).to_le_bytes());
        off = off.saturating_add(data.len() as u64);
    }
    for (_, data) in parts {
        out.extend_from_slice(data);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_then_read() {
        let f = write("net", b"\x0a\x03net", b"weights");
        let om = read(&f).unwrap();
        assert_eq!(om.name, "net");
        assert_eq!(&om.model_def().unwrap()[..], b"\x0a\x03net");
        assert_eq!(&om.weights()[..], b"weights");
        assert_eq!(om.partitions.len(), 2);
    }

    #[test]
    fn extra_partitions_round_trip_byte_for_byte() {
        let task: &[u8] = b"\x00\x01task";
        let kernels: &[u8] = b"kernels\xff";
        let f = write_partitions(
            "net",
            &[
                (partition::MODEL_DEF, b"def"),
                (partition::WEIGHTS_DATA, b"w"),
                (partition::TASK_INFO, task),
                (partition::TBE_KERNELS, kernels),
            ],
        );
        let om = read(&f).unwrap();
        let kinds: Vec<u32> = om.partitions.iter().map(|p| p.kind).collect();
        assert_eq!(kinds, [0, 1, 2, 3]);
        assert_eq!(&om.partition(partition::TASK_INFO).unwrap().data[..], task);
        assert_eq!(
            &om.partition(partition::TBE_KERNELS).unwrap().data[..],
            kernels
        );
        assert!(om.partitions.iter().all(|p| p.model == 0));
    }

    #[test]
    fn partitions_are_slices_of_the_input_and_may_not_overlap() {
        let f = write_partitions("net", &[(partition::MODEL_DEF, b"def"), (2, b"task")]);
        let whole = Bytes::from(f.clone());
        let range = whole.as_ptr() as usize..whole.as_ptr() as usize + whole.len();
        let om = read_bytes(whole.clone()).unwrap();
        for p in &om.partitions {
            assert!(
                range.contains(&(p.data.as_ptr() as usize)),
                "partition copied"
            );
        }
        // Point the second entry at the first one's bytes: overlapping entries are refused.
        let mut bad = f.clone();
        let entry = HEAD_SIZE + 8 + 24;
        bad[entry + 8..entry + 16].copy_from_slice(&0u64.to_le_bytes());
        let e = read(&bad).unwrap_err();
        assert!(
            matches!(e, ProtoError::Om { ref message, .. } if message.contains("overlap")),
            "{e}"
        );
        // 1,000 entries over the same bytes (each used to be a copy).
        let mut many = vec![(partition::MODEL_DEF, &b"def"[..])];
        many.extend(std::iter::repeat_n((2u32, &b"x"[..]), 999));
        let mut f = write_partitions("net", &many);
        for k in 1..1000 {
            let at = HEAD_SIZE + 8 + 24 * k + 8;
            f[at..at + 8].copy_from_slice(&0u64.to_le_bytes());
        }
        assert!(read(&f).is_err());
    }

    #[test]
    fn malformed_headers_are_errors() {
        assert!(matches!(read(b"IMOD"), Err(ProtoError::Om { .. })));
        let mut f = write("net", b"x", b"");
        f[0] = b'J';
        assert!(matches!(read(&f), Err(ProtoError::Om { offset: 0, .. })));
        let mut f = write("net", b"x", b"");
        f[184] = 0xff;
        assert!(matches!(read(&f), Err(ProtoError::Om { offset: 184, .. })));
        let mut f = write("net", b"xyz", b"");
        let n = f.len();
        f.truncate(n - 2);
        assert!(read(&f).is_err());
        for cut in 0..f.len() {
            let _ = read(&f[..cut]);
        }
    }
}
