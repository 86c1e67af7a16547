//! The static reading of one DAG file's syntax tree.

use std::cell::Cell;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;
use std::rc::Rc;

use ruff_python_ast::visitor::{Visitor, walk_expr, walk_stmt};
use ruff_python_ast::{Expr, Keyword, Operator, Stmt};
use ruff_text_size::Ranged;

use super::template::{UNKNOWN_KEYS, UNKNOWN_VALUE, render_sql};
use crate::ingest::files::LineIndex;
use crate::project::Diagnostic;
use crate::project::{Cosmos, Dag, DbtRun, SqlTemplate, Task};

/// What a name in the file stands for.
#[derive(Debug, Clone, PartialEq)]
enum Binding {
    /// A string constant.
    Str(String),
    /// A list of string constants.
    Strs(Vec<String>),
    /// Task ids (a task, a list of tasks, a TaskGroup, a TaskFlow result).
    Tasks(Vec<String>),
    /// A DAG (index into `Reader::dags`).
    Dag(usize),
    /// A dict of string constants (`default_args`, `params`).
    Dict(BTreeMap<String, String>),
    /// `Op.partial(...)` or `flow.partial(...)`: a task once `.expand`ed.
    Partial(Box<Partial>),
}

/// When an arm of [`Reader::alternatives`] runs.
#[derive(Clone, Copy)]
enum Test<'a> {
    /// When this test is true, whether known statically or not.
    Expr(&'a Expr),
    /// When no arm before it ran (`else`, `case _`).
    Always,
    /// Maybe, at run time (an `except`, a `case` with a pattern).
    Unknown,
}

/// What a name stands for at one point: its binding, its boolean value,
/// whether it is known to stand for a runtime value.
type NameState = (Option<Binding>, Option<bool>, bool);

/// What `.partial(...)` fixed of a mapped task: the operator class or
/// TaskFlow function, and its keyword arguments.
#[derive(Debug, Clone, PartialEq)]
struct Partial {
    callee: String,
    keywords: Vec<Keyword>,
}

/// A `@task`-decorated function: calling it makes a task.
#[derive(Debug, Clone)]
struct TaskFlow {
    task_id: String,
    operator: String,
    /// `@task.sql`: the function returns its SQL.
    returns_sql: Option<String>,
    /// `@task(inlets=..., outlets=...)`: datasets read and written.
    inlets: Vec<String>,
    outlets: Vec<String>,
    /// `@setup` (false) or `@teardown` (true).
    teardown: Option<bool>,
}

/// `with t:` of setup or teardown tasks: the tasks made inside are wired
/// to them when the block ends (Airflow's `SetupTeardownContext`).
#[derive(Debug)]
struct SetupContext {
    dag: usize,
    /// The setups (or teardowns) the block is of.
    tasks: Vec<String>,
    teardown: bool,
    /// The teardowns of the setups (or setups of the teardowns), as Airflow
    /// finds them when the block is entered.
    partners: Vec<String>,
    /// Tasks made inside, in order.
    made: Vec<String>,
    /// Where the block's `with` item is.
    at: usize,
}

/// A function whose calls make tasks: a `@task_group` (calling it opens
/// the group and reads its body inside it) or a plain task or DAG factory
/// of the file (its body read where it is called, no group).
#[derive(Debug, Clone)]
struct GroupFn {
    /// The function's name.
    name: String,
    /// A `@task_group`; else a plain factory.
    group: bool,
    group_id: String,
    prefixed: bool,
    params: Vec<String>,
    body: Vec<Stmt>,
}

/// What a DAG's tasks inherit from it: `default_args` pool, template search
/// path, params.
#[derive(Debug, Clone, Default)]
struct DagSettings {
    pool: Option<String>,
    depends_on_past: bool,
    search_path: Vec<String>,
    /// `None`: given as something ripple cannot read.
    params: Option<BTreeMap<String, String>>,
    /// `default_args`' `*conn_id` entries.
    connections: BTreeMap<String, String>,
}

struct Reader<'a> {
    text: &'a str,
    file: &'a str,
    dag_dir: &'a Path,
    root: &'a Path,
    dags: Vec<Dag>,
    /// Per DAG, what its tasks inherit.
    dag_settings: Vec<DagSettings>,
    names: HashMap<String, Binding>,
    /// Names last assigned a value that is no task ripple can read (`prev =
    /// None`): in a dependency they stand for nothing, not for a task of
    /// that name.
    unbound: std::collections::HashSet<String>,
    /// Names bound to `True` or `False` (`DEBUG = False`), for the `if`s
    /// that test them.
    bools: HashMap<String, bool>,
    taskflows: HashMap<String, TaskFlow>,
    /// `from m import Name as Alias`: Alias → Name.
    aliases: HashMap<String, String>,
    warnings: Vec<Diagnostic>,
    lines: LineIndex,
    /// Per DAG, its tasks by id (see [`Reader::depend`]).
    task_index: HashMap<usize, TaskIndex>,
    /// The TaskGroups being read (innermost last), by key.
    open_groups: Vec<String>,
    /// Each TaskGroup's tasks (nested groups' tasks too), by key.
    group_members: HashMap<String, Vec<String>>,
    /// Dependencies with a TaskGroup at one end, as their tasks (by DAG):
    /// made once (`g1 >> g2` written a thousand times).
    group_made: HashSet<(usize, Vec<String>, Vec<String>)>,
    /// Each group's ends as last taken, by (DAG, group, leaves), with the
    /// DAG's generation then: a group of 1,000 tasks, each after 1,000
    /// others, read again for each of 600 `g1 >> g2` is 600 million
    /// lookups.
    group_ends: HashMap<(usize, String, bool), (u64, Vec<String>)>,
    /// Bumped when a DAG gains a task or a dependency (see `group_ends`).
    generation: u64,
    /// The prefix of each TaskGroup's tasks' ids, by key.
    group_prefixes: HashMap<String, String>,
    /// Each nested TaskGroup's parent, by key: a task of a group is its
    /// parent's too, however the group was entered (`parent_group=`,
    /// `task_group=`, `with`).
    group_parents: HashMap<String, String>,
    /// Setup (false) and teardown (true) tasks, by DAG and id: `with`
    /// one of them wires the tasks made inside to them, as Airflow does.
    roles: HashMap<(usize, String), bool>,
    /// Names bound to what ripple cannot read (`x = loads["a"]`), with
    /// that text: a dependency on one is warned, never dropped in silence.
    opaque: HashMap<String, String>,
    /// The setup/teardown contexts being read (`with t:`), innermost last.
    setup_contexts: Vec<SetupContext>,
    /// The `parent_group=` of the group being opened (see
    /// [`Reader::parent_prefix`]).
    opened_parent: Option<String>,
    /// `@task_group` functions and plain task or DAG factories, by name
    /// (shared: each call reads the body, none copies it).
    group_fns: HashMap<String, Rc<GroupFn>>,
    /// Functions that made no task when defined: one calling a factory
    /// defined further down (`make` calling `load`, valid Python, which
    /// looks names up when the call runs) becomes a factory once `load` is.
    plain_fns: Vec<GroupFn>,
    /// Loop bodies read so far (see [`MAX_LOOP_READS`]).
    loop_reads: usize,
    /// Group ids already used: a `@task_group` called again gets `__1`,
    /// `__2`, as Airflow names it.
    used_groups: std::collections::HashSet<String>,
    /// Names bound to cosmos `RenderConfig(...)` calls: their keywords.
    render_configs: HashMap<String, Vec<Keyword>>,
    /// Names imported from other modules of the project, with their file.
    local_modules: HashMap<String, String>,
    /// Names the file may change where it is not read in order.
    volatile: super::volatile::Volatile,
    /// The project's SQL dialect (what a quote means in a task's SQL).
    dialect: crate::sql::SqlDialect,
    /// Builtins the file binds to something else (`def range(n): ...`):
    /// their calls are not read as the builtin's.
    shadowed: HashSet<String>,
    /// Names bound to datasets (assets), which a schedule may list.
    dataset_names: std::collections::HashSet<String>,
    /// TaskFlow task ids made so far, by DAG.
    taskflow_ids: std::collections::HashSet<(usize, String)>,
    /// How many `@task_group` calls were read (see [`MAX_GROUP_CALLS`]).
    group_calls: usize,
    /// The `@task_group` functions being read, innermost last: one that
    /// calls itself is not read again (it would never end).
    entered_fns: Vec<String>,
    /// The value of the last `return` read (a `@task_group` body's).
    returned: Option<Binding>,
    /// A `return` of the function being read ran: the rest of its body
    /// does not.
    returning: bool,
    /// Bytes built so far (see [`MAX_BUILT_BYTES`]).
    built: Cell<usize>,
    /// Jinja fuel the file's templates have left (see
    /// [`super::template::FILE_FUEL`]).
    fuel: Cell<u64>,
    /// Where the bytes built first went past [`MAX_BUILT_BYTES`]: from there
    /// on nothing more of the file is read.
    spent_at: Cell<Option<usize>>,
    /// Where the statement being read starts (for messages).
    statement: Cell<usize>,
    /// The suffix to try next for a TaskFlow id or a group key used again:
    /// a search from `__1` each time made 10,000 calls quadratic.
    next_suffix: HashMap<String, usize>,
    /// Every call of the file (its span), by the name that decides whether
    /// it makes a task: its callee's last name, or `Op` of `Op.partial(...)`
    /// and `f.expand(...)`.
    calls: HashMap<String, Vec<Span>>,
    /// Per name of [`Reader::calls`], what its calls are known to be: 1 a
    /// DAG or TaskGroup, 2 a task (an operator, `@task`, `@task_group` or
    /// task factory call).
    call_levels: HashMap<String, u8>,
    /// The calls that make tasks, by span (see [`Reader::promote`]).
    task_calls: std::collections::BTreeSet<Span>,
    /// The calls that make tasks, DAGs or TaskGroups.
    maker_calls: std::collections::BTreeSet<Span>,
    /// The task calls read (they made a task or said why not), or inside
    /// something a warning already names: every other one is named at the
    /// end (see [`Reader::unread_calls`]), so a task is never dropped
    /// silently.
    handled: std::collections::HashSet<Span>,
}

/// Where a node starts and ends, in bytes.
type Span = (usize, usize);

fn span(node: &impl Ranged) -> Span {
    let r = node.range();
    (r.start().to_usize(), r.end().to_usize())
}

/// Bytes the reading of one DAG file may build: task ids, strings, SQL,
/// loop values, dependencies (each costs its upstream's id twice and
/// [`EDGE_BYTES`]). Loops and f-strings multiply what a file holds: a 1 MB
/// file of ids made from a 1 MB constant in loops built 10 GB, and
/// `[t0..tN] >> [u0..uN]` in a 0.5 MB file 144 million dependencies.
const MAX_BUILT_BYTES: usize = 128 << 20;
/// What one dependency costs beyond its upstream's id: its place in the
/// task's list and in the index that keeps it once.
const EDGE_BYTES: usize = 80;

/// `@task_group` calls read per file at most: nested group functions each
/// calling the next twice would otherwise make 2^n groups.
const MAX_GROUP_CALLS: usize = 10_000;

/// How a TaskGroup appears among task ids until its tasks are known.
const GROUP_MARK: &str = "\u{1}group:";

/// A DAG's tasks by id, kept up to date as tasks are added.
#[derive(Default)]
struct TaskIndex {
    /// How many of the DAG's tasks are indexed.
    len_seen: usize,
    by_id: HashMap<String, Vec<usize>>,
    /// (task, upstream) pairs already recorded.
    upstream: std::collections::HashSet<(usize, String)>,
}

/// Reads the DAGs of one file. Syntax errors are warnings: the parser
/// recovers, and what it could read is kept.
pub(super) fn parse_file(
    text: &str,
    file: &str,
    dag_dir: &Path,
    root: &Path,
    dialect: crate::sql::SqlDialect,
) -> (Vec<Dag>, Vec<Diagnostic>) {
    if text.len() > MAX_DAG_FILE_BYTES {
        let message = format!(
            "DAG file too large to read ({} bytes; the limit is {MAX_DAG_FILE_BYTES}); split it",
            text.len()
        );
        return (
            Vec::new(),
            vec![Diagnostic::error(
                "file-too-large",
                Some(file.to_string()),
                1,
                0,
                message,
            )],
        );
    }
    // The syntax tree of `a >> a >> ...` or `f(f(f(...)))` is as deep as its
    // statement is long, and the parser, this reader and the tree's drop
    // glue all recurse over it: run them on a stack sized to the longest
    // statement (twice: blocks nest too, by at most a line's indentation).
    let (depth, stack) = crate::ingest::python::stack_for(text);
    crate::ingest::dbt::jinja::guard::grow(stack, || read_tree(text, file, dag_dir, root, dialect))
        .unwrap_or_else(|no_stack| {
            let message = format!(
                "this DAG file has a statement of {} bytes, which may nest as deep: {no_stack}",
                depth / 2
            );
            (
                Vec::new(),
                vec![Diagnostic::error(
                    "file-too-large",
                    Some(file.to_string()),
                    1,
                    0,
                    message,
                )],
            )
        })
}

/// DAG files larger than this are reported, not read (the largest real ones
/// are a few hundred kilobytes; docs/limits.md).
const MAX_DAG_FILE_BYTES: usize = 4 * 1024 * 1024;

fn read_tree(
    text: &str,
    file: &str,
    dag_dir: &Path,
    root: &Path,
    dialect: crate::sql::SqlDialect,
) -> (Vec<Dag>, Vec<Diagnostic>) {
    let parsed =
        ruff_python_parser::parse_unchecked_source(text, ruff_python_ast::PySourceType::Python);
    let mut r = Reader {
        text,
        file,
        dag_dir,
        root,
        dags: Vec::new(),
        dag_settings: Vec::new(),
        names: HashMap::new(),
        unbound: std::collections::HashSet::new(),
        bools: HashMap::new(),
        taskflows: HashMap::new(),
        aliases: HashMap::new(),
        warnings: Vec::new(),
        task_index: HashMap::new(),
        lines: LineIndex::new(text),
        open_groups: Vec::new(),
        group_members: HashMap::new(),
        group_made: HashSet::new(),
        group_ends: HashMap::new(),
        generation: 0,
        group_fns: HashMap::new(),
        plain_fns: Vec::new(),
        group_prefixes: HashMap::new(),
        group_parents: HashMap::new(),
        opened_parent: None,
        roles: HashMap::new(),
        setup_contexts: Vec::new(),
        opaque: HashMap::new(),
        used_groups: std::collections::HashSet::new(),
        taskflow_ids: std::collections::HashSet::new(),
        dataset_names: std::collections::HashSet::new(),
        render_configs: HashMap::new(),
        volatile: Default::default(),
        local_modules: HashMap::new(),
        dialect,
        shadowed: HashSet::new(),
        entered_fns: Vec::new(),
        group_calls: 0,
        loop_reads: 0,
        returned: None,
        returning: false,
        built: Cell::new(0),
        fuel: Cell::new(super::template::FILE_FUEL),
        spent_at: Cell::new(None),
        statement: Cell::new(0),
        next_suffix: HashMap::new(),
        calls: HashMap::new(),
        call_levels: HashMap::new(),
        task_calls: std::collections::BTreeSet::new(),
        maker_calls: std::collections::BTreeSet::new(),
        handled: std::collections::HashSet::new(),
    };
    // The first hundred name their places; a file of 100,000 errors once
    // printed 14 MB of them. The last listed says how many more there are.
    let errors = parsed.errors();
    let listed = errors.len().min(MAX_SYNTAX_ERRORS);
    for (i, e) in errors.iter().take(listed).enumerate() {
        // Airflow would not load the file at all: an error, not a warning.
        let (line, column) = r.lines.line_column(text, e.location.start().to_usize());
        let more = match (i + 1 == listed, errors.len() - listed) {
            (true, n) if n > 0 => format!(" ({n} more syntax errors in this file are not listed)"),
            _ => String::new(),
        };
        r.warnings.push(Diagnostic::error(
            "python-syntax-error",
            Some(file.to_string()),
            line,
            column,
            format!(
                "Python syntax error: {}; the rest of the file is still read{more}",
                e.error
            ),
        ));
    }
    let module = parsed.into_syntax();
    r.volatile = super::volatile::scan(&module.body);
    r.shadowed = bound_names([&module.body[..]])
        .into_iter()
        .filter(|n| READ_BUILTINS.contains(&n.as_str()))
        .collect();
    let mut index = CallIndex::default();
    index.visit_body(&module.body);
    r.calls = index.by_key;
    let keys: Vec<String> = r.calls.keys().cloned().collect();
    for k in keys {
        r.promote(&k);
    }
    r.body(&module.body, None, "");
    r.unread_calls(&module.body);
    r.operator_values(&module.body);
    if let Some(at) = r.spent_at.get() {
        let (line, column) = r.position(at);
        r.warnings.push(Diagnostic::error(
            "expansion-too-large",
            Some(file.to_string()),
            line,
            column,
            format!(
                "reading this DAG file builds more than {} MiB of task ids, strings and SQL (each statement read counts 64 bytes): here loops, factories or f-strings multiply long strings or long bodies; the rest of the file is not read (what was read before is kept). Build ids and SQL from short values, keep loop bodies short, or split the file",
                MAX_BUILT_BYTES >> 20
            ),
        ));
    }
    (r.dags, r.warnings)
}

