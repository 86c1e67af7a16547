//! What a load read from disk, kept beside what it made, so that a later run
//! can tell which inputs changed: by stat where a stat can be trusted, else
//! by content; and every other question the load asked of the file system
//! (where a path leads through links, which folders hold a package), with
//! its answer, asked again by every later run (docs/cache.md, "Snapshots").

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::KeyBuilder;

/// A time stamp this close to the load's start (or later) is not trusted:
/// a second write in the same clock tick leaves it as it was, so the file
/// is compared by content instead ("racy" files, as git calls them).
const RACY: Duration = Duration::from_secs(2);

/// What a folder listed, as the reader that walked it filtered it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Listing {
    /// The folder does not exist.
    Absent,
    /// It exists but could not be listed.
    Unreadable,
    /// The entries the reader looks at, sorted.
    Names(Vec<String>),
}

/// A file's or folder's stat, as far as telling a change needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
struct Stat {
    size: u64,
    modified: u128,
    changed: u128,
    inode: u64,
}

/// The stat of `path`, if it is old enough to be trusted at `at`.
fn stat(path: &Path, at: SystemTime) -> Option<Stat> {
    trusted(&std::fs::metadata(path).ok()?, at)
}

/// Nanoseconds since the epoch; `None` before it.
fn since_epoch(t: SystemTime) -> Option<u128> {
    Some(t.duration_since(SystemTime::UNIX_EPOCH).ok()?.as_nanos())
}

/// The stat in `m`, if it is old enough to be trusted at `at`.
fn trusted(m: &std::fs::Metadata, at: SystemTime) -> Option<Stat> {
    let modified = since_epoch(m.modified().ok()?)?;
    #[cfg(unix)]
    let (changed, inode) = {
        use std::os::unix::fs::MetadataExt;
        let changed = (m.ctime() as i128 * 1_000_000_000 + m.ctime_nsec() as i128).max(0);
        (changed as u128, m.ino())
    };
    #[cfg(not(unix))]
    let (changed, inode) = (modified, 0);
    old_enough(
        Stat {
            size: m.len(),
            modified,
            changed,
            inode,
        },
        at,
    )
}

/// `stat`, if it is old enough to be trusted at `at`.
fn old_enough(stat: Stat, at: SystemTime) -> Option<Stat> {
    let limit = since_epoch(at.checked_sub(RACY)?)?;
    (stat.modified < limit && stat.changed < limit).then_some(stat)
}

/// The stats of `paths`, as [`stat`] takes them, in their order. Paths in
/// one folder (they come sorted, so side by side) are stat'ed relative to
/// it, opened once: walking each whole path again was most of the kernel's
/// share of a warm run (10,000 files, six folders deep).
fn stats(paths: &[&Path], at: SystemTime) -> Vec<Option<Stat>> {
    let runs: Vec<&[&Path]> = paths.chunk_by(|a, b| a.parent() == b.parent()).collect();
    let per_run: Vec<Vec<Option<Stat>>> = runs.par_iter().map(|run| stats_in(run, at)).collect();
    per_run.into_iter().flatten().collect()
}

/// The stats of `paths`, all in one folder.
#[cfg(target_os = "linux")]
fn stats_in(paths: &[&Path], at: SystemTime) -> Vec<Option<Stat>> {
    use rustix::fs::{AtFlags, Mode, OFlags, StatxFlags, open, statx};
    let folder = paths[0].parent().filter(|p| !p.as_os_str().is_empty());
    let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let Some(dir) = folder.and_then(|f| open(f, flags, Mode::empty()).ok()) else {
        return paths.iter().map(|p| stat(p, at)).collect();
    };
    let nanos = |t: rustix::fs::StatxTimestamp| {
        i128::from(t.tv_sec) * 1_000_000_000 + i128::from(t.tv_nsec)
    };
    paths
        .iter()
        .map(|p| {
            let name = p.file_name()?;
            // Followed, as `std::fs::metadata` follows a symbolic link.
            let x = statx(&dir, name, AtFlags::empty(), StatxFlags::BASIC_STATS).ok()?;
            let modified = u128::try_from(nanos(x.stx_mtime)).ok()?;
            let stat = Stat {
                size: x.stx_size,
                modified,
                changed: nanos(x.stx_ctime).max(0) as u128,
                inode: x.stx_ino,
            };
            old_enough(stat, at)
        })
        .collect()
}

