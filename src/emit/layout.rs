//! A layered (Sugiyama-style) layout, left to right, for the SVG diagrams:
//! layers by longest path, dummy nodes on long edges, crossings reduced by
//! barycentre sweeps, and each column placed by isotonic regression so that
//! nodes sit level with their neighbours without overlapping.
//!
//! Everything is deterministic: ties keep input order, so the same graph
//! gives the same picture byte for byte.

/// Where the layout puts things; coordinates in pixels, origin top left.
#[derive(Debug, Clone, PartialEq)]
pub struct Layout {
    /// Each node's centre, in input order.
    pub centers: Vec<(f64, f64)>,
    /// Each input edge's route: from the source's right side through the
    /// dummy nodes to the target's left side (empty for a self-loop).
    pub routes: Vec<Vec<(f64, f64)>>,
    /// Each node's layer (column), from 0.
    pub layers: Vec<usize>,
    /// The drawing's width.
    pub width: f64,
    /// The drawing's height.
    pub height: f64,
}

/// Space around the drawing.
const MARGIN: f64 = 16.0;
/// Horizontal room between columns (edge labels live there).
const COLUMN_GAP: f64 = 96.0;
/// Vertical room between two nodes of one column.
const NODE_GAP: f64 = 18.0;
/// Height given to a dummy node (a long edge passing through a column).
const DUMMY_HEIGHT: f64 = 6.0;
/// Dummy nodes in one layout at most: each is a bend of a long edge, and
/// their number can grow with the square of the nodes'.
pub const MAX_BENDS: usize = 30_000;

