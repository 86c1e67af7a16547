//! The warm cache: answers worked out on an earlier run, kept under a key
//! that hashes everything they depend on, so a re-run after an edit redoes
//! only what the edit can change (docs/cache.md).
//!
//! One file per [`Table`] in the cache folder, a JSON document per line
//! (a header, then one answer a line), read whole the first time the table
//! is asked for, and rewritten only when the run added something. Every
//! file is sealed, written and read through [`store`]: a file written by
//! another build of ripple, short, damaged, or that does not read, is an
//! empty table: the cache can cost a miss, never a wrong answer it was not
//! given.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::hash::Hasher;
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

use serde::Serialize;
use serde::de::DeserializeOwned;
use siphasher::sip128::{Hasher128, SipHasher13};

pub mod inputs;
mod store;

pub use store::{Bytes, Error};

/// The cache folder's name in a project, unless `--cache-dir` says otherwise.
pub const DEFAULT_DIR: &str = ".ripple_cache";

/// The largest table file read (1 GiB); a larger one is an empty table.
const MAX_FILE: u64 = 1 << 30;

/// Bumped by hand when what a table holds changes shape; the build identity
/// below covers every other change of ripple itself.
const FORMAT: u32 = 9;

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
    folder: Option<std::sync::Arc<store::Folder>>,
    /// Why the folder named is not used, for the command to say once.
    refused: Option<Error>,
    tables: [OnceLock<Entries>; Table::ALL.len()],
    /// Why a snapshot could not be written, for [`Cache::save`] to report.
    failed: Mutex<Option<Error>>,
    /// Snapshots being written beside the run, finished by [`Cache::save`]
    /// or when the cache is dropped.
    writing: Mutex<Vec<std::thread::JoinHandle<Result<bool, Error>>>>,
}

impl Drop for Cache {
    fn drop(&mut self) {
        self.finish_writes();
    }
}