/// The stats of `paths`, one whole path each.
#[cfg(not(target_os = "linux"))]
fn stats_in(paths: &[&Path], at: SystemTime) -> Vec<Option<Stat>> {
    paths.iter().map(|p| stat(p, at)).collect()
}

/// A file read: its path, the hash of its text, the stat it was read with.
type Read = (PathBuf, Option<String>, Option<Stat>);

/// A question a load asked of the file system that no stat vouches for,
/// and its answer: where a path leads depends on links anywhere along it,
/// and which sub-folders hold a package on files inside them, so a later
/// run asks it again rather than trusting any folder's time stamps.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
struct Probe {
    question: String,
    answer: String,
}

/// Collects, during one load, every file read, every folder listed and
/// every other question asked of the file system.
pub struct Recorder {
    started: SystemTime,
    files: Mutex<Vec<Read>>,
    dirs: Mutex<Vec<(PathBuf, Vec<String>, Listing)>>,
    probes: Mutex<Vec<Probe>>,
}

impl Default for Recorder {
    fn default() -> Self {
        Recorder {
            started: SystemTime::now(),
            files: Mutex::default(),
            dirs: Mutex::default(),
            probes: Mutex::default(),
        }
    }
}

/// The hash a file's text is known by.
fn hash(text: &str) -> String {
    format!("{:032x}", KeyBuilder::default().str(text).finish().0)
}

impl Recorder {
    /// A file read: its text, or `None` when it could not be read, and its
    /// metadata as it was opened (else it is stat'ed when recording ends).
    pub fn file(&self, path: &Path, text: Option<&str>, meta: Option<&std::fs::Metadata>) {
        let stat = meta.and_then(|m| trusted(m, self.started));
        let entry = (path.to_path_buf(), text.map(hash), stat);
        self.files.lock().expect("recorder lock").push(entry);
    }

    /// A folder listed for names ending in `extensions`, and what it held.
    pub fn dir(&self, path: &Path, extensions: &[&str], listing: Listing) {
        let exts = extensions.iter().map(|e| e.to_string()).collect();
        let entry = (path.to_path_buf(), exts, listing);
        self.dirs.lock().expect("recorder lock").push(entry);
    }

    /// A question asked of the file system (in the reader's own words, which
    /// it answers again from them), and its answer.
    pub fn probe(&self, question: String, answer: String) {
        let entry = Probe { question, answer };
        self.probes.lock().expect("recorder lock").push(entry);
    }