/// Lays out nodes of the given `(width, height)` sizes joined by `edges`
/// (`from`, `to`, indices into `sizes`). Cycles are broken by reversing the
/// edges that close them, so any input has a layout.
pub fn layered(sizes: &[(f64, f64)], edges: &[(usize, usize)]) -> Layout {
    let n = sizes.len();
    let order = acyclic_order(n, edges);
    let mut rank = vec![0usize; n];
    for (i, &v) in order.iter().enumerate() {
        rank[v] = i;
    }
    // Each edge pointed forward in `order`; reversed edges remember it.
    let forward: Vec<Option<(usize, usize, bool)>> = edges
        .iter()
        .map(|&(a, b)| {
            if a == b || a >= n || b >= n {
                None
            } else if rank[a] < rank[b] {
                Some((a, b, false))
            } else {
                Some((b, a, true))
            }
        })
        .collect();
    let mut succ: Vec<Vec<usize>> = vec![Vec::new(); n];
    for &(a, b, _) in forward.iter().flatten() {
        succ[a].push(b);
    }
    let mut layer = vec![0usize; n];
    for &v in &order {
        for &w in &succ[v] {
            layer[w] = layer[w].max(layer[v] + 1);
        }
    }

    // Long edges become chains through dummy nodes, one per crossed layer:
    // the shortest first, while the budget lasts; longer ones are drawn
    // straight and take no part in ordering (a chain of n models each also
    // reading the first needs n²/2 dummies).
    let bent = {
        let mut by_span: Vec<(usize, usize)> = forward
            .iter()
            .enumerate()
            .filter_map(|(i, f)| f.map(|(a, b, _)| (layer[b] - layer[a] - 1, i)))
            .filter(|&(span, _)| span > 0)
            .collect();
        by_span.sort_unstable();
        let mut bent = vec![true; edges.len()];
        let mut budget = MAX_BENDS;
        for (span, i) in by_span {
            if span <= budget {
                budget -= span;
            } else {
                budget = 0;
                bent[i] = false;
            }
        }
        bent
    };
    let mut layer_of = layer.clone();
    let mut heights: Vec<f64> = sizes.iter().map(|s| s.1).collect();
    let mut chains: Vec<Vec<usize>> = Vec::with_capacity(edges.len());
    let mut links: Vec<(usize, usize)> = Vec::new();
    for (f, &bent) in forward.iter().zip(&bent) {
        let Some((a, b, _)) = *f else {
            chains.push(Vec::new());
            continue;
        };
        if !bent {
            chains.push(vec![a, b]);
            continue;
        }
        let mut chain = vec![a];
        for l in layer[a] + 1..layer[b] {
            layer_of.push(l);
            heights.push(DUMMY_HEIGHT);
            chain.push(layer_of.len() - 1);
        }
        chain.push(b);
        for w in chain.windows(2) {
            links.push((w[0], w[1]));
        }
        chains.push(chain);
    }
    let total = layer_of.len();
    let depth = layer_of.iter().max().map_or(0, |&l| l + 1);
    let mut up: Vec<Vec<usize>> = vec![Vec::new(); total];
    let mut down: Vec<Vec<usize>> = vec![Vec::new(); total];
    links.sort_unstable();
    links.dedup();
    for &(a, b) in &links {
        down[a].push(b);
        up[b].push(a);
    }

    // Initial order: real nodes in topological order, each dummy after the
    // node its chain starts from, so the first sweep starts from sense.
    let mut columns: Vec<Vec<usize>> = vec![Vec::new(); depth];
    let mut seen = vec![false; total];
    for &v in &order {
        let mut stack = vec![v];
        while let Some(x) = stack.pop() {
            if seen[x] {
                continue;
            }
            seen[x] = true;
            columns[layer_of[x]].push(x);
            // Dummies only: real nodes are placed in topological order.
            for &d in down[x].iter().rev() {
                if d >= n && !seen[d] {
                    stack.push(d);
                }
            }
        }
    }
    order_columns(&mut columns, &up, &down, total);

    // x: one column per layer, as wide as its widest node.
    let mut col_x = Vec::with_capacity(depth);
    let mut x = MARGIN;
    for col in &columns {
        let w = col
            .iter()
            .filter(|&&v| v < n)
            .map(|&v| sizes[v].0)
            .fold(0.0, f64::max);
        col_x.push(x + w / 2.0);
        x += w + COLUMN_GAP;
    }
    let width = (x - COLUMN_GAP + MARGIN).max(2.0 * MARGIN);

    let mut y = place_rows(&columns, &up, &down, &heights, n);
    let top = (0..total)
        .map(|v| y[v] - heights[v] / 2.0)
        .fold(f64::INFINITY, f64::min);
    let shift = if top.is_finite() { MARGIN - top } else { 0.0 };
    for v in &mut y {
        *v += shift;
    }
    let height = (0..total)
        .map(|v| y[v] + heights[v] / 2.0)
        .fold(0.0, f64::max)
        + MARGIN;

    let centers: Vec<(f64, f64)> = (0..n).map(|v| (col_x[layer_of[v]], y[v])).collect();
    let routes = chains
        .iter()
        .zip(&forward)
        .map(|(chain, f)| {
            let Some((_, _, reversed)) = *f else {
                return Vec::new();
            };
            let mut pts: Vec<(f64, f64)> = Vec::with_capacity(chain.len());
            for (i, &v) in chain.iter().enumerate() {
                let cx = col_x[layer_of[v]];
                let half = if v < n { sizes[v].0 / 2.0 } else { 0.0 };
                if i == 0 {
                    pts.push((cx + half, y[v]));
                } else if i == chain.len() - 1 {
                    pts.push((cx - half, y[v]));
                } else {
                    pts.push((cx, y[v]));
                }
            }
            if reversed {
                pts.reverse();
            }
            pts
        })
        .collect();
    Layout {
        centers,
        routes,
        layers: layer,
        width,
        height: height.max(2.0 * MARGIN),
    }
}

