//! Links between anchors: the two-sided peer lists, linking and unlinking, peer rewrites,
//! neighbour queries and port insertion that keeps every link on its port.

use std::sync::Arc;

use rustc_hash::FxHashSet;
use smallvec::SmallVec;

use crate::anchor::{Anchor, InAnchor, OutAnchor, CONTROL};
use crate::error::{IrError, IrResult};
use crate::op_desc::Side;
use crate::tensor::TensorDesc;

use super::{Graph, NodeId, PeerList};

impl Graph {
    /// Remove every link of every anchor of `id`.
    pub fn unlink_node(&mut self, id: NodeId) {
        let (n_in, n_out) = {
            let n = &self.nodes[id];
            (n.in_data.len(), n.out_data.len())
        };
        for i in 0..n_in {
            let _ = self.unlink_all(Anchor::In(InAnchor::data(id, i)));
        }
        for i in 0..n_out {
            let _ = self.unlink_all(Anchor::Out(OutAnchor::data(id, i)));
        }
        let _ = self.unlink_all(Anchor::In(InAnchor::control(id)));
        let _ = self.unlink_all(Anchor::Out(OutAnchor::control(id)));
    }

    /// Unlink the data inputs of `ids` (the members of `set`, all valid) from their producers,
    /// with one pass over each producer's consumer list for the whole set: a constant read by
    /// every removed node would otherwise be scanned once per node.
    pub(crate) fn detach_data_inputs(&mut self, ids: &[NodeId], set: &FxHashSet<NodeId>) {
        let mut producers: FxHashSet<OutAnchor> = FxHashSet::default();
        for &id in ids {
            for slot in self.nodes[id].in_data.iter_mut() {
                if let Some(p) = slot.take() {
                    producers.insert(p);
                }
            }
        }
        // Each list is filtered on its own: the order of the producers does not matter.
        for p in producers {
            if let Some(list) = self.nodes[p.node].out_data.get_mut(p.index as usize) {
                list.retain(|d| !set.contains(&d.node));
            }
        }
    }

    pub(super) fn check_out(&self, a: OutAnchor) -> IrResult<()> {
        let n = self.node(a.node)?;
        if a.index == CONTROL || (a.index >= 0 && (a.index as usize) < n.out_data.len()) {
            Ok(())
        } else {
            Err(IrError::AnchorOutOfRange {
                node: n.op.name().to_string(),
                side: Side::Output,
                index: a.index,
                len: n.out_data.len(),
            })
        }
    }

    pub(super) fn check_in(&self, a: InAnchor) -> IrResult<()> {
        let n = self.node(a.node)?;
        if a.index == CONTROL || (a.index >= 0 && (a.index as usize) < n.in_data.len()) {
            Ok(())
        } else {
            Err(IrError::AnchorOutOfRange {
                node: n.op.name().to_string(),
                side: Side::Input,
                index: a.index,
                len: n.in_data.len(),
            })
        }
    }

    /// Check that an anchor exists (its node is live and the index in range).
    pub fn check_anchor(&self, a: Anchor) -> IrResult<()> {
        match a {
            Anchor::Out(o) => self.check_out(o),
            Anchor::In(i) => self.check_in(i),
        }
    }

    /// A readable anchor name for messages: `'conv1' input 2`.
    pub fn describe(&self, a: Anchor) -> String {
        let name = self
            .nodes
            .get(a.node())
            .map_or("<removed>".to_string(), |n| n.op.name().to_string());
        match a {
            Anchor::Out(o) if o.is_control() => format!("'{name}' out-control"),
            Anchor::Out(o) => format!("'{name}' output {}", o.index),
            Anchor::In(i) if i.is_control() => format!("'{name}' in-control"),
            Anchor::In(i) => format!("'{name}' input {}", i.index),
        }
    }