    /// What was read, with the stats of the files and folders that can be
    /// trusted to show a later change.
    pub fn finish(self) -> Inputs {
        let started = self.started;
        let mut probes = self.probes.into_inner().expect("recorder lock");
        probes.sort();
        probes.dedup();
        let mut files = self.files.into_inner().expect("recorder lock");
        files.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
        files.dedup_by(|a, b| a.0 == b.0 && a.1 == b.1);
        let mut dirs = self.dirs.into_inner().expect("recorder lock");
        dirs.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
        dirs.dedup_by(|a, b| a.0 == b.0 && a.1 == b.1);
        Inputs {
            files: files
                .into_par_iter()
                .map(|(path, hash, known)| FileState {
                    stat: match (&hash, known) {
                        (Some(_), Some(known)) => Some(known),
                        _ => stat(&path, started),
                    },
                    path,
                    hash,
                })
                .collect(),
            dirs: dirs
                .into_par_iter()
                .map(|(path, extensions, listing)| DirState {
                    stat: stat(&path, started),
                    path,
                    extensions,
                    listing,
                })
                .collect(),
            probes,
            moved_files: BTreeSet::new(),
            moved_dirs: BTreeSet::new(),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct FileState {
    path: PathBuf,
    /// The hash of the text read; `None` when it could not be read.
    hash: Option<String>,
    /// `None` when the stat could not be trusted: compared by content.
    stat: Option<Stat>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct DirState {
    path: PathBuf,
    extensions: Vec<String>,
    listing: Listing,
    stat: Option<Stat>,
}

/// Every file and folder one load read, as it was then.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Inputs {
    files: Vec<FileState>,
    dirs: Vec<DirState>,
    /// Never amended: an answer that changed reads the project again.
    probes: Vec<Probe>,
    /// The places of the files, and of the folders, this run changed or
    /// took from an [`InputsDelta`]: what [`Inputs::delta`] writes, so a
    /// record amended in place costs the entries that moved, not the whole
    /// list again.
    #[serde(skip)]
    moved_files: BTreeSet<usize>,
    #[serde(skip)]
    moved_dirs: BTreeSet<usize>,
}

/// The entries of an [`Inputs`] that differ from the record it amends,
/// by their place in it (files, then folders): a folder's entries are
/// never different (that reads the project again), only its stat.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct InputsDelta {
    files: Vec<(usize, FileState)>,
    dirs: Vec<(usize, PathBuf, Option<Stat>)>,
}

impl InputsDelta {
    /// How many entries it holds.
    pub fn entries(&self) -> usize {
        self.files.len() + self.dirs.len()
    }
}

/// What changed since an [`Inputs`] was recorded.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Changes {
    /// A folder lists other entries (a file added, removed or renamed), or
    /// a question asked of the file system has another answer (a folder
    /// now leads elsewhere through a link, a package folder was completed).
    pub listing: bool,
    /// Files whose text changed (or that became readable or unreadable),
    /// sorted.
    pub files: Vec<PathBuf>,
    /// Whether some stat no longer matches though the content does (a
    /// touched file), or a file too new to trust is old enough now: the
    /// record is worth writing again so the next run needs no reading.
    pub restat: bool,
}

impl Changes {
    /// Nothing changed.
    pub fn none(&self) -> bool {
        !self.listing && self.files.is_empty()
    }
}

/// One recorded file or folder checked at `now`: unchanged when its stat
/// is the trusted one kept, else when `same` (its text or listing read
/// again) says so. Whether it changed, and whether it took a new trusted
/// stat (the one taken before `same` read it).
fn check(
    path: &Path,
    kept: &mut Option<Stat>,
    now: SystemTime,
    same: impl FnOnce() -> bool,
) -> (bool, bool) {
    check_stat(stat(path, now), kept, same)
}

/// [`check`] of a stat taken (`now_stat`, `None` when it cannot be trusted).
fn check_stat(
    now_stat: Option<Stat>,
    kept: &mut Option<Stat>,
    same: impl FnOnce() -> bool,
) -> (bool, bool) {
    if kept.is_some() && now_stat == *kept {
        return (false, false);
    }
    if !same() {
        return (true, false);
    }
    let fresh = now_stat.is_some();
    *kept = now_stat;
    (false, fresh)
}

impl Inputs {
    /// What changed on disk. `relist` lists a folder again the way the
    /// reader that walked it did, and `ask` answers a recorded question
    /// again. Files are stat'ed on every core; only those whose stat
    /// differs (or was not trusted) are read. A file or folder found
    /// unchanged takes the stat just taken (before its content was read),
    /// so the record can be written again without a second pass.
    pub fn changes(
        &mut self,
        relist: impl Fn(&Path, &[&str]) -> Listing + Sync,
        ask: impl Fn(&str) -> String + Sync,
    ) -> Changes {
        let now = SystemTime::now();
        let answered = self.probes.par_iter().all(|p| ask(&p.question) == p.answer);
        // Each entry: whether it changed, and whether its stat is new.
        let dirs: Vec<(bool, bool)> = self
            .dirs
            .par_iter_mut()
            .map(|d| {
                let exts: Vec<&str> = d.extensions.iter().map(String::as_str).collect();
                check(&d.path, &mut d.stat, now, || {
                    relist(&d.path, &exts) == d.listing
                })
            })
            .collect();
        let paths: Vec<&Path> = self.files.iter().map(|f| f.path.as_path()).collect();
        let taken = stats(&paths, now);
        let files: Vec<(bool, bool)> = self
            .files
            .par_iter_mut()
            .zip(taken)
            .map(|(f, now_stat)| {
                check_stat(now_stat, &mut f.stat, || {
                    crate::input::read_text(&f.path).ok().as_deref().map(hash) == f.hash
                })
            })
            .collect();
        let fresh = |c: &[(bool, bool)]| -> Vec<usize> {
            c.iter()
                .enumerate()
                .filter(|(_, c)| c.1)
                .map(|(i, _)| i)
                .collect()
        };
        self.moved_files.extend(fresh(&files));
        self.moved_dirs.extend(fresh(&dirs));
        Changes {
            listing: !answered || dirs.iter().any(|d| d.0),
            files: self
                .files
                .iter()
                .zip(&files)
                .filter(|(_, c)| c.0)
                .map(|(f, _)| f.path.clone())
                .collect(),
            restat: dirs.iter().chain(&files).any(|c| c.1),
        }
    }

