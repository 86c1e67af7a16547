//! A project as it was at a git revision, written to a temporary folder
//! with the `git` CLI (`ls-tree` + `cat-file --batch`): the user's checkout,
//! index and refs are never touched, and `.gitattributes` export rules do
//! not apply (`git archive` would honour them).

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Component, Path, PathBuf};
use std::process::{Command, Stdio};

/// Why a revision could not be read.
#[derive(Debug, thiserror::Error)]
pub enum RevisionError {
    /// `git` could not be started.
    #[error("could not run `git` ({0}); install git or compare folders with --base-dir/--head-dir")]
    NoGit(std::io::Error),
    /// The project folder is not inside a git repository.
    #[error(
        "{} is not inside a git repository; run from a checkout or use --base-dir/--head-dir",
        .0.display()
    )]
    NotARepository(PathBuf),
    /// The revision names no commit.
    #[error("unknown revision `{0}`: no such branch, tag or commit in this repository")]
    UnknownRevision(String),
    /// The revision is missing from a shallow clone.
    #[error(
        "`{0}` is not in this shallow clone; fetch it (`git fetch --deepen=50 origin`, or `fetch-depth: 0` in actions/checkout)"
    )]
    Shallow(String),
    /// git failed.
    #[error("git {command} failed: {message}")]
    Git {
        /// What was run.
        command: String,
        /// What git said.
        message: String,
    },
    /// `RIPPLE_TMPDIR` names no usable folder.
    #[error(
        "RIPPLE_TMPDIR=`{value}` {why}; set it to an existing absolute folder outside the repository, or unset it"
    )]
    BadScratch {
        /// The variable's value.
        value: String,
        /// What is wrong with it.
        why: &'static str,
    },
    /// A submodule inside the project: another repository, not in this
    /// one's objects.
    #[error(
        "`{0}` is a git submodule: its files are another repository's, which a revision of this one does not hold (its models would read as added or removed); compare checked-out folders with --base-dir/--head-dir"
    )]
    Submodule(String),
    /// Writing the files failed.
    #[error("could not write {}: {source}", .path.display())]
    Io {
        /// Where.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// A revision's copy of the project; deleted when dropped.
#[derive(Debug)]
pub struct Revision {
    /// The commit it was read from.
    pub commit: String,
    /// The project folder inside the copy.
    pub root: PathBuf,
    /// Each seed's git object id, by its path in the project: seeds are
    /// written empty, and compared by these.
    pub seeds: std::collections::BTreeMap<PathBuf, String>,
    // Deleted before it leaves the list: a signal in between finds it listed.
    _dir: tempfile::TempDir,
    _listed: crate::leftovers::Listed,
}

/// The kinds of file a project is read from (SQL and Jinja, YAML, DAG files,
/// manifests; seeds are written empty): a repository's other files (data,
/// images, docs) are not written out.
const READ_EXTENSIONS: [&str; 7] = ["sql", "jinja", "jinja2", "yml", "yaml", "py", "json"];

/// Where a project folder sits in its repository.
#[derive(Debug, Clone)]
pub struct RepoLocation {
    /// The repository's top folder.
    pub top: PathBuf,
    /// The project folder relative to `top` (`""` or `analytics/`).
    pub prefix: String,
}

/// Finds the repository holding `project`.
pub fn locate(project: &Path) -> Result<RepoLocation, RevisionError> {
    let out =
        git(project, &["rev-parse", "--show-toplevel", "--show-prefix"]).map_err(|e| match e {
            RevisionError::Git { .. } => RevisionError::NotARepository(project.to_path_buf()),
            other => other,
        })?;
    let text = String::from_utf8_lossy(&out);
    let mut lines = text.lines();
    let top = PathBuf::from(lines.next().unwrap_or_default());
    let prefix = lines.next().unwrap_or_default().to_string();
    Ok(RepoLocation { top, prefix })
}

/// Writes the project as it is at `rev` to a temporary folder.
pub fn check_out(project: &Path, rev: &str) -> Result<Revision, RevisionError> {
    let location = locate(project)?;
    let commit = resolve(&location.top, rev)?;
    let parent = scratch_folder(&location.top)?;
    sweep(&parent);
    let mut builder = tempfile::Builder::new();
    // The old revision is the repository's: readable by its user alone.
    #[cfg(unix)]
    builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700));
    // The handler first, and the folder made and listed under the lock the
    // handler takes: a signal between making and listing it once left the
    // copy behind (seen under load in tests/hardening.rs).
    crate::leftovers::watch_signals();
    let (dir, listed, root) = {
        let mut live = crate::leftovers::lock();
        let dir = builder
            .prefix(&format!("{SCRATCH_PREFIX}{}-", std::process::id()))
            .tempdir_in(&parent)
            .map_err(|source| RevisionError::Io {
                path: parent.clone(),
                source,
            })?;
        let listed = crate::leftovers::list(&mut live, dir.path());
        // The project folder too: made after a signal's deletion, it
        // brought the copy back (`create_dir_all` makes every folder above
        // it), and the run died leaving it.
        let root = dir.path().join(&location.prefix);
        std::fs::create_dir_all(&root).map_err(|source| RevisionError::Io {
            path: root.clone(),
            source,
        })?;
        (dir, listed, root)
    };
    // Made first so that a failed write also leaves the list of live copies.
    let mut revision = Revision {
        commit,
        root,
        seeds: Default::default(),
        _dir: dir,
        _listed: listed,
    };
    let seeds = write_tree(&location, &revision.commit, revision._dir.path())?;
    revision.seeds = seeds
        .into_iter()
        .filter_map(|(sha, path)| {
            let inside = path.strip_prefix(&location.prefix).ok()?.to_path_buf();
            Some((inside, sha))
        })
        .collect();
    Ok(revision)
}