/// A node order in which every edge but those closing a cycle points
/// forward: Kahn's algorithm, and when only cycles remain, the first
/// remaining node (by index) is taken as if it had no inputs.
fn acyclic_order(n: usize, edges: &[(usize, usize)]) -> Vec<usize> {
    let mut indegree = vec![0usize; n];
    let mut succ: Vec<Vec<usize>> = vec![Vec::new(); n];
    for &(a, b) in edges {
        if a != b && a < n && b < n {
            succ[a].push(b);
            indegree[b] += 1;
        }
    }
    let mut done = vec![false; n];
    let mut order = Vec::with_capacity(n);
    let mut ready: std::collections::BinaryHeap<std::cmp::Reverse<usize>> = (0..n)
        .filter(|&v| indegree[v] == 0)
        .map(std::cmp::Reverse)
        .collect();
    let mut next_unplaced = 0;
    while order.len() < n {
        let v = match ready.pop() {
            Some(std::cmp::Reverse(v)) => v,
            None => {
                while done[next_unplaced] {
                    next_unplaced += 1;
                }
                next_unplaced
            }
        };
        if done[v] {
            continue;
        }
        done[v] = true;
        order.push(v);
        for &w in &succ[v] {
            if !done[w] {
                indegree[w] = indegree[w].saturating_sub(1);
                if indegree[w] == 0 {
                    ready.push(std::cmp::Reverse(w));
                }
            }
        }
    }
    order
}

/// Barycentre sweeps down and up the layers, keeping the order with the
/// fewest crossings seen.
fn order_columns(columns: &mut [Vec<usize>], up: &[Vec<usize>], down: &[Vec<usize>], total: usize) {
    if columns.len() < 2 {
        return;
    }
    let mut pos = vec![0usize; total];
    let index = |columns: &[Vec<usize>], pos: &mut [usize]| {
        for col in columns {
            for (i, &v) in col.iter().enumerate() {
                pos[v] = i;
            }
        }
    };
    index(columns, &mut pos);
    let mut best = columns.to_vec();
    let mut best_crossings = crossings(columns, down, &pos);
    // Big graphs get fewer sweeps: each is linear, but the picture stops
    // improving long before the count of sweeps matters.
    let sweeps = if total > 20_000 { 4 } else { 12 };
    for sweep in 0..sweeps {
        if best_crossings == 0 {
            break;
        }
        let downward = sweep % 2 == 0;
        let layers: Vec<usize> = if downward {
            (1..columns.len()).collect()
        } else {
            (0..columns.len() - 1).rev().collect()
        };
        for l in layers {
            let neighbours = if downward { up } else { down };
            let mut keyed: Vec<(f64, usize, usize)> = columns[l]
                .iter()
                .enumerate()
                .map(|(i, &v)| {
                    let ns = &neighbours[v];
                    let key = if ns.is_empty() {
                        i as f64
                    } else {
                        ns.iter().map(|&u| pos[u] as f64).sum::<f64>() / ns.len() as f64
                    };
                    (key, i, v)
                })
                .collect();
            keyed.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            columns[l] = keyed.into_iter().map(|k| k.2).collect();
            for (i, &v) in columns[l].iter().enumerate() {
                pos[v] = i;
            }
        }
        let c = crossings(columns, down, &pos);
        if c < best_crossings {
            best_crossings = c;
            best = columns.to_vec();
        }
    }
    columns.clone_from_slice(&best);
}

/// Edge crossings between adjacent layers: inversions counted with a
/// Fenwick tree, O(E log V).
pub fn crossings(columns: &[Vec<usize>], down: &[Vec<usize>], pos: &[usize]) -> u64 {
    let mut total = 0u64;
    for pair in columns.windows(2) {
        let width = pair[1].len();
        let mut ends: Vec<(usize, usize)> = Vec::new();
        for &u in &pair[0] {
            for &w in &down[u] {
                ends.push((pos[u], pos[w]));
            }
        }
        ends.sort_unstable();
        let mut tree = vec![0u64; width + 1];
        for (seen, &(_, b)) in ends.iter().enumerate() {
            let seen = seen as u64;
            // Earlier edges that end after b cross this one.
            let mut i = b + 1;
            let mut at_most = 0;
            while i > 0 {
                at_most += tree[i];
                i &= i - 1;
            }
            total += seen - at_most;
            let mut i = b + 1;
            while i <= width {
                tree[i] += 1;
                i += i & i.wrapping_neg();
            }
        }
    }
    total
}

