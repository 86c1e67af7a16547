//! The dbt project's snapshot in the warm cache: the whole part one load
//! made, with every file it read and folder it listed. A later run reuses
//! it while those are unchanged; when only model files changed (each a
//! model of its own, no file added or removed), it renders just those
//! again, with the renderer rebuilt from the kept settings and macros,
//! and keeps the rest. Anything else loads the project again
//! (docs/cache.md, "Snapshots").
//!
//! The file is one JSON document a line (JSON text holds no raw newline):
//! the inputs, the part before rendering, the renderer's state, the count
//! of models, then one line per model, so the models are found by a newline
//! search and read on every core. The models' SQL follows as raw text, each
//! model's line giving its length: two thirds of the file, it costs a copy
//! where a JSON string cost an escape and an unescape per newline.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::Write;
use std::ops::Range;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use serde_json::{Map, Value};

use super::jinja::{MacroFile, Renderer, Settings};
use super::{Loaded, Loading, Slot, Template, relation_for, relist, render_template};
use crate::cache::inputs::{Inputs, InputsDelta};
use crate::cache::{Cache, Key, KeyBuilder, Snapshot};
use crate::config::Config;
use crate::project::{Dataset, Diagnostic, Job, Lineage, ModelEdit, ModelLineage, Part, Sql};

/// The snapshot's name in the cache folder.
const NAME: &str = "dbt";

/// What the dbt reader's answer depends on beside the files it reads:
/// the folder (and, for a relative one, the working folder its paths are
/// joined to) and the `ripple.yml` settings it reads.
pub(super) fn key(root: &Path, config: &Config) -> Key {
    // An absolute folder's paths are the same from any working folder.
    let cwd = match root.is_relative() {
        true => std::env::current_dir().unwrap_or_default(),
        false => PathBuf::new(),
    };
    // Debug text: these are ordered maps and plain values, so the same
    // settings always print the same.
    let settings = format!(
        "{:?}",
        (
            &config.models,
            &config.target,
            &config.vars,
            config.dialect,
            config.allow_outside_project
        )
    );
    KeyBuilder::default()
        .str(NAME)
        .str(&cwd.to_string_lossy())
        .str(&root.to_string_lossy())
        .str(&settings)
        .finish()
}

/// What rebuilds the renderer: its settings (as JSON), the macro files,
/// and the unknown names the macros call.
pub(super) fn state(
    settings: String,
    macro_files: &[MacroFile],
    calls: &[(String, bool)],
) -> String {
    let settings = RawValue::from_string(settings).ok();
    serde_json::to_string(&StateOut {
        settings: settings.as_deref(),
        macro_files,
        macro_calls: calls,
    })
    .unwrap_or_default()
}

#[derive(Serialize)]
struct StateOut<'a> {
    settings: Option<&'a RawValue>,
    macro_files: &'a [MacroFile],
    macro_calls: &'a [(String, bool)],
}

#[derive(Deserialize)]
struct StateIn {
    settings: Settings,
    macro_files: Vec<MacroFile>,
    macro_calls: Vec<(String, bool)>,
}

/// The part before rendering, as written. A dataset's `tests` is not in
/// its JSON, so it is kept beside it.
#[derive(Serialize)]
struct PreludeOut<'a> {
    datasets: Vec<(&'a Dataset, bool)>,
    diagnostics: &'a [Diagnostic],
    dbt_root: &'a Option<crate::project::DbtRoot>,
}

/// The part before rendering, as read.
#[derive(Deserialize)]
struct PreludeIn {
    datasets: Vec<(Dataset, bool)>,
    diagnostics: Vec<Diagnostic>,
    dbt_root: Option<crate::project::DbtRoot>,
}

/// How many model lines follow the state line, the length of each one's
/// SQL in the raw text after them (none for a model with no SQL), and each
/// one's head. The lengths are here, not in the models' lines, so each
/// model is read with its SQL in one pass on every core; the heads are
/// here so that a run finds its edited models, and checks the project's
/// calls, without reading any model's line.
#[derive(Serialize, Deserialize)]
struct Count {
    models: usize,
    sql: Vec<Option<usize>>,
    heads: Vec<Head>,
    /// Fuel the cold run's renders used together: a warm run renders its
    /// edits only if a cold run could not have run out
    /// (`jinja::RUN_FUEL`).
    fuel: u64,
}

