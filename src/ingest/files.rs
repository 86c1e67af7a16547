//! Finding input files: a deterministic walk (sorted, hidden folders and
//! build output skipped) and reading them as text.

use std::path::{Path, PathBuf};

/// Folders never read as input: build output, installed packages, VCS.
const SKIPPED: &[&str] = &[
    "target",
    "dbt_packages",
    "dbt_modules",
    "node_modules",
    "logs",
    "__pycache__",
];

/// Files under `dir` (recursively) whose name ends with one of `extensions`,
/// sorted by path. A missing folder yields nothing; links are not followed,
/// so a link loop cannot hang the walk.
pub(crate) fn walk(dir: &Path, extensions: &[&str]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name();
            let name = name.to_string_lossy();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                if !name.starts_with('.') && !SKIPPED.contains(&name.as_ref()) {
                    stack.push(path);
                }
            } else if kind.is_file() && extensions.iter().any(|e| name.ends_with(e)) {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// `path` relative to `root`, with `/` separators, for messages and ids.
pub(crate) fn relative(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    rel.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// The file name without its extension (`models/stg/stg_orders.sql` →
/// `stg_orders`).
pub(crate) fn stem(path: &Path) -> String {
    path.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// 1-based line of byte `offset` in `text`.
pub(crate) fn line_of(text: &str, offset: usize) -> u32 {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count() as u32
        + 1
}

/// Where each line of a text starts, for line numbers of many offsets in
/// one text (`line_of` for each would be quadratic in a long file).
pub(crate) struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    /// The index of `text`.
    pub fn new(text: &str) -> LineIndex {
        let starts = std::iter::once(0)
            .chain(
                text.bytes()
                    .enumerate()
                    .filter(|&(_, b)| b == b'\n')
                    .map(|(i, _)| i + 1),
            )
            .collect();
        LineIndex { starts }
    }

    /// 1-based line of byte `offset`, as [`line_of`] counts it.
    pub fn line(&self, offset: usize) -> u32 {
        self.starts.partition_point(|&s| s <= offset) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walk_is_sorted_and_skips_build_output() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for p in [
            "b/x.sql",
            "a/y.sql",
            "a/z.txt",
            "target/t.sql",
            ".git/g.sql",
            "dbt_packages/p/m.sql",
        ] {
            let path = root.join(p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "").unwrap();
        }
        let found: Vec<String> = walk(root, &[".sql"])
            .iter()
            .map(|p| relative(root, p))
            .collect();
        assert_eq!(found, ["a/y.sql", "b/x.sql"]);
    }

    #[test]
    fn lines_are_counted_from_one() {
        assert_eq!(line_of("a\nb\nc", 0), 1);
        assert_eq!(line_of("a\nb\nc", 2), 2);
        assert_eq!(line_of("a\nb\nc", 99), 3);
        let index = LineIndex::new("a\nb\nc");
        for offset in [0, 1, 2, 3, 4, 99] {
            assert_eq!(index.line(offset), line_of("a\nb\nc", offset), "{offset}");
        }
    }
}