impl Reader<'_> {
    fn line(&self, node: &impl Ranged) -> u32 {
        self.lines.line(node.range().start().to_usize())
    }

    /// 1-based line and column (in characters) of byte `offset`.
    fn position(&self, offset: usize) -> (u32, u32) {
        let offset = offset.min(self.text.len());
        let start = self.text[..offset].rfind('\n').map_or(0, |i| i + 1);
        let column = self
            .text
            .get(start..offset)
            .map_or(0, |t| t.chars().count());
        (self.lines.line(offset), column as u32 + 1)
    }

    /// Counts `bytes` about to be built for `node` against
    /// [`MAX_BUILT_BYTES`]; `None` (and nothing more of the file read) once
    /// they would go past it.
    fn spend(&self, bytes: usize, node: &impl Ranged) -> Option<()> {
        self.spend_at(bytes, node.range().start().to_usize())
    }

    /// [`Reader::spend`] for what the statement being read builds.
    fn spend_here(&self, bytes: usize) -> Option<()> {
        self.spend_at(bytes, self.statement.get())
    }

    fn spend_at(&self, bytes: usize, at: usize) -> Option<()> {
        if self.spent_at.get().is_some() {
            return None;
        }
        let total = self.built.get().saturating_add(bytes);
        if total > MAX_BUILT_BYTES {
            self.spent_at.set(Some(at));
            return None;
        }
        self.built.set(total);
        Some(())
    }

    /// Whether the file's bytes are spent (see [`Reader::spend`]).
    fn spent(&self) -> bool {
        self.spent_at.get().is_some()
    }

    /// The first of `base`, `base__1`, `base__2`... not in `used`, per
    /// `scope`, from where the last search for it ended.
    fn unused_name(&mut self, scope: &str, base: &str, used: impl Fn(&str) -> bool) -> String {
        let key = format!("{scope}\u{0}{base}");
        let mut n = self.next_suffix.get(&key).copied().unwrap_or(0);
        let mut name = match n {
            0 => base.to_string(),
            n => format!("{base}__{n}"),
        };
        while used(&name) {
            n += 1;
            name = format!("{base}__{n}");
        }
        self.next_suffix.insert(key, n);
        name
    }

    /// Says that a task's SQL template does not render: its SQL is read as
    /// written, and a statement that then does not parse loses its tables.
    fn template_fails(&mut self, line: u32, task_id: &str, why: &str) {
        if self.spent() {
            return;
        }
        self.warnings.push(Diagnostic::warning(
            "airflow-template",
            Some(self.file.to_string()),
            line,
            0,
            format!(
                "task `{task_id}`: its SQL template does not render ({why}); its tables are read from the template as written, so some may be missing: fix the template, or declare the task's inlets and outlets"
            ),
        ));
    }

    fn warn(&mut self, line: u32, message: String) {
        // Past the file's bytes, what is left unread is said once, by the
        // error.
        if self.spent() {
            return;
        }
        self.warnings.push(Diagnostic::warning(
            "airflow-dynamic",
            Some(self.file.to_string()),
            line,
            0,
            message,
        ));
    }

    fn body(&mut self, stmts: &[Stmt], dag: Option<usize>, prefix: &str) {
        for s in stmts {
            if self.spent() || self.returning {
                return;
            }
            self.stmt(s, dag, prefix);
        }
    }

    /// The class or function a callee names, through import aliases.
    fn resolve(&self, e: &Expr) -> String {
        let name = callee(e);
        self.aliases.get(&name).cloned().unwrap_or(name)
    }

    fn stmt(&mut self, s: &Stmt, dag: Option<usize>, prefix: &str) {
        let at = s.range().start().to_usize();
        // Each statement read is paid for: loops and factories repeating
        // long bodies that build nothing (`x = 1` 20,000 times in 10,000
        // iterations: 22 s) stop at the file's budget as builders do.
        if self.spend_at(STATEMENT_BYTES, at).is_none() {
            return;
        }
        self.statement.set(at);
        self.read_stmt(s, dag, prefix);
        self.settle(at);
    }

    /// After a statement running code ripple cannot read (`exec`,
    /// `globals()[...] =`, a star import; see [`super::volatile`]), no name
    /// stands for a value it had.
    fn settle(&mut self, at: usize) {
        if !self.volatile.dynamic.contains(&at) {
            return;
        }
        let all: Vec<String> = self
            .names
            .keys()
            .chain(self.bools.keys())
            .cloned()
            .collect();
        self.forget_values(&all);
    }

    /// What `name` stands for, unless the file may change it where it is
    /// not read in order (see [`super::volatile`]): checked as it is read,
    /// one look-up (forgetting such names after every statement grew with
    /// statements × names: 30,000 aliases, 38 s).
    fn bound(&self, name: &str) -> Option<&Binding> {
        let b = self.names.get(name)?;
        let changed = match b {
            Binding::Str(_) => self.volatile.rebound.contains(name),
            Binding::Strs(_) | Binding::Dict(_) => {
                self.volatile.rebound.contains(name) || self.volatile.mutable.contains(name)
            }
            _ => false,
        };
        (!changed).then_some(b)
    }

    fn read_stmt(&mut self, s: &Stmt, dag: Option<usize>, prefix: &str) {
        match s {
            Stmt::ImportFrom(i) => {
                self.forget_values(&bound_names([std::slice::from_ref(s)]));
                // `from include.factory import make_load`: a module of the
                // project, which ripple does not read (see `call`).
                if let Some(file) = self.project_module(i) {
                    for alias in &i.names {
                        let name = alias.asname.as_ref().unwrap_or(&alias.name);
                        self.local_modules.insert(name.to_string(), file.clone());
                    }
                }
                for alias in &i.names {
                    if let Some(as_name) = &alias.asname {
                        self.aliases
                            .insert(as_name.to_string(), alias.name.to_string());
                        self.promote(as_name.as_str());
                    }
                }
            }
            Stmt::With(w) => {
                let (mut inner_dag, mut inner_prefix) = (dag, prefix.to_string());
                let mut opened = 0;
                let mut contexts = Vec::new();
                // `with open(...) as t`: what `t` was is gone.
                for item in &w.items {
                    if let Some(vars) = item.optional_vars.as_deref() {
                        self.forget_values(&store_names(vars));
                    }
                }
                for item in &w.items {
                    // `dag = DAG(...)`, then `with dag:`.
                    if let Expr::Name(n) = &item.context_expr
                        && let Some(Binding::Dag(d)) = self.names.get(n.id.as_str())
                    {
                        inner_dag = Some(*d);
                        if let Some(var) = item.optional_vars.as_deref().and_then(name_of) {
                            self.names.insert(var, Binding::Dag(*d));
                        }
                        continue;
                    }
                    // `tg = TaskGroup(...)`, then `with tg:`.
                    if let Expr::Name(n) = &item.context_expr
                        && let Some(key) = self.group_key(n.id.as_str())
                    {
                        inner_prefix = self.group_prefixes[&key].clone();
                        self.open_groups.push(key);
                        opened += 1;
                        continue;
                    }
                    let name = match &item.context_expr {
                        Expr::Call(call) => self.resolve(&call.func),
                        _ => String::new(),
                    };
                    if !matches!(name.as_str(), "DbtDag" | "DAG" | "TaskGroup")
                        && self.names_tasks(&item.context_expr)
                    {
                        // `with s >> t.as_teardown(setups=s):`: a setup or
                        // teardown task's context.
                        let tasks = self.tasks_of(&item.context_expr, inner_dag, &inner_prefix);
                        // `with DbtTaskGroup(...) as tg:`: cosmos's group, read
                        // as the task it stands for, no setup or teardown.
                        if name == "DbtTaskGroup" {
                            if let Some(var) = item.optional_vars.as_deref().and_then(name_of) {
                                self.names.insert(var, Binding::Tasks(tasks));
                            }
                            continue;
                        }
                        let at = item.context_expr.range().start().to_usize();
                        if let Some(ctx) = self.enter_setup(inner_dag, tasks, at) {
                            contexts.push(ctx);
                        }
                        continue;
                    }
                    let Expr::Call(call) = &item.context_expr else {
                        continue;
                    };
                    if name == "DbtDag" {
                        if let Some(Binding::Dag(d)) = self.cosmos(call, &name, dag, prefix) {
                            inner_dag = Some(d);
                            if let Some(var) = item.optional_vars.as_deref().and_then(name_of) {
                                self.names.insert(var, Binding::Dag(d));
                            }
                        }
                    } else if name == "DAG" {
                        let d = self.dag_from_call(
                            &call.arguments.args,
                            &call.arguments.keywords,
                            None,
                            self.line(call),
                        );
                        inner_dag = Some(d);
                        if let Some(var) = item.optional_vars.as_deref().and_then(name_of) {
                            self.names.insert(var, Binding::Dag(d));
                        }
                    } else if name == "TaskGroup" {
                        let group = kw(&call.arguments.keywords, "group_id")
                            .or(call.arguments.args.first())
                            .and_then(|e| self.string(e));
                        if let Some(group) = group {
                            let prefixed = prefixed(&call.arguments.keywords);
                            let parent = self.parent_prefix(&call.arguments.keywords, prefix);
                            let suffix = suffixed(&call.arguments.keywords);
                            let (key, p) = self.open_group(&group, &parent, prefixed, suffix);
                            inner_prefix = p;
                            if let Some(var) = item.optional_vars.as_deref().and_then(name_of) {
                                self.names.insert(
                                    var,
                                    Binding::Tasks(vec![format!("{GROUP_MARK}{key}")]),
                                );
                            }
                            opened += 1;
                        }
                    }
                }
                let outer_setups = self.setup_contexts.len();
                self.setup_contexts.extend(contexts);
                self.body(&w.body, inner_dag, &inner_prefix);
                while self.setup_contexts.len() > outer_setups {
                    if let Some(ctx) = self.setup_contexts.pop() {
                        self.leave_setup(ctx);
                    }
                }
                let keep = self.open_groups.len().saturating_sub(opened);
                self.open_groups.truncate(keep);
            }
            Stmt::Assign(a) => {
                for t in &a.targets {
                    // `t.sql = "..."` after `t = Op(...)`: the task runs the
                    // new value, which is not read.
                    if let Expr::Attribute(x) = t
                        && let Some(var) = name_of(&x.value)
                        && matches!(self.names.get(&var), Some(Binding::Tasks(_)))
                    {
                        let at = t.range().start().to_usize();
                        self.warn_at(at, format!("`{var}.{}` is set after the task is made, which ripple does not read: the task's SQL, tables or settings may differ from what the graph says; pass it to the operator (`{}=...`)", x.attr, x.attr));
                    }
                }
                for t in &a.targets {
                    if let Some(var) = name_of(t) {
                        match a.value.as_ref() {
                            Expr::BooleanLiteral(b) => self.bools.insert(var, b.value),
                            Expr::NoneLiteral(_) => self.bools.insert(var, false),
                            _ => self.bools.remove(&var),
                        };
                    }
                }
                // `mk = lambda n: Op(task_id=n, ...)`: a task factory, read
                // at each call like a function's.
                if let Expr::Lambda(l) = a.value.as_ref()
                    && let [target] = &a.targets[..]
                    && let Some(var) = name_of(target)
                    && self.has_task_call(&*l.body)
                {
                    self.names.remove(&var);
                    if self.spend(source_len(l), l).is_some() {
                        let params = l.parameters.as_deref().map(params_of).unwrap_or_default();
                        let body = vec![Stmt::Return(ruff_python_ast::StmtReturn {
                            node_index: Default::default(),
                            range: l.body.range(),
                            value: Some(l.body.clone()),
                        })];
                        self.group_fns.insert(
                            var.clone(),
                            Rc::new(GroupFn {
                                name: var.clone(),
                                group: false,
                                group_id: String::new(),
                                prefixed: false,
                                params,
                                body,
                            }),
                        );
                        self.promote(&var);
                    }
                    return;
                }
                // The callee once: DAG files are mostly `t = Op(...)`.
                let callee = match a.value.as_ref() {
                    Expr::Call(c) => Some(self.resolve(&c.func)),
                    _ => None,
                };
                if let (Some("RenderConfig"), Expr::Call(c)) = (callee.as_deref(), a.value.as_ref())
                {
                    for t in &a.targets {
                        if let Some(var) = name_of(t)
                            && self.spend(source_len(&c.arguments), c).is_some()
                        {
                            self.render_configs
                                .insert(var, c.arguments.keywords.to_vec());
                        }
                    }
                }
                let single = matches!(callee.as_deref(), Some("Dataset" | "Asset"));
                let datasets = match (a.value.as_ref(), callee.as_deref()) {
                    (Expr::List(_) | Expr::Tuple(_) | Expr::BinOp(_), _) => {
                        self.schedule_datasets(&a.value)
                    }
                    (Expr::Call(_), Some(c)) if single || is_dataset_expression(c) => {
                        self.schedule_datasets(&a.value)
                    }
                    _ => Vec::new(),
                };
                if !datasets.is_empty() {
                    // `orders = Dataset(...)` is bound as its name; an
                    // expression of several (`a | b`) as their list.
                    for t in &a.targets {
                        if let Some(var) = name_of(t) {
                            self.dataset_names.insert(var.clone());
                            if !single {
                                self.names.insert(var, Binding::Strs(datasets.clone()));
                            }
                        }
                    }
                    if !single {
                        return;
                    }
                }
                let value = self.value(&a.value, dag, prefix);
                for t in &a.targets {
                    if let Some(var) = name_of(t) {
                        self.opaque.remove(&var);
                    }
                    if let (Some(var), Some(v)) = (name_of(t), value.clone()) {
                        self.unbound.remove(&var);
                        self.names.insert(var, v);
                    } else if let (Some(var), None) = (name_of(t), &value) {
                        // The name no longer stands for what it did
                        // (`prev = None` before a second DAG's loop once
                        // chained that DAG to the first's last task).
                        self.names.remove(&var);
                        // Bound to what ripple cannot read (`loads["a"]`,
                        // `dag.get_task("b")`): a dependency on it is named.
                        if !matches!(
                            a.value.as_ref(),
                            Expr::NoneLiteral(_)
                                | Expr::BooleanLiteral(_)
                                | Expr::NumberLiteral(_)
                                | Expr::StringLiteral(_)
                        ) {
                            let text =
                                crate::text::clipped(&source_text(self.text, &*a.value), 200)
                                    .into_owned();
                            self.opaque.insert(
                                var.clone(),
                                format!("bound to `{text}`, which ripple cannot read as tasks"),
                            );
                        }
                        self.unbound.insert(var);
                    } else if let (
                        Expr::Tuple(ruff_python_ast::ExprTuple { elts, .. })
                        | Expr::List(ruff_python_ast::ExprList { elts, .. }),
                        Some(Binding::Tasks(tasks)),
                    ) = (t, &value)
                        && elts.len() == tasks.len()
                        && !elts.iter().any(|e| matches!(e, Expr::Starred(_)))
                    {
                        // `first, last = make_tasks(...)`: one task each.
                        for (e, task) in elts.iter().zip(tasks) {
                            if let Some(var) = name_of(e) {
                                self.names.insert(var, Binding::Tasks(vec![task.clone()]));
                            }
                        }
                    } else if let (
                        Expr::Tuple(ruff_python_ast::ExprTuple { elts, .. })
                        | Expr::List(ruff_python_ast::ExprList { elts, .. }),
                        Some(Binding::Tasks(tasks)),
                    ) = (t, &value)
                        && let [star] = elts
                            .iter()
                            .enumerate()
                            .filter(|(_, e)| matches!(e, Expr::Starred(_)))
                            .map(|(i, _)| i)
                            .collect::<Vec<_>>()[..]
                        && tasks.len() + 1 >= elts.len()
                    {
                        // `first, *rest = [...]`: one task each around the
                        // starred name, which takes the rest.
                        let after = elts.len() - star - 1;
                        let rest_end = tasks.len() - after;
                        for (i, e) in elts.iter().enumerate() {
                            let (target, taken) = match e {
                                Expr::Starred(x) => (&*x.value, tasks[star..rest_end].to_vec()),
                                _ if i < star => (e, vec![tasks[i].clone()]),
                                _ => (e, vec![tasks[rest_end + (i - star - 1)].clone()]),
                            };
                            if let Some(var) = name_of(target) {
                                self.unbound.remove(&var);
                                self.names.insert(var, Binding::Tasks(taken));
                            }
                        }
                    } else if let (
                        Expr::Tuple(ruff_python_ast::ExprTuple { elts, .. })
                        | Expr::List(ruff_python_ast::ExprList { elts, .. }),
                        Some(Binding::Strs(strings)),
                    ) = (t, &value)
                        && elts.len() == strings.len()
                        && elts.iter().all(|e| name_of(e).is_some())
                    {
                        // `src, dst = "raw.a", "mart.b"`.
                        for (e, string) in elts.iter().zip(strings) {
                            if let Some(var) = name_of(e) {
                                self.set_state(
                                    &var,
                                    (Some(Binding::Str(string.clone())), None, false),
                                );
                            }
                        }
                    } else if let Expr::Subscript(x) = t
                        && let Some(var) = name_of(&x.value)
                        && let Some(key) = self.string(&x.slice)
                        && let Some(Binding::Str(v)) = &value
                        && let Some(Binding::Dict(d)) = self.names.get_mut(&var)
                    {
                        // `params["table"] = "mart.b"`.
                        d.insert(key, v.clone());
                    } else if let Expr::Subscript(x) = t
                        && super::volatile::is_globals_item(t)
                    {
                        // `globals()[f"dag_{name}"] = ...`: that name, or
                        // any when the key is not known.
                        let names = match self.string(&x.slice) {
                            Some(key) => vec![key],
                            None => self
                                .names
                                .keys()
                                .chain(self.bools.keys())
                                .cloned()
                                .collect(),
                        };
                        self.forget_values(&names);
                    } else {
                        // `a, b = f()`, `d[k] = v`: no longer what they were.
                        self.forget_all(&store_names(t));
                    }
                }
            }
            Stmt::AnnAssign(a) => {
                if let Some(v) = a.value.as_deref() {
                    match (self.value(v, dag, prefix), name_of(&a.target)) {
                        (Some(v), Some(var)) => self.set_state(&var, (Some(v), None, false)),
                        _ => self.forget_all(&store_names(&a.target)),
                    }
                }
            }
            Stmt::Expr(e) if self.mutated(&e.value) => {}
            Stmt::Expr(e) => {
                self.value(&e.value, dag, prefix);
            }
            // `del t`, `import x as t`, `class t`: no longer what it was.
            Stmt::Delete(d) => {
                // `del ts[1]` of a list of tasks: followed at a literal
                // place, else the list forgotten (see `mutate_tasks`).
                for target in &d.targets {
                    if let Expr::Subscript(sub) = target
                        && let Some(var) = name_of(&sub.value)
                        && let Some(Binding::Tasks(tasks)) = self.names.get(&var).cloned()
                    {
                        let len = tasks.len() as i64;
                        let at = int(&sub.slice)
                            .map(|i| if i < 0 { len + i } else { i })
                            .filter(|i| (0..len).contains(i));
                        match at {
                            Some(i) => {
                                let mut tasks = tasks;
                                tasks.remove(i as usize);
                                self.names.insert(var, Binding::Tasks(tasks));
                            }
                            None => {
                                let line = self.line(target);
                                self.forget_tasks(&var, &format!("del {var}[...]"), line);
                            }
                        }
                    }
                }
                self.forget_values(&bound_names([std::slice::from_ref(s)]));
            }
            Stmt::Import(_) | Stmt::ClassDef(_) => {
                self.forget_values(&bound_names([std::slice::from_ref(s)]));
            }
            Stmt::FunctionDef(f) => {
                self.forget_values(&[f.name.to_string()]);
                fn head_of(
                    dec: &ruff_python_ast::Decorator,
                ) -> (String, Option<&ruff_python_ast::ExprCall>) {
                    match &dec.expression {
                        Expr::Call(c) => (dotted(&c.func), Some(c)),
                        other => (dotted(other), None),
                    }
                }
                let is_task = |h: &str| h == "task" || h.starts_with("task.");
                // `@setup` / `@teardown`: a TaskFlow task, alone or over a
                // `@task...` that says which.
                let role = f
                    .decorator_list
                    .iter()
                    .find_map(|d| setup_role(&head_of(d).0));
                let with_task = f.decorator_list.iter().any(|d| is_task(&head_of(d).0));
                for dec in &f.decorator_list {
                    let (mut head, call) = head_of(dec);
                    if setup_role(&head).is_some() {
                        if with_task {
                            continue;
                        }
                        head = "task".to_string();
                    }
                    let keywords: &[Keyword] = call.map_or(&[], |c| &c.arguments.keywords);
                    if (head == "dag" || head.ends_with(".dag"))
                        && !self.calls.contains_key(f.name.as_str())
                    {
                        // Airflow makes the DAG when the function is called.
                        let line = self.line(f);
                        self.warn(line, format!("`@dag` function `{}` is never called in this file, so Airflow loads no DAG from it; it is not read (call it: `{}()`)", f.name, f.name));
                        return;
                    }
                    if head == "dag" || head.ends_with(".dag") {
                        let d = self.dag_from_call(
                            call.map_or(&[][..], |c| &c.arguments.args),
                            keywords,
                            Some(f.name.to_string()),
                            self.line(f),
                        );
                        self.names.insert(f.name.to_string(), Binding::Dag(d));
                        let outer_returning = std::mem::take(&mut self.returning);
                        self.body(&f.body, Some(d), prefix);
                        self.returning = outer_returning;
                        return;
                    }
                    if head == "asset" || head.ends_with(".asset") {
                        // Airflow 3's `@asset`: a DAG named after the
                        // function, one task of that name writing the asset.
                        let line = self.line(f);
                        let name = f.name.to_string();
                        let uri = kw(keywords, "uri")
                            .or(kw(keywords, "name"))
                            .and_then(|e| self.string(e))
                            .unwrap_or_else(|| name.clone());
                        let uri = dataset_name(&uri);
                        let d = self.dag_from_call(&[], keywords, Some(name.clone()), line);
                        self.taskflows.insert(
                            name.clone(),
                            TaskFlow {
                                task_id: name.clone(),
                                operator: "@asset".to_string(),
                                returns_sql: None,
                                inlets: Vec::new(),
                                outlets: vec![uri.clone()],
                                teardown: None,
                            },
                        );
                        self.taskflow_task(
                            self.taskflows[&name].clone(),
                            Vec::new(),
                            line,
                            Some(d),
                            "",
                            false,
                        );
                        self.taskflows.remove(&name);
                        self.names.insert(name.clone(), Binding::Str(uri));
                        self.dataset_names.insert(name);
                        return;
                    }
                    if head == "task_group" || head.ends_with(".task_group") {
                        let group_id = kw(keywords, "group_id")
                            .or(call.and_then(|c| c.arguments.args.first()))
                            .and_then(|e| self.string(e))
                            .unwrap_or_else(|| f.name.to_string());
                        let params = parameter_names(f);
                        self.group_fns.insert(
                            f.name.to_string(),
                            Rc::new(GroupFn {
                                name: f.name.to_string(),
                                group: true,
                                group_id,
                                prefixed: prefixed(keywords),
                                params,
                                body: f.body.to_vec(),
                            }),
                        );
                        self.promote(f.name.as_str());
                        return;
                    }
                    if is_task(&head) {
                        let task_id = kw(keywords, "task_id")
                            .and_then(|e| self.string(e))
                            .unwrap_or_else(|| f.name.to_string());
                        let operator = if let (Some(teardown), false) = (role, with_task) {
                            if teardown { "@teardown" } else { "@setup" }.to_string()
                        } else if head == "task" {
                            "@task".to_string()
                        } else {
                            format!("@{head}")
                        };
                        // `@task.sql`: the function returns its SQL as a literal.
                        let returns_sql = if head == "task.sql" {
                            f.body.iter().find_map(|s| match s {
                                Stmt::Return(r) => r.value.as_deref().and_then(|v| self.string(v)),
                                _ => None,
                            })
                        } else {
                            None
                        };
                        // `return f"insert into mart.{t} ..."` of a parameter:
                        // the SQL is the call's, which is not read.
                        if head == "task.sql" && returns_sql.is_none() {
                            let line = self.line(f);
                            self.warn(line, format!("`@task.sql` function `{}` does not return a literal SQL ripple can read (it is built from parameters or at run time): its task's tables are not in the graph; return the SQL as a literal, or declare them (`inlets=`/`outlets=`)", f.name));
                        }
                        let inlets = self.uris(kw(keywords, "inlets"), None, "");
                        let outlets = self.uris(kw(keywords, "outlets"), None, "");
                        self.taskflows.insert(
                            f.name.to_string(),
                            TaskFlow {
                                task_id,
                                operator,
                                returns_sql,
                                inlets,
                                outlets,
                                teardown: role,
                            },
                        );
                        self.promote(f.name.as_str());
                        return;
                    }
                }
                // A later definition of this name replaces the earlier.
                self.group_fns.remove(f.name.as_str());
                self.plain_fns.retain(|p| p.name != f.name.as_str());
                if let Some(dec) = f.decorator_list.first() {
                    // A decorator ripple does not know: a call runs its
                    // wrapper, which may call the function with other
                    // arguments, or never. Its tasks are named as not read.
                    if self.contains_task_call(&f.body) {
                        let at = dec.range().start().to_usize();
                        self.warn_at(at, format!("function `{}` has a decorator ripple does not read (`@{}`): its calls may run it with other arguments or not at all, so the tasks it makes are not read; call an undecorated function to have them read", f.name, crate::text::clipped(&source_text(self.text, &dec.expression), 200)));
                    }
                    return;
                }
                // A plain function making tasks or DAGs (a factory): each
                // call reads its body with the call's arguments, as Airflow
                // runs it.
                let factory = GroupFn {
                    name: f.name.to_string(),
                    group: false,
                    group_id: String::new(),
                    prefixed: false,
                    params: parameter_names(f),
                    body: f.body.to_vec(),
                };
                // One that only wires tasks it is given (`def wire(up,
                // down): up >> down`) is read at its calls too.
                if self.contains_task_call(&f.body) || sets_dependencies(&f.body) {
                    self.group_fns.insert(f.name.to_string(), Rc::new(factory));
                    self.promote(f.name.as_str());
                } else {
                    self.plain_fns.push(factory);
                }
            }
            Stmt::For(f) => {
                // What it loops over is evaluated once (`for t in [Op(...)]`).
                let evaluated = if self.has_task_call(&*f.iter) {
                    self.value(&f.iter, dag, prefix)
                } else {
                    None
                };
                let makes = self.contains_task_call(&f.body);
                let sets = sets_dependencies(&f.body);
                let line = self.line(f);
                // A loop over literal values (`for x in ["a", "b"]`,
                // `range(1, 5)`) or over tasks (`for t in loads: start >> t`)
                // makes the same tasks, dependencies and names every run:
                // read its body once per value, as Airflow runs it.
                let values = match f.target.as_ref() {
                    Expr::Name(n) if f.orelse.is_empty() && !jumps(&f.body) => self
                        .loop_bindings(&f.iter, evaluated)
                        .map(|v| (n.id.to_string(), v)),
                    _ => None,
                };
                match values {
                    Some((name, values)) => {
                        if values.is_empty() {
                            // Airflow makes none of its tasks either.
                            self.skip(f);
                        }
                        for v in values {
                            if self.spent() || self.returning {
                                break;
                            }
                            self.loop_reads += 1;
                            if self.loop_reads > MAX_LOOP_READS {
                                self.warn(line, format!("more than {MAX_LOOP_READS} loop iterations in one file; the rest of this loop is not read"));
                                // What the unread iterations bind is unknown.
                                self.forget_all(&bound_names([&f.body[..]]));
                                break;
                            }
                            self.unbound.remove(&name);
                            self.bools.remove(&name);
                            self.names.insert(name.clone(), v);
                            self.body(&f.body, dag, prefix);
                        }
                    }
                    None => {
                        if makes {
                            self.warn(line, format!("tasks made in a loop are not expanded: ripple reads loops over literal lists, tuples, `range(...)` and lists of tasks (at most {MAX_LOOP_VALUES} values, no `break`/`continue`), not over runtime values; declare the tasks one by one, or loop over a literal list, to have them read"));
                            self.skip(f);
                        } else if sets {
                            self.warn(line, format!("dependencies set in a loop are not read: ripple reads loops over literal lists, tuples, `range(...)` and lists of tasks (at most {MAX_LOOP_VALUES} values, no `break`/`continue`), not over runtime values; set them one by one, or with `chain(...)`, to have them read"));
                        }
                        // Run any number of times: what it binds is unknown.
                        let mut names = bound_names([&f.body[..], &f.orelse[..]]);
                        names.extend(store_names(&f.target));
                        self.forget_looped(&names, line);
                    }
                }
            }
            Stmt::While(w) => {
                if self.contains_task_call(&w.body) {
                    let line = self.line(w);
                    self.warn(line, "tasks made in a loop are not expanded; declare them one by one to have them read".to_string());
                    self.skip(w);
                }
                let line = self.line(w);
                self.forget_looped(&bound_names([&w.body[..], &w.orelse[..]]), line);
            }
            // The body may stop at any statement, and any handler may run.
            Stmt::Try(t) => {
                let mut arms = vec![(Test::Unknown, vec![&t.body[..], &t.orelse[..]])];
                for h in &t.handlers {
                    let ruff_python_ast::ExceptHandler::ExceptHandler(h) = h;
                    arms.push((Test::Unknown, vec![&h.body[..]]));
                }
                self.alternatives(&arms, dag, prefix);
                self.body(&t.finalbody, dag, prefix);
            }
            Stmt::Match(m) => {
                if self.has_task_call(&*m.subject) {
                    self.value(&m.subject, dag, prefix);
                }
                let arms: Vec<(Test, Vec<&[Stmt]>)> = m
                    .cases
                    .iter()
                    .map(|c| {
                        let always = c.guard.is_none() && c.pattern.is_irrefutable();
                        let test = if always { Test::Always } else { Test::Unknown };
                        (test, vec![&c.body[..]])
                    })
                    .collect();
                self.alternatives(&arms, dag, prefix);
                // A capture binds the subject, a runtime value.
                let mut captured = Bound::default();
                for c in &m.cases {
                    captured.visit_pattern(&c.pattern);
                }
                self.forget_all(&captured.0);
            }
            // `ts += [Op(...)]`.
            Stmt::AugAssign(a) if self.has_task_call(&*a.value) => {
                let value = self.value(&a.value, dag, prefix);
                if let (Some(var), Some(Binding::Tasks(new))) = (name_of(&a.target), value) {
                    self.extend_tasks(var, new);
                }
            }
            // `table += "_v2"`: the name's new value as `table + "_v2"`,
            // or no value known at all (kept, it named the old table).
            // Tasks stay as they were (`ts += others` adds, never removes).
            Stmt::AugAssign(a) => {
                if let Some(var) = name_of(&a.target)
                    && matches!(
                        self.names.get(&var),
                        Some(Binding::Str(_) | Binding::Strs(_) | Binding::Dict(_))
                    )
                {
                    let sum = Expr::BinOp(ruff_python_ast::ExprBinOp {
                        node_index: Default::default(),
                        range: a.range,
                        left: a.target.clone(),
                        op: a.op,
                        right: a.value.clone(),
                    });
                    match self.value(&sum, dag, prefix) {
                        Some(v) => {
                            self.names.insert(var, v);
                        }
                        None => {
                            self.names.remove(&var);
                            self.unbound.insert(var);
                        }
                    }
                }
            }
            Stmt::Return(r) => {
                self.returned = r.value.as_deref().and_then(|v| self.value(v, dag, prefix));
                self.returning = true;
            }
            Stmt::If(i) => {
                let arms: Vec<(Test, Vec<&[Stmt]>)> =
                    std::iter::once((Test::Expr(&i.test), vec![&i.body[..]]))
                        .chain(i.elif_else_clauses.iter().map(|c| {
                            let test = c.test.as_ref().map_or(Test::Always, Test::Expr);
                            (test, vec![&c.body[..]])
                        }))
                        .collect();
                self.alternatives(&arms, dag, prefix);
            }
            _ => {}
        }
    }

    /// The dict a keyword argument is, when known.
    fn dict_kw(
        &mut self,
        keywords: &[Keyword],
        name: &str,
        dag: Option<usize>,
        prefix: &str,
    ) -> Option<BTreeMap<String, String>> {
        match self.value(kw(keywords, name)?, dag, prefix) {
            Some(Binding::Dict(m)) => Some(m),
            _ => Some([(UNKNOWN_KEYS.to_string(), String::new())].into()),
        }
    }

    /// Reads arms of which at most one runs (an `if` chain, `match` cases,
    /// a `try` body and its handlers). Every arm is read for its tasks, but
    /// a name an arm binds is that arm's only if the arm runs: after
    /// `t = "mart.daily"`, `if False: t = "mart.never"` left `t` naming
    /// the table production never writes. Tests known statically pick
    /// their arm; otherwise a name the arms leave different stands for
    /// nothing known (its SQL is then reported as depending on runtime
    /// values).
    fn alternatives(&mut self, arms: &[(Test, Vec<&[Stmt]>)], dag: Option<usize>, prefix: &str) {
        let names = bound_names(arms.iter().flat_map(|(_, b)| b.iter().copied()));
        let state = |r: &Self, n: &String| -> NameState {
            (
                r.names.get(n).cloned(),
                r.bools.get(n).copied(),
                r.unbound.contains(n),
            )
        };
        let before: Vec<NameState> = names.iter().map(|n| state(self, n)).collect();
        // What each arm that may run leaves, and whether running none may
        // happen.
        let mut outcomes: Vec<Vec<NameState>> = Vec::new();
        // Whether each outcome's arm ran a `return`.
        let mut returns: Vec<bool> = Vec::new();
        let mut decided = false;
        let mut first_return = None;
        for (test, bodies) in arms {
            for (n, b) in names.iter().zip(&before) {
                self.set_state(n, b.clone());
            }
            self.returning = false;
            let known = match test {
                Test::Expr(t) => {
                    // `if (t := Op(...)):`.
                    if self.has_task_call(t) {
                        self.value(t, dag, prefix);
                    }
                    self.truth(t)
                }
                Test::Always => Some(true),
                Test::Unknown => None,
            };
            // An arm that cannot run (`if ENV == "prod":` of a known `ENV`,
            // the `else` after it) makes nothing, as in Airflow (round 28:
            // both arms' `publish` made a false duplicate, and `if AUDIT:`
            // of a false `AUDIT` a task Airflow never has).
            if decided || known == Some(false) {
                for b in bodies {
                    if let (Some(first), Some(last)) = (b.first(), b.last()) {
                        let never: Vec<Span> =
                            within(&self.task_calls, (span(first).0, span(last).1)).collect();
                        self.handled.extend(never);
                    }
                }
                continue;
            }
            for b in bodies {
                self.body(b, dag, prefix);
            }
            outcomes.push(names.iter().map(|n| state(self, n)).collect());
            returns.push(self.returning);
            if self.returning && first_return.is_none() {
                first_return = Some(self.statement.get());
            }
            decided = known == Some(true);
        }
        if !decided {
            outcomes.push(before);
            returns.push(false);
        }
        // Returned in every way it may run, or in none; else the rest of
        // the function runs or not at run time: it is read, and said so.
        self.returning = returns.iter().all(|r| *r);
        if !self.returning
            && let Some(at) = first_return
        {
            self.warn_at(at, "a `return` under a condition ripple cannot decide: what the function makes after it is read as made, though a run may not make it".to_string());
        }
        for (k, n) in names.iter().enumerate() {
            let first = &outcomes[0][k];
            if outcomes.iter().all(|o| o[k] == *first) {
                self.set_state(n, first.clone());
            } else if outcomes.iter().any(|o| is_value(&o[k])) {
                self.forget(n);
            }
            // Otherwise tasks an arm makes stay (every arm is read).
        }
    }

    fn set_state(&mut self, n: &str, (binding, truth, unbound): NameState) {
        match binding {
            Some(b) => self.names.insert(n.to_string(), b),
            None => self.names.remove(n),
        };
        match truth {
            Some(t) => self.bools.insert(n.to_string(), t),
            None => self.bools.remove(n),
        };
        if unbound {
            self.unbound.insert(n.to_string());
        } else {
            self.unbound.remove(n);
        }
    }

    /// Whether `e` is a method changing a value a name stands for in place
    /// (`tables.append("c")`, `params.update(...)`), read here: the known
    /// change is made, any other forgets the value.
    fn mutated(&mut self, e: &Expr) -> bool {
        let Expr::Call(call) = e else { return false };
        let Expr::Attribute(attr) = call.func.as_ref() else {
            return false;
        };
        let Some(var) = name_of(&attr.value) else {
            return false;
        };
        if !matches!(self.bound(&var), Some(Binding::Strs(_) | Binding::Dict(_))) {
            return false;
        }
        let method = attr.attr.as_str();
        if !super::volatile::MUTATING_METHODS.contains(&method) {
            return false;
        }
        let args = &call.arguments;
        // `made = []`, then `made.append(op)`: a list of tasks (see `call`).
        let tasks = |r: &Self, x: &Expr| {
            r.has_task_call(x)
                || matches!(x, Expr::Name(n) if matches!(r.names.get(n.id.as_str()), Some(Binding::Tasks(_))))
        };
        if args.args.iter().any(|x| tasks(self, x)) {
            return false;
        }
        let known = match (method, &args.args[..], args.keywords.is_empty()) {
            ("append", [x], true) => self.string(x).map(|x| vec![x]),
            ("extend", [x], true) => match x {
                Expr::List(_) | Expr::Tuple(_) => match self.value(x, None, "") {
                    Some(Binding::Strs(v)) => Some(v),
                    _ => None,
                },
                _ => None,
            },
            _ => None,
        };
        let list = matches!(self.bound(&var), Some(Binding::Strs(_)));
        match known {
            Some(new) if list => {
                let _ = self.spend_here(new.iter().map(|t| t.len() + 24).sum());
                if let Some(Binding::Strs(v)) = self.names.get_mut(&var) {
                    v.extend(new);
                }
            }
            _ => self.forget(&var),
        }
        true
    }

    /// `n` now stands for a runtime value, unless it stands for tasks (a
    /// task made stays made).
    fn forget(&mut self, n: &str) {
        if matches!(
            self.names.get(n),
            Some(Binding::Tasks(_) | Binding::Dag(_) | Binding::Partial(_))
        ) {
            return;
        }
        self.names.remove(n);
        self.bools.remove(n);
        self.unbound.insert(n.to_string());
    }

    /// Forgets those of `names` that stand for a value: a name never bound
    /// here stays one that may name a task.
    fn forget_values(&mut self, names: &[String]) {
        for n in names {
            if self.bools.contains_key(n)
                || matches!(
                    self.names.get(n),
                    Some(Binding::Str(_) | Binding::Strs(_) | Binding::Dict(_))
                )
            {
                self.forget(n);
            }
        }
    }

    /// Forgets what a loop ripple does not read binds, tasks too: after
    /// `prev = t` in it, `prev` is the last task it made, not the one
    /// before the loop (round 29: `begin >> done` was read where Airflow
    /// has `clean >> done`). A dependency on such a name is warned.
    fn forget_looped(&mut self, names: &[String], line: u32) {
        for n in names {
            if matches!(self.names.get(n), Some(Binding::Tasks(_))) {
                self.names.remove(n);
                self.unbound.insert(n.clone());
                self.opaque.insert(
                    n.clone(),
                    format!("rebound in a loop ripple does not read (line {line})"),
                );
            } else {
                self.forget(n);
            }
        }
    }

    fn forget_all(&mut self, names: &[String]) {
        for n in names {
            self.forget(n);
        }
    }

    /// Evaluates what is statically known of `e`; records tasks and
    /// dependencies along the way.
    fn value(&mut self, e: &Expr, dag: Option<usize>, prefix: &str) -> Option<Binding> {
        match e {
            Expr::StringLiteral(_) | Expr::FString(_) => self.string(e).map(Binding::Str),
            Expr::List(l) => self.sequence(&l.elts, dag, prefix),
            Expr::Tuple(t) => self.sequence(&t.elts, dag, prefix),
            Expr::Dict(d) => {
                let mut map = BTreeMap::new();
                // `{"a": Op(...)}`: the tasks its keys and values make.
                let mut tasks = Vec::new();
                for item in &d.items {
                    let made = item
                        .key
                        .iter()
                        .chain([&item.value])
                        .filter(|x| self.has_task_call(*x));
                    let made: Vec<&Expr> = made.collect();
                    if !made.is_empty() {
                        for x in made {
                            if let Some(Binding::Tasks(t)) = self.value(x, dag, prefix) {
                                tasks.extend(t);
                            }
                        }
                        continue;
                    }
                    // `{**base, "t": "x"}`: the keys of a known dict, else
                    // keys ripple does not know.
                    let Some(key_expr) = item.key.as_ref() else {
                        match self.value(&item.value, dag, prefix) {
                            Some(Binding::Dict(base)) => map.extend(base),
                            _ => {
                                map.insert(UNKNOWN_KEYS.to_string(), String::new());
                            }
                        }
                        continue;
                    };
                    // Booleans and numbers are kept as Python writes them;
                    // any other value (`Param(5)`, a nested dict) is one
                    // ripple does not know, never left out.
                    let value = self.string(&item.value).or_else(|| match &item.value {
                        Expr::BooleanLiteral(b) => {
                            Some(if b.value { "True" } else { "False" }.to_string())
                        }
                        Expr::NumberLiteral(_) => Some(source_text(self.text, &item.value)),
                        _ => None,
                    });
                    match self.string(key_expr) {
                        Some(k) => {
                            map.insert(k, value.unwrap_or_else(|| UNKNOWN_VALUE.to_string()));
                        }
                        None => {
                            map.insert(UNKNOWN_KEYS.to_string(), String::new());
                        }
                    }
                }
                if tasks.is_empty() {
                    Some(Binding::Dict(map))
                } else {
                    Some(Binding::Tasks(tasks))
                }
            }
            Expr::ListComp(c) => self.comprehension(&[&c.elt], &c.generators, e, dag, prefix),
            Expr::SetComp(c) => self.comprehension(&[&c.elt], &c.generators, e, dag, prefix),
            Expr::Generator(c) => self.comprehension(&[&c.elt], &c.generators, e, dag, prefix),
            Expr::DictComp(c) => {
                let elts: Vec<&Expr> = c.key.as_deref().into_iter().chain([&*c.value]).collect();
                self.comprehension(&elts, &c.generators, e, dag, prefix)
            }
            // `a = Op(...) if x else Op(...)`: either may run, so both are
            // read (as both branches of an `if` are).
            Expr::If(i) if self.has_task_call(e) => {
                let mut tasks = Vec::new();
                for x in [&i.test, &i.body, &i.orelse] {
                    if self.has_task_call(&**x)
                        && let Some(Binding::Tasks(t)) = self.value(x, dag, prefix)
                    {
                        tasks.extend(t);
                    }
                }
                Some(Binding::Tasks(tasks))
            }
            // `(t := Op(...))`: bound as an assignment is.
            Expr::Named(n) => {
                let value = self.value(&n.value, dag, prefix);
                if let Some(var) = name_of(&n.target) {
                    match &value {
                        Some(v) => {
                            self.unbound.remove(&var);
                            self.names.insert(var, v.clone());
                        }
                        None => {
                            self.names.remove(&var);
                            self.unbound.insert(var);
                        }
                    }
                }
                value
            }
            Expr::Starred(x) => self.value(&x.value, dag, prefix),
            // `ts[0]`, `ts[-1]`, `ts[1:]` of a list of tasks.
            Expr::Subscript(x) => {
                let Some(Binding::Tasks(tasks)) = self.value(&x.value, dag, prefix) else {
                    return None;
                };
                let at = |e: &Expr| -> Option<i64> {
                    match e {
                        Expr::UnaryOp(u) if u.op == ruff_python_ast::UnaryOp::USub => {
                            int(&u.operand).map(|i| -i)
                        }
                        _ => int(e),
                    }
                };
                let len = tasks.len() as i64;
                let clamp = |i: i64| (if i < 0 { i + len } else { i }).clamp(0, len) as usize;
                match x.slice.as_ref() {
                    Expr::Slice(sl) if sl.step.is_none() => {
                        let from = match sl.lower.as_deref() {
                            Some(e) => clamp(at(e)?),
                            None => 0,
                        };
                        let to = match sl.upper.as_deref() {
                            Some(e) => clamp(at(e)?),
                            None => tasks.len(),
                        };
                        Some(Binding::Tasks(
                            tasks.get(from..to).unwrap_or_default().to_vec(),
                        ))
                    }
                    e => {
                        let i = at(e)?;
                        let i = if i < 0 { i + len } else { i };
                        let task = tasks.get(usize::try_from(i).ok()?)?;
                        Some(Binding::Tasks(vec![task.clone()]))
                    }
                }
            }
            Expr::Name(n) => {
                let bound = self.bound(n.id.as_str())?;
                self.spend(binding_bytes(bound), n)?;
                Some(bound.clone())
            }
            Expr::BinOp(b) if matches!(b.op, Operator::RShift | Operator::LShift) => {
                // Python has no `>>` between two lists: Airflow refuses the
                // file (`TypeError`), so no DAG of it loads.
                if makes_list(&b.left) && makes_list(&b.right) && !self.spent() {
                    let (line, column) = self.position(b.range.start().to_usize());
                    self.warnings.push(Diagnostic::error(
                        "airflow-dynamic",
                        Some(self.file.to_string()),
                        line,
                        column,
                        "a list of tasks `>>` (or `<<`) a list of tasks: Python has no such operation between two lists, so Airflow refuses this file (`TypeError`) and loads no DAG from it; join them through a task, or use `cross_downstream(...)`".to_string(),
                    ));
                }
                // `a >> Label("x") >> b`: an edge label relays `a` to `b`.
                let label = |x: &Expr| matches!(x, Expr::Call(c) if matches!(self.resolve(&c.func).as_str(), "Label" | "EdgeModifier"));
                if label(&b.right) {
                    return Some(Binding::Tasks(self.tasks_of(&b.left, dag, prefix)));
                }
                if label(&b.left) {
                    return Some(Binding::Tasks(self.tasks_of(&b.right, dag, prefix)));
                }
                let left = self.tasks_of(&b.left, dag, prefix);
                let right = self.tasks_of(&b.right, dag, prefix);
                let (up, down) = if b.op == Operator::RShift {
                    (&left, &right)
                } else {
                    (&right, &left)
                };
                self.depend(dag, up, down, b.range.start().to_usize());
                Some(Binding::Tasks(right))
            }
            Expr::Call(call) => self.call(call, dag, prefix),
            // Its body runs when it is called: a lambda bound to a name is
            // read at its calls (see `Stmt::Assign`).
            Expr::Lambda(_) => None,
            Expr::BinOp(b) if matches!(b.op, Operator::Add) && !self.has_task_call(e) => {
                self.string(e).map(Binding::Str)
            }
            // Anything else that makes tasks (`Op(...).output`, `a or
            // Op(...)`, `[Op(...)] + [Op(...)]`): what is inside it is
            // evaluated, as Python does, and it stands for those tasks.
            _ if self.has_task_call(e) => {
                let mut children = Children::default();
                walk_expr(&mut children, e);
                let mut tasks = Vec::new();
                for x in children.0 {
                    if self.has_task_call(x)
                        && let Some(Binding::Tasks(t)) = self.value(x, dag, prefix)
                    {
                        tasks.extend(t);
                    }
                }
                Some(Binding::Tasks(tasks))
            }
            _ => None,
        }
    }

    fn sequence(&mut self, elts: &[Expr], dag: Option<usize>, prefix: &str) -> Option<Binding> {
        let mut strings = Vec::new();
        let mut tasks = Vec::new();
        for e in elts {
            match self.value(e, dag, prefix) {
                Some(Binding::Str(s)) => strings.push(s),
                Some(Binding::Tasks(t)) => tasks.extend(t),
                _ => {
                    if let Expr::Name(n) = e {
                        tasks.push(n.id.to_string());
                    }
                }
            }
        }
        if tasks.is_empty() && strings.len() == elts.len() {
            Some(Binding::Strs(strings))
        } else {
            Some(Binding::Tasks(tasks))
        }
    }

    /// The tasks `e` stands for. A name bound to nothing is kept as a task
    /// id, so that a dependency on an unknown task is reported.
    fn tasks_of(&mut self, e: &Expr, dag: Option<usize>, prefix: &str) -> Vec<String> {
        match self.value(e, dag, prefix) {
            Some(Binding::Tasks(t)) => t,
            None => match e {
                Expr::Name(n) if let Some(text) = self.opaque.get(n.id.as_str()) => {
                    let at = e.range().start().to_usize();
                    let message = format!(
                        "a dependency on `{}`, {text}, is not read; name the tasks (`a >> b`) to have it read",
                        n.id
                    );
                    self.warn_at(at, message);
                    Vec::new()
                }
                Expr::Name(n) if !self.unbound.contains(n.id.as_str()) => vec![n.id.to_string()],
                Expr::Name(_) | Expr::NoneLiteral(_) => Vec::new(),
                // `r["a"]` of a task's result (`multiple_outputs`): an
                // XComArg of that task.
                Expr::Subscript(sub)
                    if matches!(sub.slice.as_ref(), Expr::StringLiteral(_))
                        && matches!(self.value(&sub.value, dag, prefix), Some(Binding::Tasks(t)) if t.len() == 1) =>
                {
                    self.tasks_of(&sub.value, dag, prefix)
                }
                // `s.output`: an XComArg stands for its task.
                Expr::Attribute(a)
                    if a.attr.as_str() == "output"
                        && matches!(self.value(&a.value, dag, prefix), Some(Binding::Tasks(_))) =>
                {
                    self.tasks_of(&a.value, dag, prefix)
                }
                _ => {
                    // `d["x"] >> t`, `get_tasks() >> t`: named, not dropped.
                    let at = e.range().start().to_usize();
                    let text = crate::text::clipped(&source_text(self.text, e), 200).into_owned();
                    self.warn_at(at, format!("a dependency on `{text}`, which ripple cannot read as tasks, is not read; name the tasks (`a >> b`) to have it read"));
                    Vec::new()
                }
            },
            _ => Vec::new(),
        }
    }

    /// The file of the project a `from m import ...` names (`m.py` or
    /// `m/__init__.py`, beside the DAG file or at the project's root, as
    /// Airflow's path has them), if it is one.
    fn project_module(&self, i: &ruff_python_ast::StmtImportFrom) -> Option<String> {
        let module = i.module.as_ref().map(|m| m.as_str()).unwrap_or_default();
        let path = module.replace('.', "/");
        let bases: &[&Path] = if i.level > 0 {
            &[self.dag_dir]
        } else {
            &[self.dag_dir, self.root]
        };
        for base in bases {
            for candidate in [format!("{path}.py"), format!("{path}/__init__.py")] {
                let full = base.join(&candidate);
                if !path.is_empty() && full.is_file() {
                    let shown = full.strip_prefix(self.root).unwrap_or(&full);
                    return Some(shown.display().to_string());
                }
            }
        }
        None
    }

    fn call(
        &mut self,
        call: &ruff_python_ast::ExprCall,
        dag: Option<usize>,
        prefix: &str,
    ) -> Option<Binding> {
        // A function of another module of the project, called where tasks
        // are made: what it makes is not read, and said so (a factory in
        // `include/` once dropped its tasks in silence).
        if let Expr::Name(n) = call.func.as_ref()
            && let Some(file) = self.local_modules.get(n.id.as_str())
            && (dag.is_some() || kw(&call.arguments.keywords, "dag").is_some())
            && !self.group_fns.contains_key(n.id.as_str())
            && !self.taskflows.contains_key(n.id.as_str())
        {
            let message = format!(
                "`{}(...)` is a function of `{file}`, which ripple does not read (it reads the DAG files): the tasks it makes, their tables and dependencies are not in the graph; declare the tasks in the DAG file, or list their tables (`inlets=`/`outlets=`) where they are made",
                n.id
            );
            self.warn_at(call.range().start().to_usize(), message);
        }
        let name = self.resolve(&call.func);
        let args = &call.arguments.args;
        let keywords = &call.arguments.keywords;
        let line = self.line(call);
        // Read: it makes its task below, or says why not.
        if self.task_calls.contains(&span(call)) {
            self.handled.insert(span(call));
        }
        // `a.set_downstream(b)`, `a.set_upstream(b)`, `op.expand(...)`.
        if let Expr::Attribute(attr) = call.func.as_ref() {
            match attr.attr.as_str() {
                "set_downstream" | "set_upstream" => {
                    let me = self.tasks_of(&attr.value, dag, prefix);
                    let other: Vec<String> = args
                        .iter()
                        .flat_map(|a| self.tasks_of(a, dag, prefix))
                        .collect();
                    let at = call.range().start().to_usize();
                    if attr.attr.as_str() == "set_downstream" {
                        self.depend(dag, &me, &other, at);
                    } else {
                        self.depend(dag, &other, &me, at);
                    }
                    return None;
                }
                "partial" => {
                    let callee = self.resolve(&attr.value);
                    self.spend(source_len(&call.arguments), call)?;
                    return Some(Binding::Partial(Box::new(Partial {
                        callee,
                        keywords: keywords.to_vec(),
                    })));
                }
                "expand" | "expand_kwargs" => {
                    return self.mapped(call, attr, dag, prefix);
                }
                // `t.as_setup()`, `t.as_teardown(setups=s)`: the task
                // itself, marked, its setups made its upstreams (`s >> t`).
                "as_setup" | "as_teardown" => {
                    let me = self.tasks_of(&attr.value, dag, prefix);
                    let teardown = attr.attr.as_str() == "as_teardown";
                    self.mark_role(dag, &me, teardown);
                    if teardown && let Some(setups) = kw(keywords, "setups") {
                        let setups = self.tasks_of(setups, dag, prefix);
                        self.mark_role(dag, &setups, false);
                        self.depend(dag, &setups, &me, call.range().start().to_usize());
                    }
                    return Some(Binding::Tasks(me));
                }
                _ => {}
            }
        }
        match name.as_str() {
            "DAG" => return Some(Binding::Dag(self.dag_from_call(args, keywords, None, line))),
            "chain" | "chain_linear" => {
                let line_at = call.range().start().to_usize();
                let groups = self.chain_groups(args, &name, line, dag, prefix)?;
                for pair in groups.windows(2) {
                    let ((up_list, up), (down_list, down)) = (&pair[0], &pair[1]);
                    if name == "chain_linear" {
                        // Each argument's tasks after all of the one before.
                        self.depend(dag, up, down, line_at);
                    } else if *up_list && *down_list {
                        // Two lists in a row pair up, element by element.
                        if up.len() != down.len() {
                            self.warn(line, format!("chain() of two lists of different lengths ({} and {}): Airflow refuses it; the pair is left out", up.len(), down.len()));
                            continue;
                        }
                        for (u, d) in up.iter().zip(down) {
                            self.depend(
                                dag,
                                std::slice::from_ref(u),
                                std::slice::from_ref(d),
                                line_at,
                            );
                        }
                    } else {
                        self.depend(dag, up, down, line_at);
                    }
                }
                return groups.last().map(|g| Binding::Tasks(g.1.clone()));
            }
            "cross_downstream" => {
                let from = kw(keywords, "from_tasks").or(args.first());
                let to = kw(keywords, "to_tasks").or(args.get(1));
                if let (Some(from), Some(to)) = (from, to) {
                    let (from, to) = (
                        self.tasks_of(from, dag, prefix),
                        self.tasks_of(to, dag, prefix),
                    );
                    self.depend(dag, &from, &to, call.range().start().to_usize());
                }
                return None;
            }
            "Dataset" | "Asset" => {
                // Airflow 3's Asset is (name, uri), either alone naming both.
                let uri = kw(keywords, "uri")
                    .or(if name == "Asset" { args.get(1) } else { None })
                    .or(kw(keywords, "name"))
                    .or(args.first())
                    .and_then(|a| self.string(a));
                return uri.map(|u| Binding::Str(dataset_name(&u)));
            }
            "TaskGroup" => {
                // Made outside `with`: entered later (`with tg:`) or named
                // by its tasks (`task_group=tg`).
                let group = kw(keywords, "group_id")
                    .or(args.first())
                    .and_then(|e| self.string(e))?;
                let parent = self.parent_prefix(keywords, prefix);
                let (key, _) =
                    self.open_group(&group, &parent, prefixed(keywords), suffixed(keywords));
                self.open_groups.pop();
                return Some(Binding::Tasks(vec![format!("{GROUP_MARK}{key}")]));
            }
            "DbtTaskGroup" | "DbtDag" => {
                return self.cosmos(call, &name, dag, prefix);
            }
            "DatasetAlias" | "AssetAlias" => {
                self.warn(line, format!("`{name}` resolves to datasets at runtime; name the datasets (`Dataset(...)` / `Asset(...)`) to have the edge read"));
                return None;
            }
            _ => {}
        }
        if let Some(g) = self.group_fns.get(&name).cloned() {
            return Some(self.call_group_fn(&g, call, dag, prefix));
        }
        if let Some(flow) = self.taskflows.get(&name).cloned() {
            self.spend(flow_bytes(&flow), call)?;
            // Task arguments are its upstreams, and `x.output` inside them
            // (`consume({"k": p.output})`).
            // `**{"k": r}` spreads a literal dict: its values are
            // arguments like any other; anything else spread is unknown.
            let spread: Vec<&Expr> = keywords
                .iter()
                .filter(|k| k.arg.is_none())
                .flat_map(|k| match &k.value {
                    Expr::Dict(d) => d.items.iter().map(|i| &i.value).collect(),
                    _ => Vec::new(),
                })
                .collect();
            for k in keywords.iter().filter(|k| k.arg.is_none()) {
                if !matches!(k.value, Expr::Dict(_)) {
                    let at = k.range().start().to_usize();
                    self.warn_at(at, format!("`{name}(**...)` spreads values ripple does not know: the tasks whose results they are, the task's upstreams, are not read; pass them by name"));
                }
            }
            let mut upstream: Vec<String> = args
                .iter()
                .chain(
                    keywords
                        .iter()
                        .filter(|k| k.arg.is_some())
                        .map(|k| &k.value),
                )
                .chain(spread.iter().copied())
                .flat_map(|a| self.tasks_of(a, dag, prefix))
                .collect();
            for a in args.iter().chain(keywords.iter().map(|k| &k.value)) {
                if !matches!(a, Expr::Attribute(_)) {
                    upstream.extend(self.xcom_upstreams(a, dag, prefix));
                }
            }
            let mut seen = HashSet::new();
            upstream.retain(|u| seen.insert(u.clone()));
            return Some(self.taskflow_task(flow, upstream, line, dag, prefix, false));
        }
        if is_operator(&name) {
            return self.operator(keywords, &name, line, dag, prefix, false, Vec::new());
        }
        self.other_call(call, &name, dag, prefix)
    }

    /// A call of something that is no operator, `@task` or task factory.
    /// Python still evaluates its arguments, and its receiver
    /// (`ts.append(Op(...))`, `list(Op(...) for i in range(3))`,
    /// `Op(...).as_setup()`): the tasks made there are read. `append`,
    /// `extend` and `add` add them to the list a name is bound to; `list`,
    /// `tuple`, `set` and `sorted` stand for them, and a method of a task
    /// for the task.
    fn other_call(
        &mut self,
        call: &ruff_python_ast::ExprCall,
        name: &str,
        dag: Option<usize>,
        prefix: &str,
    ) -> Option<Binding> {
        // A list of tasks changed in place (`ts.reverse()`, `ts.insert(0,
        // t)`): followed, or the name forgotten, never left as it was
        // (`ts[0] >> a` once named a task Airflow's list no longer has
        // there).
        if let Expr::Attribute(a) = call.func.as_ref()
            && let Some(var) = name_of(&a.value)
            && matches!(self.names.get(&var), Some(Binding::Tasks(_)))
            && super::volatile::MUTATING_METHODS.contains(&name)
            && !matches!(name, "append" | "extend" | "add")
        {
            let line = self.line(call);
            let popped = self.mutate_tasks(&var, name, (&call.arguments, line), dag, prefix);
            return popped.map(|t| Binding::Tasks(vec![t]));
        }
        let mut receiver = Vec::new();
        if let Expr::Attribute(a) = call.func.as_ref()
            && self.has_task_call(&*a.value)
            && let Some(Binding::Tasks(t)) = self.value(&a.value, dag, prefix)
        {
            receiver = t;
        }
        // `files.map(f)`, `a.zip(b)`, `a.concat(b)` of task results: an
        // XComArg of them all (what `.expand(...)` then waits for).
        let xcom = matches!(name, "map" | "zip" | "concat");
        if xcom
            && let Expr::Attribute(a) = call.func.as_ref()
            && let Some(var) = name_of(&a.value)
            && let Some(Binding::Tasks(t)) = self.names.get(&var)
        {
            receiver = t.clone();
        }
        let mut made = Vec::new();
        let args = &call.arguments;
        for x in args
            .args
            .iter()
            .chain(args.keywords.iter().map(|k| &k.value))
        {
            if self.has_task_call(x)
                && let Some(Binding::Tasks(t)) = self.value(x, dag, prefix)
            {
                made.extend(t);
            } else if let Expr::Name(n) = x
                && let Some(Binding::Tasks(t)) = self.names.get(n.id.as_str())
            {
                // `ts.append(op)`: a name bound to tasks stands for them.
                made.extend(t.iter().cloned());
            }
        }
        match (call.func.as_ref(), name) {
            (Expr::Attribute(a), "append" | "extend" | "add") if !made.is_empty() => {
                if let Some(var) = name_of(&a.value) {
                    self.extend_tasks(var, made);
                }
                None
            }
            (Expr::Name(_), "list" | "tuple" | "set" | "sorted" | "reversed")
                if !made.is_empty() && !self.shadowed.contains(name) =>
            {
                Some(Binding::Tasks(made))
            }
            _ if xcom && !receiver.is_empty() => {
                receiver.extend(made);
                Some(Binding::Tasks(receiver))
            }
            _ if !receiver.is_empty() => Some(Binding::Tasks(receiver)),
            _ => None,
        }
    }

    /// `var.method(args)` on a list of tasks: `reverse`, `clear`, `pop`
    /// (of a literal place), `insert` (at a literal place) and `remove` (of
    /// a task) are followed; anything else forgets the list, with a
    /// warning (its items are then runtime values). What `pop` takes out.
    fn mutate_tasks(
        &mut self,
        var: &str,
        method: &str,
        (args, line): (&ruff_python_ast::Arguments, u32),
        dag: Option<usize>,
        prefix: &str,
    ) -> Option<String> {
        let Some(Binding::Tasks(mut tasks)) = self.names.get(var).cloned() else {
            return None;
        };
        let place = |i: i64, len: usize| -> Option<usize> {
            let len = i64::try_from(len).ok()?;
            let at = if i < 0 { len + i } else { i };
            (0..len).contains(&at).then_some(at as usize)
        };
        let mut popped = None;
        let followed = args.keywords.is_empty()
            && match (method, &args.args[..]) {
                ("reverse", []) => {
                    tasks.reverse();
                    true
                }
                ("clear", []) => {
                    tasks.clear();
                    true
                }
                ("pop", []) => {
                    popped = tasks.pop();
                    popped.is_some()
                }
                ("pop", [i]) => match int(i).and_then(|i| place(i, tasks.len())) {
                    Some(at) => {
                        popped = Some(tasks.remove(at));
                        true
                    }
                    None => false,
                },
                ("insert", [i, x]) => {
                    let new = match self.value(x, dag, prefix) {
                        Some(Binding::Tasks(t)) if t.len() == 1 => t.into_iter().next(),
                        _ => None,
                    };
                    match (int(i), new) {
                        (Some(i), Some(t)) => {
                            let len = tasks.len() as i64;
                            let at = if i < 0 { (len + i).max(0) } else { i.min(len) };
                            tasks.insert(at as usize, t);
                            true
                        }
                        _ => false,
                    }
                }
                ("remove", [x]) => match self.value(x, dag, prefix) {
                    Some(Binding::Tasks(t)) if t.len() == 1 => {
                        match tasks.iter().position(|x| *x == t[0]) {
                            Some(at) => {
                                tasks.remove(at);
                                true
                            }
                            None => false,
                        }
                    }
                    _ => false,
                },
                _ => false,
            };
        if followed {
            self.names.insert(var.to_string(), Binding::Tasks(tasks));
        } else {
            self.forget_tasks(var, &format!("{var}.{method}(...)"), line);
        }
        popped
    }

    /// Forgets the list of tasks `var` after `change` (at `line`), which
    /// ripple does not follow: its items are runtime values from here, and
    /// a warning says so.
    fn forget_tasks(&mut self, var: &str, change: &str, line: u32) {
        self.names.remove(var);
        self.unbound.insert(var.to_string());
        self.warn(line, format!("`{change}` changes the list of tasks `{var}` in a way ripple does not follow: dependencies through its items after this are not read"));
    }

    /// Adds tasks to the list `var` is bound to (`ts = []`, then
    /// `ts.append(Op(...))` or `ts += [Op(...)]`).
    fn extend_tasks(&mut self, var: String, new: Vec<String>) {
        let _ = self.spend_here(new.iter().map(|t| t.len() + 24).sum());
        let mut tasks = match self.names.remove(&var) {
            Some(Binding::Tasks(t)) => t,
            _ => Vec::new(),
        };
        tasks.extend(new);
        self.unbound.remove(&var);
        self.names.insert(var, Binding::Tasks(tasks));
    }

    /// A comprehension that makes tasks (`[Op(task_id=f"t_{i}") for i in
    /// range(3)]`, `{t: Op(...) for t in ["a", "b"]}`, a generator): read
    /// once per value as a `for` loop is, when every `for` of it takes
    /// literal values (see [`Reader::loop_values`]) and it has no `if`;
    /// its iterations count with loops' against [`MAX_LOOP_READS`]. It
    /// stands for the tasks made. Otherwise a warning names it.
    fn comprehension(
        &mut self,
        elts: &[&Expr],
        generators: &[ruff_python_ast::Comprehension],
        node: &Expr,
        dag: Option<usize>,
        prefix: &str,
    ) -> Option<Binding> {
        if !self.has_task_call(node) {
            return None;
        }
        let readable = generators
            .iter()
            .all(|g| !g.is_async && g.ifs.is_empty() && matches!(g.target, Expr::Name(_)));
        let mut tasks = Vec::new();
        if !readable || !self.comprehend(elts, generators, node, dag, prefix, &mut tasks) {
            self.warn_at(span(node).0, format!("tasks made in a comprehension are not expanded: ripple reads comprehensions whose every `for` takes one name over a literal list, tuple or `range(...)` (at most {MAX_LOOP_VALUES} values) with no `if`, not over runtime values; declare the tasks one by one, or loop over a literal list, to have them read"));
            self.skip(node);
        }
        self.spend(tasks.iter().map(|t| t.len() + 24).sum(), node)?;
        Some(Binding::Tasks(tasks))
    }

    /// Reads `elts` once per value of each of `generators` in turn, the
    /// tasks made added to `out`; false when a `for` of it does not take
    /// literal values.
    fn comprehend(
        &mut self,
        elts: &[&Expr],
        generators: &[ruff_python_ast::Comprehension],
        node: &Expr,
        dag: Option<usize>,
        prefix: &str,
        out: &mut Vec<String>,
    ) -> bool {
        let Some((g, rest)) = generators.split_first() else {
            for e in elts {
                if let Some(Binding::Tasks(t)) = self.value(e, dag, prefix) {
                    out.extend(t);
                }
            }
            return true;
        };
        let (Expr::Name(n), Some(values)) = (&g.target, self.loop_values(&g.iter)) else {
            return false;
        };
        if values.is_empty() {
            // Airflow makes none of its tasks either.
            self.skip(node);
        }
        let name = n.id.to_string();
        let old = self.names.remove(&name);
        let mut read = true;
        for v in values {
            if self.spent() {
                break;
            }
            self.loop_reads += 1;
            if self.loop_reads > MAX_LOOP_READS {
                self.warn_at(span(node).0, format!("more than {MAX_LOOP_READS} loop iterations in one file; the rest of this comprehension is not read"));
                break;
            }
            self.names.insert(name.clone(), Binding::Str(v));
            if !self.comprehend(elts, rest, node, dag, prefix, out) {
                read = false;
                break;
            }
        }
        match old {
            Some(o) => self.names.insert(name, o),
            None => self.names.remove(&name),
        };
        read
    }

    /// `x.expand(...)` / `x.expand_kwargs(...)` of an operator's or a
    /// TaskFlow function's `.partial(...)`, or of a TaskFlow function: one
    /// task, marked mapped. Literal mapped SQL is read (every value's
    /// tables); a task's output mapped over is an upstream.
    fn mapped(
        &mut self,
        call: &ruff_python_ast::ExprCall,
        attr: &ruff_python_ast::ExprAttribute,
        dag: Option<usize>,
        prefix: &str,
    ) -> Option<Binding> {
        let line = self.line(call);
        let partial = match self.value(&attr.value, dag, prefix) {
            Some(Binding::Partial(p)) => *p,
            _ => Partial {
                callee: self.resolve(&attr.value),
                keywords: Vec::new(),
            },
        };
        let mut keywords = partial.keywords;
        let mut upstream = Vec::new();
        let mut runtime = Vec::new();
        // Each expanded argument as read, once: a task made inline in it
        // must not be made again.
        let mut evaluated = Vec::new();
        if attr.attr.as_str() == "expand" {
            for k in &call.arguments.keywords {
                let value = self.value(&k.value, dag, prefix);
                if let Some(name) = &k.arg {
                    evaluated.push((name.to_string(), value.clone()));
                }
                match value {
                    Some(Binding::Tasks(t)) => {
                        upstream.extend(t);
                        runtime.extend(k.arg.as_ref().map(ToString::to_string));
                    }
                    Some(_) => {
                        self.spend(k.range().len().to_usize(), k)?;
                        keywords.push(k.clone());
                    }
                    None => runtime.extend(k.arg.as_ref().map(ToString::to_string)),
                }
            }
        } else {
            // `expand_kwargs([{...}, ...])`: a literal list of dicts gives
            // each key the list of its values; anything else is runtime.
            match call.arguments.args.first() {
                Some(Expr::List(l)) if l.elts.iter().all(|e| matches!(e, Expr::Dict(_))) => {
                    let mut by_key: BTreeMap<String, Vec<Expr>> = BTreeMap::new();
                    for e in &l.elts {
                        if let Expr::Dict(d) = e {
                            for item in &d.items {
                                if let Some(key) = item.key.as_ref().and_then(|k| self.string(k))
                                    && self
                                        .spend(item.value.range().len().to_usize(), &item.value)
                                        .is_some()
                                {
                                    by_key.entry(key).or_default().push(item.value.clone());
                                }
                            }
                        }
                    }
                    for (key, values) in by_key {
                        keywords.push(Keyword {
                            range: l.range,
                            node_index: Default::default(),
                            arg: Some(ruff_python_ast::Identifier::new(key, l.range)),
                            value: Expr::List(ruff_python_ast::ExprList {
                                range: l.range,
                                node_index: Default::default(),
                                elts: values,
                                ctx: ruff_python_ast::ExprContext::Load,
                            }),
                        });
                    }
                }
                Some(other) => {
                    upstream.extend(match self.value(other, dag, prefix) {
                        Some(Binding::Tasks(t)) => t,
                        _ => Vec::new(),
                    });
                    runtime.push("expand_kwargs".to_string());
                }
                None => {}
            }
        }
        if runtime.iter().any(|k| k == "sql" || k == "expand_kwargs")
            && kw(&keywords, "sql").is_none()
        {
            self.warn(line, "a mapped task's `sql` comes from a runtime value (another task's output); its tables are not read: pass a literal list to `.expand(sql=[...])` to have them read".to_string());
        }
        if let Some(flow) = self.taskflows.get(&partial.callee).cloned() {
            self.spend(flow_bytes(&flow), call)?;
            return Some(self.taskflow_task(flow, upstream, line, dag, prefix, true));
        }
        if let Some(g) = self.group_fns.get(&partial.callee).cloned() {
            // A mapped task group: its tasks are each mapped.
            let d = dag.or_else(|| self.dags.len().checked_sub(1));
            let before = d.map_or(0, |d| self.dags[d].tasks.len());
            let group = self.enter_group_fn(&g, evaluated, (dag, line), prefix);
            if let Some(d) = d {
                for t in &mut self.dags[d].tasks[before..] {
                    t.mapped = true;
                }
            }
            return Some(group);
        }
        if is_operator(&partial.callee) {
            let name = partial.callee.clone();
            return self.operator(&keywords, &name, line, dag, prefix, true, upstream);
        }
        self.warn(
            line,
            format!(
                "`.{}(...)` of something that is no operator or @task ripple can see; it is left out",
                attr.attr
            ),
        );
        None
    }

    /// An astronomer-cosmos DbtDag (a DAG) or DbtTaskGroup (a group in
    /// one): a task standing for its dbt nodes, which the dbt project's
    /// nodes replace once read (see `airflow::dbt`), with what it selects.
    fn cosmos(
        &mut self,
        call: &ruff_python_ast::ExprCall,
        name: &str,
        dag: Option<usize>,
        prefix: &str,
    ) -> Option<Binding> {
        let keywords = &call.arguments.keywords;
        let line = self.line(call);
        let render: Vec<Keyword> = match kw(keywords, "render_config") {
            Some(Expr::Call(c)) => c.arguments.keywords.to_vec(),
            Some(Expr::Name(n)) => self
                .render_configs
                .get(n.id.as_str())
                .cloned()
                .unwrap_or_default(),
            _ => Vec::new(),
        };
        let mut strings = |k: &str| -> Vec<String> {
            match kw(&render, k).and_then(|e| self.value(e, None, "")) {
                Some(Binding::Str(s)) => vec![s],
                Some(Binding::Strs(v)) => v,
                _ => Vec::new(),
            }
        };
        let select = strings("select");
        let exclude = strings("exclude");
        let test_behavior = match kw(&render, "test_behavior") {
            Some(Expr::Attribute(a)) => a.attr.to_ascii_lowercase(),
            Some(e) => self.string(e).unwrap_or_default().to_ascii_lowercase(),
            None => "after_each".to_string(),
        };
        let (dag, task_id, task_prefix, result) = if name == "DbtDag" {
            let d = self.dag_from_call(&call.arguments.args, keywords, None, line);
            let id = self.dags[d].dag_id.clone();
            (Some(d), id, String::new(), Binding::Dag(d))
        } else {
            let group = kw(keywords, "group_id")
                .or(call.arguments.args.first())
                .and_then(|e| self.string(e))
                .unwrap_or_else(|| "dbt_task_group".to_string());
            let (key, inner) = self.open_group(&group, prefix, prefixed(keywords), false);
            self.open_groups.pop();
            (dag, key.clone(), inner, Binding::Tasks(vec![key]))
        };
        let pool = dag.and_then(|d| self.dag_settings[d].pool.clone());
        self.add_task(
            dag,
            Task {
                task_id,
                operator: name.to_string(),
                pool,
                pool_slots: None,
                depends_on_past: false,
                triggers: Vec::new(),
                reads: Vec::new(),
                writes: Vec::new(),
                feeds: None,
                upstream: Vec::new(),
                line,
                sql: None,
                template: None,
                mapped: false,
                marks: Vec::new(),
                outlets: Vec::new(),
                dbt: Some(Box::new(DbtRun {
                    command: "cosmos".to_string(),
                    select,
                    exclude,
                    cosmos: Some(Cosmos {
                        prefix: task_prefix,
                        test_behavior,
                    }),
                    nodes: Vec::new(),
                    flags: Vec::new(),
                })),
                connections: Vec::new(),
                trigger_rule: None,
            },
        );
        Some(result)
    }

    /// The task a TaskFlow function call makes. A second call of one
    /// function in a DAG is `id__1`, as Airflow names it.
    fn taskflow_task(
        &mut self,
        flow: TaskFlow,
        upstream: Vec<String>,
        line: u32,
        dag: Option<usize>,
        prefix: &str,
        mapped: bool,
    ) -> Binding {
        {
            let base = format!("{prefix}{}", flow.task_id);
            let d = dag.unwrap_or(usize::MAX);
            // Airflow's `get_unique_task_id`: an id any task of the DAG has
            // (an operator's too, `extract` then `extract()`) gets `__1`.
            let taken = match dag {
                Some(d) => {
                    self.index_tasks(d);
                    self.task_index.remove(&d)
                }
                None => None,
            };
            let ids = std::mem::take(&mut self.taskflow_ids);
            let task_id = self.unused_name(&d.to_string(), &base, |id| {
                ids.contains(&(d, id.to_string()))
                    || taken.as_ref().is_some_and(|t| t.by_id.contains_key(id))
            });
            if let (Some(d), Some(t)) = (dag, taken) {
                self.task_index.insert(d, t);
            }
            self.taskflow_ids = ids;
            self.taskflow_ids.insert((d, task_id.clone()));
            let sql = flow.returns_sql.as_deref().map(|s| {
                let (sql, failed) = render_sql(s, Some(&BTreeMap::new()), &self.fuel);
                if let Some(why) = failed {
                    self.template_fails(line, &task_id, &why);
                }
                sql
            });
            let sql_bytes = sql.as_ref().map_or(0, String::len);
            // Counted, not refused: the task is made, and the next
            // statement finds the file spent.
            let _ = self.spend_here(base.len().saturating_mul(2).saturating_add(sql_bytes));
            let pool = dag.and_then(|d| self.dag_settings[d].pool.clone());
            let depends_on_past = dag.is_some_and(|d| self.dag_settings[d].depends_on_past);
            if let Some(teardown) = flow.teardown {
                self.mark_role(dag, std::slice::from_ref(&task_id), teardown);
            }
            self.add_task(
                dag,
                Task {
                    task_id: task_id.clone(),
                    operator: flow.operator,
                    pool,
                    pool_slots: None,
                    depends_on_past,
                    triggers: Vec::new(),
                    reads: flow.inlets,
                    writes: flow.outlets.clone(),
                    feeds: None,
                    upstream,
                    line,
                    sql,
                    template: None,
                    mapped,
                    marks: Vec::new(),
                    outlets: flow.outlets,
                    dbt: None,
                    connections: joined(self.default_connections(dag)),
                    trigger_rule: None,
                },
            );
            Binding::Tasks(vec![task_id])
        }
    }

    /// The task an operator call makes (`mapped`: through `.partial` and
    /// `.expand`, with the upstreams its mapped arguments name).
    #[allow(clippy::too_many_arguments)]
    fn operator(
        &mut self,
        keywords: &[Keyword],
        name: &str,
        line: u32,
        dag: Option<usize>,
        prefix: &str,
        mapped: bool,
        mut upstream: Vec<String>,
    ) -> Option<Binding> {
        // `x.output` anywhere in its arguments (`parameters={"v": s.output}`)
        // is an XComArg: Airflow makes `x` its upstream.
        for k in keywords {
            upstream.extend(self.xcom_upstreams(&k.value, dag, prefix));
        }
        let Some(task_id) = kw(keywords, "task_id").and_then(|e| self.string(e)) else {
            self.warn(
                line,
                format!("`{name}(...)` has no literal task_id; it is left out"),
            );
            return None;
        };
        // `sql=STMTS`, then `STMTS.append(...)`: the operator holds the
        // list, and runs what it holds when it runs.
        if let Some(Expr::Name(n)) = kw(keywords, "sql")
            && self.volatile.changed.contains(n.id.as_str())
        {
            self.warn(line, format!("`{name}(...)` takes `sql={}`, a list this file changes in place (`.append`, `[i] = ...`): Airflow runs what it holds when the task runs, which ripple does not follow; build the list before the operator and leave it", n.id));
        }
        // `Op(task_id="t", **kw)`: its `sql=`, `outlets=`, ... may be in `kw`.
        if keywords.iter().any(|k| k.arg.is_none()) {
            self.warn(
                line,
                format!("`{name}(...)` takes keyword arguments from `**`, which ripple does not read: the task's SQL, tables and datasets there are not in the graph; write them as keywords (`sql=...`)"),
            );
        }
        // `dag=dag` places a task outside a `with` block.
        let dag = kw(keywords, "dag")
            .and_then(|e| match self.value(e, dag, prefix) {
                Some(Binding::Dag(d)) => Some(d),
                _ => None,
            })
            .or(dag);
        // `task_group=tg`: the task is that group's.
        let group = match kw(keywords, "task_group") {
            Some(Expr::Name(n)) => self.group_key(n.id.as_str()),
            _ => None,
        };
        let prefix: std::borrow::Cow<str> = match &group {
            Some(key) => self.group_prefixes[key].clone().into(),
            None => prefix.into(),
        };
        let prefix = prefix.as_ref();
        self.spend_here(prefix.len())?;
        let task_id = format!("{prefix}{task_id}");
        let default_pool = dag.and_then(|d| self.dag_settings[d].pool.clone());
        let pool = kw(keywords, "pool")
            .and_then(|e| self.string(e))
            .or(default_pool);
        let pool_slots = kw(keywords, "pool_slots").and_then(int);
        let depends_on_past = match kw(keywords, "depends_on_past") {
            Some(Expr::BooleanLiteral(b)) => b.value,
            _ => dag.is_some_and(|d| self.dag_settings[d].depends_on_past),
        };
        // The DAG's params, updated with the task's, as Airflow merges them;
        // either given as something not read makes them runtime values.
        let dag_params = match dag {
            Some(d) => self.dag_settings[d].params.clone(),
            None => Some(BTreeMap::new()),
        };
        let params = match kw(keywords, "params") {
            None => dag_params,
            Some(e) => match self.value(e, dag, prefix) {
                Some(Binding::Dict(m)) => dag_params.map(|mut p| {
                    p.extend(m);
                    p
                }),
                _ => None,
            },
        };
        // `default_args={"params": {...}}` of the task is merged over both.
        let params = match self.dict_kw(keywords, "default_args", dag, prefix) {
            Some(args) if args.contains_key("params") || args.contains_key(UNKNOWN_KEYS) => None,
            _ => params,
        }
        .filter(|p| !p.contains_key(UNKNOWN_KEYS));
        let (raw_sql, destination) = match (kw(keywords, "sql"), kw(keywords, "configuration")) {
            (Some(e), _) => (self.sql_text(e, dag, line, "`sql=`"), None),
            (None, Some(c)) if name == "BigQueryInsertJobOperator" => {
                let declared =
                    kw(keywords, "inlets").is_some() || kw(keywords, "outlets").is_some();
                self.job_sql(c, declared, dag, line)
            }
            _ => (None, None),
        };
        // The table a BigQuery query job writes its result to, rendered as
        // its SQL is (`configuration` is a templated field).
        let destination = destination.map(|t| render_sql(&t, params.as_ref(), &self.fuel).0);
        let sql = raw_sql.as_ref().map(|s| {
            let (sql, failed) = render_sql(s, params.as_ref(), &self.fuel);
            if let Some(why) = failed {
                self.template_fails(line, &task_id, &why);
            } else if super::template::shaped_by_date(s, &sql, params.as_ref(), &self.fuel, self.dialect)
            {
                self.warn(line, format!("task `{task_id}`: its SQL names other tables, or is another statement, on other run dates (its template reads the run's date outside values: `raw.t_{{{{ ds_nodash }}}}`, `{{% if logical_date.day == 1 %}}`); ripple reads the run of {}, so the tables of other runs are not in the graph; name the tables without the date to have them read", super::template::REPRESENTATIVE_DAY));
            }
            sql
        });
        // The SQL rendered, and the parameters kept with its template.
        let kept = sql.as_ref().map_or(0, String::len).saturating_add(
            params
                .iter()
                .flatten()
                .map(|(k, v)| k.len() + v.len())
                .sum::<usize>(),
        );
        self.spend_here(kept)?;
        let template = raw_sql.map(|text| SqlTemplate {
            text,
            params: params.clone(),
        });
        let mut reads = self.uris(kw(keywords, "inlets"), dag, prefix);
        let mut writes = self.uris(kw(keywords, "outlets"), dag, prefix);
        let outlets = writes.clone();
        writes.extend(destination);
        let declared = kw(keywords, "inlets").is_some() || kw(keywords, "outlets").is_some();
        let (moved_from, moved_to) = self.transfer(name, keywords, declared, line);
        reads.extend(moved_from);
        writes.extend(moved_to);
        let dbt = match name {
            "BashOperator" => kw(keywords, "bash_command")
                .and_then(|e| self.string(e))
                .and_then(|c| dbt_command(&c)),
            // cosmos's own operators: `DbtRunLocalOperator(select=...)`.
            n if n.starts_with("Dbt") => {
                let verb = ["Run", "Build", "Seed", "Snapshot"]
                    .into_iter()
                    .find(|v| n[3..].starts_with(v));
                let mut list =
                    |k: &str| match kw(keywords, k).and_then(|e| self.value(e, dag, prefix)) {
                        Some(Binding::Str(s)) => s.split_whitespace().map(str::to_string).collect(),
                        Some(Binding::Strs(v)) => v,
                        _ => Vec::new(),
                    };
                let mut select = list("select");
                select.extend(list("models"));
                let exclude = list("exclude");
                verb.map(|v| DbtRun {
                    command: v.to_ascii_lowercase(),
                    select,
                    exclude,
                    cosmos: None,
                    nodes: Vec::new(),
                    flags: Vec::new(),
                })
            }
            _ => None,
        };
        let mut marks = Vec::new();
        if name == "ExternalTaskSensor" || name == "ExternalTaskMarker" {
            let other_dag = kw(keywords, "external_dag_id").and_then(|e| self.string(e));
            let mut other_tasks: Vec<String> = kw(keywords, "external_task_id")
                .or(kw(keywords, "external_task_group_id"))
                .and_then(|e| self.string(e))
                .into_iter()
                .collect();
            if let Some(Binding::Strs(v)) =
                kw(keywords, "external_task_ids").and_then(|e| self.value(e, dag, prefix))
            {
                other_tasks.extend(v);
            }
            if other_tasks.is_empty() {
                // No task named: the whole other DAG run.
                other_tasks.push(String::new());
            }
            match other_dag {
                // A marker sits in the upstream DAG: the task it names is
                // downstream of it.
                Some(d) if name == "ExternalTaskMarker" => {
                    marks.extend(other_tasks.iter().map(|t| format!("{d}:{t}")));
                }
                Some(d) => upstream.extend(other_tasks.iter().map(|t| format!("{d}:{t}"))),
                None => self.warn(
                    line,
                    format!(
                        "`{name}` without a literal external_dag_id: its cross-DAG edge is not read"
                    ),
                ),
            }
        }
        let triggers: Vec<String> = match name {
            "TriggerDagRunOperator" => kw(keywords, "trigger_dag_id")
                .and_then(|e| self.string(e))
                .into_iter()
                .collect(),
            _ => Vec::new(),
        };
        reads.sort();
        let mut connections = self.default_connections(dag);
        for k in keywords {
            if let Some(key) = k.arg.as_ref().filter(|a| a.as_str().ends_with("conn_id")) {
                let value = self.string(&k.value).unwrap_or_else(|| "?".to_string());
                connections.insert(key.to_string(), value);
            }
        }
        let opened = group.is_some();
        if let Some(key) = group {
            self.open_groups.push(key);
        }
        self.add_task(
            dag,
            Task {
                task_id: task_id.clone(),
                operator: name.to_string(),
                pool,
                pool_slots,
                depends_on_past,
                triggers,
                reads,
                writes,
                feeds: None,
                upstream,
                line,
                sql,
                template,
                mapped,
                marks,
                outlets,
                dbt: dbt.map(Box::new),
                connections: joined(connections),
                trigger_rule: kw(keywords, "trigger_rule").map(|e| {
                    self.string(e).unwrap_or_else(|| match e {
                        // `TriggerRule.ALL_DONE`: the member's name, as Airflow
                        // spells its value.
                        Expr::Attribute(a) => a.attr.as_str().to_ascii_lowercase(),
                        _ => "?".to_string(),
                    })
                }),
            },
        );
        if opened {
            self.open_groups.pop();
        }
        Some(Binding::Tasks(vec![task_id]))
    }

    /// The tables a transfer operator reads and writes, from the keywords
    /// that name them (`S3ToRedshiftOperator(schema=, table=)`,
    /// `GCSToBigQueryOperator(destination_project_dataset_table=)`). Another
    /// transfer (`XToYOperator`) is named unless it declares its tables: it
    /// writes a table the graph would otherwise not have.
    fn transfer(
        &mut self,
        name: &str,
        keywords: &[Keyword],
        declared: bool,
        line: u32,
    ) -> (Vec<String>, Vec<String>) {
        let text = |reader: &Self, k: &str| kw(keywords, k).and_then(|e| reader.string(e));
        let pair = |reader: &Self| -> Option<String> {
            let table = text(reader, "table")?;
            Some(match text(reader, "schema") {
                Some(schema) if !table.contains('.') => format!("{schema}.{table}"),
                _ => table,
            })
        };
        let names = |reader: &Self, k: &str| -> Vec<String> {
            match kw(keywords, k) {
                Some(Expr::List(l)) => l.elts.iter().filter_map(|e| reader.string(e)).collect(),
                Some(e) => reader.string(e).into_iter().collect(),
                None => Vec::new(),
            }
        };
        let (reads, writes, known) = match name {
            "S3ToRedshiftOperator"
            | "S3ToSnowflakeOperator"
            | "CopyFromExternalStageToSnowflakeOperator"
            | "S3ToSqlOperator" => (Vec::new(), pair(self).into_iter().collect(), true),
            "RedshiftToS3Operator" if kw(keywords, "select_query").is_none() => {
                (pair(self).into_iter().collect(), Vec::new(), true)
            }
            "GCSToBigQueryOperator" => (
                Vec::new(),
                names(self, "destination_project_dataset_table"),
                true,
            ),
            "BigQueryToGCSOperator" => (
                names(self, "source_project_dataset_table"),
                Vec::new(),
                true,
            ),
            "BigQueryToBigQueryOperator" => (
                names(self, "source_project_dataset_tables"),
                names(self, "destination_project_dataset_table"),
                true,
            ),
            "GenericTransfer" => (Vec::new(), names(self, "destination_table"), true),
            _ => (Vec::new(), Vec::new(), is_transfer(name)),
        };
        let relation = |t: &String| {
            // BigQuery's legacy `project:dataset.table`.
            let t = t.replacen(':', ".", 1);
            let lineage = crate::sql::script_lineage(&format!("select 1 from {t}"), self.dialect);
            lineage.sources.into_iter().next()
        };
        let reads: Vec<String> = reads.iter().filter_map(relation).collect();
        let writes: Vec<String> = writes.iter().filter_map(relation).collect();
        if known && !declared && writes.is_empty() && writes_a_table(name) {
            self.warn(line, format!("`{name}(...)` moves data between systems and ripple does not read the table it writes (not one of the operators and keywords of docs/airflow.md, or not a literal): that table is not in the graph, so an impact through it may be short; declare it (`outlets=[Dataset(\"schema.table\")]`, `inlets=` for what it reads)"));
        }
        (reads, writes)
    }

    /// The DAG's `default_args` connections, which a task's own override.
    fn default_connections(&self, dag: Option<usize>) -> BTreeMap<String, String> {
        dag.map(|d| self.dag_settings[d].connections.clone())
            .unwrap_or_default()
    }

    /// The tasks whose `.output` (an XComArg) `e` holds anywhere: each is
    /// an upstream of the task it is passed to.
    fn xcom_upstreams(&mut self, e: &Expr, dag: Option<usize>, prefix: &str) -> Vec<String> {
        #[derive(Default)]
        struct Outputs<'a>(Vec<&'a Expr>);
        impl<'a> Visitor<'a> for Outputs<'a> {
            fn visit_expr(&mut self, e: &'a Expr) {
                if let Expr::Attribute(a) = e
                    && a.attr.as_str() == "output"
                {
                    self.0.push(&a.value);
                }
                walk_expr(self, e);
            }
        }
        let mut found = Outputs::default();
        found.visit_expr(e);
        let mut out = Vec::new();
        for x in found.0 {
            if let Some(Binding::Tasks(t)) = self.value(x, dag, prefix) {
                out.extend(t);
            }
        }
        out
    }

    /// The arguments of `chain(...)` / `chain_linear(...)` as Airflow sees
    /// them, each with whether it is a list: `*xs` spread into its items
    /// (a literal list's, or a list of tasks' one by one). `None`, with a
    /// warning, when a spread's items are not known: its dependencies
    /// would be guesses (`chain(*steps)` once made none, silently).
    fn chain_groups(
        &mut self,
        args: &[Expr],
        name: &str,
        line: u32,
        dag: Option<usize>,
        prefix: &str,
    ) -> Option<Vec<(bool, Vec<String>)>> {
        let mut groups = Vec::new();
        for a in args {
            let Expr::Starred(star) = a else {
                let list = matches!(a, Expr::List(_) | Expr::Tuple(_));
                groups.push((list, self.tasks_of(a, dag, prefix)));
                continue;
            };
            match star.value.as_ref() {
                Expr::List(l) => {
                    for e in &l.elts {
                        let list = matches!(e, Expr::List(_) | Expr::Tuple(_));
                        groups.push((list, self.tasks_of(e, dag, prefix)));
                    }
                }
                Expr::Tuple(t) => {
                    for e in &t.elts {
                        let list = matches!(e, Expr::List(_) | Expr::Tuple(_));
                        groups.push((list, self.tasks_of(e, dag, prefix)));
                    }
                }
                v => match self.value(v, dag, prefix) {
                    Some(Binding::Tasks(ts)) => {
                        groups.extend(ts.into_iter().map(|t| (false, vec![t])));
                    }
                    _ => {
                        self.warn(line, format!("`{name}(*...)` spreads values ripple does not know: the dependencies it makes are not read; chain the tasks by name"));
                        return None;
                    }
                },
            }
        }
        Some(groups)
    }

    /// `inlets` / `outlets`: dataset URIs as relation-like names.
    fn uris(&mut self, e: Option<&Expr>, dag: Option<usize>, prefix: &str) -> Vec<String> {
        // A literal list: each item on its own, so that one ripple cannot
        // read is named rather than dropped with its list.
        if let Some(Expr::List(ruff_python_ast::ExprList { elts, .. }))
        | Some(Expr::Tuple(ruff_python_ast::ExprTuple { elts, .. })) = e
        {
            return elts
                .iter()
                .flat_map(|x| self.uris(Some(x), dag, prefix))
                .collect();
        }
        let names = match e.map(|x| (x, self.value(x, dag, prefix))) {
            None => Vec::new(),
            Some((_, Some(Binding::Str(s)))) => vec![s],
            Some((_, Some(Binding::Strs(v)))) => v,
            // Tasks as lineage entities, `None`: no dataset.
            Some((_, Some(Binding::Tasks(_)))) | Some((Expr::NoneLiteral(_), _)) => Vec::new(),
            Some((x, _)) => {
                // A dataset ripple cannot see (imported from a module of
                // the project's, built at run time): named, never dropped
                // (an outlet from a shared module once vanished silently).
                let at = x.range().start().to_usize();
                let text = crate::text::clipped(&source_text(self.text, x), 200).into_owned();
                self.warn_at(at, format!("`{text}` holds datasets ripple cannot read (imported from another module, or made at run time): the datasets this task emits or reads there are not in the graph; write `Dataset(\"uri\")` / `Asset(\"uri\")` in the DAG file"));
                Vec::new()
            }
        };
        names.iter().map(|n| dataset_name(n)).collect()
    }

    /// The SQL a `sql=` argument holds: a literal, a list, a name bound to
    /// one, or a `.sql` file found beside the DAG or on its search path.
    /// `what` names the argument in messages (`` `sql=` ``).
    fn sql_text(&mut self, e: &Expr, dag: Option<usize>, line: u32, what: &str) -> Option<String> {
        let value = match e {
            // Known when every part is (a loop's value, a constant).
            Expr::FString(_) => match self.string(e) {
                Some(text) => Some(Binding::Str(text)),
                None => {
                    self.warn(
                        line,
                        format!(
                            "an f-string {what} depends on runtime values; its tables are not read"
                        ),
                    );
                    return None;
                }
            },
            other => self.value(other, dag, ""),
        };
        let pieces = match value {
            Some(Binding::Str(s)) => vec![s],
            Some(Binding::Strs(v)) => v,
            _ => {
                self.warn(
                    line,
                    format!("{what} is not a literal ripple can read; its tables are not read"),
                );
                return None;
            }
        };
        let mut out = Vec::new();
        for p in pieces {
            // Airflow takes a value ending in `.sql` as a file, as written:
            // `"a.sql\n"` is SQL text (which does not run), never the file.
            let trimmed = p.trim();
            if p.ends_with(".sql") && !trimmed.contains(char::is_whitespace) {
                match self.sql_file(trimmed, dag) {
                    Some(text) => {
                        // Read again for each task that names it.
                        self.spend(text.len(), e)?;
                        out.push(text);
                    }
                    None => self.warn(line, format!("SQL file `{trimmed}` not found beside the DAG or on its template_searchpath")),
                }
            } else {
                out.push(p);
            }
        }
        Some(out.join(";\n"))
    }

    /// A BigQuery job's `configuration`: a query job's SQL
    /// (`configuration["query"]["query"]`, read as `sql=` is) and the table
    /// it writes its result to (`"destinationTable": {"datasetId": ...,
    /// "tableId": ...}`, as `dataset.table`). What cannot be read is a
    /// warning; a job of another kind (load, copy, extract) too, unless the
    /// task declares its inlets or outlets.
    fn job_sql(
        &mut self,
        c: &Expr,
        declared: bool,
        dag: Option<usize>,
        line: u32,
    ) -> (Option<String>, Option<String>) {
        let Expr::Dict(job) = c else {
            self.warn(line, "`configuration=` is not a literal dict ripple can read; the job's SQL and tables are not read: write it as a dict literal, or declare the task's inlets and outlets".to_string());
            return (None, None);
        };
        let Some(query) = self.entry(job, "query") else {
            if !declared {
                self.warn(line, "`configuration=` holds no query job (a load, copy or extract job): ripple reads only a query job's SQL, so the tables this job reads and writes are not read; declare the task's inlets and outlets".to_string());
            }
            return (None, None);
        };
        let Expr::Dict(query) = query else {
            self.warn(line, "`configuration[\"query\"]` is not a literal dict ripple can read; the job's SQL is not read: write it as a dict literal, or declare the task's inlets and outlets".to_string());
            return (None, None);
        };
        let sql = match self.entry(query, "query") {
            Some(e) => self.sql_text(e, dag, line, "`configuration[\"query\"][\"query\"]`"),
            None => {
                self.warn(
                    line,
                    "`configuration[\"query\"]` has no `query`: the job's SQL is not read"
                        .to_string(),
                );
                None
            }
        };
        let destination = self.entry(query, "destinationTable").and_then(|t| {
            let table = match t {
                Expr::Dict(t) => self
                    .entry(t, "datasetId")
                    .and_then(|d| self.string(d))
                    .zip(self.entry(t, "tableId").and_then(|d| self.string(d))),
                _ => None,
            };
            if table.is_none() {
                self.warn(line, "`destinationTable` is not a literal `{\"datasetId\": ..., \"tableId\": ...}`: the table the query writes is not read; write it so, or declare the task's outlets".to_string());
            }
            // `table$20260101` is a partition of `table`.
            table.map(|(d, t)| format!("{d}.{}", t.split('$').next().unwrap_or(&t)))
        });
        (sql, destination)
    }

    /// The value of a literal dict's entry `key`.
    fn entry<'e>(&self, d: &'e ruff_python_ast::ExprDict, key: &str) -> Option<&'e Expr> {
        d.items
            .iter()
            .find(|i| i.key.as_ref().and_then(|k| self.string(k)).as_deref() == Some(key))
            .map(|i| &i.value)
    }

    fn sql_file(&self, name: &str, dag: Option<usize>) -> Option<String> {
        let mut dirs = vec![self.dag_dir.to_path_buf()];
        if let Some(d) = dag {
            dirs.extend(
                self.dag_settings[d]
                    .search_path
                    .iter()
                    .map(|p| self.dag_dir.join(p)),
            );
        }
        let root = self.root.canonicalize().ok()?;
        dirs.iter().find_map(|dir| {
            let path = dir.join(name).canonicalize().ok()?;
            // Never read outside the project, whatever the DAG says.
            if !path.starts_with(&root) {
                return None;
            }
            crate::input::read_text(&path).ok()
        })
    }

    /// What an `if`'s test is, when known statically: `True`, `False`,
    /// `None`, a name bound to one, `not` of those.
    fn truth(&self, e: &Expr) -> Option<bool> {
        match e {
            Expr::BooleanLiteral(b) => Some(b.value),
            Expr::NoneLiteral(_) => Some(false),
            Expr::Name(n) => match self.bound(n.id.as_str()) {
                Some(Binding::Str(s)) => Some(!s.is_empty()),
                Some(Binding::Strs(v)) => Some(!v.is_empty()),
                _ if self.volatile.rebound.contains(n.id.as_str()) => None,
                _ => self.bools.get(n.id.as_str()).copied(),
            },
            Expr::UnaryOp(u) if u.op == ruff_python_ast::UnaryOp::Not => {
                self.truth(&u.operand).map(|b| !b)
            }
            // `ENV == "prod"`, `ENV in ("prod", "stage")`, of known strings.
            Expr::Compare(c) if c.ops.len() == 1 => {
                use ruff_python_ast::CmpOp;
                // `if __name__ == "__main__":`: Airflow imports the file
                // under another module name, so the block never runs.
                if matches!(c.left.as_ref(), Expr::Name(n) if n.id.as_str() == "__name__")
                    && !self.names.contains_key("__name__")
                    && self.string(&c.comparators[0]).as_deref() == Some("__main__")
                {
                    return match c.ops[0] {
                        CmpOp::Eq => Some(false),
                        CmpOp::NotEq => Some(true),
                        _ => None,
                    };
                }
                let left = self.string(&c.left)?;
                let right = &c.comparators[0];
                match c.ops[0] {
                    CmpOp::Eq => Some(left == self.string(right)?),
                    CmpOp::NotEq => Some(left != self.string(right)?),
                    op @ (CmpOp::In | CmpOp::NotIn) => {
                        let within = match right {
                            Expr::List(ruff_python_ast::ExprList { elts, .. })
                            | Expr::Tuple(ruff_python_ast::ExprTuple { elts, .. })
                            | Expr::Set(ruff_python_ast::ExprSet { elts, .. }) => {
                                let all: Option<Vec<String>> =
                                    elts.iter().map(|x| self.string(x)).collect();
                                all?.contains(&left)
                            }
                            Expr::Name(n) => match self.bound(n.id.as_str()) {
                                Some(Binding::Strs(v)) => v.contains(&left),
                                _ => return None,
                            },
                            _ => return None,
                        };
                        Some(within == (op == CmpOp::In))
                    }
                    _ => None,
                }
            }
            Expr::BoolOp(b) => {
                // `and` is decided by a false part, `or` by a true one.
                let decides = b.op == ruff_python_ast::BoolOp::Or;
                let values: Vec<Option<bool>> = b.values.iter().map(|v| self.truth(v)).collect();
                if values.contains(&Some(decides)) {
                    Some(decides)
                } else if values.iter().all(Option::is_some) {
                    Some(!decides)
                } else {
                    None
                }
            }
            _ => None,
        }
    }

    fn dag_from_call(
        &mut self,
        args: &[Expr],
        keywords: &[Keyword],
        function: Option<String>,
        line: u32,
    ) -> usize {
        let dag_id = kw(keywords, "dag_id")
            .or(args.first())
            .and_then(|e| self.string(e))
            .or(function)
            .unwrap_or_else(|| {
                self.warn(
                    line,
                    "a DAG without a literal dag_id; named after its file".to_string(),
                );
                Path::new(self.file)
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default()
            });
        let schedule_expr = kw(keywords, "schedule")
            .or(kw(keywords, "schedule_interval"))
            .or(kw(keywords, "timetable"));
        let schedule = schedule_expr.map(|e| self.schedule_text(e));
        let schedule_zone = schedule_expr.and_then(|e| self.timetable_zone(e));
        let schedule_datasets = schedule_expr
            .map(|e| self.schedule_datasets(e))
            .unwrap_or_default();
        let default_args = match kw(keywords, "default_args").and_then(|e| self.value(e, None, ""))
        {
            Some(Binding::Dict(m)) => m,
            _ => BTreeMap::new(),
        };
        let depends_on_past = default_args
            .get("depends_on_past")
            .is_some_and(|v| v == "True");
        let search = match kw(keywords, "template_searchpath").and_then(|e| self.value(e, None, ""))
        {
            Some(Binding::Str(s)) => vec![s],
            Some(Binding::Strs(v)) => v,
            _ => Vec::new(),
        };
        let params = match kw(keywords, "params") {
            None => Some(BTreeMap::new()),
            Some(e) => match self.value(e, None, "") {
                Some(Binding::Dict(m)) => Some(m),
                _ => None,
            },
        };
        // Airflow merges `default_args["params"]` over `params`: a nested
        // dict ripple keeps no values of.
        let params = params.filter(|p| {
            !p.contains_key(UNKNOWN_KEYS)
                && !default_args.contains_key("params")
                && !default_args.contains_key(UNKNOWN_KEYS)
        });
        let tags = match kw(keywords, "tags").and_then(|e| self.value(e, None, "")) {
            Some(Binding::Strs(v)) => v,
            _ => Vec::new(),
        };
        let catchup = kw(keywords, "catchup").and_then(|e| match e {
            Expr::BooleanLiteral(b) => Some(b.value),
            _ => None,
        });
        let max_active_runs = kw(keywords, "max_active_runs").and_then(int);
        let max_active_tasks = kw(keywords, "max_active_tasks").and_then(int);
        let end_date = kw(keywords, "end_date").map(|e| source_text(self.text, e));
        // Airflow takes `default_args["start_date"]` when the DAG names
        // none (it once read as no start: timedelta runs counted from 1970).
        let start_date = kw(keywords, "start_date")
            .map(|e| source_text(self.text, e))
            .or_else(|| {
                let args = kw(keywords, "default_args")?;
                if let Expr::Dict(d) = args {
                    let item = d.items.iter().rev().find(|i| {
                        i.key.as_ref().and_then(|k| self.string(k)).as_deref() == Some("start_date")
                    })?;
                    return Some(source_text(self.text, &item.value));
                }
                default_args.get("start_date").map(|v| match v.as_str() {
                    UNKNOWN_VALUE => "default_args[\"start_date\"]".to_string(),
                    v => v.to_string(),
                })
            });
        let _ = self.spend_here(
            dag_id.len()
                + schedule.as_ref().map_or(0, String::len)
                + end_date.as_ref().map_or(0, String::len)
                + start_date.as_ref().map_or(0, String::len),
        );
        self.dags.push(Dag {
            dag_id,
            file: self.file.to_string(),
            line,
            schedule,
            start_date,
            schedule_zone,
            catchup,
            end_date,
            max_active_runs,
            max_active_tasks,
            tags,
            tasks: Vec::new(),
            schedule_datasets,
            upstream_dags: Vec::new(),
        });
        self.dag_settings.push(DagSettings {
            pool: default_args
                .get("pool")
                .filter(|p| p.as_str() != UNKNOWN_VALUE)
                .cloned(),
            depends_on_past,
            search_path: search,
            params,
            connections: default_args
                .iter()
                .filter(|(k, _)| k.ends_with("conn_id"))
                .map(|(k, v)| {
                    let v = if v == UNKNOWN_VALUE { "?" } else { v.as_str() };
                    (k.clone(), v.to_string())
                })
                .collect(),
        });
        self.dags.len() - 1
    }

    /// The schedule as written: a cron or preset string, `None`,
    /// `timedelta(...)`, or `datasets` for data-aware schedules.
    fn schedule_text(&mut self, e: &Expr) -> String {
        if !self.schedule_datasets(e).is_empty() {
            // Datasets or'ed with a time schedule: the time part runs it.
            if let Expr::Call(c) = e
                && self.resolve(&c.func).ends_with("OrTimeSchedule")
                && let Some(t) = kw(&c.arguments.keywords, "timetable")
            {
                return self.schedule_text(t);
            }
            return "datasets".to_string();
        }
        match e {
            Expr::NoneLiteral(_) => "None".to_string(),
            // `CronTriggerTimetable("0 1 * * *", timezone=...)`: its cron.
            Expr::Call(c)
                if self.resolve(&c.func).starts_with("Cron")
                    && c.arguments
                        .args
                        .first()
                        .and_then(|a| self.string(a))
                        .is_some() =>
            {
                self.string(&c.arguments.args[0]).unwrap_or_default()
            }
            other => self
                .string(other)
                .unwrap_or_else(|| source_text(self.text, other)),
        }
    }

    /// The `timezone=` of a cron timetable (also inside `...OrTimeSchedule`),
    /// as written.
    fn timetable_zone(&mut self, e: &Expr) -> Option<String> {
        let Expr::Call(c) = e else { return None };
        let name = self.resolve(&c.func);
        if name.ends_with("OrTimeSchedule") {
            let t = kw(&c.arguments.keywords, "timetable")?;
            return self.timetable_zone(t);
        }
        if !name.starts_with("Cron") && !name.starts_with("MultipleCron") {
            return None;
        }
        let zone = kw(&c.arguments.keywords, "timezone")?;
        Some(match self.string(zone) {
            Some(z) => format!("timezone={z:?}"),
            None => format!("timezone={}", source_text(self.text, zone)),
        })
    }

    /// The datasets (assets) a data-aware schedule waits for: a list, `|`
    /// and `&` of them, `DatasetAll` / `AssetAny` and the like, the dataset
    /// part of `DatasetOrTimeSchedule` / `AssetOrTimeSchedule`; sorted.
    fn schedule_datasets(&mut self, e: &Expr) -> Vec<String> {
        let mut out = Vec::new();
        self.collect_datasets(e, &mut out);
        out.sort();
        out.dedup();
        out
    }

    fn collect_datasets(&mut self, e: &Expr, out: &mut Vec<String>) {
        match e {
            Expr::List(l) => l.elts.iter().for_each(|x| self.collect_datasets(x, out)),
            Expr::Tuple(t) => t.elts.iter().for_each(|x| self.collect_datasets(x, out)),
            Expr::BinOp(b) if matches!(b.op, Operator::BitOr | Operator::BitAnd) => {
                self.collect_datasets(&b.left, out);
                self.collect_datasets(&b.right, out);
            }
            Expr::Call(c) => {
                let name = self.resolve(&c.func);
                match name.as_str() {
                    "Dataset" | "Asset" | "DatasetAlias" | "AssetAlias" => {
                        if let Some(Binding::Str(s)) = self.value(e, None, "") {
                            out.push(s);
                        }
                    }
                    "DatasetAll" | "DatasetAny" | "AssetAll" | "AssetAny" => {
                        c.arguments
                            .args
                            .iter()
                            .for_each(|x| self.collect_datasets(x, out));
                    }
                    n if n.ends_with("OrTimeSchedule") => {
                        let keywords = &c.arguments.keywords;
                        if let Some(d) = kw(keywords, "datasets").or(kw(keywords, "assets")) {
                            self.collect_datasets(d, out);
                        }
                    }
                    _ => {}
                }
            }
            Expr::Name(n) => match self.bound(n.id.as_str()) {
                Some(Binding::Str(s)) if self.dataset_names.contains(n.id.as_str()) => {
                    out.push(s.clone());
                }
                Some(Binding::Strs(v)) if self.dataset_names.contains(n.id.as_str()) => {
                    out.extend(v.iter().cloned());
                }
                // Imported from a module of the project's: a data-aware
                // schedule ripple would otherwise read as none.
                None if self.local_modules.contains_key(n.id.as_str()) => {
                    let at = n.range().start().to_usize();
                    self.warn_at(at, format!("the schedule names `{}`, which ripple cannot read (imported from a module of the project's): if it holds datasets, what this DAG runs after is not in the graph; write `Dataset(\"uri\")` / `Asset(\"uri\")` or the cron string in the DAG file", n.id));
                }
                _ => {}
            },
            _ => {}
        }
    }

    /// Whether statements make tasks or DAGs: operator, `@task`,
    /// `@task_group`, TaskGroup, DAG or task-factory calls, anywhere in them
    /// (arguments, comprehensions, `try`, nested blocks).
    fn contains_task_call(&self, stmts: &[Stmt]) -> bool {
        match (stmts.first(), stmts.last()) {
            (Some(a), Some(b)) => {
                let (start, end) = (span(a).0, span(b).1);
                within(&self.maker_calls, (start, end)).next().is_some()
            }
            _ => false,
        }
    }

    /// Whether evaluating `e` makes a task (an operator, `@task`,
    /// `@task_group` or task factory call anywhere in it).
    fn has_task_call(&self, e: &impl Ranged) -> bool {
        within(&self.task_calls, span(e)).next().is_some()
    }

    /// Records what the calls named `key` are, once it is known (a name
    /// imported under an alias, a function found to make tasks): their
    /// spans join [`Reader::task_calls`] or [`Reader::maker_calls`].
    fn promote(&mut self, key: &str) {
        let r = self.aliases.get(key).map_or(key, String::as_str);
        let task = is_operator(r)
            || self.taskflows.contains_key(r)
            || self.group_fns.contains_key(r)
            || r == "DbtTaskGroup";
        let level = if task {
            2
        } else if r == "DAG" || r.ends_with("TaskGroup") {
            1
        } else {
            return;
        };
        if self.call_levels.get(key).is_some_and(|&l| l >= level) {
            return;
        }
        self.call_levels.insert(key.to_string(), level);
        for &s in self.calls.get(key).into_iter().flatten() {
            self.maker_calls.insert(s);
            if task {
                self.task_calls.insert(s);
            }
        }
        // Functions defined before `key` was known to make tasks that call
        // it make tasks too.
        if task {
            let (now, still): (Vec<GroupFn>, Vec<GroupFn>) = std::mem::take(&mut self.plain_fns)
                .into_iter()
                .partition(|p| self.contains_task_call(&p.body));
            self.plain_fns = still;
            for p in now {
                let name = p.name.clone();
                self.group_fns.insert(name.clone(), Rc::new(p));
                self.promote(&name);
            }
        }
    }

    /// Marks the task calls inside `node` as said for: a warning names the
    /// construct that holds them (a loop or comprehension ripple does not
    /// expand).
    fn skip(&mut self, node: &impl Ranged) {
        let inside: Vec<Span> = within(&self.task_calls, span(node)).collect();
        self.handled.extend(inside);
    }

    /// An `airflow-dynamic` warning at byte `at` (its line and column).
    fn warn_at(&mut self, at: usize, message: String) {
        if self.spent() {
            return;
        }
        let (line, column) = self.position(at);
        let warning = Diagnostic::warning(
            "airflow-dynamic",
            Some(self.file.to_string()),
            line,
            column,
            message,
        );
        // A nested comprehension stops at each level in turn: one warning.
        if self.warnings.last() != Some(&warning) {
            self.warnings.push(warning);
        }
    }

    /// Names each task call of the file that was never read (so made no
    /// task) and that no other warning names: in a shape ripple does not
    /// follow (a lambda passed on, a function never called, an operator a
    /// `@task` body runs), where it is and what to do.
    /// Names operator classes used as values (`Sql = Op`, `{"sql": Op}`,
    /// `build(Op, ...)`, `functools.partial(Op, ...)`) or derived from by a
    /// class of the file: the tasks made through them are not read as
    /// written, and a task is never dropped in silence.
    fn operator_values(&mut self, module: &[Stmt]) {
        if self.spent() {
            return;
        }
        let mut finder = OperatorValues {
            aliases: &self.aliases,
            found: Vec::new(),
        };
        finder.visit_body(module);
        for (at, op, base_of) in std::mem::take(&mut finder.found) {
            let message = match base_of {
                Some(class) => format!(
                    "class `{class}` derives from operator `{op}`: its calls are read with the arguments written, not as its own code changes them, so the SQL and tables of its tasks may differ; give its tasks their SQL as keywords, or declare their tables (`inlets=`/`outlets=`)"
                ),
                None => format!(
                    "operator `{op}` is used as a value (aliased, stored, passed or partially applied): tasks made through it are not read, so their tables are not in the graph; call `{op}(...)` by its name to have them read"
                ),
            };
            self.warn_at(at, message);
        }
    }

    fn unread_calls(&mut self, module: &[Stmt]) {
        if self.spent() {
            return;
        }
        let unread: std::collections::BTreeSet<Span> = self
            .task_calls
            .iter()
            .filter(|s| !self.handled.contains(s))
            .copied()
            .collect();
        if unread.is_empty() {
            return;
        }
        let mut finder = Unread {
            unread: &unread,
            taskflows: &self.taskflows,
            context: Vec::new(),
            found: Vec::new(),
        };
        finder.visit_body(module);
        let found = std::mem::take(&mut finder.found);
        for (at, op, place) in found {
            let (place, todo) = match place {
                None => (
                    "is in an expression ripple does not follow".to_string(),
                    DECLARE_TASKS,
                ),
                Some(Where::Comprehension) => (
                    "is in a comprehension ripple does not follow here".to_string(),
                    DECLARE_TASKS,
                ),
                Some(Where::Lambda) => (
                    "is in a lambda this file never calls where ripple reads it (one passed to another function, such as `map`, or bound to a name never called)".to_string(),
                    DECLARE_TASKS,
                ),
                Some(Where::Function(f)) => (
                    format!(
                        "is in function `{f}`, which this file never calls where ripple reads it (a callback, a call from another file, or one in an expression ripple does not follow)"
                    ),
                    DECLARE_TASKS,
                ),
                Some(Where::Task(f)) => (
                    format!(
                        "is in the `@task` function `{f}`: it runs when that task runs, not as a task of the DAG"
                    ),
                    DECLARE_TABLES,
                ),
                Some(Where::Class(c)) => (
                    format!(
                        "is in class `{c}`: it runs when a method of it runs, not as a task of the DAG"
                    ),
                    DECLARE_TABLES,
                ),
            };
            self.warn_at(
                at,
                format!("`{op}(...)` {place}; it is not read as a task, so the tables it reads and writes are not in the graph and impacts may be short: {todo}"),
            );
        }
    }

    /// Opens the TaskGroup `group` inside `prefix`: its key (the group id
    /// Airflow gives it, `__1`-suffixed on a second use where Airflow does
    /// so) and the prefix of the ids of its tasks.
    fn open_group(
        &mut self,
        group: &str,
        prefix: &str,
        prefixed: bool,
        suffix_on_collision: bool,
    ) -> (String, String) {
        let mut key = format!("{prefix}{group}");
        if suffix_on_collision {
            let used = std::mem::take(&mut self.used_groups);
            key = self.unused_name("group", &key, |k| used.contains(k));
            self.used_groups = used;
        }
        self.used_groups.insert(key.clone());
        self.group_members.entry(key.clone()).or_default();
        let parent = self
            .opened_parent
            .take()
            .or_else(|| self.open_groups.last().cloned());
        if let Some(parent) = parent.filter(|p| *p != key) {
            self.group_parents.insert(key.clone(), parent);
        }
        self.open_groups.push(key.clone());
        // `prefix_group_id=False`: the tasks keep their own ids, the group
        // is still an endpoint.
        // Airflow's `child_id`: an unprefixed group's tasks keep their bare
        // ids, whatever groups hold it (`outer.a` was read for `a`).
        let inner = if prefixed {
            format!("{key}.")
        } else {
            String::new()
        };
        self.group_prefixes.insert(key.clone(), inner.clone());
        (key, inner)
    }

    /// The prefix a TaskGroup's id takes: its `parent_group=`'s (Airflow's
    /// `outer.inner`, wherever the group is made), else `prefix`. The
    /// parent is kept for [`Reader::open_group`].
    fn parent_prefix(&mut self, keywords: &[Keyword], prefix: &str) -> String {
        let parent = match kw(keywords, "parent_group") {
            Some(Expr::Name(n)) => self.group_key(n.id.as_str()),
            _ => None,
        };
        match parent {
            Some(key) => {
                let p = self.group_prefixes[&key].clone();
                self.opened_parent = Some(key);
                p
            }
            None => prefix.to_string(),
        }
    }

    /// Marks tasks as setups (or teardowns).
    fn mark_role(&mut self, dag: Option<usize>, tasks: &[String], teardown: bool) {
        let Some(d) = dag.or_else(|| self.dags.len().checked_sub(1)) else {
            return;
        };
        for t in tasks.iter().filter(|t| !t.starts_with(GROUP_MARK)) {
            self.roles.insert((d, t.clone()), teardown);
        }
    }

    /// Whether an expression stands for tasks (a name bound to them, a
    /// call making or marking them, a `>>` chain).
    fn names_tasks(&self, e: &Expr) -> bool {
        match e {
            Expr::Name(n) => matches!(self.names.get(n.id.as_str()), Some(Binding::Tasks(_))),
            Expr::BinOp(b) => matches!(b.op, Operator::RShift | Operator::LShift),
            Expr::Call(c) => {
                matches!(c.func.as_ref(), Expr::Attribute(a) if matches!(a.attr.as_str(), "as_setup" | "as_teardown"))
                    || self.has_task_call(e)
            }
            _ => false,
        }
    }

    /// Enters `with tasks:`: a context if they are setups or teardowns
    /// (the first one decides, as in Airflow), else a warning: Airflow
    /// refuses any other task as a context manager.
    fn enter_setup(
        &mut self,
        dag: Option<usize>,
        tasks: Vec<String>,
        at: usize,
    ) -> Option<SetupContext> {
        let d = dag.or_else(|| self.dags.len().checked_sub(1))?;
        let first = tasks.first()?;
        let Some(&teardown) = self.roles.get(&(d, first.clone())) else {
            self.warn_at(at, format!("`with` of task `{first}`, which ripple does not read as a setup or teardown task: Airflow refuses any other task as a context manager; mark it (`.as_setup()`, `.as_teardown(setups=...)`, `@setup`, `@teardown`)"));
            return None;
        };
        let partners = self.role_partners(d, &tasks, teardown);
        Some(SetupContext {
            dag: d,
            tasks,
            teardown,
            partners,
            made: Vec::new(),
            at,
        })
    }

    /// The teardowns nearest downstream of setups (or the setups nearest
    /// upstream of teardowns), through any path that avoids them, level by
    /// level as Airflow searches.
    fn role_partners(&mut self, d: usize, tasks: &[String], teardown: bool) -> Vec<String> {
        let (up, down) = self.adjacency(d);
        let mut seen: HashSet<&String> = tasks.iter().collect();
        let start = if teardown { &up } else { &down };
        let mut level: Vec<&String> = tasks
            .iter()
            .flat_map(|t| start.get(t).into_iter().flatten())
            .filter(|t| seen.insert(t))
            .collect();
        while !level.is_empty() {
            let found: Vec<String> = level
                .iter()
                .filter(|t| self.roles.get(&(d, (**t).clone())) == Some(&!teardown))
                .map(|t| (*t).clone())
                .collect();
            if !found.is_empty() {
                return found;
            }
            let mut next = Vec::new();
            for t in level {
                for n in up.get(t).into_iter().chain(down.get(t)).flatten() {
                    if seen.insert(n) {
                        next.push(n);
                    }
                }
            }
            level = next;
        }
        Vec::new()
    }

    /// DAG `d`'s upstreams and downstreams, by task id.
    fn adjacency(
        &mut self,
        d: usize,
    ) -> (HashMap<String, Vec<String>>, HashMap<String, Vec<String>>) {
        let tasks = &self.dags[d].tasks;
        let _ = self.spend_here(
            tasks
                .iter()
                .map(|t| t.upstream.len() + 1)
                .sum::<usize>()
                .saturating_mul(64),
        );
        let mut up: HashMap<String, Vec<String>> = HashMap::new();
        let mut down: HashMap<String, Vec<String>> = HashMap::new();
        for t in tasks {
            for u in &t.upstream {
                up.entry(t.task_id.clone()).or_default().push(u.clone());
                down.entry(u.clone()).or_default().push(t.task_id.clone());
            }
        }
        (up, down)
    }

    /// Leaves `with` of setups or teardowns: its first tasks after the
    /// setups, its last before the teardowns, as Airflow wires them.
    fn leave_setup(&mut self, ctx: SetupContext) {
        let d = ctx.dag;
        let work: Vec<String> = ctx
            .made
            .iter()
            .filter(|t| !self.roles.contains_key(&(d, (*t).clone())))
            .cloned()
            .collect();
        if !work.is_empty() {
            let (setups, teardowns) = if ctx.teardown {
                (&ctx.partners, &ctx.tasks)
            } else {
                (&ctx.tasks, &ctx.partners)
            };
            // Read once: the edges made below touch neither which work
            // tasks wait for nothing nor which nothing waits for.
            let (up, down) = self.adjacency(d);
            let ends = |last: bool| -> Vec<String> {
                let edge = if last { &down } else { &up };
                let ends: Vec<String> = work
                    .iter()
                    .filter(|t| edge.get(*t).is_none_or(Vec::is_empty))
                    .cloned()
                    .collect();
                match (ends.is_empty(), last) {
                    (false, _) => ends,
                    (true, false) => work[..1].to_vec(),
                    (true, true) => work[work.len() - 1..].to_vec(),
                }
            };
            let (roots, leaves) = (ends(false), ends(true));
            // In Airflow's order: the context's own end first.
            if ctx.teardown {
                self.depend(Some(d), &leaves, teardowns, ctx.at);
                self.depend(Some(d), setups, &roots, ctx.at);
            } else {
                self.depend(Some(d), setups, &roots, ctx.at);
                self.depend(Some(d), &leaves, teardowns, ctx.at);
            }
        }
        // Nested blocks: the outer setup before the inner, the inner
        // teardown before the outer.
        if let Some(outer) = self.setup_contexts.last()
            && outer.dag == d
            && outer.teardown == ctx.teardown
        {
            let outer = outer.tasks.clone();
            if ctx.teardown {
                self.depend(Some(d), &ctx.tasks, &outer, ctx.at);
            } else {
                self.depend(Some(d), &outer, &ctx.tasks, ctx.at);
            }
        }
    }

    /// The TaskGroup a name is bound to, if it is bound to one.
    fn group_key(&self, name: &str) -> Option<String> {
        match self.names.get(name) {
            Some(Binding::Tasks(t)) if t.len() == 1 => t[0]
                .strip_prefix(GROUP_MARK)
                .filter(|k| self.group_prefixes.contains_key(*k))
                .map(str::to_string),
            _ => None,
        }
    }

    /// Brings the index of DAG `d`'s tasks up to date.
    fn index_tasks(&mut self, d: usize) {
        let tasks = &self.dags[d].tasks;
        let index = self.task_index.entry(d).or_default();
        for (i, t) in tasks.iter().enumerate().skip(index.len_seen) {
            index.by_id.entry(t.task_id.clone()).or_default().push(i);
            for u in &t.upstream {
                index.upstream.insert((i, u.clone()));
            }
            index.len_seen = i + 1;
        }
    }

    /// Calls a `@task_group` function: its body read inside the group, its
    /// parameters bound to what the call passes. The call stands for what
    /// the function returns, else for the group, as in Airflow.
    fn call_group_fn(
        &mut self,
        g: &GroupFn,
        call: &ruff_python_ast::ExprCall,
        dag: Option<usize>,
        prefix: &str,
    ) -> Binding {
        let mut bound = Vec::new();
        for (param, arg) in g.params.iter().zip(&call.arguments.args) {
            bound.push((param.clone(), self.value(arg, dag, prefix)));
        }
        for k in &call.arguments.keywords {
            if let Some(name) = &k.arg {
                bound.push((name.to_string(), self.value(&k.value, dag, prefix)));
            }
        }
        let line = self.line(call);
        self.enter_group_fn(g, bound, (dag, line), prefix)
    }

    /// Reads a `@task_group` function's body inside its group, its
    /// parameters bound to `bound` (what the call passes, already read).
    fn enter_group_fn(
        &mut self,
        g: &GroupFn,
        bound: Vec<(String, Option<Binding>)>,
        (dag, line): (Option<usize>, u32),
        prefix: &str,
    ) -> Binding {
        // Group functions calling group functions multiply: a file may
        // not make more groups than this.
        self.group_calls += 1;
        if self.group_calls > MAX_GROUP_CALLS {
            if self.group_calls == MAX_GROUP_CALLS + 1 {
                self.warn(line, format!("more than {MAX_GROUP_CALLS} calls of `@task_group` or task-making functions in one file; the rest are not read"));
            }
            return Binding::Tasks(Vec::new());
        }
        let what = if g.group { "`@task_group`" } else { "function" };
        if self.entered_fns.contains(&g.name) {
            self.warn(line, format!("{what} `{}` calls itself; Airflow would never finish making it; ripple reads it once: remove the call", g.name));
            return Binding::Tasks(Vec::new());
        }
        self.entered_fns.push(g.name.clone());
        let (key, inner) = if g.group {
            let (key, inner) = self.open_group(&g.group_id, prefix, g.prefixed, true);
            (Some(key), inner)
        } else {
            (None, prefix.to_string())
        };
        // A parameter given what ripple does not read as a binding (`500`,
        // `None`): unbound, so never taken for a task of its name.
        let saved: Vec<(String, Option<Binding>, bool)> = bound
            .into_iter()
            .map(|(name, value)| {
                let was_unbound = self.unbound.contains(&name);
                let old = match value {
                    Some(v) => {
                        self.unbound.remove(&name);
                        self.names.insert(name.clone(), v)
                    }
                    None => {
                        self.unbound.insert(name.clone());
                        self.names.remove(&name)
                    }
                };
                (name, old, was_unbound)
            })
            .collect();
        let outer_return = self.returned.take();
        let outer_returning = std::mem::take(&mut self.returning);
        self.body(&g.body, dag, &inner);
        let returned = std::mem::replace(&mut self.returned, outer_return);
        self.returning = outer_returning;
        for (name, old, was_unbound) in saved {
            if was_unbound {
                self.unbound.insert(name.clone());
            } else {
                self.unbound.remove(&name);
            }
            match old {
                Some(v) => self.names.insert(name, v),
                None => self.names.remove(&name),
            };
        }
        if key.is_some() {
            self.open_groups.pop();
        }
        self.entered_fns.pop();
        match (returned, key) {
            (Some(Binding::Tasks(t)), _) if !t.is_empty() => Binding::Tasks(t),
            (_, Some(key)) => Binding::Tasks(vec![format!("{GROUP_MARK}{key}")]),
            // A factory stands for what it returns (tasks, a DAG), or nothing.
            (returned, None) => returned.unwrap_or(Binding::Tasks(Vec::new())),
        }
    }

    fn add_task(&mut self, dag: Option<usize>, task: Task) {
        self.generation += 1;
        // Each open group keeps the id once more.
        let _ = self.spend_here(
            task.task_id
                .len()
                .saturating_mul(self.open_groups.len() + 1),
        );
        let mut groups: Vec<&String> = Vec::new();
        for open in &self.open_groups {
            let mut at = Some(open);
            // Bounded by the groups there are: a cycle of parents cannot be
            // made, but a loop here must not depend on that.
            let mut left = self.group_parents.len() + 1;
            while let Some(g) = at.filter(|_| left > 0) {
                if !groups.contains(&g) {
                    groups.push(g);
                }
                at = self.group_parents.get(g);
                left -= 1;
            }
        }
        for group in groups {
            if let Some(members) = self.group_members.get_mut(group) {
                members.push(task.task_id.clone());
            }
        }
        if let Some(ctx) = self.setup_contexts.last_mut()
            && Some(ctx.dag) == dag
        {
            ctx.made.push(task.task_id.clone());
        }
        match dag {
            Some(d) => self.dags[d].tasks.push(task),
            None => {
                let line = task.line;
                self.warn(line, format!("task `{}` is not inside a DAG ripple can see (`with DAG(...)`, `@dag` or `dag=`); it is left out", task.task_id));
            }
        }
    }

    /// Makes each task of `up` an upstream of each of `down` (a statement at
    /// byte `at`), unless the dependencies would cost more than the bytes the
    /// file has left: their number is counted before any is made, and an
    /// error names the statement.
    /// Returns how many dependencies it made that were not there.
    fn depend(&mut self, dag: Option<usize>, up: &[String], down: &[String], at: usize) -> usize {
        let Some(d) = dag.or_else(|| self.dags.len().checked_sub(1)) else {
            return 0;
        };
        if up.iter().chain(down).any(|t| t.starts_with(GROUP_MARK)) {
            // Airflow takes a group's last tasks (upstream) and first tasks
            // (downstream) when `>>` runs: tasks added to it, or edges made
            // inside it, afterwards change neither (once taken at the end
            // of the file).
            let Some(up) = self.expand_groups(d, up, true, at) else {
                return 0;
            };
            let Some(down) = self.expand_groups(d, down, false, at) else {
                return 0;
            };
            if !self.group_made.insert((d, up.clone(), down.clone())) {
                return 0;
            }
            return self.depend(Some(d), &up, &down, at);
        }
        // By index, not by a scan of the DAG's tasks: a file of 100,000
        // `a >> b` lines would otherwise take minutes.
        self.index_tasks(d);
        let tasks = &mut self.dags[d].tasks;
        let index = self.task_index.entry(d).or_default();
        // Every pair counted before any is made: a cross product of two
        // lists of 12,000 tasks is 144 million.
        let targets: usize = down
            .iter()
            .map(|name| index.by_id.get(name).map_or(0, Vec::len))
            .sum();
        let per_target: usize = up.iter().map(|u| 2 * u.len() + EDGE_BYTES).sum();
        let cost = targets.saturating_mul(per_target);
        let left = MAX_BUILT_BYTES.saturating_sub(self.built.get());
        if cost > left {
            if self.spent_at.get().is_none() {
                let (line, column) = self.position(at);
                let pairs = targets.saturating_mul(up.len());
                self.warnings.push(Diagnostic::error(
                    "expansion-too-large",
                    Some(self.file.to_string()),
                    line,
                    column,
                    format!(
                        "{} upstream task{} × {} downstream task{} make {pairs} dependencies, more than the {} MiB a DAG file may build; these dependencies are left out (the rest of the file is read). Join the lists through one task (`ups >> EmptyOperator(task_id='join') >> downs`: {} dependencies instead of {pairs}), or split the file",
                        up.len(),
                        crate::text::plural(up.len()),
                        targets,
                        crate::text::plural(targets),
                        MAX_BUILT_BYTES >> 20,
                        up.len() + targets,
                    ),
                ));
            }
            return 0;
        }
        self.built.set(self.built.get() + cost);
        let mut made = 0;
        for name in down {
            let Some(found) = index.by_id.get(name) else {
                continue;
            };
            for &i in found {
                let t = &mut tasks[i];
                for u in up {
                    if index.upstream.insert((i, u.clone())) {
                        t.upstream.push(u.clone());
                        made += 1;
                    }
                }
            }
        }
        if made > 0 {
            self.generation += 1;
        }
        made
    }

    /// `ids` with each group replaced by its leaves (`leaves`: tasks no
    /// member runs after) or roots (tasks that wait for no member), as the
    /// group stands now; `None` once the file's bytes are spent. Read by
    /// member, through the index: each expansion reads the group's tasks,
    /// counted, not the DAG's.
    fn expand_groups(
        &mut self,
        d: usize,
        ids: &[String],
        leaves: bool,
        at: usize,
    ) -> Option<Vec<String>> {
        self.index_tasks(d);
        let mut out = Vec::new();
        for id in ids {
            let Some(key) = id.strip_prefix(GROUP_MARK) else {
                out.push(id.clone());
                continue;
            };
            let memo = (d, key.to_string(), leaves);
            if let Some((generation, ends)) = self.group_ends.get(&memo)
                && *generation == self.generation
            {
                out.extend(ends.iter().cloned());
                continue;
            }
            let start = out.len();
            let members: Vec<String> = self.group_members.get(key).cloned().unwrap_or_default();
            self.spend_at(members.len().saturating_mul(8).saturating_add(1), at)?;
            let set: HashSet<&str> = members.iter().map(String::as_str).collect();
            let index = &self.task_index[&d];
            let tasks = &self.dags[d].tasks;
            let of = |m: &str| index.by_id.get(m).into_iter().flatten().map(|&i| &tasks[i]);
            // Members some member runs after: not leaves.
            let followed: HashSet<&str> = members
                .iter()
                .flat_map(|m| of(m))
                .flat_map(|t| t.upstream.iter().map(String::as_str))
                .filter(|u| set.contains(u))
                .collect();
            let mut seen = HashSet::new();
            for m in &members {
                for t in of(m) {
                    let end = if leaves {
                        !followed.contains(t.task_id.as_str())
                    } else {
                        !t.upstream.iter().any(|u| set.contains(u.as_str()))
                    };
                    if end && seen.insert(t.task_id.as_str()) {
                        out.push(t.task_id.clone());
                    }
                }
            }
            let ends = out[start..].to_vec();
            self.group_ends.insert(memo, (self.generation, ends));
        }
        Some(out)
    }

    /// A string `e` stands for, its bytes counted (see [`Reader::spend`]).
    fn string(&self, e: &Expr) -> Option<String> {
        match e {
            Expr::StringLiteral(s) => {
                let s = s.value.to_str();
                self.spend(s.len(), e)?;
                Some(s.to_string())
            }
            Expr::Name(n) => match self.bound(n.id.as_str()) {
                Some(Binding::Str(s)) => {
                    self.spend(s.len(), e)?;
                    Some(s.clone())
                }
                _ => None,
            },
            // `f"copy_{name}"` with every part known; a format spec or a
            // conversion could print otherwise, so those stay unknown.
            Expr::FString(f) => {
                let mut out = String::new();
                // Each piece is counted before it is added: `f"{s}{s}{s}..."`
                // repeats a long string once per interpolation.
                for part in f.value.iter() {
                    match part {
                        ruff_python_ast::FStringPart::Literal(l) => {
                            self.spend(l.value.len(), e)?;
                            out.push_str(&l.value);
                        }
                        ruff_python_ast::FStringPart::FString(fs) => {
                            for el in &fs.elements {
                                if let Some(l) = el.as_literal() {
                                    self.spend(l.value.len(), e)?;
                                    out.push_str(&l.value);
                                } else if let Some(i) = el.as_interpolation() {
                                    if i.format_spec.is_some()
                                        || i.debug_text.is_some()
                                        || i.conversion != ruff_python_ast::ConversionFlag::None
                                    {
                                        return None;
                                    }
                                    // The interpolated string is counted
                                    // as it is read, then once more here.
                                    let piece = match int(&i.expression) {
                                        Some(n) => n.to_string(),
                                        None => self.string(&i.expression)?,
                                    };
                                    self.spend(piece.len(), e)?;
                                    out.push_str(&piece);
                                }
                            }
                        }
                    }
                }
                Some(out)
            }
            // `"insert into " + table + " select ..."`: every part known.
            // Python nests the chain to the left; it is joined once, each
            // part paid once (paying each partial string grew with the
            // square of the parts: 2,500 of them counted 128 MiB).
            Expr::BinOp(b) if matches!(b.op, Operator::Add) => {
                let mut parts = vec![&*b.right];
                let mut left = &*b.left;
                while let Expr::BinOp(x) = left
                    && matches!(x.op, Operator::Add)
                {
                    parts.push(&*x.right);
                    left = &*x.left;
                }
                parts.push(left);
                let mut out = String::new();
                for part in parts.into_iter().rev() {
                    let piece = self.string(part)?;
                    self.spend(piece.len(), e)?;
                    out.push_str(&piece);
                }
                Some(out)
            }
            _ => None,
        }
    }

    /// What a `for` loop's name is bound to in turn, when known: literal
    /// values ([`Reader::loop_values`]), or the tasks of a list of them
    /// (`for t in loads`, `for t in [a, b]`; `evaluated`: the loop's own
    /// list when it makes the tasks), one task each.
    fn loop_bindings(&self, e: &Expr, evaluated: Option<Binding>) -> Option<Vec<Binding>> {
        if let Some(values) = self.loop_values(e) {
            return Some(values.into_iter().map(Binding::Str).collect());
        }
        let each = |ids: &[String]| -> Vec<Binding> {
            ids.iter()
                .map(|t| Binding::Tasks(vec![t.clone()]))
                .collect()
        };
        let items = match (evaluated, e) {
            (Some(Binding::Tasks(ids)), _) => each(&ids),
            (_, Expr::Name(n)) => match self.names.get(n.id.as_str()) {
                Some(Binding::Tasks(ids)) => each(ids),
                _ => return None,
            },
            (_, Expr::List(ruff_python_ast::ExprList { elts, .. }))
            | (_, Expr::Tuple(ruff_python_ast::ExprTuple { elts, .. })) => elts
                .iter()
                .map(|x| match x {
                    Expr::Name(n) => match self.names.get(n.id.as_str()) {
                        Some(Binding::Tasks(ids)) => Some(Binding::Tasks(ids.clone())),
                        _ => None,
                    },
                    _ => None,
                })
                .collect::<Option<_>>()?,
            _ => return None,
        };
        (items.len() <= MAX_LOOP_VALUES).then_some(items)
    }

    /// The values a `for` loop takes when they are literal: a list or
    /// tuple of strings and integers (or a name bound to such strings), or
    /// `range(...)` of integers; at most [`MAX_LOOP_VALUES`].
    fn loop_values(&self, e: &Expr) -> Option<Vec<String>> {
        let values: Vec<String> = match e {
            Expr::List(l) => l
                .elts
                .iter()
                .map(|v| int(v).map(|n| n.to_string()).or_else(|| self.string(v)))
                .collect::<Option<_>>()?,
            Expr::Tuple(t) => t
                .elts
                .iter()
                .map(|v| int(v).map(|n| n.to_string()).or_else(|| self.string(v)))
                .collect::<Option<_>>()?,
            Expr::Name(n) => match self.bound(n.id.as_str()) {
                Some(Binding::Strs(v)) => {
                    self.spend(v.iter().map(String::len).sum(), e)?;
                    v.clone()
                }
                _ => return None,
            },
            Expr::Call(c)
                if dotted(&c.func) == "range"
                    && !self.shadowed.contains("range")
                    && c.arguments.keywords.is_empty() =>
            {
                let a: Vec<i64> = c.arguments.args.iter().map(int).collect::<Option<_>>()?;
                let (from, to, step) = match a[..] {
                    [to] => (0, to, 1),
                    [from, to] => (from, to, 1),
                    [from, to, step] if step != 0 => (from, to, step),
                    _ => return None,
                };
                let (span, stride) = if step > 0 {
                    ((to - from).max(0), step)
                } else {
                    ((from - to).max(0), -step)
                };
                let count = (span + stride - 1) / stride;
                if count > MAX_LOOP_VALUES as i64 {
                    return None;
                }
                (0..count).map(|k| (from + k * step).to_string()).collect()
            }
            _ => return None,
        };
        (values.len() <= MAX_LOOP_VALUES).then_some(values)
    }
}

