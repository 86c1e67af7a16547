//! Finding input files: a deterministic walk (sorted, hidden folders and
//! build output skipped) and reading them as text.

use std::path::{Path, PathBuf};

use crate::cache::inputs::Listing;
use crate::project::Diagnostic;

/// Folders never read as input: build output, installed packages, VCS.
const SKIPPED: &[&str] = &[
    "target",
    "dbt_packages",
    "dbt_modules",
    "node_modules",
    "logs",
    "__pycache__",
];

/// Files found by [`walk`], and the folders that could not be read.
#[derive(Default)]
pub(crate) struct Found {
    /// The files, sorted by path.
    pub files: Vec<PathBuf>,
    /// A warning per folder that exists but could not be listed: its files
    /// are missing from the project, which must not pass unnoticed.
    pub problems: Vec<Diagnostic>,
    /// Every folder the walk listed, and what it found there: what the warm
    /// cache compares to tell a file added or removed.
    pub dirs: Vec<(PathBuf, Listing)>,
}

/// One folder's entries as [`walk`] sees them: sub-folders to descend into
/// and files with one of `extensions`.
fn entries(dir: &Path, extensions: &[&str]) -> std::io::Result<Entries> {
    let (mut dirs, mut files, mut links) = (Vec::new(), Vec::new(), Vec::new());
    for entry in std::fs::read_dir(dir)?.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        // dbt reads `[!.#~]*.sql` (and `.yml`): hidden files and editors' backups (`#f.sql`,
        // `~f.sql`) are no models, and no jobs either. Airflow reads every
        // `.py` file, whatever its name.
        let backup = name.starts_with(['.', '#', '~']) && !name.ends_with(".py");
        if kind.is_dir() {
            if !name.starts_with('.') && !SKIPPED.contains(&name.as_ref()) {
                dirs.push(entry.path());
            }
        } else if kind.is_file() && !backup && extensions.iter().any(|e| name.ends_with(e)) {
            files.push(entry.path());
        } else if kind.is_symlink()
            && !name.starts_with('.')
            && ((!backup && extensions.iter().any(|e| name.ends_with(e)))
                || std::fs::metadata(entry.path()).is_ok_and(|m| m.is_dir()))
        {
            links.push(entry.path());
        }
    }
    Ok((dirs, files, links))
}

/// Folders, files and links (to a folder, or named like the files) of one
/// folder.
type Entries = (Vec<PathBuf>, Vec<PathBuf>, Vec<PathBuf>);

/// What [`walk`] would find in `dir` itself (not below it) now.
pub(crate) fn listing(dir: &Path, extensions: &[&str]) -> Listing {
    match entries(dir, extensions) {
        Ok((dirs, files, links)) => names(&dirs, &files, &links),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Listing::Absent,
        Err(_) => Listing::Unreadable,
    }
}

fn names(dirs: &[PathBuf], files: &[PathBuf], links: &[PathBuf]) -> Listing {
    let name = |p: &PathBuf| {
        p.file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
    };
    let mut names: Vec<String> = dirs.iter().map(|d| format!("{}/", name(d))).collect();
    names.extend(files.iter().map(name));
    names.extend(links.iter().map(|l| format!("{}@", name(l))));
    names.sort();
    Listing::Names(names)
}

/// Files under `dir` (recursively) whose name ends with one of `extensions`,
/// sorted by path. A missing folder yields nothing; links are not followed,
/// so a link loop cannot hang the walk. Paths in problems are relative to
/// `root`.
pub(crate) fn walk(root: &Path, dir: &Path, extensions: &[&str]) -> Found {
    let mut out = Found::default();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        match entries(&d, extensions) {
            Ok((dirs, files, links)) => {
                out.dirs.push((d, names(&dirs, &files, &links)));
                out.problems.extend(links.iter().map(|l| linked(root, l)));
                let (dirs, files) = (
                    text_named(root, dirs, &mut out.problems),
                    text_named(root, files, &mut out.problems),
                );
                stack.extend(dirs);
                out.files.extend(files);
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                out.dirs.push((d, Listing::Absent));
            }
            Err(e) => {
                out.problems.push(unreadable(root, &d, &e));
                out.dirs.push((d, Listing::Unreadable));
            }
        }
    }
    out.files.sort();
    out.problems.sort();
    out
}