/// A model's file, when an edit to it can be rendered alone, and the
/// unknown names its text calls.
type Head = (Option<String>, Vec<(String, bool)>);

/// The head of `s`.
fn head_of(s: &Slot) -> Head {
    let file = match s.editable {
        true => s.dataset.file.clone(),
        false => None,
    };
    (file, s.called.clone())
}

impl Count {
    /// The count of `slots`.
    fn of(slots: &[Slot], fuel: u64) -> Count {
        Count {
            fuel,
            models: slots.len(),
            sql: slots
                .iter()
                .map(|s| s.job.sql.as_ref().map(|q| q.len()))
                .collect(),
            heads: slots.iter().map(head_of).collect(),
        }
    }

    /// The model at `at` is now `s`.
    fn set(&mut self, at: usize, s: &Slot) {
        self.sql[at] = s.job.sql.as_ref().map(|q| q.len());
        self.heads[at] = head_of(s);
    }
}

/// A slot as written: its dataset's `tests` is not in its JSON, so it is
/// kept beside it; its job's SQL is in the raw text after the model lines.
#[derive(Serialize)]
struct SlotOut<'a> {
    meta: &'a RawValue,
    editable: bool,
    called: &'a [(String, bool)],
    dataset: &'a Dataset,
    tests: bool,
    job: &'a Job,
    diagnostics: &'a [Diagnostic],
    named: u64,
}

/// A slot as read.
#[derive(Deserialize)]
struct SlotIn {
    meta: Box<RawValue>,
    editable: bool,
    called: Vec<(String, bool)>,
    dataset: Dataset,
    tests: bool,
    job: Job,
    diagnostics: Vec<Diagnostic>,
    named: u64,
}

impl SlotIn {
    fn into_slot(self, sql: Option<Sql>) -> Slot {
        let mut dataset = self.dataset;
        dataset.tests = self.tests;
        let mut job = self.job;
        job.sql = sql;
        Slot {
            meta: Some(self.meta),
            editable: self.editable,
            called: self.called,
            dataset,
            job,
            diagnostics: self.diagnostics,
            named: self.named,
        }
    }
}

/// A slot's line; an error for a slot that kept no template (it could
/// not be rendered again), which leaves the snapshot unwritten.
fn slot_text(s: &Slot) -> std::io::Result<Box<RawValue>> {
    let meta = s
        .meta
        .as_deref()
        .ok_or_else(|| std::io::Error::other("a model kept no template"))?;
    serde_json::value::to_raw_value(&SlotOut {
        meta,
        editable: s.editable,
        called: &s.called,
        dataset: &s.dataset,
        tests: s.dataset.tests,
        job: &s.job,
        diagnostics: &s.diagnostics,
        named: s.named,
    })
    .map_err(std::io::Error::other)
}

/// Writes a line: one JSON document.
fn line(w: &mut dyn Write, text: &[u8]) -> std::io::Result<()> {
    w.write_all(text)?;
    w.write_all(b"\n")
}

/// Slots are written this many at a time, each batch on every core: the
/// file is streamed, never held whole.
const BATCH: usize = 1024;

/// Keeps what `loaded` holds, read from `inputs`, as the project's
/// snapshot; the lineage digest of what it holds, once written.
pub(super) fn keep(cache: &Cache, key: Key, inputs: Inputs, loaded: &Loaded) -> Option<Lineage> {
    let state = loaded.state.as_ref()?;
    let prelude = serde_json::to_string(&PreludeOut {
        datasets: loaded
            .prelude
            .datasets
            .iter()
            .map(|d| (d, d.tests))
            .collect(),
        diagnostics: &loaded.prelude.diagnostics,
        dbt_root: &loaded.prelude.dbt_root,
    })
    .unwrap_or_default();
    let inputs = serde_json::to_string(&inputs).unwrap_or_default();
    let count = serde_json::to_string(&Count::of(&loaded.slots, loaded.fuel)).unwrap_or_default();
    let id = cache.write_snapshot(NAME, key, |w| {
        line(w, inputs.as_bytes())?;
        line(w, prelude.as_bytes())?;
        line(w, state.as_bytes())?;
        line(w, count.as_bytes())?;
        for batch in loaded.slots.chunks(BATCH) {
            let rows: Vec<std::io::Result<Box<RawValue>>> =
                batch.par_iter().map(slot_text).collect();
            for row in rows {
                line(w, row?.get().as_bytes())?;
            }
        }
        for s in &loaded.slots {
            w.write_all(s.job.sql.as_deref().unwrap_or_default().as_bytes())?;
        }
        Ok(())
    })?;
    let key = lineage_of(&id, std::iter::empty());
    Some(Lineage {
        key,
        base: key,
        edits: Vec::new(),
    })
}

