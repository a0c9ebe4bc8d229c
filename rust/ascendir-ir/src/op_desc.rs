//! Operator descriptors (`OpDesc`): named input/output ports with tensor descs, attributes, IR
//! metadata, subgraph slots and the GE compile-state fields.

use std::sync::Arc;

use compact_str::CompactString;
use smallvec::SmallVec;

use crate::attr::{AttrMap, AttrValue};
use crate::error::{IrError, IrResult};
use crate::tensor::TensorDesc;

/// A shared string (op types, port names): one word, interned per graph so that a million
/// nodes share one copy of "Add".
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Sym(Arc<Box<str>>);

impl Sym {
    /// A new shared string.
    pub fn new(s: &str) -> Self {
        Sym(Arc::new(Box::from(s)))
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether both are the same shared copy (a cheap test before comparing text).
    pub fn ptr_eq(a: &Sym, b: &Sym) -> bool {
        Arc::ptr_eq(&a.0, &b.0)
    }
}

impl std::ops::Deref for Sym {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for Sym {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl std::borrow::Borrow<str> for Sym {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl From<&str> for Sym {
    fn from(s: &str) -> Self {
        Sym::new(s)
    }
}

impl From<String> for Sym {
    fn from(s: String) -> Self {
        Sym(Arc::new(s.into_boxed_str()))
    }
}

impl std::fmt::Display for Sym {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::fmt::Debug for Sym {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&**self.0, f)
    }
}

impl PartialEq<str> for Sym {
    fn eq(&self, other: &str) -> bool {
        **self.0 == *other
    }
}

impl PartialEq<&str> for Sym {
    fn eq(&self, other: &&str) -> bool {
        **self.0 == **other
    }
}

/// One input or output slot: its name and its descriptor.
#[derive(Clone, Debug, PartialEq)]
pub struct Port {
    /// The port name (`x`, `x0`, `__input3`, ...).
    pub name: Sym,
    /// The port's tensor descriptor (shared, copied on write).
    pub desc: Arc<TensorDesc>,
}

/// How an IR input is declared (`IrInputType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IrInputType {
    /// `INPUT`.
    Required = 0,
    /// `OPTIONAL_INPUT`.
    Optional = 1,
    /// `DYNAMIC_INPUT`.
    Dynamic = 2,
}

/// How an IR output is declared (`IrOutputType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IrOutputType {
    /// `OUTPUT`.
    Required = 0,
    /// `DYNAMIC_OUTPUT`.
    Dynamic = 1,
}

impl IrInputType {
    /// The lower-case name used by the Python API (`"required"`, `"optional"`, `"dynamic"`).
    pub fn name(self) -> &'static str {
        match self {
            IrInputType::Required => "required",
            IrInputType::Optional => "optional",
            IrInputType::Dynamic => "dynamic",
        }
    }

    /// The type called `name` (see [`IrInputType::name`]).
    pub fn from_name(name: &str) -> Option<Self> {
        [
            IrInputType::Required,
            IrInputType::Optional,
            IrInputType::Dynamic,
        ]
        .into_iter()
        .find(|t| t.name() == name)
    }
}

impl IrOutputType {
    /// The lower-case name used by the Python API (`"required"`, `"dynamic"`).
    pub fn name(self) -> &'static str {
        match self {
            IrOutputType::Required => "required",
            IrOutputType::Dynamic => "dynamic",
        }
    }

    /// The type called `name` (see [`IrOutputType::name`]).
    pub fn from_name(name: &str) -> Option<Self> {
        [IrOutputType::Required, IrOutputType::Dynamic]
            .into_iter()
            .find(|t| t.name() == name)
    }
}

/// How a subgraph IR name is declared (`SubgraphType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SubgraphType {
    /// `GRAPH`: exactly one instance slot.
    Static = 0,
    /// `DYNAMIC_GRAPH`: slots `name0, name1, ...`.
    Dynamic = 1,
}