/// Where revisions are written: `$RIPPLE_TMPDIR` when set, else a memory
/// file system when there is one (`/dev/shm`: creating ten thousand files
/// on a slow disk takes seconds), else the system's temporary folder.
/// `RIPPLE_TMPDIR` must be an existing absolute folder outside the
/// repository: an empty one meant the current folder, and the base copy
/// landed inside the head project being read.
fn scratch_folder(repository: &Path) -> Result<PathBuf, RevisionError> {
    if let Some(value) = std::env::var_os("RIPPLE_TMPDIR") {
        let dir = PathBuf::from(&value);
        let bad = |why| RevisionError::BadScratch {
            value: value.to_string_lossy().into_owned(),
            why,
        };
        if value.is_empty() {
            return Err(bad("is empty"));
        }
        if !dir.is_absolute() {
            return Err(bad("is not an absolute path"));
        }
        let Ok(real) = dir.canonicalize() else {
            return Err(bad("does not exist"));
        };
        if !real.is_dir() {
            return Err(bad("is not a folder"));
        }
        let top = repository
            .canonicalize()
            .unwrap_or_else(|_| repository.to_path_buf());
        if real.starts_with(&top) {
            return Err(bad("is inside the repository being compared"));
        }
        return Ok(real);
    }
    let shm = Path::new("/dev/shm");
    let writable = std::fs::metadata(shm).is_ok_and(|m| m.is_dir() && !m.permissions().readonly());
    Ok(if writable {
        shm.to_path_buf()
    } else {
        std::env::temp_dir()
    })
}

/// Names of revision copies: the prefix, then the pid of the ripple that
/// wrote it.
const SCRATCH_PREFIX: &str = "ripple-rev-";

/// Deletes the copies left in `parent` by ripples that are gone (killed by
/// a signal before they could clean up; 20 interrupted runs left 580 MB in
/// `/dev/shm`). A process is gone when `/proc` has no entry for it; where
/// there is no `/proc`, nothing is swept.
fn sweep(parent: &Path) {
    let proc = Path::new("/proc");
    if !proc.join("self").exists() {
        return;
    }
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(SCRATCH_PREFIX)) else {
            continue;
        };
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        if same_owner(&entry.path(), &proc.join("self"))
            && pid != std::process::id()
            && !proc.join(pid.to_string()).exists()
        {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// Whether `a` and `b` belong to the same user (another user's copies are
/// theirs to clean).
#[cfg(unix)]
fn same_owner(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::symlink_metadata(a), std::fs::metadata(b)) {
        (Ok(a), Ok(b)) => a.uid() == b.uid(),
        _ => false,
    }
}