    /// The producer linked to an in-data anchor (any kind of peer).
    pub fn in_peer(&self, a: InAnchor) -> Option<OutAnchor> {
        if a.is_control() {
            return None;
        }
        self.nodes.get(a.node)?.in_data_peer(a.index as usize)
    }

    /// Whether the in-data anchor `a` has a peer.
    fn in_data_taken(&self, a: InAnchor) -> bool {
        !a.is_control() && self.in_peer(a).is_some()
    }

    /// `LinkTo`: link `src` to `dst`. An in-data anchor takes at most one peer (a second link
    /// fails and changes nothing); out-data fans out; control links are not deduplicated (GE).
    pub fn link(&mut self, src: OutAnchor, dst: InAnchor) -> IrResult<()> {
        self.check_out(src)?;
        self.check_in(dst)?;
        if let Some(peer) = self.in_peer(dst) {
            return Err(IrError::Link(format!(
                "{} already has a peer ({}); unlink it first",
                self.describe(Anchor::In(dst)),
                self.describe(Anchor::Out(peer))
            )));
        }
        self.push_out_peer(src, dst);
        self.push_in_peer(dst, src);
        Ok(())
    }

    fn push_out_peer(&mut self, src: OutAnchor, dst: InAnchor) {
        let n = &mut self.nodes[src.node];
        if src.is_control() {
            n.out_ctrl.push(dst);
        } else {
            n.out_data[src.index as usize].push(dst);
        }
    }

    fn push_in_peer(&mut self, dst: InAnchor, src: OutAnchor) {
        let n = &mut self.nodes[dst.node];
        if dst.is_control() {
            n.in_ctrl.push(src);
        } else {
            n.in_data[dst.index as usize] = Some(src);
        }
    }

    /// Position of `dst` in `src`'s peer list.
    fn out_slot(&self, src: OutAnchor, dst: InAnchor) -> Option<usize> {
        self.out_peers(src).iter().position(|&p| p == dst)
    }

    /// Position of `src` in `dst`'s peer list (0 for a linked in-data anchor).
    fn in_slot(&self, dst: InAnchor, src: OutAnchor) -> Option<usize> {
        if dst.is_control() {
            self.nodes[dst.node].in_ctrl.iter().position(|&p| p == src)
        } else {
            (self.in_peer(dst) == Some(src)).then_some(0)
        }
    }

    /// Peers of an output-side anchor, in link order.
    pub fn out_peers(&self, a: OutAnchor) -> &[InAnchor] {
        match self.nodes.get(a.node) {
            Some(n) if a.is_control() => &n.out_ctrl,
            Some(n) => n.out_data_peers(a.index as usize),
            None => &[],
        }
    }

    /// Peers of an input-side anchor, in link order.
    pub fn in_peers(&self, a: InAnchor) -> SmallVec<[OutAnchor; 2]> {
        match self.nodes.get(a.node) {
            Some(n) if a.is_control() => n.in_ctrl.iter().copied().collect(),
            Some(n) => n.in_data_peer(a.index as usize).into_iter().collect(),
            None => SmallVec::new(),
        }
    }

    /// Whether `src` and `dst` are linked.
    pub fn is_linked(&self, src: OutAnchor, dst: InAnchor) -> bool {
        self.nodes.contains_key(src.node) && self.out_slot(src, dst).is_some()
    }

    /// `Unlink`: remove one link between `src` and `dst`; fails if they are not linked.
    pub fn unlink(&mut self, src: OutAnchor, dst: InAnchor) -> IrResult<()> {
        self.check_out(src)?;
        self.check_in(dst)?;
        let (Some(o), Some(i)) = (self.out_slot(src, dst), self.in_slot(dst, src)) else {
            return Err(IrError::NotLinked {
                src: self.describe(Anchor::Out(src)),
                dst: self.describe(Anchor::In(dst)),
                seen_from: Side::Output,
            });
        };
        self.remove_out_slot(src, o);
        self.remove_in_slot(dst, i);
        Ok(())
    }