    /// The same inputs with `path`'s text now `text`: what a run that read
    /// it again records, without reading anything else.
    pub fn with_file(&mut self, path: &Path, text: Option<&str>) {
        let started = SystemTime::now();
        if let Some((i, f)) = self
            .files
            .iter_mut()
            .enumerate()
            .find(|(_, f)| f.path == path)
        {
            f.hash = text.map(hash);
            f.stat = stat(path, started);
            self.moved_files.insert(i);
        }
    }

    /// The entries that differ from the record read: those this run
    /// changed, and those it took from a delta.
    pub fn delta(&self) -> InputsDelta {
        InputsDelta {
            files: self
                .moved_files
                .iter()
                .map(|&i| (i, self.files[i].clone()))
                .collect(),
            dirs: self
                .moved_dirs
                .iter()
                .map(|&i| (i, self.dirs[i].path.clone(), self.dirs[i].stat))
                .collect(),
        }
    }

    /// These inputs amended by `delta`; `None` when it does not fit them
    /// (an entry past the end, or at a place that holds another path): a
    /// delta of another record.
    pub fn apply(&mut self, delta: &InputsDelta) -> Option<()> {
        for (i, f) in &delta.files {
            let at = self.files.get_mut(*i).filter(|e| e.path == f.path)?;
            *at = f.clone();
            self.moved_files.insert(*i);
        }
        for (i, path, stat) in &delta.dirs {
            let at = self.dirs.get_mut(*i).filter(|e| e.path == *path)?;
            at.stat = *stat;
            self.moved_dirs.insert(*i);
        }
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unasked(_: &str) -> String {
        unreachable!("no question was recorded")
    }

    fn relist_plain(dir: &Path, _: &[&str]) -> Listing {
        match std::fs::read_dir(dir) {
            Ok(entries) => {
                let mut names: Vec<String> = entries
                    .flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect();
                names.sort();
                Listing::Names(names)
            }
            Err(_) => Listing::Absent,
        }
    }

    /// Writes a file with its time stamps set back, so its stat is trusted.
    fn old_file(path: &Path, text: &str) {
        std::fs::write(path, text).unwrap();
        let old = SystemTime::now() - Duration::from_secs(60);
        let f = std::fs::File::options().write(true).open(path).unwrap();
        f.set_modified(old).unwrap();
    }

    #[test]
    fn an_edit_is_seen_by_content_a_touch_is_not_a_change() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.sql");
        let b = dir.path().join("b.sql");
        old_file(&a, "select 1");
        old_file(&b, "select 2");
        let rec = Recorder::default();
        rec.file(&a, Some("select 1"), None);
        rec.file(&b, Some("select 2"), None);
        rec.dir(dir.path(), &[".sql"], relist_plain(dir.path(), &[]));
        let mut inputs = rec.finish();
        assert!(
            inputs.files.iter().all(|f| f.stat.is_none()),
            "ctime is new"
        );
        let c = inputs.changes(relist_plain, unasked);
        assert!(c.none(), "{c:?}");

        // Same size, new text, in the same second: found by content.
        std::fs::write(&a, "select 3").unwrap();
        let c = inputs.changes(relist_plain, unasked);
        assert_eq!(c.files, vec![a.clone()]);
        assert!(!c.listing);

        // A file added to the folder changes its listing.
        std::fs::write(dir.path().join("c.sql"), "select 4").unwrap();
        assert!(inputs.changes(relist_plain, unasked).listing);
    }

