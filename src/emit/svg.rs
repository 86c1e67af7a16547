//! Diagrams as SVG, laid out in Rust (`emit/layout.rs`): the graph of
//! `graph`, `impact`, `plan` and `diff`, one box per dataset coloured by its
//! state, edges labelled. Every name goes through `escape::xml`.

use std::fmt::Write as _;

use super::escape::{xml, xml_line};
use super::layout;

/// One box of a diagram.
#[derive(Debug, Clone)]
pub struct Node {
    /// The dataset's node id (`data-id`, for the report's links).
    pub id: String,
    /// The first line, in bold: the dataset's name.
    pub title: String,
    /// A second line in small type (range, relation), if any.
    pub detail: Option<String>,
    /// Its state: one of `STATES`' classes.
    pub state: &'static str,
    /// What a pointer over it shows (every line of its explanation).
    pub tooltip: String,
}

/// One arrow of a diagram, between indices of `Diagram::nodes`.
#[derive(Debug, Clone)]
pub struct Edge {
    /// Upstream node.
    pub from: usize,
    /// Downstream node.
    pub to: usize,
    /// A label drawn along it (the time mapping), if any.
    pub label: Option<String>,
}

/// Boxes and arrows to draw, and a note on what was left out.
#[derive(Debug, Clone, Default)]
pub struct Diagram {
    /// The boxes.
    pub nodes: Vec<Node>,
    /// The arrows.
    pub edges: Vec<Edge>,
    /// What was folded away (`312 datasets not shown: …`), drawn under the
    /// legend.
    pub folded: Option<String>,
}

/// A state a box can be in: its CSS class, the legend's words, fill and
/// stroke colours. The report's docs (docs/report.md) describe each.
pub struct State {
    /// The class (`st-<name>`) and `data-state` value.
    pub name: &'static str,
    /// Legend text.
    pub legend: &'static str,
    /// Fill colour.
    pub fill: &'static str,
    /// Border colour.
    pub stroke: &'static str,
}

/// Every state, in legend order.
pub const STATES: &[State] = &[
    // Impact and plan.
    state("changed", "changed (the wrong table)", "#fecaca", "#b91c1c"),
    state(
        "partitions",
        "some partitions affected",
        "#fed7aa",
        "#c2410c",
    ),
    state(
        "widened",
        "widened to its whole history",
        "#fef08a",
        "#a16207",
    ),
    state(
        "full",
        "rebuilt whole (unpartitioned)",
        "#e9d5ff",
        "#7e22ce",
    ),
    state("context", "not affected", "#f1f5f9", "#94a3b8"),
    // Diff.
    state("breaking", "breaking change", "#fecaca", "#b91c1c"),
    state("removed", "removed", "#fca5a5", "#7f1d1d"),
    state(
        "could-not-compare",
        "could not compare",
        "#e5e7eb",
        "#111827",
    ),
    state("column", "column change", "#fed7aa", "#c2410c"),
    state("config", "settings change", "#bfdbfe", "#1d4ed8"),
    state(
        "non-breaking",
        "non-breaking (columns added)",
        "#bbf7d0",
        "#15803d",
    ),
    state("added", "added", "#99f6e4", "#0f766e"),
    state("no-op", "no change in meaning", "#f3f4f6", "#9ca3af"),
    state("downstream", "downstream of a change", "#fef9c3", "#ca8a04"),
    state(
        "possibly",
        "possibly downstream (through a *)",
        "#fefce8",
        "#eab308",
    ),
    // Graph: by dataset kind.
    state("source", "source", "#dcfce7", "#15803d"),
    state("model", "model", "#dbeafe", "#1d4ed8"),
    state("table", "table (SQL job)", "#e0e7ff", "#4338ca"),
    state("seed", "seed", "#fae8ff", "#a21caf"),
    state("snapshot", "snapshot", "#ede9fe", "#6d28d9"),
    state("path", "file or path", "#ccfbf1", "#0f766e"),
];

const fn state(
    name: &'static str,
    legend: &'static str,
    fill: &'static str,
    stroke: &'static str,
) -> State {
    State {
        name,
        legend,
        fill,
        stroke,
    }
}

