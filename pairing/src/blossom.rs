//! Maximum-weight perfect matching in a general graph (Edmonds' blossom algorithm with dual
//! variables, O(n³)), kept warm between solves: changing the weights around a few vertices and
//! solving again costs O(n²) per changed vertex instead of a new O(n³) run. The Dutch system
//! pairs a round by a sequence of such small changes (one per decision it fixes), so this is
//! what makes every criterion exact without a search.
//!
//! The graph is dense (an adjacency matrix): in a Swiss round most players may meet most others.
//! Dual values are kept doubled so that every quantity stays an integer: an edge's slack is
//! `dual[i] + dual[j] - 2 w(i, j)`, plus twice the duals of the blossoms holding both ends.

use crate::wide::Wide;

const NONE: usize = usize::MAX;

const FREE: u8 = 0;
const OUTER: u8 = 1;
const INNER: u8 = 2;
/// A breadcrumb left while tracing two paths towards their roots.
const SEEN: u8 = 5;

pub struct Matcher<const L: usize> {
    n: usize,
    /// Twice each edge's weight (what slacks subtract).
    weight2: Vec<Wide<L>>,
    edge: Vec<bool>,
    /// For each vertex, the endpoint (`from * n + to`, `to` being the mate) of its matched
    /// edge, or NONE.
    mate: Vec<usize>,
    label: Vec<u8>,
    labelend: Vec<usize>,
    inblossom: Vec<usize>,
    parent: Vec<usize>,
    childs: Vec<Vec<usize>>,
    base: Vec<usize>,
    endps: Vec<Vec<usize>>,
    bestedge: Vec<usize>,
    /// The slack of `bestedge`, kept current (duals change only between scans).
    bestslack: Vec<Wide<L>>,
    bestedges: Vec<Option<Vec<usize>>>,
    unused: Vec<usize>,
    dual: Vec<Wide<L>>,
    /// The stage in which each edge was found tight (cleared for free by a new stage).
    allow: Vec<u32>,
    stage_no: u32,
    queue: Vec<usize>,
    dirty: Vec<bool>,
}

/// The matching cannot be made perfect with the edges present.
#[derive(Debug, PartialEq, Eq)]
pub struct NoPerfectMatching;

impl<const L: usize> Matcher<L> {
    /// `n` vertices and no edges.
    pub fn new(n: usize) -> Self {
        assert!(
            n % 2 == 0,
            "a perfect matching needs an even number of vertices"
        );
        Matcher {
            n,
            weight2: vec![Wide::ZERO; n * n],
            edge: vec![false; n * n],
            mate: vec![NONE; n],
            label: vec![FREE; 2 * n],
            labelend: vec![NONE; 2 * n],
            inblossom: (0..n).collect(),
            parent: vec![NONE; 2 * n],
            childs: vec![Vec::new(); 2 * n],
            base: (0..n).chain(std::iter::repeat(NONE).take(n)).collect(),
            endps: vec![Vec::new(); 2 * n],
            bestedge: vec![NONE; 2 * n],
            bestslack: vec![Wide::ZERO; 2 * n],
            bestedges: vec![None; 2 * n],
            unused: (n..2 * n).collect(),
            dual: vec![Wide::ZERO; 2 * n],
            allow: vec![0; n * n],
            stage_no: 0,
            queue: Vec::new(),
            dirty: vec![true; n],
        }
    }

    pub fn len(&self) -> usize {
        self.n
    }

    /// Sets the edge `a`-`b` (None removes it).
    pub fn set(&mut self, a: usize, b: usize, w: Option<Wide<L>>) {
        debug_assert!(a != b);
        let k = a * self.n + b;
        let unchanged = match w {
            None => !self.edge[k],
            Some(w) => self.edge[k] && self.weight2[k] == w + w,
        };
        if unchanged {
            return;
        }
        self.loosen(a);
        let r = b * self.n + a;
        self.edge[k] = w.is_some();
        self.edge[r] = w.is_some();
        let w = w.unwrap_or(Wide::ZERO);
        self.weight2[k] = w + w;
        self.weight2[r] = w + w;
    }