    #[test]
    fn stats_by_folder_are_the_stats_by_path() {
        let dir = tempfile::tempdir().unwrap();
        let mut paths = Vec::new();
        for folder in ["a", "a/deep", "b"] {
            std::fs::create_dir_all(dir.path().join(folder)).unwrap();
            for name in ["x.sql", "y.sql"] {
                let p = dir.path().join(folder).join(name);
                old_file(&p, folder);
                paths.push(p);
            }
        }
        // Missing, and a folder's own path.
        paths.push(dir.path().join("b/gone.sql"));
        paths.push(dir.path().join("a"));
        paths.sort();
        let paths: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
        // Seen from later, when every stat is old enough to be trusted (the
        // files' change times are now); and from now, when none is.
        for at in [
            SystemTime::now() + Duration::from_secs(10),
            SystemTime::now(),
        ] {
            let by_path: Vec<Option<Stat>> = paths.iter().map(|p| stat(p, at)).collect();
            assert_eq!(stats(&paths, at), by_path);
        }
        let later = SystemTime::now() + Duration::from_secs(10);
        let trusted = stats(&paths, later);
        assert_eq!(
            trusted.iter().filter(|s| s.is_some()).count(),
            7,
            "{trusted:?}"
        );
        assert!(
            trusted
                .iter()
                .any(|s| s.is_some_and(|s| s.size == "a/deep".len() as u64))
        );
    }

    #[test]
    fn a_question_is_asked_again_whatever_the_stats_say() {
        let rec = Recorder::default();
        rec.probe("where".into(), "here".into());
        rec.probe("where".into(), "here".into());
        let mut inputs = rec.finish();
        assert_eq!(inputs.probes.len(), 1);
        let asked = std::sync::atomic::AtomicUsize::new(0);
        let answer = |now: &'static str| {
            let asked = &asked;
            move |q: &str| {
                assert_eq!(q, "where");
                asked.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                now.to_string()
            }
        };
        assert!(inputs.changes(relist_plain, answer("here")).none());
        let c = inputs.changes(relist_plain, answer("elsewhere"));
        assert!(c.listing && !c.none());
        assert_eq!(asked.load(std::sync::atomic::Ordering::Relaxed), 2);
        // Kept through the record's own JSON, as a snapshot keeps it.
        let text = serde_json::to_string(&inputs).unwrap();
        let mut again: Inputs = serde_json::from_str(&text).unwrap();
        assert!(again.changes(relist_plain, answer("elsewhere")).listing);
    }

    #[test]
    fn an_unreadable_file_that_becomes_readable_is_a_change() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a.sql");
        let rec = Recorder::default();
        rec.file(&a, None, None);
        let mut inputs = rec.finish();
        assert!(inputs.changes(relist_plain, unasked).none());
        std::fs::write(&a, "select 1").unwrap();
        assert_eq!(inputs.changes(relist_plain, unasked).files, vec![a]);
    }
}
