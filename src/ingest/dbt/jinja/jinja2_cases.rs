//! Jinja2 forms dbt projects write, each rendered by ripple and compared
//! with the text Jinja2 gives. The expected texts are recorded here; when
//! Python's jinja2 is at hand (dbt's own venv under `CI=true`, else any
//! `python3` that has it) every recorded text is checked against it too, so
//! a wrong recording cannot pass.

use super::tests::{render, settings};
use super::{MacroFile, Renderer, strip_non_macro_blocks};

/// (what, template, what Jinja2 renders).
const CASES: &[(&str, &str, &str)] = &[
    (
        "loop.changed and dict keys computed from values",
        "{% for x in [1, 1, 2, [3], [3]] %}{{ loop.changed(x) }},{% endfor %} {% set k = 'a' %}{% set d = {k: 1, (k ~ 'b'): 2, 'c': 3} %}{{ d }} {{ {[1,2]|length: 'x'} }}",
        "True,False,True,True,False, {'a': 1, 'ab': 2, 'c': 3} {2: 'x'}",
    ),
    (
        "integers past 128 bits print their digits",
        "{% macro m(x=0xa020d57ffffffffffffffffffffffffffffffffffffffffffffffffffffffff) %}{{ x }}{% endmacro %}{{ m() }} {{ 123456789012345678901234567890123456789012345678901234567890123456789012345678 }} {{ 1_000_000 }} {{ 340282366920938463463374607431768211455 }} {{ x1 is defined }} {% set big = 123456789012345678901234567890123456789012345678901234567890123456789012345678 %}{% set big2 = 923456789012345678901234567890123456789012345678901234567890123456789012345678 %}{{ big > 5 }}{{ 5 < big }}{{ big < 5 }} {{ big == big2 }}{{ big < big2 }}{{ big2 > big }}{{ big == 5 }}",
        "4526754275140035638977946779426894496608394888280683169303150537644303187967 123456789012345678901234567890123456789012345678901234567890123456789012345678 1000000 340282366920938463463374607431768211455 False TrueTrueFalse FalseTrueTrueFalse",
    ),
    (
        "indexing and slicing with computed and negative keys",
        "{% set xs = [1, 2, 3, 4, 5] %}{% set i = 2 %}{% set s = 'hello' %}{% set d = {'a': 1, 'k': 'v'} %}{% set key = 'k' %}{{ xs[i] }} {{ xs[-1] }} {{ xs[-i] }} {{ xs[1:] }} {{ xs[:-2] }} {{ xs[::2] }} {{ xs[::-1] }} {{ xs[1:][-1] }} {{ xs[i:][0] }} {{ (xs + [6])[-1] }} {{ s[1] }} {{ s[-1] }} {{ s[1:3] }} {{ s[::-1] }} {{ s[i:] }} {{ d[key] }} {{ d['a'] }} {{ xs[10] is defined }} {{ (xs[1:] + [9])|join(',') }} {{ xs[1:]|length }} {{ xs[i:i+2]|sum }} {{ [[1, 2], [3, 4]][1][-1] }} {% for x in xs[-2:] %}{{ x }}{% endfor %} {{ xs[i - 1] }}{{ xs [ -2 ] }}",
        "3 5 4 [2, 3, 4, 5] [1, 2, 3] [1, 3, 5] [5, 4, 3, 2, 1] 5 3 6 e o el olleh llo v 1 False 2,3,4,5,9 4 7 4 45 24",
    ),
    (
        "`~` of constants the engine folds: floats, booleans and none as Python prints them",
        "{{ 't_' ~ 1e16 }} {{ 't_' ~ (1/1000000) }} {{ 'x' ~ True }} {{ 'n' ~ none }} {{ 2.5 ~ 'a' }} {{ 'q' ~ 1e300 }}",
        "t_1e+16 t_1e-06 xTrue nNone 2.5a q1e+300",
    ),
    (
        "center, wordcount, truncate, forceescape, urlencode, filesizeformat",
        "[{{ 'ab'|center(7) }}][{{ 'abc'|center(6) }}][{{ 'x'|center(width=4) }}][{{ 'long'|center(2) }}] {{ 'a b_c, d-e é1'|wordcount }} {{ 'hello big world here'|truncate(12) }}|{{ 'hello big world here'|truncate(12, True) }}|{{ 'hello big world here'|truncate(12, end='~') }}|{{ 'short'|truncate(3, leeway=2) }}|{{ 'abcdef'|truncate(4, killwords=True, end='.', leeway=0) }} {{ '<b>&\"x\"</b>'|forceescape }}{{ \"it's\"|forceescape }} {{ 'a b/c?d=é&x'|urlencode }} {{ {'k v': 'a&b', 'n': 1}|urlencode }} {{ [('a', True), ('b', 2.5)]|urlencode }} {{ 1|filesizeformat }} {{ 999|filesizeformat }} {{ 1500|filesizeformat }} {{ 1500|filesizeformat(true) }} {{ 123456789|filesizeformat }} {{ (10**30)|filesizeformat }}",
        "[   ab  ][ abc  ][ x  ][long] 5 hello...|hello big...|hello big~|short|abc. &lt;b&gt;&amp;&#34;x&#34;&lt;/b&gt;it&#39;s a%20b/c%3Fd%3D%C3%A9%26x k+v=a%26b&n=1 a=True&b=2.5 1 Byte 999 Bytes 1.5 kB 1.5 KiB 123.5 MB 1000000.0 YB",
    ),
    (
        "unary plus",
        "{% set i = +1 %}{{ i }} {{ 2 * +3 }} {{ -(+4) }} {{ [+5][0] }} {{ 1 + +2 }}",
        "1 6 -4 5 3",
    ),
    (
        "do with an if and no else",
        "{% set xs = [] %}{% do xs.append(1) if true %}{% do xs.append(2) if false %}{%- do xs.append(3) if xs | length > 0 -%}{{ xs | join(',') }}",
        "1,3",
    ),
    (
        "a macro parameter's default reading an earlier parameter",
        "{% macro pick(chain, events = 'src_' ~ chain, n=2) %}{{ events }}/{{ n }}{% endmacro %}{{ pick('eth') }} {{ pick('eth', 'x') }} {{ pick(chain='sol', n=+3) }}",
        "src_eth/2 x/2 src_sol/3",
    ),
    (
        "late defaults keep the macro tag's trimming",
        "{% macro f(a, b = a ~ '!', c = b ~ '?') -%}\n  [{{ c }}]\n{%- endmacro %}{{ f('x') }}{{ f('y', 'z') }}",
        "[x!?][z?]",
    ),
    (
        "no-break and em spaces inside tags",
        "{%\u{a0}set x = 1\u{a0}%}{{ x\u{a0}}}-{{\u{2003}'a\u{a0}b' }}",
        "1-a\u{a0}b",
    ),
    (
        "a variable named like a keyword",
        "{% macro f(obj, macro) %}{% set msg %}The `{{ macro }}` macro{% endset %}{{ msg }}{% endmacro %}{{ f(1, 'star') }}",
        "The `star` macro",
    ),
    (
        "list.append in a loop (dbt_utils.generate_surrogate_key's shape)",
        "{%- set parts = [] -%}{%- for c in ['a', 'b', 'c'] -%}{%- do parts.append(\"coalesce(\" ~ c ~ \", '')\") -%}{%- if not loop.last -%}{%- do parts.append(\"'-'\") -%}{%- endif -%}{%- endfor -%}{{ parts | join(' || ') }}",
        "coalesce(a, '') || '-' || coalesce(b, '') || '-' || coalesce(c, '')",
    ),
    (
        "extend, insert, pop, remove",
        "{% set xs = [1] %}{% do xs.extend([2, 3, 4]) %}{% do xs.insert(0, 0) %}{% set last = xs.pop() %}{% do xs.remove(2) %}{{ xs | join(',') }} {{ last }} {{ xs | length }} {{ xs[-1] }}",
        "0,1,3 4 3 3",
    ),
    (
        "a list mutated through a second name",
        "{% set a = [] %}{% set b = a %}{% do b.append('x') %}{{ a | join }}",
        "x",
    ),
    (
        "dict.update and setdefault, in insertion order",
        "{% set d = {'z': 1} %}{% do d.update({'b': 2}) %}{% do d.setdefault('c', 3) %}{% do d.setdefault('z', 9) %}{% for k in d %}{{ k }}={{ d[k] }};{% endfor %}{% for k, v in d.items() %}{{ k }}{{ v }}{% endfor %}",
        "z=1;b=2;c=3;z1b2c3",
    ),
    (
        "dict.pop with a default",
        "{% set d = {'a': 1} %}{{ d.pop('a') }}{{ d.pop('a', 'gone') }}{{ d | length }}",
        "1gone0",
    ),
    (
        "loop.cycle",
        "{% for i in range(3) %}{{ loop.cycle('odd', 'even') }} {% endfor %}",
        "odd even odd ",
    ),
    (
        "namespace() updated in a loop",
        "{% set ns = namespace(found=false, n=0) %}{% for i in [1, 2, 3] %}{% if i > 1 %}{% set ns.found = true %}{% endif %}{% set ns.n = ns.n + i %}{% endfor %}{{ ns.found }} {{ ns.n }}",
        "True 6",
    ),
    (
        "a set block",
        "{% set x %}select {{ 1 + 1 }}{% endset %}[{{ x | trim }}]",
        "[select 2]",
    ),
    (
        "Python's printing of booleans, none, lists and dicts",
        "{{ true }} {{ false }} {{ none }} {{ [1, 'a', none] }} {{ {'k': 'v'} }}",
        "True False None [1, 'a', None] {'k': 'v'}",
    ),
    (
        "a mutated list prints as a Python list",
        "{% set xs = [] %}{% do xs.append('a') %}{% do xs.append(1) %}{{ xs }}",
        "['a', 1]",
    ),
    (
        "arithmetic and slicing",
        "{{ 7 // 2 }} {{ 7 / 2 }} {{ 2 ** 3 }} {{ 'abcdef'[1:3] }} {{ [1, 2, 3][-1] }}",
        "3 3.5 8 bc 3",
    ),
    (
        "string methods",
        "{{ 'a,b'.split(',') | join('|') }} {{ 'ab'.upper() }} {{ 'x_y'.replace('_', '-') }} {{ 'abc'.startswith('a') }}",
        "a|b AB x-y True",
    ),
    (
        "the format filter and string formatting",
        "{{ '%s-%s' | format(1, 'a') }}",
        "1-a",
    ),
    (
        "loop variables",
        "{% for x in ['a', 'b'] %}{{ loop.index0 }}{{ loop.first }}{{ loop.length }}{{ loop.revindex }};{% endfor %}",
        "0True22;1False21;",
    ),
    (
        "modules.datetime: dates, timedeltas and their arithmetic",
        "{{ (modules.datetime.date(2024, 3, 1) - modules.datetime.date(2024, 2, 1)).days }} {{ modules.datetime.timedelta(days=-1, hours=23) }} {{ modules.datetime.datetime.strptime('2024-02-29 13:05', '%Y-%m-%d %H:%M') + modules.datetime.timedelta(minutes=70) }}",
        "29 -1 day, 23:00:00 2024-02-29 14:15:00",
    ),
    (
        "run_started_at moved back, comparisons, re.sub, + and - of other values",
        "{{ modules.datetime.datetime(2024,1,1) < modules.datetime.datetime(2024,1,2) }} {{ run_started_at - modules.datetime.timedelta(days=1) }} {{ modules.re.sub('(a)(b)', '\\\\2\\\\1', 'xaby') }} {{ modules.re.findall('[0-9]+', 'a1b22') }} {{ 'x' + 'y' }} {{ 3 - 1 }}",
        "True 1999-12-31 00:00:00+00:00 xbay ['1', '22'] xy 2",
    ),
    (
        "a date less an hour, strftime's directives, fromisoformat",
        "{{ modules.datetime.date(2024,1,2) - modules.datetime.timedelta(hours=1) }} {{ modules.datetime.date.fromisoformat('2024-05-06').strftime('%a %b %j %U %W %A %B %y %I%p %w') }} {{ modules.datetime.datetime.fromisoformat('2024-05-06T01:02:03.5+02:00') }}",
        "2024-01-02 Mon May 127 18 19 Monday May 24 12AM 1 2024-05-06 01:02:03.500000+02:00",
    ),
    (
        "run_started_at formatted, fractional timedeltas",
        "{{ run_started_at.strftime('%Y-%m-%dT%H:%M:%S%z') }} {{ (run_started_at - modules.datetime.timedelta(hours=36)).isoformat() }} {{ modules.datetime.timedelta(seconds=90.5) }} {{ modules.datetime.timedelta(weeks=1, milliseconds=1).total_seconds() }}",
        "2000-01-01T00:00:00+0000 1999-12-30T12:00:00+00:00 0:01:30.500000 604800.001",
    ),
    (
        "a date range in a loop, replace, weekdays",
        "{% set d = modules.datetime.date(2024, 1, 31) %}{% for i in range(3) %}{{ (d + modules.datetime.timedelta(days=i)).strftime('%Y%m%d') }},{% endfor %} {{ d.replace(day=1) }} {{ d.weekday() }} {{ d.isoweekday() }} {{ modules.datetime.datetime(2024,2,29,23,59,59).replace(year=2025, month=3) }}",
        "20240131,20240201,20240202, 2024-01-01 2 3 2025-03-29 23:59:59",
    ),
    (
        "modules.re",
        "{{ modules.re.match('^a(b)?', 'ac').groups()[0] }} {{ modules.re.search('b+', 'abbbc').group(0) }} {{ modules.re.match('b', 'ab') }} {{ modules.re.split(',\\s*', 'a, b,c') }} {{ modules.re.escape('a.b') }} {{ modules.re.compile('X', modules.re.IGNORECASE).sub('-', 'axbX') }} {{ modules.re.fullmatch('a|ab', 'ab').group(0) }} {{ modules.re.fullmatch('a', 'ab') }}",
        "None bbb None ['a', 'b', 'c'] a\\.b a-b- ab None",
    ),
    (
        "differences of datetimes and negative timedeltas, pytz.utc",
        "{{ modules.datetime.datetime(2024,1,1) - modules.datetime.datetime(2023,12,31,12) }} {{ modules.datetime.timedelta(hours=-1) }} {{ modules.datetime.timedelta(days=2) - modules.datetime.timedelta(days=3) }} {{ modules.pytz.utc.localize(modules.datetime.datetime(2024,1,1)) }}",
        "12:00:00 -1 day, 23:00:00 -1 day, 0:00:00 2024-01-01 00:00:00+00:00",
    ),
    (
        "re.sub's count, flags and named groups, split's maxsplit and groups, glibc's strftime, isoformat's sep, a date and a datetime, half-even microseconds",
        "{{ modules.re.sub('(?P<base>[a-z]+)_x', '\\\\g<base>_final', 'pay_x pay_x', count=1) }} {{ modules.re.sub('a', 'b', 'AaA', flags=modules.re.I) }} {{ modules.re.split('(,)', 'a,b,c', maxsplit=1) }} {{ modules.datetime.date(2024, 3, 5).strftime('%-d/%-m %D %c') }} {{ modules.datetime.datetime(2024, 3, 5, 1, 2).isoformat(sep=' ') }} {{ modules.datetime.datetime(2024, 3, 5) == modules.datetime.date(2024, 3, 5) }} {{ modules.datetime.timedelta(seconds=0.0000025) }} {{ modules.re.compile('b').sub('c', 'abab', 1) }}",
        "pay_final pay_x bbb ['a', ',', 'b,c'] 5/3 03/05/24 Tue Mar  5 00:00:00 2024 2024-03-05 01:02:00 False 0:00:00.000002 acab",
    ),
    (
        "floats as Python prints them, in a concatenation, a filter and a list; a bracketed operand of a filter; a year before 1000",
        "{{ 0.000001 }} {{ 'Z' ~ 1e16 ~ true }} {{ (123456789012345678.0)|string }} {{ [1e-5, 2.5, none] }} {{ 'Z' ~ ((1 + 2)|string) }} {{ 'Z' ~ (1)|string }} {{ ('a' ~ 'b').upper() ~ 'c' }} {{ modules.datetime.date(999, 1, 1).strftime('%Y') }} {{ modules.datetime.timedelta(microseconds=1).total_seconds() }} {{ 'x' ~ (1.5 * 2) }} {{ -0.0 }} {{ 1.5e300 * 1e10 }}",
        "1e-06 Z1e+16True 1.2345678901234568e+17 [1e-05, 2.5, None] Z3 Z1 ABc 999 1e-06 x3.0 -0.0 inf",
    ),
    (
        "re as Python reads it: empty matches after a match, brackets and set operators as characters, escape, tuples, negative counts, a match printed",
        "{{ modules.re.sub('[^a-z]*', '_', 'daily-orders') }} {{ modules.re.sub('x*', '-', 'abxd') }} {{ modules.re.split('x*', 'axbc') }} {{ modules.re.findall('a|', 'ab') }} {{ modules.re.sub('[[:alpha:]]', 'X', 'ab[:a]]') }} {{ modules.re.sub('[a-c~~b]', 'X', 'ab~d') }} {{ modules.re.escape('a/b c-d') }} {{ modules.re.findall('(a)(b)?', 'aab') }} {{ modules.re.match('(a)(x)?', 'ab').groups() }} {{ modules.re.sub('a', 'b', 'aaa', count=-1) }} {{ modules.re.split(',', 'a,b', maxsplit=-1) }} {{ modules.re.search('b+', 'abbc') }} {{ modules.re.search('b', 'ab').span() }} {{ modules.re.sub('(a)', '\\g<1>\\0', 'a')|length }} {{ modules.re.sub('a{,2}', 'X', 'aaa') }} {{ modules.re.sub('\\s', '_', 'a\x1cb c') }}",
        "_d_a_i_l_y__o_r_d_e_r_s_ -a-b--d- ['', 'a', '', 'b', 'c', ''] ['a', '', ''] ab[:X] XXXd a/b\\ c\\-d [('a', ''), ('a', 'b')] ('a', None) aaa ['a,b'] <re.Match object; span=(1, 3), match='bb'> (1, 2) 2 XXX a_b_c",
    ),
];

