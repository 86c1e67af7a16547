//! Names a DAG file may change where the reader does not follow it: the
//! statement-by-statement reading binds a name to a string, list or dict,
//! but Python can change it from afar (`global T` in a function, a list
//! changed through a second name or inside a function it is passed to,
//! `exec`, `globals()[...]`). Such a name never stands for a known value:
//! a table named through it is reported as depending on runtime values,
//! never as a value it may no longer have.

use std::collections::{HashMap, HashSet};

use ruff_python_ast::visitor::{Visitor, walk_expr, walk_stmt};
use ruff_python_ast::{Expr, Stmt};

/// Methods that change a list, dict or set in place.
pub(super) const MUTATING_METHODS: &[&str] = &[
    "append",
    "extend",
    "insert",
    "remove",
    "pop",
    "clear",
    "sort",
    "reverse",
    "update",
    "setdefault",
    "popitem",
    "add",
    "discard",
    "__setitem__",
    "__delitem__",
    "__iadd__",
    "__ior__",
];

/// Builtins whose calls can run any code or change any name.
const DYNAMIC_CALLS: &[&str] = &[
    "exec",
    "eval",
    "globals",
    "locals",
    "vars",
    "setattr",
    "delattr",
    "__import__",
    "compile",
];

/// What the prescan of one file found.
#[derive(Debug, Default)]
pub(super) struct Volatile {
    /// Names that are never a known value (`global T` in a function, a
    /// walrus inside a comprehension).
    pub rebound: HashSet<String>,
    /// Names whose list or dict is never a known value: changed inside a
    /// function, through another name, or by a function it is passed to.
    pub mutable: HashSet<String>,
    /// Where statements that may change any name start (byte offsets):
    /// those running code ripple cannot read (`exec`, `globals()[...] =`,
    /// `setattr`, `sys.modules`, `from m import *`), directly or through a
    /// function of the file that does.
    pub dynamic: HashSet<usize>,
    /// Every name whose list or dict is changed in place anywhere (by
    /// itself too): an operator holding it runs what it holds later.
    pub changed: HashSet<String>,
}

/// The name an expression changes when stored into: `l` for `l[0]["t"]`,
/// `cfg` for `cfg.x`.
pub(super) fn root_name(e: &Expr) -> Option<&str> {
    match e {
        Expr::Name(n) => Some(n.id.as_str()),
        Expr::Subscript(s) => root_name(&s.value),
        Expr::Attribute(a) => root_name(&a.value),
        _ => None,
    }
}

/// The names an expression's value may be the same object as: `p` in
/// `p`, `[p]`, `{"k": p}`, `(a, *b)`, `x if c else p`.
fn shared(e: &Expr, out: &mut Vec<String>) {
    match e {
        Expr::Name(n) => out.push(n.id.to_string()),
        Expr::List(l) => l.elts.iter().for_each(|x| shared(x, out)),
        Expr::Tuple(t) => t.elts.iter().for_each(|x| shared(x, out)),
        Expr::Set(s) => s.elts.iter().for_each(|x| shared(x, out)),
        Expr::Dict(d) => d.items.iter().for_each(|i| shared(&i.value, out)),
        Expr::Starred(s) => shared(&s.value, out),
        Expr::If(i) => {
            shared(&i.body, out);
            shared(&i.orelse, out);
        }
        Expr::BoolOp(b) => b.values.iter().for_each(|x| shared(x, out)),
        Expr::Named(n) => shared(&n.value, out),
        _ => {}
    }
}

#[derive(Default)]
struct Scan {
    volatile: Volatile,
    /// Functions being read (innermost last).
    functions: Vec<String>,
    comprehensions: usize,
    /// Names changed in place, and whether inside a function.
    changed: Vec<(String, bool)>,
    /// `(to, from)`: a change through `to` may change `from`'s value.
    aliases: Vec<(String, String)>,
    /// Functions of the file that change something in place.
    changing_fns: HashSet<String>,
    /// Names passed to each function of the file by name.
    passed: HashMap<String, Vec<String>>,
    /// The simple statement being read (its start).
    statement: Option<usize>,
    /// Per simple statement: whether it runs unreadable code itself, and
    /// the functions it calls by name.
    statements: HashMap<usize, (bool, Vec<String>)>,
    /// Functions that run unreadable code themselves.
    dynamic_fns: HashSet<String>,
    /// Calls by name from each function of the file.
    calls: Vec<(String, String)>,
}

impl Scan {
    /// Code ripple cannot read runs here.
    fn dynamic(&mut self) {
        if let Some(at) = self.statement {
            self.statements.entry(at).or_default().0 = true;
        }
        if let Some(f) = self.functions.last() {
            self.dynamic_fns.insert(f.clone());
        }
    }

