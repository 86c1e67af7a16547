//! The canonical text of a statement: what is left when everything that
//! cannot change its meaning is taken out. Two versions of a model whose
//! canonical texts are equal differ only in formatting, comments, keyword or
//! identifier case (as the engine folds it), or in the names of CTEs and
//! table aliases.
//!
//! Formatting, comments and keyword case go away by printing the AST.
//! Identifiers are printed folded. CTE names and table aliases are replaced
//! by their position (`cte_1`, `t_1`, ...), and a table without an alias gets
//! one, so `FROM orders` with `orders.id` reads the same as `FROM orders o`
//! with `o.id`.

use std::collections::HashMap;
use std::ops::ControlFlow;

use sqlparser::ast::{
    Expr, Ident, ObjectName, ObjectNamePart, Query, Statement, TableAlias, TableFactor, Visit,
    VisitMut, Visitor, VisitorMut,
};

use super::dialect::SqlDialect;
use super::names::{ident_name, relation_name};

/// The canonical text of `statement` (see the module docs).
pub fn canonical_text(statement: &Statement, dialect: SqlDialect) -> String {
    let mut names = Names {
        dialect,
        ctes: HashMap::new(),
        aliases: HashMap::new(),
        relations: HashMap::new(),
    };
    let _ = statement.visit(&mut names);
    let mut stmt = statement.clone();
    let _ = VisitMut::visit(&mut stmt, &mut Rename { names: &names });
    stmt.to_string()
}

/// The placeholders, by folded name, in the order names are defined.
struct Names {
    dialect: SqlDialect,
    /// CTE name → `cte_N`.
    ctes: HashMap<String, String>,
    /// Table alias (or unaliased table's last name part) → `t_N`.
    aliases: HashMap<String, String>,
    /// Unaliased table's full relation name → its `t_N`, for `s.t.col`.
    relations: HashMap<String, String>,
}

impl Names {
    fn fold(&self, id: &Ident) -> String {
        ident_name(id, self.dialect)
    }

    fn alias_for(&mut self, key: String) -> String {
        let n = self.aliases.len() + 1;
        self.aliases
            .entry(key)
            .or_insert_with(|| format!("t_{n}"))
            .clone()
    }
}

impl Visitor for Names {
    type Break = ();

    fn pre_visit_query(&mut self, q: &Query) -> ControlFlow<()> {
        for cte in q.with.iter().flat_map(|w| &w.cte_tables) {
            let key = self.fold(&cte.alias.name);
            let n = self.ctes.len() + 1;
            self.ctes.entry(key).or_insert_with(|| format!("cte_{n}"));
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_table_factor(&mut self, f: &TableFactor) -> ControlFlow<()> {
        match f {
            TableFactor::Table { name, alias, .. } => match alias {
                Some(a) => {
                    let key = self.fold(&a.name);
                    self.alias_for(key);
                }
                None => {
                    let last = name.0.last().and_then(ObjectNamePart::as_ident);
                    if let Some(last) = last {
                        let key = self.fold(last);
                        let placeholder = self.alias_for(key);
                        if let Some(rel) = relation_name(name, self.dialect) {
                            self.relations.entry(rel).or_insert(placeholder);
                        }
                    }
                }
            },
            TableFactor::Derived { alias: Some(a), .. } => {
                let key = self.fold(&a.name);
                self.alias_for(key);
            }
            _ => {}
        }
        ControlFlow::Continue(())
    }
}

/// Replaces defined names by their placeholders and folds every identifier.
struct Rename<'a> {
    names: &'a Names,
}

impl Rename<'_> {
    fn placeholder(&self, id: &Ident, map: &HashMap<String, String>) -> Option<Ident> {
        map.get(&self.names.fold(id)).map(|p| Ident::new(p.clone()))
    }

    fn alias(&self, id: &Ident) -> Option<TableAlias> {
        self.placeholder(id, &self.names.aliases)
            .map(|name| TableAlias {
                explicit: true,
                name,
                columns: Vec::new(),
                at: None,
            })
    }
}

