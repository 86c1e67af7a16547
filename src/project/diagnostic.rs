//! Findings about the input: what could not be read, and what looks wrong.

use std::fmt;

use serde::{Deserialize, Serialize};

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// The input is wrong; results that depend on it are incomplete.
    Error,
    /// Suspicious or approximated; results stand.
    Warning,
}

/// One finding, with where it is and what to do about it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Diagnostic {
    /// How bad it is.
    pub severity: Severity,
    /// A stable kebab-case code (`render-error`, `unknown-ref`, `cycle`, ...).
    pub code: &'static str,
    /// The file it is about (relative to the project root), if any.
    pub file: Option<String>,
    /// 1-based line, 0 when unknown.
    pub line: u32,
    /// 1-based column, 0 when unknown.
    pub column: u32,
    /// What is wrong and what to do.
    pub message: String,
}

/// A finding as read back (from the warm cache): its code an owned string.
#[derive(Deserialize)]
struct Read {
    severity: Severity,
    code: String,
    file: Option<String>,
    line: u32,
    column: u32,
    message: String,
}

impl<'de> Deserialize<'de> for Diagnostic {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Diagnostic::try_from(Read::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

impl TryFrom<Read> for Diagnostic {
    type Error = String;

    /// Each distinct code is kept once for the process, as the
    /// `&'static str` codes are; a file naming more codes than ripple has is
    /// refused rather than kept.
    fn try_from(r: Read) -> Result<Self, String> {
        use std::collections::HashSet;
        use std::sync::Mutex;
        static CODES: Mutex<Option<HashSet<&'static str>>> = Mutex::new(None);
        let mut codes = CODES.lock().map_err(|e| e.to_string())?;
        let codes = codes.get_or_insert_with(HashSet::new);
        let code = match codes.get(r.code.as_str()) {
            Some(known) => *known,
            None if codes.len() < 512 && r.code.len() <= 64 => {
                let kept: &'static str = Box::leak(r.code.into_boxed_str());
                codes.insert(kept);
                kept
            }
            None => return Err("not one of ripple's codes".into()),
        };
        Ok(Diagnostic {
            severity: r.severity,
            code,
            file: r.file,
            line: r.line,
            column: r.column,
            message: r.message,
        })
    }
}

impl Diagnostic {
    /// An error about `file` at `line:column`.
    pub fn error(
        code: &'static str,
        file: impl Into<Option<String>>,
        line: u32,
        column: u32,
        message: impl Into<String>,
    ) -> Self {
        Diagnostic {
            severity: Severity::Error,
            code,
            file: file.into(),
            line,
            column,
            message: message.into(),
        }
    }

    /// A warning about `file` at `line:column`.
    pub fn warning(
        code: &'static str,
        file: impl Into<Option<String>>,
        line: u32,
        column: u32,
        message: impl Into<String>,
    ) -> Self {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(code, file, line, column, message)
        }
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let severity = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        match (&self.file, self.line, self.column) {
            (Some(file), 0, _) => write!(f, "{severity}[{}]: {file}: {}", self.code, self.message),
            (Some(file), line, 0) => write!(
                f,
                "{severity}[{}]: {file}:{line}: {}",
                self.code, self.message
            ),
            (Some(file), line, col) => {
                write!(
                    f,
                    "{severity}[{}]: {file}:{line}:{col}: {}",
                    self.code, self.message
                )
            }
            (None, _, _) => write!(f, "{severity}[{}]: {}", self.code, self.message),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_the_place() {
        let d = Diagnostic::error("unknown-ref", Some("models/a.sql".to_string()), 3, 7, "x");
        assert_eq!(d.to_string(), "error[unknown-ref]: models/a.sql:3:7: x");
    }
}