/// Vertical centres: each column stacked, then pulled level with its
/// neighbours by a few alternating sweeps (a least-squares fit under the
/// no-overlap constraints: isotonic regression).
fn place_rows(
    columns: &[Vec<usize>],
    up: &[Vec<usize>],
    down: &[Vec<usize>],
    heights: &[f64],
    real: usize,
) -> Vec<f64> {
    let mut y = vec![0.0; heights.len()];
    let gap = |a: usize, b: usize| {
        let g = if a < real && b < real {
            NODE_GAP
        } else {
            NODE_GAP / 3.0
        };
        (heights[a] + heights[b]) / 2.0 + g
    };
    for col in columns {
        let mut at = 0.0;
        for (i, &v) in col.iter().enumerate() {
            if i > 0 {
                at += gap(col[i - 1], v);
            }
            y[v] = at;
        }
    }
    let l = columns.len();
    for sweep in 0..8 {
        let order: Vec<usize> = match sweep % 4 {
            0 => (1..l).collect(),
            1 => (0..l.saturating_sub(1)).rev().collect(),
            _ => (0..l).collect(),
        };
        for c in order {
            let col = &columns[c];
            if col.is_empty() {
                continue;
            }
            let wanted: Vec<f64> = col
                .iter()
                .map(|&v| {
                    let ns: Vec<usize> = match sweep % 4 {
                        0 => up[v].clone(),
                        1 => down[v].clone(),
                        _ => up[v].iter().chain(&down[v]).copied().collect(),
                    };
                    if ns.is_empty() {
                        y[v]
                    } else {
                        ns.iter().map(|&u| y[u]).sum::<f64>() / ns.len() as f64
                    }
                })
                .collect();
            // z_i = y_i - offset_i turns `y_{i+1} - y_i >= gap` into
            // `z_{i+1} >= z_i`: a monotone fit, solved by pooling.
            let mut offset = vec![0.0; col.len()];
            for i in 1..col.len() {
                offset[i] = offset[i - 1] + gap(col[i - 1], col[i]);
            }
            let target: Vec<f64> = wanted.iter().zip(&offset).map(|(w, o)| w - o).collect();
            let fit = isotonic(&target);
            for (i, &v) in col.iter().enumerate() {
                y[v] = fit[i] + offset[i];
            }
        }
    }
    y
}