/// The dataset a Dataset / Asset URI stands for: a URI that names a table
/// (`postgres://host/db/schema/table`, `mysql://host/db/table`,
/// `bigquery://project/dataset/table`, ...) is that table, as the project's
/// SQL names it (`schema.table`); any other URI or name is kept as written.
pub(super) fn dataset_name(uri: &str) -> String {
    let Some((scheme, rest)) = uri.split_once("://") else {
        return uri.to_string();
    };
    let parts: Vec<&str> = rest.split('/').filter(|p| !p.is_empty()).collect();
    match (scheme.to_ascii_lowercase().as_str(), &parts[..]) {
        (
            "postgres" | "postgresql" | "redshift" | "snowflake" | "trino" | "mssql" | "sqlserver"
            | "databricks" | "bigquery",
            [.., schema, table],
        ) if parts.len() >= 3 => format!("{schema}.{table}"),
        ("mysql" | "mariadb", [_, db, table]) => format!("{db}.{table}"),
        _ => uri.to_string(),
    }
}

/// The dbt a shell command runs: the `dbt run|build|seed|snapshot` words
/// of each command in it (`cd x && dbt run -s a+ --exclude b`), their
/// selectors unioned; `None` when it runs no dbt that builds anything.
pub(super) fn dbt_command(command: &str) -> Option<DbtRun> {
    let mut run: Option<DbtRun> = None;
    for part in command.split(['&', ';', '|', '\n']) {
        let words: Vec<&str> = part.split_whitespace().collect();
        let Some(at) = words
            .iter()
            .position(|w| *w == "dbt" || w.ends_with("/dbt"))
        else {
            continue;
        };
        // Global flags may come before the command (`dbt --no-write-json run`).
        let Some((i, verb)) = words[at + 1..]
            .iter()
            .enumerate()
            .find(|(_, w)| !w.starts_with('-'))
        else {
            continue;
        };
        if !matches!(*verb, "run" | "build" | "seed" | "snapshot") {
            continue;
        }
        let r = run.get_or_insert_with(|| DbtRun {
            command: verb.to_string(),
            select: Vec::new(),
            exclude: Vec::new(),
            cosmos: None,
            nodes: Vec::new(),
            flags: Vec::new(),
        });
        // Flags that change what the project renders to, and their values.
        for (n, w) in words.iter().enumerate().skip(at + 1) {
            let w = w.trim_matches(['"', '\'']);
            let (flag, value) = match w.split_once('=') {
                Some((f, v)) if f.starts_with('-') => (f, Some(v.to_string())),
                _ => (
                    w,
                    words
                        .get(n + 1)
                        .map(|v| v.trim_matches(['"', '\'']).to_string()),
                ),
            };
            if matches!(flag, "--vars" | "--target" | "-t" | "--profile") {
                r.flags.push((flag.to_string(), value.unwrap_or_default()));
            }
        }
        if r.command != *verb {
            r.command = "build".to_string();
        }
        // Where the next values go: selected (`true`) or excluded, and the
        // prefix they take.
        let mut into: Option<(bool, &str)> = None;
        for w in &words[at + 2 + i..] {
            let w = w.trim_matches(['"', '\'']);
            // `--select=agg` is `--select agg` (click reads both); a value
            // lost here made the task build every model.
            let (flag, value) = match w.split_once('=') {
                Some((f, v)) if f.starts_with('-') => (f, Some(v.trim_matches(['"', '\'']))),
                _ => (w, None),
            };
            let target = match flag {
                "--select" | "-s" | "--models" | "--model" | "-m" => Some((true, "")),
                "--exclude" => Some((false, "")),
                // A named selector of `selectors.yml`: kept as a selector
                // ripple does not resolve (named in a warning), never none.
                "--selector" => Some((true, "selector:")),
                f if f.starts_with('-') => None,
                _ => {
                    if let Some((selected, prefix)) = into {
                        let v = format!("{prefix}{w}");
                        match selected {
                            true => r.select.push(v),
                            false => r.exclude.push(v),
                        }
                    }
                    continue;
                }
            };
            match (value, target) {
                (Some(v), Some((selected, prefix))) => {
                    let v = format!("{prefix}{v}");
                    match selected {
                        true => r.select.push(v),
                        false => r.exclude.push(v),
                    }
                    into = None;
                }
                (Some(_), None) => into = None,
                (None, target) => into = target,
            }
        }
    }
    run
}