/// Renders each template with Python's jinja2 (dbt's extensions on), or
/// `None` when no Python with jinja2 is at hand.
fn jinja2_renders(templates: &[&str]) -> Option<Vec<String>> {
    let python = match std::env::var("RIPPLE_TEST_DBT") {
        Ok(dbt) => std::path::Path::new(&dbt).with_file_name("python"),
        Err(_) => "python3".into(),
    };
    let script = r#"
import json, sys
import jinja2
env = jinja2.Environment(extensions=["jinja2.ext.do", "jinja2.ext.loopcontrols"])
# dbt's `modules` and a fixed `run_started_at`, as ripple has them.
import datetime, re
try:
    import pytz
    utc = pytz.utc
except ImportError:
    pytz, utc = None, datetime.timezone.utc
env.globals["modules"] = {"datetime": datetime, "pytz": pytz, "re": re}
env.globals["run_started_at"] = datetime.datetime(2000, 1, 1, tzinfo=utc)
out = []
for t in json.load(sys.stdin):
    try:
        out.append(env.from_string(t).render())
    except Exception as e:
        out.append("ERROR: %s" % e)
print(json.dumps(out))
"#;
    let mut child = std::process::Command::new(&python)
        .args(["-c", script])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .ok()?;
    use std::io::Write;
    let input = serde_json::to_string(templates).ok()?;
    child.stdin.take()?.write_all(input.as_bytes()).ok()?;
    let out = child.wait_with_output().ok()?;
    if !out.status.success() {
        return None;
    }
    serde_json::from_slice(&out.stdout).ok()
}