#[cfg(not(unix))]
fn same_owner(_: &Path, _: &Path) -> bool {
    false
}

/// The commit `rev` names.
fn resolve(top: &Path, rev: &str) -> Result<String, RevisionError> {
    if rev.starts_with('-') {
        return Err(RevisionError::UnknownRevision(rev.to_string()));
    }
    let spec = format!("{rev}^{{commit}}");
    match git(top, &["rev-parse", "--verify", "--quiet", &spec]) {
        Ok(out) => Ok(String::from_utf8_lossy(&out).trim().to_string()),
        Err(RevisionError::Git { .. }) => {
            let shallow = git(top, &["rev-parse", "--is-shallow-repository"])
                .map(|o| String::from_utf8_lossy(&o).trim() == "true")
                .unwrap_or(false);
            Err(match shallow {
                true => RevisionError::Shallow(rev.to_string()),
                false => RevisionError::UnknownRevision(rev.to_string()),
            })
        }
        Err(e) => Err(e),
    }
}

/// Writes every file under the project's prefix at `commit` below `dest`;
/// and the rest of the repository's when the project's settings climb out
/// of its folder (a monorepo's `model-paths: ["../../sources"]`), which the
/// checkout reads too.
/// The seeds written (empty): (object id, path in the repository).
type Seeds = Vec<(String, PathBuf)>;

fn write_tree(location: &RepoLocation, commit: &str, dest: &Path) -> Result<Seeds, RevisionError> {
    // The copy is the repository: settings may reach what the checkout's
    // may (`input::repository` looks for `.git`), no further. Without it
    // the copy's project was in no repository, its `../sources` refused,
    // and every model read as added, exit 0.
    // Under the lock, as every write to the copy: made after a signal's
    // deletion, it brought the copy back before the process died (1 run
    // in 3 of tests/hardening.rs under load).
    make_at(&dest.join(".git"), |p| std::fs::create_dir_all(p))?;
    let seeds = write_listed(location, commit, dest, Listing::Project)?;
    if location.prefix.is_empty() {
        return Ok(seeds);
    }
    let climbs = SETTINGS.iter().any(|f| {
        std::fs::read_to_string(dest.join(&location.prefix).join(f))
            .is_ok_and(|text| text.contains("../") || text.contains("..\\"))
    });
    if climbs {
        write_listed(location, commit, dest, Listing::OutsideProject)?;
    }
    Ok(seeds)
}

/// Which of a commit's files [`write_listed`] writes.
#[derive(Clone, Copy, PartialEq)]
enum Listing {
    /// Those under the project's prefix.
    Project,
    /// The repository's others.
    OutsideProject,
}

