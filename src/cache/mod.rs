//! The warm cache: answers worked out on an earlier run, kept under a key
//! that hashes everything they depend on, so a re-run after an edit redoes
//! only what the edit can change (docs/cache.md).
//!
//! One file per [`Table`] in the cache folder, a JSON document per line
//! (a header, then one answer a line), read whole the first time the table
//! is asked for, and rewritten (to a temporary file, then renamed over the
//! old one) only when the run added something. A file
//! written by another build of ripple, or that does not read, is an empty
//! table: the cache can cost a miss, never a wrong answer it was not given.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::hash::Hasher;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use serde::Serialize;
use serde::de::DeserializeOwned;
use siphasher::sip128::{Hasher128, SipHasher13};

pub mod inputs;

/// The cache folder's name in a project, unless `--cache-dir` says otherwise.
pub const DEFAULT_DIR: &str = ".ripple_cache";

/// The largest table file read (1 GiB); a larger one is an empty table.
const MAX_FILE: u64 = 1 << 30;

/// Bumped by hand when what a table holds changes shape; the build identity
/// below covers every other change of ripple itself.
const FORMAT: u32 = 8;

/// What one table holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Table {
    /// A job's statements with their column lineage.
    Columns,
    /// The grains and windows a job's SQL spells.
    TimeFacts,
}

impl Table {
    const ALL: [Table; 2] = [Table::Columns, Table::TimeFacts];

    fn file(self) -> &'static str {
        match self {
            Table::Columns => "columns.jsonl",
            Table::TimeFacts => "time-facts.jsonl",
        }
    }

    fn slot(self) -> usize {
        self as usize
    }
}

/// A key: 128 bits of SipHash-1-3 over the parts it was built from.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct Key(u128);

/// Builds a [`Key`]; every part is written with its length, so that
/// ("ab", "c") and ("a", "bc") differ.
#[derive(Debug, Clone)]
pub struct KeyBuilder(SipHasher13);

impl Default for KeyBuilder {
    fn default() -> Self {
        KeyBuilder(SipHasher13::new_with_keys(0x7269_7070_6c65, FORMAT as u64))
    }
}

impl KeyBuilder {
    /// Adds a string.
    pub fn str(&mut self, s: &str) -> &mut Self {
        self.bytes(s.as_bytes())
    }

    /// Adds bytes.
    pub fn bytes(&mut self, b: &[u8]) -> &mut Self {
        self.0.write_u64(b.len() as u64);
        self.0.write(b);
        self
    }

    /// Adds a number.
    pub fn u64(&mut self, n: u64) -> &mut Self {
        self.0.write_u64(n);
        self
    }

    /// Adds a value by its JSON text (maps in serde_json's order, which is
    /// the order they were built in: callers pass ordered maps).
    pub fn json<T: Serialize + ?Sized>(&mut self, v: &T) -> &mut Self {
        let text = serde_json::to_string(v).unwrap_or_default();
        self.str(&text)
    }

    /// Adds another key.
    pub fn key(&mut self, k: Key) -> &mut Self {
        self.bytes(&k.0.to_le_bytes())
    }

    /// The key.
    pub fn finish(&self) -> Key {
        Key(self.0.finish128().as_u128())
    }
}

/// What one table's file held, and what this run used and added.
#[derive(Default)]
struct Entries {
    /// The file as read: the answers in `old` are ranges of it, parsed only
    /// when asked for, so opening a large table is one pass over its lines.
    text: String,
    /// Each answer (its JSON text in `text`) with the generation (the count
    /// of the table's writes) that last used it.
    old: HashMap<Key, (u64, std::ops::Range<usize>)>,
    /// The generation of the file read.
    generation: u64,
    used: Mutex<HashSet<Key>>,
    added: Mutex<HashMap<Key, String>>,
}

/// The cache of one project (or none: [`Cache::off`]).
#[derive(Default)]
pub struct Cache {
    dir: Option<PathBuf>,
    tables: [OnceLock<Entries>; Table::ALL.len()],
    /// Why a snapshot could not be written, for [`Cache::save`] to report.
    failed: Mutex<Option<std::io::Error>>,
    /// Snapshots being written beside the run, finished by [`Cache::save`]
    /// or when the cache is dropped.
    writing: Mutex<Vec<std::thread::JoinHandle<std::io::Result<()>>>>,
}

