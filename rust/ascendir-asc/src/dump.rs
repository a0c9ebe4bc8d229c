//! GE's text dump of an AscGraph (`ascir.utils.debug_str`), byte for byte.

use std::fmt::Write;

use ascendir_ir::DataType;

use crate::graph::{
    AllocType, ApiType, AscGraph, AttrValue, ComputeType, ComputeUnit, MemHardware, Position,
    Tensor,
};

/// GE's dump spelling of a dtype (`float16`, `int8_t`, ... else the serial name).
pub fn dtype_dump_name(dt: DataType) -> String {
    let names = [
        "float32", "float16", "int8_t", "int32_t", "uint8_t", "", "int16_t", "uint16_t",
        "uint32_t", "int64_t", "uint64_t",
    ];
    match names.get(dt.ge_value() as usize) {
        Some(s) => (*s).to_string(),
        None => dt.serial_name().to_string(),
    }
}

fn compute_type_str(c: ComputeType) -> &'static str {
    match c {
        // GE's table has no entry for Cube.
        ComputeType::Cube => "unknown",
        other => other.name(),
    }
}

fn api_type_str(a: ApiType) -> &'static str {
    match a {
        ApiType::Buffer => "Buffer",
        ApiType::Compute => "Compute",
        ApiType::Invalid => "unknown",
    }
}

fn unit_str(u: ComputeUnit) -> &'static str {
    match u {
        ComputeUnit::None => "None",
        ComputeUnit::Mte1 => "MTE1",
        ComputeUnit::Mte2 => "MTE2",
        ComputeUnit::Mte3 => "MTE3",
        ComputeUnit::Scalar => "Scalar",
        ComputeUnit::Vector => "Vector",
        ComputeUnit::Cube => "Cube",
        ComputeUnit::Invalid => "unknown",
    }
}

fn alloc_str(a: AllocType) -> &'static str {
    match a {
        AllocType::Global => "Global",
        AllocType::L1 => "L1",
        AllocType::L2 => "L2",
        AllocType::Buffer => "Buffer",
        AllocType::Queue => "Queue",
        AllocType::Invalid => "unknown",
    }
}

fn hw_str(h: MemHardware) -> &'static str {
    match h {
        MemHardware::Gm => "GM",
        MemHardware::Ub => "UB",
        MemHardware::Invalid => "unknown",
    }
}

fn pos_str(p: Position) -> &'static str {
    match p {
        Position::Gm => "TPosition::GM",
        Position::VecIn => "TPosition::VECIN",
        Position::VecCalc => "TPosition::VECCALC",
        Position::VecOut => "TPosition::VECOUT",
        Position::Invalid => "unknown",
    }
}

fn id_str(id: i64) -> String {
    if id == -1 {
        "nil".into()
    } else {
        id.to_string()
    }
}

fn escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'"' => o.push_str("\\\""),
            b'\\' => o.push_str("\\\\"),
            b'\n' => o.push_str("\\n"),
            b'\r' => o.push_str("\\r"),
            b'\t' => o.push_str("\\t"),
            0x20..=0x7e => o.push(b as char),
            _ => {
                let _ = write!(o, "\\{:03o}", b);
            }
        }
    }
    o
}

/// The protobuf text (`DebugString`) of the `AttrDef` GE stores for an IR attribute.
pub fn attr_debug_string(v: &AttrValue) -> String {
    match v {
        AttrValue::Int(i) => format!("i: {i}\n"),
        AttrValue::Float(f) => format!("f: {}\n", *f as f32),
        AttrValue::Bool(b) => format!("b: {b}\n"),
        AttrValue::Str(s) => format!("s: \"{}\"\n", escape(s)),
        AttrValue::Expr(e) => format!("s: \"{}\"\n", escape(&e.to_string())),
        AttrValue::ListInt(l) => {
            let mut s = String::from("list {\n");
            for i in l {
                let _ = writeln!(s, "  i: {i}");
            }
            s.push_str("  val_type: VT_LIST_INT\n}\n");
            s
        }
        AttrValue::DType(d) => format!("dt: {}\n", d.ge_value()),
    }
}

impl AscGraph {
    fn axis_list(&self, s: &mut String, ids: &[i64]) {
        for a in ids {
            let name = self.find_axis(*a).map(|x| x.name.as_str()).unwrap_or("");
            s.push_str(name);
            s.push_str(", ");
        }
    }

    fn expr_list(s: &mut String, es: &[crate::expr::Expr]) {
        for e in es {
            let _ = write!(s, "{e}, ");
        }
    }