/// The first `n` lines of `text` and what follows them; `None` when it
/// holds fewer.
fn split_lines(text: &[u8], n: usize) -> Option<(Vec<&[u8]>, &[u8])> {
    let mut lines = Vec::with_capacity(n);
    let mut at = 0;
    for end in memchr::memchr_iter(b'\n', text).take(n) {
        lines.push(&text[at..end]);
        at = end + 1;
    }
    (lines.len() == n).then(|| (lines, &text[at..]))
}

/// Where each model's SQL lies in the raw text after the model lines;
/// `None` when the lengths do not add up to it.
fn sql_spans(lengths: &[Option<usize>], raw: &[u8]) -> Option<Vec<Option<Range<usize>>>> {
    let mut at = 0usize;
    let mut spans = Vec::with_capacity(lengths.len());
    for len in lengths {
        spans.push(match *len {
            Some(len) => {
                let end = at.checked_add(len).filter(|e| *e <= raw.len())?;
                let span = at..end;
                at = end;
                Some(span)
            }
            None => None,
        });
    }
    (at == raw.len()).then_some(spans)
}

/// An edited model's line in the edits file: where its slot is, its SQL,
/// and its slot's line as the snapshot would hold it.
#[derive(Serialize)]
struct EditOut<'a> {
    at: usize,
    sql: Option<&'a str>,
    slot: &'a RawValue,
}

/// An edited model's line, as read.
#[derive(Deserialize)]
struct EditIn {
    at: usize,
    sql: Option<String>,
    slot: Box<RawValue>,
}

/// What amends a snapshot since it was written: the inputs that moved,
/// and each model rendered again (its slot's line and SQL) by its place.
#[derive(Default)]
struct Edits {
    inputs: InputsDelta,
    models: BTreeMap<usize, (Box<RawValue>, Option<String>)>,
}

impl Edits {
    /// The edits file's body: the inputs' delta, then a line per model;
    /// `None` when a line does not read (the snapshot alone is then used,
    /// and the files it names found changed: never a wrong answer).
    fn read(body: &[u8]) -> Option<Edits> {
        let mut lines = body.split(|b| *b == b'\n').filter(|l| !l.is_empty());
        let inputs = serde_json::from_slice(lines.next()?).ok()?;
        let mut models = BTreeMap::new();
        for l in lines {
            let e: EditIn = serde_json::from_slice(l).ok()?;
            models.insert(e.at, (e.slot, e.sql));
        }
        Some(Edits { inputs, models })
    }

    /// Writes the edits file's body.
    fn write(&self, w: &mut dyn Write) -> std::io::Result<()> {
        line(
            w,
            &serde_json::to_vec(&self.inputs).map_err(std::io::Error::other)?,
        )?;
        for (&at, (slot, sql)) in &self.models {
            let e = EditOut {
                at,
                sql: sql.as_deref(),
                slot,
            };
            line(w, &serde_json::to_vec(&e).map_err(std::io::Error::other)?)?;
        }
        Ok(())
    }

    /// Whether these are so many, for a project of `models` models, that
    /// the snapshot is better written whole again: the edits file is
    /// written on every run that edits and read on every run, so it stays
    /// a small part of the snapshot (on the 10,000-model project, 250
    /// models of 2.6 KB each, against 30 MB).
    fn too_many(&self, models: usize) -> bool {
        self.models.len() > (models / 40).max(2) || self.inputs.entries() > (models / 5).max(16)
    }
}

