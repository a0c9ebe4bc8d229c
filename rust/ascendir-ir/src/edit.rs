//! Graph edits with GE's semantics, made atomic and lossless: every call validates first and
//! mutates second (a failure changes nothing), and removing or isolating a node never loses an
//! ordering dependency between its producers and its consumers.

use hashbrown::HashSet;

use crate::anchor::{InAnchor, OutAnchor};
use crate::attr::AttrValue;
use crate::error::{IrError, IrResult};
use crate::graph::{Graph, NodeId};
use crate::op_desc::{OpDesc, Side};

/// Above this many producer × consumer pairs, `isolate_node` routes the control dependencies
/// through a `NoOp` hub (GE's threshold).
pub const FULL_CONNECT_HUB_THRESHOLD: usize = 1000;

fn is_const(ty: &str) -> bool {
    matches!(ty, "Const" | "Constant")
}

/// Types GE treats as graph inputs (`OpTypeUtils::IsGraphInputNode`).
fn is_graph_input(ty: &str) -> bool {
    matches!(
        ty,
        "Data"
            | "RefData"
            | "AippData"
            | "AnnData"
            | "Variable"
            | "VariableV2"
            | "Const"
            | "Constant"
            | "ConstPlaceHolder"
    )
}

/// Types whose control edges `insert_before` leaves on the original consumer.
fn is_atomic_clean(ty: &str) -> bool {
    matches!(ty, "AtomicAddrClean" | "DynamicAtomicAddrClean" | "MemSet")
}

/// What `isolate_node` did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Isolation {
    /// The data links created (producer → former consumer slot).
    pub relinked: Vec<(OutAnchor, InAnchor)>,
    /// The control links created.
    pub control_links: Vec<(NodeId, NodeId)>,
    /// The `NoOp` hub created for a large full-connect.
    pub hub: Option<NodeId>,
}

impl Graph {
    fn name_of(&self, id: NodeId) -> &str {
        self.arena()[id].name()
    }

    /// A node name that is free in this graph, starting from `base`.
    pub fn unique_name(&self, base: &str) -> String {
        if self.find(base).is_none() {
            return base.to_string();
        }
        let mut k = 1usize;
        loop {
            let name = format!("{base}_{k}");
            if self.find(&name).is_none() {
                return name;
            }
            k += 1;
        }
    }

    /// Every distinct predecessor of `id` over any link (data producers in input order, then
    /// in-control peers), itself excluded.
    fn distinct_predecessors(&self, id: NodeId) -> Vec<NodeId> {
        dedup_except(self.predecessors(id), id)
    }

    /// Every distinct successor of `id` over any link, in anchor then link order, itself excluded.
    fn distinct_successors(&self, id: NodeId) -> Vec<NodeId> {
        dedup_except(self.successors(id), id)
    }

    /// The default `io_map`: output 0 takes the first connected input fed by a data link from a
    /// non-`Const` producer (GE's `ComputeGraph::IsolateNode` choice).
    fn default_io_map(&self, id: NodeId) -> Vec<i64> {
        let n = &self.arena()[id];
        if n.num_out_data() == 0 {
            return Vec::new();
        }
        for (i, p) in n.in_data.iter().enumerate() {
            if let Some(p) = p {
                if !p.is_control() && !is_const(self.arena()[p.node].op_type()) {
                    return vec![i as i64];
                }
            }
        }
        Vec::new()
    }

    /// `IsolateNode(node, io_map)` made lossless: the data consumers of output `i` are re-linked
    /// to the producer of input `io_map[i]` (negative = none; `None` = GE's default: output 0
    /// takes the first connected non-`Const` data producer, other outputs are unlinked); then
    /// every producer (data, control, data→control or control→data) gets a control link to
    /// every consumer it is not linked to already, through a `NoOp` hub `<name>_noop` when
    /// producers × consumers exceed 1000 and their sum (GE's full-connect rule); no duplicate
    /// link is created.
    /// Finally every link of the node is removed; the node stays in the graph.
    pub fn isolate_node(&mut self, id: NodeId, io_map: Option<&[i64]>) -> IrResult<Isolation> {
        self.isolate_impl(id, io_map, &[])
    }