/// Whether a callee combines datasets (`DatasetAll`, `AssetAny`,
/// `AssetOrTimeSchedule`, ...).
fn is_dataset_expression(callee: &str) -> bool {
    matches!(
        callee,
        "DatasetAll" | "DatasetAny" | "AssetAll" | "AssetAny" | "DatasetAlias" | "AssetAlias"
    ) || callee.ends_with("OrTimeSchedule")
}

/// Whether an operator's name says it moves data between two systems
/// (`S3ToRedshiftOperator`, `PostgresToGCSOperator`): `To` and a capital
/// inside the name.
fn is_transfer(name: &str) -> bool {
    name.ends_with("Operator")
        && name
            .match_indices("To")
            .any(|(i, _)| i > 0 && name[i + 2..].starts_with(|c: char| c.is_ascii_uppercase()))
}

/// Whether a transfer's destination holds tables (`...ToRedshift`), not
/// files or messages (`...ToS3`, `...ToGCS`, `...ToSlack`).
fn writes_a_table(name: &str) -> bool {
    const STORES: [&str; 16] = [
        "S3",
        "GCS",
        "Gcs",
        "GoogleCloudStorage",
        "SFTP",
        "Sftp",
        "FTP",
        "Local",
        "AzureBlob",
        "Wasb",
        "ADLS",
        "AzureDataLake",
        "Email",
        "Slack",
        "Http",
        "Drive",
    ];
    let destination = name
        .rfind("To")
        .map_or(name, |i| &name[i + 2..])
        .trim_end_matches("Operator");
    !STORES.iter().any(|s| destination.starts_with(s))
}