fn write_listed(
    location: &RepoLocation,
    commit: &str,
    dest: &Path,
    listing: Listing,
) -> Result<Seeds, RevisionError> {
    let mut args = vec!["ls-tree", "-r", "-z", "--full-tree", commit];
    if !location.prefix.is_empty() && listing == Listing::Project {
        args.extend(["--", location.prefix.as_str()]);
    }
    let listing_text = git(&location.top, &args)?;
    let inside = |p: &str| location.prefix.is_empty() || p.starts_with(location.prefix.as_str());
    let mut blobs: Vec<(String, PathBuf)> = Vec::new();
    let mut links: Vec<(String, PathBuf)> = Vec::new();
    let mut mirrored: Vec<(String, PathBuf)> = Vec::new();
    let mut seeds: Seeds = Vec::new();
    for entry in listing_text.split(|&b| b == 0).filter(|e| !e.is_empty()) {
        let entry = String::from_utf8_lossy(entry);
        let Some((meta, path)) = entry.split_once('\t') else {
            continue;
        };
        if listing == Listing::OutsideProject && inside(path) {
            continue;
        }
        let mut meta = meta.split(' ');
        let (mode, kind, sha) = (meta.next(), meta.next(), meta.next());
        let relative = Path::new(path);
        // The project's own settings may be links inside the repository
        // (a monorepo's shared `ripple.yml`): written as the file they
        // lead to, found by git in the same commit.
        if kind == Some("blob")
            && mode == Some("120000")
            && SETTINGS
                .iter()
                .any(|f| relative == Path::new(&location.prefix).join(f))
        {
            links.push((format!("{commit}:{path}"), relative.to_path_buf()));
            continue;
        }
        if relative
            .components()
            .any(|c| !matches!(c, Component::Normal(_)))
        {
            continue;
        }
        let extension = relative
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase)
            .unwrap_or_default();
        let read = extension == "csv" || READ_EXTENSIONS.contains(&extension.as_str());
        if kind == Some("commit") && listing == Listing::Project {
            return Err(RevisionError::Submodule(path.to_string()));
        }
        // Other links are made again as links, not followed: the reader
        // then finds them as it finds a checkout's (`linked-file`), where
        // left out they read as a model added or removed.
        if kind == Some("blob") && mode == Some("120000") && read && listing == Listing::Project {
            mirrored.push((sha.unwrap_or_default().to_string(), relative.to_path_buf()));
            continue;
        }
        // Regular files only.
        if kind != Some("blob") || !matches!(mode, Some("100644" | "100755")) {
            continue;
        }
        if extension == "csv" {
            // Seeds are read by name only: their contents (often large,
            // sometimes not even in the clone) are not needed.
            write_file(&dest.join(relative), &mut std::io::empty(), 0)?;
            seeds.push((sha.unwrap_or_default().to_string(), relative.to_path_buf()));
        } else if read {
            blobs.push((sha.unwrap_or_default().to_string(), relative.to_path_buf()));
        }
    }
    for (sha, relative) in &mirrored {
        let target = git(&location.top, &["cat-file", "blob", sha])?;
        write_link(&dest.join(relative), &String::from_utf8_lossy(&target))?;
    }
    write_objects(location, &blobs, false, dest)?;
    write_objects(location, &links, true, dest)?;
    Ok(seeds)
}

