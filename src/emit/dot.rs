//! Building DOT with graphviz-rust's AST and printer, every id and value
//! escaped (see [`super::escape::dot_string`]).

use graphviz_rust::dot_structures::{
    Attribute, Edge, EdgeTy, Graph, Id, Node, NodeId, Stmt, Vertex,
};
use graphviz_rust::printer::{DotPrinter, PrinterContext};

use super::escape::{dot_lines, dot_string};

/// `key="value"`.
pub fn attr(key: &str, value: &str) -> Attribute {
    Attribute(Id::Plain(key.to_string()), Id::Escaped(dot_string(value)))
}

/// `key="line1\nline2"`: a label drawn on several lines.
pub fn attr_lines(key: &str, lines: &[&str]) -> Attribute {
    Attribute(Id::Plain(key.to_string()), Id::Escaped(dot_lines(lines)))
}

/// A node statement.
pub fn node(id: &str, attributes: Vec<Attribute>) -> Stmt {
    Stmt::Node(Node::new(node_id(id), attributes))
}

/// An edge statement `from -> to`.
pub fn edge(from: &str, to: &str, attributes: Vec<Attribute>) -> Stmt {
    Stmt::Edge(Edge {
        ty: EdgeTy::Pair(Vertex::N(node_id(from)), Vertex::N(node_id(to))),
        attributes,
    })
}

/// A cluster (a box around its statements) labelled `label`.
pub fn cluster(n: usize, label: &str, mut stmts: Vec<Stmt>) -> Stmt {
    stmts.insert(0, Stmt::Attribute(attr("label", label)));
    Stmt::Subgraph(graphviz_rust::dot_structures::Subgraph {
        id: Id::Plain(format!("cluster_{n}")),
        stmts,
    })
}

/// The printed `digraph name { rankdir=LR; stmts }`, newline-terminated.
pub fn digraph(name: &str, stmts: Vec<Stmt>) -> String {
    let mut all = vec![Stmt::Attribute(attr("rankdir", "LR"))];
    all.extend(stmts);
    let graph = Graph::DiGraph {
        id: Id::Plain(name.to_string()),
        strict: false,
        stmts: all,
    };
    let mut out = graph.print(&mut PrinterContext::default());
    out.push('\n');
    out
}

fn node_id(id: &str) -> NodeId {
    NodeId(Id::Escaped(dot_string(id)), None)
}
