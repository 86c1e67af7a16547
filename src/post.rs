//! Sending OpenLineage events to a consumer's HTTP endpoint (Marquez's
//! `/api/v1/lineage`, DataHub's `/openapi/openlineage/api/v1/lineage`):
//! one `POST` per event, in the order of the export, each retried on a
//! connection error, a timeout, `429` or a `5xx` answer, with a growing
//! pause between tries. Plain HTTP only: std's sockets and nothing else,
//! so no TLS stack is built into ripple (see docs/openlineage.md).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

/// Where the events go: `http://host[:port]/path`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// The URL as given, for messages.
    pub url: String,
    /// Host name or address, as the URL gives it.
    pub host: String,
    /// Port (80 when the URL names none).
    pub port: u16,
    /// Path and query, starting with `/`.
    pub path: String,
}

/// How hard to try.
#[derive(Debug, Clone, Copy)]
pub struct Retry {
    /// Tries per event after the first.
    pub retries: u32,
    /// The pause before the first retry; doubled before each next one.
    pub pause: Duration,
    /// How long one try may take in all: connecting, sending the event and
    /// reading the answer (a server that trickles its answer is cut off).
    pub timeout: Duration,
    /// How long the whole post may take, every event and retry included.
    pub deadline: Duration,
}

/// The longest [`Retry::deadline`] (`--post-timeout`), in seconds: a week.
/// Far larger values overflowed the clock's arithmetic.
pub const MAX_DEADLINE_SECS: u64 = 7 * 24 * 3600;

/// The default of [`Retry::deadline`] (`--post-timeout`), in seconds.
pub const DEFAULT_DEADLINE_SECS: u64 = 600;

impl Default for Retry {
    fn default() -> Self {
        Retry {
            retries: 3,
            pause: Duration::from_millis(500),
            timeout: Duration::from_secs(30),
            deadline: Duration::from_secs(DEFAULT_DEADLINE_SECS),
        }
    }
}

/// What was sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Posted {
    /// Events accepted (a `2xx` answer).
    pub events: usize,
    /// Tries that had to be repeated.
    pub retried: usize,
}

/// Why the events could not all be sent. Events before the failing one
/// were accepted; none after it was sent.
#[derive(Debug, thiserror::Error)]
pub enum PostError {
    /// Not a URL ripple can post to.
    #[error(
        "--post {url}: {reason}; give an http:// URL, e.g. http://localhost:5000/api/v1/lineage for Marquez"
    )]
    BadUrl {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// The server refused an event (a `4xx` other than `429`): retrying
    /// would not help.
    #[error(
        "{url}: event {event} (line {event} of the export) was refused with HTTP {status}: {answer}; {sent} event(s) before it were accepted"
    )]
    Refused {
        /// The endpoint.
        url: String,
        /// 1-based number of the event.
        event: usize,
        /// The status code.
        status: u16,
        /// The start of the server's answer.
        answer: String,
        /// Events accepted before it.
        sent: usize,
    },
    /// The server sent the event elsewhere (a `3xx`): ripple does not
    /// follow redirects (a second server would get the events), and
    /// retrying the same address would get the same answer.
    #[error(
        "{url}: event {event} was answered HTTP {status}, a redirect ({answer}), which ripple does not follow; give --post the address it points to. {sent} event(s) before it were accepted"
    )]
    Redirected {
        /// The endpoint.
        url: String,
        /// 1-based number of the event.
        event: usize,
        /// The status code.
        status: u16,
        /// Where the server points, or the start of its answer.
        answer: String,
        /// Events accepted before it.
        sent: usize,
    },
    /// An event failed on every try.
    #[error(
        "{url}: event {event} failed {tries} time(s), last: {last}; {sent} event(s) before it were accepted. Is the server up? Re-running sends every event again (consumers key static events by job, so repeats replace)"
    )]
    GaveUp {
        /// The endpoint.
        url: String,
        /// 1-based number of the event.
        event: usize,
        /// How many tries were made.
        tries: u32,
        /// The last failure.
        last: String,
        /// Events accepted before it.
        sent: usize,
    },
    /// The whole post took longer than [`Retry::deadline`].
    #[error(
        "{url}: the post ran out of time ({secs} s, --post-timeout) at event {event}; {sent} event(s) before it were accepted. Is the server slow to answer? Give more time with --post-timeout, or write the events with --output and post them later"
    )]
    OutOfTime {
        /// The endpoint.
        url: String,
        /// 1-based number of the event being sent.
        event: usize,
        /// The deadline, in seconds.
        secs: u64,
        /// Events accepted before it.
        sent: usize,
    },
}

