//! Which column a dataset's partitions are selected by — what a partial
//! swap deletes and inserts by, and what validations count by.
//!
//! In order: `partition_column` in `ripple.yml`; dbt's `event_time`, then
//! `partition_by.field`; then the SQL of the job writing the dataset: the
//! output column computed from nothing but an upstream's partition column
//! (through casts, `date_trunc` and renames: `cast(ordered_at as date) as
//! order_date`, `date_trunc('week', order_date) as week_start`). Each answer
//! carries its evidence for `--explain`.

use std::collections::HashMap;

use petgraph::Direction;
use petgraph::graph::NodeIndex;

use crate::graph::LineageGraph;
use crate::sql::{ColumnLineage, KnownColumns, ScriptReading, read_cached};

/// A dataset's partition column and why ripple believes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionColumn {
    /// The column, as the dataset names it.
    pub column: String,
    /// Where it comes from (`ripple.yml`, `dbt event_time`, the SQL line).
    pub evidence: String,
}

/// The output of the job writing a dataset, read from its SQL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobOutput {
    /// The file of the job.
    pub file: String,
    /// 1-based line of the statement producing the rows.
    pub line: u64,
    /// Column lineage of that statement.
    pub lineage: ColumnLineage,
}

/// The column lineage of the statement that produces `n`'s rows: the one
/// writing its relation, else (a dbt model) the last bare query.
pub fn job_output(g: &LineageGraph, n: NodeIndex) -> Option<JobOutput> {
    job_output_known(g, n, &KnownColumns::default())
}

/// [`job_output`], with the columns of tables the script does not create
/// itself (the dataset's own, from its table facts): an insert without a
/// column list then names its values after the table's columns.
pub fn job_output_known(g: &LineageGraph, n: NodeIndex, known: &KnownColumns) -> Option<JobOutput> {
    let d = &g.graph[n];
    let job = g.writer(&d.id)?;
    let sql = job.sql.as_deref()?;
    let script = read_cached(
        &g.cache,
        sql,
        g.config.dialect,
        known,
        ScriptReading::WithColumns,
    );
    let relation = d.relation.to_lowercase();
    let mut statements = script.statements;
    let writing = statements.iter().rposition(|s| {
        s.columns.is_some() && s.targets.iter().any(|t| t.to_lowercase() == relation)
    });
    let bare = || {
        statements
            .iter()
            .rposition(|s| s.columns.is_some() && s.targets.is_empty())
    };
    let s = statements.swap_remove(writing.or_else(bare)?);
    Some(JobOutput {
        file: job.file.clone(),
        line: s.line,
        lineage: s.columns?,
    })
}

/// The partition column `ripple.yml` or dbt's config names for `n`, if
/// any: when there is one, the job's SQL is not read for it.
pub fn configured(g: &LineageGraph, n: NodeIndex) -> Option<PartitionColumn> {
    let d = &g.graph[n];
    if let Some(c) = d
        .settings(&g.config)
        .and_then(|c| c.partition_column.clone())
    {
        return Some(PartitionColumn {
            column: c,
            evidence: "ripple.yml".to_string(),
        });
    }
    let dbt = |key: &str, v: Option<&serde_json::Value>| {
        v.and_then(|v| v.as_str()).map(|c| PartitionColumn {
            column: c.to_string(),
            evidence: format!("dbt `{key}`"),
        })
    };
    dbt("event_time", d.config.get("event_time")).or_else(|| {
        dbt(
            "partition_by.field",
            d.config.get("partition_by").and_then(|p| p.get("field")),
        )
    })
}

/// Partition columns, computed once per dataset.
#[derive(Debug, Default)]
pub struct PartitionColumns<'a> {
    known: HashMap<NodeIndex, Option<PartitionColumn>>,
    /// Job outputs the caller read already (a dataset missing here is read
    /// when asked for).
    outputs: Option<&'a HashMap<NodeIndex, Option<JobOutput>>>,
}

impl<'a> PartitionColumns<'a> {
    /// Partition columns that take each job's output from `outputs` when it
    /// is there: a caller that needs the outputs too reads each SQL once.
    pub fn with_outputs(outputs: &'a HashMap<NodeIndex, Option<JobOutput>>) -> Self {
        PartitionColumns {
            known: HashMap::new(),
            outputs: Some(outputs),
        }
    }

    /// The partition column of `n`, if ripple can tell.
    pub fn of(&mut self, g: &LineageGraph, n: NodeIndex) -> Option<PartitionColumn> {
        if let Some(known) = self.known.get(&n) {
            return known.clone();
        }
        // A cycle reaching `n` again finds nothing rather than recursing.
        self.known.insert(n, None);
        let found = self.find(g, n);
        self.known.insert(n, found.clone());
        found
    }