/// The project's part from its snapshot, when the files it was read from
/// are unchanged or only model files of their own were edited; `None`
/// when it must be read again. Only the edited models' lines are read
/// here when `lazy`: the rest are read when the part is asked for
/// ([`Pending`]), which a run answered from its lineage alone never does.
/// Otherwise every model is read while the files are checked, on the other
/// core.
pub(super) fn reuse(
    cache: &Cache,
    key: Key,
    root: &Path,
    config: &Config,
    lazy: bool,
) -> Option<(Pending, Loading)> {
    let kept = cache.snapshot_in_parts(NAME, key)?;
    let (head, rest) = split_lines(kept.body(), 4)?;
    // The lines before the models, read by every run: checked now. Each
    // model's line and SQL is checked when it is read.
    let body = kept.body();
    kept.checked(&body[..body.len() - rest.len()])?;
    let [inputs, _, state, count] = head[..] else {
        return None;
    };
    let mut count: Count = serde_json::from_slice(count).ok()?;
    if count.sql.len() != count.models || count.heads.len() != count.models {
        return None;
    }
    let (rows, raw) = split_lines(rest, count.models)?;
    let spans = sql_spans(&count.sql, raw)?;
    // The raw text ends the file: its place in the file's bytes.
    let base = kept.bytes().len() - raw.len();
    let mut edits = cache
        .snapshot_edits(NAME, key, &kept)
        .and_then(|body| Edits::read(&body))
        .unwrap_or_default();
    // A model past the snapshot's is not an edit of this snapshot.
    if edits.models.range(rows.len()..).next().is_some() {
        return None;
    }
    // The models edited since the snapshot was written, from the edits.
    let mut fresh: BTreeMap<usize, Slot> = BTreeMap::new();
    for (&i, (slot, sql)) in &edits.models {
        let slot: SlotIn = serde_json::from_str(slot.get()).ok()?;
        let slot = slot.into_slot(sql.clone().map(Sql::from));
        count.set(i, &slot);
        fresh.insert(i, slot);
    }
    let check = || {
        let mut inputs: Inputs = serde_json::from_slice(inputs).ok()?;
        inputs.apply(&edits.inputs)?;
        let changes = inputs.changes(relist, super::ask);
        Some((inputs, changes))
    };
    let (checked, read) = match lazy {
        true => (check(), None),
        false => {
            let (checked, read) =
                rayon::join(check, || read_slots(&kept, base, &rows, &spans, &fresh));
            (checked, Some(read?))
        }
    };
    let (mut inputs, changes) = checked?;
    if changes.listing {
        return None;
    }
    let mut rewrite = changes.restat;
    let mut edited: Vec<usize> = Vec::new();
    // However much the edits' renders use, a cold run's fuel could not
    // run out; else the cold run answers.
    let renders = (edits.models.len() + changes.files.len()) as u64;
    let most = count
        .fuel
        .saturating_add(renders.saturating_mul(super::jinja::MAX_MODEL_SPEND));
    if !changes.files.is_empty() && most > super::jinja::RUN_FUEL {
        return None;
    }
    if !changes.files.is_empty() {
        let state: StateIn = serde_json::from_slice(state).ok()?;
        let slot_at = |i: usize| -> Option<Slot> {
            match (fresh.get(&i), &read) {
                (Some(s), _) => Some(s.clone()),
                (None, Some(read)) => read.get(i)?.clone(),
                (None, None) => read_slot(&kept, base, rows.get(i)?, spans.get(i)?),
            }
        };
        let rendered = render_edited(
            &changes.files,
            &count.heads,
            slot_at,
            &mut inputs,
            state,
            root,
            config,
        )?;
        for (i, slot) in rendered {
            count.set(i, &slot);
            fresh.insert(i, slot);
            edited.push(i);
        }
        rewrite = true;
    }
    if rewrite {
        for &i in &edited {
            let slot = slot_text(&fresh[&i]).ok()?;
            let sql = fresh[&i].job.sql.as_deref().map(str::to_string);
            edits.models.insert(i, (slot, sql));
        }
    }
    let lineage = lineage(&kept, &rows, &edits);
    if rewrite {
        edits.inputs = inputs.delta();
        match edits.too_many(count.models) {
            false => cache.write_snapshot_edits(NAME, key, &kept, |w| edits.write(w)),
            true => write_whole_aside(
                cache,
                key,
                kept.clone(),
                spans.clone(),
                &inputs,
                &count,
                edits,
            ),
        }
    }
    let how = match edited.is_empty() {
        true => Loading::Snapshot(lineage),
        false => Loading::Rendered(lineage),
    };
    let pending = Pending {
        kept,
        spans,
        fresh,
        read,
    };
    Some((pending, how))
}