impl Drop for Cache {
    fn drop(&mut self) {
        self.finish_writes();
    }
}

impl std::fmt::Debug for Cache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cache").field("dir", &self.dir).finish()
    }
}

/// The first line of a table's file; each line after it is one answer,
/// `["<key in hex>",<generation>,<answer>]`.
#[derive(Serialize, serde::Deserialize)]
struct TableHeader {
    build: String,
    generation: u64,
}

/// An answer that none of the last `KEEP` runs writing its table used is
/// dropped: old versions of edited models do not pile up, and a run over a
/// few jobs (a `--select`, a column walk) does not empty the cache.
const KEEP: u64 = 8;

impl Cache {
    /// No cache: every answer is worked out again.
    pub fn off() -> Cache {
        Cache::default()
    }

    /// The cache kept in `dir` (created when first written).
    pub fn open(dir: PathBuf) -> Cache {
        let mut cache = Cache::default();
        cache.dir = Some(dir);
        cache
    }

    /// Whether answers are kept at all.
    pub fn is_on(&self) -> bool {
        self.dir.is_some()
    }

    fn entries(&self, table: Table) -> Option<&Entries> {
        let dir = self.dir.as_ref()?;
        Some(self.tables[table.slot()].get_or_init(|| read_table(&dir.join(table.file()))))
    }

    /// The answer kept under `key` by an earlier run or earlier in this
    /// one, if there is one that reads as a `T`.
    pub fn get<T: DeserializeOwned>(&self, table: Table, key: Key) -> Option<T> {
        let entries = self.entries(table)?;
        let Some((_, range)) = entries.old.get(&key) else {
            // Worked out earlier in this run (a second reader of the same SQL).
            let added = entries.added.lock().ok()?;
            return serde_json::from_str(added.get(&key)?).ok();
        };
        let value = serde_json::from_str(entries.text.get(range.clone())?).ok()?;
        if let Ok(mut used) = entries.used.lock() {
            used.insert(key);
        }
        Some(value)
    }

    /// The answer under the key `key` builds, or else `work`'s, kept for the
    /// next run. With the cache off, `work` alone: no key is built.
    pub fn remember<T: Serialize + DeserializeOwned>(
        &self,
        table: Table,
        key: impl FnOnce() -> Key,
        work: impl FnOnce() -> T,
    ) -> T {
        if !self.is_on() {
            return work();
        }
        let key = key();
        if let Some(kept) = self.get(table, key) {
            return kept;
        }
        let value = work();
        self.put(table, key, &value);
        value
    }

    /// Keeps `value` under `key` for the next run.
    pub fn put<T: Serialize>(&self, table: Table, key: Key, value: &T) {
        let Some(entries) = self.entries(table) else {
            return;
        };
        let Ok(text) = serde_json::to_string(value) else {
            return;
        };
        if let Ok(mut added) = entries.added.lock() {
            added.insert(key, text);
        }
    }

    /// The snapshot `name` kept under `key` (a reader's whole result, in the
    /// reader's own format), if the file holds that key from this build.
    pub fn snapshot(&self, name: &str, key: Key) -> Option<Snapshot> {
        let dir = self.dir.as_ref()?;
        let (header, bytes, start) =
            read_headed::<SnapshotHeader, _>(&dir.join(snapshot_file(name)), map_bounded)?;
        if header.build != build() || header.key != hex(key) {
            return None;
        }
        Some(Snapshot {
            bytes: std::sync::Arc::new(bytes),
            start,
            id: header.id,
        })
    }

    /// What the snapshot `base` (read under `key`) was amended by since it
    /// was written: the body of its edits file, if that file was written
    /// for this very snapshot (its id, so never a stale one).
    pub fn snapshot_edits(&self, name: &str, key: Key, base: &Snapshot) -> Option<Vec<u8>> {
        let dir = self.dir.as_ref()?;
        let (header, bytes, start) =
            read_headed::<EditsHeader, _>(&dir.join(edits_file(name)), read_bounded)?;
        if header.build != build() || header.key != hex(key) || header.base != base.id {
            return None;
        }
        let mut bytes = bytes.to_vec();
        bytes.drain(..start);
        Some(bytes)
    }