    fn isolate_impl(
        &mut self,
        id: NodeId,
        io_map: Option<&[i64]>,
        skip_preds: &[NodeId],
    ) -> IrResult<Isolation> {
        let n = self.node(id)?;
        let (n_in, n_out) = (n.num_in_data(), n.num_out_data());
        let map = match io_map {
            Some(m) => {
                if m.len() > n_out {
                    return Err(IrError::InvalidArgument(format!(
                        "io_map of '{}' has {} entries but the node has {n_out} outputs",
                        n.name(),
                        m.len()
                    )));
                }
                if let Some(bad) = m.iter().find(|&&j| j >= n_in as i64) {
                    return Err(IrError::InvalidArgument(format!(
                        "io_map of '{}' names input {bad} but the node has {n_in} inputs",
                        n.name()
                    )));
                }
                m.to_vec()
            }
            None => self.default_io_map(id),
        };
        let n = &self.arena()[id];
        // Data relink plan: (producer, consumer slot).
        let mut relinked = Vec::new();
        for (i, &j) in map.iter().enumerate() {
            if j < 0 {
                continue;
            }
            let Some(src) = n.in_data[j as usize].filter(|p| !p.is_control()) else {
                continue;
            };
            for &dst in n.out_data[i].iter().filter(|d| !d.is_control()) {
                if dst.node != id {
                    relinked.push((src, dst));
                }
            }
        }
        let preds: Vec<NodeId> = self
            .distinct_predecessors(id)
            .into_iter()
            .filter(|p| !skip_preds.contains(p))
            .collect();
        let succs = self.distinct_successors(id);
        // Whether `p` already links to `c` directly (or will, through a planned data relink):
        // checked on the consumer side, whose in-degree is small.
        let linked = |p: NodeId, c: NodeId| {
            relinked.iter().any(|(s, d)| s.node == p && d.node == c)
                || self.predecessors(c).any(|x| x == p)
        };
        let mut sorted_preds = preds.clone();
        sorted_preds.sort_by(|a, b| self.name_of(*a).cmp(self.name_of(*b)));
        let mut sorted_succs = succs.clone();
        sorted_succs.sort_by(|a, b| self.name_of(*a).cmp(self.name_of(*b)));
        let mut pairs = Vec::new();
        for &p in &sorted_preds {
            for &c in &sorted_succs {
                if p != c && !linked(p, c) {
                    pairs.push((p, c));
                }
            }
        }
        // GE's rule on the whole producer and consumer sets; an unused hub is not created.
        let full = preds.len() * succs.len();
        let use_hub = full > FULL_CONNECT_HUB_THRESHOLD
            && full > preds.len() + succs.len()
            && !pairs.is_empty();
        let hub_name = use_hub.then(|| self.unique_name(&format!("{}_noop", self.name_of(id))));
        // Graph outputs naming a relinked output follow its data to the producer, as the
        // NetOutput's input does.
        let n = &self.arena()[id];
        let outputs_follow: Vec<((NodeId, i32), OutAnchor)> = map
            .iter()
            .enumerate()
            .filter_map(|(i, &j)| {
                let src = n.in_data[usize::try_from(j).ok()?].filter(|p| !p.is_control())?;
                Some(((id, i as i32), src))
            })
            .filter(|(entry, _)| self.outputs().contains(entry))
            .collect();
        // Mutate: nothing below can fail.
        for &(src, dst) in &relinked {
            let old = self.in_peer(dst).expect("planned from a live link");
            self.unlink(old, dst).expect("linked");
            self.link(src, dst).expect("slot freed above");
        }
        for (entry, src) in outputs_follow {
            self.replace_output(entry, (src.node, src.index))
                .expect("a live producer's output");
        }
        self.unlink_node(id);
        let mut control_links = Vec::new();
        let mut hub = None;
        if let Some(name) = hub_name {
            let h = self
                .add_node(OpDesc::new(&name, "NoOp"))
                .expect("free name");
            hub = Some(h);
            let pending: HashSet<(NodeId, NodeId)> = pairs.iter().copied().collect();
            for &p in &sorted_preds {
                if sorted_succs.iter().any(|&c| pending.contains(&(p, c))) {
                    self.link(OutAnchor::control(p), InAnchor::control(h))
                        .expect("control");
                    control_links.push((p, h));
                }
            }
            for &c in &sorted_succs {
                if sorted_preds.iter().any(|&p| pending.contains(&(p, c))) {
                    self.link(OutAnchor::control(h), InAnchor::control(c))
                        .expect("control");
                    control_links.push((h, c));
                }
            }
        } else {
            for &(p, c) in &pairs {
                self.link(OutAnchor::control(p), InAnchor::control(c))
                    .expect("control");
                control_links.push((p, c));
            }
        }
        Ok(Isolation {
            relinked,
            control_links,
            hub,
        })
    }

