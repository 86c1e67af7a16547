//! The HTML reports' shared parts: one self-contained page (inline CSS, a
//! few lines of inline JS, inline SVG; a Content-Security-Policy that
//! forbids every network fetch), partition timelines and the schedule's
//! Gantt chart. Every name goes through `escape::xml`.

use std::fmt::Write as _;

use super::escape::{xml, xml_line};
use crate::schedule::Minute;
use crate::time::{Grain, Hour};

/// The page's own script: a click (or Enter) on a box of the graph opens
/// that dataset's details below and scrolls to it; nothing else.
const SCRIPT: &str = r#"(function(){
function show(id){var hit=null;document.querySelectorAll('[data-id]').forEach(function(el){if(el.tagName==='DETAILS'&&el.getAttribute('data-id')===id){el.open=true;el.classList.add('rp-hit');hit=hit||el;setTimeout(function(){el.classList.remove('rp-hit');},1600);}});if(hit){hit.scrollIntoView({block:'center'});}}
document.addEventListener('click',function(e){var n=e.target.closest&&e.target.closest('.rp-node');if(n){show(n.getAttribute('data-id'));}var b=e.target.closest&&e.target.closest('.rp-fitbtn');if(b){b.parentNode.querySelector('.rp-scroll').classList.toggle('rp-fit');}});
document.addEventListener('keydown',function(e){if(e.key==='Enter'&&e.target.classList&&e.target.classList.contains('rp-node')){show(e.target.getAttribute('data-id'));}});
})();"#;

const PAGE_CSS: &str = "body{font:14px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;color:#111827;margin:0;background:#f8fafc}\
header{background:#0f172a;color:#f8fafc;padding:14px 24px}header h1{font-size:18px;margin:0 0 4px}header p{margin:0;color:#cbd5e1}\
main{padding:8px 24px 40px}section{background:#fff;border:1px solid #e2e8f0;border-radius:8px;margin:16px 0;padding:12px 16px}\
h2{font-size:15px;margin:4px 0 10px}.rp-scroll{overflow:auto;max-height:80vh}.rp-fit svg.rp-graph{max-width:100%;height:auto}\
.rp-fitbtn{float:right;font-size:12px}\
table{border-collapse:collapse;font-size:13px}td,th{border-bottom:1px solid #e2e8f0;padding:4px 8px;text-align:left;vertical-align:top}\
code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px}\
details.rp-strip{border-bottom:1px solid #f1f5f9}details.rp-strip>summary{display:grid;grid-template-columns:minmax(180px,260px) auto 1fr;gap:12px;align-items:center;cursor:pointer;padding:3px 0}\
details.rp-strip ul{margin:4px 0 8px 20px;font-size:12.5px;color:#334155}.rp-hit{background:#e0f2fe}\
.rp-badge{display:inline-block;border-radius:9px;padding:0 8px;font-size:12px;border:1px solid}\
.rp-tl-bg{fill:#f8fafc;stroke:#cbd5e1}.rp-tl-grid{stroke:#e2e8f0}.rp-tl-asof{stroke:#0f172a;stroke-dasharray:2 2}\
.rp-tl-hit{fill:#ea580c}.rp-tl-widened{fill:url(#rp-hatch)}.rp-tl-full{fill:#a855f7}.rp-tl-changed{fill:#dc2626}\
.rp-axis text,.rp-gantt text{font:11px system-ui,sans-serif;fill:#475569}\
.rp-bar{stroke:#1e293b;stroke-width:.5}.rp-blackout{fill:#ef4444;fill-opacity:.22}.rp-closed{fill:url(#rp-closed)}\
.rp-cap{stroke:#dc2626;stroke-dasharray:4 3}.rp-load{fill:#93c5fd;stroke:#2563eb}.rp-muted{color:#64748b}";