    fn remove_out_slot(&mut self, src: OutAnchor, slot: usize) {
        let n = &mut self.nodes[src.node];
        if src.is_control() {
            n.out_ctrl.remove(slot);
        } else {
            n.out_data[src.index as usize].remove(slot);
        }
    }

    fn remove_in_slot(&mut self, dst: InAnchor, slot: usize) {
        let n = &mut self.nodes[dst.node];
        if dst.is_control() {
            n.in_ctrl.remove(slot);
        } else {
            n.in_data[dst.index as usize] = None;
        }
    }

    /// `UnlinkAll`: remove every link of `a`.
    pub fn unlink_all(&mut self, a: Anchor) -> IrResult<()> {
        self.check_anchor(a)?;
        match a {
            Anchor::Out(src) => {
                let peers: SmallVec<[InAnchor; 4]> = self.out_peers(src).iter().copied().collect();
                for dst in peers {
                    self.unlink(src, dst)?;
                }
            }
            Anchor::In(dst) => {
                for src in self.in_peers(dst) {
                    self.unlink(src, dst)?;
                }
            }
        }
        Ok(())
    }

    /// `ReplacePeer` on an output-side anchor: `new` takes `old`'s slot in `src`'s peer list,
    /// `old` loses `src`, `new` gets `src` appended. `old` and `new` must be the same kind and
    /// `new` must not be a linked in-data anchor.
    pub fn replace_out_peer(
        &mut self,
        src: OutAnchor,
        old: InAnchor,
        new: InAnchor,
    ) -> IrResult<()> {
        self.check_out(src)?;
        self.check_in(old)?;
        self.check_in(new)?;
        if old.is_control() != new.is_control() {
            return Err(IrError::Link(format!(
                "cannot replace {} by {}: the anchors are of different kinds",
                self.describe(Anchor::In(old)),
                self.describe(Anchor::In(new))
            )));
        }
        if self.in_data_taken(new) {
            return Err(IrError::Link(format!(
                "{} already has a peer",
                self.describe(Anchor::In(new))
            )));
        }
        let (Some(o), Some(i)) = (self.out_slot(src, old), self.in_slot(old, src)) else {
            return Err(IrError::NotLinked {
                src: self.describe(Anchor::Out(src)),
                dst: self.describe(Anchor::In(old)),
                seen_from: Side::Output,
            });
        };
        match src.is_control() {
            true => self.nodes[src.node].out_ctrl[o] = new,
            false => self.nodes[src.node].out_data[src.index as usize][o] = new,
        }
        self.remove_in_slot(old, i);
        self.push_in_peer(new, src);
        Ok(())
    }

    /// `ReplacePeer` on an input-side anchor: `new` takes `old`'s slot in `dst`'s peer list.
    pub fn replace_in_peer(
        &mut self,
        dst: InAnchor,
        old: OutAnchor,
        new: OutAnchor,
    ) -> IrResult<()> {
        self.check_in(dst)?;
        self.check_out(old)?;
        self.check_out(new)?;
        if old.is_control() != new.is_control() {
            return Err(IrError::Link(format!(
                "cannot replace {} by {}: the anchors are of different kinds",
                self.describe(Anchor::Out(old)),
                self.describe(Anchor::Out(new))
            )));
        }
        let (Some(i), Some(o)) = (self.in_slot(dst, old), self.out_slot(old, dst)) else {
            return Err(IrError::NotLinked {
                src: self.describe(Anchor::Out(old)),
                dst: self.describe(Anchor::In(dst)),
                seen_from: Side::Input,
            });
        };
        match dst.is_control() {
            true => self.nodes[dst.node].in_ctrl[i] = new,
            false => self.nodes[dst.node].in_data[dst.index as usize] = Some(new),
        }
        self.remove_out_slot(old, o);
        self.push_out_peer(new, dst);
        Ok(())
    }