    /// GE `RemoveNode`, lossless and atomic: the links from `Const`/`Constant` producers without
    /// any producer of their own are dropped (such a constant orders nothing), the node is isolated with the default `io_map`
    /// (see [`Graph::isolate_node`]), erased, and every such constant left without any
    /// consumer is erased too. Returns the names of those constants.
    pub fn remove_node(&mut self, id: NodeId) -> IrResult<Vec<String>> {
        let n = self.node(id)?;
        let mut consts = Vec::new();
        for p in n.in_data.iter().flatten() {
            if !p.is_control()
                && p.node != id
                && is_const(self.arena()[p.node].op_type())
                && self.predecessors(p.node).next().is_none()
                && !consts.contains(&p.node)
            {
                consts.push(p.node);
            }
        }
        self.isolate_impl(id, None, &consts)?;
        self.erase_node(id)?;
        let mut removed = Vec::new();
        for c in consts {
            if self.successors(c).next().is_none() {
                removed.push(self.erase_node(c)?.name().to_string());
            }
        }
        Ok(removed)
    }

    /// Replace `old` by a new node made from `op` (GE `ReplaceNodeAnchors` + remove): the new
    /// node is placed where `old` was (and takes its id), every data link of `old` moves to the
    /// same input/output index of the new node (keeping its place in the peer's list), every
    /// control link moves too, graph input and output entries follow (appended; a target entry is dropped), and `old` is
    /// erased. `op` may
    /// reuse `old`'s name. Fails (changing nothing) when the new op lacks a port that is linked
    /// on `old`, or its name is taken by another node.
    pub fn replace_node(&mut self, old: NodeId, op: OpDesc) -> IrResult<NodeId> {
        let n = self.node(old)?;
        let old_name = n.name().to_string();
        if let Some(last) = n.in_data.iter().rposition(|p| p.is_some()) {
            if last >= op.num_inputs() {
                return Err(IrError::InvalidArgument(format!(
                    "cannot replace '{old_name}' by '{}': input {last} is linked but the new op has {} inputs",
                    op.name(),
                    op.num_inputs()
                )));
            }
        }
        if let Some(last) = n.out_data.iter().rposition(|p| !p.is_empty()) {
            if last >= op.num_outputs() {
                return Err(IrError::InvalidArgument(format!(
                    "cannot replace '{old_name}' by '{}': output {last} is linked but the new op has {} outputs",
                    op.name(),
                    op.num_outputs()
                )));
            }
        }
        if op.name().is_empty() {
            return Err(IrError::InvalidArgument(
                "the replacement op needs a name".into(),
            ));
        }
        if op.name() != old_name && self.find(op.name()).is_some() {
            return Err(IrError::Duplicate(format!(
                "graph '{}' already has a node named '{}'",
                self.name(),
                op.name()
            )));
        }
        let was_input = self.inputs().contains(&old);
        let outputs: Vec<i32> = self
            .outputs()
            .iter()
            .filter(|(o, _)| *o == old)
            .map(|&(_, i)| i)
            .collect();
        // Mutate.
        if op.name() == old_name {
            let tmp = self.unique_name(&format!("{old_name}__replaced"));
            self.rename_node(old, &tmp).expect("free name");
        }
        let new = self.insert_node_after(old, op).expect("validated");
        let n = self.arena()[old].clone();
        for (i, src) in n.in_data.iter().enumerate() {
            if let Some(src) = *src {
                self.replace_out_peer(src, InAnchor::data(old, i), InAnchor::data(new, i))
                    .expect("linked");
            }
        }
        for &src in n.in_ctrl.iter() {
            self.replace_out_peer(src, InAnchor::control(old), InAnchor::control(new))
                .expect("linked");
        }
        // A link from `old` to itself was moved to the new node's input above.
        let moved = |a: InAnchor| {
            if a.node == old {
                InAnchor {
                    node: new,
                    index: a.index,
                }
            } else {
                a
            }
        };
        for (i, peers) in n.out_data.iter().enumerate() {
            for &dst in peers.iter() {
                self.replace_in_peer(moved(dst), OutAnchor::data(old, i), OutAnchor::data(new, i))
                    .expect("linked");
            }
        }
        for &dst in n.out_ctrl.iter() {
            self.replace_in_peer(moved(dst), OutAnchor::control(old), OutAnchor::control(new))
                .expect("linked");
        }
        self.erase_node(old).expect("live");
        if was_input {
            self.add_input_node(new).expect("live");
        }
        for i in outputs {
            if (i as usize) < self.arena()[new].num_out_data() {
                self.add_output_node(new, i).expect("checked");
            }
        }
        Ok(new)
    }

