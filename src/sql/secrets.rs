//! Secrets written into SQL (`CREDENTIALS '...'`, `CREATE SECRET (... SECRET
//! '...')`, `IDENTIFIED BY '...'`, a password in a connection URL), masked
//! for text that leaves the machine: a lineage server has no use for them.

use std::borrow::Cow;

use sqlparser::tokenizer::{Token, Tokenizer, Whitespace};

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
    "MASTER_SYMMETRIC_KEY",
    "API_KEY",
    "APIKEY",
    "ENCRYPTION_KEY",
    "PASSPHRASE",
    "PASSWD",
    "PASSWORD",
    "PWD",
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
        let named = || {
            last[1]
                .as_deref()
                .is_some_and(|w| SECRET_WORDS.contains(&w))
                || (last[0].as_deref() == Some("IDENTIFIED") && last[1].as_deref() == Some("BY"))
        };
        match t {
            // A comment may say anything (`/* password = '...' */`): one that
            // names a secret is shown as `***`.
            Token::Whitespace(Whitespace::SingleLineComment { comment, prefix })
                if names_secret(comment) =>
            {
                found = true;
                out[i] = Token::Whitespace(Whitespace::SingleLineComment {
                    comment: format!(" {MASK}"),
                    prefix: prefix.clone(),
                });
            }
            Token::Whitespace(Whitespace::MultiLineComment(c)) if names_secret(c) => {
                found = true;
                out[i] = Token::Whitespace(Whitespace::MultiLineComment(format!(" {MASK} ")));
            }
            Token::Whitespace(_) | Token::Eq => {}
            Token::Word(w) if w.quote_style.is_none() && w.value.eq_ignore_ascii_case("to") => {}
            // `IDENTIFIED BY pw`, `IDENTIFIED BY "pw"`.
            Token::Word(w)
                if (w.quote_style.is_some() && named())
                    || (last[0].as_deref() == Some("IDENTIFIED")
                        && last[1].as_deref() == Some("BY")) =>
            {
                found = true;
                let mut masked = w.clone();
                masked.value = MASK.to_string();
                out[i] = Token::Word(masked);
                last = [None, None];
            }
            Token::Word(w) => {
                last = [last[1].take(), Some(w.value.to_ascii_uppercase())];
                continue;
            }
            Token::SingleQuotedString(s)
            | Token::DoubleQuotedString(s)
            | Token::EscapedStringLiteral(s)
            | Token::NationalStringLiteral(s)
            | Token::UnicodeStringLiteral(s)
            | Token::TripleSingleQuotedString(s)
            | Token::TripleDoubleQuotedString(s) => {
                let masked = if named() {
                    Some(MASK.to_string())
                } else {
                    string_secrets(s)
                };
                if let Some(m) = masked {
                    found = true;
                    out[i] = match t {
                        Token::DoubleQuotedString(_) => Token::DoubleQuotedString(m),
                        Token::TripleDoubleQuotedString(_) => Token::TripleDoubleQuotedString(m),
                        Token::TripleSingleQuotedString(_) => Token::TripleSingleQuotedString(m),
                        _ => Token::SingleQuotedString(m),
                    };
                }
                last = [None, None];
            }
            // `PASSWORD $$pw$$`, `$q$https://...?sig=...$q$`.
            Token::DollarQuotedString(d) => {
                let masked = if named() {
                    Some(MASK.to_string())
                } else {
                    string_secrets(&d.value)
                };
                if let Some(m) = masked {
                    found = true;
                    let mut d = d.clone();
                    d.value = m;
                    out[i] = Token::DollarQuotedString(d);
                }
                last = [None, None];
            }
            _ => last = [None, None],
        }
    }
    if !found {
        return Cow::Borrowed(sql);
    }
    Cow::Owned(
        out.iter()
            .map(|t| match t {
                // Its line break is a token of its own: sqlparser's printing
                // adds a second.
                Token::Whitespace(Whitespace::SingleLineComment { comment, prefix }) => {
                    format!("{prefix}{comment}")
                }
                // sqlparser prints a literal's text between its quotes as it
                // is: `'it''s'` came out as `'it's'`, another statement.
                Token::SingleQuotedString(s) => format!("'{}'", s.replace('\'', "''")),
                Token::NationalStringLiteral(s) => format!("N'{}'", s.replace('\'', "''")),
                Token::DoubleQuotedString(s) => format!("\"{}\"", s.replace('"', "\"\"")),
                Token::EscapedStringLiteral(s) => {
                    format!("E'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"))
                }
                Token::Word(w) if w.quote_style.is_some_and(|q| q == '"' || q == '`') => {
                    let q = w.quote_style.unwrap_or('"');
                    format!("{q}{}{q}", w.value.replace(q, &format!("{q}{q}")))
                }
                t => t.to_string(),
            })
            .collect(),
    )
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
        out.push_str(&token[after_user..]);
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