/// The git object ids the files `paths` (relative to `project`, in the
/// working tree) would be stored as: what a revision's seeds are compared
/// with. `None` for a file git cannot hash.
pub fn object_ids(project: &Path, paths: &[PathBuf]) -> Result<Vec<Option<String>>, RevisionError> {
    if paths.is_empty() {
        return Ok(Vec::new());
    }
    let mut args: Vec<String> = vec!["hash-object".into(), "--".into()];
    args.extend(paths.iter().map(|p| p.display().to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = git(project, &args)?;
    let text = String::from_utf8_lossy(&out);
    let ids: Vec<Option<String>> = text.lines().map(|l| Some(l.trim().to_string())).collect();
    Ok(match ids.len() == paths.len() {
        true => ids,
        false => vec![None; paths.len()],
    })
}

/// A link at `path` to `target`, as the checkout has it (never followed
/// here). Elsewhere than unix, nothing: such a file is then missing.
fn write_link(path: &Path, target: &str) -> Result<(), RevisionError> {
    make_at(path, |path| {
        #[cfg(unix)]
        std::os::unix::fs::symlink(target, path)?;
        #[cfg(not(unix))]
        let _ = (target, path);
        Ok(())
    })
}

/// The settings files at a project's root that may be links.
const SETTINGS: [&str; 2] = ["ripple.yml", "dbt_project.yml"];

/// Writes each object `requests` names (a blob id, or with `follow` a
/// `commit:path` whose links git follows inside the repository) to its
/// path below `dest`. With `follow`, a path whose links lead out of the
/// repository, nowhere or round in a loop is left unwritten: the project
/// is then read as if it had no such file, as the checkout refuses it.
fn write_objects(
    location: &RepoLocation,
    requests: &[(String, PathBuf)],
    follow: bool,
    dest: &Path,
) -> Result<(), RevisionError> {
    if requests.is_empty() {
        return Ok(());
    }
    let mut args = vec!["cat-file", "--batch"];
    if follow {
        args.push("--follow-symlinks");
    }
    let mut child = git_command(&location.top, &args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        // Unread, a piped stderr could fill up and stall git; a missing
        // object is reported on stdout anyway.
        .stderr(Stdio::null())
        .spawn()
        .map_err(RevisionError::NoGit)?;
    let mut stdin = child.stdin.take().expect("piped");
    let lines: String = requests.iter().map(|(o, _)| format!("{o}\n")).collect();
    // Feed git from another thread: it answers while it reads, and both
    // pipes filling up would block both sides.
    let feeder = std::thread::spawn(move || stdin.write_all(lines.as_bytes()));
    let mut out = BufReader::new(child.stdout.take().expect("piped"));
    let failed = |message: String| RevisionError::Git {
        command: "cat-file --batch".to_string(),
        message,
    };
    for (object, relative) in requests {
        let mut header = String::new();
        out.read_line(&mut header)
            .map_err(|e| failed(e.to_string()))?;
        let header = header.trim_end();
        if header.ends_with(" missing") {
            if follow {
                continue;
            }
            return Err(failed(format!(
                "the object of {} ({object}) is not in this clone (partial or damaged); run `git fetch`",
                relative.display()
            )));
        }
        let mut words = header.split(' ');
        let first = words.next().unwrap_or_default();
        let size: u64 = header
            .rsplit(' ')
            .next()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| failed(format!("unexpected answer for {object}: {header}")))?;
        // `symlink`, `dangling`, `loop`, `notdir`: what follows names the
        // path, not a file's content.
        let blob = words.next() == Some("blob");
        if follow && !blob {
            std::io::copy(&mut (&mut out).take(size), &mut std::io::sink())
                .map_err(|e| failed(e.to_string()))?;
        } else if !blob {
            return Err(failed(format!("unexpected answer for {object}: {first}")));
        } else if size > crate::input::MAX_INPUT_BYTES {
            // Past what any reader takes: a hole of its size, which the
            // reader refuses by its size (a 600 MB blob, 768 KB in git, was
            // written whole to a tmpfs copy). Its bytes are skipped.
            std::io::copy(&mut (&mut out).take(size), &mut std::io::sink())
                .map_err(|e| failed(e.to_string()))?;
            write_hole(&dest.join(relative), size)?;
        } else {
            write_file(&dest.join(relative), &mut out, size)?;
        }
        let mut newline = [0u8; 1];
        if out.read_exact(&mut newline).is_err() || newline != *b"\n" {
            return Err(failed(format!("short answer for {object}")));
        }
    }
    let _ = feeder.join();
    let _ = child.wait();
    Ok(())
}

/// Writes the next `size` bytes of `from` to `path` (folders made as needed),
/// streamed: a large manifest is never held in memory whole.
fn write_file(path: &Path, from: &mut impl Read, size: u64) -> Result<(), RevisionError> {
    make_at(path, |path| {
        let mut file = std::fs::File::create(path)?;
        let copied = std::io::copy(&mut from.take(size), &mut file)?;
        if copied != size {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        Ok(())
    })
}

/// Makes what `make` makes at `path` in a revision's copy: under the lock
/// a signal's deletion takes (see `leftovers`), its folders made first.
fn make_at(
    path: &Path,
    make: impl FnOnce(&Path) -> std::io::Result<()>,
) -> Result<(), RevisionError> {
    let _writing = crate::leftovers::lock();
    path.parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| make(path))
        .map_err(|source| RevisionError::Io {
            path: path.to_path_buf(),
            source,
        })
}

/// A file of `size` bytes at `path` holding none (sparse): what a reader
/// refuses by its size, at no cost in memory.
fn write_hole(path: &Path, size: u64) -> Result<(), RevisionError> {
    make_at(path, |path| std::fs::File::create(path)?.set_len(size))
}

/// `git -C dir args...`, never prompting for credentials.
fn git_command(dir: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new("git");
    cmd.arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0");
    cmd
}

/// Runs git in `dir`; its standard output, or its complaint.
fn git(dir: &Path, args: &[&str]) -> Result<Vec<u8>, RevisionError> {
    let out = git_command(dir, args)
        .stdin(Stdio::null())
        .output()
        .map_err(RevisionError::NoGit)?;
    if out.status.success() {
        Ok(out.stdout)
    } else {
        Err(RevisionError::Git {
            command: args.first().copied().unwrap_or_default().to_string(),
            message: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        })
    }
}
