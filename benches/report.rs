//! The reports' layered layout (`emit/layout.rs`) against the layout-rs
//! crate on the same graphs: time per layout, and (printed before the
//! timings) edge crossings of straight lines between box centres and the
//! drawing's size, so the choice in docs/report.md can be checked. Also
//! writes both pictures of a random 60-node graph to
//! `target/layout-compare/` to look at.
//!
//!   cargo bench --bench report

use std::fmt::Write as _;

use ripple::emit::layout::layered;

/// A random layered DAG like a dbt project's: node i reads one to three
/// earlier nodes, mostly recent ones.
fn graph(n: usize) -> Vec<(usize, usize)> {
    let mut state = 7u64;
    let mut next = |m: usize| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((state >> 33) % m.max(1) as u64) as usize
    };
    let mut edges = Vec::new();
    for i in 1..n {
        for _ in 0..1 + next(3) {
            let window = (i / 3).max(1).min(i);
            let up = i - 1 - next(window);
            if !edges.contains(&(up, i)) {
                edges.push((up, i));
            }
        }
    }
    edges
}

fn sizes(n: usize) -> Vec<(f64, f64)> {
    (0..n)
        .map(|i| (80.0 + (i % 7) as f64 * 12.0, 26.0))
        .collect()
}

/// layout-rs: box centres and the drawing's size.
fn layout_rs(n: usize, edges: &[(usize, usize)]) -> (Vec<(f64, f64)>, String) {
    use layout::backends::svg::SVGWriter;
    use layout::core::base::Orientation;
    use layout::core::geometry::Point;
    use layout::core::style::StyleAttr;
    use layout::std_shapes::shapes::{Arrow, Element, ShapeKind};
    use layout::topo::layout::VisualGraph;
    let mut vg = VisualGraph::new(Orientation::LeftToRight);
    let handles: Vec<_> = sizes(n)
        .iter()
        .enumerate()
        .map(|(i, &(w, h))| {
            vg.add_node(Element::create(
                ShapeKind::new_box(&format!("n{i}")),
                StyleAttr::simple(),
                Orientation::LeftToRight,
                Point::new(w, h),
            ))
        })
        .collect();
    for &(a, b) in edges {
        vg.add_edge(Arrow::simple(""), handles[a], handles[b]);
    }
    let mut svg = SVGWriter::new();
    vg.do_it(false, false, false, &mut svg);
    let centres = handles
        .iter()
        .map(|&h| {
            let c = vg.pos(h).center();
            (c.x, c.y)
        })
        .collect();
    (centres, svg.finalize())
}

/// Crossings of straight segments between box centres (a proxy both
/// layouts are measured by alike).
fn crossings(centres: &[(f64, f64)], edges: &[(usize, usize)]) -> usize {
    let cross = |p: (f64, f64), q: (f64, f64), r: (f64, f64), s: (f64, f64)| {
        let o = |a: (f64, f64), b: (f64, f64), c: (f64, f64)| {
            ((b.0 - a.0) * (c.1 - a.1) - (b.1 - a.1) * (c.0 - a.0)).signum()
        };
        o(p, q, r) * o(p, q, s) < 0.0 && o(r, s, p) * o(r, s, q) < 0.0
    };
    let mut count = 0;
    for (i, &(a, b)) in edges.iter().enumerate() {
        for &(c, d) in &edges[i + 1..] {
            if a == c || a == d || b == c || b == d {
                continue;
            }
            if cross(centres[a], centres[b], centres[c], centres[d]) {
                count += 1;
            }
        }
    }
    count
}

fn bbox(centres: &[(f64, f64)]) -> (f64, f64) {
    let (mut x0, mut y0, mut x1, mut y1) = (f64::MAX, f64::MAX, f64::MIN, f64::MIN);
    for &(x, y) in centres {
        x0 = x0.min(x);
        y0 = y0.min(y);
        x1 = x1.max(x);
        y1 = y1.max(y);
    }
    (x1 - x0, y1 - y0)
}

fn compare() {
    eprintln!(
        "layout comparison (straight-line crossings between box centres; span of centres; one run's time)"
    );
    for n in [30, 60, 200, 500, 1000] {
        let edges = graph(n);
        let t = std::time::Instant::now();
        let ours = layered(&sizes(n), &edges);
        let ours_time = t.elapsed();
        let (w0, h0) = bbox(&ours.centers);
        let mut row = format!(
            "  {n:>5} nodes {:>5} edges   ripple: {:>6} crossings, {w0:>6.0}×{h0:<6.0} {:>9.1?}",
            edges.len(),
            crossings(&ours.centers, &edges),
            ours_time
        );
        // layout-rs grows much faster than linearly: past 200 nodes it
        // takes minutes, so it is measured up to there (200 nodes took 8 s).
        if n <= 200 {
            let t = std::time::Instant::now();
            let (theirs, _) = layout_rs(n, &edges);
            let theirs_time = t.elapsed();
            let (w1, h1) = bbox(&theirs);
            let _ = write!(
                row,
                "   layout-rs: {:>6} crossings, {w1:>6.0}×{h1:<6.0} {:>9.1?}",
                crossings(&theirs, &edges),
                theirs_time
            );
        }
        eprintln!("{row}");
    }
    // Both pictures of one graph.
    let n = 60;
    let edges = graph(n);
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/layout-compare");
    let _ = std::fs::create_dir_all(&dir);
    let (_, theirs) = layout_rs(n, &edges);
    let _ = std::fs::write(dir.join("layout-rs.svg"), theirs);
    let d = ripple::emit::svg::Diagram {
        nodes: (0..n)
            .map(|i| ripple::emit::svg::Node {
                id: format!("n{i}"),
                title: format!("n{i}"),
                detail: None,
                state: "model",
                tooltip: String::new(),
            })
            .collect(),
        edges: edges
            .iter()
            .map(|&(from, to)| ripple::emit::svg::Edge {
                from,
                to,
                label: None,
            })
            .collect(),
        folded: None,
    };
    let _ = std::fs::write(dir.join("ripple.svg"), ripple::emit::svg::render(&d, true));
}

fn main() {
    compare();
    divan::main();
}

#[divan::bench(args = [100, 1000, 5000])]
fn ripple_layered(bencher: divan::Bencher, n: usize) {
    let edges = graph(n);
    let s = sizes(n);
    bencher.bench(|| layered(&s, &edges));
}

#[divan::bench(args = [30, 100], sample_count = 10)]
fn layout_rs_crate(bencher: divan::Bencher, n: usize) {
    let edges = graph(n);
    bencher.bench(|| layout_rs(n, &edges));
}