/// Whether a decorator makes a setup (false) or teardown (true) task.
fn setup_role(head: &str) -> Option<bool> {
    match head.rsplit('.').next() {
        Some("setup") => Some(false),
        Some("teardown") => Some(true),
        _ => None,
    }
}

/// Whether a TaskGroup prefixes its tasks' ids (`prefix_group_id`, default
/// true).
fn prefixed(keywords: &[Keyword]) -> bool {
    !matches!(
        kw(keywords, "prefix_group_id"),
        Some(Expr::BooleanLiteral(b)) if !b.value
    )
}

/// Whether a TaskGroup takes `__1`, `__2` when its id is taken
/// (`add_suffix_on_collision=True`), as `@task_group` calls always do.
fn suffixed(keywords: &[Keyword]) -> bool {
    matches!(
        kw(keywords, "add_suffix_on_collision"),
        Some(Expr::BooleanLiteral(b)) if b.value
    )
}

/// An integer literal.
/// A function's parameter names, in order (positional, then keyword-only).
fn parameter_names(f: &ruff_python_ast::StmtFunctionDef) -> Vec<String> {
    params_of(&f.parameters)
}

/// Parameter names, in order (positional, then keyword-only).
fn params_of(p: &ruff_python_ast::Parameters) -> Vec<String> {
    p.posonlyargs
        .iter()
        .chain(&p.args)
        .chain(&p.kwonlyargs)
        .map(|a| a.parameter.name.to_string())
        .collect()
}