impl Endpoint {
    /// Reads `http://host[:port][/path]`.
    pub fn parse(url: &str) -> Result<Endpoint, PostError> {
        let bad = |reason| PostError::BadUrl {
            url: url.to_string(),
            reason,
        };
        if url.starts_with("https://") {
            return Err(bad(
                "ripple posts over plain HTTP only (no TLS is built in); post to the consumer's HTTP port, or through a local TLS proxy",
            ));
        }
        let rest = url
            .strip_prefix("http://")
            .ok_or_else(|| bad("not an http:// URL"))?;
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/"),
        };
        if authority.contains('@') {
            return Err(bad("credentials in the URL are not supported"));
        }
        let port_of = |p: &str| {
            p.parse::<u16>().map_err(|_| {
                if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) {
                    bad("the port is past 65535")
                } else {
                    bad("the port is not a number")
                }
            })
        };
        let (host, port) = match authority.strip_prefix('[') {
            // `[::1]:8080`: an IPv6 address in brackets.
            Some(v6) => {
                let (host, after) = v6
                    .split_once(']')
                    .ok_or_else(|| bad("an IPv6 address without its closing `]`"))?;
                match after.strip_prefix(':') {
                    Some(p) => (host, port_of(p)?),
                    None if after.is_empty() => (host, 80),
                    None => return Err(bad("text after the IPv6 address")),
                }
            }
            None => match authority.rsplit_once(':') {
                Some((h, p)) => (h, port_of(p)?),
                None => (authority, 80),
            },
        };
        if host.is_empty() {
            return Err(bad("no host"));
        }
        if path.chars().any(char::is_control) {
            return Err(bad(
                "the path holds a control character (a line break, an escape): percent-encode it",
            ));
        }
        if path.chars().any(char::is_whitespace) {
            return Err(bad("the path holds white space: percent-encode it (`%20`)"));
        }
        Ok(Endpoint {
            url: url.to_string(),
            host: host.to_string(),
            port,
            path: path.to_string(),
        })
    }
}

/// Posts each line of `ndjson` (one event a line) to `endpoint`, in order,
/// stopping at the first event that cannot be delivered, and when
/// [`Retry::deadline`] has passed.
pub fn post_events(endpoint: &Endpoint, ndjson: &str, retry: Retry) -> Result<Posted, PostError> {
    let url = &endpoint.url;
    let now = Instant::now();
    let until = now
        .checked_add(retry.deadline)
        .unwrap_or(now + Duration::from_secs(MAX_DEADLINE_SECS));
    let out_of_time = |event: usize, sent: usize| PostError::OutOfTime {
        url: url.clone(),
        event,
        secs: retry.deadline.as_secs(),
        sent,
    };
    // The host is looked up once, and again only after a failed try.
    let mut addrs: Vec<SocketAddr> = Vec::new();
    let mut posted = Posted {
        events: 0,
        retried: 0,
    };
    for (i, event) in ndjson.lines().filter(|l| !l.trim().is_empty()).enumerate() {
        let mut pause = retry.pause;
        let mut tries = 0;
        loop {
            tries += 1;
            let now = Instant::now();
            if now >= until {
                return Err(out_of_time(i + 1, posted.events));
            }
            // One try ends at its own timeout or the post's, the earlier.
            let try_until = until.min(now + retry.timeout);
            // The resolver's own reason ("Name or service not known", "Temporary
            // failure in name resolution") tells a typo from a network outage.
            let mut unresolved = None;
            if addrs.is_empty() {
                match (endpoint.host.as_str(), endpoint.port).to_socket_addrs() {
                    Ok(found) => addrs = found.collect(),
                    Err(e) => unresolved = Some(e),
                }
            }
            let sent = match unresolved {
                Some(e) => Err(std::io::Error::new(
                    e.kind(),
                    format!("{} does not resolve: {e}", endpoint.host),
                )),
                None => send(endpoint, &addrs, event, try_until),
            };
            if sent.is_err() {
                addrs.clear();
            }
            let last = match sent {
                Ok(status) if (200..300).contains(&status.0) => break,
                Ok((status, answer)) if status != 429 && (400..500).contains(&status) => {
                    return Err(PostError::Refused {
                        url: url.clone(),
                        event: i + 1,
                        status,
                        answer,
                        sent: posted.events,
                    });
                }
                Ok((status, answer)) if (300..400).contains(&status) => {
                    return Err(PostError::Redirected {
                        url: url.clone(),
                        event: i + 1,
                        status,
                        answer,
                        sent: posted.events,
                    });
                }
                Ok((status, answer)) => format!("HTTP {status}: {answer}"),
                Err(e) => e.to_string(),
            };
            if tries > retry.retries {
                return Err(PostError::GaveUp {
                    url: url.clone(),
                    event: i + 1,
                    tries,
                    last,
                    sent: posted.events,
                });
            }
            posted.retried += 1;
            std::thread::sleep(pause.min(until.saturating_duration_since(Instant::now())));
            pause = pause.saturating_mul(2);
        }
        posted.events += 1;
    }
    Ok(posted)
}

