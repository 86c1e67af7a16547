//! The cache folder and its files, as untrusted as any input
//! (docs/cache.md, "Trust").
//!
//! - The folder is one ripple made: a real folder (a link in its place is
//!   refused, never followed), owned by the user running ripple, private
//!   to them and marked with the sticky bit (mode `1700`), which neither
//!   a checkout nor `mkdir` gives a folder. Anything else there is
//!   refused, and the run uses no cache.
//! - Every file is sealed: after its content, the sum of each piece of it
//!   and a last line with its length and a checksum over those sums, the
//!   build that wrote it and the file's name. A file that is short,
//!   damaged, of another build or under another name reads as no file.
//! - Writes go to a new file of an unpredictable name, created exclusively
//!   (never through a link) inside the folder, synced, then renamed over
//!   the old one.

use std::io::Write;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU8, Ordering};

use rayon::prelude::*;

use super::KeyBuilder;

/// Why the cache is not used, or could not be written.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A link where the cache folder should be.
    #[error(
        "{} is a link; ripple never follows one to its cache (a checkout could point it anywhere). Delete it and ripple makes its own folder, or name another with --cache-dir",
        path.display()
    )]
    Link {
        /// The cache folder's path.
        path: PathBuf,
    },
    /// Something other than a folder where the cache folder should be.
    #[error(
        "{} is not a folder, so ripple runs without its cache: name a folder with --cache-dir (ripple makes it), or, if this is a stray file of yours, delete it and ripple makes its folder there",
        path.display()
    )]
    NotAFolder {
        /// The cache folder's path.
        path: PathBuf,
    },
    /// A folder ripple did not make (another owner, or another mode).
    #[error(
        "{} is not a folder ripple made (ripple makes its own, yours alone, mode 1700; this one is mode {mode:o}{owner}). Delete it and ripple makes a new one, or name another with --cache-dir",
        path.display()
    )]
    NotOurs {
        /// The cache folder's path.
        path: PathBuf,
        /// Its mode's permission bits.
        mode: u32,
        /// `, owned by another user` when it is.
        owner: &'static str,
    },
    /// The file system refused.
    #[error("{}: {}", path.display(), crate::text::io_reason(source))]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// The running executable could not be read to tell its build.
    #[error(
        "the running executable could not be read to tell which build of ripple this is ({})",
        crate::text::io_reason(source)
    )]
    Build {
        /// What the system said.
        source: std::io::Error,
    },
}

/// The mode ripple gives its folder: its user's alone, and sticky, which
/// no checkout gives a folder (git makes folders `0777` less the umask,
/// never sticky), so a folder of that name committed to a project is not
/// taken for ripple's.
const FOLDER_MODE: u32 = 0o1700;

/// The cache folder: missing until the first write makes it, open, or
/// refused.
pub(super) struct Folder {
    path: PathBuf,
    state: Mutex<State>,
}

enum State {
    /// Not there: made by the first write.
    Absent,
    Open(sys::Dir),
    /// Could not be made (the first failure, reported once).
    Failed,
}

impl std::fmt::Debug for Folder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Folder").field("path", &self.path).finish()
    }
}

impl Folder {
    /// The folder at `path`, if it is absent or one ripple made.
    pub(super) fn open(path: PathBuf) -> Result<Folder, Error> {
        let state = match sys::open_dir(&path)? {
            Some(dir) => State::Open(dir),
            None => State::Absent,
        };
        Ok(Folder {
            path,
            state: Mutex::new(state),
        })
    }

    /// The file `name`'s bytes, when it is there and a regular file no
    /// larger than `max`; mapped when `map`.
    pub(super) fn read(&self, name: &str, max: u64, map: bool) -> Option<Raw> {
        let file = {
            let state = self.state.lock().ok()?;
            let State::Open(dir) = &*state else {
                return None;
            };
            sys::open_file(dir, name).ok()?
        };
        let meta = file.metadata().ok()?;
        if !meta.is_file() || meta.len() > max {
            return None;
        }
        let len = usize::try_from(meta.len()).ok()?;
        match map {
            true => super::map_file(&file, len),
            false => read_whole(&file, len).ok().map(Raw::Read),
        }
    }