/// The bytes a copy of `b` holds.
fn binding_bytes(b: &Binding) -> usize {
    match b {
        Binding::Str(s) => s.len(),
        Binding::Strs(v) | Binding::Tasks(v) => v.iter().map(|s| s.len() + 24).sum(),
        Binding::Dict(m) => m.iter().map(|(k, v)| k.len() + v.len() + 48).sum(),
        Binding::Dag(_) => 0,
        Binding::Partial(p) => {
            p.callee.len()
                + p.keywords
                    .iter()
                    .map(|k| k.range().len().to_usize())
                    .sum::<usize>()
        }
    }
}

/// The bytes a copy of a TaskFlow function's description holds.
fn flow_bytes(f: &TaskFlow) -> usize {
    f.task_id.len()
        + f.operator.len()
        + f.returns_sql.as_ref().map_or(0, String::len)
        + f.inlets
            .iter()
            .chain(&f.outlets)
            .map(String::len)
            .sum::<usize>()
}

/// The length of a node's source text: what a copy of its syntax tree
/// holds, about.
fn source_len(node: &impl Ranged) -> usize {
    node.range().len().to_usize()
}

/// What to do about a task ripple cannot read.
const DECLARE_TASKS: &str = "declare the task at the top level of the DAG, in a `for` loop or comprehension over a literal list or `range(...)`, or in a list or dict literal, to have it read";
/// What to do about an operator run inside another task.
const DECLARE_TABLES: &str = "declare the tables as that task's `inlets` and `outlets`";