    /// `NodeUtils::MoveOutputEdges(origin, new)`: both must have the same number of outputs;
    /// every consumer of output `i` of `origin` (data or data→control) moves to output `i` of
    /// `new`, then every out-control consumer moves. Consumers keep their slot.
    pub fn move_output_edges(&mut self, origin: NodeId, new: NodeId) -> IrResult<()> {
        let (a, b) = (self.node(origin)?, self.node(new)?);
        if a.num_out_data() != b.num_out_data() {
            return Err(IrError::InvalidArgument(format!(
                "cannot move the outputs of '{}' ({} outputs) to '{}' ({} outputs)",
                a.name(),
                a.num_out_data(),
                b.name(),
                b.num_out_data()
            )));
        }
        if origin == new {
            return Ok(());
        }
        let n = a.clone();
        for (i, peers) in n.out_data.iter().enumerate() {
            for &dst in peers.iter() {
                self.replace_in_peer(dst, OutAnchor::data(origin, i), OutAnchor::data(new, i))
                    .expect("linked");
            }
        }
        for &dst in n.out_ctrl.iter() {
            self.replace_in_peer(dst, OutAnchor::control(origin), OutAnchor::control(new))
                .expect("linked");
        }
        Ok(())
    }

    fn check_new_op(&self, op: &OpDesc, in_idx: usize, out_idx: usize) -> IrResult<()> {
        if op.name().is_empty() {
            return Err(IrError::InvalidArgument(
                "the inserted op needs a name".into(),
            ));
        }
        if self.find(op.name()).is_some() {
            return Err(IrError::Duplicate(format!(
                "graph '{}' already has a node named '{}'",
                self.name(),
                op.name()
            )));
        }
        if in_idx >= op.num_inputs() || out_idx >= op.num_outputs() {
            return Err(IrError::InvalidArgument(format!(
                "op '{}' has {} inputs and {} outputs; input {in_idx} and output {out_idx} are needed",
                op.name(),
                op.num_inputs(),
                op.num_outputs()
            )));
        }
        Ok(())
    }

    /// `InsertNodeBetweenDataAnchors`: splice a new node made from `op` into the data link
    /// `src → dst` (`src → new.in[in_idx]`, `new.out[out_idx] → dst`, each taking the old slot
    /// in the peer lists). The new node is placed right after `src`'s node.
    pub fn insert_between_data(
        &mut self,
        src: OutAnchor,
        dst: InAnchor,
        op: OpDesc,
        in_idx: usize,
        out_idx: usize,
    ) -> IrResult<NodeId> {
        self.check_anchor(crate::anchor::Anchor::Out(src))?;
        self.check_anchor(crate::anchor::Anchor::In(dst))?;
        if src.is_control() || dst.is_control() || !self.is_linked(src, dst) {
            return Err(IrError::Link(format!(
                "{} and {} are not linked by a data link",
                self.describe(crate::anchor::Anchor::Out(src)),
                self.describe(crate::anchor::Anchor::In(dst))
            )));
        }
        self.check_new_op(&op, in_idx, out_idx)?;
        let new = self.insert_node_after(src.node, op).expect("validated");
        self.insert_between(
            src,
            dst,
            InAnchor::data(new, in_idx),
            OutAnchor::data(new, out_idx),
        )
        .expect("validated");
        Ok(new)
    }

