//! One file per subcommand: its arguments (clap) and a `run` that calls the
//! library and prints. What they share: where the project is, what changed,
//! and how output is written.

pub mod check;
pub mod dags;
pub mod diff;
pub mod graph;
pub mod impact;
pub mod lineage;
pub mod plan;
pub mod schedule;
pub mod tables;

use std::io::Write;
use std::path::{Path, PathBuf};

use ripple::graph::LineageGraph;
use ripple::impact::ImpactRequest;
use ripple::ingest::{LoadOptions, OpenProject, open_project};
use ripple::project::Project;
use ripple::time::TimeKey;

/// Exit code for bad input or usage (clap uses it too).
pub const EXIT_BAD_INPUT: u8 = 2;

/// Where the project is and how to read it.
#[derive(clap::Args)]
pub struct ProjectArgs {
    /// The project folder (dbt project, SQL folders, ripple.yml).
    #[arg(long, short, default_value = ".", value_name = "DIR")]
    pub project: PathBuf,
    /// A dbt manifest.json to read as well (never read unless named here or in ripple.yml).
    #[arg(long, value_name = "FILE")]
    pub manifest: Option<PathBuf>,
    /// Where the warm cache is kept (default: `.ripple_cache` in the project).
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// Work everything out again, reading and writing no cache.
    #[arg(long)]
    pub no_cache: bool,
}

impl ProjectArgs {
    /// Loads and builds the graph, with a progress bar on a terminal. The
    /// graph lives until the process exits: freeing a 10,000-model graph
    /// piece by piece took 5 % of `ripple graph`, and the OS frees it at once.
    pub fn graph(&self) -> anyhow::Result<&'static LineageGraph> {
        let project = self.load()?;
        Self::build(project)
    }

    /// Loads the project, with a progress bar on a terminal; its cache is
    /// saved when the command is done.
    pub fn load(&self) -> anyhow::Result<Project> {
        Ok(self.open(false)?.load())
    }

    /// Reads the project as far as its lineage digest (see
    /// [`ripple::ingest::OpenProject`]), the dbt models only when asked for
    /// when `lazy`; its cache is saved when the command is done.
    pub fn open(&self, lazy: bool) -> anyhow::Result<OpenProject> {
        let bar = crate::progress::Bar::new();
        let options = LoadOptions {
            manifest: self.manifest.clone(),
            progress: &bar,
            cache: self.cache(),
            lazy,
        };
        let project = open_project(&self.project, &options)?;
        if let Some(e) = project.cache().refused() {
            // Once a run, however many times it opens the project.
            static SAID: std::sync::Once = std::sync::Once::new();
            SAID.call_once(|| {
                eprintln!(
                    "warning: this run uses no cache: {}",
                    ripple::text::without_os_code(&e.to_string())
                )
            });
        }
        if let Ok(mut opened) = OPENED.lock() {
            opened.push(project.cache().clone());
        }
        Ok(project)
    }

    /// The graph of `project`, kept until the process exits (see
    /// [`ProjectArgs::graph`]).
    pub fn build(project: Project) -> anyhow::Result<&'static LineageGraph> {
        Self::build_with(project, |_| Ok(()))
    }

    /// The lineage graph, with each partition the table facts name (the
    /// `tables:` of ripple.yml, the jobs' `partition of` DDL) linked to its
    /// parent: what `impact` follows (see `LineageGraph::link_partitions`).
    pub fn graph_with_partitions(&self) -> anyhow::Result<&'static LineageGraph> {
        let project = self.load()?;
        Self::build_with(project, |g| {
            let dialect = g.config.dialect;
            let mut tables = ripple::ingest::load_tables(
                &g.root,
                &g.config.tables,
                &[],
                g.config.allow_outside_project,
                dialect,
            )?;
            for j in g.jobs.values() {
                let Some(sql) = j.sql.as_deref() else {
                    continue;
                };
                let lower = sql.to_ascii_lowercase();
                if lower.contains("partition of") || lower.contains("inherits") {
                    tables.add_ddl(ripple::sql::tables::facts_from_ddl(sql, dialect, &j.file));
                }
            }
            g.link_partitions(&tables);
            Ok(())
        })
    }

    fn build_with(
        project: Project,
        link: impl FnOnce(&mut LineageGraph) -> anyhow::Result<()>,
    ) -> anyhow::Result<&'static LineageGraph> {
        let mut graph = ripple::timings::phase("graph", || LineageGraph::build(project));
        // A graph too large to build is refused, never answered from.
        if let Some(d) = graph
            .diagnostics
            .iter()
            .find(|d| d.code == ripple::graph::GRAPH_TOO_LARGE)
        {
            anyhow::bail!("{}", d.message);
        }
        link(&mut graph)?;
        Ok(Box::leak(Box::new(graph)))
    }

    /// The cache folder, unless `--no-cache`.
    fn cache(&self) -> Option<PathBuf> {
        if self.no_cache {
            return None;
        }
        Some(
            self.cache_dir
                .clone()
                .unwrap_or_else(|| self.project.join(ripple::cache::DEFAULT_DIR)),
        )
    }
}

