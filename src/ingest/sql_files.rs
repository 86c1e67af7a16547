//! Plain SQL folders: each `.sql` file is a job; the tables its statements
//! write are its outputs, the tables it reads first its inputs.

use std::path::{Path, PathBuf};

use rayon::prelude::*;

use super::files::{relative, stem};
use crate::project::{Diagnostic, Job, JobKind, Part, Reference, Target};
use crate::sql::{SqlDialect, StatementKind, script_lineage};

/// The jobs of the given SQL files, and what went wrong reading them.
pub(crate) fn load(root: &Path, files: &[PathBuf], dialect: SqlDialect) -> Part {
    let results: Vec<(Option<Job>, Vec<Diagnostic>)> = files
        .par_iter()
        .map(|path| job(root, path, dialect))
        .collect();
    let mut part = Part::default();
    for (j, d) in results {
        part.jobs.extend(j);
        part.diagnostics.extend(d);
    }
    part
}

fn job(root: &Path, path: &Path, dialect: SqlDialect) -> (Option<Job>, Vec<Diagnostic>) {
    let file = relative(root, path);
    let text = match crate::input::read_text(path) {
        Ok(t) => t,
        Err(e) => return (None, vec![super::files::read_error(file, &e)]),
    };
    let lineage = script_lineage(&text, dialect);
    let mut diagnostics: Vec<Diagnostic> = lineage
        .errors
        .iter()
        .map(|e| {
            // A statement that names no table (a user, a grant) loses no
            // lineage by failing: a warning, not a failed job.
            if lineage.tableless.contains(&e.statement) {
                return Diagnostic::warning(
                    "unparsed-statement",
                    Some(file.clone()),
                    e.line as u32,
                    e.column as u32,
                    format!(
                        "statement {} does not parse ({}); it names no table, so the job's lineage is whole, but a plan will not run this job",
                        e.statement, e.message
                    ),
                );
            }
            Diagnostic::error(
                "parse-error",
                Some(file.clone()),
                e.line as u32,
                e.column as u32,
                format!(
                    "statement {} does not parse: {}; the rest of the file is still read",
                    e.statement, e.message
                ),
            )
        })
        .collect();
    let hidden = |s: &crate::sql::StatementLineage, what: String| {
        Diagnostic::warning(
            "hidden-tables",
            Some(file.clone()),
            s.line as u32,
            s.column as u32,
            format!("statement {} {what}", s.index),
        )
    };
    diagnostics.extend(lineage.hidden_routines().map(|(s, routine)| {
        hidden(s, format!("runs `{routine}`, whose tables ripple cannot see: what it reads and writes is not in the graph, so an impact through it may be short (and a plan refuses the job); write its statements in the job"))
    }));
    diagnostics.extend(lineage.defined_routines().map(|(s, routine)| {
        hidden(s, format!("defines `{routine}`: the tables its body reads are not followed into the jobs that call it, so an impact through it may be short; write its query in the jobs, or a view"))
    }));
    let first_line = |table: &str, reads: bool| -> u32 {
        lineage
            .statements
            .iter()
            .find(|s| {
                if reads {
                    s.sources.iter().any(|t| t == table)
                } else {
                    s.targets.iter().any(|t| t == table)
                }
            })
            .map_or(0, |s| s.line as u32)
    };
    let feeds = (!lineage.targets.is_empty()).then(|| lineage.feeds());
    let reads: Vec<Reference> = lineage
        .job_reads(feeds.as_ref().unwrap_or(&Default::default()))
        .iter()
        .map(|t| Reference {
            target: Target::Relation {
                relation: t.clone(),
            },
            line: first_line(t, true),
        })
        .collect();
    let mut writes: Vec<Reference> = lineage
        .filled_targets()
        .iter()
        .map(|t| Reference {
            target: Target::Relation {
                relation: t.clone(),
            },
            line: first_line(t, false),
        })
        .collect();
    // A file that only selects is a model: it defines the dataset named
    // after the file.
    let selects = lineage
        .statements
        .iter()
        .any(|s| s.kind == StatementKind::Select);
    if writes.is_empty() && selects {
        writes.push(Reference {
            target: Target::Relation {
                relation: stem(path).to_lowercase(),
            },
            line: lineage.statements.first().map_or(1, |s| s.line as u32),
        });
    }
    // A file that only selects feeds its model from all it reads.
    let job = Job {
        id: format!("sql:{file}"),
        kind: JobKind::Sql,
        file,
        reads,
        writes,
        feeds,
        sql: Some(text.into()),
        airflow: None,
        built_by: None,
        needs_warehouse: Vec::new(),
        from_manifest: Default::default(),
    };
    (Some(job), diagnostics)
}
