//! The raw-argument boundary (spec/surface.md §9.2, README R3, R38, D2b).
//!
//! [`decode_arguments`] turns the undecoded bytes of `params.arguments` (or of the CLI's
//! `--args` / `--args-file`) into a JSON value, applying the checks of the §9.2 table in
//! order:
//!
//! 1. more than [`MAX_RAW_BYTES`] bytes → `resource_limit`;
//! 2. not valid UTF-8 → `invalid_request`;
//! 3. one deterministic single pass in document order that reports the *first* fault it meets
//!    among: nesting depth over [`MAX_DEPTH`] (`resource_limit`), malformed JSON
//!    (`invalid_request`; NaN/Infinity literals and numbers that do not fit an f64, e.g.
//!    `1e400`, included), a `\u` escape forming a lone surrogate (`invalid_request`, reported
//!    as invalid UTF-8), a duplicate key after unescaping (`invalid_request`);
//! 4. more than [`MAX_VALUES`] values, every object, array and scalar counting →
//!    `resource_limit`;
//! 5. a top level that is not an object → `invalid_request`.
//!
//! Invariants: pure (no I/O); the same bytes always give the same result; no message names a
//! key or a value. A duplicate key that the tool advertises as a property is named in one
//! diagnostic ([`decode_arguments_of`]); any other key never is (spec/surface.md §9.3 rule 1). The decoded value keeps member order (`serde_json/preserve_order`), and
//! numbers decode exactly as `serde_json` decodes them. Recursion is bounded by the depth cap,
//! so hostile input cannot overflow the stack.

use crate::envelope::ToolError;
use serde_json::{Map, Number, Value};
use std::collections::HashSet;

/// Raw byte cap of the arguments: 64 MiB; exactly 64 MiB passes (spec/surface.md §9.2 row 1).
pub const MAX_RAW_BYTES: usize = 64 * 1024 * 1024;
/// Maximum nesting depth of objects and arrays; the top-level container is depth 1
/// (spec/surface.md §9.2 row 3a).
pub const MAX_DEPTH: usize = 64;
/// Maximum number of JSON values, every object, array and scalar counting (README R38).
pub const MAX_VALUES: usize = 1_000_000;

/// Message of row 2 and row 3c.
pub const MSG_INVALID_UTF8: &str = "MCP arguments contain invalid UTF-8";
/// Message of row 3b.
pub const MSG_NOT_JSON: &str = "MCP arguments are not valid JSON";
/// Message of row 3d.
pub const MSG_DUPLICATE_KEY: &str = "MCP arguments contain a duplicate key";
/// Message of row 5.
pub const MSG_NOT_OBJECT: &str = "MCP arguments must be a JSON object";
/// Message of row 1.
pub const MSG_TOO_LARGE: &str = "MCP arguments exceed the 64 MiB size limit";
/// Message of row 3a.
pub const MSG_TOO_DEEP: &str = "MCP arguments exceed the nesting depth limit of 64";
/// Message of row 4.
pub const MSG_TOO_MANY_VALUES: &str = "MCP arguments exceed the limit of 1,000,000 values";

/// Decodes raw argument bytes into a JSON object value (spec/surface.md §9.2).
///
/// Returns the decoded `Value::Object`, member order as sent.
///
/// # Errors
/// `resource_limit` (rows 1, 3a, 4) or `invalid_request` (rows 2, 3b–3d, 5) with the exact
/// messages of the §9.2 table; messages never name keys or values.
pub fn decode_arguments(raw: &[u8]) -> Result<Value, ToolError> {
    decode_arguments_of(raw, &|_| false)
}

/// [`decode_arguments`] for a tool whose advertised property names `advertised` recognises: a
/// duplicate of such a key (at any depth) gets one `ERROR` diagnostic `invalid_input` whose
/// `field` and message name it.
///
/// # Errors
/// As [`decode_arguments`].
pub fn decode_arguments_of(
    raw: &[u8],
    advertised: &dyn Fn(&str) -> bool,
) -> Result<Value, ToolError> {
    if raw.len() > MAX_RAW_BYTES {
        return Err(ToolError::resource_limit(MSG_TOO_LARGE));
    }
    let text =
        std::str::from_utf8(raw).map_err(|_| ToolError::invalid_request(MSG_INVALID_UTF8))?;
    let mut p = Parser {
        s: text.as_bytes(),
        i: 0,
        count: 0,
    };
    let value = p.document().map_err(|f| f.into_error(advertised))?;
    if p.count > MAX_VALUES {
        return Err(ToolError::resource_limit(MSG_TOO_MANY_VALUES));
    }
    if !value.is_object() {
        return Err(ToolError::invalid_request(MSG_NOT_OBJECT));
    }
    Ok(value)
}