/// Answers longer than this are cut in error messages.
const ANSWER_SHOWN: usize = 300;
/// Bytes of an answer read at most: the status line and a message. A
/// server that sends more is not read further.
pub const ANSWER_READ: usize = 64 * 1024;
/// Bytes written per call, so that a server that reads slowly meets the
/// deadline between writes.
const WRITE_CHUNK: usize = 64 * 1024;

/// The time left until `until`, as a socket timeout (which must not be
/// zero); `TimedOut` once it has passed.
fn left(until: Instant) -> std::io::Result<Duration> {
    let left = until.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::TimedOut,
            "no answer in time",
        ));
    }
    Ok(left.max(Duration::from_millis(1)))
}

/// Whether `answer` holds a whole HTTP answer, or as much of it as ripple
/// uses: the head, and the body its `Content-Length` gives (or enough of
/// it to show).
fn answer_complete(answer: &[u8]) -> bool {
    let Some(head_end) = answer.windows(4).position(|w| w == b"\r\n\r\n") else {
        return false;
    };
    let head = String::from_utf8_lossy(&answer[..head_end]);
    let body = answer.len() - head_end - 4;
    let length = head.lines().find_map(|l| {
        let (name, value) = l.split_once(':')?;
        name.trim()
            .eq_ignore_ascii_case("content-length")
            .then(|| value.trim().parse::<usize>().ok())
            .flatten()
    });
    match length {
        Some(n) => body >= n,
        // Chunked or to the close: what is shown is enough.
        None => body >= ANSWER_SHOWN * 4,
    }
}