    /// Writes the edits file of the snapshot `base` (read under `key`),
    /// over the one there: what amends it, so an edit costs a few lines
    /// written rather than the whole snapshot. Atomic; a failure is
    /// reported by [`Cache::save`].
    pub fn write_snapshot_edits(
        &self,
        name: &str,
        key: Key,
        base: &Snapshot,
        body: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
    ) {
        let Some(dir) = &self.dir else {
            return;
        };
        let header = EditsHeader {
            build: build().to_string(),
            key: hex(key),
            base: base.id.clone(),
        };
        if let Err(e) = write_atomically(dir, &edits_file(name), &header, body) {
            self.keep_failure(e);
        }
    }

    /// Writes the snapshot `name` under `key` now, over whatever snapshot of
    /// that name was there (one per name: the project's latest state), its
    /// text streamed by `body` so a large project's is never held whole.
    /// Atomic like the tables; a failure is reported by [`Cache::save`].
    /// The id of the write ([`Snapshot::id`]) when it was written.
    pub fn write_snapshot(
        &self,
        name: &str,
        key: Key,
        body: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
    ) -> Option<String> {
        self.write_snapshot_unless(name, key, |w| body(w).map(|()| true))
    }

    /// [`Cache::write_snapshot`] for a body that may give up (`Ok(false)`:
    /// what it was copied from failed): the file there is left as it was,
    /// and that is no failure of the cache.
    pub fn write_snapshot_unless(
        &self,
        name: &str,
        key: Key,
        body: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<bool>,
    ) -> Option<String> {
        let dir = self.dir.as_ref()?;
        let header = SnapshotHeader::of(key);
        let mut gave_up = false;
        let written = write_whole_snapshot(dir, name, &header, |w| match body(w)? {
            true => Ok(()),
            false => {
                gave_up = true;
                Err(std::io::Error::other("gave up"))
            }
        });
        match written {
            Ok(()) => Some(header.id),
            Err(e) => {
                if !gave_up {
                    self.keep_failure(e);
                }
                None
            }
        }
    }

    /// Keeps a snapshot write's failure for [`Cache::save`] (the first one).
    fn keep_failure(&self, e: std::io::Error) {
        if let Ok(mut failed) = self.failed.lock() {
            failed.get_or_insert(e);
        }
    }

    /// [`Cache::write_snapshot`] on a thread of its own, so the run goes on
    /// while it is written: for a snapshot made of the one it read, which
    /// the writer owns.
    pub fn write_snapshot_aside(
        &self,
        name: &str,
        key: Key,
        body: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()> + Send + 'static,
    ) {
        let Some(dir) = self.dir.clone() else {
            return;
        };
        let header = SnapshotHeader::of(key);
        let name = name.to_string();
        let spawned = std::thread::Builder::new()
            .name("ripple-snapshot".into())
            .spawn(move || write_whole_snapshot(&dir, &name, &header, body));
        match spawned {
            Ok(handle) => match self.writing.lock() {
                Ok(mut writing) => writing.push(handle),
                // A poisoned list cannot be waited on: wait now.
                Err(_) => self.finish(handle),
            },
            Err(e) => self.keep_failure(e),
        }
    }

    /// Waits for one snapshot writer, keeping its failure.
    fn finish(&self, handle: std::thread::JoinHandle<std::io::Result<()>>) {
        let result = handle
            .join()
            .unwrap_or_else(|_| Err(std::io::Error::other("the snapshot writer stopped")));
        if let Err(e) = result {
            self.keep_failure(e);
        }
    }

    /// Waits for the snapshots being written, keeping the first failure.
    fn finish_writes(&self) {
        let handles = match self.writing.lock() {
            Ok(mut w) => std::mem::take(&mut *w),
            Err(_) => return,
        };
        for h in handles {
            self.finish(h);
        }
    }