/// The less common parts of an OpDesc, allocated only when one of them is set.
#[derive(Clone, Debug, PartialEq)]
#[allow(missing_docs)]
pub struct OpMeta {
    pub optional_inputs: Vec<Arc<str>>,
    pub ir_inputs: Vec<(Arc<str>, IrInputType)>,
    pub ir_outputs: Vec<(Arc<str>, IrOutputType)>,
    pub ir_attr_names: Vec<String>,
    pub subgraph_ir_names: Vec<(String, SubgraphType)>,
    pub subgraph_instance_names: Vec<String>,
    pub has_out_attr: bool,
    pub input_name: Vec<String>,
    pub src_name: Vec<String>,
    pub src_index: Vec<i64>,
    pub dst_name: Vec<String>,
    pub dst_index: Vec<i64>,
    pub input_offsets: Vec<i64>,
    pub output_offsets: Vec<i64>,
    pub workspace: Vec<i64>,
    pub workspace_bytes: Vec<i64>,
    pub is_input_const: Vec<bool>,
}

impl Default for OpMeta {
    fn default() -> Self {
        OpMeta {
            optional_inputs: Vec::new(),
            ir_inputs: Vec::new(),
            ir_outputs: Vec::new(),
            ir_attr_names: Vec::new(),
            subgraph_ir_names: Vec::new(),
            subgraph_instance_names: Vec::new(),
            has_out_attr: true,
            input_name: Vec::new(),
            src_name: Vec::new(),
            src_index: Vec::new(),
            dst_name: Vec::new(),
            dst_index: Vec::new(),
            input_offsets: Vec::new(),
            output_offsets: Vec::new(),
            workspace: Vec::new(),
            workspace_bytes: Vec::new(),
            is_input_const: Vec::new(),
        }
    }
}

/// Input ports: most ops have one or two, kept inline.
pub type InPorts = SmallVec<[Port; 2]>;
/// Output ports: most ops have one, kept inline.
pub type OutPorts = SmallVec<[Port; 1]>;

/// An operator descriptor (GE `OpDesc`).
#[derive(Clone, Debug, PartialEq)]
pub struct OpDesc {
    pub(crate) name: CompactString,
    pub(crate) ty: Sym,
    pub(crate) inputs: InPorts,
    pub(crate) outputs: OutPorts,
    /// The op's attributes.
    pub attrs: AttrMap,
    /// Topological id (assigned by the graph on add and on sort).
    pub id: i64,
    /// Stream id.
    pub stream_id: i64,
    meta: Option<Box<OpMeta>>,
}

/// Which side of an op a port is on, for messages and shared helpers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// Inputs.
    Input,
    /// Outputs.
    Output,
}

impl Side {
    pub(crate) fn word(self) -> &'static str {
        match self {
            Side::Input => "input",
            Side::Output => "output",
        }
    }
}

impl OpDesc {
    /// A descriptor with no ports or attributes.
    pub fn new(name: &str, ty: &str) -> Self {
        OpDesc {
            name: CompactString::from(name),
            ty: Sym::new(ty),
            inputs: InPorts::new(),
            outputs: OutPorts::new(),
            attrs: AttrMap::new(),
            id: 0,
            stream_id: 0,
            meta: None,
        }
    }

    /// A descriptor whose type is an already shared string (no allocation for the type).
    pub fn with_type_sym(name: &str, ty: Sym) -> Self {
        OpDesc {
            name: CompactString::from(name),
            ty,
            inputs: InPorts::new(),
            outputs: OutPorts::new(),
            attrs: AttrMap::new(),
            id: 0,
            stream_id: 0,
            meta: None,
        }
    }

    /// Append a port whose name is a shared string, without the duplicate-name check: for
    /// builders whose port names are known to be distinct.
    pub fn push_port(&mut self, side: Side, name: Sym, desc: Arc<TensorDesc>) {
        let port = Port { name, desc };
        match side {
            Side::Input => self.inputs.push(port),
            Side::Output => self.outputs.push(port),
        }
    }

    /// The op name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Rename the op. Inside a graph use `Graph::rename_node`, which keeps the name index.
    pub fn set_name(&mut self, name: &str) {
        self.name = CompactString::from(name);
    }

    /// The op type.
    pub fn op_type(&self) -> &str {
        &self.ty
    }