/// The caches of the graphs this run built, saved when the command is done.
static OPENED: std::sync::Mutex<Vec<std::sync::Arc<ripple::cache::Cache>>> =
    std::sync::Mutex::new(Vec::new());

/// Writes what this run added to its caches. A cache that cannot be written
/// costs the next run time, not this one its answer: a warning at most.
pub fn save_caches() {
    let opened = OPENED.lock().map(|o| o.clone()).unwrap_or_default();
    for cache in opened {
        if let Err(e) = ripple::timings::phase("cache", || cache.save()) {
            eprintln!(
                "warning: the cache could not be written ({e}); the next run works everything out again (--no-cache turns it off)"
            );
        }
    }
}

/// What changed, as `impact` and `plan` take it.
#[derive(clap::Args)]
pub struct ChangeArgs {
    /// The changed datasets (name, relation or node id), or selectors.
    #[arg(required = true, value_name = "TABLE")]
    pub tables: Vec<String>,
    /// First wrong partition, inclusive (2026-01-10, or 2026-01-10T05 for an hour).
    #[arg(long, value_name = "DATE")]
    pub from: String,
    /// Last wrong partition, inclusive.
    #[arg(long, value_name = "DATE")]
    pub to: String,
    /// The exclusive upper bound of "all history" (default: today, UTC).
    #[arg(long, value_name = "DATE")]
    pub as_of: Option<String>,
    /// Only these columns of the changed tables are wrong (comma-separated):
    /// datasets that read none of them, as values or to decide rows, are
    /// left out.
    #[arg(long, value_name = "COLUMN", value_delimiter = ',')]
    pub columns: Vec<String>,
    #[command(flatten)]
    pub project: ProjectArgs,
}

impl ChangeArgs {
    /// The library's request for these arguments.
    pub fn request(&self) -> anyhow::Result<ImpactRequest> {
        if self.columns.iter().any(|c| c.trim().is_empty()) {
            anyhow::bail!(
                "--columns: an empty column name; list the wrong columns, comma-separated (`--columns amount,currency`), or leave --columns out when every column is wrong"
            );
        }
        let request = ImpactRequest {
            changed: self.tables.clone(),
            from: time_key(&self.from, "--from")?,
            to: time_key(&self.to, "--to")?,
            as_of: match &self.as_of {
                Some(d) => time_key(d, "--as-of")?.start,
                None => ripple::time::today(),
            },
            columns: self.columns.clone(),
        };
        // No partition of the range exists yet: nothing is affected, which
        // reads like good news when the dates were swapped.
        if request.as_of <= request.from.start {
            eprintln!(
                "warning: --as-of {} is not after --from {}: no partition of the range exists yet, so nothing is affected",
                self.as_of.as_deref().unwrap_or("(today)"),
                self.from
            );
        }
        Ok(request)
    }
}

/// A whole number from `lo` to `hi` given to a flag, or a message saying
/// what the flag wants: clap's own ("number too large to fit in target
/// type") names a Rust type, not the range a person may give.
pub fn whole_number(s: &str, lo: u64, hi: u64, what: &str) -> Result<u64, String> {
    match s.trim().parse::<u64>() {
        Ok(n) if (lo..=hi).contains(&n) => Ok(n),
        _ => Err(format!(
            "`{}` is not a whole number from {lo} to {hi} ({what})",
            ripple::text::one_line(s)
        )),
    }
}

/// A partition key given with `flag`, or an error naming the flag.
pub fn time_key(s: &str, flag: &str) -> anyhow::Result<TimeKey> {
    TimeKey::parse(s).map_err(|e| anyhow::anyhow!("{flag}: {e}"))
}

