//! The `TIMELINE,` text sink and its reader: one line per event, for grep and for humans.
//!
//! ```text
//! TIMELINE,<ms>,<event>,<job>,<detail>
//! TIMELINE,12.345,SYNTH_START,0,kind=B id=7 parent=- layer=engine part=3
//! TIMELINE,12.901,GPU_PICKUP,0,kind=I id=9 parent=7 layer=engine part=3 rem_ns=412 msg="worker 1, queue 2"
//! ```
//!
//! - `<ms>`: milliseconds since the epoch with 3 decimals (microsecond resolution).
//! - `<event>`: `NAME_START` / `NAME_END` for a span's Begin/End, `NAME` for an Instant,
//!   so the classic engine names read as before (`SYNTH` gives `SYNTH_START`). Commas and
//!   line breaks in a name become `_` here; the exact name then follows as `name="..."`.
//! - `<detail>`: space-separated `key=value` pairs that make the line round-trip:
//!   `kind=B|E|I id=<span> parent=<span>|- layer=<layer> part=<partition>`, then, only when
//!   needed, `rem_ns=<0..999>` (the nanoseconds below the printed microsecond, so
//!   timestamps survive exactly), `name="..."`, and `msg="..."` (the free-form detail).
//!   Quoted values escape `"`, `\`, and control characters (`\n`, `\r`, `\t`, `\u{..}`);
//!   everything else, commas and spaces included, is kept as is.
//!
//! The reader ignores lines that do not start with `TIMELINE,` (so a whole program log can
//! be fed to it) and ignores unknown keys (so later writers may add some).

use std::io::{BufRead, Write};

use super::{Event, EventKind, Layer, SpanId, TimelineError, UnknownLayer};

const PREFIX: &str = "TIMELINE,";

/// Writes one `TIMELINE,` line per event, in the given order.
pub fn write_text(events: &[Event], w: &mut impl Write) -> std::io::Result<()> {
    for event in events {
        writeln!(w, "{}", format_line(event))?;
    }
    Ok(())
}

/// One event as a `TIMELINE,` line (without the newline); handy for live logging.
pub fn format_line(e: &Event) -> String {
    let label_name = sanitize_name(&e.name);
    let suffix = match e.kind {
        EventKind::Begin => "_START",
        EventKind::End => "_END",
        EventKind::Instant => "",
    };
    let parent = e.parent.map_or_else(|| "-".to_string(), |p| p.to_string());
    let mut line = format!(
        "{PREFIX}{ms}.{us:03},{label_name}{suffix},{job},kind={kind} id={id} parent={parent} layer={layer} part={part}",
        ms = e.ts_ns / 1_000_000,
        us = (e.ts_ns / 1_000) % 1_000,
        job = e.job,
        kind = kind_code(e.kind),
        id = e.span,
        layer = e.layer,
        part = e.partition,
    );
    let rem_ns = e.ts_ns % 1_000;
    if rem_ns != 0 {
        line.push_str(&format!(" rem_ns={rem_ns}"));
    }
    if label_name != e.name {
        line.push_str(" name=");
        push_quoted(&mut line, &e.name);
    }
    if !e.detail.is_empty() {
        line.push_str(" msg=");
        push_quoted(&mut line, &e.detail);
    }
    line
}

/// Reads every `TIMELINE,` line; other lines are skipped. Events keep the file's order.
pub fn read_text(mut r: impl BufRead) -> Result<Vec<Event>, TimelineError> {
    let mut events = Vec::new();
    let mut buf = Vec::new();
    let mut line_no = 0;
    loop {
        buf.clear();
        if r.read_until(b'\n', &mut buf)? == 0 {
            return Ok(events);
        }
        line_no += 1;
        // Check the prefix on bytes, so binary noise in unrelated lines is ignored too.
        if !buf.starts_with(PREFIX.as_bytes()) {
            continue;
        }
        let parse_err = |msg: String| TimelineError::Parse { line: line_no, msg };
        let line = std::str::from_utf8(&buf).map_err(|e| parse_err(format!("not UTF-8: {e}")))?;
        let line = line.trim_end_matches(['\n', '\r']);
        events.push(parse_line(line).map_err(parse_err)?);
    }
}

