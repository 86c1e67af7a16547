//! A large JSON document written on every core: its long top-level lists
//! are serialized a run of elements per piece, each at the depth it sits
//! in the document, and spliced into the rest, which was written with those
//! lists empty. The same bytes as `serde_json::to_string_pretty` of the
//! whole document; the plan's and the graph's tests hold that.

use std::io::{self, Write};

use rayon::prelude::*;
use serde::Serialize;

/// Elements per piece, each piece written on one core: enough to amortise
/// handing it over, few enough that both cores stay busy.
pub const PER_PIECE: usize = 256;

/// Pieces made before they are written out: enough for every core, few
/// enough that one window's memory is used again by the next.
pub const PER_WINDOW: usize = 16;

/// How to cut a list into pieces.
#[derive(Debug, Clone, Copy)]
pub struct Cut {
    /// Elements a piece.
    pub per_piece: usize,
    /// Pieces a window.
    pub per_window: usize,
    /// About how many bytes an element's text takes, to size a piece once.
    pub element_bytes: usize,
}

impl Cut {
    /// The usual cut, for elements of about `element_bytes` each.
    pub fn for_elements(element_bytes: usize) -> Cut {
        Cut {
            per_piece: PER_PIECE,
            per_window: PER_WINDOW,
            element_bytes,
        }
    }
}

/// Writes `doc` (pretty-printed, the top-level list `key` empty in it) up
/// to that list, then the list with `items` in it, and returns the rest of
/// `doc` to write. With no items, writes nothing and returns `doc` whole.
pub fn splice<'d, T: Serialize + Sync>(
    doc: &'d str,
    key: &str,
    items: &[T],
    cut: Cut,
    out: &mut dyn Write,
) -> io::Result<&'d str> {
    if items.is_empty() {
        return Ok(doc);
    }
    let (before, after) = around(doc, key)?;
    out.write_all(before.as_bytes())?;
    write!(out, "\n  \"{key}\": [")?;
    let per_piece = cut.per_piece.max(1);
    for (w, window) in items.chunks(per_piece * cut.per_window.max(1)).enumerate() {
        let pieces: Vec<Vec<u8>> = window
            .par_chunks(per_piece)
            .enumerate()
            .map(|(n, chunk)| {
                let mut buf = Vec::with_capacity(chunk.len() * cut.element_bytes);
                for (i, item) in chunk.iter().enumerate() {
                    let first = w == 0 && n == 0 && i == 0;
                    buf.extend_from_slice(if first { b"\n    " } else { b",\n    " });
                    // An element sits two levels deep (document, then list):
                    // a formatter that has opened two levels indents it so.
                    let mut indent = serde_json::ser::PrettyFormatter::new();
                    for _ in 0..2 {
                        let _ =
                            serde_json::ser::Formatter::begin_array(&mut indent, &mut io::sink());
                    }
                    let mut ser = serde_json::Serializer::with_formatter(&mut buf, indent);
                    item.serialize(&mut ser).map_err(io::Error::other)?;
                }
                Ok(buf)
            })
            .collect::<io::Result<_>>()?;
        for piece in &pieces {
            out.write_all(piece)?;
        }
    }
    out.write_all(b"\n  ]")?;
    Ok(after)
}

/// `doc` (pretty-printed) cut around its empty top-level list `key`, from
/// the newline before the key: what comes before, and what after.
pub fn around<'d>(doc: &'d str, key: &str) -> io::Result<(&'d str, &'d str)> {
    // A raw newline is never inside a JSON string, so this is the key
    // itself, at the top level (indented once).
    let empty = format!("\n  \"{key}\": []");
    let at = doc
        .find(&empty)
        .ok_or_else(|| io::Error::other(format!("no empty top-level list `{key}` to fill")))?;
    Ok((&doc[..at], &doc[at + empty.len()..]))
}

/// Cuts of a list of `n` elements (at least 2) that a splice must give the
/// same bytes at: one element a piece, one and two pieces a window, and a
/// piece of all but one and of all.
#[cfg(test)]
pub fn cuts_to_test(n: usize) -> Vec<Cut> {
    let n = n.max(2);
    [(1, 1), (1, 2), (2, 2), (n - 1, 1), (n, 1)]
        .into_iter()
        .map(|(per_piece, per_window)| Cut {
            per_piece,
            per_window,
            element_bytes: 8,
        })
        .collect()
}
