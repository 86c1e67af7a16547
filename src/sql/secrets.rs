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
/// masked, and the signatures of signed URLs (`?sig=`, `X-Amz-Signature=`),
/// when there is one.
fn url_password(s: &str) -> Option<String> {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    let mut found = false;
    while let Some(at) = rest.find("://") {
        let (head, tail) = rest.split_at(at + 3);
        out.push_str(head);
        let token_end = tail.find([' ', '\'', '"']).unwrap_or(tail.len());
        let token = &tail[..token_end];
        // The whole user part: `s3://KEY:SECRET@`, `https://TOKEN@`.
        let after_user = match userinfo_end(token) {
            Some(at) => {
                out.push_str(MASK);
                found = true;
                at
            }
            None => 0,
        };
        let url = &token[after_user..];
        match signed_query(url) {
            Some(masked) => {
                out.push_str(&masked);
                found = true;
            }
            None => out.push_str(url),
        }
        rest = &tail[token_end..];
    }
    out.push_str(rest);
    found.then_some(out)
}

/// Where the user part of a URL ends (the index of its `@`), given what
/// follows `scheme://`: the last `@` of the authority, or, when the part
/// before the first `/`, `?` or `#` holds a `:`, the last `@` of all. A
/// secret key is often written raw and holds a `/` (`s3://KEY:SE/CRET@bucket`):
/// taken at the first `/`, it once went to a lineage server whole. A path
/// holding `@` after a port is masked too: more is hidden, never less.
pub fn userinfo_end(url: &str) -> Option<usize> {
    let first = url.find(['/', '?', '#']).unwrap_or(url.len());
    if let Some(at) = url[..first].rfind('@') {
        return Some(at);
    }
    let colon = url[..first].find(':')?;
    url.rfind('@').filter(|&at| at > colon)
}

/// Query parameters whose values sign a URL: whoever holds one may read.
const SIGNATURE_PARAMETERS: &[&str] = &[
    "sig",
    "signature",
    "x-amz-signature",
    "x-amz-credential",
    "x-amz-security-token",
    "x-goog-signature",
    "x-goog-credential",
    "access_token",
    "token",
];

/// `url` with the values of its signature parameters masked, if it has any.
fn signed_query(url: &str) -> Option<String> {
    let q = url.find('?')?;
    let (base, query) = url.split_at(q + 1);
    let mut found = false;
    let parts: Vec<String> = query
        .split('&')
        .map(|p| match p.split_once('=') {
            Some((k, _)) if SIGNATURE_PARAMETERS.contains(&k.to_ascii_lowercase().as_str()) => {
                found = true;
                format!("{k}={MASK}")
            }
            _ => p.to_string(),
        })
        .collect();
    found.then(|| format!("{base}{}", parts.join("&")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pg(s: &str) -> String {
        mask_secrets(s, SqlDialect::Postgres).into_owned()
    }

    #[test]
    fn raw_secrets_in_urls_are_masked_whatever_they_hold() {
        for (sql, masked) in [
            (
                "select * from read_parquet('s3://AKIA:wJal/K7+bP@lake/e/x.parquet')",
                "select * from read_parquet('s3://***@lake/e/x.parquet')",
            ),
            (
                "select * from read_parquet('s3://AKIA:sec#ret@lake/x.parquet')",
                "select * from read_parquet('s3://***@lake/x.parquet')",
            ),
            (
                "select * from read_parquet('s3://AKIA:sec?ret@lake/x.parquet')",
                "select * from read_parquet('s3://***@lake/x.parquet')",
            ),
            (
                "select * from read_parquet('https://a.blob.core.windows.net/c/x.parquet?sv=2020&sig=SAS')",
                "select * from read_parquet('https://a.blob.core.windows.net/c/x.parquet?sv=2020&sig=***')",
            ),
        ] {
            assert_eq!(pg(sql), masked);
        }
        // No user part: nothing masked, however many `@` and `:` the path has.
        assert_eq!(userinfo_end("lake/a@b/c:d"), None);
        assert_eq!(userinfo_end("host:9000/p"), None);
        assert_eq!(userinfo_end("u:p@host/x"), Some(3));
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
