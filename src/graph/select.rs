//! dbt-style node selection: `name`, `name+`, `+name`, `2+name`, `name+1`,
//! `@name`, `tag:x`, `path:models/marts`, `source:raw`, globs (`stg_*`);
//! space-separated terms are a union, comma-separated atoms an intersection.

use std::collections::{BTreeSet, VecDeque};

use petgraph::Direction;
use petgraph::graph::NodeIndex;

use super::LineageGraph;
use crate::project::DatasetKind;
use crate::text::did_you_mean;

/// A parsed selector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selector {
    /// Union of terms; each term is an intersection of atoms.
    terms: Vec<Vec<Atom>>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Atom {
    /// `@name`: the node, its descendants, and their ancestors.
    at: bool,
    /// Ancestors: `+name` (all) or `2+name` (two levels).
    parents: Option<Depth>,
    /// Descendants: `name+` or `name+1`.
    children: Option<Depth>,
    method: Method,
    /// The atom as the user typed it, for messages.
    typed: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Depth {
    All,
    Up(usize),
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Method {
    Name(String),
    Tag(String),
    Path(String),
    Source(String),
    Package(String),
}

/// A selector that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectorError {
    /// Not valid selector syntax.
    #[error("bad selector `{0}`: {1}")]
    Syntax(String, String),
    /// A name that matches no dataset.
    #[error("selector `{typed}`: no dataset is named `{name}`{hint}")]
    NoMatch {
        /// The selector as typed.
        typed: String,
        /// The name.
        name: String,
        /// "; did you mean `x`?" or empty.
        hint: String,
    },
}

impl Selector {
    /// Parses a selector string.
    pub fn parse(text: &str) -> Result<Selector, SelectorError> {
        let terms = text
            .split_whitespace()
            .map(|term| {
                term.split(',')
                    .map(|a| parse_atom(a, text))
                    .collect::<Result<Vec<_>, _>>()
            })
            .collect::<Result<Vec<_>, _>>()?;
        if terms.is_empty() {
            return Err(SelectorError::Syntax(
                text.to_string(),
                "it is empty".into(),
            ));
        }
        Ok(Selector { terms })
    }

    /// The selected datasets, in node order (sorted by id).
    pub fn select(&self, graph: &LineageGraph) -> Result<BTreeSet<NodeIndex>, SelectorError> {
        let mut out = BTreeSet::new();
        for term in &self.terms {
            let mut acc: Option<BTreeSet<NodeIndex>> = None;
            for atom in term {
                let set = atom.select(graph)?;
                acc = Some(match acc {
                    None => set,
                    Some(prev) => prev.intersection(&set).copied().collect(),
                });
            }
            out.extend(acc.unwrap_or_default());
        }
        Ok(out)
    }
}

fn parse_atom(atom: &str, whole: &str) -> Result<Atom, SelectorError> {
    let bad = |why: &str| SelectorError::Syntax(whole.to_string(), why.to_string());
    let mut rest = atom;
    let at = rest.starts_with('@');
    if at {
        rest = &rest[1..];
    }
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let parents = if !digits.is_empty() && rest[digits.len()..].starts_with('+') {
        let n = digits.parse().map_err(|_| bad("depth too large"))?;
        rest = &rest[digits.len() + 1..];
        Some(Depth::Up(n))
    } else if let Some(r) = rest.strip_prefix('+') {
        rest = r;
        Some(Depth::All)
    } else {
        None
    };
    let children = match rest.rfind('+') {
        Some(p) if rest[p + 1..].chars().all(|c| c.is_ascii_digit()) => {
            let tail = &rest[p + 1..];
            let depth = if tail.is_empty() {
                Depth::All
            } else {
                Depth::Up(tail.parse().map_err(|_| bad("depth too large"))?)
            };
            rest = &rest[..p];
            Some(depth)
        }
        _ => None,
    };
    if rest.is_empty() {
        return Err(bad(
            "a selector needs a name, tag:, path:, source: or package:",
        ));
    }
    if at && (parents.is_some() || children.is_some()) {
        return Err(bad("`@` cannot be combined with `+`"));
    }
    if let Some((m @ ("tag" | "path" | "source" | "package" | "fqn"), "")) = rest.split_once(':') {
        return Err(bad(&format!(
            "`{m}:` needs a value after the colon (`{m}:daily`)"
        )));
    }
    let method = match rest.split_once(':') {
        Some(("tag", v)) => Method::Tag(v.to_string()),
        Some(("path", v)) => Method::Path(v.trim_end_matches('/').to_string()),
        Some(("source", v)) => Method::Source(v.to_string()),
        Some(("package", v)) => Method::Package(v.to_string()),
        Some(("fqn", v)) => Method::Name(v.to_string()),
        Some((m, _)) => {
            return Err(bad(&format!(
                "unknown method `{m}:`; use tag:, path:, source:, package: or a name"
            )));
        }
        None => Method::Name(rest.to_string()),
    };
    Ok(Atom {
        at,
        parents,
        children,
        method,
        typed: atom.to_string(),
    })
}

impl Atom {
    fn select(&self, g: &LineageGraph) -> Result<BTreeSet<NodeIndex>, SelectorError> {
        let seeds: BTreeSet<NodeIndex> = g
            .graph
            .node_indices()
            .filter(|&n| self.method.matches(g, n))
            .collect();
        if seeds.is_empty()
            && let Method::Name(name) = &self.method
        {
            let names = g.graph.node_weights().map(|d| d.name.as_str());
            let hint = did_you_mean(name, names)
                .map(crate::text::mean_hint)
                .unwrap_or_default();
            return Err(SelectorError::NoMatch {
                typed: self.typed.clone(),
                name: name.clone(),
                hint,
            });
        }
        let mut out = seeds.clone();
        if self.at {
            let down = walk(g, &seeds, Direction::Outgoing, Depth::All);
            out.extend(walk(g, &down, Direction::Incoming, Depth::All));
            out.extend(down);
            return Ok(out);
        }
        if let Some(d) = self.parents {
            out.extend(walk(g, &seeds, Direction::Incoming, d));
        }
        if let Some(d) = self.children {
            out.extend(walk(g, &seeds, Direction::Outgoing, d));
        }
        Ok(out)
    }
}

impl Method {
    fn matches(&self, g: &LineageGraph, n: NodeIndex) -> bool {
        let d = &g.graph[n];
        match self {
            Method::Name(name) => {
                glob(name, &d.name) || glob(name, &d.id) || glob(name, &d.relation)
            }
            Method::Tag(tag) => d.tags.iter().any(|t| glob(tag, t)),
            Method::Path(path) => d
                .file
                .as_deref()
                .is_some_and(|f| f == path || f.starts_with(&format!("{path}/")) || glob(path, f)),
            Method::Source(s) => {
                d.kind == DatasetKind::Source
                    && (glob(s, &d.name)
                        || d.name.split('.').next().is_some_and(|src| glob(s, src)))
            }
            Method::Package(p) => d.package.as_deref().is_some_and(|pkg| glob(p, pkg)),
        }
    }
}

/// Breadth-first walk from `from` (exclusive) along `dir`, `depth` levels.
pub(super) fn walk(
    g: &LineageGraph,
    from: &BTreeSet<NodeIndex>,
    dir: Direction,
    depth: Depth,
) -> BTreeSet<NodeIndex> {
    let limit = match depth {
        Depth::All => usize::MAX,
        Depth::Up(n) => n,
    };
    let mut seen: BTreeSet<NodeIndex> = BTreeSet::new();
    let mut queue: VecDeque<(NodeIndex, usize)> = from.iter().map(|&n| (n, 0)).collect();
    let mut visited: BTreeSet<NodeIndex> = from.clone();
    while let Some((n, level)) = queue.pop_front() {
        if level >= limit {
            continue;
        }
        for m in g.graph.neighbors_directed(n, dir) {
            if visited.insert(m) {
                seen.insert(m);
                queue.push_back((m, level + 1));
            }
        }
    }
    seen
}

/// `*` matches any run of characters; everything else literally.
fn glob(pattern: &str, text: &str) -> bool {
    if !pattern.contains('*') {
        return pattern == text;
    }
    let parts: Vec<&str> = pattern.split('*').collect();
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !text.starts_with(first) || text.len() < first.len() + last.len() || !text.ends_with(last) {
        return false;
    }
    let mut rest = &text[first.len()..text.len() - last.len()];
    for part in &parts[1..parts.len() - 1] {
        match rest.find(part) {
            Some(p) => rest = &rest[p + part.len()..],
            None => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atoms_parse() {
        let s = Selector::parse("2+orders+1 @dim tag:daily,path:models/marts").unwrap();
        assert_eq!(s.terms.len(), 3);
        assert_eq!(s.terms[0][0].parents, Some(Depth::Up(2)));
        assert_eq!(s.terms[0][0].children, Some(Depth::Up(1)));
        assert_eq!(s.terms[0][0].method, Method::Name("orders".into()));
        assert!(s.terms[1][0].at);
        assert_eq!(s.terms[2].len(), 2);
        assert!(Selector::parse("").is_err());
        assert!(Selector::parse("@+x").is_err());
        assert!(Selector::parse("colour:red").is_err());
        // A method without its value is a mistake, not a selector of nothing.
        for empty in ["tag:", "path:", "source:", "package:"] {
            let err = Selector::parse(empty).unwrap_err().to_string();
            assert!(err.contains("needs a value"), "{err}");
        }
        // Messages quote the selector as typed (`@@x` was quoted `@x`).
        let s = Selector::parse("@@x 1+2+x").unwrap();
        assert_eq!(s.terms[0][0].typed, "@@x");
        assert_eq!(s.terms[1][0].typed, "1+2+x");
    }

    #[test]
    fn globs() {
        assert!(glob("stg_*", "stg_orders"));
        assert!(glob("*_orders", "stg_orders"));
        assert!(glob("s*_o*s", "stg_orders"));
        assert!(!glob("stg_*", "orders"));
        assert!(glob("exact", "exact"));
    }
}
