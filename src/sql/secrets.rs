//! Secrets written into SQL (`CREDENTIALS '...'`, `CREATE SECRET (... SECRET
//! '...')`, `IDENTIFIED BY '...'`, a password in a connection URL), masked
//! for text that leaves the machine: a lineage server has no use for them.

use std::borrow::Cow;

use sqlparser::tokenizer::{Token, Tokenizer};

use super::dialect::SqlDialect;

/// What a masked secret shows instead.
const MASK: &str = "***";

/// Words after which a string literal (perhaps after `=` or `TO`) is a
/// secret, upper-case.
const SECRET_WORDS: &[&str] = &[
    "ACCESS_KEY",
    "ACCESS_KEY_ID",
    "ACCOUNT_KEY",
    "AWS_KEY_ID",
    "AWS_SECRET_KEY",
    "AWS_TOKEN",
    "AZURE_SAS_TOKEN",
    "CLIENT_SECRET",
    "CONNECTION_STRING",
    "CREDENTIAL",
    "CREDENTIALS",
    "KEY_ID",
    "MASTER_KEY",
    "PASSWORD",
    "PRIVATE_KEY",
    "SAS_TOKEN",
    "SECRET",
    "SECRET_ACCESS_KEY",
    "SECRET_KEY",
    "SESSION_TOKEN",
    "TOKEN",
];

/// `sql` with the secrets written in it masked (the literal's text becomes
/// `***`); the text as it is when it holds none, or when it does not
/// tokenize (nothing to find a literal in).
pub fn mask_secrets(sql: &str, dialect: SqlDialect) -> Cow<'_, str> {
    let parser = dialect.parser_dialect();
    let Ok(tokens) = Tokenizer::new(&*parser, sql).tokenize() else {
        return Cow::Borrowed(sql);
    };
    let mut out = tokens.clone();
    let mut found = false;
    // The last two words before a literal, `=` and `TO` skipped over.
    let mut last: [Option<String>; 2] = [None, None];
    for (i, t) in tokens.iter().enumerate() {
        match t {
            Token::Whitespace(_) | Token::Eq => {}
            Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case("to") => {}
            Token::Word(w) => {
                last = [last[1].take(), Some(w.value.to_ascii_uppercase())];
                continue;
            }
            Token::SingleQuotedString(s)
            | Token::DoubleQuotedString(s)
            | Token::EscapedStringLiteral(s)
            | Token::NationalStringLiteral(s) => {
                let named = last[1]
                    .as_deref()
                    .is_some_and(|w| SECRET_WORDS.contains(&w))
                    || (last[0].as_deref() == Some("IDENTIFIED")
                        && last[1].as_deref() == Some("BY"));
                let masked = if named {
                    Some(MASK.to_string())
                } else {
                    url_password(s)
                };
                if let Some(m) = masked {
                    found = true;
                    out[i] = match t {
                        Token::DoubleQuotedString(_) => Token::DoubleQuotedString(m),
                        _ => Token::SingleQuotedString(m),
                    };
                }
                last = [None, None];
            }
            _ => last = [None, None],
        }
    }
    if !found {
        return Cow::Borrowed(sql);
    }
    Cow::Owned(out.iter().map(ToString::to_string).collect())
}

/// `s` with the user part of every `scheme://user:password@host` in it
/// masked, when there is one.
fn url_password(s: &str) -> Option<String> {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    let mut found = false;
    while let Some(at) = rest.find("://") {
        let (head, tail) = rest.split_at(at + 3);
        out.push_str(head);
        let authority_end = tail.find(['/', '?', '#', ' ', '\'']).unwrap_or(tail.len());
        let authority = &tail[..authority_end];
        // The whole user part: `s3://KEY:SECRET@`, `https://TOKEN@`.
        match authority.rfind('@') {
            Some(at) => {
                out.push_str(MASK);
                out.push_str(&authority[at..]);
                found = true;
            }
            None => out.push_str(authority),
        }
        rest = &tail[authority_end..];
    }
    out.push_str(rest);
    found.then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pg(s: &str) -> String {
        mask_secrets(s, SqlDialect::Postgres).into_owned()
    }

    #[test]
    fn secrets_after_their_keywords_are_masked() {
        assert_eq!(
            mask_secrets(
                "copy raw.t from 's3://b/k' credentials 'aws_access_key_id=AK;aws_secret_access_key=SK' csv",
                SqlDialect::Redshift
            ),
            "copy raw.t from 's3://b/k' credentials '***' csv"
        );
        assert_eq!(
            mask_secrets(
                "create secret s3 (type s3, key_id 'AKIA', secret 'shh', region 'eu')",
                SqlDialect::DuckDb
            ),
            "create secret s3 (type s3, key_id '***', secret '***', region 'eu')"
        );
        assert_eq!(
            pg("alter user etl with password 'hunter2'"),
            "alter user etl with password '***'"
        );
        assert_eq!(
            mask_secrets("create user u identified by 'pw'", SqlDialect::Oracle),
            "create user u identified by '***'"
        );
        assert_eq!(
            mask_secrets(
                "copy into t from 's3://b' credentials = (aws_key_id = 'A' aws_secret_key = 'S')",
                SqlDialect::Snowflake
            ),
            "copy into t from 's3://b' credentials = (aws_key_id = '***' aws_secret_key = '***')"
        );
    }

    #[test]
    fn passwords_in_urls_are_masked_and_the_rest_kept() {
        assert_eq!(
            pg("attach 'postgresql://etl:pw@db:5432/x' as pg"),
            "attach 'postgresql://***@db:5432/x' as pg"
        );
        assert_eq!(
            pg("select 'http://example.com/a@b'"),
            "select 'http://example.com/a@b'"
        );
    }

    #[test]
    fn sql_without_secrets_is_returned_as_it_is() {
        let sql =
            "select  password_hash, coalesce(password, 'x') as token_name -- note\nfrom users";
        assert!(matches!(
            mask_secrets(sql, SqlDialect::Postgres),
            Cow::Borrowed(_)
        ));
        assert!(matches!(
            mask_secrets("select 'unterminated", SqlDialect::Postgres),
            Cow::Borrowed(_)
        ));
    }
}