/// Keys whose values are secrets in `key=value` text: a URL's query or
/// fragment (`?sig=`, `#access_token=`), a connection string
/// (`host=db password=pw`, `;Pwd=pw;`). A key ending in one after `_`, `-`
/// or `.` is one too (`db_password`).
const SECRET_KEYS: &[&str] = &[
    "password",
    "pgpassword",
    "pass",
    "passphrase",
    "api-key",
    "private_key",
    "secret_key",
    "authorization",
    "auth_token",
    "passwd",
    "pwd",
    "secret",
    "client_secret",
    "api_key",
    "apikey",
    "access_token",
    "refresh_token",
    "id_token",
    "token",
    "code",
    "sig",
    "signature",
    "sas_token",
    "x-amz-signature",
    "x-amz-credential",
    "x-amz-security-token",
    "x-goog-signature",
    "x-goog-credential",
];

/// Words that make a comment a secret's (`-- password is ...`).
const COMMENT_WORDS: &[&str] = &[
    "pass",
    "secret",
    "token",
    "bearer",
    "credential",
    "api_key",
    "apikey",
    "private",
    "access_key",
    "pwd",
];

/// Whether a comment names a secret.
fn names_secret(comment: &str) -> bool {
    let lower = comment.to_ascii_lowercase();
    COMMENT_WORDS.iter().any(|w| lower.contains(w))
}

/// `text` (a file's or URL's name a query reads) with its secrets masked
/// as a string literal's are: a URL's user part, secret query values. A
/// dataset named after it carries no password into any output.
pub(crate) fn masked_text(text: &str) -> Cow<'_, str> {
    match string_secrets(text) {
        Some(masked) => Cow::Owned(masked),
        None => Cow::Borrowed(text),
    }
}

/// A string literal's secrets masked: a URL's user part, the values of
/// [`SECRET_KEYS`] and what follows `Bearer ` or `Basic `.
fn string_secrets(s: &str) -> Option<String> {
    let urls = url_password(s);
    let text = urls.as_deref().unwrap_or(s);
    let pairs = key_values(text);
    let text = pairs.as_deref().unwrap_or(text);
    let json = json_values(text);
    let text = json.as_deref().unwrap_or(text);
    let auth = authorization(text);
    let text = auth.as_deref().unwrap_or(text);
    let ids = aws_key_ids(text);
    let text = ids.as_deref().unwrap_or(text);
    let tokens = known_tokens(text);
    tokens.or(ids).or(auth).or(json).or(pairs).or(urls)
}

