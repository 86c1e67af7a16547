//! What reading Python statically needs beside the parser (DAG files,
//! dbt Python models): the stack a file's syntax tree needs.

/// The length in bytes of the longest logical line of Python in `text`: a
/// line with its continuations (open brackets, a trailing backslash, a
/// string across lines). Strings and comments are skipped as Python's
/// tokenizer skips them, so brackets inside them do not count; where the
/// scan is unsure it errs long, which only means a bigger stack.
fn longest_statement(text: &str) -> usize {
    let b = text.as_bytes();
    let (mut i, mut start, mut longest, mut depth) = (0usize, 0usize, 0usize, 0usize);
    while i < b.len() {
        match b[i] {
            b'#' => {
                // A comment nests nothing: its bytes do not count.
                let from = i;
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                start += i - from;
                continue;
            }
            q @ (b'\'' | b'"') => {
                let triple = b.get(i + 1) == Some(&q) && b.get(i + 2) == Some(&q);
                i += if triple { 3 } else { 1 };
                while i < b.len() {
                    if b[i] == b'\\' {
                        i += 2;
                        continue;
                    }
                    if b[i] == q
                        && (!triple || (b.get(i + 1) == Some(&q) && b.get(i + 2) == Some(&q)))
                    {
                        i += if triple { 3 } else { 1 };
                        break;
                    }
                    if b[i] == b'\n' && !triple {
                        break;
                    }
                    i += 1;
                }
                continue;
            }
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            b'\\' if b.get(i + 1) == Some(&b'\n') => i += 1,
            b'\n' if depth == 0 => {
                longest = longest.max(i - start);
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    longest.max(b.len().saturating_sub(start))
}

/// How deep `text`'s syntax tree can nest, and the stack that parsing,
/// walking and dropping it needs (DAG files and dbt Python models).
pub(crate) fn stack_for(text: &str) -> (usize, usize) {
    let depth = longest_statement(text).saturating_mul(2);
    (
        depth,
        STACK_BASE.saturating_add(depth.saturating_mul(STACK_PER_BYTE)),
    )
}

/// Stack for an empty file.
const STACK_BASE: usize = 256 * 1024;
/// Stack per byte of Python, measured on the deepest shapes (`a >> a >> ...`,
/// `f(f(...))`, `a.a.a...`) with headroom; debug builds use far bigger frames.
const STACK_PER_BYTE: usize = if cfg!(debug_assertions) { 4096 } else { 512 };

#[cfg(test)]
mod tests {
    use super::longest_statement;

    #[test]
    fn statements_span_brackets_and_continuations_not_strings_or_comments() {
        assert_eq!(longest_statement("a = 1\nbb = 22\n"), 7);
        // Brackets hold a statement together across lines.
        assert_eq!(longest_statement("x = (1,\n 2)\ny = 3"), 11);
        assert_eq!(longest_statement("x = 1 + \\\n 2\n"), 12);
        // Brackets in strings and comments do not open anything.
        assert_eq!(longest_statement("s = '('\nt = 1\n"), 7);
        assert_eq!(longest_statement("# (\nt = 1\n"), 5);
        // A triple-quoted string spans lines.
        assert_eq!(longest_statement("q = \"\"\"a\n)\nb\"\"\"\nz = 1"), 15);
        // An unterminated one runs to the end: long, never short.
        assert_eq!(longest_statement("q = '''\n)\n)\n"), 12);
    }
}