    /// `Anchor::Insert` seen from an output-side anchor: splice `first` (an input of the new node)
    /// and `second` (its output) into the link `src → old`: `src → first`, `second → old`, with
    /// `first` taking `old`'s slot in `src`'s list and `second` taking `src`'s slot in `old`'s.
    pub fn insert_between(
        &mut self,
        src: OutAnchor,
        old: InAnchor,
        first: InAnchor,
        second: OutAnchor,
    ) -> IrResult<()> {
        self.check_out(src)?;
        self.check_in(old)?;
        self.check_in(first)?;
        self.check_out(second)?;
        if first.is_control() != old.is_control() || second.is_control() != src.is_control() {
            return Err(IrError::Link(format!(
                "cannot insert {} / {} into {} -> {}: anchor kinds differ",
                self.describe(Anchor::In(first)),
                self.describe(Anchor::Out(second)),
                self.describe(Anchor::Out(src)),
                self.describe(Anchor::In(old))
            )));
        }
        if self.in_data_taken(first) {
            return Err(IrError::Link(format!(
                "{} already has a peer",
                self.describe(Anchor::In(first))
            )));
        }
        let (Some(o), Some(i)) = (self.out_slot(src, old), self.in_slot(old, src)) else {
            return Err(IrError::NotLinked {
                src: self.describe(Anchor::Out(src)),
                dst: self.describe(Anchor::In(old)),
                seen_from: Side::Output,
            });
        };
        match src.is_control() {
            true => self.nodes[src.node].out_ctrl[o] = first,
            false => self.nodes[src.node].out_data[src.index as usize][o] = first,
        }
        match old.is_control() {
            true => self.nodes[old.node].in_ctrl[i] = second,
            false => self.nodes[old.node].in_data[old.index as usize] = Some(second),
        }
        self.push_in_peer(first, src);
        self.push_out_peer(second, old);
        Ok(())
    }

    /// Producers of in-data anchors (data→data links only), in input order.
    pub fn in_data_nodes(&self, id: NodeId) -> IrResult<Vec<NodeId>> {
        let n = self.node(id)?;
        Ok(n.in_data
            .iter()
            .flatten()
            .filter(|p| !p.is_control())
            .map(|p| p.node)
            .collect())
    }

    /// Consumers of out-data anchors (data→data links only), in anchor then link order.
    pub fn out_data_nodes(&self, id: NodeId) -> IrResult<Vec<NodeId>> {
        let n = self.node(id)?;
        Ok(n.out_data
            .iter()
            .flat_map(|peers| peers.iter())
            .filter(|p| !p.is_control())
            .map(|p| p.node)
            .collect())
    }

    /// Every peer of the in-control anchor (a data→control producer counts, as in GE).
    pub fn in_control_nodes(&self, id: NodeId) -> IrResult<Vec<NodeId>> {
        Ok(self.node(id)?.in_ctrl.iter().map(|p| p.node).collect())
    }

    /// Every peer of the out-control anchor.
    pub fn out_control_nodes(&self, id: NodeId) -> IrResult<Vec<NodeId>> {
        Ok(self.node(id)?.out_ctrl.iter().map(|p| p.node).collect())
    }

    /// `GetInNodes`: data producers, then owners of peer out-control anchors (duplicates kept).
    pub fn in_nodes(&self, id: NodeId) -> IrResult<Vec<NodeId>> {
        let mut out = self.in_data_nodes(id)?;
        out.extend(
            self.nodes[id]
                .in_ctrl
                .iter()
                .filter(|p| p.is_control())
                .map(|p| p.node),
        );
        Ok(out)
    }

    /// `GetOutNodes`: data consumers, then in-control peers of the out-control anchor.
    pub fn out_nodes(&self, id: NodeId) -> IrResult<Vec<NodeId>> {
        let mut out = self.out_data_nodes(id)?;
        out.extend(
            self.nodes[id]
                .out_ctrl
                .iter()
                .filter(|p| p.is_control())
                .map(|p| p.node),
        );
        Ok(out)
    }

