//! GE's `DelayTopoSort`: consumers of long-lived producers (consts, variables, graph inputs)
//! moved next to their first use.

use crate::graph::Graph;

use super::{slot, TopoSorter, FLAG_LONG_LIVED, NONE};

impl TopoSorter {
    /// GE's `DelayTopoSort` on `self.out` (ids = positions in `self.out`).
    pub(super) fn delay(&mut self, g: &Graph) {
        let nodes = g.arena();
        let n = self.out.len();
        // Positions in the sorted sequence (reuse `pos`).
        for (i, &id) in self.out.iter().enumerate() {
            self.pos[slot(id)] = i as u32;
        }
        self.chain_head.clear();
        self.chain_head.extend(0..n as u32);
        self.chain_tail.clear();
        self.chain_tail.extend(0..n as u32);
        self.chain_next.clear();
        self.chain_next.resize(n, NONE);
        self.may_delay.clear();
        self.may_delay.resize(n, true);
        let mut moved = 0usize;
        for i in 0..n {
            if !self.may_delay[i] || self.chain_head[i] == NONE {
                continue;
            }
            let single = self.chain_head[i] == self.chain_tail[i];
            let last = self.out[self.chain_tail[i] as usize];
            let ln = &nodes[last];
            if single {
                // Every connected data input must be long-lived, and there must be one.
                let mut matched = false;
                let mut all = true;
                for p in ln.in_data.iter().flatten().filter(|p| !p.is_control()) {
                    if self.flags[slot(p.node)] & FLAG_LONG_LIVED != 0 {
                        matched = true;
                    } else {
                        all = false;
                        break;
                    }
                }
                if !(all && matched) {
                    continue;
                }
            } else if ln.in_data.len() != 1 {
                continue;
            }
            // Target: the smallest position among the out-nodes (GE's `min_index == 0` quirk
            // kept). GE looks at data consumers and control consumers only; we also count the
            // data→control and control→data consumers, so that no link ends up backwards.
            let mut out_count = 0usize;
            let mut min_index: u32 = 0;
            let any = ln
                .out_data
                .iter()
                .any(|p| p.iter().any(|a| !a.is_control()))
                || ln.out_ctrl.iter().any(|a| a.is_control());
            let outs = ln
                .out_data
                .iter()
                .flat_map(|p| p.iter())
                .chain(ln.out_ctrl.iter());
            for p in outs {
                out_count += 1;
                let id = self.pos[slot(p.node)];
                if min_index == 0 || id < min_index {
                    min_index = id;
                }
            }
            if !any {
                continue;
            }
            let target = min_index as usize;
            if target < n && target > i + 1 {
                // Prepend chain i to chain target.
                let (h, t) = (self.chain_head[i], self.chain_tail[i]);
                self.chain_next[t as usize] = self.chain_head[target];
                self.chain_head[target] = h;
                if out_count > 1 {
                    self.may_delay[target] = false;
                }
                self.chain_head[i] = NONE;
                self.chain_tail[i] = NONE;
                moved += 1;
            }
        }
        if moved == 0 {
            return;
        }
        let mut result = Vec::with_capacity(n);
        for i in 0..n {
            let mut c = self.chain_head[i];
            while c != NONE {
                result.push(self.out[c as usize]);
                c = self.chain_next[c as usize];
            }
        }
        self.out = result;
    }
}