    /// Removes the edge `a`-`b`. Unlike a change of weight this keeps the duals and the rest
    /// of the matching: fewer edges only loosen the constraints, so only a blossom whose cycle
    /// may run through the edge is dissolved, and the edge is unmatched if it was matched.
    pub fn remove(&mut self, a: usize, b: usize) {
        let n = self.n;
        if !self.edge[a * n + b] {
            return;
        }
        while self.inblossom[a] == self.inblossom[b] && self.inblossom[a] >= n {
            self.dissolve_top(self.inblossom[a]);
        }
        if self.mate[a] == a * n + b {
            self.unmatch(a);
        }
        self.edge[a * n + b] = false;
        self.edge[b * n + a] = false;
        self.weight2[a * n + b] = Wide::ZERO;
        self.weight2[b * n + a] = Wide::ZERO;
    }

    /// The weight of edge `a`-`b`, if present.
    pub fn get(&self, a: usize, b: usize) -> Option<Wide<L>> {
        let k = a * self.n + b;
        self.edge[k].then(|| self.weight2[k].half())
    }

    /// The mate of every vertex after the last [`Matcher::solve`].
    pub fn mates(&self) -> Vec<usize> {
        self.mate
            .iter()
            .map(|&p| if p == NONE { NONE } else { p % self.n })
            .collect()
    }

    fn endpoint(&self, p: usize) -> usize {
        p % self.n
    }

    fn flip(&self, p: usize) -> usize {
        (p % self.n) * self.n + p / self.n
    }

    #[inline(always)]
    fn slack(&self, i: usize, j: usize) -> Wide<L> {
        Wide::add_sub(&self.dual[i], &self.dual[j], &self.weight2[i * self.n + j])
    }

    fn leaves(&self, b: usize, out: &mut Vec<usize>) {
        if b < self.n {
            out.push(b);
        } else {
            for &c in &self.childs[b] {
                self.leaves(c, out);
            }
        }
    }

    fn leaves_of(&self, b: usize) -> Vec<usize> {
        let mut v = Vec::new();
        self.leaves(b, &mut v);
        v
    }

    /// Makes `v` a vertex whose edges may change: every blossom holding it is dissolved (its
    /// dual moved onto its vertices, which keeps every edge inside it as tight as it was), and
    /// `v` is unmatched. Its dual is set again at the next solve.
    fn loosen(&mut self, v: usize) {
        while self.inblossom[v] != v {
            self.dissolve_top(self.inblossom[v]);
        }
        self.unmatch(v);
        self.dirty[v] = true;
    }

    fn unmatch(&mut self, v: usize) {
        let p = self.mate[v];
        if p != NONE {
            let m = self.endpoint(p);
            self.mate[m] = NONE;
            self.mate[v] = NONE;
        }
    }

    /// Dissolves the top-level blossom `b` into its children.
    fn dissolve_top(&mut self, b: usize) {
        debug_assert!(b >= self.n && self.parent[b] == NONE);
        let z = self.dual[b];
        let leaves = self.leaves_of(b);
        for &v in &leaves {
            self.dual[v] = self.dual[v] + z;
        }
        // The edges leaving the blossom are now looser by 2z: its base's outside edge, if
        // matched, is no longer tight.
        let base = self.base[b];
        if z != Wide::ZERO {
            self.unmatch(base);
        }
        let childs = std::mem::take(&mut self.childs[b]);
        for &c in &childs {
            self.parent[c] = NONE;
            if c < self.n {
                self.inblossom[c] = c;
            } else {
                for v in self.leaves_of(c) {
                    self.inblossom[v] = c;
                }
            }
        }
        self.release(b);
    }