/// The paths among `paths` whose names are text; an error for each other
/// one. A name that is not UTF-8 cannot name a model or a job: shown with
/// its bytes replaced, two such files took one name and one was lost.
fn text_named(root: &Path, paths: Vec<PathBuf>, problems: &mut Vec<Diagnostic>) -> Vec<PathBuf> {
    paths
        .into_iter()
        .filter(|p| {
            let name = p.file_name().unwrap_or_default();
            if name.to_str().is_some() {
                return true;
            }
            let parent = p.parent().map(|d| relative(root, d)).unwrap_or_default();
            let shown = format!("{name:?}");
            problems.push(Diagnostic::error(
                "name-not-text",
                Some(if parent.is_empty() {
                    shown.trim_matches('"').to_string()
                } else {
                    format!("{parent}/{}", shown.trim_matches('"'))
                }),
                0,
                0,
                "its name is not UTF-8 text, so it cannot name a model or a job (two such names would read alike); it is left out of the project: rename it".to_string(),
            ));
            false
        })
        .collect()
}

/// The warning for a link ripple does not follow, where dbt or Airflow
/// would: what it points to is missing from the lineage.
fn linked(root: &Path, path: &Path) -> Diagnostic {
    Diagnostic::warning(
        "linked-file",
        Some(relative(root, path)),
        0,
        0,
        "is a link, which ripple does not follow (dbt and Airflow do): the models, jobs or DAGs it points to are left out of the lineage, so impact can be short. Put the file itself in the project".to_string(),
    )
}

/// The warning for a file or folder that exists but could not be read.
pub(crate) fn unreadable(root: &Path, path: &Path, e: &std::io::Error) -> Diagnostic {
    Diagnostic::warning(
        "unreadable",
        Some(relative(root, path)),
        0,
        0,
        format!(
            "could not be read ({}); what it holds is left out of the project. Fix its permissions",
            crate::text::io_reason(e)
        ),
    )
}

/// The error for a file that exists but could not be read.
pub(crate) fn read_error(file: String, e: &crate::Error) -> Diagnostic {
    Diagnostic::error("read-error", Some(file), 0, 0, e.reason())
}

/// [`inside`] for each of `paths`: those inside the project, the errors for
/// the rest added to `refused`.
pub(crate) fn confine<'p>(
    root: &Path,
    base: &Path,
    paths: impl IntoIterator<Item = &'p Path>,
    allow: bool,
    (file, key): (&str, &str),
    refused: &mut Vec<Diagnostic>,
) -> Vec<PathBuf> {
    paths
        .into_iter()
        .filter_map(|p| {
            inside(root, base, p, allow, file, key)
                .map_err(|d| refused.push(d))
                .ok()
        })
        .collect()
}

/// `base/rel` when it lies inside the git repository holding `root`, or
/// inside `root` when there is none (or `allow` says it may not); otherwise
/// an error naming the setting (`key` in `file`). Paths leave by `..`, by
/// being absolute or through a link.
pub(crate) fn inside(
    root: &Path,
    base: &Path,
    rel: &Path,
    allow: bool,
    file: &str,
    key: &str,
) -> Result<PathBuf, Diagnostic> {
    let joined = base.join(rel);
    if allow {
        return Ok(joined);
    }
    let lexical = |p: &Path| -> PathBuf {
        let absolute = std::env::current_dir().map_or_else(|_| p.to_path_buf(), |cwd| cwd.join(p));
        let mut normal = PathBuf::new();
        for part in absolute.components() {
            match part {
                std::path::Component::ParentDir => {
                    normal.pop();
                }
                std::path::Component::CurDir => {}
                other => normal.push(other),
            }
        }
        normal
    };
    let (normal, normal_root) = (lexical(&joined), lexical(root));
    let real_root = root.canonicalize().unwrap_or_else(|_| normal_root.clone());
    let repository = crate::input::repository;
    let (lexical_top, real_top) = (repository(&normal_root), repository(&real_root));
    let escapes = !normal.starts_with(lexical_top.unwrap_or(&normal_root))
        || normal
            .canonicalize()
            .is_ok_and(|real| !real.starts_with(real_top.unwrap_or(&real_root)));
    if escapes {
        let place = match real_top {
            Some(top) => format!("the repository the project is in ({})", top.display()),
            None => "the project (which is in no git repository)".to_string(),
        };
        return Err(Diagnostic::error(
            "path-outside-project",
            Some(file.to_string()),
            0,
            0,
            format!(
                "{key} `{}` is outside {place}; ripple reads only the repository's own files (a pull request could point it at /etc). Move the folder into the repository, or set `allow_outside_project: true` in ripple.yml",
                rel.display()
            ),
        ));
    }
    Ok(joined)
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

    /// The 1-based (line, column) of byte `offset` in `text` (the text the
    /// index was made of), the column counted in characters.
    pub fn line_column(&self, text: &str, offset: usize) -> (u32, u32) {
        let line = self.line(offset);
        let start = self.starts[(line as usize).saturating_sub(1)];
        let column = text
            .get(start..offset.min(text.len()))
            .map_or(0, |s| s.chars().count());
        (line, column as u32 + 1)
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
        let found: Vec<String> = walk(root, root, &[".sql"])
            .files
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