    /// `GraphUtils::InsertNodeAfter(src, dsts, op, in_idx, out_idx)`: a new node right after
    /// `src`'s node, fed by `src`; the consumers `dsts` (all data consumers of `src` when
    /// empty) move to `new.out[out_idx]`, and every out-control link of `src`'s node moves to
    /// the new node (not for `Switch`/`RefSwitch`/`SwitchN`, as in GE).
    pub fn insert_after(
        &mut self,
        src: OutAnchor,
        dsts: &[InAnchor],
        op: OpDesc,
        in_idx: usize,
        out_idx: usize,
    ) -> IrResult<NodeId> {
        self.check_anchor(crate::anchor::Anchor::Out(src))?;
        if src.is_control() {
            return Err(IrError::InvalidArgument(format!(
                "insert_after needs a data output, not {}",
                self.describe(crate::anchor::Anchor::Out(src))
            )));
        }
        let dsts: Vec<InAnchor> = if dsts.is_empty() {
            self.out_peers(src)
                .iter()
                .copied()
                .filter(|d| !d.is_control())
                .collect()
        } else {
            for &d in dsts {
                if !self.is_linked(src, d) {
                    return Err(IrError::NotLinked {
                        src: self.describe(crate::anchor::Anchor::Out(src)),
                        dst: self.describe(crate::anchor::Anchor::In(d)),
                        seen_from: Side::Output,
                    });
                }
            }
            dsts.to_vec()
        };
        self.check_new_op(&op, in_idx, out_idx)?;
        let move_ctrl = !matches!(
            self.arena()[src.node].op_type(),
            "Switch" | "RefSwitch" | "SwitchN"
        );
        let new = self.insert_node_after(src.node, op).expect("validated");
        self.link(src, InAnchor::data(new, in_idx))
            .expect("fresh input");
        for d in dsts {
            self.replace_in_peer(d, src, OutAnchor::data(new, out_idx))
                .expect("linked");
        }
        if move_ctrl {
            let ctrl: Vec<InAnchor> = self.arena()[src.node].out_ctrl.to_vec();
            for d in ctrl {
                self.replace_in_peer(d, OutAnchor::control(src.node), OutAnchor::control(new))
                    .expect("linked");
            }
        }
        Ok(new)
    }

    /// `GraphUtils::InsertNodeBefore(dst, op, in_idx, out_idx)`: a new node right before
    /// `dst`'s node between `dst` and its producer (`producer → new.in[in_idx]`,
    /// `new.out[out_idx] → dst`); `dst`'s node's in-control links move to the new node, except
    /// those from atomic-clean nodes.
    pub fn insert_before(
        &mut self,
        dst: InAnchor,
        op: OpDesc,
        in_idx: usize,
        out_idx: usize,
    ) -> IrResult<NodeId> {
        self.check_anchor(crate::anchor::Anchor::In(dst))?;
        let Some(src) = self.in_peer(dst).filter(|p| !p.is_control()) else {
            return Err(IrError::Link(format!(
                "{} has no data producer",
                self.describe(crate::anchor::Anchor::In(dst))
            )));
        };
        self.check_new_op(&op, in_idx, out_idx)?;
        let new = self.insert_node_before(dst.node, op).expect("validated");
        self.insert_between(
            src,
            dst,
            InAnchor::data(new, in_idx),
            OutAnchor::data(new, out_idx),
        )
        .expect("validated");
        let ctrl: Vec<OutAnchor> = self.arena()[dst.node].in_ctrl.to_vec();
        for s in ctrl {
            if !is_atomic_clean(self.arena()[s.node].op_type()) {
                self.replace_out_peer(s, InAnchor::control(dst.node), InAnchor::control(new))
                    .expect("linked");
            }
        }
        Ok(new)
    }