    /// The op type as a shared string.
    pub fn op_type_sym(&self) -> &Sym {
        &self.ty
    }

    /// Change the op type.
    pub fn set_type(&mut self, ty: &str) {
        self.ty = Sym::new(ty);
    }

    /// Ports on one side.
    pub fn ports(&self, side: Side) -> &[Port] {
        match side {
            Side::Input => &self.inputs,
            Side::Output => &self.outputs,
        }
    }

    pub(crate) fn ports_mut(&mut self, side: Side) -> &mut [Port] {
        match side {
            Side::Input => &mut self.inputs,
            Side::Output => &mut self.outputs,
        }
    }

    /// All input slots, including unset optional ones (`GetAllInputsSize`).
    pub fn inputs(&self) -> &[Port] {
        &self.inputs
    }

    /// All outputs.
    pub fn outputs(&self) -> &[Port] {
        &self.outputs
    }

    /// Number of input slots (including unset optional ones).
    pub fn num_inputs(&self) -> usize {
        self.inputs.len()
    }

    /// Number of inputs whose desc is valid (`GetInputsSize`).
    pub fn num_valid_inputs(&self) -> usize {
        self.inputs.iter().filter(|p| p.desc.is_valid()).count()
    }

    /// Number of outputs.
    pub fn num_outputs(&self) -> usize {
        self.outputs.len()
    }

    /// The index of the port called `name`, if any.
    pub fn port_index(&self, side: Side, name: &str) -> Option<usize> {
        self.ports(side).iter().position(|p| &*p.name == name)
    }

    /// The index of the input called `name`.
    pub fn input_index(&self, name: &str) -> Option<usize> {
        self.port_index(Side::Input, name)
    }

    /// The index of the output called `name`.
    pub fn output_index(&self, name: &str) -> Option<usize> {
        self.port_index(Side::Output, name)
    }

    /// The port at `index`, or an error naming the op and the index.
    pub fn port(&self, side: Side, index: usize) -> IrResult<&Port> {
        self.ports(side).get(index).ok_or_else(|| {
            IrError::NotFound(format!(
                "op '{}' has no {} {index} (it has {})",
                self.name,
                side.word(),
                self.ports(side).len()
            ))
        })
    }

    /// Resolve a port name to its index, or an error naming the op.
    pub fn port_index_of(&self, side: Side, name: &str) -> IrResult<usize> {
        self.port_index(side, name).ok_or_else(|| {
            IrError::NotFound(format!(
                "op '{}' has no {} named '{name}'",
                self.name,
                side.word()
            ))
        })
    }

    /// The desc of input `index`.
    pub fn input_desc(&self, index: usize) -> IrResult<&Arc<TensorDesc>> {
        Ok(&self.port(Side::Input, index)?.desc)
    }

    /// The desc of output `index`.
    pub fn output_desc(&self, index: usize) -> IrResult<&Arc<TensorDesc>> {
        Ok(&self.port(Side::Output, index)?.desc)
    }

    /// Replace the desc of port `index` (`UpdateInputDesc` / `UpdateOutputDesc`).
    pub fn set_port_desc(
        &mut self,
        side: Side,
        index: usize,
        desc: Arc<TensorDesc>,
    ) -> IrResult<()> {
        self.port(side, index)?;
        self.ports_mut(side)[index].desc = desc;
        Ok(())
    }

    /// Mutable access to the desc of port `index` (copied first if shared).
    pub fn port_desc_mut(&mut self, side: Side, index: usize) -> IrResult<&mut TensorDesc> {
        self.port(side, index)?;
        Ok(Arc::make_mut(&mut self.ports_mut(side)[index].desc))
    }

    /// `AddInputDesc(name, desc)`: an existing name updates that slot and returns its index;
    /// a new name is appended.
    pub fn add_input(&mut self, name: &str, desc: Arc<TensorDesc>) -> usize {
        if let Some(i) = self.input_index(name) {
            self.inputs[i].desc = desc;
            return i;
        }
        self.inputs.push(Port {
            name: Sym::new(name),
            desc,
        });
        self.inputs.len() - 1
    }