/// The model at `row` of the snapshot `kept`, its SQL at `span` of the raw
/// text that begins at `base` in the file's bytes (kept where the
/// snapshot's mapping holds it, not copied).
fn read_slot(
    kept: &Snapshot,
    base: usize,
    row: &[u8],
    span: &Option<Range<usize>>,
) -> Option<Slot> {
    let slot: SlotIn = serde_json::from_slice(kept.checked(row)?).ok()?;
    let sql = match span {
        Some(r) => {
            let range = base + r.start..base + r.end;
            if !kept.bytes().check(range.clone()) {
                return None;
            }
            Some(Sql::kept(kept.bytes(), range)?)
        }
        None => None,
    };
    Some(slot.into_slot(sql))
}

/// The models of the snapshot `kept` at `rows` (their SQL at `spans` of
/// the raw text at `base`), read on every core, but for those in `fresh`
/// (`None` in their place); `None` when one does not read.
fn read_slots(
    kept: &Snapshot,
    base: usize,
    rows: &[&[u8]],
    spans: &[Option<Range<usize>>],
    fresh: &BTreeMap<usize, Slot>,
) -> Option<Vec<Option<Slot>>> {
    // Every model is read: the whole file checked at once, on every core.
    if !kept.bytes().check_all() {
        return None;
    }
    // Into a vector sized once: the slots are large, and growing it
    // copied them over and over.
    let mut read: Vec<Option<Option<Slot>>> = Vec::with_capacity(rows.len());
    rows.par_iter()
        .zip(spans)
        .enumerate()
        .map(|(i, (row, span))| match fresh.contains_key(&i) {
            true => Some(None),
            false => read_slot(kept, base, row, span).map(Some),
        })
        .collect_into_vec(&mut read);
    read.into_iter().collect()
}

/// A dbt part reused from its snapshot, its models read or not yet.
pub(crate) struct Pending {
    kept: Snapshot,
    /// Each model's SQL in the raw text.
    spans: Vec<Option<Range<usize>>>,
    /// The models rendered since the snapshot was written, by place.
    fresh: BTreeMap<usize, Slot>,
    /// The other models, when they were read already.
    read: Option<Vec<Option<Slot>>>,
}

impl Pending {
    /// The part: the prelude and every model's line read, on every core;
    /// `None` when one does not read.
    pub(super) fn into_part(self) -> Option<Part> {
        let Pending {
            kept,
            spans,
            mut fresh,
            read,
        } = self;
        let (head, rest) = split_lines(kept.body(), 4)?;
        let (rows, raw) = split_lines(rest, spans.len())?;
        let base = kept.bytes().len() - raw.len();
        let (prelude, slots) = rayon::join(
            || serde_json::from_slice::<PreludeIn>(kept.checked(head[1])?).ok(),
            || match read {
                Some(read) => Some(read),
                None => read_slots(&kept, base, &rows, &spans, &fresh),
            },
        );
        let prelude = prelude?;
        let slots = slots?
            .into_iter()
            .enumerate()
            // A model rendered since is in `fresh`, whatever was read.
            .map(|(i, s)| fresh.remove(&i).or(s))
            .collect::<Option<Vec<Slot>>>()?;
        let prelude = Part {
            datasets: prelude
                .datasets
                .into_iter()
                .map(|(mut d, tests)| {
                    d.tests = tests;
                    d
                })
                .collect(),
            diagnostics: prelude.diagnostics,
            dbt_root: prelude.dbt_root,
            ..Part::default()
        };
        let loaded = Loaded {
            prelude,
            slots,
            state: None,
            fuel: 0,
        };
        Some(loaded.into_part())
    }
}