    /// Writes every table this run added to, with the answers it used or
    /// added marked as this write's, and those unused for [`KEEP`] writes
    /// dropped. Failing to write is not an error of the run: the next one
    /// is only slower.
    pub fn save(&self) -> std::io::Result<()> {
        self.finish_writes();
        let Some(dir) = &self.dir else {
            return Ok(());
        };
        for table in Table::ALL {
            let Some(entries) = self.tables[table.slot()].get() else {
                continue;
            };
            let added = std::mem::take(&mut *entries.added.lock().expect("cache lock"));
            if added.is_empty() {
                continue;
            }
            let used = entries.used.lock().expect("cache lock");
            let generation = entries.generation + 1;
            // In key order, so the same answers make the same file.
            let mut out: BTreeMap<Key, (u64, &str)> = BTreeMap::new();
            for (k, text) in &added {
                out.insert(*k, (generation, text));
            }
            for (k, (last, range)) in &entries.old {
                let last = if used.contains(k) { generation } else { *last };
                if generation - last <= KEEP {
                    out.entry(*k)
                        .or_insert((last, &entries.text[range.clone()]));
                }
            }
            let header = TableHeader {
                build: build().to_string(),
                generation,
            };
            write_atomically(dir, table.file(), &header, |w| {
                for (k, (last, text)) in &out {
                    // serde_json writes no raw newline: one answer a line.
                    writeln!(w, "[\"{}\",{last},{text}]", hex(*k))?;
                }
                Ok(())
            })?;
        }
        match self.failed.lock().ok().and_then(|mut f| f.take()) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// A snapshot as read: the file's bytes after its first line.
#[derive(Clone)]
pub struct Snapshot {
    bytes: std::sync::Arc<Bytes>,
    start: usize,
    /// Which write of the snapshot this is, for its edits file to name.
    id: String,
}

impl Snapshot {
    /// What the reader kept.
    pub fn body(&self) -> &[u8] {
        &self.bytes[self.start..]
    }

    /// The whole file's bytes, for what keeps parts of the body (a model's
    /// SQL) past the snapshot: [`Snapshot::start`] is where the body begins.
    pub fn bytes(&self) -> &std::sync::Arc<Bytes> {
        &self.bytes
    }

    /// Where the body begins in [`Snapshot::bytes`].
    pub fn start(&self) -> usize {
        self.start
    }

    /// Which write of the snapshot this is: another write, another id.
    pub fn id(&self) -> &str {
        &self.id
    }
}

/// A cache file's bytes: mapped, for a snapshot (most of a warm run's
/// read was the kernel faulting in a fresh buffer's pages, and then a copy
/// of each model's SQL out of it), or read.
pub struct Bytes(BytesOf);

enum BytesOf {
    Mapped(memmap2::Mmap),
    Read(Vec<u8>),
}

impl std::ops::Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match &self.0 {
            BytesOf::Mapped(m) => m,
            BytesOf::Read(v) => v,
        }
    }
}

impl std::fmt::Debug for Bytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Bytes({} bytes)", self.len())
    }
}

/// The first line of a snapshot file: which build wrote it, under which
/// key, and an id no other write of it shares.
#[derive(Serialize, serde::Deserialize)]
struct SnapshotHeader {
    build: String,
    key: String,
    id: String,
}