/// A row-3 fault, the first one met in document order.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Fault {
    Depth,
    Malformed,
    LoneSurrogate,
    /// The key, after unescaping.
    DuplicateKey(String),
}

impl Fault {
    fn into_error(self, advertised: &dyn Fn(&str) -> bool) -> ToolError {
        match self {
            Fault::Depth => ToolError::resource_limit(MSG_TOO_DEEP),
            Fault::Malformed => ToolError::invalid_request(MSG_NOT_JSON),
            Fault::LoneSurrogate => ToolError::invalid_request(MSG_INVALID_UTF8),
            Fault::DuplicateKey(key) => {
                let e = ToolError::invalid_request(MSG_DUPLICATE_KEY);
                if advertised(&key) {
                    e.with_diagnostic(
                        crate::envelope::Diagnostic::new(
                            "invalid_input",
                            crate::envelope::Severity::Error,
                            format!("{key} appears twice in one object: send each key once"),
                        )
                        .with_field(&key),
                    )
                } else {
                    e
                }
            }
        }
    }
}

/// Single-pass recursive-descent parser over valid UTF-8 bytes.
struct Parser<'a> {
    s: &'a [u8],
    i: usize,
    /// Values met so far; once over [`MAX_VALUES`] the parser keeps validating but stops
    /// building (placeholders), so memory stays bounded by the input.
    count: usize,
}