/// `text` with the value of every JSON member `"key": "value"` whose key is
/// a secret's masked (`'{"password": "pw"}'`).
fn json_values(text: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len());
    let mut found = false;
    let mut at = 0;
    let mut search = 0;
    while let Some(open) = text[search..].find('"').map(|i| search + i) {
        let Some(close) = text[open + 1..].find('"').map(|i| open + 1 + i) else {
            break;
        };
        let key = &text[open + 1..close];
        let after = text[close + 1..].trim_start();
        let value_start = after
            .strip_prefix(':')
            .map(str::trim_start)
            .filter(|v| v.starts_with('"'))
            .map(|v| text.len() - v.len() + 1);
        match value_start {
            Some(start) if secret_key(key) => {
                let end = text[start..].find('"').map_or(text.len(), |i| start + i);
                out.push_str(&text[at..start]);
                out.push_str(MASK);
                at = end;
                found = true;
                search = (end + 1).min(text.len());
            }
            _ => search = close + 1,
        }
    }
    out.push_str(&text[at..]);
    found.then_some(out)
}

/// `text` with the value of every `key=value` (or `key = value`, `key:
/// value`, the value perhaps quoted: `password='pw'`, `Password: pw`) whose
/// key is a secret's masked (keys percent-decoded: `%73ig=` is `sig=`). An
/// `authorization` value runs to the end of its line (`Token t`).
fn key_values(text: &str) -> Option<String> {
    let key_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '%');
    let blank = |s: &str| s.len() - s.trim_start_matches([' ', '\t']).len();
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    let mut found = false;
    let mut i = 0;
    while i < text.len() {
        let Some(c) = text[i..].chars().next() else {
            break;
        };
        if !key_char(c) {
            i += c.len_utf8();
            continue;
        }
        let start = i;
        i += text[i..]
            .find(|c: char| !key_char(c))
            .unwrap_or(text.len() - i);
        let key = &text[start..i];
        if !secret_key(key) {
            continue;
        }
        let mut j = i + blank(&text[i..]);
        let op = text[j..].chars().next();
        // `password://` is a URL's scheme, `x::text` a cast; `code: 500`
        // and `sig: x` are as often words as secrets.
        let colon_ok = !matches!(
            key.to_ascii_lowercase().as_str(),
            "code" | "sig" | "signature"
        );
        match op {
            Some('=') => {}
            Some(':') if colon_ok && !text[j + 1..].starts_with([':', '/']) => {}
            _ => continue,
        }
        j += 1;
        j += blank(&text[j..]);
        let (from, to) = match text[j..].chars().next() {
            Some(q @ ('\'' | '"')) => {
                let from = j + 1;
                (from, text[from..].find(q).map_or(text.len(), |k| from + k))
            }
            Some(_) => {
                let line = key.to_ascii_lowercase().ends_with("authorization");
                // `Authorization: Token t`: the scheme is kept.
                if line
                    && let Some(space) = text[j..].find(' ')
                    && text[j..j + space].chars().all(|c| c.is_ascii_alphabetic())
                {
                    j += space + 1;
                }
                let end = text[j..]
                    .find(|c: char| {
                        if line {
                            matches!(c, '\n' | '\r' | '\'' | '"')
                        } else {
                            c.is_whitespace()
                                || matches!(c, '?' | '&' | '#' | ';' | ',' | '\'' | '"')
                        }
                    })
                    .map_or(text.len(), |k| j + k);
                (j, end)
            }
            None => continue,
        };
        if to > from {
            out.push_str(&text[at..from]);
            out.push_str(MASK);
            at = to;
            found = true;
            i = to;
        }
    }
    out.push_str(&text[at..]);
    found.then_some(out)
}

/// `text` with AWS access key ids (`AKIA` or `ASIA` and 16 capitals or
/// digits) masked: a key id alone is half a credential.
fn aws_key_ids(text: &str) -> Option<String> {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let (mut at, mut i, mut found) = (0, 0, false);
    while i + 20 <= b.len() {
        let id = &b[i..i + 20];
        let word_start = i == 0 || !b[i - 1].is_ascii_alphanumeric();
        let word_end = b.get(i + 20).is_none_or(|c| !c.is_ascii_alphanumeric());
        if word_start
            && word_end
            && (id.starts_with(b"AKIA") || id.starts_with(b"ASIA"))
            && id[4..]
                .iter()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
        {
            out.push_str(&text[at..i]);
            out.push_str(MASK);
            i += 20;
            at = i;
            found = true;
        } else {
            i += 1;
        }
    }
    if !found {
        return None;
    }
    out.push_str(&text[at..]);
    Some(out)
}