#[test]
fn each_form_renders_as_jinja2_does() {
    let mut wrong = Vec::new();
    for (what, template, expected) in CASES {
        match render(&[], template).0 {
            Ok(got) if got == *expected => {}
            Ok(got) => wrong.push(format!("{what}: got {got:?}, want {expected:?}")),
            Err(e) => wrong.push(format!("{what}: failed: {}", e.message)),
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_recorded_texts_are_what_jinja2_renders() {
    let templates: Vec<&str> = CASES.iter().map(|c| c.1).collect();
    let Some(rendered) = jinja2_renders(&templates) else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI=true but no Python with jinja2: set RIPPLE_TEST_DBT (bash scripts/engines.sh env)"
        );
        eprintln!(
            "skipped: no python3 with jinja2 (pip install jinja2, or bash scripts/engines.sh install dbt)"
        );
        return;
    };
    for ((what, _, expected), got) in CASES.iter().zip(rendered) {
        assert_eq!(&got, expected, "{what}: Jinja2 renders this differently");
    }
}

#[test]
fn a_macro_file_may_print_a_variable_named_macro() {
    // dbt_utils' `_is_ephemeral` takes a parameter named `macro`: its file
    // used to be lost whole.
    let file = MacroFile {
        path: "macros/is_ephemeral.sql".into(),
        package: Some("dbt_utils".into()),
        text: strip_non_macro_blocks(
            "{% macro _is_ephemeral(obj, macro) %}{% set msg %}The `{{ macro }}` macro cannot be used{% endset %}{{ msg }}{% endmacro %}",
        ),
    };
    let model = "{{ _is_ephemeral(1, 'star') }}";
    let (r, errors) = Renderer::new(settings(), std::slice::from_ref(&file), [model]);
    assert!(errors.is_empty(), "{errors:?}");
    let sql = r
        .render("models/m.sql", model, super::tests::this(), "m")
        .0
        .unwrap();
    assert_eq!(sql, "The `star` macro cannot be used");
}