/// The non-decreasing sequence closest to `xs` in least squares
/// (pool-adjacent-violators).
fn isotonic(xs: &[f64]) -> Vec<f64> {
    // Blocks of (mean, count).
    let mut blocks: Vec<(f64, usize)> = Vec::with_capacity(xs.len());
    for &x in xs {
        blocks.push((x, 1));
        while blocks.len() > 1 {
            let (m2, c2) = blocks[blocks.len() - 1];
            let (m1, c1) = blocks[blocks.len() - 2];
            if m1 <= m2 {
                break;
            }
            blocks.pop();
            let c = c1 + c2;
            let last = blocks.len() - 1;
            blocks[last] = ((m1 * c1 as f64 + m2 * c2 as f64) / c as f64, c);
        }
    }
    blocks
        .into_iter()
        .flat_map(|(m, c)| std::iter::repeat_n(m, c))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn boxes(n: usize) -> Vec<(f64, f64)> {
        vec![(100.0, 40.0); n]
    }

    #[test]
    fn layers_follow_longest_paths_left_to_right() {
        // a → b → c, a → c: c sits two columns right of a, not one.
        let l = layered(&boxes(3), &[(0, 1), (1, 2), (0, 2)]);
        assert_eq!(l.layers, vec![0, 1, 2]);
        assert!(l.centers[0].0 < l.centers[1].0 && l.centers[1].0 < l.centers[2].0);
        // The long edge passes through a dummy: three points.
        assert_eq!(l.routes[2].len(), 3);
        assert_eq!(l.routes[0].first().unwrap().0, l.centers[0].0 + 50.0);
        assert_eq!(l.routes[0].last().unwrap().0, l.centers[1].0 - 50.0);
    }

    #[test]
    fn nodes_of_a_column_never_overlap() {
        // A fan-out of 20 and a fan-in back: all in one column, apart.
        let mut edges = Vec::new();
        for i in 1..=20 {
            edges.push((0, i));
            edges.push((i, 21));
        }
        let l = layered(&boxes(22), &edges);
        let mut ys: Vec<f64> = (1..=20).map(|i| l.centers[i].1).collect();
        ys.sort_by(f64::total_cmp);
        for w in ys.windows(2) {
            assert!(w[1] - w[0] >= 40.0 + NODE_GAP - 1e-9, "{w:?}");
        }
        // Everything is inside the drawing.
        for &(x, y) in &l.centers {
            assert!(x - 50.0 >= 0.0 && x + 50.0 <= l.width);
            assert!(y - 20.0 >= 0.0 && y + 20.0 <= l.height);
        }
    }

    #[test]
    fn crossings_are_removed_where_an_order_without_them_exists() {
        // Two chains given in crossing order: a→d, b→c with c listed first.
        let l = layered(&boxes(4), &[(0, 3), (1, 2)]);
        // a above b means d above c.
        assert_eq!(
            l.centers[0].1 < l.centers[1].1,
            l.centers[3].1 < l.centers[2].1
        );
    }

    #[test]
    fn cycles_and_self_loops_still_lay_out() {
        let l = layered(&boxes(3), &[(0, 1), (1, 2), (2, 0), (1, 1)]);
        assert_eq!(l.centers.len(), 3);
        assert!(l.routes[3].is_empty());
        // The edge closing the cycle is drawn from its own source.
        let back = &l.routes[2];
        assert_eq!(back.first().unwrap().1, l.centers[2].1);
        assert_eq!(back.last().unwrap().1, l.centers[0].1);
    }

    #[test]
    fn crossing_count_matches_a_brute_force_count() {
        let columns = vec![vec![0, 1, 2], vec![3, 4, 5]];
        let mut down = vec![Vec::new(); 6];
        down[0] = vec![5, 4];
        down[1] = vec![3];
        down[2] = vec![3, 4];
        let pos = [0, 1, 2, 0, 1, 2];
        let mut brute = 0;
        let ends: Vec<(usize, usize)> = (0..3)
            .flat_map(|u| down[u].iter().map(move |&w| (pos[u], pos[w])))
            .collect();
        for (i, a) in ends.iter().enumerate() {
            for b in &ends[i + 1..] {
                if (a.0 < b.0 && a.1 > b.1) || (a.0 > b.0 && a.1 < b.1) {
                    brute += 1;
                }
            }
        }
        assert_eq!(crossings(&columns, &down, &pos), brute);
    }

    #[test]
    fn long_edges_bend_within_the_budget_and_the_rest_run_straight() {
        // A chain of n, each node also fed by the first: n²/2 bends without
        // a budget.
        let n = 1_000;
        let mut edges: Vec<(usize, usize)> = (1..n).map(|i| (i - 1, i)).collect();
        edges.extend((2..n).map(|i| (0, i)));
        let l = layered(&boxes(n), &edges);
        let bends: usize = l.routes.iter().map(|r| r.len().saturating_sub(2)).sum();
        assert!(bends <= MAX_BENDS, "{bends}");
        // Every edge is drawn: bent ones through their columns, the rest
        // straight from their source's right to their target's left.
        for (&(a, b), r) in edges.iter().zip(&l.routes) {
            assert_eq!(r.first().unwrap().1, l.centers[a].1);
            assert_eq!(r.last().unwrap().1, l.centers[b].1);
        }
        assert!(l.routes.iter().any(|r| r.len() == 2 && l.layers.len() == n));
    }

    #[test]
    fn isotonic_pools_violators() {
        assert_eq!(isotonic(&[1.0, 3.0, 2.0, 4.0]), vec![1.0, 2.5, 2.5, 4.0]);
        assert_eq!(isotonic(&[3.0, 2.0, 1.0]), vec![2.0, 2.0, 2.0]);
    }
}