    /// GE `IsSupportFuse`: `Ok(())` when the nodes can be fused, else the reason.
    pub fn check_fusable(&self, nodes: &[NodeId]) -> IrResult<()> {
        self.fuse_plan(nodes).map(|_| ())
    }

    fn fuse_plan(&self, nodes: &[NodeId]) -> IrResult<Vec<(String, String)>> {
        let names = || {
            nodes
                .iter()
                .map(|&n| format!("[{}]", self.name_of(n)))
                .collect::<String>()
        };
        let conflict = |key: &str, values: &[String]| {
            IrError::InvalidArgument(format!(
                "fusion is not supported because there are multiple {key} {} between nodes {}",
                values.iter().map(|v| format!("[{v}]")).collect::<String>(),
                names()
            ))
        };
        for &n in nodes {
            self.node(n)?;
        }
        let mut inherit = Vec::new();
        // User stream label: nodes without one count as "" (graph inputs are skipped).
        let mut labels: Vec<String> = Vec::new();
        for &n in nodes {
            let op = self.arena()[n].op();
            if is_graph_input(op.op_type()) {
                continue;
            }
            let v = op
                .attr("_user_stream_label")
                .and_then(|v| v.as_str())
                .unwrap_or("")
                .to_string();
            if !labels.contains(&v) {
                labels.push(v);
            }
        }
        if labels.len() > 1 {
            return Err(conflict("_user_stream_label", &labels));
        }
        if let Some(l) = labels.first().filter(|l| !l.is_empty()) {
            inherit.push(("_user_stream_label".to_string(), l.clone()));
        }
        for key in [
            "_super_kernel_scope",
            "_super_kernel_options",
            "_op_aicore_num",
            "_op_vectorcore_num",
        ] {
            let mut values: Vec<String> = Vec::new();
            for &n in nodes {
                if let Some(v) = self.arena()[n].op().attr(key).and_then(|v| v.as_str()) {
                    if !values.iter().any(|x| x == v) {
                        values.push(v.to_string());
                    }
                }
            }
            if values.len() > 1 {
                return Err(conflict(key, &values));
            }
            if let Some(v) = values.pop() {
                inherit.push((key.to_string(), v));
            }
        }
        for (key, max) in [("_deterministic", 1), ("_deterministic_level", 3)] {
            let mut values: Vec<i32> = Vec::new();
            for &n in nodes {
                let Some(v) = self.arena()[n].op().attr(key) else {
                    continue;
                };
                let Some(text) = v.as_str() else {
                    return Err(IrError::InvalidArgument(format!(
                        "fusion is not supported because attr {key} of node [{}] is not string.",
                        self.name_of(n)
                    )));
                };
                match parse_stoi(text).filter(|x| (0..=max).contains(x)) {
                    Some(x) => {
                        if !values.contains(&x) {
                            values.push(x);
                        }
                    }
                    None => {
                        let allowed: Vec<String> = (0..=max).map(|i| i.to_string()).collect();
                        return Err(IrError::InvalidArgument(format!(
                            "fusion is not supported because attr {key} of node [{}] should be in {{{}}}, but got {text}.",
                            self.name_of(n),
                            allowed.join(",")
                        )));
                    }
                }
            }
            if values.len() > 1 {
                let v: Vec<String> = values.iter().map(|x| x.to_string()).collect();
                return Err(conflict(key, &v));
            }
            if let Some(x) = values.pop() {
                inherit.push((format!("?{key}"), x.to_string()));
            }
        }
        Ok(inherit)
    }

