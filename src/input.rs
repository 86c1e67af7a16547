//! Reading input text: files and standard input, checked to be UTF-8 so
//! that a bad byte is reported where it is rather than mangled.

use std::io::Read;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// The label ripple uses for standard input in messages.
pub const STDIN_LABEL: &str = "<stdin>";

/// The largest input ripple reads: ten times the largest dbt manifest seen
/// in the wild, and far beyond any SQL or DAG file. Reading stops here, so
/// `/dev/zero` or a named pipe that never ends is an error, not a hang.
pub const MAX_INPUT_BYTES: u64 = 512 * 1024 * 1024;

/// Reads `path` as UTF-8 text; `-` reads standard input.
pub fn read_text(path: &Path) -> Result<String> {
    read_text_limited(path, MAX_INPUT_BYTES)
}

/// [`read_text`], with the file's metadata as it was opened (before its
/// bytes were read: what the warm cache records, so that a write during the
/// read shows as a change next time).
pub fn read_text_with_metadata(path: &Path) -> (Result<String>, Option<std::fs::Metadata>) {
    let mut meta = None;
    let text = read_limited(path, MAX_INPUT_BYTES, &mut meta);
    (text, meta)
}

/// [`read_text`] with a size limit of `limit` bytes.
pub fn read_text_limited(path: &Path, limit: u64) -> Result<String> {
    read_limited(path, limit, &mut None)
}

fn read_limited(path: &Path, limit: u64, meta: &mut Option<std::fs::Metadata>) -> Result<String> {
    let label = if path == Path::new("-") {
        PathBuf::from(STDIN_LABEL)
    } else {
        path.to_path_buf()
    };
    let io = |source| Error::Io {
        path: label.clone(),
        source,
    };
    let mut bytes = Vec::new();
    if path == Path::new("-") {
        std::io::stdin()
            .take(limit + 1)
            .read_to_end(&mut bytes)
            .map_err(io)?;
    } else {
        let f = open_without_waiting(path).map_err(io)?;
        *meta = f.metadata().ok();
        // A regular file that says it is too large is refused unread (a
        // 600 MB file was read whole, then refused).
        if meta
            .as_ref()
            .is_some_and(|m| m.is_file() && m.len() > limit)
        {
            return Err(Error::TooLarge { path: label, limit });
        }
        Ok(f)
            .and_then(|f| {
                // `take` hides the file's size from `read_to_end`, which then
                // grows the buffer and probes for the end of each of 10,000
                // small files; the size, when the file says it, avoids both.
                let size = meta.as_ref().map_or(0, |m| m.len()).min(limit + 1);
                bytes.reserve_exact(size as usize + 1);
                f.take(limit + 1).read_to_end(&mut bytes)
            })
            .map_err(io)?;
    }
    if bytes.len() as u64 > limit {
        return Err(Error::TooLarge { path: label, limit });
    }
    decode(label, bytes)
}

/// Opens `path` for reading without waiting: opening a named pipe blocks
/// until something writes to it, which may be never (a file replaced by a
/// FIFO hung every command). Opened non-blocking, then read blocking: a
/// pipe with a writer (`<(...)`) reads whole, one without reads empty.
pub fn open_without_waiting(path: &Path) -> std::io::Result<std::fs::File> {
    #[cfg(unix)]
    {
        use rustix::fs::OFlags;
        use std::os::unix::fs::OpenOptionsExt;
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(OFlags::NONBLOCK.bits() as i32)
            .open(path)?;
        let flags = rustix::fs::fcntl_getfl(&file)?;
        rustix::fs::fcntl_setfl(&file, flags - OFlags::NONBLOCK)?;
        Ok(file)
    }
    #[cfg(not(unix))]
    std::fs::File::open(path)
}

/// `bytes` as a string (a UTF-8 byte order mark dropped: editors on
/// Windows write one, and it would glue itself to the first statement), or
/// where its first invalid byte is.
pub fn decode(label: PathBuf, bytes: Vec<u8>) -> Result<String> {
    let bytes = match bytes.strip_prefix("\u{feff}".as_bytes()) {
        Some(rest) => rest.to_vec(),
        None => bytes,
    };
    String::from_utf8(bytes).map_err(|e| {
        let bad = e.utf8_error().valid_up_to();
        let bytes = e.as_bytes();
        let line_start = bytes[..bad]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |p| p + 1);
        Error::NotUtf8 {
            path: label,
            line: bytes[..bad].iter().filter(|&&b| b == b'\n').count() + 1,
            column: bad - line_start + 1,
        }
    })
}

/// The top of the git repository holding `dir` (the nearest folder, `dir`
/// itself or above, with a `.git` folder or file), if any: the boundary a
/// monorepo's settings may reach (`model-paths: ../../sources`).
pub fn repository(dir: &Path) -> Option<&Path> {
    dir.ancestors()
        .find(|d| std::fs::symlink_metadata(d.join(".git")).is_ok())
}

/// Refuses a settings file at `path` (`ripple.yml`, `dbt_project.yml`) of
/// the project at `root` that is a link to a file outside the repository
/// holding the project (or the project, when there is none): a pull request
/// can commit such a link, and ripple would read, and quote in its errors,
/// a file of the machine's.
pub fn settings_inside(root: &Path, path: &Path) -> Result<()> {
    let is_link = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink());
    if !is_link {
        return Ok(());
    }
    let (Ok(real), Ok(real_root)) = (path.canonicalize(), root.canonicalize()) else {
        return Ok(());
    };
    let top = repository(&real_root).unwrap_or(&real_root);
    if real.starts_with(top) {
        return Ok(());
    }
    Err(Error::LinkOutside {
        path: path.to_path_buf(),
        message: format!(
            "it is a link to {}, outside {}; ripple reads settings from the repository's own files only (a pull request could point them anywhere). Put the file itself in the project",
            real.display(),
            if repository(&real_root).is_some() {
                "the repository the project is in"
            } else {
                "the project (which is in no git repository)"
            }
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invalid_utf8_is_located() {
        let err = decode("f.sql".into(), b"select 1;\nselect '\xe9'".to_vec()).unwrap_err();
        match err {
            Error::NotUtf8 { line, column, .. } => assert_eq!((line, column), (2, 9)),
            other => panic!("unexpected {other}"),
        }
    }

    #[test]
    fn endless_input_stops_at_the_limit() {
        let err = read_text_limited(Path::new("/dev/zero"), 1024 * 1024).unwrap_err();
        assert!(matches!(err, Error::TooLarge { .. }), "{err}");
        assert!(err.to_string().contains("/dev/zero"), "{err}");
    }

    #[test]
    fn valid_text_passes_through() {
        assert_eq!(decode("f".into(), "é".as_bytes().to_vec()).unwrap(), "é");
    }
}