    fn change(&mut self, name: &str) {
        self.changed
            .push((name.to_string(), !self.functions.is_empty()));
        if let Some(f) = self.functions.last() {
            self.changing_fns.insert(f.clone());
        }
    }

    /// `targets = value`: a change through a target changes what `value`
    /// shares; when the value is a name itself (`q = p`), a change through
    /// it changes the target too.
    fn alias(&mut self, targets: &[&Expr], value: &Expr) {
        self.alias_as(targets, value, matches!(value, Expr::Name(_)));
    }

    /// [`Scan::alias`]; `itself`: the targets are the value's object.
    fn alias_as(&mut self, targets: &[&Expr], value: &Expr, itself: bool) {
        let mut from = Vec::new();
        shared(value, &mut from);
        for t in targets {
            if let Some(to) = root_name(t) {
                for f in &from {
                    self.aliases.push((to.to_string(), f.clone()));
                    if itself {
                        self.aliases.push((f.clone(), to.to_string()));
                    }
                }
            }
        }
    }
}

impl<'a> Visitor<'a> for Scan {
    fn visit_stmt(&mut self, s: &'a Stmt) {
        let simple = !matches!(
            s,
            Stmt::For(_)
                | Stmt::While(_)
                | Stmt::If(_)
                | Stmt::With(_)
                | Stmt::Try(_)
                | Stmt::Match(_)
                | Stmt::FunctionDef(_)
                | Stmt::ClassDef(_)
        );
        let outer = self.statement;
        if simple {
            self.statement = Some(ruff_text_size::Ranged::range(s).start().to_usize());
        }
        self.read_stmt(s);
        self.statement = outer;
    }

    fn visit_expr(&mut self, e: &'a Expr) {
        self.read_expr(e);
    }
}

impl Scan {
    fn read_stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::ImportFrom(i) if i.names.iter().any(|a| a.name.as_str() == "*") => {
                self.dynamic();
            }
            // `globals()[f"dag_{name}"] = make(name)`, the way files make
            // DAGs in a loop: the reader forgets the name it binds.
            Stmt::Assign(a) if a.targets.iter().all(is_globals_item) => {
                for t in &a.targets {
                    if let Expr::Subscript(x) = t {
                        self.visit_expr(&x.slice);
                    }
                }
                self.visit_expr(&a.value);
                return;
            }
            Stmt::Global(g) => self
                .volatile
                .rebound
                .extend(g.names.iter().map(|n| n.to_string())),
            Stmt::Nonlocal(g) => self
                .volatile
                .rebound
                .extend(g.names.iter().map(|n| n.to_string())),
            Stmt::FunctionDef(f) => {
                self.functions.push(f.name.to_string());
                walk_stmt(self, s);
                self.functions.pop();
                return;
            }
            Stmt::Assign(a) => {
                let targets: Vec<&Expr> = a.targets.iter().collect();
                self.alias(&targets, &a.value);
                for t in &a.targets {
                    if !matches!(t, Expr::Name(_))
                        && let Some(root) = root_name(t)
                    {
                        self.change(root);
                    }
                }
            }
            Stmt::AnnAssign(a) => {
                if let Some(v) = &a.value {
                    self.alias(&[&a.target], v);
                }
                if !matches!(*a.target, Expr::Name(_))
                    && let Some(root) = root_name(&a.target)
                {
                    self.change(root);
                }
            }
            Stmt::AugAssign(a) => {
                // `l += [x]` changes the list in place (a name bound to a
                // string gets a new string, which the reader follows).
                if let Some(root) = root_name(&a.target) {
                    self.change(root);
                }
            }
            Stmt::Delete(d) => {
                for t in &d.targets {
                    if !matches!(t, Expr::Name(_))
                        && let Some(root) = root_name(t)
                    {
                        self.change(root);
                    }
                }
            }
            Stmt::For(f) => {
                // `for p["t"] in ...`: stores into `p` on each iteration.
                if !matches!(*f.target, Expr::Name(_))
                    && let Some(root) = root_name(&f.target)
                {
                    self.change(root);
                }
                // `for d in dicts: d["k"] = v` changes the dicts in `dicts`.
                self.alias_as(&[&f.target], &f.iter, false);
            }
            Stmt::With(w) => {
                for item in &w.items {
                    if let Some(v) = item.optional_vars.as_deref() {
                        self.alias(&[v], &item.context_expr);
                    }
                }
            }
            _ => {}
        }
        walk_stmt(self, s);
    }

    fn read_expr(&mut self, e: &Expr) {
        match e {
            Expr::ListComp(_) | Expr::SetComp(_) | Expr::DictComp(_) | Expr::Generator(_) => {
                self.comprehensions += 1;
                walk_expr(self, e);
                self.comprehensions -= 1;
                return;
            }
            Expr::Lambda(_) => {
                self.functions.push("<lambda>".to_string());
                walk_expr(self, e);
                self.functions.pop();
                return;
            }
            Expr::Named(n) => {
                if self.comprehensions > 0
                    && let Some(root) = root_name(&n.target)
                {
                    self.volatile.rebound.insert(root.to_string());
                }
                self.alias(&[&n.target], &n.value);
            }
            Expr::Call(c) => {
                match c.func.as_ref() {
                    Expr::Name(n) if DYNAMIC_CALLS.contains(&n.id.as_str()) => {
                        self.dynamic();
                    }
                    Expr::Name(n) => {
                        if let Some(at) = self.statement {
                            self.statements
                                .entry(at)
                                .or_default()
                                .1
                                .push(n.id.to_string());
                        }
                        if let Some(f) = self.functions.last() {
                            self.calls.push((f.clone(), n.id.to_string()));
                        }
                        let args = c
                            .arguments
                            .args
                            .iter()
                            .chain(c.arguments.keywords.iter().map(|k| &k.value));
                        for a in args {
                            let mut names = Vec::new();
                            shared(a, &mut names);
                            self.passed
                                .entry(n.id.to_string())
                                .or_default()
                                .extend(names);
                        }
                    }
                    Expr::Attribute(a) => {
                        if MUTATING_METHODS.contains(&a.attr.as_str())
                            && let Some(root) = root_name(&a.value)
                        {
                            self.change(root);
                        }
                        // `l.append(p)`: `p` may now be changed through `l`.
                        if let Some(root) = root_name(&a.value) {
                            for arg in &c.arguments.args {
                                let mut names = Vec::new();
                                shared(arg, &mut names);
                                for n in names {
                                    self.aliases.push((root.to_string(), n));
                                }
                            }
                        }
                    }
                    _ => {}
                }
            }
            Expr::Attribute(a) if matches!(a.attr.as_str(), "modules" | "__dict__") => {
                self.dynamic();
            }
            _ => {}
        }
        walk_expr(self, e);
    }
}