/// A whole page: `title` in the header, `subtitle` under it, then the
/// sections (each already HTML).
pub fn page(title: &str, subtitle: &str, sections: &[String]) -> String {
    let mut out = String::with_capacity(4096 + sections.iter().map(String::len).sum::<usize>());
    let _ = write!(
        out,
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <meta name=\"generator\" content=\"ripple {}\"><title>{}</title><style>{}{}</style></head><body>\n",
        env!("CARGO_PKG_VERSION"),
        xml(title),
        PAGE_CSS,
        super::svg::style()
    );
    // Patterns shared by every inline SVG of the page.
    out.push_str(
        "<svg width=\"0\" height=\"0\" style=\"position:absolute\" aria-hidden=\"true\"><defs>\
         <pattern id=\"rp-hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#fde68a\"/><rect width=\"3\" height=\"6\" fill=\"#f59e0b\"/></pattern>\
         <pattern id=\"rp-closed\" width=\"8\" height=\"8\" patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\"><rect width=\"8\" height=\"8\" fill=\"#f1f5f9\"/><rect width=\"2\" height=\"8\" fill=\"#cbd5e1\"/></pattern>\
         </defs></svg>\n",
    );
    let _ = writeln!(
        out,
        "<header><h1>{}</h1><p>{}</p></header><main>",
        xml(title),
        xml(subtitle)
    );
    for s in sections {
        out.push_str(s);
        out.push('\n');
    }
    let _ = writeln!(out, "</main><script>{SCRIPT}</script></body></html>");
    out
}

/// A section with a heading around `body` (HTML).
pub fn section(class: &str, heading: &str, body: &str) -> String {
    format!(
        "<section class=\"{}\"><h2>{}</h2>{body}</section>",
        xml(class),
        xml(heading)
    )
}

/// The graph's section: the diagram fitted to the page's width, with a
/// button for its actual size.
pub fn graph_section(heading: &str, svg: &str) -> String {
    section(
        "rp-graph-section",
        heading,
        &format!(
            "<button class=\"rp-fitbtn\" type=\"button\">fit / actual size</button><div class=\"rp-scroll rp-fit\">{svg}</div>"
        ),
    )
}

/// A state's badge: its legend's colours around `text`.
pub fn badge(state: &str, text: &str) -> String {
    let s = super::svg::STATES.iter().find(|s| s.name == state);
    let (fill, stroke) = s.map_or(("#f1f5f9", "#64748b"), |s| (s.fill, s.stroke));
    format!(
        "<span class=\"rp-badge\" data-state=\"{}\" style=\"background:{fill};border-color:{stroke}\">{}</span>",
        xml(state),
        xml(text)
    )
}

/// One dataset's row of the partition timelines.
pub struct Strip<'a> {
    /// Node id (links the row to its box in the graph).
    pub id: &'a str,
    /// Name.
    pub name: &'a str,
    /// Its state in the graph (`changed`, `partitions`, ...).
    pub state: &'static str,
    /// Its grain (cell width).
    pub grain: Grain,
    /// Affected hours, `[from, to)`; empty when rebuilt whole.
    pub spans: &'a [(Hour, Hour)],
    /// Before widening to the whole history, when widened.
    pub widened_from: Option<&'a [(Hour, Hour)]>,
    /// Rebuilt whole.
    pub full: bool,
    /// The affected range in words (`2026-01-10..2026-01-12`).
    pub range: String,
    /// Partitions, as the impact counts them.
    pub partitions: String,
    /// Reasons and `--explain` lines, shown when the row is opened.
    pub lines: Vec<&'a str>,
}

/// Width of a timeline in pixels.
const TIMELINE_WIDTH: f64 = 520.0;
/// Reasons listed per dataset at most: a dataset reading 1,700 others once
/// listed every one in every row (66 MB at 600 models; at 1,700 the page
/// could not be made in 4 GB).
pub const MAX_REASONS: usize = 40;

/// Timelines drawn cell by cell up to this many cells; past it, spans only.
const MAX_CELLS: u64 = 160;
/// Rows drawn with a timeline; the rest are listed in a table.
pub const MAX_STRIPS: usize = 1_000;