/// Writes `text` to `path`, or to standard output when there is none or it
/// is `-`. A
/// regular file is written beside `path` under another name, then renamed
/// over it: a full disk or a crash leaves the old file whole, never half a
/// plan, and a symlink at `path` is replaced, not followed. The file keeps
/// its mode; a new one gets the umask's. A terminal, a pipe or a device
/// such as `/dev/null` is written to as it is, never replaced by a file.
pub fn write_output(path: Option<&Path>, text: &str) -> anyhow::Result<()> {
    write_output_with(path, |w| w.write_all(text.as_bytes()))
}

/// [`write_output`] for a text `body` writes as it makes it.
pub fn write_output_with(
    path: Option<&Path>,
    body: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> anyhow::Result<()> {
    // `-o -` is standard output, as for every Unix tool: never a file
    // named `-` that a later `cat -` could not even read.
    let Some(p) = path.filter(|p| *p != Path::new("-")) else {
        // A closed pipe (`ripple ... | head`) is not an error.
        let mut out = std::io::stdout().lock();
        return match body(&mut out).and_then(|()| out.flush()) {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
            other => Ok(other?),
        };
    };
    let fail =
        |e: std::io::Error| anyhow::anyhow!("cannot write {}: {}", p.display(), io_reason(&e));
    let existing = std::fs::symlink_metadata(p).ok();
    // `-o out/`: a folder's name (the system's answer was "Not a directory").
    if existing.is_none() && p.as_os_str().to_string_lossy().ends_with('/') {
        anyhow::bail!(
            "cannot write {}: a name ending in `/` is a folder's; give --output a file name",
            p.display()
        );
    }
    if let Some(m) = &existing
        && !m.file_type().is_file()
        && !m.file_type().is_symlink()
    {
        return write_in_place(p, m, body);
    }
    // `/dev/stdout` and the like are links to this process's own streams:
    // written through, as `>` would, never replaced (`-o /dev/stdout` once
    // turned the system's link into a file and the output was lost).
    if existing
        .as_ref()
        .is_some_and(|m| m.file_type().is_symlink())
        && names_a_stream(p)
        && let Ok(target) = std::fs::metadata(p)
    {
        return write_in_place(p, &target, body);
    }
    if let Some(m) = existing.as_ref().filter(|m| m.file_type().is_file()) {
        // Replacing by rename needs only the folder's permission, and the
        // new file would be ours: a read-only file, or another user's,
        // is written as `>` writes it, by its permissions, in place.
        if !may_write(p) {
            return Err(fail(std::io::Error::from(
                std::io::ErrorKind::PermissionDenied,
            )));
        }
        // A file with other names (hard links) is one file to its user:
        // a rename would leave the other names on the old text.
        if !owned_by_us(m) || links(m) > 1 {
            return write_in_place(p, m, body);
        }
    }
    let dir = match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut builder = tempfile::Builder::new();
    builder.prefix(".ripple-");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        // The mode a new file is created with: the umask takes from it
        // what a file made by `>` would lose.
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    // Made and listed under the lock a signal's clean-up takes: killed by
    // SIGTERM or a file-size limit (SIGXFSZ) mid-write, ripple once left
    // its `.ripple-XXXXXX` beside the target.
    ripple::leftovers::watch_signals();
    let mut live = ripple::leftovers::lock();
    let made = builder.tempfile_in(dir).map(|tmp| {
        let listed = ripple::leftovers::list(&mut live, tmp.path());
        (listed, tmp)
    });
    drop(live);
    // Bound first, dropped last: the file is gone before it leaves the list.
    let (_listed, mut tmp) = match made {
        Ok(made) => made,
        // A file ripple may write in a folder it may not add to (a shared
        // report in a locked folder): written in place, as `>` would.
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => match &existing {
            Some(m) if m.file_type().is_file() => return write_in_place(p, m, body),
            _ => return Err(fail(e)),
        },
        Err(e) => return Err(fail(e)),
    };
    if let Some(m) = existing.as_ref().filter(|m| m.file_type().is_file()) {
        tmp.as_file().set_permissions(kept_mode(m)).map_err(fail)?;
        // A group (one this user is not in), an ACL or any extended
        // attribute that cannot go with the new text is kept by writing in
        // place, as `>` would: dropped, the file would be shared with
        // others than it was (the writer's group instead of its own).
        if !keep_group(tmp.as_file(), m) || !keep_xattrs(p, tmp.as_file()) {
            drop(tmp);
            return write_in_place(p, m, body);
        }
    }
    body(&mut tmp).map_err(fail)?;
    tmp.as_file().sync_all().map_err(fail)?;
    tmp.persist(p).map_err(|e| fail(e.error))?;
    Ok(())
}

/// Whether the link `p` is, or points straight at, one of this process's
/// open files (`/dev/stdout`, `/dev/fd/1`, `/proc/self/fd/1`): a stream
/// the caller opened, not a file ripple should replace. A link to anything
/// else is replaced, never followed (one could be planted).
fn names_a_stream(p: &Path) -> bool {
    let stream = |q: &Path| {
        let q = q.to_string_lossy();
        let fd = |rest: &str| !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit());
        matches!(q.as_ref(), "/dev/stdout" | "/dev/stderr")
            || q.strip_prefix("/dev/fd/").is_some_and(fd)
            || q.strip_prefix("/proc/self/fd/").is_some_and(fd)
            || q.strip_prefix("/proc/thread-self/fd/").is_some_and(fd)
    };
    if stream(p) {
        return true;
    }
    // Follow the chain of links as the kernel would (`../../dev/stdout`,
    // `/dev/./stdout`, a link to a link), and take a stream only if the
    // link and that stream are one open file: a path that only reads like
    // one (through a linked folder) is replaced as any other link.
    // A relative name is taken from the working folder, as the kernel
    // takes it: `../../dev/stdout` from `out` once read as a plain link.
    let mut at = match std::env::current_dir() {
        Ok(here) if p.is_relative() => here.join(p),
        _ => p.to_path_buf(),
    };
    for _ in 0..40 {
        let Ok(target) = std::fs::read_link(&at) else {
            return false;
        };
        let joined = at.parent().map_or(target.clone(), |d| d.join(&target));
        let mut normal = PathBuf::new();
        for part in joined.components() {
            match part {
                std::path::Component::ParentDir => {
                    normal.pop();
                }
                std::path::Component::CurDir => {}
                other => normal.push(other),
            }
        }
        if stream(&normal) {
            return same_file(p, &normal);
        }
        at = normal;
    }
    false
}

