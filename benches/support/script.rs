//! A generator of large multi-statement SQL scripts, for benchmarks.
//!
//! The statements mix the shapes real warehouse scripts are made of (CTEs,
//! joins, subqueries, INSERT ... SELECT, MERGE, CTAS, UPDATE/DELETE) so the
//! lineage walk does representative work per byte parsed.

/// A deterministic script of at least `bytes` bytes.
pub fn script(bytes: usize) -> String {
    let mut out = String::with_capacity(bytes + 4096);
    let mut i = 0usize;
    while out.len() < bytes {
        let a = i % 97;
        let b = (i * 7) % 89;
        let sql = match i % 6 {
            0 => format!(
                "WITH recent_{i} AS (\n  SELECT o.order_id, o.customer_id, o.amount, o.ordered_at\n  FROM raw.orders_{a} o\n  WHERE o.ordered_at >= DATE '2026-01-01' AND o.status <> 'cancelled'\n),\ncustomers_{i} AS (\n  SELECT c.id, c.segment FROM crm.customers_{b} c WHERE c.active\n)\nINSERT INTO mart.daily_{i} (order_date, segment, revenue, orders)\nSELECT CAST(r.ordered_at AS DATE), c.segment, SUM(r.amount), COUNT(*)\nFROM recent_{i} r\nJOIN customers_{i} c ON c.id = r.customer_id\nGROUP BY 1, 2\nHAVING SUM(r.amount) > 0;\n"
            ),
            1 => format!(
                "CREATE TABLE stage.orders_{i} AS\nSELECT o.*, p.name AS product_name, (SELECT MAX(s.shipped_at) FROM ops.shipments_{a} s WHERE s.order_id = o.order_id) AS shipped_at\nFROM raw.orders_{a} o\nLEFT JOIN catalog.products_{b} p ON p.id = o.product_id\nWHERE o.order_id IN (SELECT order_id FROM raw.order_items_{b} WHERE qty > 0);\n"
            ),
            2 => format!(
                "MERGE INTO dim.customers_{a} t\nUSING (SELECT id, email, country, updated_at FROM raw.customer_changes_{b} WHERE updated_at > CURRENT_DATE - 1) s\nON t.id = s.id\nWHEN MATCHED THEN UPDATE SET email = s.email, country = s.country, updated_at = s.updated_at\nWHEN NOT MATCHED THEN INSERT (id, email, country, updated_at) VALUES (s.id, s.email, s.country, s.updated_at);\n"
            ),
            3 => format!(
                "UPDATE mart.accounts_{a} SET balance = b.total, refreshed_at = CURRENT_TIMESTAMP\nFROM (SELECT account_id, SUM(amount) AS total FROM ledger.entries_{b} GROUP BY account_id) b\nWHERE b.account_id = mart.accounts_{a}.id;\n"
            ),
            4 => format!(
                "DELETE FROM mart.sessions_{a} WHERE user_id IN (SELECT id FROM risk.banned_{b}) OR started_at < DATE '2025-01-01';\n"
            ),
            _ => format!(
                "SELECT u.id, u.email, COUNT(e.id) AS events, CASE WHEN COUNT(e.id) > 100 THEN 'heavy' ELSE 'light' END AS tier\nFROM app.users_{a} u\nLEFT JOIN app.events_{b} e ON e.user_id = u.id AND e.ts >= u.created_at\nWHERE EXISTS (SELECT 1 FROM app.subscriptions_{a} s WHERE s.user_id = u.id)\nGROUP BY u.id, u.email\nUNION ALL\nSELECT id, email, 0, 'none' FROM app.deleted_users_{b};\n"
            ),
        };
        out.push_str(&sql);
        i += 1;
    }
    out
}