/// The style sheet of every diagram and report: one rule per state.
pub fn style() -> String {
    let mut css = String::from(
        ".rp-node rect{stroke-width:1.5}\
         .rp-node text{font:12px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;fill:#111827}\
         .rp-node text.rp-detail{font-size:10.5px;fill:#374151}\
         .rp-node.st-changed rect{stroke-width:3.5}\
         .rp-node{cursor:pointer}\
         .rp-edge{fill:none;stroke:#64748b;stroke-width:1.2}\
         .rp-elabel{font:10px system-ui,sans-serif;fill:#475569}\
         .rp-legend text,.rp-folded{font:11px system-ui,sans-serif;fill:#374151}\
         .rp-node.rp-focus rect{stroke:#0ea5e9;stroke-width:4}",
    );
    for s in STATES {
        let _ = write!(
            css,
            ".st-{n} rect,rect.st-{n}{{fill:{f};stroke:{s}}}",
            n = s.name,
            f = s.fill,
            s = s.stroke
        );
    }
    css
}

/// The pixel width of `s` in the 12px monospace the boxes use.
fn text_width(s: &str, px: f64) -> f64 {
    s.chars()
        .map(|c| if (c as u32) < 0x1100 { 1.0 } else { 2.0 })
        .sum::<f64>()
        * px
        * 0.61
}

/// Longest label drawn in full; longer ones end in `…` (the tooltip has
/// them whole).
const MAX_LABEL: usize = 48;

/// `s` cut to `n` characters, the last one `…` when cut.
pub(super) fn clip_to(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut out: String = s.chars().take(n.saturating_sub(1)).collect();
        out.push('…');
        out
    }
}

fn clip(s: &str) -> String {
    clip_to(s, MAX_LABEL)
}

/// Height of the legend band above the graph.
fn legend_height(d: &Diagram) -> f64 {
    28.0 + if d.folded.is_some() { 18.0 } else { 0.0 }
}

/// Most boxes one picture draws (docs/limits.md): a layout of more is
/// unreadable, and its size grows faster than the graph.
pub const MAX_BOXES: usize = 1_500;
/// Most arrows one picture draws: a dense graph of 1,500 boxes can have a
/// million.
pub const MAX_ARROWS: usize = 6_000;

/// `d` within [`MAX_BOXES`] and [`MAX_ARROWS`]: the first boxes and arrows
/// are kept (callers put the ones that matter first), arrows to boxes cut
/// away are dropped, and what was cut is counted in the note under the
/// legend. Borrowed when nothing is cut.
pub fn capped(d: &Diagram) -> std::borrow::Cow<'_, Diagram> {
    if d.nodes.len() <= MAX_BOXES && d.edges.len() <= MAX_ARROWS {
        return std::borrow::Cow::Borrowed(d);
    }
    let nodes: Vec<Node> = d.nodes.iter().take(MAX_BOXES).cloned().collect();
    let kept = nodes.len();
    let inside: Vec<&Edge> = d
        .edges
        .iter()
        .filter(|e| e.from < kept && e.to < kept)
        .collect();
    let edges: Vec<Edge> = inside.iter().take(MAX_ARROWS).map(|&e| e.clone()).collect();
    let mut notes: Vec<String> = d.folded.iter().cloned().collect();
    if d.nodes.len() > kept {
        notes.push(format!(
            "{} of {} boxes not drawn (a picture holds at most {MAX_BOXES})",
            d.nodes.len() - kept,
            d.nodes.len()
        ));
    }
    if inside.len() > edges.len() {
        notes.push(format!(
            "{} of {} arrows not drawn (a picture holds at most {MAX_ARROWS})",
            inside.len() - edges.len(),
            inside.len()
        ));
    }
    std::borrow::Cow::Owned(Diagram {
        nodes,
        edges,
        folded: Some(notes.join("; ")),
    })
}