/// Whether `key` (percent-decoded, any case) is one of [`SECRET_KEYS`],
/// or ends in one after `_`, `-` or `.`.
fn secret_key(key: &str) -> bool {
    let mut decoded = Vec::with_capacity(key.len());
    let b = key.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        if b[i] == b'%'
            && let (Some(h), Some(l)) = (
                b.get(i + 1).and_then(|&c| hex(c)),
                b.get(i + 2).and_then(|&c| hex(c)),
            )
        {
            decoded.push((h * 16 + l) as u8);
            i += 3;
            continue;
        }
        decoded.push(b[i]);
        i += 1;
    }
    let key = String::from_utf8_lossy(&decoded)
        .trim()
        .to_ascii_lowercase();
    let squeezed: String = key
        .chars()
        .filter(|c| !matches!(c, '_' | '-' | '.'))
        .collect();
    SECRET_KEYS.iter().any(|s| {
        key == *s
            || key
                .strip_suffix(s)
                .is_some_and(|head| head.ends_with(['_', '-', '.']))
    }) || SECRET_PARTS.iter().any(|p| squeezed.contains(p))
}

/// Words that make any key holding them a secret's, separators left out
/// (`sslpassword`, `AccountKey`, `secret-key`, `x_auth_token`).
const SECRET_PARTS: &[&str] = &[
    "password",
    "passwd",
    "secret",
    "apikey",
    "accountkey",
    "accesskey",
    "privatekey",
    "signingkey",
    "sastoken",
    "accesstoken",
    "refreshtoken",
    "authtoken",
    "sessiontoken",
    "securitytoken",
    "credential",
];

/// Tokens recognisable by their form wherever they stand, and the least
/// length of what follows their prefix: GitHub, GitLab, Slack, Stripe,
/// Google keys, and JSON web tokens (`eyJ`).
const TOKEN_PREFIXES: &[(&str, usize)] = &[
    ("ghp_", 16),
    ("gho_", 16),
    ("ghs_", 16),
    ("ghu_", 16),
    ("github_pat_", 16),
    ("glpat-", 16),
    ("xoxb-", 8),
    ("xoxp-", 8),
    ("xoxa-", 8),
    ("xoxs-", 8),
    ("sk_live_", 8),
    ("sk_test_", 8),
    ("rk_live_", 8),
    ("AIza", 30),
    ("eyJ", 16),
];

/// Where a Slack webhook's secret path starts.
const SLACK_HOOKS: &str = "hooks.slack.com/services/";

/// `text` with tokens known by their form masked (see [`TOKEN_PREFIXES`]),
/// the body of a PEM private key, and the path of a Slack webhook.
fn known_tokens(text: &str) -> Option<String> {
    let body = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.');
    let mut out = String::with_capacity(text.len());
    let (mut at, mut i, mut found) = (0, 0, false);
    while i < text.len() {
        let rest = &text[i..];
        let word_start = text[..i]
            .chars()
            .next_back()
            .is_none_or(|c| !body(c) || c == '.');
        // `-----BEGIN RSA PRIVATE KEY-----` ... `-----END ...`: the key.
        if rest.starts_with("-----BEGIN ")
            && let Some(head) = rest[11..].find("-----").map(|k| k + 11)
            && rest[..head].contains("PRIVATE KEY")
        {
            let from = i + head + 5;
            let to = text[from..]
                .find("-----END")
                .map_or(text.len(), |k| from + k);
            out.push_str(&text[at..from]);
            out.push_str(MASK);
            out.push_str(if to < text.len() { "\n" } else { "" });
            at = to;
            i = to.max(i + 1);
            found = true;
            continue;
        }
        if rest.starts_with(SLACK_HOOKS) {
            let from = i + SLACK_HOOKS.len();
            let to = text[from..]
                .find(|c: char| c.is_whitespace() || matches!(c, '\'' | '"' | '?' | '#'))
                .map_or(text.len(), |k| from + k);
            if to > from {
                out.push_str(&text[at..from]);
                out.push_str(MASK);
                at = to;
                i = to;
                found = true;
                continue;
            }
        }
        if word_start
            && let Some((prefix, least)) = TOKEN_PREFIXES.iter().find(|(p, _)| rest.starts_with(p))
        {
            let from = i + prefix.len();
            let len = text[from..]
                .find(|c: char| !body(c))
                .unwrap_or(text.len() - from);
            let jwt = *prefix != "eyJ" || text[from..from + len].matches('.').count() == 2;
            if len >= *least && jwt {
                out.push_str(&text[at..i]);
                out.push_str(MASK);
                at = from + len;
                i = at;
                found = true;
                continue;
            }
        }
        i += rest.chars().next().map_or(1, char::len_utf8);
    }
    if !found {
        return None;
    }
    out.push_str(&text[at..]);
    Some(out)
}

