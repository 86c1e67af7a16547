//! Airflow DAGs and their tasks as the project holds them: what the DAG
//! reader found, which schedules and the planner read.

use serde::Serialize;

/// A DAG as read from its file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Dag {
    /// `dag_id`.
    pub dag_id: String,
    /// The file (relative to the project root).
    pub file: String,
    /// 1-based line of the declaration.
    pub line: u32,
    /// The schedule as written (`"30 2 * * *"`, `"@hourly"`,
    /// `"timedelta(hours=1)"`, `"None"`, `"datasets"`), if any.
    pub schedule: Option<String>,
    /// `start_date` as written, if a literal.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_date: Option<String>,
    /// The zone a timetable's cron runs in, as written
    /// (`CronTriggerTimetable("0 2 * * *", timezone="America/New_York")`):
    /// Airflow reads the cron there, whatever the start date's zone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule_zone: Option<String>,
    /// `catchup`, if given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub catchup: Option<bool>,
    /// `end_date` as written, if given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_date: Option<String>,
    /// `max_active_runs`, if given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_active_runs: Option<i64>,
    /// `max_active_tasks`, if given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_active_tasks: Option<i64>,
    /// `tags`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tags: Vec<String>,
    /// Tasks in declaration order.
    pub tasks: Vec<Task>,
    /// The datasets (Airflow 3: assets) a data-aware schedule waits for,
    /// as [`Task::writes`] names them; sorted.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub schedule_datasets: Vec<String>,
    /// The DAGs this one runs after (datasets, sensors, markers, triggers),
    /// across files; sorted.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub upstream_dags: Vec<DagEdge>,
}

/// How one DAG follows another.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct DagEdge {
    /// The upstream DAG.
    pub dag_id: String,
    /// Its task the edge leaves from (empty: the whole DAG run).
    pub task_id: String,
    /// `dataset` (an outlet this DAG's schedule waits for), `sensor`
    /// (ExternalTaskSensor), `marker` (ExternalTaskMarker) or `trigger`
    /// (TriggerDagRunOperator).
    pub via: EdgeKind,
    /// The task of this DAG that waits (sensor, marker); empty for a whole
    /// run (dataset, trigger).
    #[serde(skip_serializing_if = "String::is_empty")]
    pub task: String,
    /// The dataset, for `dataset` edges.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub dataset: String,
}

/// What makes a cross-DAG edge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EdgeKind {
    /// The upstream task's outlet is a dataset this DAG is scheduled on.
    Dataset,
    /// An ExternalTaskSensor here waits for the upstream task.
    Sensor,
    /// An ExternalTaskMarker in the upstream DAG names a task here.
    Marker,
    /// A TriggerDagRunOperator upstream starts this DAG.
    Trigger,
}

impl EdgeKind {
    /// Whether the upstream starts a run of this DAG (rather than a run
    /// of this DAG waiting for it).
    pub fn starts_run(self) -> bool {
        matches!(self, EdgeKind::Dataset | EdgeKind::Trigger)
    }
}

/// A task's SQL as written, before Airflow renders it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SqlTemplate {
    /// The text, Jinja included.
    pub text: String,
    /// The task's `params` (or its DAG's); `None`: given as something
    /// ripple cannot read, so `params.*` are runtime values.
    pub params: Option<std::collections::BTreeMap<String, String>>,
}

/// A task as read.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Task {
    /// `task_id`, TaskGroup-prefixed (`group.task`).
    pub task_id: String,
    /// Operator class (`SQLExecuteQueryOperator`, `@task`, `@task.sql`).
    pub operator: String,
    /// The effective pool: the task's, else `default_args`'.
    pub pool: Option<String>,
    /// `pool_slots`, when given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pool_slots: Option<i64>,
    /// `depends_on_past`: the task's, else `default_args`'.
    pub depends_on_past: bool,
    /// Tables its SQL reads (and `inlets`).
    pub reads: Vec<String>,
    /// Tables its SQL writes (and `outlets`).
    pub writes: Vec<String>,
    /// Which reads feed each write, from its SQL's statements; `None` when
    /// every read feeds every write (declared inlets and outlets).
    #[serde(skip)]
    pub feeds: Option<std::collections::BTreeMap<String, std::collections::BTreeSet<String>>>,
    /// Upstream task ids (in this DAG, or `dag_id:task_id` in another).
    pub upstream: Vec<String>,
    /// DAGs this task triggers (`TriggerDagRunOperator`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub triggers: Vec<String>,
    /// 1-based line of the task.
    pub line: u32,
    /// The task's SQL after template rendering, when it has SQL.
    #[serde(skip)]
    pub sql: Option<String>,
    /// The task's SQL as written, when it has SQL.
    #[serde(skip)]
    pub template: Option<SqlTemplate>,
    /// Its declared `outlets` (what it emits dataset events for), as
    /// [`Task::writes`] names them.
    #[serde(skip)]
    pub outlets: Vec<String>,
    /// ExternalTaskMarker: the `dag_id:task_id` in another DAG cleared with
    /// this task (its downstream).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub marks: Vec<String>,
    /// The dbt it runs: a BashOperator's `dbt run|build ...`, or an
    /// astronomer-cosmos DbtDag / DbtTaskGroup (then this task stands for
    /// the group until the dbt project is read and its tasks replace it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dbt: Option<Box<DbtRun>>,
    /// Dynamically mapped (`.partial(...).expand(...)`): one task id, as
    /// many copies as its mapped values at runtime.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub mapped: bool,
    /// The connections it runs on, `key=value` (`postgres_conn_id=dwh`):
    /// its own `*conn_id` keywords over `default_args`'; `?` for a value
    /// ripple cannot read. Sorted.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub connections: Vec<String>,
    /// `trigger_rule`, when given (`all_done`, `one_success`...); `?` for a
    /// value ripple cannot read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trigger_rule: Option<String>,
}

/// dbt run from Airflow.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DbtRun {
    /// The dbt command (`run`, `build`, `seed`, `snapshot`); `cosmos` for a
    /// DbtDag / DbtTaskGroup (one task per node).
    pub command: String,
    /// `--select` / cosmos `RenderConfig(select=...)`: a union of selectors
    /// (empty: every node).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub select: Vec<String>,
    /// `--exclude` / `RenderConfig(exclude=...)`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub exclude: Vec<String>,
    /// For cosmos: the prefix of its tasks' ids (`group.`, empty for a
    /// DbtDag) and `RenderConfig(test_behavior=...)` (`after_each` unless
    /// set).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cosmos: Option<Cosmos>,
    /// The dbt nodes it runs, once the project's dbt is read (node ids).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub nodes: Vec<String>,
    /// Flags of its command that change what the project renders to
    /// (`--vars`, `--target`, `--profile`), with their values as written:
    /// ripple reads the project with `ripple.yml`'s instead.
    #[serde(skip)]
    pub flags: Vec<(String, String)>,
}

/// How astronomer-cosmos names the tasks of a DbtDag / DbtTaskGroup.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Cosmos {
    /// The prefix of its tasks' ids.
    pub prefix: String,
    /// `after_each`, `build`, `after_all` or `none`.
    pub test_behavior: String,
}