/// The diagram as an `<svg>` element; `standalone` adds the XML namespace
/// and the style sheet, so the file renders by itself. At most
/// [`MAX_BOXES`] boxes and [`MAX_ARROWS`] arrows are drawn (see [`capped`]).
pub fn render(d: &Diagram, standalone: bool) -> String {
    let d = capped(d);
    let d = d.as_ref();
    let sizes: Vec<(f64, f64)> = d
        .nodes
        .iter()
        .map(|n| {
            let title = text_width(&clip(&n.title), 12.0);
            let detail = n
                .detail
                .as_deref()
                .map_or(0.0, |t| text_width(&clip(t), 10.5));
            let h = if n.detail.is_some() { 40.0 } else { 26.0 };
            (title.max(detail) + 20.0, h)
        })
        .collect();
    let edges: Vec<(usize, usize)> = d.edges.iter().map(|e| (e.from, e.to)).collect();
    let l = layout::layered(&sizes, &edges);
    let top = legend_height(d);
    let used: Vec<&State> = STATES
        .iter()
        .filter(|s| d.nodes.iter().any(|n| n.state == s.name))
        .collect();
    let legend_width: f64 = used
        .iter()
        .map(|s| text_width(s.legend, 11.0) + 34.0)
        .sum::<f64>()
        + 16.0;
    let width = l.width.max(legend_width).ceil();
    let height = (l.height + top).ceil();
    let mut out = String::with_capacity(256 + d.nodes.len() * 400 + d.edges.len() * 160);
    let _ = write!(
        out,
        r#"<svg {}class="rp-graph" viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" aria-label="lineage graph: {} datasets, {} edges">"#,
        if standalone {
            r#"xmlns="http://www.w3.org/2000/svg" "#
        } else {
            ""
        },
        d.nodes.len(),
        d.edges.len()
    );
    if standalone {
        let _ = write!(
            out,
            "<style>{}</style><rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>",
            style()
        );
    }
    out.push_str(
        r##"<defs><marker id="rp-arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0L10,5L0,10z" fill="#64748b"/></marker></defs>"##,
    );
    // Legend.
    out.push_str(r#"<g class="rp-legend">"#);
    let mut x = 16.0;
    for s in &used {
        let _ = write!(
            out,
            r#"<rect class="st-{n}" x="{x}" y="8" width="14" height="12" rx="2"/><text x="{tx}" y="18">{t}</text>"#,
            n = s.name,
            tx = x + 19.0,
            t = xml(s.legend)
        );
        x += text_width(s.legend, 11.0) + 34.0;
    }
    out.push_str("</g>");
    if let Some(f) = &d.folded {
        let _ = write!(
            out,
            r#"<text class="rp-folded" x="16" y="38">{}</text>"#,
            xml(f)
        );
    }
    let _ = write!(out, r#"<g transform="translate(0,{top})">"#);
    // Edges first, so boxes sit on top of them.
    for (e, route) in d.edges.iter().zip(&l.routes) {
        if route.len() < 2 {
            continue;
        }
        let mut path = format!("M{:.1},{:.1}", route[0].0, route[0].1);
        for w in route.windows(2) {
            let ((x0, y0), (x1, y1)) = (w[0], w[1]);
            let mx = (x0 + x1) / 2.0;
            let _ = write!(path, "C{mx:.1},{y0:.1} {mx:.1},{y1:.1} {x1:.1},{y1:.1}");
        }
        let _ = write!(
            out,
            r#"<path class="rp-edge" d="{path}" marker-end="url(#rp-arrow)"/>"#
        );
        if let Some(label) = &e.label {
            // On the first stretch, just past the source, where it is clear
            // which edge it belongs to.
            let (x0, y0) = route[0];
            let (x1, y1) = route[1];
            let lx = x0 + (x1 - x0) * 0.5;
            let ly = (y0 + y1) / 2.0 - 4.0;
            let _ = write!(
                out,
                r#"<text class="rp-elabel" x="{lx:.1}" y="{ly:.1}" text-anchor="middle">{}</text>"#,
                xml(label)
            );
        }
    }
    for ((n, &(cx, cy)), &(w, h)) in d.nodes.iter().zip(&l.centers).zip(&sizes) {
        let (x, y) = (cx - w / 2.0, cy - h / 2.0);
        let _ = write!(
            out,
            r#"<g class="rp-node st-{s}" data-id="{id}" data-state="{s}" tabindex="0"><title>{tip}</title><rect x="{x:.1}" y="{y:.1}" width="{w:.1}" height="{h:.1}" rx="5"/><text x="{tx:.1}" y="{ty:.1}" font-weight="600">{t}</text>"#,
            s = n.state,
            id = xml_line(&n.id),
            tip = xml(&n.tooltip),
            tx = x + 10.0,
            ty = y + 17.0,
            t = xml_line(&clip(&n.title)),
        );
        if let Some(detail) = &n.detail {
            let _ = write!(
                out,
                r#"<text class="rp-detail" x="{:.1}" y="{:.1}">{}</text>"#,
                x + 10.0,
                y + 32.0,
                xml_line(&clip(detail))
            );
        }
        out.push_str("</g>");
    }
    out.push_str("</g></svg>");
    if standalone {
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(id: &str, state: &'static str) -> Node {
        Node {
            id: id.into(),
            title: id.into(),
            detail: None,
            state,
            tooltip: id.into(),
        }
    }

    #[test]
    fn every_state_has_one_distinct_class_and_a_style_rule() {
        let css = style();
        let mut names: Vec<&str> = STATES.iter().map(|s| s.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), STATES.len());
        for s in STATES {
            assert!(css.contains(&format!(".st-{} rect", s.name)), "{}", s.name);
        }
    }

    #[test]
    fn pictures_keep_their_first_boxes_and_arrows_and_count_the_rest() {
        let n = MAX_BOXES + 10;
        let d = Diagram {
            nodes: (0..n).map(|i| node(&format!("n{i}"), "model")).collect(),
            edges: (1..n)
                .flat_map(|i| (0..5).map(move |k| (i.saturating_sub(k + 1), i)))
                .map(|(from, to)| Edge {
                    from,
                    to,
                    label: None,
                })
                .collect(),
            folded: Some("3 hidden".into()),
        };
        let c = capped(&d);
        assert_eq!(c.nodes.len(), MAX_BOXES);
        assert_eq!(c.edges.len(), MAX_ARROWS);
        assert!(
            c.edges
                .iter()
                .all(|e| e.from < MAX_BOXES && e.to < MAX_BOXES)
        );
        let note = c.folded.as_deref().unwrap();
        assert!(note.starts_with("3 hidden; 10 of 1510 boxes"), "{note}");
        assert!(note.contains("arrows not drawn"), "{note}");
        let svg = render(&d, true);
        assert_eq!(svg.matches("<g class=\"rp-node").count(), MAX_BOXES);
        assert_eq!(svg.matches("class=\"rp-edge\"").count(), MAX_ARROWS);
    }

    #[test]
    fn hostile_names_are_escaped_and_long_ones_clipped() {
        let mut n = node("</svg><script>alert(1)</script>", "model");
        n.tooltip = "a\"b\u{1}".into();
        n.title = "x".repeat(100);
        let d = Diagram {
            nodes: vec![n, node("b", "source")],
            edges: vec![Edge {
                from: 1,
                to: 0,
                label: Some("<identity>".into()),
            }],
            folded: Some("3 & more".into()),
        };
        let svg = render(&d, true);
        assert!(!svg.contains("<script>"), "{svg}");
        assert!(svg.contains("&lt;/svg&gt;&lt;script&gt;"));
        assert!(svg.contains("a&quot;b?"));
        assert!(svg.contains("&lt;identity&gt;"));
        assert!(svg.contains("3 &amp; more"));
        assert!(svg.contains(&format!("{}…", "x".repeat(MAX_LABEL - 1))));
        assert_eq!(svg.matches("<g class=\"rp-node").count(), 2);
        // The legend shows only the states drawn.
        assert!(svg.contains(">model<") && svg.contains(">source<"));
        assert!(!svg.contains(">seed<"));
    }
}