/// Whether `a` and `b` (links followed) are one file.
#[cfg(unix)]
fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => false,
    }
}

#[cfg(not(unix))]
fn same_file(_: &Path, _: &Path) -> bool {
    false
}

/// How many names (hard links) the file `m` describes has.
#[cfg(unix)]
fn links(m: &std::fs::Metadata) -> u64 {
    use std::os::unix::fs::MetadataExt;
    m.nlink()
}

#[cfg(not(unix))]
fn links(_: &std::fs::Metadata) -> u64 {
    1
}

/// The mode a replaced file keeps: its own, less set-user-ID and
/// set-group-ID, which the kernel clears on any write (`>` included):
/// report text never becomes a privileged program.
#[cfg(unix)]
fn kept_mode(m: &std::fs::Metadata) -> std::fs::Permissions {
    use std::os::unix::fs::PermissionsExt;
    std::fs::Permissions::from_mode(m.permissions().mode() & 0o1777)
}

#[cfg(not(unix))]
fn kept_mode(m: &std::fs::Metadata) -> std::fs::Permissions {
    m.permissions()
}

/// Whether this process may write the file at `p` (`access(W_OK)`).
#[cfg(target_os = "linux")]
fn may_write(p: &Path) -> bool {
    rustix::fs::access(p, rustix::fs::Access::WRITE_OK).is_ok()
}

#[cfg(not(target_os = "linux"))]
fn may_write(_: &Path) -> bool {
    true
}

/// Whether the file `m` describes belongs to this process's user.
#[cfg(target_os = "linux")]
fn owned_by_us(m: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    m.uid() == rustix::process::geteuid().as_raw()
}

#[cfg(not(target_os = "linux"))]
fn owned_by_us(_: &std::fs::Metadata) -> bool {
    true
}

/// Gives `file` the group of the file it replaces; false when this user
/// may not (not a member of that group).
#[cfg(target_os = "linux")]
fn keep_group(file: &std::fs::File, old: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    let gid = rustix::fs::Gid::from_raw(old.gid());
    rustix::fs::fchown(file, None, Some(gid)).is_ok()
}

#[cfg(not(target_os = "linux"))]
fn keep_group(_: &std::fs::File, _: &std::fs::Metadata) -> bool {
    true
}

