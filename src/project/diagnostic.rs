//! Findings about the input: what could not be read, and what looks wrong.

use std::fmt;

use serde::Serialize;

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
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