    /// Writes `name` whole, sealed for `build`: `body` writes the content
    /// into a new file no one can have named beforehand, which is synced
    /// and renamed over the old one. A reader (or a second ripple at
    /// once) sees the old file or the new, never half of one. `Ok(false)`
    /// from `body` gives up, leaving the old file as it was.
    pub(super) fn write(
        &self,
        name: &str,
        build: &str,
        body: impl FnOnce(&mut dyn Write) -> std::io::Result<bool>,
    ) -> Result<bool, Error> {
        let io = |source| Error::Io {
            path: self.path.clone(),
            source,
        };
        let mut state = self.state.lock().map_err(|_| io(poisoned()))?;
        if matches!(*state, State::Absent) {
            match self.make() {
                Ok(dir) => *state = State::Open(dir),
                Err(e) => {
                    *state = State::Failed;
                    return Err(e);
                }
            }
        }
        let State::Open(dir) = &*state else {
            return Err(io(std::io::Error::other("the folder could not be made")));
        };
        let tmp = format!(".{name}.{:016x}.tmp", unpredictable());
        // Listed while it exists: a signal (a CI timeout, `ulimit -f`)
        // mid-write would leave it in the cache for good.
        crate::leftovers::watch_signals();
        let mut live = crate::leftovers::lock();
        let file = sys::create_file(dir, &tmp).map_err(io)?;
        let _listed = crate::leftovers::list(&mut live, &self.path.join(&tmp));
        drop(live);
        // The folder stays locked only while the file is made: the body
        // (a whole snapshot) is written beside other writes.
        let dir = sys::share(dir).map_err(io)?;
        drop(state);
        let written = (|| {
            let mut sealer = Sealer::new(file);
            if !body(&mut sealer)? {
                return Ok(false);
            }
            let file = sealer.finish(build, name)?;
            file.sync_data()?;
            if let Err(e) = sys::rename(&dir, &tmp, name) {
                // A folder in the file's place: gone when empty, else named,
                // so that not every later run fails the same way unsaid.
                if sys::remove_empty_folder(&dir, name).is_err() {
                    return Err(std::io::Error::new(
                        e.kind(),
                        format!("{e}; a folder is in the place of this cache file: remove it"),
                    ));
                }
                sys::rename(&dir, &tmp, name)?;
            }
            Ok(true)
        })();
        if !matches!(written, Ok(true)) {
            let _ = sys::remove(&dir, &tmp);
        }
        // Past its making, what fails is the named file's (a folder in its
        // place stops the rename): the message names that file.
        written.map_err(|source| Error::Io {
            path: self.path.join(name),
            source,
        })
    }

    /// Removes `name`, if it is there.
    pub(super) fn remove(&self, name: &str) -> Result<(), Error> {
        let state = self.state.lock().map_err(|_| Error::Io {
            path: self.path.clone(),
            source: poisoned(),
        })?;
        let State::Open(dir) = &*state else {
            return Ok(());
        };
        match sys::remove(dir, name) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(Error::Io {
                path: self.path.join(name),
                source: e,
            }),
            _ => Ok(()),
        }
    }

    /// Makes the folder (its parents as any folder), with ripple's mode,
    /// and the files that keep git and backups out of it.
    fn make(&self) -> Result<sys::Dir, Error> {
        let io = |source| Error::Io {
            path: self.path.clone(),
            source,
        };
        if let Some(parent) = self.path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(io)?;
        }
        let dir = match sys::make_dir(&self.path) {
            Ok(dir) => dir,
            // Made by another ripple at the same time: used if it is ours.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                return match sys::open_dir(&self.path)? {
                    Some(dir) => Ok(dir),
                    None => Err(io(e)),
                };
            }
            Err(e) => return Err(io(e)),
        };
        for (name, text) in [
            (".gitignore", "# ripple's cache (docs/cache.md)\n*\n"),
            (
                "CACHEDIR.TAG",
                "Signature: 8a477f597d28d172789f06886806bc55\n# ripple's cache (docs/cache.md)\n",
            ),
        ] {
            let mut f = sys::create_file(&dir, name).map_err(io)?;
            f.write_all(text.as_bytes()).map_err(io)?;
        }
        Ok(dir)
    }
}

fn poisoned() -> std::io::Error {
    std::io::Error::other("a cache write stopped")
}

/// 64 bits no other process can guess: std's hash keys come from the
/// system's randomness, and each new state takes new ones.
fn unpredictable() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    static WRITES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(WRITES.fetch_add(1, Ordering::Relaxed));
    h.write_u32(std::process::id());
    h.finish()
}

/// A file's bytes as read: mapped (a snapshot) or in memory.
pub(super) enum Raw {
    Mapped(memmap2::Mmap),
    Read(Vec<u8>),
}

impl std::ops::Deref for Raw {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Raw::Mapped(m) => m,
            Raw::Read(v) => v,
        }
    }
}