/// The hours a timeline axis covers: the changed range with room around
/// it, up to `as_of` unless that is far away. Widened histories and
/// coarse rollups run off the edges, marked, rather than squash the days
/// that were wrong into a sliver.
pub fn axis(strips: &[Strip<'_>], as_of: Hour) -> (Hour, Hour) {
    let focus = || {
        strips
            .iter()
            .filter(|s| s.state == "changed" && !s.full)
            .flat_map(|s| s.spans.iter())
            .filter(|&&(a, _)| a != crate::time::UNBOUNDED)
    };
    let from = focus().map(|&(a, _)| a).min().unwrap_or(as_of - 24 * 14);
    let end = focus().map(|&(_, b)| b).max().unwrap_or(as_of);
    let len = (end - from).max(24);
    let to = as_of.clamp(end, end + (8 * len).max(24 * 31));
    let pad = ((to - from) / 10).max(72);
    (Grain::Day.floor(from - pad), Grain::Day.ceil(to + pad / 2))
}

/// The timelines: one `<details>` per dataset (reasons inside), at most
/// [`MAX_STRIPS`] drawn, the rest in a table; `as_of` marked.
pub fn strips(rows: &[Strip<'_>], axis: (Hour, Hour), as_of: Hour) -> String {
    let mut out = String::with_capacity(rows.len() * 700 + 1024);
    let (a, b) = axis;
    let scale = TIMELINE_WIDTH / (b - a).max(1) as f64;
    let x = |h: Hour| ((h.clamp(a, b) - a) as f64 * scale).clamp(0.0, TIMELINE_WIDTH);
    let _ = write!(
        out,
        "<div class=\"rp-axis\" style=\"display:grid;grid-template-columns:minmax(180px,260px) auto 1fr;gap:12px\"><span></span><svg width=\"{w}\" height=\"16\"><text x=\"0\" y=\"12\">{from}</text><text x=\"{w}\" y=\"12\" text-anchor=\"end\">{to}</text>{asof}</svg><span></span></div>",
        w = TIMELINE_WIDTH,
        from = xml(&Grain::Day.key(a)),
        to = xml(&Grain::Day.key(b - 1)),
        // The as-of mark's label, where it does not cover the axis' ends.
        asof = if x(as_of) > 90.0 && x(as_of) < TIMELINE_WIDTH - 150.0 {
            format!(
                "<text x=\"{:.1}\" y=\"12\" text-anchor=\"middle\">as of {}</text>",
                x(as_of),
                xml(&Grain::Day.key(as_of))
            )
        } else {
            String::new()
        },
    );
    for s in rows.iter().take(MAX_STRIPS) {
        let _ = write!(
            out,
            "<details class=\"rp-strip\" data-id=\"{id}\" data-state=\"{st}\"><summary><span class=\"mono\">{name}</span><svg class=\"rp-timeline\" width=\"{w}\" height=\"14\" role=\"img\" aria-label=\"{name}: {range}\"><rect class=\"rp-tl-bg\" x=\"0\" y=\"0.5\" width=\"{w}\" height=\"13\"/>",
            id = xml_line(s.id),
            st = s.state,
            name = xml_line(s.name),
            range = xml(&s.range),
            w = TIMELINE_WIDTH,
        );
        if s.full {
            let _ = write!(
                out,
                "<rect class=\"rp-tl-full\" x=\"0\" y=\"1\" width=\"{TIMELINE_WIDTH}\" height=\"12\"><title>rebuilt whole</title></rect>"
            );
        } else {
            // Cell boundaries, when there are few enough to see.
            let cells = s.grain.count(s.grain.floor(a), s.grain.ceil(b));
            if cells > 1 && cells <= MAX_CELLS {
                let mut h = s.grain.ceil(a);
                while h < b {
                    let _ = write!(
                        out,
                        "<line class=\"rp-tl-grid\" x1=\"{0:.1}\" x2=\"{0:.1}\" y1=\"1\" y2=\"13\"/>",
                        x(h)
                    );
                    h = s.grain.next(h);
                }
            }
            let class = if s.state == "changed" {
                "rp-tl-changed"
            } else {
                "rp-tl-hit"
            };
            let (shaded, filled) = match s.widened_from {
                Some(direct) => (s.spans, direct),
                None => (&[][..], s.spans),
            };
            for (spans, class) in [(shaded, "rp-tl-widened"), (filled, class)] {
                for &(from, to) in spans {
                    if to <= a || from >= b {
                        continue;
                    }
                    let (x0, x1) = (x(from), x(to));
                    let _ = write!(
                        out,
                        "<rect class=\"{class}\" x=\"{x0:.1}\" y=\"1\" width=\"{:.1}\" height=\"12\"><title>{}</title></rect>",
                        (x1 - x0).max(1.5),
                        xml(&span_words(s.grain, from, to))
                    );
                }
            }
            if s.spans.iter().any(|&(from, to)| from < a && to > a) {
                out.push_str(
                    "<path d=\"M7,2L1,7L7,12z\" fill=\"#0f172a\"><title>continues before the axis</title></path>",
                );
            }
            if s.spans.iter().any(|&(from, to)| to > b && from < b) {
                let _ = write!(
                    out,
                    "<path d=\"M{0},2L{1},7L{0},12z\" fill=\"#0f172a\"><title>continues after the axis</title></path>",
                    TIMELINE_WIDTH - 7.0,
                    TIMELINE_WIDTH - 1.0
                );
            }
        }
        let _ = write!(
            out,
            "<line class=\"rp-tl-asof\" x1=\"{0:.1}\" x2=\"{0:.1}\" y1=\"0\" y2=\"14\"/></svg><span>{1} · {2}</span></summary><ul>",
            x(as_of),
            xml(&s.range),
            xml(&s.partitions)
        );
        for l in s.lines.iter().take(MAX_REASONS) {
            let _ = write!(out, "<li>{}</li>", xml(l));
        }
        if s.lines.len() > MAX_REASONS {
            let _ = write!(
                out,
                "<li class=\"rp-muted\">{} more (the JSON output has every one)</li>",
                s.lines.len() - MAX_REASONS
            );
        }
        out.push_str("</ul></details>");
    }
    if rows.len() > MAX_STRIPS {
        let _ = write!(
            out,
            "<p class=\"rp-muted\">{} more datasets, without timelines:</p><table><tr><th>dataset</th><th>affected</th><th>partitions</th></tr>",
            rows.len() - MAX_STRIPS
        );
        for s in &rows[MAX_STRIPS..] {
            let _ = write!(
                out,
                "<tr data-id=\"{}\"><td class=\"mono\">{}</td><td>{}</td><td>{}</td></tr>",
                xml_line(s.id),
                xml_line(s.name),
                xml(&s.range),
                xml(&s.partitions)
            );
        }
        out.push_str("</table>");
    }
    out
}

/// `2026-01-10..2026-01-12` for the partitions of `grain` in `[from, to)`.
fn span_words(grain: Grain, from: Hour, to: Hour) -> String {
    let first = if from == crate::time::UNBOUNDED {
        "…".to_string()
    } else {
        grain.key(from)
    };
    let last = grain.key(grain.floor(to - 1));
    if first == last {
        first
    } else {
        format!("{first}..{last}")
    }
}

/// One bar of the Gantt chart.
pub struct Bar<'a> {
    /// Its row (index into the rows given to [`gantt`]).
    pub row: usize,
    /// When it starts and ends; in minutes, or in waves when unscheduled.
    pub span: (Minute, Minute),
    /// Its box state's colours.
    pub state: &'static str,
    /// What a pointer over it shows.
    pub tooltip: &'a str,
    /// Its task id (`data-task`).
    pub task: &'a str,
}

/// What the Gantt chart's x axis counts.
pub enum Clock<'a> {
    /// Real minutes (a scheduled plan): blackouts and closed hours shaded,
    /// the running-task count drawn against the cap.
    Minutes {
        /// Production runs, `[from, to)`.
        blackouts: &'a [(Minute, Minute)],
        /// Allowed windows, minutes of the day (empty: always open).
        windows: &'a [(i64, i64)],
        /// The concurrency cap.
        cap: u32,
    },
    /// Waves of the wavefront order (no `--start`): wave k spans [k, k+1).
    Waves,
}

