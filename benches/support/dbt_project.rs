//! A generator of large layered dbt-style projects, for benchmarks and
//! scale tests: sources, staging models over them, then layers of models
//! that ref one to three models of earlier layers. Models use what real
//! projects use: `config()` blocks, Jinja loops over `var()` lists, a macro
//! that wraps `ref()`, `is_incremental()` branches, and schema YAML.
//!
//! Deterministic: the same `models` count gives the same files, and the
//! expected edge count is returned so callers can check what they load.

use std::fmt::Write as _;
use std::path::Path;

/// What was written.
#[allow(dead_code)]
pub struct Generated {
    /// Models written.
    pub models: usize,
    /// Sources declared.
    pub sources: usize,
    /// Distinct (upstream, downstream) edges dbt would list.
    pub edges: usize,
}

/// A small deterministic pseudo-random sequence (no dependency needed).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Writes a project of `models` models under `dir`.
#[allow(dead_code)]
pub fn generate(dir: &Path, models: usize) -> std::io::Result<Generated> {
    let write = |rel: &str, text: &str| -> std::io::Result<()> {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().unwrap())?;
        std::fs::write(path, text)
    };
    write(
        "dbt_project.yml",
        "name: big\nversion: '1.0'\nconfig-version: 2\nprofile: big\nvars:\n  regions: ['emea', 'amer', 'apac']\nmodels:\n  big:\n    +materialized: view\n    staging:\n      +schema: staging\n      +tags: ['staging']\n    marts:\n      +materialized: table\n      +schema: marts\n",
    )?;
    write(
        "macros/helpers.sql",
        "{% macro upstream(name) %}{{ return(ref(name)) }}{% endmacro %}\n{% macro cents(col) %}({{ col }} / 100.0){% endmacro %}\n",
    )?;
    let mut rng = Lcg(42);
    let sources = (models / 20).max(1);
    let mut yaml = String::from("version: 2\nsources:\n  - name: raw\n    tables:\n");
    for s in 0..sources {
        let _ = writeln!(yaml, "      - name: t{s}");
    }
    write("models/staging/_sources.yml", &yaml)?;
    let staging = (models / 5).max(1).min(models);
    let mut edges = 0usize;
    let mut props = String::from("version: 2\nmodels:\n");
    for m in 0..staging {
        let src = m % sources;
        let text = format!(
            "{{{{ config(tags=['s{tag}'], materialized='incremental', incremental_strategy='microbatch', event_time='updated_at', batch_size='day', begin='2024-01-01') }}}}\nselect id, {{{{ cents('amount') }}}} as amount, updated_at\nfrom {{{{ source('raw', 't{src}') }}}}\n{{% if is_incremental() %}}where updated_at > (select max(updated_at) from {{{{ this }}}}){{% endif %}}\n",
            tag = m % 7
        );
        write(&format!("models/staging/stg_{m}.sql"), &text)?;
        edges += 1;
    }
    for m in staging..models {
        // Layers grow outward: each model reads from anything before it,
        // mostly from the recent past (like real marts over intermediates).
        let mut ups: Vec<usize> = Vec::new();
        for k in 0..1 + rng.below(3) {
            // The first read is usually a staging model (wide fan-out, as
            // in real projects), the others recent models (depth).
            let up = if k == 0 && rng.below(2) == 0 {
                rng.below(staging)
            } else {
                let window = (m / 4).max(1);
                m - 1 - rng.below(window.min(m))
            };
            if !ups.contains(&up) {
                ups.push(up);
            }
        }
        let name = |i: usize| {
            if i < staging {
                format!("stg_{i}")
            } else {
                format!("m_{i}")
            }
        };
        let mut text = String::new();
        // A third upserts by key (non-idempotent), a third daily microbatch
        // (half of those with a lookback), a third views.
        let config = match m % 6 {
            0 | 3 => "materialized='incremental', unique_key='id', begin='2024-01-01'",
            1 => {
                "materialized='incremental', incremental_strategy='microbatch', event_time='d', batch_size='day', begin='2024-01-01', lookback=2"
            }
            4 => {
                "materialized='incremental', incremental_strategy='microbatch', event_time='d', batch_size='day', begin='2024-01-01'"
            }
            _ => "",
        };
        if !config.is_empty() {
            let _ = writeln!(text, "{{{{ config({config}) }}}}");
        }
        let _ = writeln!(text, "with");
        for (k, up) in ups.iter().enumerate() {
            // One in four refs goes through the macro: an edge only a real
            // Jinja renderer sees.
            let call = if (m + k) % 4 == 0 {
                format!("upstream('{}')", name(*up))
            } else {
                format!("ref('{}')", name(*up))
            };
            let _ = writeln!(text, "u{k} as (select * from {{{{ {call} }}}}),");
        }
        let _ = writeln!(
            text,
            "regions as ({{% for r in var('regions') %}}select '{{{{ r }}}}' as region{{% if not loop.last %}} union all {{% endif %}}{{% endfor %}})"
        );
        let _ = writeln!(
            text,
            "select u0.id, sum(u0.amount) as amount, count(*) as n"
        );
        let _ = writeln!(text, "from u0");
        for k in 1..ups.len() {
            let _ = writeln!(text, "left join u{k} using (id)");
        }
        let _ = writeln!(text, "cross join regions\ngroup by 1");
        let folder = if m * 10 >= models * 7 {
            "marts"
        } else {
            "intermediate"
        };
        write(&format!("models/{folder}/m_{m}.sql"), &text)?;
        edges += ups.len();
        if m % 10 == 0 {
            let _ = writeln!(
                props,
                "  - name: m_{m}\n    columns:\n      - name: id\n      - name: amount"
            );
        }
    }
    write("models/_models.yml", &props)?;
    Ok(Generated {
        models,
        sources,
        edges,
    })
}