/// Parses one `TIMELINE,` line; the error is a message without the line number.
pub fn parse_line(line: &str) -> Result<Event, String> {
    let rest = line.strip_prefix(PREFIX).ok_or("missing the TIMELINE, prefix")?;
    // The detail is last and may hold commas; the label never does (the writer replaces
    // them), so splitting into exactly four fields is unambiguous.
    let mut fields = rest.splitn(4, ',');
    let (Some(ms), Some(label), Some(job), Some(detail)) = (fields.next(), fields.next(), fields.next(), fields.next())
    else {
        return Err("expected TIMELINE,<ms>,<event>,<job>,<detail>".to_string());
    };
    let ms_ns = parse_ms(ms)?;
    let job: u64 = job.parse().map_err(|_| format!("bad job {job:?}"))?;
    let keys = DetailKeys::parse(detail)?;

    let kind = keys.kind.ok_or("missing kind=")?;
    let ts_ns = ms_ns.checked_add(keys.rem_ns).ok_or("timestamp overflows u64 nanoseconds")?;
    let name = match keys.name {
        Some(name) => name,
        None => name_from_label(label, kind)?,
    };
    Ok(Event {
        ts_ns,
        kind,
        span: keys.id.ok_or("missing id=")?,
        parent: keys.parent,
        layer: keys.layer.ok_or("missing layer=")?,
        name,
        job,
        partition: keys.part,
        detail: keys.msg,
    })
}

fn kind_code(kind: EventKind) -> char {
    match kind {
        EventKind::Begin => 'B',
        EventKind::End => 'E',
        EventKind::Instant => 'I',
    }
}

/// The name as it can appear in the comma-separated label field.
fn sanitize_name(name: &str) -> String {
    name.replace([',', '\n', '\r'], "_")
}

/// Recovers a span's name from its label by removing the kind's suffix.
fn name_from_label(label: &str, kind: EventKind) -> Result<String, String> {
    let name = match kind {
        EventKind::Begin => label.strip_suffix("_START"),
        EventKind::End => label.strip_suffix("_END"),
        EventKind::Instant => Some(label),
    };
    name.map(str::to_string)
        .ok_or_else(|| format!("event {label:?} does not end in the suffix kind={} needs", kind_code(kind)))
}

/// Parses `<ms>[.<up to 6 digits>]` into nanoseconds, without going through floats.
fn parse_ms(s: &str) -> Result<u64, String> {
    let bad = || format!("bad milliseconds {s:?}");
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    if int.is_empty() || !int.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    if frac.len() > 6 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let int: u64 = int.parse().map_err(|_| bad())?;
    // Right-pad the fraction to 6 digits: nanoseconds within the millisecond.
    let frac_ns: u64 = if frac.is_empty() { 0 } else { format!("{frac:0<6}").parse().map_err(|_| bad())? };
    int.checked_mul(1_000_000).and_then(|ns| ns.checked_add(frac_ns)).ok_or_else(bad)
}

/// The known keys of a detail field.
#[derive(Default)]
struct DetailKeys {
    kind: Option<EventKind>,
    id: Option<SpanId>,
    parent: Option<SpanId>,
    layer: Option<Layer>,
    part: u32,
    rem_ns: u64,
    name: Option<String>,
    msg: String,
}

impl DetailKeys {
    fn parse(detail: &str) -> Result<Self, String> {
        let mut keys = DetailKeys::default();
        for (key, value) in parse_pairs(detail)? {
            keys.set(key, value)?;
        }
        Ok(keys)
    }

    fn set(&mut self, key: &str, value: String) -> Result<(), String> {
        let bad = |what: &str| format!("bad {key}={value:?}: {what}");
        match key {
            "kind" => {
                self.kind = Some(match value.as_str() {
                    "B" => EventKind::Begin,
                    "E" => EventKind::End,
                    "I" => EventKind::Instant,
                    _ => return Err(bad("expected B, E or I")),
                })
            }
            "id" => self.id = Some(value.parse().map_err(|_| bad("expected a span id"))?),
            "parent" => {
                self.parent = match value.as_str() {
                    "-" => None,
                    v => Some(v.parse().map_err(|_| bad("expected a span id or -"))?),
                }
            }
            "layer" => self.layer = Some(value.parse().map_err(|e: UnknownLayer| bad(&e.to_string()))?),
            "part" => self.part = value.parse().map_err(|_| bad("expected a partition number"))?,
            "rem_ns" => self.rem_ns = value.parse().map_err(|_| bad("expected nanoseconds"))?,
            "name" => self.name = Some(value),
            "msg" => self.msg = value,
            _ => {} // unknown keys are for future writers
        }
        Ok(())
    }
}

/// Splits `k=v k="quoted v" ...` into pairs, unquoting quoted values.
fn parse_pairs(s: &str) -> Result<Vec<(&str, String)>, String> {
    let mut pairs = Vec::new();
    let mut rest = s.trim_start_matches(' ');
    while !rest.is_empty() {
        let eq = rest.find('=').ok_or_else(|| format!("expected key=value at {rest:?}"))?;
        let key = &rest[..eq];
        if key.is_empty() || key.contains(' ') {
            return Err(format!("expected key=value at {rest:?}"));
        }
        let after = &rest[eq + 1..];
        let (value, tail) = match after.strip_prefix('"') {
            Some(quoted) => unquote(quoted)?,
            None => {
                let end = after.find(' ').unwrap_or(after.len());
                (after[..end].to_string(), &after[end..])
            }
        };
        if !tail.is_empty() && !tail.starts_with(' ') {
            return Err(format!("expected a space after {key}=\"...\""));
        }
        pairs.push((key, value));
        rest = tail.trim_start_matches(' ');
    }
    Ok(pairs)
}

