//! Building Mermaid flowcharts: ids are the caller's plain words, every
//! label is escaped (see [`super::escape::mermaid_label`]), subgraphs nest.

use std::fmt::Write as _;

use super::escape::mermaid_label;

/// How a node is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// `id["label"]`: a box.
    Box,
    /// `id[("label")]`: a cylinder (sources).
    Database,
    /// `id[["label"]]`: a box with doubled sides (tables known from SQL).
    Subroutine,
}

/// A `flowchart LR` being written.
pub struct Flowchart {
    out: String,
    depth: usize,
}

impl Default for Flowchart {
    fn default() -> Self {
        Flowchart {
            out: String::from("flowchart LR\n"),
            depth: 1,
        }
    }
}

impl Flowchart {
    /// An empty left-to-right flowchart.
    pub fn new() -> Self {
        Self::default()
    }

    fn indent(&mut self) {
        for _ in 0..self.depth {
            self.out.push_str("  ");
        }
    }

    /// A node whose label is `lines`, each escaped, joined by line breaks.
    pub fn node(&mut self, id: &str, shape: Shape, lines: &[&str]) {
        let (open, close) = match shape {
            Shape::Box => ("[", "]"),
            Shape::Database => ("[(", ")]"),
            Shape::Subroutine => ("[[", "]]"),
        };
        let label: Vec<String> = lines.iter().map(|l| mermaid_label(l)).collect();
        self.indent();
        let _ = writeln!(self.out, "{id}{open}\"{}\"{close}", label.join("<br/>"));
    }

    /// An edge, labelled when `label` is given.
    pub fn edge(&mut self, from: &str, to: &str, label: Option<&str>) {
        self.indent();
        let _ = match label {
            Some(l) => writeln!(self.out, "{from} -->|\"{}\"| {to}", mermaid_label(l)),
            None => writeln!(self.out, "{from} --> {to}"),
        };
    }

    /// Opens a subgraph; the nodes written until [`Flowchart::end`] are in it.
    pub fn subgraph(&mut self, id: &str, label: &str) {
        self.indent();
        let _ = writeln!(self.out, "subgraph {id}[\"{}\"]", mermaid_label(label));
        self.depth += 1;
    }

    /// Closes the innermost subgraph.
    pub fn end(&mut self) {
        self.depth = self.depth.saturating_sub(1).max(1);
        self.indent();
        self.out.push_str("end\n");
    }

    /// Puts `nodes` in class `class` (a plain word).
    pub fn class(&mut self, nodes: &[String], class: &str) {
        self.indent();
        let _ = writeln!(self.out, "class {} {class}", nodes.join(","));
    }

    /// Defines how class `class` is drawn.
    pub fn class_def(&mut self, class: &str, style: &str) {
        self.indent();
        let _ = writeln!(self.out, "classDef {class} {style}");
    }

    /// The flowchart's text.
    pub fn finish(self) -> String {
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_escaped_and_subgraphs_indent() {
        let mut f = Flowchart::new();
        f.subgraph("s0", "a\"b");
        f.node("t0", Shape::Box, &["x]", "y"]);
        f.end();
        f.node("n1", Shape::Database, &["src"]);
        f.edge("t0", "n1", Some("window [-6, 0]"));
        f.edge("n1", "t0", None);
        let text = f.finish();
        assert_eq!(
            text,
            "flowchart LR\n  subgraph s0[\"a#quot;b\"]\n    t0[\"x]<br/>y\"]\n  end\n  n1[(\"src\")]\n  t0 -->|\"window [-6, 0]\"| n1\n  n1 --> t0\n"
        );
    }
}
