//! Maximum-cardinality matching in a general graph (Edmonds' blossom algorithm). The Dutch
//! system's completion requirement ("the rest of the round can still be paired") is exactly the
//! existence of a perfect matching, and byes make the graph non-bipartite in general.

use std::collections::VecDeque;

const NONE: usize = usize::MAX;

pub struct Graph {
    pub n: usize,
    pub adj: Vec<Vec<usize>>,
}

impl Graph {
    pub fn new(n: usize) -> Graph {
        Graph {
            n,
            adj: vec![Vec::new(); n],
        }
    }

    pub fn add_edge(&mut self, a: usize, b: usize) {
        self.adj[a].push(b);
        self.adj[b].push(a);
    }

    /// Returns the size of a maximum matching and the mate of every vertex.
    pub fn max_matching(&self) -> (usize, Vec<usize>) {
        let n = self.n;
        let mut mate = vec![NONE; n];
        let mut size = 0;
        // A greedy start keeps the blossom searches few.
        for v in 0..n {
            if mate[v] == NONE {
                if let Some(&u) = self.adj[v].iter().find(|&&u| mate[u] == NONE && u != v) {
                    mate[v] = u;
                    mate[u] = v;
                    size += 1;
                }
            }
        }
        let mut s = Search {
            p: vec![NONE; n],
            base: (0..n).collect(),
            used: vec![false; n],
            blossom: vec![false; n],
            q: VecDeque::new(),
        };
        for v in 0..n {
            if mate[v] == NONE {
                let mut u = s.find_path(self, &mate, v);
                if u != NONE {
                    size += 1;
                    while u != NONE {
                        let pv = s.p[u];
                        let ppv = mate[pv];
                        mate[u] = pv;
                        mate[pv] = u;
                        u = ppv;
                    }
                }
            }
        }
        (size, mate)
    }
}

struct Search {
    p: Vec<usize>,
    base: Vec<usize>,
    used: Vec<bool>,
    blossom: Vec<bool>,
    q: VecDeque<usize>,
}

impl Search {
    fn lca(&self, mate: &[usize], mut a: usize, mut b: usize) -> usize {
        let mut seen = vec![false; mate.len()];
        loop {
            a = self.base[a];
            seen[a] = true;
            if mate[a] == NONE {
                break;
            }
            a = self.p[mate[a]];
        }
        loop {
            b = self.base[b];
            if seen[b] {
                return b;
            }
            b = self.p[mate[b]];
        }
    }

    fn mark_path(&mut self, mate: &[usize], mut v: usize, b: usize, mut child: usize) {
        while self.base[v] != b {
            self.blossom[self.base[v]] = true;
            self.blossom[self.base[mate[v]]] = true;
            self.p[v] = child;
            child = mate[v];
            v = self.p[mate[v]];
        }
    }

    fn find_path(&mut self, g: &Graph, mate: &[usize], root: usize) -> usize {
        let n = g.n;
        self.used.iter_mut().for_each(|x| *x = false);
        self.p.iter_mut().for_each(|x| *x = NONE);
        for (i, b) in self.base.iter_mut().enumerate() {
            *b = i;
        }
        self.used[root] = true;
        self.q.clear();
        self.q.push_back(root);
        while let Some(v) = self.q.pop_front() {
            for &to in &g.adj[v] {
                if self.base[v] == self.base[to] || mate[v] == to {
                    continue;
                }
                if to == root || (mate[to] != NONE && self.p[mate[to]] != NONE) {
                    let cur = self.lca(mate, v, to);
                    self.blossom.iter_mut().for_each(|x| *x = false);
                    self.mark_path(mate, v, cur, to);
                    self.mark_path(mate, to, cur, v);
                    for i in 0..n {
                        if self.blossom[self.base[i]] {
                            self.base[i] = cur;
                            if !self.used[i] {
                                self.used[i] = true;
                                self.q.push_back(i);
                            }
                        }
                    }
                } else if self.p[to] == NONE {
                    self.p[to] = v;
                    if mate[to] == NONE {
                        return to;
                    }
                    self.used[mate[to]] = true;
                    self.q.push_back(mate[to]);
                }
            }
        }
        NONE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn odd_cycle_with_tail() {
        // A 5-cycle with a pendant vertex: perfect matching of 6 needs a blossom.
        let mut g = Graph::new(6);
        for (a, b) in [(0, 1), (1, 2), (2, 3), (3, 4), (4, 0), (4, 5)] {
            g.add_edge(a, b);
        }
        let (size, mate) = g.max_matching();
        assert_eq!(size, 3);
        for v in 0..6 {
            assert_eq!(mate[mate[v]], v);
        }
    }

    #[test]
    fn no_perfect_matching() {
        let mut g = Graph::new(4);
        g.add_edge(0, 1);
        g.add_edge(0, 2);
        g.add_edge(0, 3);
        assert_eq!(g.max_matching().0, 1);
    }
}