/// What the part's lineage is made of: the snapshot written (its id), and
/// each model line an edit changed, in a digest and one by one. A model's
/// SQL is not in its line, only what was read from it (its references,
/// their lines, its configuration, its findings, a digest of the relations
/// it names after `from`/`join`), so an edit that changes the SQL alone (a
/// comment, a column, a filter) leaves the digest as it was: equal
/// digests, equal parts but for the text of the SQL. `None`
/// when a changed line does not read, or is damaged.
fn lineage(kept: &Snapshot, rows: &[&[u8]], edits: &Edits) -> Option<Lineage> {
    let mut changed: Vec<(usize, &str)> = Vec::new();
    for (&i, (slot, _)) in &edits.models {
        let row = kept.checked(rows.get(i)?)?;
        if row != slot.get().as_bytes() {
            changed.push((i, slot.get()));
        }
    }
    let mut models = Vec::with_capacity(changed.len());
    for &(place, line) in &changed {
        models.push(ModelEdit {
            place,
            now: model_lineage(line.as_bytes())?,
            kept: model_lineage(rows.get(place)?)?,
        });
    }
    Some(Lineage {
        key: lineage_of(kept.id(), changed.into_iter()),
        base: lineage_of(kept.id(), std::iter::empty()),
        edits: models,
    })
}

/// What the model line `line` gives the lineage graph.
fn model_lineage(line: &[u8]) -> Option<ModelLineage> {
    let slot: SlotIn = serde_json::from_slice(line).ok()?;
    // The line but its job's reads, in a digest.
    let mut rest: Value = serde_json::from_slice(line).ok()?;
    rest.get_mut("job")?.as_object_mut()?.remove("reads")?;
    Some(ModelLineage {
        rest: KeyBuilder::default().str(&rest.to_string()).finish(),
        node: slot.dataset.id.clone(),
        enabled: super::is_enabled(&slot.dataset),
        job: slot.job,
    })
}

/// [`lineage`] of the snapshot write `id` and its changed lines by place.
fn lineage_of<'a>(id: &str, changed: impl Iterator<Item = (usize, &'a str)>) -> Key {
    let mut k = KeyBuilder::default();
    k.str("dbt lineage").str(id);
    for (i, line) in changed {
        k.u64(i as u64).str(line);
    }
    k.finish()
}

/// Writes the snapshot `kept` whole again with its `edits` folded in, on a
/// thread of its own while the run goes on: the edited models' lines and
/// SQL from `edits`, the rest copied from the file read (each model's SQL
/// at its place in `spans`); `count` is the models' count as amended.
fn write_whole_aside(
    cache: &Cache,
    key: Key,
    kept: Snapshot,
    spans: Vec<Option<Range<usize>>>,
    inputs: &Inputs,
    count: &Count,
    edits: Edits,
) {
    let models = count.models;
    let count = serde_json::to_string(count).map_err(std::io::Error::other);
    let inputs = serde_json::to_string(inputs).map_err(std::io::Error::other);
    cache.write_snapshot_aside(NAME, key, move |w| {
        let inputs = inputs?;
        let count = count?;
        // Copied from the file read: never a damaged byte into a new seal.
        if !kept.bytes().check_all() {
            return Ok(false);
        }
        let unread = || std::io::Error::other("the snapshot read no longer splits");
        let (head, rest) = split_lines(kept.body(), 4).ok_or_else(unread)?;
        let (rows, raw) = split_lines(rest, models).ok_or_else(unread)?;
        line(w, inputs.as_bytes())?;
        line(w, head[1])?;
        line(w, head[2])?;
        line(w, count.as_bytes())?;
        for (i, row) in rows.iter().enumerate() {
            match edits.models.get(&i) {
                Some((slot, _)) => line(w, slot.get().as_bytes())?,
                None => line(w, row)?,
            }
        }
        for (i, span) in spans.iter().enumerate() {
            match (edits.models.get(&i), span) {
                (Some((_, sql)), _) => {
                    w.write_all(sql.as_deref().unwrap_or_default().as_bytes())?
                }
                (None, Some(r)) => w.write_all(&raw[r.clone()])?,
                (None, None) => {}
            }
        }
        Ok(true)
    });
}