    /// `AddInputDesc(desc)`: appended under the automatic name `__input<N>`.
    pub fn add_input_auto(&mut self, desc: Arc<TensorDesc>) -> usize {
        let name = format!("__input{}", self.inputs.len());
        self.add_input(&name, desc)
    }

    /// `AddOptionalInputDesc`: like `add_input`, and the name is recorded as optional. Pass
    /// `TensorDesc::invalid()` for an optional input that is not set.
    pub fn add_optional_input(&mut self, name: &str, desc: Arc<TensorDesc>) -> usize {
        let index = self.add_input(name, desc);
        let meta = self.meta_mut();
        if !meta.optional_inputs.iter().any(|n| &**n == name) {
            meta.optional_inputs.push(Arc::from(name));
        }
        index
    }

    /// Record input `name` as optional (as `add_optional_input` does).
    pub fn mark_optional_input(&mut self, name: &str) {
        let meta = self.meta_mut();
        if !meta.optional_inputs.iter().any(|n| &**n == name) {
            meta.optional_inputs.push(Arc::from(name));
        }
    }

    /// Whether input `name` was declared optional.
    pub fn is_optional_input(&self, name: &str) -> bool {
        self.meta()
            .is_some_and(|m| m.optional_inputs.iter().any(|n| &**n == name))
    }

    /// `AddOutputDesc(name, desc)`: a duplicate name fails (unlike inputs, as in GE).
    pub fn add_output(&mut self, name: &str, desc: Arc<TensorDesc>) -> IrResult<usize> {
        if self.output_index(name).is_some() {
            return Err(IrError::Duplicate(format!(
                "op '{}' already has an output named '{name}'",
                self.name
            )));
        }
        self.outputs.push(Port {
            name: Sym::new(name),
            desc,
        });
        Ok(self.outputs.len() - 1)
    }

    /// Append `ports` on `side`, checking every name (against the op's ports and each other)
    /// in linear time before anything is added: `add_output` / `add_input` one by one is
    /// quadratic in the number of ports. A name that is taken fails the whole call.
    pub fn append_ports(
        &mut self,
        side: Side,
        ports: Vec<(&str, Arc<TensorDesc>)>,
    ) -> IrResult<()> {
        let mut seen: hashbrown::HashSet<&str> =
            self.ports(side).iter().map(|p| &*p.name).collect();
        let mut taken = None;
        for (name, _) in &ports {
            if !seen.insert(name) {
                taken = Some(*name);
                break;
            }
        }
        drop(seen);
        if let Some(name) = taken {
            let side = match side {
                Side::Input => "input",
                Side::Output => "output",
            };
            return Err(IrError::Duplicate(format!(
                "op '{}' already has an {side} named '{name}'",
                self.name
            )));
        }
        let new = ports.into_iter().map(|(name, desc)| Port {
            name: Sym::new(name),
            desc,
        });
        match side {
            Side::Input => self.inputs.extend(new),
            Side::Output => self.outputs.extend(new),
        }
        Ok(())
    }

    /// `AddOutputDesc(desc)`: appended under the automatic name `__output<N>`.
    pub fn add_output_auto(&mut self, desc: Arc<TensorDesc>) -> IrResult<usize> {
        let name = format!("__output{}", self.outputs.len());
        self.add_output(&name, desc)
    }

    /// Insert a port at `index` (≤ count); later ports shift by one. Fails on a duplicate name.
    pub fn insert_port(
        &mut self,
        side: Side,
        index: usize,
        name: &str,
        desc: Arc<TensorDesc>,
    ) -> IrResult<()> {
        self.insert_ports(side, index, &[(name.to_string(), desc)])
    }