/// Longest rows drawn; more are folded into a count.
const MAX_ROWS: usize = 400;

/// A Gantt chart of `bars` over `rows` (row labels).
pub fn gantt(rows: &[String], bars: &[Bar<'_>], clock: &Clock<'_>) -> String {
    let label_w = 240.0;
    let chart_w = 900.0;
    let row_h = 18.0;
    let shown = rows.len().min(MAX_ROWS);
    let (t0, t1) = bars
        .iter()
        .filter(|b| b.row < shown)
        .fold((Minute::MAX, Minute::MIN), |(a, b), bar| {
            (a.min(bar.span.0), b.max(bar.span.1))
        });
    if t0 >= t1 {
        return "<p class=\"rp-muted\">no tasks</p>".to_string();
    }
    let scale = chart_w / (t1 - t0) as f64;
    let x = |m: Minute| label_w + ((m.clamp(t0, t1) - t0) as f64 * scale);
    let load_h = if matches!(clock, Clock::Minutes { .. }) {
        70.0
    } else {
        0.0
    };
    let top = 22.0;
    let height = top + shown as f64 * row_h + load_h + 24.0;
    let width = label_w + chart_w + 12.0;
    let mut out = String::with_capacity(bars.len() * 220 + 4096);
    let _ = write!(
        out,
        "<svg class=\"rp-gantt\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" role=\"img\" aria-label=\"schedule: {} tasks\">",
        bars.len()
    );
    let rows_bottom = top + shown as f64 * row_h;
    // Axis ticks.
    match clock {
        Clock::Minutes {
            blackouts, windows, ..
        } => {
            let span_h = (t1 - t0) / 60;
            let step = [1, 2, 3, 6, 12, 24, 48, 96, 168, 336, 720]
                .into_iter()
                .find(|s| span_h / s <= 14)
                .unwrap_or(1440)
                * 60;
            let mut m = t0.div_euclid(step) * step;
            while m <= t1 {
                if m >= t0 {
                    let _ = write!(
                        out,
                        "<line class=\"rp-tl-grid\" x1=\"{0:.1}\" x2=\"{0:.1}\" y1=\"{top}\" y2=\"{rows_bottom}\"/><text x=\"{0:.1}\" y=\"14\" text-anchor=\"middle\">{1}</text>",
                        x(m),
                        xml(&short_minute(m))
                    );
                }
                m += step;
            }
            // Closed hours: outside every allowed window.
            if !windows.is_empty() {
                let mut day = t0.div_euclid(1440) * 1440;
                while day < t1 {
                    let mut open: Vec<(Minute, Minute)> = Vec::new();
                    for &(a, b) in windows.iter() {
                        if a < b {
                            open.push((day + a, day + b));
                        } else {
                            open.push((day - 1440 + a, day + b));
                            open.push((day + a, day + 1440 + b));
                        }
                    }
                    open.sort_unstable();
                    let mut at = day;
                    for (a, b) in open {
                        if a > at {
                            closed(&mut out, x(at), x(a.min(day + 1440)), top, rows_bottom);
                        }
                        at = at.max(b);
                    }
                    if at < day + 1440 {
                        closed(&mut out, x(at), x(day + 1440), top, rows_bottom);
                    }
                    day += 1440;
                }
            }
            for &(a, b) in blackouts.iter() {
                if b <= t0 || a >= t1 {
                    continue;
                }
                let _ = write!(
                    out,
                    "<rect class=\"rp-blackout\" x=\"{:.1}\" y=\"{top}\" width=\"{:.1}\" height=\"{}\"><title>production runs {}–{}</title></rect>",
                    x(a),
                    (x(b) - x(a)).max(1.0),
                    rows_bottom - top,
                    xml(&crate::schedule::display_minute(a)),
                    xml(&crate::schedule::display_minute(b))
                );
            }
        }
        Clock::Waves => {
            for w in t0..t1 {
                let _ = write!(
                    out,
                    "<text x=\"{:.1}\" y=\"14\" text-anchor=\"middle\">wave {}</text>",
                    (x(w) + x(w + 1)) / 2.0,
                    w + 1
                );
            }
        }
    }
    for (i, r) in rows.iter().take(shown).enumerate() {
        let _ = write!(
            out,
            "<text class=\"mono\" x=\"4\" y=\"{:.1}\">{}</text>",
            top + i as f64 * row_h + 13.0,
            xml(&super::svg::clip_to(r, 34))
        );
    }
    for b in bars.iter().filter(|b| b.row < shown) {
        let (x0, x1) = (x(b.span.0), x(b.span.1));
        let _ = write!(
            out,
            "<rect class=\"rp-bar st-{st}\" data-task=\"{task}\" x=\"{x0:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" rx=\"2\"><title>{tip}</title></rect>",
            top + b.row as f64 * row_h + 3.0,
            (x1 - x0).max(1.5),
            row_h - 6.0,
            st = b.state,
            task = xml_line(b.task),
            tip = xml(b.tooltip),
        );
    }
    if let Clock::Minutes { cap, .. } = clock {
        // Tasks running at once, against the cap.
        let mut events: Vec<(Minute, i64)> = bars
            .iter()
            .flat_map(|b| [(b.span.0, 1), (b.span.1, -1)])
            .collect();
        events.sort_unstable();
        let base = rows_bottom + load_h;
        let peak = (*cap as i64).max(1) + 1;
        let y = |k: i64| base - (k as f64 / peak as f64) * (load_h - 14.0);
        let mut d = format!("M{:.1},{:.1}", x(t0), base);
        let mut running = 0i64;
        for (m, delta) in events {
            let _ = write!(d, "L{:.1},{:.1}", x(m), y(running));
            running += delta;
            let _ = write!(d, "L{:.1},{:.1}", x(m), y(running));
        }
        let _ = write!(d, "L{:.1},{:.1}Z", x(t1), base);
        let _ = write!(
            out,
            "<path class=\"rp-load\" d=\"{d}\" fill-opacity=\".5\"/><line class=\"rp-cap\" x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{2:.1}\" y2=\"{2:.1}\"/><text x=\"4\" y=\"{2:.1}\">max_concurrency {cap}</text><text x=\"4\" y=\"{3:.1}\">tasks running</text>",
            label_w,
            label_w + chart_w,
            y(*cap as i64),
            base - 2.0,
        );
    }
    out.push_str("</svg>");
    if rows.len() > shown {
        let _ = write!(
            out,
            "<p class=\"rp-muted\">{} more rows not drawn (the JSON plan lists every task).</p>",
            rows.len() - shown
        );
    }
    out
}

fn closed(out: &mut String, x0: f64, x1: f64, top: f64, bottom: f64) {
    if x1 > x0 {
        let _ = write!(
            out,
            "<rect class=\"rp-closed\" x=\"{x0:.1}\" y=\"{top}\" width=\"{:.1}\" height=\"{:.1}\"><title>outside the allowed windows</title></rect>",
            x1 - x0,
            bottom - top
        );
    }
}

/// `02-01 20:00` for axis ticks.
fn short_minute(m: Minute) -> String {
    let full = crate::schedule::display_minute(m);
    // 2026-02-01T20:00Z → 02-01 20:00
    full.get(5..16)
        .map_or(full.clone(), |s| s.replace('T', " "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_is_self_contained() {
        let p = page("t</title>", "s", &[section("x", "h", "<p>b</p>")]);
        assert!(p.starts_with("<!doctype html>"));
        assert!(p.contains("default-src 'none'"));
        assert!(p.contains("<title>t&lt;/title&gt;</title>"));
        for external in ["http://", "https://", "src=\"", "href=\""] {
            let outside_svg_ns = p.replace("http://www.w3.org/2000/svg", "");
            assert!(!outside_svg_ns.contains(external), "{external}");
        }
    }

    #[test]
    fn widened_history_is_shaded_and_what_upstream_broke_filled() {
        let day = 24;
        let as_of = 400 * day;
        let spans = [(100 * day, as_of)];
        let direct = [(380 * day, 383 * day)];
        let rows = [
            Strip {
                id: "source.raw",
                name: "raw",
                state: "changed",
                grain: Grain::Day,
                spans: &direct,
                widened_from: None,
                full: false,
                range: "r".into(),
                partitions: "3".into(),
                lines: vec![],
            },
            Strip {
                id: "model.a",
                name: "a",
                state: "widened",
                grain: Grain::Day,
                spans: &spans,
                widened_from: Some(&direct),
                full: false,
                range: "r".into(),
                partitions: "300".into(),
                lines: vec!["because <b>"],
            },
        ];
        let ax = axis(&rows, as_of);
        // The axis is made for the three days, not the 300.
        assert!(ax.0 > 300 * day && ax.0 < 380 * day, "{ax:?}");
        assert!(ax.1 >= as_of, "{ax:?}");
        let html = strips(&rows, ax, as_of);
        assert_eq!(html.matches("class=\"rp-tl-widened\"").count(), 1);
        assert_eq!(html.matches("class=\"rp-tl-hit\"").count(), 1);
        assert_eq!(html.matches("class=\"rp-tl-changed\"").count(), 1);
        assert!(html.contains("continues before the axis"));
        assert!(html.contains("because &lt;b&gt;"));
    }

    #[test]
    fn the_gantt_shades_closed_hours_and_production_and_draws_the_cap() {
        let bars = [
            Bar {
                row: 0,
                span: (1200, 1260),
                state: "partitions",
                tooltip: "t1",
                task: "a@1",
            },
            Bar {
                row: 1,
                span: (1260, 1900),
                state: "partitions",
                tooltip: "t2",
                task: "b@1",
            },
        ];
        let svg = gantt(
            &["a".into(), "b".into()],
            &bars,
            &Clock::Minutes {
                blackouts: &[(1300, 1320)],
                windows: &[(1200, 360)],
                cap: 2,
            },
        );
        assert_eq!(svg.matches("class=\"rp-bar").count(), 2);
        assert_eq!(svg.matches("class=\"rp-blackout\"").count(), 1);
        assert!(svg.contains("rp-closed"), "06:00–20:00 is closed");
        assert!(svg.contains("max_concurrency 2"));
    }
}