/// The calls of `set` whose span lies inside `outer`.
fn within(
    set: &std::collections::BTreeSet<Span>,
    (start, end): Span,
) -> impl Iterator<Item = Span> + '_ {
    set.range((start, 0)..(end, 0))
        .filter(move |s| s.1 <= end)
        .copied()
}

/// The name that decides whether a call makes a task: its callee's last
/// name, or `Op` of `Op.partial(...)` and `flow.expand(...)` (the inner
/// call of `Op.partial(...).expand(...)` decides for it), or `flow` of
/// `flow.override(...)` (not read: named as unread).
fn call_key(c: &ruff_python_ast::ExprCall) -> Option<String> {
    let key = match c.func.as_ref() {
        Expr::Attribute(a)
            if matches!(
                a.attr.as_str(),
                "partial" | "expand" | "expand_kwargs" | "override"
            ) =>
        {
            callee(&a.value)
        }
        f => callee(f),
    };
    (!key.is_empty()).then_some(key)
}

/// Every call of a file, by [`call_key`].
/// Finds operator classes used other than by calling them (see
/// [`Reader::operator_values`]): where, which, and the class deriving from
/// it.
struct OperatorValues<'r> {
    aliases: &'r HashMap<String, String>,
    found: Vec<(usize, String, Option<String>)>,
}

