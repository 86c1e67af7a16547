//! The library's error type. Problems inside the analysed SQL are not errors
//! of this kind: they are findings, reported next to the results
//! (see [`crate::sql::StatementError`]).

use std::path::PathBuf;

/// What can stop ripple from reading its input at all.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A dialect name that ripple does not know.
    #[error("unknown dialect '{name}'; use one of: {valid}")]
    UnknownDialect {
        /// The name as given.
        name: String,
        /// The accepted names, comma-separated.
        valid: String,
    },
    /// An input file that is not UTF-8 text.
    /// An input larger than ripple reads.
    #[error(
        "{}: larger than {} MiB; ripple reads no input this large (is it the right file? `/dev/zero` or a data dump would never end)",
        path.display(),
        limit / (1024 * 1024)
    )]
    TooLarge {
        /// The file (or `<stdin>`).
        path: PathBuf,
        /// The limit in bytes.
        limit: u64,
    },
    #[error(
        "{}: not UTF-8 text (first bad byte at line {line}, column {column}); convert it first, e.g. `iconv -f latin1 -t utf-8`",
        path.display()
    )]
    NotUtf8 {
        /// The file (or `<stdin>`).
        path: PathBuf,
        /// 1-based line of the first invalid byte.
        line: usize,
        /// 1-based column (in bytes) of the first invalid byte.
        column: usize,
    },
    /// A `ripple.yml` that is not valid.
    #[error("{}:{line}:{column}: {message}", path.display())]
    Config {
        /// The file.
        path: PathBuf,
        /// 1-based line (0 when unknown).
        line: u32,
        /// 1-based column (0 when unknown).
        column: u32,
        /// What is wrong and what to do.
        message: String,
    },
    /// A `--schema` file that is not a mapping of tables to column lists.
    #[error("{}:{line}:{column}: {message}", path.display())]
    Schema {
        /// The file.
        path: PathBuf,
        /// 1-based line (0 when unknown).
        line: u32,
        /// 1-based column (0 when unknown).
        column: u32,
        /// What is wrong and what to do.
        message: String,
    },
    /// A settings file that is a link out of the repository.
    #[error("{}: {message}", path.display())]
    LinkOutside {
        /// The link.
        path: PathBuf,
        /// Where it points, and what to do.
        message: String,
    },
    /// An input file that could not be read.
    #[error("cannot read {}", path.display())]
    Io {
        /// The file (or `<stdin>`).
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
}

/// The library's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// The message without the file it starts with, for a finding that
    /// names the file already (as the project has it, where the message
    /// has the path it was read at: a revision's scratch copy).
    pub fn reason(&self) -> String {
        let full = self.to_string();
        let path = match self {
            Error::TooLarge { path, .. } | Error::NotUtf8 { path, .. } => path,
            _ => return full,
        };
        match full.strip_prefix(&format!("{}: ", path.display())) {
            Some(rest) => rest.to_string(),
            None => full,
        }
    }
}