impl SnapshotHeader {
    /// The header this build writes for a snapshot under `key`: its id
    /// from the clock, the process and a count, so two writes never share
    /// one (an edits file names the write it amends).
    fn of(key: Key) -> SnapshotHeader {
        static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let id = KeyBuilder::default()
            .bytes(&now.to_le_bytes())
            .u64(u64::from(std::process::id()))
            .u64(WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
            .finish();
        SnapshotHeader {
            build: build().to_string(),
            key: hex(key),
            id: hex(id),
        }
    }
}

/// The first line of a snapshot's edits file: the build, the key, and the
/// id of the snapshot it amends.
#[derive(Serialize, serde::Deserialize)]
struct EditsHeader {
    build: String,
    key: String,
    base: String,
}

fn snapshot_file(name: &str) -> String {
    format!("{name}.snapshot.json")
}

fn edits_file(name: &str) -> String {
    format!("{name}.edits.json")
}

/// Writes a snapshot whole, then removes the edits file of the one it
/// replaces: a new snapshot holds its edits, and an edits file naming
/// another snapshot would never be read again.
fn write_whole_snapshot(
    dir: &Path,
    name: &str,
    header: &SnapshotHeader,
    body: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    write_atomically(dir, &snapshot_file(name), header, body)?;
    match std::fs::remove_file(dir.join(edits_file(name))) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

fn hex(k: Key) -> String {
    format!("{:032x}", k.0)
}

/// The bytes of the cache file `path`, unless it is missing, unreadable or
/// larger than [`MAX_FILE`]: a file far larger than any project's answers
/// is not ours to trust with the memory it would take.
fn read_bounded(path: &Path) -> Option<Vec<u8>> {
    let file = std::fs::File::open(path).ok()?;
    let len = file.metadata().ok()?.len();
    if len > MAX_FILE {
        return None;
    }
    // Files are replaced by renames, never written in place, so the open
    // file keeps this length; a short read is a miss all the same.
    read_whole(&file, usize::try_from(len).ok()?).ok()
}

/// The cache file `path` mapped into memory, on the terms of
/// [`read_bounded`].
fn map_bounded(path: &Path) -> Option<Bytes> {
    let file = std::fs::File::open(path).ok()?;
    let len = file.metadata().ok()?.len();
    if len > MAX_FILE {
        return None;
    }
    if len == 0 {
        return Some(Bytes(BytesOf::Read(Vec::new())));
    }
    // SAFETY: a mapping is sound while no one changes the file under it.
    // ripple never writes a cache file in place: every write goes to a new
    // file renamed over the old one, so the file mapped here keeps its
    // bytes and length even when a later write replaces it. Only another
    // program writing into `.ripple_cache` could change it (docs/cache.md
    // says not to), as ripgrep maps the files it searches.
    #[allow(unsafe_code)]
    let map = unsafe { memmap2::Mmap::map(&file) }.ok()?;
    Some(Bytes(BytesOf::Mapped(map)))
}

/// A cache file whose first line is a JSON header, read by `read`: the
/// header, the bytes, and where the body after the header starts.
fn read_headed<H: DeserializeOwned, B: std::ops::Deref<Target = [u8]>>(
    path: &Path,
    read: fn(&Path) -> Option<B>,
) -> Option<(H, B, usize)> {
    let bytes = read(path)?;
    let end = bytes.iter().position(|b| *b == b'\n')?;
    let header = serde_json::from_slice(&bytes[..end]).ok()?;
    Some((header, bytes, end + 1))
}

/// The first `len` bytes of `file`, a large file in pieces on every core:
/// most of a warm run's read is the kernel faulting in the new buffer's
/// pages, one core at a time when read in one call.
#[cfg(unix)]
fn read_whole(file: &std::fs::File, len: usize) -> std::io::Result<Vec<u8>> {
    use rayon::prelude::*;
    use std::os::unix::fs::FileExt;
    let mut bytes = vec![0u8; len];
    let piece = (len / rayon::current_num_threads().max(1)).max(READ_PIECE);
    bytes
        .par_chunks_mut(piece)
        .enumerate()
        .try_for_each(|(i, chunk)| file.read_exact_at(chunk, (i * piece) as u64))?;
    Ok(bytes)
}

/// The first `len` bytes of `file`.
#[cfg(not(unix))]
fn read_whole(file: &std::fs::File, len: usize) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut bytes = Vec::with_capacity(len);
    file.take(len as u64).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Files up to this size are read in one piece.
const READ_PIECE: usize = 4 << 20;

/// The table in `path`; empty when it is missing, unreadable, larger than
/// [`MAX_FILE`], or written by another build. A line that does not read is
/// an answer missed.
fn read_table(path: &Path) -> Entries {
    let Some(text) = read_bounded(path).and_then(|b| String::from_utf8(b).ok()) else {
        return Entries::default();
    };
    let Some((head, body)) = text.split_once('\n') else {
        return Entries::default();
    };
    match serde_json::from_str::<TableHeader>(head) {
        Ok(h) if h.build == build() => {
            let mut old = HashMap::new();
            let mut at = head.len() + 1;
            for line in body.split('\n') {
                if let Some((key, generation, answer)) = table_line(line) {
                    old.insert(key, (generation, at + answer.start..at + answer.end));
                }
                at += line.len() + 1;
            }
            Entries {
                old,
                generation: h.generation,
                text,
                ..Entries::default()
            }
        }
        _ => Entries::default(),
    }
}

/// One answer's line, `["<key>",<generation>,<answer>]`: its key, its
/// generation and where in the line its JSON text is (checked when read).
fn table_line(line: &str) -> Option<(Key, u64, std::ops::Range<usize>)> {
    let rest = line.strip_prefix("[\"")?;
    let (key, rest) = rest.split_at_checked(32)?;
    let key = Key(u128::from_str_radix(key, 16).ok()?);
    let rest = rest.strip_prefix("\",")?;
    let (generation, answer) = rest.split_once(',')?;
    let generation = generation.parse().ok()?;
    let answer = answer.strip_suffix(']').filter(|a| !a.is_empty())?;
    let start = line.len() - answer.len() - 1;
    Some((key, generation, start..start + answer.len()))
}

/// This build of ripple: its version, the table format, and the running
/// executable's size and modification time, so that a rebuilt binary (whose
/// readers may answer differently) starts from an empty cache.
fn build() -> &'static str {
    static BUILD: OnceLock<String> = OnceLock::new();
    BUILD.get_or_init(|| {
        let exe = std::env::current_exe()
            .ok()
            .and_then(|p| std::fs::metadata(p).ok())
            .map(|m| {
                let modified = m
                    .modified()
                    .ok()
                    .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                    .map_or(0, |d| d.as_nanos());
                format!("{}-{modified}", m.len())
            })
            .unwrap_or_default();
        format!(
            "ripple {} format {FORMAT} exe {exe}",
            env!("CARGO_PKG_VERSION")
        )
    })
}

/// Writes `header` as the first line of `dir/name`, then what `body`
/// writes, through a buffer and a temporary file renamed over it, so that a
/// reader (or a second ripple at once) sees the old file or the new, never
/// half of one. The folder is made on first use, ignored by git.
fn write_atomically(
    dir: &Path,
    name: &str,
    header: &impl Serialize,
    body: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    if !dir.is_dir() {
        std::fs::create_dir_all(dir)?;
        std::fs::write(
            dir.join(".gitignore"),
            "# ripple's cache (docs/cache.md)\n*\n",
        )?;
        std::fs::write(
            dir.join("CACHEDIR.TAG"),
            "Signature: 8a477f597d28d172789f06886806bc55\n# ripple's cache (docs/cache.md)\n",
        )?;
    }
    // One name a write: two writes of one run may overlap.
    static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = WRITES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = dir.join(format!(".{name}.{}.{n}.tmp", std::process::id()));
    let written = (|| {
        use std::io::Write as _;
        let mut w = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(&tmp)?);
        serde_json::to_writer(&mut w, header).map_err(std::io::Error::other)?;
        w.write_all(b"\n")?;
        body(&mut w)?;
        w.flush()
    })();
    written
        .and_then(|()| std::fs::rename(&tmp, dir.join(name)))
        .inspect_err(|_| {
            let _ = std::fs::remove_file(&tmp);
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(s: &str) -> Key {
        KeyBuilder::default().str(s).finish()
    }

    #[test]
    fn keys_separate_their_parts() {
        let ab_c = KeyBuilder::default().str("ab").str("c").finish();
        let a_bc = KeyBuilder::default().str("a").str("bc").finish();
        assert_ne!(ab_c, a_bc);
        assert_eq!(key("x"), key("x"));
    }

    #[test]
    fn answers_survive_runs_until_none_of_the_last_writes_used_them() {
        let dir = tempfile::tempdir().unwrap();
        let at = dir.path().join("c");
        let first = Cache::open(at.clone());
        assert_eq!(first.get::<u32>(Table::Columns, key("a")), None);
        first.put(Table::Columns, key("a"), &1u32);
        first.put(Table::Columns, key("b"), &2u32);
        first.save().unwrap();
        assert!(at.join(".gitignore").is_file());

        // A run that uses only `a` and adds `c` keeps `b`.
        let second = Cache::open(at.clone());
        assert_eq!(second.get::<u32>(Table::Columns, key("a")), Some(1));
        assert_eq!(second.get::<u32>(Table::TimeFacts, key("a")), None);
        second.put(Table::Columns, key("c"), &3u32);
        second.save().unwrap();
        let read = Cache::open(at.clone());
        assert_eq!(read.get::<u32>(Table::Columns, key("b")), Some(2));
        assert_eq!(read.get::<u32>(Table::Columns, key("c")), Some(3));

        // Eight more writes that use `a` only: `b`, last used by the first
        // write, is dropped by the tenth; `c`, used by the second, stays.
        for i in 3..=10 {
            let run = Cache::open(at.clone());
            assert_eq!(run.get::<u32>(Table::Columns, key("a")), Some(1));
            run.put(Table::Columns, key(&format!("n{i}")), &i);
            run.save().unwrap();
        }
        let last = Cache::open(at);
        assert_eq!(last.get::<u32>(Table::Columns, key("b")), None);
        assert_eq!(last.get::<u32>(Table::Columns, key("c")), Some(3));
        assert_eq!(last.get::<u32>(Table::Columns, key("a")), Some(1));
    }

    #[test]
    fn a_broken_or_foreign_file_is_an_empty_table() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("columns.jsonl"), "{not json").unwrap();
        std::fs::write(
            dir.path().join("time-facts.jsonl"),
            "{\"build\":\"another\",\"generation\":1}\n[\"00000000000000000000000000000001\",1,1]\n",
        )
        .unwrap();
        let c = Cache::open(dir.path().to_path_buf());
        assert_eq!(c.get::<u32>(Table::Columns, key("a")), None);
        assert_eq!(c.get::<u32>(Table::TimeFacts, Key(1)), None);
        // And the run still writes its answers over them.
        c.put(Table::Columns, key("a"), &7u32);
        c.save().unwrap();
        let again = Cache::open(dir.path().to_path_buf());
        assert_eq!(again.get::<u32>(Table::Columns, key("a")), Some(7));
    }