/// Appends `"value"` with the escapes [`unquote`] understands.
fn push_quoted(out: &mut String, value: &str) {
    out.push('"');
    for c in value.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Reads a quoted value (the opening quote already consumed); returns it and the rest.
fn unquote(s: &str) -> Result<(String, &str), String> {
    let mut value = String::new();
    let mut chars = s.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Ok((value, &s[i + 1..])),
            '\\' => value.push(unescape(&mut chars)?),
            c => value.push(c),
        }
    }
    Err("unterminated quoted value".to_string())
}

/// Decodes one escape sequence after its backslash.
fn unescape(chars: &mut std::str::CharIndices<'_>) -> Result<char, String> {
    match chars.next().map(|(_, c)| c) {
        Some('"') => Ok('"'),
        Some('\\') => Ok('\\'),
        Some('n') => Ok('\n'),
        Some('r') => Ok('\r'),
        Some('t') => Ok('\t'),
        Some('u') => {
            if chars.next().map(|(_, c)| c) != Some('{') {
                return Err("expected \\u{hex}".to_string());
            }
            let hex: String = chars.by_ref().map(|(_, c)| c).take_while(|&c| c != '}').collect();
            u32::from_str_radix(&hex, 16)
                .ok()
                .and_then(char::from_u32)
                .ok_or_else(|| format!("bad escape \\u{{{hex}}}"))
        }
        Some(c) => Err(format!("unknown escape \\{c}")),
        None => Err("unterminated escape".to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{self, MS};
    use super::super::{Report, Timeline};
    use super::*;

    fn write(events: &[Event]) -> String {
        let mut out = Vec::new();
        write_text(events, &mut out).expect("writing to a Vec cannot fail");
        String::from_utf8(out).expect("the writer emits UTF-8")
    }

    fn read(s: &str) -> Result<Vec<Event>, TimelineError> {
        read_text(s.as_bytes())
    }

    /// A trace exercising every field: odd timestamps, all kinds, labels, and details and
    /// names that need quoting.
    fn tricky_events() -> Vec<Event> {
        let [mut prove, prove_end] = test_support::span(1, None, Layer::Prover, "prove", 1_234_567, 90 * MS + 1);
        prove.detail = r#"circuit="sha256", rows=1,024  (two spaces) \ backslash"#.to_string();
        let [mut synth, mut synth_end] = test_support::span(2, Some(1), Layer::Engine, "SYNTH", 2 * MS, 30 * MS);
        synth.partition = 3;
        synth.job = 42;
        synth_end.partition = 3;
        synth_end.job = 42;
        let [odd, odd_end] =
            test_support::span(3, Some(1), Layer::Device, "k, \"odd\"\nname_START", 31 * MS + 999, 40 * MS);
        let instant = Event {
            ts_ns: 35 * MS + 500,
            kind: EventKind::Instant,
            span: 4,
            parent: Some(1),
            layer: Layer::Backend,
            name: "GPU_PICKUP".into(),
            job: u64::MAX,
            partition: u32::MAX,
            detail: "tab\there, newline\nthere, ctrl\u{1}, unicode µs ✓".into(),
        };
        test_support::sorted(vec![prove, prove_end, synth, synth_end, odd, odd_end, instant])
    }

    #[test]
    fn classic_names_stay_readable() {
        let events = test_support::trace(&[test_support::span(7, None, Layer::Engine, "SYNTH", 12_345_678, 20 * MS)]);
        let text = write(&events);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "TIMELINE,12.345,SYNTH_START,0,kind=B id=7 parent=- layer=engine part=0 rem_ns=678");
        assert_eq!(lines[1], "TIMELINE,20.000,SYNTH_END,0,kind=E id=7 parent=- layer=engine part=0");
    }

    #[test]
    fn round_trip_is_exact() -> Result<(), TimelineError> {
        let events = tricky_events();
        let text = write(&events);
        assert_eq!(text.lines().count(), events.len(), "one line per event, even with newlines in fields:\n{text}");
        assert!(text.contains(r#"msg="circuit=\"sha256\", rows=1,024  (two spaces) \\ backslash""#), "{text}");
        assert!(text.contains(",k_ \"odd\"_name_START_START,"), "{text}");
        let back = read(&text)?;
        assert_eq!(back, events);
        assert_eq!(Report::from_events(&back), Report::from_events(&events));
        Ok(())
    }

    #[test]
    fn recorded_timeline_round_trips() -> Result<(), TimelineError> {
        let tl = Timeline::new().for_partition(5, 1);
        {
            let _outer = tl.span(Layer::Prover, "prove");
            let _inner = tl.span_detail(Layer::Backend, "msm_g1", "n=1000, c=12");
            tl.instant(Layer::Backend, "flush", "");
        }
        let events = tl.events();
        assert_eq!(read(&write(&events))?, events);
        Ok(())
    }

    #[test]
    fn other_lines_are_ignored() -> Result<(), TimelineError> {
        let events = tricky_events();
        let mut log = "INFO starting\nTIMELINEX,1,2\n".to_string();
        for line in write(&events).lines() {
            log.push_str(line);
            log.push_str("\r\nsome unrelated line, with commas\n");
        }
        let mut bytes = log.into_bytes();
        bytes.extend_from_slice(b"\xff\xfe binary noise\n");
        assert_eq!(read_text(bytes.as_slice())?, events);
        assert!(read("")?.is_empty());
        Ok(())
    }

    #[test]
    fn lines_without_optional_keys_use_defaults() -> Result<(), TimelineError> {
        let events = read("TIMELINE,1.5,GPU_START,2,layer=engine id=9 kind=B future=1")?;
        assert_eq!(events.len(), 1);
        let e = &events[0];
        assert_eq!((e.ts_ns, e.name.as_str(), e.job, e.span, e.parent, e.partition), (1_500_000, "GPU", 2, 9, None, 0));
        assert_eq!(e.detail, "");
        Ok(())
    }

    #[test]
    fn malformed_lines_are_parse_errors() {
        let good = "TIMELINE,1.000,X_START,0,kind=B id=1 parent=- layer=engine part=0";
        let cases = [
            "TIMELINE,1.000,X_START,0",
            "TIMELINE,abc,X_START,0,kind=B id=1 layer=engine",
            "TIMELINE,1.0000001,X_START,0,kind=B id=1 layer=engine",
            "TIMELINE,-1.0,X_START,0,kind=B id=1 layer=engine",
            "TIMELINE,99999999999999999.0,X_START,0,kind=B id=1 layer=engine",
            "TIMELINE,1.000,X_START,zero,kind=B id=1 layer=engine",
            "TIMELINE,1.000,X_START,0,kind=Q id=1 layer=engine",
            "TIMELINE,1.000,X_START,0,id=1 layer=engine",
            "TIMELINE,1.000,X_START,0,kind=B layer=engine",
            "TIMELINE,1.000,X_START,0,kind=B id=1",
            "TIMELINE,1.000,X_START,0,kind=B id=1 layer=gpu",
            "TIMELINE,1.000,X_START,0,kind=B id=-4 layer=engine",
            "TIMELINE,1.000,X_START,0,kind=B id=1 parent=x layer=engine",
            "TIMELINE,1.000,X_START,0,kind=B id=1 layer=engine part=-1",
            "TIMELINE,1.000,X_START,0,kind=E id=1 layer=engine",
            "TIMELINE,1.000,X_START,0,kind=B id=1 layer=engine msg=\"open",
            "TIMELINE,1.000,X_START,0,kind=B id=1 layer=engine msg=\"a\"b",
            "TIMELINE,1.000,X_START,0,kind=B id=1 layer=engine msg=\"\\q\"",
            "TIMELINE,1.000,X_START,0,kind=B id=1 layer=engine msg=\"\\u{zz}\"",
            "TIMELINE,1.000,X_START,0,kind=B id=1 layer=engine msg=\"\\u{d800}\"",
            "TIMELINE,1.000,X_START,0,kind=B id=1 layer=engine msg=\"\\",
            "TIMELINE,1.000,X_START,0,kind=B id=1 layer=engine stray",
            "TIMELINE,1.000,X_START,0,kind=B id=1 layer=engine =v",
            "TIMELINE,18446744073709.551,X_START,0,kind=B id=1 layer=engine rem_ns=999",
        ];
        for bad in cases {
            let input = format!("not a timeline line\n{good}\n{bad}\n");
            match read(&input) {
                Err(TimelineError::Parse { line: 3, msg }) => assert!(!msg.is_empty()),
                other => panic!("{bad:?} gave {other:?}"),
            }
        }
        let invalid_utf8 = b"TIMELINE,1.000,X,0,kind=I id=1 layer=engine msg=\"\xff\"\n";
        assert!(matches!(read_text(&invalid_utf8[..]), Err(TimelineError::Parse { line: 1, .. })));
    }
}