    /// GE's `DebugStr(graph, verbose)` text.
    pub fn debug_str(&self, verbose: bool) -> String {
        let mut s = String::with_capacity(256 + self.nodes.len() * 400);
        let _ = writeln!(s, "Graph: {}", self.name);
        s.push_str("Sizes:\n");
        for v in &self.size_vars {
            match v.as_num() {
                None => {
                    let _ = writeln!(s, "  {v}: VAR");
                }
                Some(r) => {
                    let _ = writeln!(s, "  {v}: CONST({})", r.floor());
                }
            }
        }
        s.push_str("Axis:\n");
        for a in &self.axes {
            let _ = write!(
                s,
                "  {}({}) : {}, size:{}, ",
                a.name,
                a.id,
                a.axis_type.dump_name(),
                a.size
            );
            if !a.from.is_empty() {
                s.push_str(", from: {");
                self.axis_list(&mut s, &a.from);
                s.push('}');
            }
            s.push('\n');
        }
        s.push_str("Nodes:\n");
        for (idx, n) in self.nodes.iter().enumerate() {
            let _ = writeln!(s, "  {}: {} ({idx})", n.name, n.op_type());
            s.push_str("    .ir_attr =  {");
            for (k, v) in &n.attr.ir_attr {
                let _ = write!(s, ".{k} = {}", attr_debug_string(v));
            }
            s.push_str("    }\n");
            s.push_str("    .axis = {");
            self.axis_list(&mut s, &n.attr.sched.axis);
            s.push_str("}\n");
            let _ = writeln!(
                s,
                "    .exec_condition = {}",
                n.attr.sched.exec_condition.name()
            );
            if verbose {
                let la = n.attr.sched.loop_axis;
                match self.find_axis(la) {
                    Some(a) => {
                        let _ = writeln!(s, "    .loop_axis = {}", a.name);
                    }
                    None => {
                        let _ = writeln!(s, "    .loop_axis = {la}");
                    }
                }
            }
            s.push_str("    .api:\n");
            let _ = writeln!(
                s,
                "      .compute_type = {}",
                compute_type_str(n.attr.api.compute_type)
            );
            if verbose {
                let _ = writeln!(s, "      .type = {}", api_type_str(n.attr.api.api_type));
                let _ = writeln!(s, "      .unit = {}", unit_str(n.attr.api.unit));
                for (i, t) in n.attr.tmp_buffers.iter().enumerate() {
                    let _ = writeln!(s, "      .tmp_buf[{i}]:");
                    let _ = writeln!(s, "        .size = {}", t.size);
                    let _ = writeln!(s, "        .id = {}", t.id);
                }
            }
            for (k, inp) in n.inputs.iter().enumerate() {
                let iname = &n.input_names[k];
                match inp.and_then(|r| self.nodes.get(r.node.index()).map(|p| (p, r))) {
                    None => {
                        let _ = writeln!(s, "    .{iname} = nil");
                    }
                    Some((p, r)) => {
                        // GE names the peer output with the consumer's output name at that index.
                        let oname = n
                            .output_names
                            .get(r.index as usize)
                            .map(String::as_str)
                            .unwrap_or("");
                        let _ = writeln!(s, "    .{iname} = {}.{oname}", p.name);
                    }
                }
            }
            for (i, t) in n.outputs.iter().enumerate() {
                self.dump_output(&mut s, &n.output_names[i], t, verbose);
            }
        }
        s
    }

    fn dump_output(&self, s: &mut String, o: &str, t: &Tensor, verbose: bool) {
        let _ = writeln!(s, "    .{o}.dtype = {}", dtype_dump_name(t.dtype));
        let _ = write!(s, "    .{o}.axis = {{");
        self.axis_list(s, &t.axis);
        s.push_str("}\n");
        let _ = write!(s, "    .{o}.repeats = {{");
        Self::expr_list(s, &t.repeats);
        s.push_str("}\n");
        let _ = write!(s, "    .{o}.strides = {{");
        Self::expr_list(s, &t.strides);
        s.push_str("}\n");
        let _ = write!(s, "    .{o}.vectorized_axis = {{");
        self.axis_list(s, &t.vectorized_axis);
        s.push_str("}\n");
        let _ = write!(s, "    .{o}.vectorized_strides = {{");
        Self::expr_list(s, &t.vectorized_strides);
        s.push_str("}\n");
        if verbose {
            let _ = writeln!(s, "    .{o}.mem:");
            let _ = writeln!(s, "      .tensor_id = {}", t.mem.tensor_id);
            let _ = writeln!(s, "      .alloc_type = {}", alloc_str(t.mem.alloc_type));
            let _ = writeln!(s, "      .hardware = {}", hw_str(t.mem.hardware));
            let _ = writeln!(s, "      .position = {}", pos_str(t.mem.position));
            match t.mem.alloc_type {
                AllocType::Buffer => {
                    let _ = writeln!(s, "    .{o}.buf:");
                    let _ = writeln!(s, "      .id = {}", t.buf.id);
                    let _ = writeln!(s, "      .reuse_id = {}", id_str(t.mem.reuse_id));
                }
                AllocType::Queue => {
                    let _ = writeln!(s, "    .{o}.que:");
                    let _ = writeln!(s, "      .id = {}", t.que.id);
                    let _ = writeln!(s, "      .depth = {}", t.que.depth);
                    let _ = writeln!(s, "      .buf_num = {}", t.que.buf_num);
                    let _ = writeln!(s, "      .reuse_id = {}", id_str(t.mem.reuse_id));
                }
                _ => {}
            }
        }
    }
}