impl OperatorValues<'_> {
    fn operator(&self, e: &Expr) -> Option<String> {
        let name = match e {
            Expr::Name(n) => n.id.to_string(),
            Expr::Attribute(a) => a.attr.to_string(),
            _ => return None,
        };
        let resolved = self.aliases.get(&name).cloned().unwrap_or(name);
        is_operator(&resolved).then_some(resolved)
    }
}

impl<'a> Visitor<'a> for OperatorValues<'_> {
    fn visit_stmt(&mut self, s: &'a Stmt) {
        if let Stmt::ClassDef(c) = s {
            for base in c.bases() {
                if let Some(op) = self.operator(base) {
                    let at = base.range().start().to_usize();
                    self.found.push((at, op, Some(c.name.to_string())));
                }
            }
            self.visit_body(&c.body);
            return;
        }
        walk_stmt(self, s);
    }

    fn visit_annotation(&mut self, _: &'a Expr) {}

    fn visit_expr(&mut self, e: &'a Expr) {
        match e {
            // Called by its name: read (or named) where it is called.
            Expr::Call(c) => {
                if !matches!(c.func.as_ref(), Expr::Name(_) | Expr::Attribute(_)) {
                    self.visit_expr(&c.func);
                } else if let Expr::Attribute(a) = c.func.as_ref() {
                    // `Op.partial(...)`: the class's own method.
                    if self.operator(&a.value).is_none() {
                        self.visit_expr(&a.value);
                    }
                }
                for x in &c.arguments.args {
                    self.visit_expr(x);
                }
                for k in &c.arguments.keywords {
                    self.visit_expr(&k.value);
                }
            }
            Expr::Name(n) if n.ctx.is_load() => {
                if let Some(op) = self.operator(e) {
                    self.found.push((e.range().start().to_usize(), op, None));
                }
            }
            Expr::Attribute(_) if self.operator(e).is_some() => {
                if let Some(op) = self.operator(e) {
                    self.found.push((e.range().start().to_usize(), op, None));
                }
            }
            _ => walk_expr(self, e),
        }
    }
}

#[derive(Default)]
struct CallIndex {
    by_key: HashMap<String, Vec<Span>>,
}

impl<'a> Visitor<'a> for CallIndex {
    fn visit_expr(&mut self, e: &'a Expr) {
        if let Expr::Call(c) = e
            && let Some(key) = call_key(c)
        {
            self.by_key.entry(key).or_default().push(span(c));
        }
        walk_expr(self, e);
    }
}

/// What holds a task call ripple did not read.
#[derive(Debug, Clone)]
enum Where {
    Function(String),
    /// A `@task` function's body.
    Task(String),
    Class(String),
    Lambda,
    Comprehension,
}

/// Finds the unread task calls of a file, each with the innermost
/// construct holding it.
struct Unread<'r> {
    unread: &'r std::collections::BTreeSet<Span>,
    taskflows: &'r HashMap<String, TaskFlow>,
    context: Vec<Where>,
    /// Where each starts, its callee as written, what holds it.
    found: Vec<(usize, String, Option<Where>)>,
}

impl<'a> Visitor<'a> for Unread<'_> {
    fn visit_stmt(&mut self, s: &'a Stmt) {
        let place = match s {
            Stmt::FunctionDef(f) if self.taskflows.contains_key(f.name.as_str()) => {
                Some(Where::Task(f.name.to_string()))
            }
            Stmt::FunctionDef(f) => Some(Where::Function(f.name.to_string())),
            Stmt::ClassDef(c) => Some(Where::Class(c.name.to_string())),
            _ => None,
        };
        let pushed = place.is_some();
        self.context.extend(place);
        walk_stmt(self, s);
        if pushed {
            self.context.pop();
        }
    }

    fn visit_expr(&mut self, e: &'a Expr) {
        if let Expr::Call(c) = e
            && self.unread.contains(&span(c))
        {
            self.found
                .push((span(c).0, dotted(&c.func), self.context.last().cloned()));
        }
        let place = match e {
            Expr::Lambda(_) => Some(Where::Lambda),
            Expr::ListComp(_) | Expr::SetComp(_) | Expr::DictComp(_) | Expr::Generator(_) => {
                Some(Where::Comprehension)
            }
            _ => None,
        };
        let pushed = place.is_some();
        self.context.extend(place);
        walk_expr(self, e);
        if pushed {
            self.context.pop();
        }
    }
}

/// The expressions directly inside `e`.
#[derive(Default)]
struct Children<'a>(Vec<&'a Expr>);

impl<'a> Visitor<'a> for Children<'a> {
    fn visit_expr(&mut self, e: &'a Expr) {
        self.0.push(e);
    }
}

/// What reading one statement costs against the file's byte budget: 2
/// million statements read in all (a loop over 1,000 values of a 100-line
/// body reads 100,000).
const STATEMENT_BYTES: usize = 64;

/// Builtins whose calls the reader evaluates (see [`Reader::shadowed`]).
const READ_BUILTINS: &[&str] = &["range", "list", "tuple", "set", "sorted", "reversed"];

/// Most values a `for` loop is read with.
const MAX_LOOP_VALUES: usize = 1_000;
/// Most loop bodies one file is read through, all loops counted: loops
/// inside loops multiply, and a file must stay cheap to read.
const MAX_LOOP_READS: usize = 10_000;

/// Whether statements set dependencies between tasks (`a >> b`, `a << b`,
/// `set_upstream`, `set_downstream`, `chain`, `chain_linear`,
/// `cross_downstream`),
/// anywhere in them.
fn sets_dependencies(stmts: &[Stmt]) -> bool {
    #[derive(Default)]
    struct Finds(bool);
    impl<'a> Visitor<'a> for Finds {
        fn visit_expr(&mut self, e: &'a Expr) {
            if self.0 {
                return;
            }
            self.0 = match e {
                Expr::BinOp(b) => matches!(b.op, Operator::RShift | Operator::LShift),
                Expr::Call(c) => {
                    let name = dotted(&c.func);
                    let last = name.rsplit('.').next().unwrap_or_default();
                    matches!(
                        last,
                        "set_upstream"
                            | "set_downstream"
                            | "chain"
                            | "chain_linear"
                            | "cross_downstream"
                    )
                }
                _ => false,
            };
            walk_expr(self, e);
        }
    }
    let mut finds = Finds::default();
    for s in stmts {
        walk_stmt(&mut finds, s);
    }
    finds.0
}

/// Whether a loop body leaves its iteration early (then reading it once
/// per value would be wrong).
fn jumps(stmts: &[Stmt]) -> bool {
    stmts.iter().any(|s| match s {
        Stmt::Break(_) | Stmt::Continue(_) => true,
        Stmt::If(i) => jumps(&i.body) || i.elif_else_clauses.iter().any(|c| jumps(&c.body)),
        Stmt::With(w) => jumps(&w.body),
        Stmt::Try(t) => {
            jumps(&t.body)
                || t.handlers.iter().any(|h| {
                    let ruff_python_ast::ExceptHandler::ExceptHandler(h) = h;
                    jumps(&h.body)
                })
                || jumps(&t.orelse)
                || jumps(&t.finalbody)
        }
        Stmt::Match(m) => m.cases.iter().any(|c| jumps(&c.body)),
        _ => false,
    })
}

fn int(e: &Expr) -> Option<i64> {
    match e {
        Expr::NumberLiteral(n) => n.value.as_int().and_then(|i| i.as_i64()),
        _ => None,
    }
}

/// Python syntax errors listed for one DAG file.
const MAX_SYNTAX_ERRORS: usize = 100;

/// Whether `e` is written as a list of tasks: a list, tuple or list
/// comprehension, or a `>>` chain ending in one (`a >> [b, c]` is the
/// list).
fn makes_list(e: &Expr) -> bool {
    match e {
        Expr::List(_) | Expr::Tuple(_) | Expr::ListComp(_) => true,
        Expr::BinOp(b) if matches!(b.op, Operator::RShift | Operator::LShift) => {
            makes_list(&b.right)
        }
        _ => false,
    }
}

/// The keyword argument `name`.
/// Connections as [`Task::connections`] lists them.
fn joined(connections: BTreeMap<String, String>) -> Vec<String> {
    connections
        .into_iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect()
}

fn kw<'e>(keywords: &'e [Keyword], name: &str) -> Option<&'e Expr> {
    keywords
        .iter()
        .find(|k| k.arg.as_ref().is_some_and(|a| a.as_str() == name))
        .map(|k| &k.value)
}

/// The last name of a callee: `airflow.DAG` → `DAG`.
fn callee(e: &Expr) -> String {
    match e {
        Expr::Name(n) => n.id.to_string(),
        Expr::Attribute(a) => a.attr.to_string(),
        _ => String::new(),
    }
}

/// A dotted callee: `task.sql`.
fn dotted(e: &Expr) -> String {
    match e {
        Expr::Name(n) => n.id.to_string(),
        Expr::Attribute(a) => format!("{}.{}", dotted(&a.value), a.attr),
        _ => String::new(),
    }
}

/// Every name `stmts` may bind in their own scope, in any form Python
/// has: assignment targets (tuples, starred, walrus, `for`, `with ... as`),
/// imports, `def`/`class`, `del`, `except ... as`, `match` captures, in
/// every nested block. Sorted, without repeats.
fn bound_names<'s>(blocks: impl IntoIterator<Item = &'s [Stmt]>) -> Vec<String> {
    let mut bound = Bound::default();
    for s in blocks.into_iter().flatten() {
        bound.visit_stmt(s);
    }
    bound.0.sort();
    bound.0.dedup();
    bound.0
}

/// The names an assignment target (`t`, `a, *b`, `d["k"]`'s `d`) binds or
/// changes.
fn store_names(target: &Expr) -> Vec<String> {
    let mut bound = Bound::default();
    bound.visit_expr(target);
    bound.0
}

/// Collects the names statements bind (see [`bound_names`]).
#[derive(Default)]
struct Bound(Vec<String>);

impl<'a> Visitor<'a> for Bound {
    fn visit_stmt(&mut self, s: &'a Stmt) {
        match s {
            // A function's or class's body binds in its own scope.
            Stmt::FunctionDef(f) => self.0.push(f.name.to_string()),
            Stmt::ClassDef(c) => self.0.push(c.name.to_string()),
            Stmt::Import(i) => self.0.extend(i.names.iter().map(|a| {
                a.asname.as_ref().map_or_else(
                    || a.name.split('.').next().unwrap_or_default().to_string(),
                    |n| n.to_string(),
                )
            })),
            Stmt::ImportFrom(i) => self.0.extend(
                i.names
                    .iter()
                    .map(|a| a.asname.as_ref().unwrap_or(&a.name).to_string()),
            ),
            _ => walk_stmt(self, s),
        }
    }
    fn visit_expr(&mut self, e: &'a Expr) {
        match e {
            Expr::Name(n) if !n.ctx.is_load() => self.0.push(n.id.to_string()),
            // `d["k"] = v` changes what `d` stands for.
            Expr::Subscript(x) if !x.ctx.is_load() => {
                self.0.extend(name_of(&x.value));
                walk_expr(self, e);
            }
            Expr::Lambda(_) => {}
            _ => walk_expr(self, e),
        }
    }
    fn visit_except_handler(&mut self, h: &'a ruff_python_ast::ExceptHandler) {
        let ruff_python_ast::ExceptHandler::ExceptHandler(x) = h;
        self.0.extend(x.name.as_ref().map(|n| n.to_string()));
        ruff_python_ast::visitor::walk_except_handler(self, h);
    }
    fn visit_pattern(&mut self, p: &'a ruff_python_ast::Pattern) {
        use ruff_python_ast::Pattern as P;
        let name = match p {
            P::MatchAs(m) => m.name.as_ref(),
            P::MatchStar(m) => m.name.as_ref(),
            P::MatchMapping(m) => m.rest.as_ref(),
            _ => None,
        };
        self.0.extend(name.map(|n| n.to_string()));
        ruff_python_ast::visitor::walk_pattern(self, p);
    }
}

/// Whether a name's state is a value a table name can be made of.
fn is_value((binding, truth, _): &NameState) -> bool {
    truth.is_some()
        || matches!(
            binding,
            Some(Binding::Str(_) | Binding::Strs(_) | Binding::Dict(_))
        )
}

fn name_of(e: &Expr) -> Option<String> {
    match e {
        Expr::Name(n) => Some(n.id.to_string()),
        _ => None,
    }
}

fn is_operator(name: &str) -> bool {
    name.ends_with("Operator") || name.ends_with("Sensor") || name.ends_with("Marker")
}

/// The source text of a node, for values kept as written.
fn source_text(text: &str, node: &impl Ranged) -> String {
    let r = node.range();
    text.get(r.start().to_usize()..r.end().to_usize())
        .unwrap_or_default()
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::dataset_name;

    #[test]
    fn dbt_selectors_in_every_spelling_click_reads() {
        // Review round 25: `--select=agg` was read as no selector, so the
        // task was taken to build every model.
        let run = |c: &str| super::dbt_command(c).unwrap();
        let r = run("dbt run --select=agg --exclude=fct -m=stg");
        assert_eq!(
            (r.select, r.exclude),
            (
                vec!["agg".to_string(), "stg".to_string()],
                vec!["fct".to_string()]
            )
        );
        let r = run("dbt run --models 'a b' --select c");
        assert_eq!(r.select, ["a", "b", "c"]);
        assert_eq!(
            run("dbt build --selector nightly").select,
            ["selector:nightly"]
        );
        assert_eq!(
            run("dbt build --selector=nightly").select,
            ["selector:nightly"]
        );
        assert_eq!(run("dbt run --target=prod --select x").select, ["x"]);
    }

    #[test]
    fn uris_that_name_tables_are_those_tables() {
        assert_eq!(
            dataset_name("postgres://h:5432/db/mart/orders"),
            "mart.orders"
        );
        assert_eq!(dataset_name("snowflake://acct/DB/PUBLIC/T"), "PUBLIC.T");
        assert_eq!(dataset_name("bigquery://proj/ds/t"), "ds.t");
        assert_eq!(dataset_name("trino://h:8080/hive/s/t"), "s.t");
        assert_eq!(dataset_name("mysql://h/shop/items"), "shop.items");
        // Too short to hold a table, or not a database: kept as written.
        assert_eq!(dataset_name("postgres://h/db"), "postgres://h/db");
        assert_eq!(dataset_name("s3://lake/events/"), "s3://lake/events/");
        assert_eq!(dataset_name("raw.orders"), "raw.orders");
    }
}