    fn find(&mut self, g: &LineageGraph, n: NodeIndex) -> Option<PartitionColumn> {
        if let Some(p) = configured(g, n) {
            return Some(p);
        }
        let outputs = self.outputs;
        let read;
        let out = match outputs.and_then(|o| o.get(&n)) {
            Some(known) => known.as_ref()?,
            None => {
                read = job_output(g, n)?;
                &read
            }
        };
        // Values inserted by position into a table of unknown columns: an
        // expression's text is never a column's name. Plain names (columns,
        // aliases) are taken as the table's, which the plan then checks on
        // the engine before it runs (docs/plan.md).
        if out.lineage.positional && !out.lineage.columns.iter().all(|c| plain_name(&c.name)) {
            return None;
        }
        let ups: Vec<NodeIndex> = g
            .graph
            .neighbors_directed(n, Direction::Incoming)
            .filter(|&u| u != n)
            .collect();
        for up in ups {
            let Some(pc) = self.of(g, up) else {
                continue;
            };
            let relation = g.graph[up].relation.to_lowercase();
            let candidates: Vec<_> = out
                .lineage
                .columns
                .iter()
                .filter(|c| {
                    c.sources.len() == 1
                        && c.sources.iter().all(|s| {
                            s.relation.to_lowercase() == relation
                                && s.column.eq_ignore_ascii_case(&pc.column)
                        })
                        && !aggregates(&c.fingerprint)
                        && !reformats(&c.fingerprint)
                })
                .collect();
            // The column keeping the upstream's name first: `select order_date, ...`.
            let carried = candidates
                .iter()
                .find(|c| c.name.eq_ignore_ascii_case(&pc.column))
                .or(candidates.first());
            if let Some(c) = carried {
                return Some(PartitionColumn {
                    column: c.name.clone(),
                    evidence: format!(
                        "SQL: `{}` carries `{}.{}` ({}:{})",
                        c.name, g.graph[up].name, pc.column, out.file, out.line
                    ),
                });
            }
        }
        // An upstream without a known partition column (a source): the
        // output column that turns one of its columns into a date or a
        // truncated time is the partition column.
        let relations: Vec<String> = g
            .graph
            .neighbors_directed(n, Direction::Incoming)
            .map(|u| g.graph[u].relation.to_lowercase())
            .collect();
        let derived = out.lineage.columns.iter().find(|c| {
            c.sources.len() == 1
                && c.sources
                    .iter()
                    .all(|s| relations.contains(&s.relation.to_lowercase()))
                && truncates_time(&c.fingerprint)
                && !aggregates(&c.fingerprint)
                && !reformats(&c.fingerprint)
        })?;
        let source = derived.sources.iter().next()?;
        Some(PartitionColumn {
            column: derived.name.clone(),
            evidence: format!(
                "SQL: `{}` is a time computed from `{}.{}` ({}:{})",
                derived.name, source.relation, source.column, out.file, out.line
            ),
        })
    }
}

/// Whether an expression turns a time into another format (text, an
/// integer, parts of it): it does not carry the partition column as the
/// plan's filters write it; `partition_column` and `partition_format` in
/// ripple.yml say how it is kept.
fn reformats(fingerprint: &str) -> bool {
    let f = fingerprint.to_lowercase();
    [
        "to_char(",
        "strftime(",
        "format(",
        "extract(",
        "date_part(",
        "datepart(",
        "epoch",
        "||",
        "concat(",
        "substr(",
        "substring(",
        "left(",
        "right(",
        "year(",
        "month(",
        "day(",
        "to_number(",
        " as int",
        " as bigint",
        " as integer",
        " as varchar",
        " as text",
        " as string",
        " as char",
        "::int",
        "::bigint",
        "::integer",
        "::varchar",
        "::text",
    ]
    .iter()
    .any(|t| f.contains(t))
}

/// Whether an expression casts or truncates to a date or time.
fn truncates_time(fingerprint: &str) -> bool {
    let f = fingerprint.to_lowercase();
    let cast = (f.contains("cast(") || f.contains("::"))
        && (f.contains("date") || f.contains("timestamp"));
    cast || [
        "date_trunc(",
        "timestamp_trunc(",
        "datetime_trunc(",
        "date(",
        "to_date(",
        "trunc(",
    ]
    .iter()
    .any(|t| f.contains(t))
}

/// Whether an expression aggregates (`min(order_date)` names a day, not the
/// partition each row belongs to).
fn aggregates(fingerprint: &str) -> bool {
    let f = fingerprint.to_lowercase();
    [
        "count(",
        "sum(",
        "avg(",
        "min(",
        "max(",
        "array_agg(",
        "string_agg(",
        "any_value(",
        "first_value(",
        "last_value(",
        "listagg(",
    ]
    .iter()
    .any(|a| f.contains(a))
}

/// Whether `name` is an identifier (a column or an alias), not the text of
/// an expression.
pub fn plain_name(name: &str) -> bool {
    (name.len() > 1 && name.starts_with('"') && name.ends_with('"'))
        || (!name.is_empty()
            && name.chars().all(|c| c.is_alphanumeric() || c == '_')
            && !name.starts_with(|c: char| c.is_ascii_digit()))
}