impl VisitorMut for Rename<'_> {
    type Break = ();

    fn pre_visit_query(&mut self, q: &mut Query) -> ControlFlow<()> {
        for cte in q.with.iter_mut().flat_map(|w| &mut w.cte_tables) {
            if let Some(p) = self.placeholder(&cte.alias.name, &self.names.ctes) {
                cte.alias.name = p;
            }
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_table_factor(&mut self, f: &mut TableFactor) -> ControlFlow<()> {
        match f {
            TableFactor::Table { name, alias, .. } => {
                let key = match alias {
                    Some(a) => Some(a.name.clone()),
                    None => name.0.last().and_then(ObjectNamePart::as_ident).cloned(),
                };
                if let Some(new) = key.and_then(|k| self.alias(&k)) {
                    let columns = alias.take().map(|a| a.columns).unwrap_or_default();
                    *alias = Some(TableAlias { columns, ..new });
                }
                if let [ObjectNamePart::Identifier(id)] = name.0.as_slice()
                    && let Some(p) = self.placeholder(id, &self.names.ctes)
                {
                    *name = ObjectName(vec![ObjectNamePart::Identifier(p)]);
                }
            }
            TableFactor::Derived { alias: Some(a), .. } => {
                if let Some(p) = self.placeholder(&a.name, &self.names.aliases) {
                    a.name = p;
                }
            }
            _ => {}
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, e: &mut Expr) -> ControlFlow<()> {
        if let Expr::CompoundIdentifier(parts) = e
            && parts.len() > 1
        {
            let (_, qualifier) = parts.split_last().expect("len > 1");
            let relation = relation_name(
                &ObjectName(
                    qualifier
                        .iter()
                        .cloned()
                        .map(ObjectNamePart::Identifier)
                        .collect(),
                ),
                self.names.dialect,
            );
            if let Some(p) = relation
                .and_then(|r| self.names.relations.get(&r))
                .filter(|_| qualifier.len() > 1)
            {
                let column = parts.pop().expect("len > 1");
                *parts = vec![Ident::new(p.clone()), column];
            } else if let Some(p) = self
                .placeholder(&parts[0], &self.names.aliases)
                .or_else(|| self.placeholder(&parts[0], &self.names.ctes))
            {
                parts[0] = p;
            }
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_ident(&mut self, id: &mut Ident) -> ControlFlow<()> {
        fold_ident(id, self.names.dialect);
        ControlFlow::Continue(())
    }
}

/// Prints `id` as the engine reads it: folded, unquoted.
pub(crate) fn fold_ident(id: &mut Ident, dialect: SqlDialect) {
    if id.quote_style.is_some() || id.value.chars().any(char::is_uppercase) {
        let name = ident_name(id, dialect);
        // A name that needs its quotes stays a quoted identifier, so that
        // folding it again (a column resolved after its statement was
        // folded) gives it back unchanged.
        *id = match name.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
            Some(inner) => Ident::with_quote('"', inner.replace("\"\"", "\"")),
            None => Ident::new(name),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sqlparser::parser::Parser;

    fn canon(sql: &str) -> String {
        let dialect = SqlDialect::Generic;
        let stmt = Parser::parse_sql(&*dialect.parser_dialect(), sql)
            .unwrap()
            .remove(0);
        canonical_text(&stmt, dialect)
    }

    #[test]
    fn formatting_case_comments_and_aliases_do_not_count() {
        let a = canon(
            "with paid as (select o.id, o.amount from shop.orders o where o.status = 'paid')\n\
             select p.id, SUM(p.amount) as total from paid p group by p.id",
        );
        let b = canon(
            "WITH settled AS ( -- only settled orders\n  SELECT ord.id, ord.amount\n  FROM SHOP.ORDERS AS ord\n  WHERE ord.status = 'paid'\n)\n\
             SELECT s.id, sum(s.amount) AS total FROM settled AS s GROUP BY s.id",
        );
        assert_eq!(a, b);
        // An unaliased table reads the same as an aliased one.
        assert_eq!(
            canon("select orders.id from orders"),
            canon("select o.id from orders o")
        );
        assert_eq!(
            canon("select shop.orders.id from shop.orders"),
            canon("select x.id from shop.orders x")
        );
    }

    #[test]
    fn what_changes_meaning_still_differs() {
        let base = canon("select id from orders where status = 'paid'");
        for other in [
            "select id from orders where status = 'PAID'",
            "select id from orders where status <> 'paid'",
            "select id from orders_v2 where status = 'paid'",
            "select id, amount from orders where status = 'paid'",
        ] {
            assert_ne!(canon(other), base, "{other}");
        }
    }
}