/// Gives `file` every extended attribute of the file at `old` (its POSIX
/// ACL among them); false when one could not be read or given.
#[cfg(target_os = "linux")]
fn keep_xattrs(old: &Path, file: &std::fs::File) -> bool {
    use rustix::fs::{XattrFlags, fsetxattr, getxattr, getxattr_query, listxattr, listxattr_query};
    let size = match listxattr_query(old) {
        Ok(n) => n,
        // A file system without extended attributes: nothing to keep.
        Err(rustix::io::Errno::OPNOTSUPP) => return true,
        Err(_) => return false,
    };
    let mut names = vec![0u8; size];
    let Ok(n) = listxattr(old, &mut names[..]) else {
        return false;
    };
    names.truncate(n);
    for name in names.split(|b| *b == 0).filter(|n| !n.is_empty()) {
        let Ok(name) =
            std::ffi::CStr::from_bytes_with_nul(&[name, &[0]].concat()).map(|c| c.to_owned())
        else {
            return false;
        };
        let Ok(size) = getxattr_query(old, &name) else {
            return false;
        };
        let mut value = vec![0u8; size];
        let Ok(n) = getxattr(old, &name, &mut value[..]) else {
            return false;
        };
        if fsetxattr(file, &name, &value[..n], XattrFlags::empty()).is_err() {
            return false;
        }
    }
    true
}

#[cfg(not(target_os = "linux"))]
fn keep_xattrs(_: &Path, _: &std::fs::File) -> bool {
    true
}

/// Writes to what is not a regular file at `path` as it is: a character
/// device (`/dev/null`, a terminal) or a FIFO, and a regular file of
/// another user's, by its permissions. Anything else (a folder, a socket,
/// a block device) is refused: ripple writes reports, not disks.
fn write_in_place(
    p: &Path,
    m: &std::fs::Metadata,
    body: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> anyhow::Result<()> {
    let t = m.file_type();
    #[cfg(unix)]
    let writable = {
        use std::os::unix::fs::FileTypeExt;
        t.is_char_device() || t.is_fifo() || t.is_file()
    };
    #[cfg(not(unix))]
    let writable = false;
    if !writable {
        let what = if t.is_dir() {
            "a folder"
        } else {
            "not a regular file"
        };
        anyhow::bail!(
            "cannot write {}: it is {what}; give --output a file name",
            p.display()
        );
    }
    let fail =
        |e: std::io::Error| anyhow::anyhow!("cannot write {}: {}", p.display(), io_reason(&e));
    let mut f = open_for_writing(p, t).map_err(|e| {
        if e.raw_os_error() == Some(rustix::io::Errno::NXIO.raw_os_error()) {
            anyhow::anyhow!(
                "cannot write {}: it is a FIFO that no process reads; start the reader first",
                p.display()
            )
        } else {
            fail(e)
        }
    })?;
    match body(&mut f).and_then(|()| f.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other.map_err(fail),
    }
}

/// How long `--output` waits for a process to read a FIFO.
const FIFO_READER_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Opens what is at `p` for writing in place. A FIFO is opened without
/// waiting (opening one no process reads blocks forever), tried again for
/// [`FIFO_READER_WAIT`] (a reader started beside ripple may come a moment
/// later), refused then (`ENXIO`), else written blocking.
fn open_for_writing(p: &Path, t: std::fs::FileType) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).truncate(t.is_file());
    #[cfg(unix)]
    {
        use rustix::fs::OFlags;
        use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
        if t.is_fifo() {
            options.custom_flags(OFlags::NONBLOCK.bits() as i32);
            let start = std::time::Instant::now();
            let f = loop {
                match options.open(p) {
                    Err(e)
                        if e.raw_os_error() == Some(rustix::io::Errno::NXIO.raw_os_error())
                            && start.elapsed() < FIFO_READER_WAIT =>
                    {
                        std::thread::sleep(std::time::Duration::from_millis(20));
                    }
                    other => break other?,
                }
            };
            let flags = rustix::fs::fcntl_getfl(&f)?;
            rustix::fs::fcntl_setfl(&f, flags - OFlags::NONBLOCK)?;
            return Ok(f);
        }
    }
    options.open(p)
}

/// Writes to stdout; a closed pipe (`ripple ... | head`) is not an error.
pub fn write_stdout(text: &str) -> anyhow::Result<()> {
    write_output(None, text)
}

/// What went wrong with a file, without the temporary file's name the
/// `tempfile` crate adds (`... at path "/dir/.ripple-Vr9jTz"`): the user
/// named another.
fn io_reason(e: &std::io::Error) -> String {
    let text = ripple::text::io_reason(e);
    match text.split_once(" at path \"") {
        Some((reason, _)) => reason.to_string(),
        None => text,
    }
}