    /// Insert several ports at `index` (≤ count), checking every name first.
    pub fn insert_ports(
        &mut self,
        side: Side,
        index: usize,
        ports: &[(String, Arc<TensorDesc>)],
    ) -> IrResult<()> {
        let count = self.ports(side).len();
        if index > count {
            return Err(IrError::InvalidArgument(format!(
                "op '{}': cannot insert {} at index {index}: it has only {count}",
                self.name,
                side.word()
            )));
        }
        for (k, (name, _)) in ports.iter().enumerate() {
            if self.port_index(side, name).is_some() || ports[..k].iter().any(|(n, _)| n == name) {
                return Err(IrError::Duplicate(format!(
                    "op '{}' already has an {} named '{name}'",
                    self.name,
                    side.word()
                )));
            }
        }
        let new_ports = ports.iter().map(|(name, desc)| Port {
            name: Sym::new(name),
            desc: desc.clone(),
        });
        match side {
            Side::Input => self.inputs.insert_many(index, new_ports),
            Side::Output => self.outputs.insert_many(index, new_ports),
        }
        Ok(())
    }

    /// The names `name0 .. name{n-1}` of a dynamic port group.
    pub fn dynamic_names(name: &str, count: usize) -> Vec<String> {
        (0..count).map(|i| format!("{name}{i}")).collect()
    }

    /// `AddDynamicInputDesc(name, n, push_back)`: at the back each name is added like
    /// `add_input` (an existing one is updated); at the front every name must be new.
    /// Returns the index of the first created port.
    pub fn add_dynamic_input(
        &mut self,
        name: &str,
        count: usize,
        push_back: bool,
    ) -> IrResult<usize> {
        let names = Self::dynamic_names(name, count);
        if push_back {
            let first = self.inputs.len();
            for n in &names {
                self.add_input(n, Arc::new(TensorDesc::default()));
            }
            return Ok(first);
        }
        self.insert_dynamic(Side::Input, name, count, 0)
    }

    /// `AddDynamicInputDescByIndex` / `AddDynamicOutputDesc` at a position: inserts
    /// `name0..` at `index` (≤ count), shifting later ports.
    pub fn insert_dynamic(
        &mut self,
        side: Side,
        name: &str,
        count: usize,
        index: usize,
    ) -> IrResult<usize> {
        let desc = Arc::new(TensorDesc::default());
        let ports: Vec<(String, Arc<TensorDesc>)> = Self::dynamic_names(name, count)
            .into_iter()
            .map(|n| (n, desc.clone()))
            .collect();
        self.insert_ports(side, index, &ports)?;
        Ok(index)
    }

    /// `UpdateInputName`-style rename of one port; index and desc are unchanged.
    pub fn rename_port(&mut self, side: Side, old: &str, new: &str) -> IrResult<()> {
        let index = self.port_index_of(side, old)?;
        if old != new && self.port_index(side, new).is_some() {
            return Err(IrError::Duplicate(format!(
                "op '{}' already has an {} named '{new}'",
                self.name,
                side.word()
            )));
        }
        self.ports_mut(side)[index].name = Sym::new(new);
        if side == Side::Input {
            if let Some(meta) = self.meta.as_deref_mut() {
                for n in &mut meta.optional_inputs {
                    if &**n == old {
                        *n = Arc::from(new);
                    }
                }
            }
        }
        Ok(())
    }

    /// Indices of the dynamic group `name0, name1, ...` (stops at the first gap).
    pub fn dynamic_indexes(&self, side: Side, name: &str) -> Vec<usize> {
        let mut out = Vec::new();
        let mut k = 0;
        while let Some(i) = self.port_index(side, &format!("{name}{k}")) {
            out.push(i);
            k += 1;
        }
        out
    }

    /// Remove the trailing ports so that `count` remain.
    pub fn truncate_ports(&mut self, side: Side, count: usize) {
        match side {
            Side::Input => self.inputs.truncate(count),
            Side::Output => self.outputs.truncate(count),
        }
    }

    /// The rarely used fields, if any were set.
    pub fn meta(&self) -> Option<&OpMeta> {
        self.meta.as_deref()
    }

    /// The rarely used fields, allocated on first use.
    pub fn meta_mut(&mut self) -> &mut OpMeta {
        self.meta.get_or_insert_with(Box::default)
    }

    /// The subgraph instance names, in slot order (`""` for an empty slot).
    pub fn subgraph_instance_names(&self) -> &[String] {
        self.meta().map_or(&[], |m| &m.subgraph_instance_names)
    }