/// Scans a module for the names it may change where the reader does not
/// follow it (see [`Volatile`]).
pub(super) fn scan(module: &[Stmt]) -> Volatile {
    let mut scan = Scan::default();
    for s in module {
        scan.visit_stmt(s);
    }
    // What a change through each name reaches, through the names sharing
    // its value (`q = p; q["t"] = x` changes `p`).
    let mut reaches: HashMap<&str, Vec<&str>> = HashMap::new();
    for (to, from) in &scan.aliases {
        reaches.entry(to).or_default().push(from);
    }
    let mut mutable: HashSet<String> = HashSet::new();
    // One walk from every changed name at once: a walk per name grew with
    // the square of the names (20,000 aliases each changed: 58 s).
    let mut queue: Vec<&str> = Vec::new();
    for (name, in_function) in &scan.changed {
        // Changed by itself where the reader reads it in order, it is
        // followed (`params["t"] = "x"` at module level).
        if *in_function {
            mutable.insert(name.clone());
        }
        queue.push(name);
    }
    let mut seen: HashSet<&str> = HashSet::new();
    while let Some(n) = queue.pop() {
        for &other in reaches.get(n).into_iter().flatten() {
            if seen.insert(other) {
                mutable.insert(other.to_string());
                queue.push(other);
            }
        }
    }
    // Passed to a function of the file that changes something in place.
    for f in &scan.changing_fns {
        if let Some(names) = scan.passed.get(f) {
            mutable.extend(names.iter().cloned());
        }
    }
    // Functions running unreadable code, through the calls between them.
    let mut callers: HashMap<&str, Vec<&str>> = HashMap::new();
    for (caller, callee) in &scan.calls {
        callers.entry(callee).or_default().push(caller);
    }
    let mut dynamic_fns: HashSet<&str> = scan.dynamic_fns.iter().map(String::as_str).collect();
    let mut queue: Vec<&str> = dynamic_fns.iter().copied().collect();
    while let Some(f) = queue.pop() {
        for &caller in callers.get(f).into_iter().flatten() {
            if dynamic_fns.insert(caller) {
                queue.push(caller);
            }
        }
    }
    let mut volatile = scan.volatile;
    volatile.mutable = mutable;
    volatile.changed = scan.changed.iter().map(|(n, _)| n.clone()).collect();
    volatile.dynamic = scan
        .statements
        .into_iter()
        .filter(|(_, (direct, callees))| {
            *direct || callees.iter().any(|c| dynamic_fns.contains(c.as_str()))
        })
        .map(|(at, _)| at)
        .collect();
    volatile
}

/// `globals()[key]`.
pub(super) fn is_globals_item(e: &Expr) -> bool {
    matches!(e, Expr::Subscript(x) if matches!(x.value.as_ref(),
        Expr::Call(c) if matches!(c.func.as_ref(), Expr::Name(n) if n.id.as_str() == "globals")
            && c.arguments.args.is_empty()
            && c.arguments.keywords.is_empty()))
}