/// `text` with what follows `Bearer ` or `Basic ` (an HTTP authorization)
/// masked.
fn authorization(text: &str) -> Option<String> {
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    let mut found = false;
    let mut i = 0;
    while i < text.len() {
        let hit = ["bearer ", "basic "].iter().find(|s| {
            lower[i..].starts_with(**s)
                && (i == 0 || !text.as_bytes()[i - 1].is_ascii_alphanumeric())
        });
        if let Some(scheme) = hit {
            let start = i + scheme.len();
            let len = text[start..]
                .find(|c: char| c.is_whitespace() || matches!(c, '\'' | '"' | ',' | ';'))
                .unwrap_or(text.len() - start);
            if len > 0 {
                out.push_str(&text[at..start]);
                out.push_str(MASK);
                at = start + len;
                found = true;
                i = at;
                continue;
            }
        }
        i += text[i..].chars().next().map_or(1, char::len_utf8);
    }
    out.push_str(&text[at..]);
    found.then_some(out)
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
        for (sql, masked) in [
            (
                "alter user loader password $$pw1$$",
                "alter user loader password $$***$$",
            ),
            (
                "copy raw.e from 's3://b/e/' iam_role 'r' master_symmetric_key 'k2' encrypted",
                "copy raw.e from 's3://b/e/' iam_role 'r' master_symmetric_key '***' encrypted",
            ),
            (
                "select * from dblink('host=db user=etl password=pw3 dbname=prod', 'q')",
                "select * from dblink('host=db user=etl password=*** dbname=prod', 'q')",
            ),
            (
                "select * from read_csv('https://f.io/x.csv?api_key=k4&v=1#access_token=t5')",
                "select * from read_csv('https://f.io/x.csv?api_key=***&v=1#access_token=***')",
            ),
            (
                "select * from read_csv($q$https://f.io/x?%73ig=s6$q$)",
                "select * from read_csv($q$https://f.io/x?%73ig=***$q$)",
            ),
            ("select 1; /* password = 'pw7' */", "select 1; /* *** */"),
            (
                "select 'Authorization: Bearer tok8' as h, 'x;Pwd=pw9;' as c",
                "select 'Authorization: Bearer ***' as h, 'x;Pwd=***;' as c",
            ),
        ] {
            assert_eq!(pg(sql), masked);
        }
        assert_eq!(
            pg(
                "select '{\"user\": \"u\", \"password\": \"pw11\"}' as j; alter user bob identified by pw12"
            ),
            "select '{\"user\": \"u\", \"password\": \"***\"}' as j; alter user bob identified by ***"
        );
        assert_eq!(
            pg("select 1 -- the password is pw10\nfrom t"),
            "select 1 -- ***\nfrom t"
        );
        // Nothing secret: as written.
        assert_eq!(pg("select 'a=b' /* note */"), "select 'a=b' /* note */");
        // No user part: nothing masked, however many `@` and `:` the path has.
        assert_eq!(userinfo_end("lake/a@b/c:d"), None);
        assert_eq!(userinfo_end("host:9000/p"), None);
        assert_eq!(userinfo_end("u:p@host/x"), Some(3));
    }

    #[test]
    fn connection_strings_in_every_spelling_are_masked() {
        // Review round 23: libpq accepts spaces around `=` and quoted values;
        // these, other keys and a bare key id reached the OpenLineage facet.
        for (sql, masked) in [
            (
                "select 'host=db password = pwQ2' as c",
                "select 'host=db password = ***' as c",
            ),
            (
                "select 'host=db password=''pwQ6''' as d",
                "select 'host=db password=''***''' as d",
            ),
            ("select 'password =pw4'", "select 'password =***'"),
            (
                "select 'password=''pw 7'' host=x'",
                "select 'password=''***'' host=x'",
            ),
            ("select 'password=\"pw8\"'", "select 'password=\"***\"'"),
            ("select E'password=\\'pw5\\''", "select 'password=''***'''"),
            ("select 'PassWord = S1'", "select 'PassWord = ***'"),
            (
                "select 'pass=p1 PGPASSWORD=p2'",
                "select 'pass=*** PGPASSWORD=***'",
            ),
            (
                "select 'Password: x1', 'pwd:x2'",
                "select 'Password: ***', 'pwd:***'",
            ),
            (
                "select 'x-api-key=k1', 'Authorization: Token t1 t2'",
                "select 'x-api-key=***', 'Authorization: Token ***'",
            ),
            (
                "select 'id AKIAIOSFODNN7EXAMPLE here'",
                "select 'id *** here'",
            ),
            ("select 1 -- the passphrase\n", "select 1 -- ***\n"),
        ] {
            assert_eq!(pg(sql), masked, "{sql}");
        }
        // Review round 24: more keys, and tokens known by their form.
        for (sql, masked) in [
            (
                "select 'host=db sslpassword=S1', 'x?sslpassword=S2'",
                "select 'host=db sslpassword=***', 'x?sslpassword=***'",
            ),
            (
                "select 'AccountName=a;AccountKey=S3==;x=1', 'secret-key=S4'",
                "select 'AccountName=a;AccountKey=***;x=1', 'secret-key=***'",
            ),
            (
                "select 'ghp_abcdefghijklmnopqrstuvwxyz012345', 'xoxb-123-456-abcdef'",
                "select '***', '***'",
            ),
            (
                "select 'sk_live_abcdefgh12345678 and AIzaSyA1234567890abcdefghijklmnopqrstu'",
                "select '*** and ***'",
            ),
            (
                "select 'Bearer-less eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJlX3g'",
                "select 'Bearer-less ***'",
            ),
            (
                "select 'https://hooks.slack.com/services/T0/B0/XYZ'",
                "select 'https://hooks.slack.com/services/***'",
            ),
            (
                "select '-----BEGIN PRIVATE KEY-----\nMIIEvQIBADAN\n-----END PRIVATE KEY-----'",
                "select '-----BEGIN PRIVATE KEY-----***\n-----END PRIVATE KEY-----'",
            ),
            (
                "select * from u where pwd = 'S5' or passwd='S6'",
                "select * from u where pwd = '***' or passwd='***'",
            ),
        ] {
            assert_eq!(pg(sql), masked, "{sql}");
        }
        // The rest of a masked statement is printed as it was written.
        assert_eq!(
            pg("select 'it''s', \"a\"\"b\", E'x\\'y', 'password=x'"),
            "select 'it''s', \"a\"\"b\", E'x\\'y', 'password=***'"
        );
        // Words that only look like keys stay.
        assert_eq!(pg("select 'error code: 500'"), "select 'error code: 500'");
        assert_eq!(
            pg("select 'see https://x.io/password://'"),
            "select 'see https://x.io/password://'"
        );
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