    /// `AddSubgraphName(ir_name)`: registers a static IR name with one empty slot.
    pub fn add_subgraph_name(&mut self, ir_name: &str) -> IrResult<()> {
        if self
            .meta()
            .is_some_and(|m| m.subgraph_ir_names.iter().any(|(n, _)| n == ir_name))
        {
            return Err(IrError::Duplicate(format!(
                "op '{}' already has a subgraph slot named '{ir_name}'",
                self.name
            )));
        }
        let meta = self.meta_mut();
        meta.subgraph_ir_names
            .push((ir_name.to_string(), SubgraphType::Static));
        meta.subgraph_instance_names.push(String::new());
        Ok(())
    }

    /// `SetSubgraphInstanceName(index, name)`.
    pub fn set_subgraph_instance_name(&mut self, index: usize, name: &str) -> IrResult<()> {
        let op = self.name.clone();
        let slots = &mut self.meta_mut().subgraph_instance_names;
        let count = slots.len();
        let slot = slots.get_mut(index).ok_or_else(|| {
            IrError::InvalidArgument(format!(
                "op '{op}' has no subgraph slot {index} (it has {count})"
            ))
        })?;
        *slot = name.to_string();
        Ok(())
    }

    /// Set an attribute.
    pub fn set_attr(&mut self, key: &str, value: AttrValue) {
        self.attrs.insert(key.to_string(), value);
    }

    /// Read an attribute.
    pub fn attr(&self, key: &str) -> Option<&AttrValue> {
        self.attrs.get(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn desc() -> Arc<TensorDesc> {
        Arc::new(TensorDesc::default())
    }

    #[test]
    fn inputs_update_outputs_fail_on_duplicates() {
        let mut od = OpDesc::new("add", "Add");
        assert_eq!(od.add_input("x1", desc()), 0);
        assert_eq!(od.add_input("x2", desc()), 1);
        assert_eq!(od.add_input("x1", desc()), 0);
        assert_eq!(od.num_inputs(), 2);
        od.add_output("y", desc()).unwrap();
        assert!(od.add_output("y", desc()).is_err());
        assert_eq!(od.add_input_auto(desc()), 2);
        assert_eq!(&*od.inputs()[2].name, "__input2");
    }

    #[test]
    fn dynamic_inputs_front_back_and_index() {
        let mut od = OpDesc::new("c", "ConcatV2");
        od.add_input("axis", desc());
        od.add_dynamic_input("x", 2, true).unwrap();
        assert_eq!(od.input_index("x1"), Some(2));
        od.add_dynamic_input("p", 2, false).unwrap();
        assert_eq!(od.input_index("p0"), Some(0));
        assert_eq!(od.input_index("axis"), Some(2));
        assert!(od.add_dynamic_input("p", 1, false).is_err());
        od.insert_dynamic(Side::Input, "q", 1, 1).unwrap();
        assert_eq!(od.input_index("q0"), Some(1));
        assert!(od.insert_dynamic(Side::Input, "r", 1, 99).is_err());
        assert_eq!(od.dynamic_indexes(Side::Input, "x"), vec![4, 5]);
    }

    #[test]
    fn optional_and_rename() {
        let mut od = OpDesc::new("conv", "Conv2D");
        od.add_input("x", desc());
        od.add_optional_input("bias", Arc::new(TensorDesc::invalid()));
        assert_eq!(od.num_inputs(), 2);
        assert_eq!(od.num_valid_inputs(), 1);
        assert!(od.is_optional_input("bias"));
        od.rename_port(Side::Input, "bias", "b").unwrap();
        assert!(od.is_optional_input("b"));
        assert!(od.rename_port(Side::Input, "x", "b").is_err());
        assert!(od.rename_port(Side::Input, "nope", "z").is_err());
    }

    #[test]
    fn subgraph_slots() {
        let mut od = OpDesc::new("if", "If");
        od.add_subgraph_name("then_branch").unwrap();
        assert!(od.add_subgraph_name("then_branch").is_err());
        od.set_subgraph_instance_name(0, "g_then").unwrap();
        assert!(od.set_subgraph_instance_name(1, "x").is_err());
        assert_eq!(od.subgraph_instance_names(), &["g_then".to_string()]);
    }
}
