//! `ripple diff` from the command line's point of view: two versions named
//! as git revisions (written to temporary folders, the checkout untouched)
//! or as folders, loaded side by side and compared.

use std::path::{Path, PathBuf};

use super::{DiffReport, diff_with_seeds};
use crate::graph::LineageGraph;
use crate::ingest::revision::{self, RevisionError};
use crate::ingest::{LoadOptions, load_project};

/// The two versions to compare.
#[derive(Debug, Clone)]
pub enum Sides {
    /// Git revisions of the project folder; no head means the folder as it
    /// is on disk, uncommitted edits included.
    Revisions {
        /// The project folder inside the repository.
        project: PathBuf,
        /// The revision to compare against.
        base: String,
        /// The revision to compare.
        head: Option<String>,
    },
    /// Two folders.
    Folders {
        /// The old version.
        base: PathBuf,
        /// The new version.
        head: PathBuf,
    },
}

/// Why two versions cannot be compared.
#[derive(Debug, thiserror::Error)]
pub enum DiffError {
    /// A revision could not be read from git.
    #[error(transparent)]
    Revision(#[from] RevisionError),
    /// One side does not load (a broken `ripple.yml`, an unreadable folder).
    #[error("{side}: {message}")]
    Load {
        /// Which side, as the user named it.
        side: String,
        /// What went wrong, its files named as in the project (not in the
        /// revision's temporary copy, gone when this is read).
        message: String,
    },
}

/// `message` with the paths under `root` (a side's folder) written as in
/// the repository (`prefix` then the path), and said once where it named
/// its file twice (`f:3:1: m: f:3:1: m`).
fn as_in_project(message: &str, root: &Path, prefix: &str) -> String {
    let root = root.display().to_string();
    let text = message.replace(&format!("{}/", root.trim_end_matches('/')), prefix);
    let half = text.len().saturating_sub(2) / 2;
    match (
        text.get(..half),
        text.get(half..half + 2),
        text.get(half + 2..),
    ) {
        (Some(a), Some(": "), Some(b)) if a == b => a.to_string(),
        _ => text,
    }
}

/// Compares the two versions named by `sides`. Files in the report are
/// relative to the repository (with revisions) or to the folders.
pub fn diff_sides(sides: &Sides) -> Result<DiffReport, DiffError> {
    // Checked-out revisions live as long as the comparison.
    let mut copies = Vec::new();
    let (base_root, head_root, prefix, base_side, head_side) = match sides {
        Sides::Folders { base, head } => (
            base.clone(),
            head.clone(),
            String::new(),
            format!("base ({})", base.display()),
            format!("head ({})", head.display()),
        ),
        Sides::Revisions {
            project,
            base,
            head,
        } => {
            let location = revision::locate(project)?;
            let base_copy = revision::check_out(project, base)?;
            let base_root = base_copy.root.clone();
            copies.push(base_copy);
            let head_root = match head {
                Some(rev) => {
                    let copy = revision::check_out(project, rev)?;
                    let root = copy.root.clone();
                    copies.push(copy);
                    root
                }
                None => project.clone(),
            };
            let head_side = match head {
                Some(rev) => format!("head (`{rev}`)"),
                None => format!("head ({})", head_root.display()),
            };
            (
                base_root,
                head_root,
                location.prefix,
                format!("base (`{base}`)"),
                head_side,
            )
        }
    };
    let load = |root: &Path, side: String| -> Result<LineageGraph, DiffError> {
        let project =
            load_project(root, &LoadOptions::default()).map_err(|source| DiffError::Load {
                message: as_in_project(&source.to_string(), root, &prefix),
                side: side.clone(),
            })?;
        // A folder of models not read on one side (outside the repository,
        // missing, behind a link ripple does not follow) would make its
        // models read as unchanged, added or removed, exit 0: the
        // comparison stops.
        if let Some(d) = project.diagnostics.iter().find(|d| {
            matches!(
                d.code,
                "path-outside-project" | "missing-path" | "linked-file"
            )
        }) {
            return Err(DiffError::Load {
                message: as_in_project(&d.to_string(), root, &prefix),
                side,
            });
        }
        let graph = LineageGraph::build(project);
        if let Some(d) = graph
            .diagnostics
            .iter()
            .find(|d| d.code == crate::graph::GRAPH_TOO_LARGE)
        {
            return Err(DiffError::Load {
                message: d.message.clone(),
                side,
            });
        }
        Ok(graph)
    };
    let (base, head) = rayon::join(
        || load(&base_root, base_side),
        || load(&head_root, head_side),
    );
    let (base, head) = (base?, head?);
    let changed = changed_seeds(sides, &copies, &base, &head)?;
    let mut report = diff_with_seeds(&base, &head, &changed);
    drop(copies);
    for c in &mut report.changes {
        c.file = format!("{prefix}{}", c.file);
    }
    Ok(report)
}

/// The seeds in both graphs whose files differ. A revision's copy holds
/// its seeds empty (their contents are never read), so each side's are
/// compared by git object id; two folders, by their bytes.
fn changed_seeds(
    sides: &Sides,
    copies: &[revision::Revision],
    base: &LineageGraph,
    head: &LineageGraph,
) -> Result<std::collections::BTreeSet<String>, DiffError> {
    use crate::project::DatasetKind;
    let seeds: Vec<(&str, PathBuf)> = head
        .graph
        .node_weights()
        .filter(|d| d.kind == DatasetKind::Seed && base.index.contains_key(&d.id))
        .filter_map(|d| Some((d.id.as_str(), PathBuf::from(d.file.as_ref()?))))
        .collect();
    let mut out = std::collections::BTreeSet::new();
    match sides {
        Sides::Folders { base, head } => {
            for (id, file) in &seeds {
                if !same_bytes(&base.join(file), &head.join(file)) {
                    out.insert(id.to_string());
                }
            }
        }
        Sides::Revisions { project, head, .. } => {
            let base_ids = &copies[0].seeds;
            let head_ids: Vec<Option<String>> = match head {
                Some(_) => seeds
                    .iter()
                    .map(|(_, f)| copies.get(1).and_then(|c| c.seeds.get(f).cloned()))
                    .collect(),
                None => {
                    let files: Vec<PathBuf> = seeds.iter().map(|(_, f)| f.clone()).collect();
                    revision::object_ids(project, &files)?
                }
            };
            for ((id, file), now) in seeds.iter().zip(head_ids) {
                if now.is_none() || base_ids.get(file) != now.as_ref() {
                    out.insert(id.to_string());
                }
            }
        }
    }
    Ok(out)
}

/// Whether the files `a` and `b` hold the same bytes, read in pieces (a
/// seed may be large); unreadable counts as different.
fn same_bytes(a: &Path, b: &Path) -> bool {
    use std::io::Read;
    let (Ok(fa), Ok(fb)) = (std::fs::File::open(a), std::fs::File::open(b)) else {
        return false;
    };
    let (Ok(ma), Ok(mb)) = (fa.metadata(), fb.metadata()) else {
        return false;
    };
    if ma.len() != mb.len() {
        return false;
    }
    let (mut ra, mut rb) = (std::io::BufReader::new(fa), std::io::BufReader::new(fb));
    let (mut x, mut y) = (vec![0u8; 1 << 16], vec![0u8; 1 << 16]);
    loop {
        let n = match ra.read(&mut x) {
            Ok(n) => n,
            Err(_) => return false,
        };
        if n == 0 {
            return true;
        }
        if rb.read_exact(&mut y[..n]).is_err() || x[..n] != y[..n] {
            return false;
        }
    }
}