    /// GE `FuseNodeKeepTopo(originals, fusion_ops)`: after checking `IsSupportFuse`, the fusion
    /// ops inherit `_user_stream_label`, `_super_kernel_scope`, `_super_kernel_options`,
    /// `_op_aicore_num`, `_op_vectorcore_num` (overwritten) and `_deterministic` /
    /// `_deterministic_level` (a fusion op that already has a different or unparsable value
    /// fails the call), and become nodes right after the original with the smallest id (first
    /// in argument order on ties), in the given order, all with that id. Originals and links are
    /// untouched. Atomic: any conflict fails before anything is added (GE may leave inherited
    /// attributes on the ops).
    pub fn fuse_nodes(
        &mut self,
        originals: &[NodeId],
        mut fusion_ops: Vec<OpDesc>,
    ) -> IrResult<Vec<NodeId>> {
        if originals.is_empty() {
            return Err(IrError::InvalidArgument(
                "fuse_nodes needs at least one original node".into(),
            ));
        }
        let plan = self.fuse_plan(originals)?;
        let mut seen: Vec<&str> = Vec::new();
        for op in &fusion_ops {
            if op.name().is_empty() || self.find(op.name()).is_some() || seen.contains(&op.name()) {
                return Err(IrError::Duplicate(format!(
                    "fusion op name '{}' is empty or already used in graph '{}'",
                    op.name(),
                    self.name()
                )));
            }
            seen.push(op.name());
        }
        for (key, value) in &plan {
            if let Some(key) = key.strip_prefix('?') {
                let expected: i32 = value.parse().expect("formatted above");
                for op in &fusion_ops {
                    if let Some(v) = op.attr(key) {
                        let ok = v.as_str().and_then(parse_stoi) == Some(expected);
                        if !ok {
                            return Err(IrError::InvalidArgument(format!(
                                "cannot fuse: fusion op '{}' has {key} {v:?}, the original nodes have {expected}",
                                op.name()
                            )));
                        }
                    }
                }
            }
        }
        for op in fusion_ops.iter_mut() {
            for (key, value) in &plan {
                match key.strip_prefix('?') {
                    Some(k) => {
                        if op.attr(k).is_none() {
                            op.set_attr(k, AttrValue::String(value.clone()));
                        }
                    }
                    None => op.set_attr(key, AttrValue::String(value.clone())),
                }
            }
        }
        let anchor = *originals
            .iter()
            .min_by_key(|&&n| self.arena()[n].op().id)
            .expect("non-empty");
        let mut after = anchor;
        let mut out = Vec::with_capacity(fusion_ops.len());
        for op in fusion_ops {
            // Each new node takes the id of the node it follows, i.e. the anchor's id.
            let id = self.insert_node_after(after, op).expect("validated");
            after = id;
            out.push(id);
        }
        Ok(out)
    }
}

/// The distinct items of `items` other than `skip`, in first-seen order.
fn dedup_except(items: impl Iterator<Item = NodeId>, skip: NodeId) -> Vec<NodeId> {
    let mut out: Vec<NodeId> = Vec::new();
    let mut seen: Option<HashSet<NodeId>> = None;
    for x in items {
        if x == skip {
            continue;
        }
        let fresh = match seen.as_mut() {
            Some(set) => set.insert(x),
            None => {
                let fresh = !out.contains(&x);
                if fresh && out.len() >= 32 {
                    seen = Some(out.iter().copied().chain([x]).collect());
                }
                fresh
            }
        };
        if fresh {
            out.push(x);
        }
    }
    out
}

/// C++ `std::stoi` with the whole string consumed: leading whitespace, optional sign, digits.
fn parse_stoi(text: &str) -> Option<i32> {
    let t = text.trim_start();
    let digits = t.strip_prefix(['+', '-']).unwrap_or(t);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    t.parse::<i64>().ok().and_then(|v| i32::try_from(v).ok())
}

#[cfg(test)]
mod tests {
    use super::parse_stoi;

    #[test]
    fn stoi_like_cpp() {
        assert_eq!(parse_stoi("1"), Some(1));
        assert_eq!(parse_stoi(" +1"), Some(1));
        assert_eq!(parse_stoi("1 "), None);
        assert_eq!(parse_stoi("x"), None);
        assert_eq!(parse_stoi(""), None);
        assert_eq!(parse_stoi("99999999999"), None);
    }
}