    /// Every successor over any link (data, control, data→control, control→data), in anchor
    /// order; the edges a topological order must respect.
    pub fn successors(&self, id: NodeId) -> impl Iterator<Item = NodeId> + '_ {
        let n = &self.nodes[id];
        n.out_data
            .iter()
            .flat_map(|p| p.iter())
            .chain(n.out_ctrl.iter())
            .map(|p| p.node)
    }

    /// Every predecessor over any link.
    pub fn predecessors(&self, id: NodeId) -> impl Iterator<Item = NodeId> + '_ {
        let n = &self.nodes[id];
        n.in_data
            .iter()
            .flatten()
            .chain(n.in_ctrl.iter())
            .map(|p| p.node)
    }

    /// Insert ports into a node's op at `index` and shift its anchors so that every existing
    /// link stays on the same port.
    pub fn insert_ports(
        &mut self,
        id: NodeId,
        side: Side,
        index: usize,
        ports: &[(String, Arc<TensorDesc>)],
    ) -> IrResult<()> {
        self.node_mut(id)?.op.insert_ports(side, index, ports)?;
        let shift = ports.len() as i32;
        let first = index as i32;
        // Renumber the peers' references to the moved anchors, then shift our anchor lists.
        match side {
            Side::Input => {
                let moved: Vec<(usize, OutAnchor)> = self.nodes[id]
                    .in_data
                    .iter()
                    .enumerate()
                    .skip(index)
                    .filter_map(|(i, p)| p.map(|p| (i, p)))
                    .collect();
                for (i, src) in moved {
                    let old = InAnchor::data(id, i);
                    let new = InAnchor {
                        node: id,
                        index: i as i32 + shift,
                    };
                    let list: &mut [InAnchor] = if src.is_control() {
                        &mut self.nodes[src.node].out_ctrl
                    } else {
                        &mut self.nodes[src.node].out_data[src.index as usize]
                    };
                    for p in list.iter_mut().filter(|p| **p == old) {
                        *p = new;
                    }
                }
                let n = &mut self.nodes[id];
                for _ in 0..ports.len() {
                    n.in_data.insert(index, None);
                }
            }
            Side::Output => {
                let moved: Vec<(usize, PeerList)> = self.nodes[id]
                    .out_data
                    .iter()
                    .enumerate()
                    .skip(index)
                    .map(|(i, p)| (i, p.clone()))
                    .collect();
                for (i, peers) in moved {
                    for dst in peers {
                        let old = OutAnchor::data(id, i);
                        let new = OutAnchor {
                            node: id,
                            index: i as i32 + shift,
                        };
                        let n = &mut self.nodes[dst.node];
                        if dst.is_control() {
                            for p in n.in_ctrl.iter_mut().filter(|p| **p == old) {
                                *p = new;
                            }
                        } else if n.in_data[dst.index as usize] == Some(old) {
                            n.in_data[dst.index as usize] = Some(new);
                        }
                    }
                }
                let n = &mut self.nodes[id];
                for _ in 0..ports.len() {
                    n.out_data.insert(index, PeerList::new());
                }
            }
        }
        let _ = first;
        Ok(())
    }

    /// Every link of the graph as `(source, destination)`, in node order then anchor order.
    pub fn links(&self) -> Vec<(OutAnchor, InAnchor)> {
        let mut out = Vec::new();
        for id in self.node_ids() {
            let n = &self.nodes[id];
            for (i, peers) in n.out_data.iter().enumerate() {
                out.extend(peers.iter().map(|&d| (OutAnchor::data(id, i), d)));
            }
            out.extend(n.out_ctrl.iter().map(|&d| (OutAnchor::control(id), d)));
        }
        out
    }

    /// Number of links (data and control).
    pub fn num_links(&self) -> usize {
        self.nodes
            .values()
            .map(|n| n.out_data.iter().map(|p| p.len()).sum::<usize>() + n.out_ctrl.len())
            .sum()
    }
}