/// One `POST`, all of it before `until`; the status code and the start of
/// the answer's body.
fn send(
    e: &Endpoint,
    addrs: &[SocketAddr],
    body: &str,
    until: Instant,
) -> std::io::Result<(u16, String)> {
    let mut last = std::io::Error::new(
        std::io::ErrorKind::NotFound,
        format!("{} resolves to no address", e.host),
    );
    let mut stream = None;
    for a in addrs {
        match TcpStream::connect_timeout(a, left(until)?) {
            Ok(s) => {
                stream = Some(s);
                break;
            }
            Err(err) => last = err,
        }
    }
    let mut stream = stream.ok_or(last)?;
    let host = match e.host.contains(':') {
        true => format!("[{}]:{}", e.host, e.port),
        false => format!("{}:{}", e.host, e.port),
    };
    let head = format!(
        "POST {} HTTP/1.1\r\nHost: {host}\r\nUser-Agent: ripple/{}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        e.path,
        env!("CARGO_PKG_VERSION"),
        body.len()
    );
    for chunk in head
        .as_bytes()
        .chunks(WRITE_CHUNK)
        .chain(body.as_bytes().chunks(WRITE_CHUNK))
    {
        stream.set_write_timeout(Some(left(until)?))?;
        stream.write_all(chunk)?;
    }
    stream.flush()?;
    // Read until the answer is whole, the server closes, ANSWER_READ bytes
    // are in, or the time is up: each read waits only for what is left, so
    // a server trickling a byte a second cannot hold ripple.
    let mut answer = Vec::new();
    let mut buf = [0u8; 8192];
    let ended = loop {
        if answer.len() >= ANSWER_READ || answer_complete(&answer) {
            break None;
        }
        let wait = match left(until) {
            Ok(wait) => wait,
            Err(err) => break Some(err),
        };
        stream.set_read_timeout(Some(wait))?;
        let room = (ANSWER_READ - answer.len()).min(buf.len());
        match stream.read(&mut buf[..room]) {
            Ok(0) => break None,
            Ok(n) => answer.extend_from_slice(&buf[..n]),
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
            Err(err) => break Some(err),
        }
    };
    // A server may close as soon as it has answered, or trickle the rest of
    // its message: a whole status line read counts.
    if let Some(err) = ended
        && !answer.windows(2).any(|w| w == b"\r\n")
    {
        return Err(match err.kind() {
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "the server did not answer in time",
            ),
            _ => err,
        });
    }
    let text = String::from_utf8_lossy(&answer);
    let line = text.lines().next().and_then(|l| l.strip_prefix("HTTP/"));
    let code = line.and_then(|l| l.split_whitespace().nth(1));
    let status = code
        .and_then(|c| c.parse::<u16>().ok())
        .filter(|c| (100..1000).contains(c))
        .ok_or_else(|| {
            let why = match code {
                // The status line is there; its code is not one.
                Some(c) => format!(
                    "the answer's status code `{}` is not a three-digit HTTP status",
                    crate::text::inert(&c.chars().take(24).collect::<String>())
                ),
                None => "the answer is not HTTP (no status line)".to_string(),
            };
            std::io::Error::new(std::io::ErrorKind::InvalidData, why)
        })?;
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    // A redirect's news is where it points, not its body.
    let location = (300..400).contains(&status).then(|| {
        head.lines()
            .filter_map(|l| l.split_once(':'))
            .find(|(k, _)| k.trim().eq_ignore_ascii_case("location"))
            .map(|(_, v)| format!("to {}", v.trim()))
    });
    let body = location
        .flatten()
        .unwrap_or_else(|| body.trim().to_string());
    let body = body.as_str();
    let mut shown: String = body.chars().take(ANSWER_SHOWN).collect();
    if shown.len() < body.len() {
        shown.push('…');
    }
    if shown.is_empty() {
        shown = "(no message)".to_string();
    }
    // On one line: a server's line feeds would print lines of their own
    // in ripple's messages (a fake "posted" line, a CI workflow command).
    Ok((status, crate::text::one_line(&shown).into_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_read_or_refused_with_a_reason() {
        let e = Endpoint::parse("http://localhost:5000/api/v1/lineage").unwrap();
        assert_eq!(
            (e.host.as_str(), e.port, e.path.as_str()),
            ("localhost", 5000, "/api/v1/lineage")
        );
        let e = Endpoint::parse("http://marquez").unwrap();
        assert_eq!(
            (e.host.as_str(), e.port, e.path.as_str()),
            ("marquez", 80, "/")
        );
        let e = Endpoint::parse("http://[::1]:8080/x?y=1").unwrap();
        assert_eq!(
            (e.host.as_str(), e.port, e.path.as_str()),
            ("::1", 8080, "/x?y=1")
        );
        let e = Endpoint::parse("http://[::1]").unwrap();
        assert_eq!((e.host.as_str(), e.port), ("::1", 80));
        for (url, says) in [
            ("https://x/api", "plain HTTP only"),
            ("ftp://x", "not an http:// URL"),
            ("http://:80/", "no host"),
            ("http://x:port/", "not a number"),
            ("http://x:99999/", "past 65535"),
            ("http://x/a\u{1b}[31m", "control character"),
            ("http://x/a b", "white space"),
            ("http://u:p@x/", "credentials"),
        ] {
            let e = Endpoint::parse(url).unwrap_err().to_string();
            assert!(e.contains(says) && e.contains(url), "{url}: {e}");
        }
    }
}