impl Parser<'_> {
    fn document(&mut self) -> Result<Value, Fault> {
        self.ws();
        let v = self.value(0)?;
        self.ws();
        if self.i != self.s.len() {
            return Err(Fault::Malformed);
        }
        Ok(v)
    }

    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.s.get(self.i) {
            self.i += 1;
        }
    }

    fn building(&self) -> bool {
        self.count <= MAX_VALUES
    }

    /// Parses one value; `depth` is the number of containers enclosing it.
    fn value(&mut self, depth: usize) -> Result<Value, Fault> {
        self.count = self.count.saturating_add(1);
        match self.s.get(self.i) {
            Some(b'{') => self.object(depth + 1),
            Some(b'[') => self.array(depth + 1),
            Some(b'"') => Ok(Value::String(self.string()?)),
            Some(b't') => self.literal(b"true", Value::Bool(true)),
            Some(b'f') => self.literal(b"false", Value::Bool(false)),
            Some(b'n') => self.literal(b"null", Value::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            _ => Err(Fault::Malformed),
        }
    }

    fn literal(&mut self, word: &[u8], v: Value) -> Result<Value, Fault> {
        if self.s[self.i..].starts_with(word) {
            self.i += word.len();
            Ok(v)
        } else {
            Err(Fault::Malformed)
        }
    }

    fn object(&mut self, depth: usize) -> Result<Value, Fault> {
        if depth > MAX_DEPTH {
            return Err(Fault::Depth);
        }
        self.i += 1; // `{`
        let mut map = Map::new();
        let mut seen: HashSet<String> = HashSet::new();
        self.ws();
        if self.s.get(self.i) == Some(&b'}') {
            self.i += 1;
            return Ok(Value::Object(map));
        }
        loop {
            self.ws();
            if self.s.get(self.i) != Some(&b'"') {
                return Err(Fault::Malformed);
            }
            let key = self.string()?;
            // The duplicate is met at the end of its key, before anything after it.
            if !seen.insert(key.clone()) {
                return Err(Fault::DuplicateKey(key));
            }
            self.ws();
            if self.s.get(self.i) != Some(&b':') {
                return Err(Fault::Malformed);
            }
            self.i += 1;
            self.ws();
            let v = self.value(depth)?;
            if self.building() {
                map.insert(key, v);
            }
            self.ws();
            match self.s.get(self.i) {
                Some(b',') => self.i += 1,
                Some(b'}') => {
                    self.i += 1;
                    return Ok(Value::Object(map));
                }
                _ => return Err(Fault::Malformed),
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<Value, Fault> {
        if depth > MAX_DEPTH {
            return Err(Fault::Depth);
        }
        self.i += 1; // `[`
        let mut items = Vec::new();
        self.ws();
        if self.s.get(self.i) == Some(&b']') {
            self.i += 1;
            return Ok(Value::Array(items));
        }
        loop {
            self.ws();
            let v = self.value(depth)?;
            if self.building() {
                items.push(v);
            }
            self.ws();
            match self.s.get(self.i) {
                Some(b',') => self.i += 1,
                Some(b']') => {
                    self.i += 1;
                    return Ok(Value::Array(items));
                }
                _ => return Err(Fault::Malformed),
            }
        }
    }

    /// A JSON number lexeme (RFC 8259 grammar), converted exactly as serde_json converts it;
    /// a value that does not fit an f64 is malformed.
    fn number(&mut self) -> Result<Value, Fault> {
        let start = self.i;
        let s = self.s;
        let mut i = self.i;
        if s.get(i) == Some(&b'-') {
            i += 1;
        }
        match s.get(i) {
            Some(b'0') => i += 1,
            Some(b'1'..=b'9') => {
                while let Some(b'0'..=b'9') = s.get(i) {
                    i += 1;
                }
            }
            _ => return Err(Fault::Malformed),
        }
        if s.get(i) == Some(&b'.') {
            i += 1;
            if !matches!(s.get(i), Some(b'0'..=b'9')) {
                return Err(Fault::Malformed);
            }
            while let Some(b'0'..=b'9') = s.get(i) {
                i += 1;
            }
        }
        if let Some(b'e' | b'E') = s.get(i) {
            i += 1;
            if let Some(b'+' | b'-') = s.get(i) {
                i += 1;
            }
            if !matches!(s.get(i), Some(b'0'..=b'9')) {
                return Err(Fault::Malformed);
            }
            while let Some(b'0'..=b'9') = s.get(i) {
                i += 1;
            }
        }
        self.i = i;
        // The lexeme is ASCII by construction.
        let lexeme = std::str::from_utf8(&s[start..i]).map_err(|_| Fault::Malformed)?;
        // Range check on every number, also past the value cap.
        if !lexeme.parse::<f64>().is_ok_and(f64::is_finite) {
            return Err(Fault::Malformed);
        }
        if !self.building() {
            return Ok(Value::Null);
        }
        let n: Number = serde_json::from_str(lexeme).map_err(|_| Fault::Malformed)?;
        Ok(Value::Number(n))
    }

    /// A string starting at `"`; returns its unescaped text.
    fn string(&mut self) -> Result<String, Fault> {
        self.i += 1; // opening quote
        let mut out: Vec<u8> = Vec::new();
        loop {
            let start = self.i;
            // Fast path: copy the run of plain bytes.
            while let Some(&b) = self.s.get(self.i) {
                if b == b'"' || b == b'\\' || b < 0x20 {
                    break;
                }
                self.i += 1;
            }
            out.extend_from_slice(&self.s[start..self.i]);
            match self.s.get(self.i) {
                Some(b'"') => {
                    self.i += 1;
                    // Only whole UTF-8 runs and encoded chars were appended.
                    return String::from_utf8(out).map_err(|_| Fault::Malformed);
                }
                Some(b'\\') => {
                    self.i += 1;
                    let c = self.escape()?;
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                }
                // A raw control character or the end of input inside a string.
                _ => return Err(Fault::Malformed),
            }
        }
    }

    /// One escape after `\`.
    fn escape(&mut self) -> Result<char, Fault> {
        let b = *self.s.get(self.i).ok_or(Fault::Malformed)?;
        self.i += 1;
        Ok(match b {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let hi = self.hex4()?;
                match hi {
                    0xD800..=0xDBFF => {
                        // Must be followed by `\u` + a low surrogate.
                        if self.s.get(self.i) == Some(&b'\\')
                            && self.s.get(self.i + 1) == Some(&b'u')
                        {
                            self.i += 2;
                            let lo = self.hex4()?;
                            if !(0xDC00..=0xDFFF).contains(&lo) {
                                return Err(Fault::LoneSurrogate);
                            }
                            let code = 0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00);
                            char::from_u32(code).ok_or(Fault::LoneSurrogate)?
                        } else {
                            return Err(Fault::LoneSurrogate);
                        }
                    }
                    0xDC00..=0xDFFF => return Err(Fault::LoneSurrogate),
                    _ => char::from_u32(hi).ok_or(Fault::Malformed)?,
                }
            }
            _ => return Err(Fault::Malformed),
        })
    }

    fn hex4(&mut self) -> Result<u32, Fault> {
        let h = self.s.get(self.i..self.i + 4).ok_or(Fault::Malformed)?;
        let mut v = 0u32;
        for &b in h {
            let d = char::from(b).to_digit(16).ok_or(Fault::Malformed)?;
            v = v * 16 + d;
        }
        self.i += 4;
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn err(raw: &[u8]) -> (String, String) {
        let e = decode_arguments(raw).expect_err("a boundary fault");
        (e.code, e.message)
    }

    fn nested(depth: usize) -> String {
        // An object at depth 1 holding arrays down to `depth`.
        let mut s = String::from("{\"a\":");
        s.push_str(&"[".repeat(depth - 1));
        s.push_str(&"]".repeat(depth - 1));
        s.push('}');
        s
    }

    #[test]
    fn valid_object_decodes_with_member_order_and_exact_numbers() {
        let v = decode_arguments(
            br#" {"z":1,"a":[true,false,null,-0.5e1,"x\u00e9\ud83d\ude00"],"m":{}} "#,
        )
        .expect("valid");
        assert_eq!(v, json!({"z":1,"a":[true,false,null,-5.0,"xé😀"],"m":{}}));
        let keys: Vec<_> = v.as_object().expect("obj").keys().cloned().collect();
        assert_eq!(keys, ["z", "a", "m"]);
        let big =
            decode_arguments(br#"{"n":18446744073709551615,"f":0.1,"i":-9223372036854775808}"#)
                .expect("valid");
        assert_eq!(
            big,
            serde_json::from_str::<Value>(
                r#"{"n":18446744073709551615,"f":0.1,"i":-9223372036854775808}"#
            )
            .expect("json")
        );
    }

    #[test]
    fn row_1_size_cap_is_64_mib_inclusive() {
        let mut ok = b"{\"a\":\"".to_vec();
        ok.resize(MAX_RAW_BYTES - 2, b'x');
        ok.extend_from_slice(b"\"}");
        assert_eq!(ok.len(), MAX_RAW_BYTES);
        assert!(decode_arguments(&ok).is_ok());
        let mut over = ok.clone();
        over.insert(1, b' ');
        let (code, msg) = err(&over);
        assert_eq!(
            (code.as_str(), msg.as_str()),
            ("resource_limit", MSG_TOO_LARGE)
        );
        // Row 1 wins over every later row.
        let mut bad = vec![0xFF];
        bad.resize(MAX_RAW_BYTES + 1, b'[');
        assert_eq!(err(&bad).0, "resource_limit");
    }

    #[test]
    fn raw_01_invalid_utf8_wins_over_a_row_3_fault_earlier_in_the_document() {
        assert_eq!(
            err(b"{\"a\":\"\xff\"}"),
            ("invalid_request".into(), MSG_INVALID_UTF8.into())
        );
        // Row 2 is checked over the whole input before the row-3 scan.
        let mut s = nested(70).into_bytes();
        s.extend_from_slice(b"\xc0");
        assert_eq!(err(&s).1, MSG_INVALID_UTF8);
    }

    #[test]
    fn raw_02_lone_surrogates_are_invalid_utf8() {
        for raw in [
            &br#"{"a":"\ud800"}"#[..],
            br#"{"a":"\udc00"}"#,
            br#"{"a":"\ud800\u0041"}"#,
            br#"{"a":"\ud800x"}"#,
            br#"{"\ud800":1}"#,
        ] {
            assert_eq!(
                err(raw),
                ("invalid_request".into(), MSG_INVALID_UTF8.into()),
                "{}",
                String::from_utf8_lossy(raw)
            );
        }
    }

    #[test]
    fn raw_03_duplicate_keys_after_unescaping_at_any_depth() {
        for raw in [
            &br#"{"bundle_path":"/a","bundle_path":"/b"}"#[..],
            br#"{"operations":[{"op":"x","op":"y"}]}"#,
            br#"{"expected_source":{"a":1,"b":{"c":1},"a":2}}"#,
            br#"{"a\u0062":1,"ab":2}"#,
        ] {
            assert_eq!(
                err(raw),
                ("invalid_request".into(), MSG_DUPLICATE_KEY.into()),
                "{}",
                String::from_utf8_lossy(raw)
            );
        }
        // Equal keys in different objects are not duplicates.
        assert!(decode_arguments(br#"{"a":{"a":1},"b":{"a":2}}"#).is_ok());
    }

    #[test]
    fn raw_04_depth_64_passes_65_fails_top_level_counts_as_1() {
        assert!(decode_arguments(nested(64).as_bytes()).is_ok());
        assert_eq!(
            err(nested(65).as_bytes()),
            ("resource_limit".into(), MSG_TOO_DEEP.into())
        );
        // Objects count like arrays.
        let mut s = String::new();
        for _ in 0..64 {
            s.push_str("{\"k\":");
        }
        s.push('1');
        s.push_str(&"}".repeat(64));
        assert!(decode_arguments(s.as_bytes()).is_ok());
        let deeper = format!("{{\"k\":{s}}}");
        assert_eq!(err(deeper.as_bytes()).0, "resource_limit");
    }

    #[test]
    fn raw_05_one_million_values_pass_one_more_fails() {
        // The object plus one array plus N-2 scalars = N values.
        let build = |n: usize| {
            let mut s = String::from("{\"a\":[");
            for i in 0..n - 2 {
                if i > 0 {
                    s.push(',');
                }
                s.push('0');
            }
            s.push_str("]}");
            s
        };
        let ok = decode_arguments(build(MAX_VALUES).as_bytes()).expect("1,000,000 values pass");
        assert_eq!(ok["a"].as_array().map(Vec::len), Some(MAX_VALUES - 2));
        assert_eq!(
            err(build(MAX_VALUES + 1).as_bytes()),
            ("resource_limit".into(), MSG_TOO_MANY_VALUES.into())
        );
    }

    #[test]
    fn row_3_faults_after_the_value_cap_still_win_over_row_4() {
        let mut s = String::from("{\"a\":[");
        for i in 0..MAX_VALUES + 10 {
            if i > 0 {
                s.push(',');
            }
            s.push('0');
        }
        s.push_str("],\"a\":1}");
        assert_eq!(err(s.as_bytes()).1, MSG_DUPLICATE_KEY);
    }

    #[test]
    fn raw_07_malformed_json_and_out_of_range_numbers() {
        for raw in [
            &b""[..],
            b"   ",
            b"{",
            b"{\"a\":}",
            b"{\"a\":1,}",
            b"{\"a\" 1}",
            b"{\"a\":NaN}",
            b"{\"a\":Infinity}",
            b"{\"a\":-Infinity}",
            b"{\"a\":1e400}",
            b"{\"a\":-1e400}",
            b"{\"a\":01}",
            b"{\"a\":1.}",
            b"{\"a\":.5}",
            b"{\"a\":+1}",
            b"{\"a\":\"\x01\"}",
            b"{\"a\":\"\\x\"}",
            b"{\"a\":\"\\u12\"}",
            b"{\"a\":tru}",
            b"{} {}",
            b"{'a':1}",
            b"\xef\xbb\xbf{}",
        ] {
            assert_eq!(
                err(raw),
                ("invalid_request".into(), MSG_NOT_JSON.into()),
                "{}",
                String::from_utf8_lossy(raw)
            );
        }
        // Tiny and huge-but-finite numbers are fine.
        assert!(decode_arguments(b"{\"a\":1e-400,\"b\":1.7976931348623157e308}").is_ok());
    }

    #[test]
    fn raw_07_top_level_must_be_an_object() {
        for raw in [&b"[]"[..], b"\"s\"", b"1", b"null", b"true", b"[{\"a\":1}]"] {
            assert_eq!(
                err(raw),
                ("invalid_request".into(), MSG_NOT_OBJECT.into()),
                "{}",
                String::from_utf8_lossy(raw)
            );
        }
    }

    #[test]
    fn row_3_reports_the_first_fault_in_document_order() {
        // Depth before a later duplicate; duplicate before a later syntax error; surrogate
        // before a later depth fault.
        let deep = nested(65);
        let a = format!("{{\"x\":{deep},\"x\":1}}");
        assert_eq!(err(a.as_bytes()).1, MSG_TOO_DEEP);
        assert_eq!(err(br#"{"x":1,"x":NaN}"#).1, MSG_DUPLICATE_KEY);
        assert_eq!(err(br#"{"x":NaN,"x":1}"#).1, MSG_NOT_JSON);
        let b = format!("{{\"s\":\"\\ud800\",\"d\":{deep}}}");
        assert_eq!(err(b.as_bytes()).1, MSG_INVALID_UTF8);
        // A row-3 fault wins over a non-object top level.
        assert_eq!(err(b"[1,2").1, MSG_NOT_JSON);
    }

    #[test]
    fn raw_08_same_input_same_error_and_no_key_or_value_in_messages() {
        let inputs: [&[u8]; 6] = [
            br#"{"secret_key":"sk_live_SECRET","secret_key":1}"#,
            br#"{"secret_key":"sk_live_\ud800"}"#,
            br#"{"secret_key":sk_live_SECRET}"#,
            b"{\"secret_key\":\"sk_live_\xff\"}",
            br#"["sk_live_SECRET"]"#,
            br#"{"secret_key":1e999}"#,
        ];
        for raw in inputs {
            let a = decode_arguments(raw).expect_err("fault");
            let b = decode_arguments(raw).expect_err("fault");
            assert_eq!(a, b);
            let wire = a.to_wire().to_string();
            assert!(
                !wire.contains("secret_key") && !wire.contains("sk_live"),
                "{wire}"
            );
        }
    }
}