impl std::fmt::Debug for Cache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cache")
            .field("folder", &self.folder)
            .field("refused", &self.refused)
            .finish()
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

    /// The cache kept in `dir` (created when first written); no cache,
    /// with the reason kept ([`Cache::refused`]), when `dir` is not a
    /// folder ripple made or the running build cannot be told.
    pub fn open(dir: PathBuf) -> Cache {
        // A relative path's folders are the checkout's: one of them that is
        // a link (a committed `.cache -> ../elsewhere`) would take the
        // cache out of it, as a link at the cache folder itself would.
        let linked = dir
            .is_relative()
            .then(|| {
                // `file_name` is none for `.`, `..` and the empty path.
                dir.ancestors().skip(1).find(|a| {
                    a.file_name().is_some()
                        && std::fs::symlink_metadata(a).is_ok_and(|m| m.file_type().is_symlink())
                })
            })
            .flatten()
            .map(std::path::Path::to_path_buf);
        let opened = match (store::build_id(), linked) {
            (_, Some(path)) => Err(Error::Link { path }),
            (Ok(_), None) => store::Folder::open(dir),
            (Err(e), None) => Err(Error::Build {
                source: std::io::Error::new(e.kind(), e.to_string()),
            }),
        };
        let mut cache = Cache::default();
        match opened {
            Ok(folder) => cache.folder = Some(std::sync::Arc::new(folder)),
            Err(e) => cache.refused = Some(e),
        }
        cache
    }

    /// Why the folder asked for is not used: the run works without a
    /// cache, and says so.
    pub fn refused(&self) -> Option<&Error> {
        self.refused.as_ref()
    }

    /// Whether answers are kept at all.
    pub fn is_on(&self) -> bool {
        self.folder.is_some()
    }

    fn entries(&self, table: Table) -> Option<&Entries> {
        let folder = self.folder.as_ref()?;
        Some(self.tables[table.slot()].get_or_init(|| read_table(folder, table.file())))
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
    /// reader's own format), if the file holds that key from this build,
    /// every byte of it checked.
    pub fn snapshot(&self, name: &str, key: Key) -> Option<Snapshot> {
        let kept = self.snapshot_in_parts(name, key)?;
        kept.bytes.check_all().then_some(kept)
    }

    /// [`Cache::snapshot`] with only its header checked: a reader that uses
    /// a part of a large snapshot checks that part ([`Snapshot::checked`])
    /// before it uses it, and no other.
    pub fn snapshot_in_parts(&self, name: &str, key: Key) -> Option<Snapshot> {
        let folder = self.folder.as_ref()?;
        let file = snapshot_file(name);
        let raw = folder.read(&file, MAX_FILE, true)?;
        let bytes = Bytes::unseal(raw, build(), &file)?;
        let end = memchr::memchr(b'\n', &bytes)?;
        if !bytes.check(0..end + 1) {
            return None;
        }
        let header: SnapshotHeader = serde_json::from_slice(&bytes[..end]).ok()?;
        if header.build != build() || header.key != hex(key) {
            return None;
        }
        Some(Snapshot {
            bytes: std::sync::Arc::new(bytes),
            start: end + 1,
            id: header.id,
        })
    }

    /// What the snapshot `base` (read under `key`) was amended by since it
    /// was written: the body of its edits file, if that file was written
    /// for this very snapshot (its id, so never a stale one).
    pub fn snapshot_edits(&self, name: &str, key: Key, base: &Snapshot) -> Option<Vec<u8>> {
        let (header, mut bytes, start) = self.read_headed::<EditsHeader>(&edits_file(name))?;
        if header.build != build() || header.key != hex(key) || header.base != base.id {
            return None;
        }
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
        let Some(folder) = &self.folder else {
            return;
        };
        let header = EditsHeader {
            build: build().to_string(),
            key: hex(key),
            base: base.id.clone(),
        };
        let written = write_headed(folder, &edits_file(name), &header, |w| {
            body(w).map(|()| true)
        });
        if let Err(e) = written {
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
        let folder = self.folder.as_ref()?;
        let header = SnapshotHeader::of(key);
        match write_whole_snapshot(folder, name, &header, body) {
            Ok(true) => Some(header.id),
            Ok(false) => None,
            Err(e) => {
                self.keep_failure(e);
                None
            }
        }
    }

    /// Keeps a write's failure for [`Cache::save`] (the first one).
    fn keep_failure(&self, e: Error) {
        if let Ok(mut failed) = self.failed.lock() {
            failed.get_or_insert(e);
        }
    }

    /// [`Cache::write_snapshot_unless`] on a thread of its own, so the run
    /// goes on while it is written: for a snapshot made of the one it read,
    /// which the writer owns.
    pub fn write_snapshot_aside(
        &self,
        name: &str,
        key: Key,
        body: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<bool> + Send + 'static,
    ) {
        let Some(folder) = self.folder.clone() else {
            return;
        };
        let header = SnapshotHeader::of(key);
        let file = name.to_string();
        let spawned = std::thread::Builder::new()
            .name("ripple-snapshot".into())
            .spawn(move || write_whole_snapshot(&folder, &file, &header, body));
        match spawned {
            Ok(handle) => match self.writing.lock() {
                Ok(mut writing) => writing.push(handle),
                // A poisoned list cannot be waited on: wait now.
                Err(_) => self.finish(handle),
            },
            Err(e) => self.keep_failure(Error::Io {
                path: PathBuf::from(name),
                source: e,
            }),
        }
    }

    /// Waits for one snapshot writer, keeping its failure.
    fn finish(&self, handle: std::thread::JoinHandle<Result<bool, Error>>) {
        let result = handle.join().unwrap_or_else(|_| {
            Err(Error::Io {
                path: PathBuf::new(),
                source: std::io::Error::other("the snapshot writer stopped"),
            })
        });
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
    pub fn save(&self) -> Result<(), Error> {
        self.finish_writes();
        let Some(folder) = &self.folder else {
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
            write_headed(folder, table.file(), &header, |w| {
                for (k, (last, text)) in &out {
                    // serde_json writes no raw newline: one answer a line.
                    writeln!(w, "[\"{}\",{last},{text}]", hex(*k))?;
                }
                Ok(true)
            })?;
        }
        match self.failed.lock().ok().and_then(|mut f| f.take()) {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// The cache file `name`, read whole and checked, whose first line is
    /// a JSON header: the header, the content, and where the body after
    /// the header starts.
    fn read_headed<H: DeserializeOwned>(&self, name: &str) -> Option<(H, Vec<u8>, usize)> {
        let raw = self.folder.as_ref()?.read(name, MAX_FILE, false)?;
        let bytes = Bytes::unseal(raw, build(), name)?.into_checked_vec()?;
        let end = memchr::memchr(b'\n', &bytes)?;
        let header = serde_json::from_slice(&bytes[..end]).ok()?;
        Some((header, bytes, end + 1))
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
    /// What the reader kept, checked or not (see [`Cache::snapshot_in_parts`]):
    /// to find its parts in, each checked before it is used.
    pub fn body(&self) -> &[u8] {
        &self.bytes[self.start..]
    }

    /// `part`, a part of [`Snapshot::body`], if its bytes are those written.
    pub fn checked<'a>(&self, part: &'a [u8]) -> Option<&'a [u8]> {
        let at = (part.as_ptr() as usize).checked_sub(self.bytes.as_ptr() as usize)?;
        self.bytes
            .check(at..at.checked_add(part.len())?)
            .then_some(part)
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
    folder: &store::Folder,
    name: &str,
    header: &SnapshotHeader,
    body: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<bool>,
) -> Result<bool, Error> {
    if !write_headed(folder, &snapshot_file(name), header, body)? {
        return Ok(false);
    }
    folder.remove(&edits_file(name))?;
    Ok(true)
}

/// Writes `header` as the first line of the file `name`, then what `body`
/// writes, sealed and atomically ([`store::Folder::write`]); the folder is
/// made on first use.
fn write_headed(
    folder: &store::Folder,
    name: &str,
    header: &impl Serialize,
    body: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<bool>,
) -> Result<bool, Error> {
    folder.write(name, build(), |w| {
        // No buffer of its own: the sealer gathers each piece it sums.
        serde_json::to_writer(&mut *w, header).map_err(std::io::Error::other)?;
        w.write_all(b"\n")?;
        body(w)
    })
}

fn hex(k: Key) -> String {
    format!("{:032x}", k.0)
}

/// The first `len` bytes of `file` mapped into memory.
fn map_file(file: &std::fs::File, len: usize) -> Option<store::Raw> {
    if len == 0 {
        return Some(store::Raw::Read(Vec::new()));
    }
    // SAFETY: a mapping is sound while no one changes the file under it.
    // ripple never writes a cache file in place: every write goes to a new
    // file renamed over the old one, so the file mapped here keeps its
    // bytes and length even when a later write replaces it. The folder is
    // its user's alone (mode 1700), so only another program of theirs
    // writing into it could change it (docs/cache.md says not to), as
    // ripgrep maps the files it searches.
    #[allow(unsafe_code)]
    let map = unsafe { memmap2::Mmap::map(file) }.ok()?;
    (map.len() == len).then_some(store::Raw::Mapped(map))
}

/// The table `name` in `folder`; empty when it is missing, unreadable,
/// larger than [`MAX_FILE`], damaged, or written by another build. A line
/// that does not read is an answer missed.
fn read_table(folder: &store::Folder, name: &str) -> Entries {
    let Some(text) = folder
        .read(name, MAX_FILE, false)
        .and_then(|raw| Bytes::unseal(raw, build(), name)?.into_checked_vec())
        .and_then(|b| String::from_utf8(b).ok())
    else {
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

/// This build of ripple: its version, the cache format, and the build id
/// of the running executable ([`store::build_id`]), so that any other
/// build (whose readers may answer differently) starts from an empty
/// cache. Empty when the build cannot be told: no cache is then opened.
fn build() -> &'static str {
    static BUILD: OnceLock<String> = OnceLock::new();
    BUILD.get_or_init(|| match store::build_id() {
        Ok(id) => format!("ripple {} format {FORMAT} {id}", env!("CARGO_PKG_VERSION")),
        Err(_) => String::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn key(s: &str) -> Key {
        KeyBuilder::default().str(s).finish()
    }

    /// A temporary folder, and a cache folder's path in it (not made yet).
    fn fresh() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let at = dir.path().join("c");
        (dir, at)
    }

    /// Writes `text` as the cache file `name` in `at`, sealed as this
    /// build seals it: a file ripple could have written.
    fn plant(at: &Path, name: &str, text: &str) {
        let folder = store::Folder::open(at.to_path_buf()).unwrap();
        let written = folder.write(name, build(), |w| {
            w.write_all(text.as_bytes()).map(|()| true)
        });
        assert!(written.unwrap());
    }

    /// The content of the cache file `name` in `at`, less its seal.
    fn content(at: &Path, name: &str) -> String {
        let raw = store::Folder::open(at.to_path_buf())
            .unwrap()
            .read(name, MAX_FILE, false)
            .unwrap();
        let bytes = Bytes::unseal(raw, build(), name).unwrap();
        String::from_utf8(bytes.into_checked_vec().unwrap()).unwrap()
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
        let (_dir, at) = fresh();
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
        let (_dir, at) = fresh();
        plant(&at, "columns.jsonl", "{not json");
        plant(
            &at,
            "time-facts.jsonl",
            "{\"build\":\"another\",\"generation\":1}\n[\"00000000000000000000000000000001\",1,1]\n",
        );
        let c = Cache::open(at.clone());
        assert_eq!(c.get::<u32>(Table::Columns, key("a")), None);
        assert_eq!(c.get::<u32>(Table::TimeFacts, Key(1)), None);
        // And the run still writes its answers over them.
        c.put(Table::Columns, key("a"), &7u32);
        c.save().unwrap();
        let again = Cache::open(at);
        assert_eq!(again.get::<u32>(Table::Columns, key("a")), Some(7));
    }

    #[test]
    fn a_file_changed_after_it_was_written_is_an_empty_table() {
        let (_dir, at) = fresh();
        let first = Cache::open(at.clone());
        first.put(Table::Columns, key("a"), &1u32);
        first.save().unwrap();
        let path = at.join("columns.jsonl");
        let whole = std::fs::read(&path).unwrap();
        // The answer changed in place, same length: the seal tells.
        let text = String::from_utf8_lossy(&whole).replacen(",1]", ",2]", 1);
        assert_ne!(text.as_bytes(), &whole[..]);
        std::fs::write(&path, text).unwrap();
        assert_eq!(
            Cache::open(at.clone()).get::<u32>(Table::Columns, key("a")),
            None
        );
        // Cut at the end of the answer's line.
        let cut = whole.iter().rposition(|&b| b == b']').unwrap() + 2;
        std::fs::write(&path, &whole[..cut]).unwrap();
        assert_eq!(Cache::open(at).get::<u32>(Table::Columns, key("a")), None);
    }

    #[test]
    fn an_answer_is_found_in_the_run_that_worked_it_out() {
        let (_dir, at) = fresh();
        let c = Cache::open(at);
        c.put(Table::TimeFacts, key("a"), &"x");
        assert_eq!(
            c.get::<String>(Table::TimeFacts, key("a")).as_deref(),
            Some("x")
        );
    }

    #[test]
    fn a_deep_file_is_an_empty_table() {
        // Past serde_json's nesting limit: read as nothing, without a crash.
        let (_dir, at) = fresh();
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        let text = format!(
            "{{\"build\":\"{}\",\"generation\":1}}\n[\"{:032x}\",1,{deep}]\n",
            build(),
            1
        );
        plant(&at, "columns.jsonl", &text);
        let c = Cache::open(at);
        assert_eq!(c.get::<u32>(Table::Columns, Key(1)), None);
    }

    #[test]
    fn a_broken_line_is_one_answer_missed() {
        let (_dir, at) = fresh();
        let first = Cache::open(at.clone());
        for (i, k) in ["a", "b", "c"].into_iter().enumerate() {
            first.put(Table::Columns, key(k), &(i as u32));
        }
        first.save().unwrap();
        let text = content(&at, "columns.jsonl");
        assert_eq!(text.lines().count(), 4, "{text}");
        let b = format!("[\"{}\",1,1]", hex(key("b")));
        assert!(text.contains(&b), "{text}");
        // A torn line, a line of nonsense and a key that is not hex, in a
        // file sealed as ripple seals it.
        let broken = text.replace(&b, &b[..b.len() - 3])
            + "nonsense\n[\"zz\",1,1]\n[\"00000000000000000000000000000001\",x,1]\n";
        plant(&at, "columns.jsonl", &broken);
        let c = Cache::open(at);
        assert_eq!(c.get::<u32>(Table::Columns, key("a")), Some(0));
        assert_eq!(c.get::<u32>(Table::Columns, key("b")), None);
        assert_eq!(c.get::<u32>(Table::Columns, key("c")), Some(2));
        assert_eq!(c.get::<u32>(Table::Columns, Key(1)), None);
    }

    #[test]
    fn remember_works_once_and_then_reads() {
        let (_dir, at) = fresh();
        let worked = std::cell::Cell::new(0);
        let work = || {
            worked.set(worked.get() + 1);
            7u32
        };
        let first = Cache::open(at.clone());
        assert_eq!(first.remember(Table::Columns, || key("a"), work), 7);
        first.save().unwrap();
        let second = Cache::open(at);
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

    #[cfg(unix)]
    #[test]
    fn a_folder_ripple_did_not_make_is_no_cache() {
        let (dir, at) = fresh();
        let link = dir.path().join("link");
        std::fs::create_dir(dir.path().join("elsewhere")).unwrap();
        std::os::unix::fs::symlink(dir.path().join("elsewhere"), &link).unwrap();
        let c = Cache::open(link);
        assert!(!c.is_on());
        assert!(matches!(c.refused(), Some(Error::Link { .. })));
        c.put(Table::Columns, key("a"), &1u32);
        c.save().unwrap();
        assert_eq!(
            std::fs::read_dir(dir.path().join("elsewhere"))
                .unwrap()
                .count(),
            0
        );
        // A plain folder (as a checkout makes one).
        std::fs::create_dir(&at).unwrap();
        let c = Cache::open(at);
        assert!(matches!(c.refused(), Some(Error::NotOurs { .. })));
    }

    #[test]
    fn a_snapshot_is_checked_in_parts_or_whole() {
        let (_dir, at) = fresh();
        let c = Cache::open(at.clone());
        let body = "a".repeat(3 * store::PIECE);
        let id = c.write_snapshot("s", key("k"), |w| w.write_all(body.as_bytes()));
        assert!(id.is_some());
        let whole = c.snapshot("s", key("k")).unwrap();
        assert_eq!(whole.body(), body.as_bytes());
        assert!(c.snapshot("s", key("other")).is_none());
        // One byte changed in the last piece: the whole is refused; in
        // parts, the first pieces check, the last does not.
        let path = at.join("s.snapshot.json");
        let mut bytes = std::fs::read(&path).unwrap();
        let at_end = 3 * store::PIECE;
        bytes[at_end] = b'b';
        std::fs::write(&path, &bytes).unwrap();
        assert!(c.snapshot("s", key("k")).is_none());
        let parts = c.snapshot_in_parts("s", key("k")).unwrap();
        let b = parts.body();
        assert!(parts.checked(&b[..store::PIECE]).is_some());
        assert!(parts.checked(&b[b.len() - 10..]).is_none());
        assert!(parts.checked(b"elsewhere").is_none());
    }
}