/// A sealed file is checked a piece at a time, so a run that uses a part
/// of a large file (the head of a 30 MB snapshot) checks that part alone.
pub(super) const PIECE: usize = 256 << 10;

/// The last line of a sealed file: `ripple-cache <length> <checksum>`.
const LAST: usize = "ripple-cache ".len() + 16 + 1 + 32 + 1;

/// The sum of one piece: rustc-hash's, about 20 GB/s on one core.
fn piece_sum(piece: &[u8]) -> u64 {
    use std::hash::Hasher;
    let mut h = rustc_hash::FxHasher::default();
    h.write(piece);
    h.finish()
}

/// The checksum of a file of `len` bytes whose pieces have `sums`, written
/// by `build` as `name`: a file of another build, or renamed, fails it.
fn seal_sum(build: &str, name: &str, len: u64, sums: &[u64]) -> u128 {
    let mut k = KeyBuilder::default();
    k.str("ripple cache file").str(build).str(name).u64(len);
    for s in sums {
        k.u64(*s);
    }
    k.finish().0
}

/// Writes the content, summing each piece, then the seal.
struct Sealer {
    file: std::fs::File,
    piece: Vec<u8>,
    sums: Vec<u64>,
    len: u64,
}

impl Sealer {
    fn new(file: std::fs::File) -> Sealer {
        Sealer {
            file,
            piece: Vec::with_capacity(PIECE),
            sums: Vec::new(),
            len: 0,
        }
    }

    fn flush_piece(&mut self) -> std::io::Result<()> {
        if self.piece.is_empty() {
            return Ok(());
        }
        self.sums.push(piece_sum(&self.piece));
        self.len += self.piece.len() as u64;
        self.file.write_all(&self.piece)?;
        self.piece.clear();
        Ok(())
    }

    /// The seal after the content; the file, to be synced.
    fn finish(mut self, build: &str, name: &str) -> std::io::Result<std::fs::File> {
        self.flush_piece()?;
        let mut seal = String::with_capacity(self.sums.len() * 16 + 1 + LAST);
        for s in &self.sums {
            seal.push_str(&format!("{s:016x}"));
        }
        seal.push('\n');
        let sum = seal_sum(build, name, self.len, &self.sums);
        seal.push_str(&format!("ripple-cache {:016x} {sum:032x}\n", self.len));
        self.file.write_all(seal.as_bytes())?;
        Ok(self.file)
    }
}

impl Write for Sealer {
    fn write(&mut self, mut buf: &[u8]) -> std::io::Result<usize> {
        let n = buf.len();
        while !buf.is_empty() {
            let take = (PIECE - self.piece.len()).min(buf.len());
            self.piece.extend_from_slice(&buf[..take]);
            buf = &buf[take..];
            if self.piece.len() == PIECE {
                self.flush_piece()?;
            }
        }
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A cache file's content, its seal read and the seal's checksum right:
/// each piece is checked against its sum before it is used
/// ([`Bytes::check`]), once.
pub struct Bytes {
    raw: Raw,
    len: usize,
    sums: Vec<u64>,
    /// Per piece: 0 not checked yet, 1 as written, 2 damaged.
    checked: Vec<AtomicU8>,
}

impl Bytes {
    /// `raw` unsealed: `None` when its seal does not read, or is not that
    /// of a file `name` written by `build` and as long as this one.
    pub(super) fn unseal(raw: Raw, build: &str, name: &str) -> Option<Bytes> {
        let total = raw.len();
        let last = raw.get(total.checked_sub(LAST)?..)?;
        let last = std::str::from_utf8(last).ok()?;
        let rest = last.strip_prefix("ripple-cache ")?.strip_suffix('\n')?;
        let (len, sum) = rest.split_once(' ')?;
        let len = usize::try_from(u64::from_str_radix(len, 16).ok()?).ok()?;
        let sum = u128::from_str_radix(sum, 16).ok()?;
        let pieces = len.div_ceil(PIECE);
        let sums_end = len.checked_add(pieces.checked_mul(16)?)?;
        if sums_end.checked_add(1 + LAST)? != total || raw[sums_end] != b'\n' {
            return None;
        }
        let sums = std::str::from_utf8(&raw[len..sums_end]).ok()?;
        let sums: Vec<u64> = (0..pieces)
            .map(|i| u64::from_str_radix(sums.get(i * 16..i * 16 + 16)?, 16).ok())
            .collect::<Option<_>>()?;
        if seal_sum(build, name, len as u64, &sums) != sum {
            return None;
        }
        Some(Bytes {
            checked: (0..pieces).map(|_| AtomicU8::new(0)).collect(),
            raw,
            len,
            sums,
        })
    }

    /// Whether the bytes at `range` are those written (their pieces'
    /// sums are the seal's); `false` out of bounds.
    pub fn check(&self, range: Range<usize>) -> bool {
        if range.start > range.end || range.end > self.len {
            return false;
        }
        if range.is_empty() {
            return true;
        }
        (range.start / PIECE..=(range.end - 1) / PIECE).all(|i| self.piece_ok(i))
    }

    /// Whether every byte is as written, checked on every core.
    pub fn check_all(&self) -> bool {
        (0..self.sums.len())
            .into_par_iter()
            .all(|i| self.piece_ok(i))
    }

    fn piece_ok(&self, i: usize) -> bool {
        match self.checked[i].load(Ordering::Relaxed) {
            1 => true,
            2 => false,
            _ => {
                let piece = &self.raw[i * PIECE..((i + 1) * PIECE).min(self.len)];
                let ok = piece_sum(piece) == self.sums[i];
                self.checked[i].store(if ok { 1 } else { 2 }, Ordering::Relaxed);
                ok
            }
        }
    }

    /// The content, checked whole: `None` when a piece is damaged.
    pub(super) fn into_checked_vec(self) -> Option<Vec<u8>> {
        if !self.check_all() {
            return None;
        }
        let len = self.len;
        match self.raw {
            Raw::Read(mut v) => {
                v.truncate(len);
                Some(v)
            }
            Raw::Mapped(m) => Some(m[..len].to_vec()),
        }
    }
}

impl std::ops::Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.raw[..self.len]
    }
}