/// Renders the edited model files again, each over the model whose file
/// it is (`heads` tell which, `slot_at` reads one), returning each edited
/// model's place and new slot; `None` when an edit is not a model file of
/// its own, does not read, or changes the names the project calls without
/// defining (every other model's placeholders).
fn render_edited(
    files: &[PathBuf],
    heads: &[Head],
    slot_at: impl Fn(usize) -> Option<Slot>,
    inputs: &mut Inputs,
    state: StateIn,
    root: &Path,
    config: &Config,
) -> Option<Vec<(usize, Slot)>> {
    // Each edited file by its place under the root (or whole, outside it),
    // matched against the models' own paths: no path is built per model.
    let mut wanted: HashMap<&Path, usize> = HashMap::with_capacity(files.len());
    for (n, path) in files.iter().enumerate() {
        wanted.insert(path.strip_prefix(root).unwrap_or(path), n);
    }
    let mut found: Vec<Option<usize>> = vec![None; files.len()];
    for (i, (file, _)) in heads.iter().enumerate() {
        if let Some(&n) = file.as_deref().and_then(|f| wanted.get(Path::new(f))) {
            found[n] = Some(i);
        }
    }
    let mut edited = Vec::new();
    for (path, i) in files.iter().zip(found) {
        let i = i?;
        edited.push((i, slot_at(i)?, crate::input::read_text(path).ok()?));
    }
    let calls: BTreeSet<(String, bool)> = heads
        .iter()
        .flat_map(|(_, called)| called)
        .chain(&state.macro_calls)
        .cloned()
        .collect();
    // What the whole load gave each template, from what the slot kept.
    let mut templates = Vec::new();
    for (_, s, text) in &edited {
        let mut meta: Map<String, Value> = serde_json::from_str(s.meta.as_deref()?.get()).ok()?;
        let node = meta.remove("node")?;
        let Value::Object(config) = meta.remove("config")? else {
            return None;
        };
        let d = &s.dataset;
        let this = relation_for(&state.settings, &config, &d.name, d.kind);
        let t = Template {
            id: d.id.clone(),
            kind: d.kind,
            name: d.name.clone(),
            package: d.package.clone(),
            file: d.file.clone()?,
            first_line: d.line?,
            text: text.clone(),
            config,
            columns: d.columns.clone(),
            tests: d.tests,
            // Only `.sql` models are edited alone (`editable`).
            python: None,
            node,
        };
        templates.push((t, this));
    }
    let (renderer, _) = Renderer::from_calls(state.settings, &state.macro_files, calls.clone());
    let called: Vec<Vec<(String, bool)>> = edited
        .iter()
        .map(|(_, _, text)| renderer.calls_of(text))
        .collect();
    // The calls with the edited models' own in place of what they called.
    let editing: BTreeSet<usize> = edited.iter().map(|(i, _, _)| *i).collect();
    let now: BTreeSet<&(String, bool)> = heads
        .iter()
        .enumerate()
        .filter(|(i, _)| !editing.contains(i))
        .flat_map(|(_, (_, c))| c)
        .chain(called.iter().flatten())
        .chain(&state.macro_calls)
        .collect();
    if !now.into_iter().eq(calls.iter()) {
        return None;
    }
    let rendered: Vec<_> = templates
        .into_par_iter()
        .map(|(t, this)| render_template(&renderer, t, this, config, true))
        .collect();
    let mut out = Vec::with_capacity(edited.len());
    let rendered = edited.into_iter().zip(called).zip(rendered).zip(files);
    for ((((i, mut slot, text), calls), r), path) in rendered {
        slot.dataset = r.dataset;
        slot.job = r.job;
        slot.diagnostics = r.diagnostics;
        slot.named = r.named;
        slot.called = calls;
        inputs.with_file(path, Some(&text));
        out.push((i, slot));
    }
    Some(out)
}