    fn release(&mut self, b: usize) {
        self.label[b] = FREE;
        self.labelend[b] = NONE;
        self.childs[b].clear();
        self.endps[b].clear();
        self.base[b] = NONE;
        self.bestedges[b] = None;
        self.bestedge[b] = NONE;
        self.dual[b] = Wide::ZERO;
        self.parent[b] = NONE;
        self.unused.push(b);
    }

    fn neighbours(&self, v: usize) -> impl Iterator<Item = usize> + '_ {
        let row = &self.edge[v * self.n..(v + 1) * self.n];
        row.iter()
            .enumerate()
            .filter(move |(w, e)| **e && *w != v)
            .map(|(w, _)| w)
    }

    /// Finds a maximum-weight perfect matching, starting from the current one.
    pub fn solve(&mut self) -> Result<(), NoPerfectMatching> {
        let n = self.n;
        // A changed vertex takes the least dual that keeps its edges' slacks non-negative.
        for v in 0..n {
            if !self.dirty[v] {
                continue;
            }
            self.dirty[v] = false;
            let mut best: Option<Wide<L>> = None;
            for w in self.neighbours(v) {
                let need = self.weight2[v * n + w] - self.dual[w];
                if best.map(|b| need > b).unwrap_or(true) {
                    best = Some(need);
                }
            }
            self.dual[v] = best.unwrap_or(Wide::ZERO);
        }
        // Every free vertex starts a stage as an outer vertex, and the duals of outer vertices
        // move together; an odd slack between two of them could not be halved. So all free
        // vertices are given the same parity (raising a dual only loosens edges; a free vertex
        // in a blossom is its base, and dissolving it frees nothing else).
        let mut parity: Option<u64> = None;
        for v in 0..n {
            if self.mate[v] != NONE {
                continue;
            }
            let p = self.dual[v].0[0] & 1;
            match parity {
                None => parity = Some(p),
                Some(q) if q != p => {
                    while self.inblossom[v] != v {
                        self.dissolve_top(self.inblossom[v]);
                    }
                    if self.dual[v].0[0] & 1 != q {
                        self.dual[v] = self.dual[v] + Wide::from_u64(1);
                    }
                }
                _ => {}
            }
        }
        // Free neighbours joined by a tight edge can be matched at once: a changed vertex's dual
        // makes at least one of its edges tight, so this settles many without a stage.
        for v in 0..n {
            if self.mate[v] != NONE || self.inblossom[v] != v {
                continue;
            }
            for w in 0..n {
                if w != v
                    && self.edge[v * n + w]
                    && self.mate[w] == NONE
                    && self.inblossom[w] == w
                    && self.slack(v, w) == Wide::ZERO
                {
                    self.mate[v] = v * n + w;
                    self.mate[w] = w * n + v;
                    break;
                }
            }
        }
        while self.mate.contains(&NONE) {
            if !self.stage() {
                return Err(NoPerfectMatching);
            }
        }
        Ok(())
    }

    fn assign_label(&mut self, w: usize, t: u8, p: usize) {
        let b = self.inblossom[w];
        debug_assert!(self.label[w] == FREE && self.label[b] == FREE);
        self.label[w] = t;
        self.label[b] = t;
        self.labelend[w] = p;
        self.labelend[b] = p;
        self.bestedge[w] = NONE;
        self.bestedge[b] = NONE;
        if t == OUTER {
            let leaves = self.leaves_of(b);
            self.queue.extend(leaves);
        } else {
            let base = self.base[b];
            let mp = self.mate[base];
            debug_assert!(mp != NONE);
            let m = self.endpoint(mp);
            self.assign_label(m, OUTER, self.flip(mp));
        }
    }

    /// Traces back from `v` and `w` to the roots: the base of a new blossom, or NONE when the
    /// two reach different roots (an augmenting path).
    fn scan_blossom(&mut self, mut v: usize, mut w: usize) -> usize {
        let mut path = Vec::new();
        let mut base = NONE;
        while v != NONE || w != NONE {
            let mut b = self.inblossom[v];
            if self.label[b] & 4 != 0 {
                base = self.base[b];
                break;
            }
            path.push(b);
            self.label[b] = SEEN;
            if self.labelend[b] == NONE {
                v = NONE;
            } else {
                v = self.endpoint(self.labelend[b]);
                b = self.inblossom[v];
                v = self.endpoint(self.labelend[b]);
            }
            if w != NONE {
                std::mem::swap(&mut v, &mut w);
            }
        }
        for b in path {
            self.label[b] = OUTER;
        }
        base
    }

    fn add_blossom(&mut self, base: usize, v0: usize, w0: usize) {
        let n = self.n;
        let bb = self.inblossom[base];
        let mut bv = self.inblossom[v0];
        let mut bw = self.inblossom[w0];
        let b = self.unused.pop().expect("at most n/2 blossoms");
        self.base[b] = base;
        self.parent[b] = NONE;
        self.parent[bb] = b;
        let mut path = Vec::new();
        let mut endps = Vec::new();
        while bv != bb {
            self.parent[bv] = b;
            path.push(bv);
            endps.push(self.labelend[bv]);
            let v = self.endpoint(self.labelend[bv]);
            bv = self.inblossom[v];
        }
        path.push(bb);
        path.reverse();
        endps.reverse();
        // The endpoint at v0 of the edge v0-w0.
        endps.push(w0 * n + v0);
        while bw != bb {
            self.parent[bw] = b;
            path.push(bw);
            endps.push(self.flip(self.labelend[bw]));
            let w = self.endpoint(self.labelend[bw]);
            bw = self.inblossom[w];
        }
        self.childs[b] = path.clone();
        self.endps[b] = endps;
        self.label[b] = OUTER;
        self.labelend[b] = self.labelend[bb];
        self.dual[b] = Wide::ZERO;
        for v in self.leaves_of(b) {
            if self.label[self.inblossom[v]] == INNER {
                self.queue.push(v);
            }
            self.inblossom[v] = b;
        }
        let mut bestedgeto = vec![NONE; 2 * n];
        let mut bestto = vec![Wide::ZERO; 2 * n];
        for &c in &path {
            let list: Vec<usize> = match self.bestedges[c].take() {
                Some(l) => l,
                None => {
                    let mut l = Vec::new();
                    for v in self.leaves_of(c) {
                        for w in self.neighbours(v) {
                            l.push(v * n + w);
                        }
                    }
                    l
                }
            };
            for k in list {
                let (mut i, mut j) = (k / n, k % n);
                if self.inblossom[j] == b {
                    std::mem::swap(&mut i, &mut j);
                }
                let bj = self.inblossom[j];
                if bj != b && self.label[bj] == OUTER {
                    let sl = self.slack(i, j);
                    if bestedgeto[bj] == NONE || sl < bestto[bj] {
                        bestedgeto[bj] = i * n + j;
                        bestto[bj] = sl;
                    }
                }
            }
            self.bestedge[c] = NONE;
        }
        let mut list = Vec::new();
        let mut best = NONE;
        let mut best_slack = Wide::ZERO;
        for (bj, &k) in bestedgeto.iter().enumerate() {
            if k == NONE {
                continue;
            }
            list.push(k);
            if best == NONE || bestto[bj] < best_slack {
                best = k;
                best_slack = bestto[bj];
            }
        }
        self.bestslack[b] = best_slack;
        self.bestedges[b] = Some(list);
        self.bestedge[b] = best;
    }

    fn slack_k(&self, k: usize) -> Wide<L> {
        self.slack(k / self.n, k % self.n)
    }

    fn index(len: usize, j: isize) -> usize {
        j.rem_euclid(len as isize) as usize
    }

    fn expand_blossom(&mut self, b: usize, endstage: bool) {
        let childs = self.childs[b].clone();
        for &s in &childs {
            self.parent[s] = NONE;
            if s < self.n {
                self.inblossom[s] = s;
            } else if endstage && self.dual[s] == Wide::ZERO {
                self.expand_blossom(s, endstage);
            } else {
                for v in self.leaves_of(s) {
                    self.inblossom[v] = s;
                }
            }
        }
        if !endstage && self.label[b] == INNER {
            let len = childs.len();
            let entry = self.inblossom[self.endpoint(self.flip(self.labelend[b]))];
            let mut j = childs.iter().position(|&c| c == entry).unwrap() as isize;
            let (jstep, trick): (isize, usize) = if j & 1 == 1 {
                j -= len as isize;
                (1, 0)
            } else {
                (-1, 1)
            };
            let endps = self.endps[b].clone();
            let n = self.n;
            let ep = |j: isize| -> usize {
                let p = endps[Self::index(len, j - trick as isize)];
                if trick == 1 {
                    (p % n) * n + p / n
                } else {
                    p
                }
            };
            let mut p = self.labelend[b];
            while j != 0 {
                let q = self.endpoint(self.flip(p));
                self.label[q] = FREE;
                let r = self.endpoint(self.flip(ep(j)));
                self.label[r] = FREE;
                self.assign_label(q, INNER, p);
                let k = ep(j);
                self.allow_edge(k);
                j += jstep;
                p = ep(j);
                self.allow_edge(p);
                j += jstep;
            }
            let bv = childs[Self::index(len, j)];
            let q = self.endpoint(self.flip(p));
            self.label[q] = INNER;
            self.label[bv] = INNER;
            self.labelend[q] = p;
            self.labelend[bv] = p;
            self.bestedge[bv] = NONE;
            j += jstep;
            while childs[Self::index(len, j)] != entry {
                let bv = childs[Self::index(len, j)];
                if self.label[bv] == OUTER {
                    j += jstep;
                    continue;
                }
                let reached = self
                    .leaves_of(bv)
                    .into_iter()
                    .find(|&v| self.label[v] != FREE);
                if let Some(v) = reached {
                    self.label[v] = FREE;
                    let m = self.endpoint(self.mate[self.base[bv]]);
                    self.label[m] = FREE;
                    self.assign_label(v, INNER, self.labelend[v]);
                }
                j += jstep;
            }
        }
        self.release(b);
    }

    fn allow_edge(&mut self, p: usize) {
        let (i, j) = (p / self.n, p % self.n);
        self.allow[i * self.n + j] = self.stage_no;
        self.allow[j * self.n + i] = self.stage_no;
    }

    fn augment_blossom(&mut self, b: usize, v: usize) {
        let mut t = v;
        while self.parent[t] != b {
            t = self.parent[t];
        }
        if t >= self.n {
            self.augment_blossom(t, v);
        }
        let len = self.childs[b].len();
        let i = self.childs[b].iter().position(|&c| c == t).unwrap();
        let mut j = i as isize;
        let (jstep, trick): (isize, usize) = if i & 1 == 1 {
            j -= len as isize;
            (1, 0)
        } else {
            (-1, 1)
        };
        while j != 0 {
            j += jstep;
            let t = self.childs[b][Self::index(len, j)];
            let raw = self.endps[b][Self::index(len, j - trick as isize)];
            let p = if trick == 1 { self.flip(raw) } else { raw };
            if t >= self.n {
                self.augment_blossom(t, self.endpoint(p));
            }
            j += jstep;
            let t = self.childs[b][Self::index(len, j)];
            if t >= self.n {
                self.augment_blossom(t, self.endpoint(self.flip(p)));
            }
            let (a, c) = (self.endpoint(p), self.endpoint(self.flip(p)));
            self.mate[a] = self.flip(p);
            self.mate[c] = p;
        }
        self.childs[b].rotate_left(i);
        self.endps[b].rotate_left(i);
        self.base[b] = self.base[self.childs[b][0]];
        debug_assert_eq!(self.base[b], v);
    }

    fn augment_matching(&mut self, v: usize, w: usize) {
        let n = self.n;
        for (s0, p0) in [(v, v * n + w), (w, w * n + v)] {
            let (mut s, mut p) = (s0, p0);
            loop {
                let bs = self.inblossom[s];
                if bs >= n {
                    self.augment_blossom(bs, s);
                }
                self.mate[s] = p;
                if self.labelend[bs] == NONE {
                    break;
                }
                let t = self.endpoint(self.labelend[bs]);
                let bt = self.inblossom[t];
                s = self.endpoint(self.labelend[bt]);
                let j = self.endpoint(self.flip(self.labelend[bt]));
                if bt >= n {
                    self.augment_blossom(bt, j);
                }
                self.mate[j] = self.labelend[bt];
                p = self.flip(self.labelend[bt]);
            }
        }
    }

    /// One stage: grows alternating trees from the free vertices until one path augments.
    /// Returns false when no augmenting path exists.
    fn stage(&mut self) -> bool {
        let n = self.n;
        self.label.fill(FREE);
        self.bestedge.fill(NONE);
        for b in n..2 * n {
            self.bestedges[b] = None;
        }
        self.stage_no += 1;
        if self.stage_no == u32::MAX {
            self.allow.fill(0);
            self.stage_no = 1;
        }
        self.queue.clear();
        for v in 0..n {
            if self.mate[v] == NONE && self.label[self.inblossom[v]] == FREE {
                self.assign_label(v, OUTER, NONE);
            }
        }
        let mut augmented = false;
        loop {
            while let Some(v) = self.queue.pop() {
                if augmented {
                    break;
                }
                for w in 0..n {
                    if w == v || !self.edge[v * n + w] {
                        continue;
                    }
                    // Read afresh: a blossom formed on an earlier edge may now hold both.
                    let bw = self.inblossom[w];
                    if self.inblossom[v] == bw {
                        continue;
                    }
                    // An inner vertex already labelled gains nothing from another edge.
                    if self.label[bw] == INNER && self.label[w] != FREE {
                        continue;
                    }
                    let k = v * n + w;
                    let mut kslack = Wide::ZERO;
                    let stage_no = self.stage_no;
                    if self.allow[k] != stage_no {
                        kslack = self.slack(v, w);
                        if kslack.not_positive() {
                            self.allow[k] = stage_no;
                            self.allow[w * n + v] = stage_no;
                        }
                    }
                    if self.allow[k] == stage_no {
                        if self.label[bw] == FREE {
                            self.assign_label(w, INNER, w * n + v);
                        } else if self.label[bw] == OUTER {
                            let base = self.scan_blossom(v, w);
                            if base != NONE {
                                self.add_blossom(base, v, w);
                            } else {
                                self.augment_matching(v, w);
                                augmented = true;
                                break;
                            }
                        } else if self.label[w] == FREE {
                            self.label[w] = INNER;
                            self.labelend[w] = w * n + v;
                        }
                    } else if self.label[bw] == OUTER {
                        let b = self.inblossom[v];
                        if self.bestedge[b] == NONE || kslack < self.bestslack[b] {
                            self.bestedge[b] = k;
                            self.bestslack[b] = kslack;
                        }
                    } else if self.label[w] == FREE
                        && (self.bestedge[w] == NONE || kslack < self.bestslack[w])
                    {
                        self.bestedge[w] = k;
                        self.bestslack[w] = kslack;
                    }
                }
                if augmented {
                    break;
                }
            }
            if augmented {
                break;
            }
            // No tight edge left to follow: move the duals by the least amount that makes one.
            let mut delta: Option<(Wide<L>, u8, usize)> = None;
            let better = |d: &Wide<L>, cur: &Option<(Wide<L>, u8, usize)>| {
                cur.as_ref().map(|c| *d < c.0).unwrap_or(true)
            };
            for v in 0..n {
                if self.label[self.inblossom[v]] == FREE && self.bestedge[v] != NONE {
                    let d = self.bestslack[v];
                    if better(&d, &delta) {
                        delta = Some((d, 2, self.bestedge[v]));
                    }
                }
            }
            for b in 0..2 * n {
                if self.parent[b] == NONE
                    && (b < n || self.base[b] != NONE)
                    && self.label[b] == OUTER
                    && self.bestedge[b] != NONE
                {
                    let full = self.bestslack[b];
                    debug_assert!(
                        full.0[0] & 1 == 0,
                        "odd slack between outer vertices {full:?}"
                    );
                    let d = full.half();
                    if better(&d, &delta) {
                        delta = Some((d, 3, self.bestedge[b]));
                    }
                }
            }
            for b in n..2 * n {
                if self.base[b] != NONE
                    && self.parent[b] == NONE
                    && self.label[b] == INNER
                    && better(&self.dual[b], &delta)
                {
                    delta = Some((self.dual[b], 4, b));
                }
            }
            let Some((d, kind, which)) = delta else {
                return false;
            };
            for v in 0..n {
                match self.label[self.inblossom[v]] {
                    OUTER => self.dual[v] = self.dual[v] - d,
                    INNER => self.dual[v] = self.dual[v] + d,
                    _ => {}
                }
            }
            for b in n..2 * n {
                if self.base[b] != NONE && self.parent[b] == NONE {
                    match self.label[b] {
                        OUTER => self.dual[b] = self.dual[b] + d,
                        INNER => self.dual[b] = self.dual[b] - d,
                        _ => {}
                    }
                }
            }
            for b in 0..2 * n {
                if self.bestedge[b] != NONE {
                    self.bestslack[b] = self.slack_k(self.bestedge[b]);
                }
            }
            match kind {
                2 => {
                    let (mut i, mut j) = (which / n, which % n);
                    self.allow_edge(which);
                    if self.label[self.inblossom[i]] == FREE {
                        std::mem::swap(&mut i, &mut j);
                    }
                    self.queue.push(i);
                }
                3 => {
                    let i = which / n;
                    self.allow_edge(which);
                    self.queue.push(i);
                }
                _ => self.expand_blossom(which, false),
            }
        }
        for b in n..2 * n {
            if self.parent[b] == NONE
                && self.base[b] != NONE
                && self.label[b] == OUTER
                && self.dual[b] == Wide::ZERO
            {
                self.expand_blossom(b, true);
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type W = Wide<2>;

    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
    }

    /// The best perfect matching's weight by trying every one (None: there is none).
    fn brute(n: usize, w: &[Option<u64>]) -> Option<u64> {
        fn rec(n: usize, w: &[Option<u64>], used: &mut Vec<bool>) -> Option<u64> {
            let Some(a) = (0..n).find(|&v| !used[v]) else {
                return Some(0);
            };
            used[a] = true;
            let mut best = None;
            for b in a + 1..n {
                if used[b] {
                    continue;
                }
                if let Some(x) = w[a * n + b] {
                    used[b] = true;
                    if let Some(r) = rec(n, w, used) {
                        best = best.max(Some(r + x));
                    }
                    used[b] = false;
                }
            }
            used[a] = false;
            best
        }
        rec(n, w, &mut vec![false; n])
    }

    fn total(m: &Matcher<2>, w: &[Option<u64>]) -> u64 {
        let n = m.len();
        let mates = m.mates();
        let mut t = 0;
        for v in 0..n {
            let u = mates[v];
            assert_eq!(mates[u], v, "the matching is symmetric");
            assert!(w[v * n + u].is_some(), "matched along an edge");
            if v < u {
                t += w[v * n + u].unwrap();
            }
        }
        t
    }

    fn random_weight(rng: &mut Rng, big: bool) -> Option<u64> {
        match rng.next() % 5 {
            0 => None,
            _ if big => Some(rng.next() % (1 << 40)),
            _ => Some(rng.next() % 8),
        }
    }

    #[test]
    fn agrees_with_exhaustive_search_from_scratch_and_warm() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for case in 0..800 {
            let n = 2 * (1 + (rng.next() % 6) as usize);
            let big = case % 2 == 0;
            let mut w = vec![None; n * n];
            let mut m = Matcher::<2>::new(n);
            for a in 0..n {
                for b in a + 1..n {
                    let x = random_weight(&mut rng, big);
                    w[a * n + b] = x;
                    w[b * n + a] = x;
                    m.set(a, b, x.map(W::from_u64));
                }
            }
            let want = brute(n, &w);
            match m.solve() {
                Ok(()) => {
                    m.check_blossoms();
                    assert_eq!(Some(total(&m, &w)), want, "case {case}")
                }
                Err(NoPerfectMatching) => assert_eq!(want, None, "case {case}"),
            }
            if want.is_none() {
                continue;
            }
            // Change the edges around one or two vertices at a time and solve again.
            for step in 0..12 {
                let changed = 1 + (rng.next() % 2) as usize;
                for _ in 0..changed {
                    let a = (rng.next() % n as u64) as usize;
                    for b in 0..n {
                        if b == a || rng.next() % 2 == 0 {
                            continue;
                        }
                        let x = random_weight(&mut rng, big);
                        w[a * n + b] = x;
                        w[b * n + a] = x;
                        m.set(a, b, x.map(W::from_u64));
                    }
                }
                m.check_blossoms();
                let want = brute(n, &w);
                match m.solve() {
                    Ok(()) => {
                        m.check_blossoms();
                        assert_eq!(Some(total(&m, &w)), want, "case {case} step {step}")
                    }
                    Err(NoPerfectMatching) => {
                        assert_eq!(want, None, "case {case} step {step}");
                        break;
                    }
                }
            }
        }
    }

    impl<const L: usize> Matcher<L> {
        /// Every blossom in use is reachable from a vertex, and ids are neither lost nor doubled.
        pub(crate) fn check_blossoms(&self) {
            let n = self.n;
            let mut live = 0;
            for b in n..2 * n {
                if self.base[b] != NONE {
                    live += 1;
                    let mut top = b;
                    while self.parent[top] != NONE {
                        top = self.parent[top];
                    }
                    let leaves = self.leaves_of(b);
                    assert!(!leaves.is_empty(), "blossom {b} has no leaves");
                    assert!(
                        leaves.iter().all(|&v| self.inblossom[v] == top),
                        "blossom {b} unreachable: top {top}, leaves {leaves:?} in {:?}",
                        leaves
                            .iter()
                            .map(|&v| self.inblossom[v])
                            .collect::<Vec<_>>()
                    );
                }
            }
            // Dual feasibility: every edge's reduced cost is non-negative, matched edges are tight.
            let ancestors = |v: usize| {
                let mut a = Vec::new();
                let mut b = self.parent[v];
                while b != NONE {
                    a.push(b);
                    b = self.parent[b];
                }
                a
            };
            for i in 0..n {
                for j in i + 1..n {
                    if !self.edge[i * n + j] || self.dirty[i] || self.dirty[j] {
                        continue;
                    }
                    let (ai, aj) = (ancestors(i), ancestors(j));
                    let mut s = self.slack(i, j);
                    for b in ai.iter().filter(|b| aj.contains(b)) {
                        s = s + self.dual[*b] + self.dual[*b];
                    }
                    assert!(s >= Wide::ZERO, "edge {i}-{j} reduced cost {s:?}");
                    if self.mate[i] != NONE && self.endpoint(self.mate[i]) == j {
                        assert!(s == Wide::ZERO, "matched edge {i}-{j} not tight: {s:?}");
                    }
                }
            }
            for b in n..2 * n {
                if self.base[b] != NONE {
                    assert!(
                        self.dual[b] >= Wide::ZERO,
                        "blossom {b} dual {:?}",
                        self.dual[b]
                    );
                }
            }
            let mut u = self.unused.clone();
            u.sort();
            u.dedup();
            assert_eq!(u.len(), self.unused.len(), "doubled ids");
            assert_eq!(live + self.unused.len(), n, "lost ids");
        }
    }
}