impl std::fmt::Debug for Bytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Bytes({} bytes)", self.len)
    }
}

/// The first `len` bytes of `file`, a large file in pieces on every core:
/// most of a warm run's read is the kernel faulting in the new buffer's
/// pages, one core at a time when read in one call.
#[cfg(unix)]
pub(super) fn read_whole(file: &std::fs::File, len: usize) -> std::io::Result<Vec<u8>> {
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
pub(super) fn read_whole(file: &std::fs::File, len: usize) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut bytes = Vec::with_capacity(len);
    file.take(len as u64).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Files up to this size are read in one piece.
#[cfg(unix)]
const READ_PIECE: usize = 4 << 20;

/// Which build of ripple is running: the linker's build id (a hash of the
/// executable it wrote) when the executable has one, else a hash of the
/// executable's bytes. Read once per run.
pub(super) fn build_id() -> Result<&'static str, &'static std::io::Error> {
    static ID: std::sync::OnceLock<std::io::Result<String>> = std::sync::OnceLock::new();
    ID.get_or_init(|| {
        // The image this process runs, even if its path was replaced since.
        #[cfg(target_os = "linux")]
        let exe = PathBuf::from("/proc/self/exe");
        #[cfg(not(target_os = "linux"))]
        let exe = std::env::current_exe()?;
        build_id_of(&exe)
    })
    .as_ref()
    .map(String::as_str)
}

/// [`build_id`] of the executable at `path`.
fn build_id_of(path: &Path) -> std::io::Result<String> {
    let file = std::fs::File::open(path)?;
    #[cfg(unix)]
    if let Some(id) = gnu_build_id(&file) {
        let hex: String = id.iter().map(|b| format!("{b:02x}")).collect();
        return Ok(format!("gnu {hex}"));
    }
    let len = usize::try_from(file.metadata()?.len()).map_err(std::io::Error::other)?;
    let bytes = read_whole(&file, len)?;
    let sums: Vec<u64> = bytes.par_chunks(PIECE).map(piece_sum).collect();
    Ok(format!(
        "bytes {:032x}",
        seal_sum("", "executable", len as u64, &sums)
    ))
}

/// The GNU build id note of the ELF executable `file`, if it has one.
#[cfg(unix)]
fn gnu_build_id(file: &std::fs::File) -> Option<Vec<u8>> {
    use std::os::unix::fs::FileExt;
    let read = |at: u64, len: usize| -> Option<Vec<u8>> {
        let mut b = vec![0u8; len];
        file.read_exact_at(&mut b, at).ok()?;
        Some(b)
    };
    let head = read(0, 64)?;
    if head[..4] != *b"\x7fELF" {
        return None;
    }
    let wide = match head[4] {
        1 => false,
        2 => true,
        _ => return None,
    };
    let big = match head[5] {
        1 => false,
        2 => true,
        _ => return None,
    };
    let n = |b: &[u8], at: usize, size: usize| -> Option<u64> {
        let b = b.get(at..at + size)?;
        Some(b.iter().enumerate().fold(0u64, |acc, (i, &x)| {
            let shift = 8 * if big { size - 1 - i } else { i };
            acc | (u64::from(x) << shift)
        }))
    };
    let (phoff, entsize, count) = match wide {
        true => (n(&head, 0x20, 8)?, n(&head, 0x36, 2)?, n(&head, 0x38, 2)?),
        false => (n(&head, 0x1c, 4)?, n(&head, 0x2a, 2)?, n(&head, 0x2c, 2)?),
    };
    let table = read(phoff, usize::try_from(entsize * count).ok()?)?;
    for entry in table.chunks(usize::try_from(entsize).ok()?.max(1)) {
        const PT_NOTE: u64 = 4;
        if n(entry, 0, 4)? != PT_NOTE {
            continue;
        }
        let (offset, size) = match wide {
            true => (n(entry, 8, 8)?, n(entry, 32, 8)?),
            false => (n(entry, 4, 4)?, n(entry, 16, 4)?),
        };
        // A note segment is a few hundred bytes; a larger one is no note.
        let notes = read(offset, usize::try_from(size.min(1 << 16)).ok()?)?;
        let mut at = 0usize;
        while at + 12 <= notes.len() {
            let name_len = usize::try_from(n(&notes, at, 4)?).ok()?;
            let desc_len = usize::try_from(n(&notes, at + 4, 4)?).ok()?;
            const NT_GNU_BUILD_ID: u64 = 3;
            let kind = n(&notes, at + 8, 4)?;
            let name_at = at + 12;
            let desc_at = name_at.checked_add(name_len.next_multiple_of(4))?;
            let end = desc_at.checked_add(desc_len.next_multiple_of(4))?;
            let name = notes.get(name_at..name_at + name_len)?;
            let desc = notes.get(desc_at..desc_at + desc_len)?;
            if kind == NT_GNU_BUILD_ID && name == b"GNU\0" && !desc.is_empty() {
                return Some(desc.to_vec());
            }
            at = end;
        }
    }
    None
}

/// The folder and its files through a handle on the folder: every file is
/// opened relative to it without following a link, so nothing swapped in
/// on the way is ever followed.
#[cfg(target_os = "linux")]
mod sys {
    use std::os::fd::OwnedFd;
    use std::path::Path;

    use rustix::fs::{AtFlags, CWD, Mode, OFlags};
    use rustix::io::Errno;

    use super::{Error, FOLDER_MODE};

    pub(super) type Dir = OwnedFd;

    /// The folder at `path`: `None` when it is not there.
    pub(super) fn open_dir(path: &Path) -> Result<Option<Dir>, Error> {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let dir = match rustix::fs::open(path, flags, Mode::empty()) {
            Ok(dir) => dir,
            Err(Errno::NOENT) => return Ok(None),
            Err(Errno::LOOP | Errno::NOTDIR) => {
                let link = rustix::fs::statat(CWD, path, AtFlags::SYMLINK_NOFOLLOW)
                    .is_ok_and(|s| s.st_mode & 0o170000 == 0o120000);
                let path = path.to_path_buf();
                return Err(match link {
                    true => Error::Link { path },
                    false => Error::NotAFolder { path },
                });
            }
            Err(e) => {
                return Err(Error::Io {
                    path: path.to_path_buf(),
                    source: e.into(),
                });
            }
        };
        let stat = rustix::fs::fstat(&dir).map_err(|e| Error::Io {
            path: path.to_path_buf(),
            source: e.into(),
        })?;
        let mode = stat.st_mode & 0o7777;
        let ours = stat.st_uid == rustix::process::geteuid().as_raw();
        if mode != FOLDER_MODE || !ours {
            return Err(Error::NotOurs {
                path: path.to_path_buf(),
                mode,
                owner: if ours { "" } else { ", owned by another user" },
            });
        }
        Ok(Some(dir))
    }

    /// Makes the folder `path` with ripple's mode (whatever the umask).
    pub(super) fn make_dir(path: &Path) -> std::io::Result<Dir> {
        rustix::fs::mkdirat(CWD, path, Mode::from_raw_mode(FOLDER_MODE))?;
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let dir = rustix::fs::open(path, flags, Mode::empty())?;
        rustix::fs::fchmod(&dir, Mode::from_raw_mode(FOLDER_MODE))?;
        Ok(dir)
    }

    /// Another handle on the folder, for a write that outlives its lock.
    pub(super) fn share(dir: &Dir) -> std::io::Result<Dir> {
        dir.try_clone()
    }

    /// The file `name` in the folder, opened for reading if it is no link
    /// (a FIFO does not block: it is then found not to be a file).
    pub(super) fn open_file(dir: &Dir, name: &str) -> std::io::Result<std::fs::File> {
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK;
        Ok(rustix::fs::openat(dir, name, flags, Mode::empty())?.into())
    }

    /// A new file `name`, made by this call (never an existing file, nor
    /// through a link), readable by its user alone.
    pub(super) fn create_file(dir: &Dir, name: &str) -> std::io::Result<std::fs::File> {
        let flags =
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        Ok(rustix::fs::openat(dir, name, flags, Mode::from_raw_mode(0o600))?.into())
    }

    pub(super) fn rename(dir: &Dir, from: &str, to: &str) -> std::io::Result<()> {
        Ok(rustix::fs::renameat(dir, from, dir, to)?)
    }

    pub(super) fn remove(dir: &Dir, name: &str) -> std::io::Result<()> {
        Ok(rustix::fs::unlinkat(dir, name, AtFlags::empty())?)
    }

    /// Removes the folder `name` when it is empty.
    pub(super) fn remove_empty_folder(dir: &Dir, name: &str) -> std::io::Result<()> {
        Ok(rustix::fs::unlinkat(dir, name, AtFlags::REMOVEDIR)?)
    }
}

/// The folder and its files by path, each checked not to be a link before
/// it is used: without a handle on the folder, a link swapped in between
/// the check and the use would be followed, which on Linux cannot happen.
#[cfg(not(target_os = "linux"))]
mod sys {
    use std::path::{Path, PathBuf};

    use super::{Error, FOLDER_MODE};

    pub(super) type Dir = PathBuf;

    pub(super) fn open_dir(path: &Path) -> Result<Option<Dir>, Error> {
        let meta = match std::fs::symlink_metadata(path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => {
                return Err(Error::Io {
                    path: path.to_path_buf(),
                    source: e,
                });
            }
        };
        let path = path.to_path_buf();
        if meta.file_type().is_symlink() {
            return Err(Error::Link { path });
        }
        if !meta.is_dir() {
            return Err(Error::NotAFolder { path });
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = meta.permissions().mode() & 0o7777;
            if mode != FOLDER_MODE {
                return Err(Error::NotOurs {
                    path,
                    mode,
                    owner: "",
                });
            }
        }
        let _ = FOLDER_MODE;
        Ok(Some(path))
    }

    pub(super) fn make_dir(path: &Path) -> std::io::Result<Dir> {
        let mut builder = std::fs::DirBuilder::new();
        #[cfg(unix)]
        {
            use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
            builder.mode(FOLDER_MODE);
            builder.create(path)?;
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(FOLDER_MODE))?;
        }
        #[cfg(not(unix))]
        builder.create(path)?;
        Ok(path.to_path_buf())
    }

    pub(super) fn share(dir: &Dir) -> std::io::Result<Dir> {
        Ok(dir.clone())
    }

    pub(super) fn open_file(dir: &Dir, name: &str) -> std::io::Result<std::fs::File> {
        let path = dir.join(name);
        if std::fs::symlink_metadata(&path)?.file_type().is_symlink() {
            return Err(std::io::Error::other("a link"));
        }
        std::fs::File::open(path)
    }

    pub(super) fn create_file(dir: &Dir, name: &str) -> std::io::Result<std::fs::File> {
        let mut options = std::fs::OpenOptions::new();
        // Exclusive creation fails on a link as on any existing name.
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        options.open(dir.join(name))
    }

    pub(super) fn rename(dir: &Dir, from: &str, to: &str) -> std::io::Result<()> {
        std::fs::rename(dir.join(from), dir.join(to))
    }

    pub(super) fn remove(dir: &Dir, name: &str) -> std::io::Result<()> {
        std::fs::remove_file(dir.join(name))
    }

    /// Removes the folder `name` when it is empty.
    pub(super) fn remove_empty_folder(dir: &Dir, name: &str) -> std::io::Result<()> {
        std::fs::remove_dir(dir.join(name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn folder(path: &Path) -> Folder {
        Folder::open(path.to_path_buf()).unwrap()
    }

    fn write(f: &Folder, name: &str, text: &[u8]) {
        assert!(
            f.write(name, "b1", |w| w.write_all(text).map(|()| true))
                .unwrap()
        );
    }

    fn read(f: &Folder, name: &str, build: &str) -> Option<Vec<u8>> {
        let raw = f.read(name, 1 << 30, false)?;
        Bytes::unseal(raw, build, name)?.into_checked_vec()
    }

    #[test]
    fn a_sealed_file_reads_back_and_any_damage_is_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let f = folder(&dir.path().join("c"));
        // Three pieces and a bit, so that every piece boundary is crossed.
        let text: Vec<u8> = (0..3 * PIECE + 77).map(|i| (i * 7 % 251) as u8).collect();
        write(&f, "t", &text);
        assert_eq!(read(&f, "t", "b1").as_deref(), Some(&text[..]));
        // Another build, or the file under another name, is no file.
        assert_eq!(read(&f, "t", "b2"), None);
        let path = dir.path().join("c/t");
        std::fs::copy(&path, dir.path().join("c/u")).unwrap();
        assert_eq!(read(&f, "u", "b1"), None);
        let whole = std::fs::read(&path).unwrap();
        // Cut anywhere: at every line end, and a byte short.
        let mut cuts: Vec<usize> = (0..whole.len())
            .filter(|&i| whole[i] == b'\n')
            .map(|i| i + 1)
            .collect();
        cuts.extend([0, 1, whole.len() - 1, PIECE, text.len()]);
        for cut in cuts.into_iter().filter(|&c| c < whole.len()) {
            std::fs::write(&path, &whole[..cut]).unwrap();
            assert_eq!(read(&f, "t", "b1"), None, "cut at {cut}");
        }
        // One byte changed anywhere: in a piece, in the sums, in the seal.
        for at in [
            0,
            PIECE + 3,
            text.len() - 1,
            text.len() + 5,
            whole.len() - 2,
        ] {
            let mut bad = whole.clone();
            bad[at] ^= 1;
            std::fs::write(&path, &bad).unwrap();
            assert_eq!(read(&f, "t", "b1"), None, "byte {at}");
        }
        // Damage in one piece: the others still check, that one does not.
        let mut bad = whole.clone();
        bad[2 * PIECE + 1] ^= 1;
        std::fs::write(&path, &bad).unwrap();
        let raw = f.read("t", 1 << 30, true).unwrap();
        let b = Bytes::unseal(raw, "b1", "t").unwrap();
        assert!(b.check(0..2 * PIECE));
        assert!(!b.check(2 * PIECE..2 * PIECE + 2));
        assert!(!b.check(10..2 * PIECE + 2));
        assert!(!b.check_all());
        assert!(!b.check(0..text.len() + 1), "past the end");
        // An empty file seals too.
        write(&f, "e", b"");
        assert_eq!(read(&f, "e", "b1").as_deref(), Some(&b""[..]));
    }

    #[cfg(unix)]
    #[test]
    fn the_folder_is_made_private_and_a_link_or_another_folder_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let at = dir.path().join("deep/c");
        let f = folder(&at);
        assert!(f.read("t", 1 << 30, false).is_none(), "made by writes only");
        assert!(!at.exists());
        write(&f, "t", b"x");
        let mode = std::fs::metadata(&at).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode, FOLDER_MODE);
        let file = std::fs::metadata(at.join("t"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(file & 0o777, 0o600);
        assert!(at.join(".gitignore").is_file());
        assert!(folder(&at).read("t", 1 << 30, false).is_some());

        // A link to it is refused, and so is a folder of another mode.
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&at, &link).unwrap();
        assert!(matches!(Folder::open(link), Err(Error::Link { .. })));
        let plain = dir.path().join("plain");
        std::fs::create_dir(&plain).unwrap();
        std::fs::set_permissions(&plain, std::fs::Permissions::from_mode(0o700)).unwrap();
        assert!(matches!(
            Folder::open(plain),
            Err(Error::NotOurs { mode: 0o700, .. })
        ));
        let file = dir.path().join("file");
        std::fs::write(&file, "").unwrap();
        assert!(matches!(Folder::open(file), Err(Error::NotAFolder { .. })));
    }

    #[cfg(unix)]
    #[test]
    fn a_link_in_the_folder_is_never_followed() {
        let dir = tempfile::tempdir().unwrap();
        let at = dir.path().join("c");
        let f = folder(&at);
        write(&f, "t", b"kept");
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        // A link at a file's name: read as no file, replaced by a write.
        std::fs::remove_file(at.join("t")).unwrap();
        std::os::unix::fs::symlink(&victim, at.join("t")).unwrap();
        assert!(f.read("t", 1 << 30, false).is_none());
        write(&f, "t", b"new");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        assert!(
            !std::fs::symlink_metadata(at.join("t"))
                .unwrap()
                .is_symlink()
        );
        assert_eq!(read(&f, "t", "b1").as_deref(), Some(&b"new"[..]));
        // No temporary file is left, and none has a name known beforehand.
        let names: Vec<String> = std::fs::read_dir(&at)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(names.iter().all(|n| !n.ends_with(".tmp")), "{names:?}");
    }

    #[test]
    fn a_folder_in_a_file_s_place_is_named_in_the_error() {
        let dir = tempfile::tempdir().unwrap();
        let at = dir.path().join("c");
        let f = folder(&at);
        write(&f, "t", b"x");
        std::fs::create_dir(at.join("columns.jsonl")).unwrap();
        std::fs::write(at.join("columns.jsonl/x"), "x").unwrap();
        let e = f
            .write("columns.jsonl", "b1", |w| w.write_all(b"y").map(|()| true))
            .unwrap_err()
            .to_string();
        assert!(e.contains("c/columns.jsonl"), "{e}");
        assert!(e.contains("remove it"), "{e}");
        // An empty folder there is taken away: the file is written (each
        // later run once warned again).
        std::fs::create_dir(at.join("time-facts.jsonl")).unwrap();
        assert!(
            f.write("time-facts.jsonl", "b1", |w| w
                .write_all(b"y")
                .map(|()| true))
                .unwrap()
        );
        assert!(at.join("time-facts.jsonl").is_file());
        let names: Vec<String> = std::fs::read_dir(&at)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".tmp"))
            .collect();
        assert!(names.is_empty(), "{names:?}");
    }

    #[test]
    fn temporary_names_are_not_predictable() {
        let a = unpredictable();
        let b = unpredictable();
        assert_ne!(a, b);
    }

    #[test]
    fn two_executables_of_one_size_and_time_are_two_builds() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::write(&a, b"one build").unwrap();
        std::fs::write(&b, b"two build").unwrap();
        let when = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1);
        for p in [&a, &b] {
            let f = std::fs::File::options().write(true).open(p).unwrap();
            f.set_modified(when).unwrap();
        }
        assert_ne!(build_id_of(&a).unwrap(), build_id_of(&b).unwrap());
        assert_eq!(build_id_of(&a).unwrap(), build_id_of(&a).unwrap());
    }

    /// A minimal 64-bit little-endian ELF file: its header, one note
    /// segment, and the notes.
    #[cfg(unix)]
    fn elf_with_note(id: &[u8]) -> Vec<u8> {
        let mut f = vec![0u8; 64 + 56];
        f[..4].copy_from_slice(b"\x7fELF");
        f[4] = 2;
        f[5] = 1;
        f[0x20..0x28].copy_from_slice(&64u64.to_le_bytes());
        f[0x36..0x38].copy_from_slice(&56u16.to_le_bytes());
        f[0x38..0x3a].copy_from_slice(&1u16.to_le_bytes());
        let mut notes = Vec::new();
        // An ABI tag first, as linkers write it, then the build id.
        for (kind, name, desc) in [(1u32, &b"GNU\0"[..], &[0u8; 16][..]), (3, b"GNU\0", id)] {
            notes.extend((name.len() as u32).to_le_bytes());
            notes.extend((desc.len() as u32).to_le_bytes());
            notes.extend(kind.to_le_bytes());
            notes.extend(name);
            notes.extend(desc);
            notes.resize(notes.len().next_multiple_of(4), 0);
        }
        let ph = 64;
        f[ph..ph + 4].copy_from_slice(&4u32.to_le_bytes());
        let notes_at = f.len() as u64;
        f[ph + 8..ph + 16].copy_from_slice(&notes_at.to_le_bytes());
        f[ph + 32..ph + 40].copy_from_slice(&(notes.len() as u64).to_le_bytes());
        f.extend(notes);
        f
    }

    #[cfg(unix)]
    #[test]
    fn the_linkers_build_id_names_the_build() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        std::fs::write(&a, elf_with_note(&[0xab, 0xcd, 0xef])).unwrap();
        assert_eq!(build_id_of(&a).unwrap(), "gnu abcdef");
        // A cut header, or notes past the file's end: its bytes' hash.
        let whole = std::fs::read(&a).unwrap();
        std::fs::write(&a, &whole[..whole.len() - 4]).unwrap();
        assert!(build_id_of(&a).unwrap().starts_with("bytes "));
        std::fs::write(&a, &whole[..40]).unwrap();
        assert!(build_id_of(&a).unwrap().starts_with("bytes "));
        // This very test binary has one when its linker writes one.
        assert!(build_id().is_ok());
    }
}