    #[test]
    fn an_answer_is_found_in_the_run_that_worked_it_out() {
        let dir = tempfile::tempdir().unwrap();
        let c = Cache::open(dir.path().to_path_buf());
        c.put(Table::TimeFacts, key("a"), &"x");
        assert_eq!(
            c.get::<String>(Table::TimeFacts, key("a")).as_deref(),
            Some("x")
        );
    }

    #[test]
    fn a_deep_file_is_an_empty_table() {
        // Past serde_json's nesting limit: read as nothing, without a crash.
        let dir = tempfile::tempdir().unwrap();
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        let text = format!(
            "{{\"build\":\"{}\",\"generation\":1}}\n[\"{:032x}\",1,{deep}]\n",
            build(),
            1
        );
        std::fs::write(dir.path().join("columns.jsonl"), text).unwrap();
        let c = Cache::open(dir.path().to_path_buf());
        assert_eq!(c.get::<u32>(Table::Columns, Key(1)), None);
    }

    #[test]
    fn a_broken_line_is_one_answer_missed() {
        let dir = tempfile::tempdir().unwrap();
        let first = Cache::open(dir.path().to_path_buf());
        for (i, k) in ["a", "b", "c"].into_iter().enumerate() {
            first.put(Table::Columns, key(k), &(i as u32));
        }
        first.save().unwrap();
        let path = dir.path().join("columns.jsonl");
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count(), 4, "{text}");
        let b = format!("[\"{}\",1,1]", hex(key("b")));
        assert!(text.contains(&b), "{text}");
        // A torn line, a line of nonsense and a key that is not hex.
        let broken = text.replace(&b, &b[..b.len() - 3])
            + "nonsense\n[\"zz\",1,1]\n[\"00000000000000000000000000000001\",x,1]\n";
        std::fs::write(&path, broken).unwrap();
        let c = Cache::open(dir.path().to_path_buf());
        assert_eq!(c.get::<u32>(Table::Columns, key("a")), Some(0));
        assert_eq!(c.get::<u32>(Table::Columns, key("b")), None);
        assert_eq!(c.get::<u32>(Table::Columns, key("c")), Some(2));
        assert_eq!(c.get::<u32>(Table::Columns, Key(1)), None);
    }

    #[test]
    fn remember_works_once_and_then_reads() {
        let dir = tempfile::tempdir().unwrap();
        let worked = std::cell::Cell::new(0);
        let work = || {
            worked.set(worked.get() + 1);
            7u32
        };
        let first = Cache::open(dir.path().to_path_buf());
        assert_eq!(first.remember(Table::Columns, || key("a"), work), 7);
        first.save().unwrap();
        let second = Cache::open(dir.path().to_path_buf());
        assert_eq!(second.remember(Table::Columns, || key("a"), work), 7);
        assert_eq!(worked.get(), 1);
        assert_eq!(Cache::off().remember(Table::Columns, || key("a"), work), 7);
        assert_eq!(worked.get(), 2);
    }

    #[test]
    fn off_keeps_nothing() {
        let c = Cache::off();
        c.put(Table::Columns, key("a"), &1u32);
        assert_eq!(c.get::<u32>(Table::Columns, key("a")), None);
        c.save().unwrap();
    }
}
