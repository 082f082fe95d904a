//! Cursors of the Phase-4 tools (spec/surface.md §14.6 rule 6): `next_cursor` encodes the
//! revision, a digest of the call's other inputs and the last hit's sort key, so a page after
//! it continues exactly where the previous one stopped, on the same bundle and the same
//! question. Pages concatenated equal the unpaged answer.
//!
//! Format (opaque to callers): `<prefix>.<64 hex revision>.<16 hex inputs digest>.<hex key>`,
//! e.g. `ss1.` for `search_sections`.

use crate::digest;
use crate::envelope::{Diagnostic, ToolError};
use serde_json::Value;
use std::collections::BTreeMap;

/// Longest `cursor` the schemas accept, in characters: a prefix, the revision, the inputs
/// digest and the hex of a key of at most two 4096-byte ids.
pub const MAX_CURSOR: u64 = 16_500;

/// One tool's cursor format.
#[derive(Debug, Clone, Copy)]
pub struct Cursors {
    /// The prefix with its version, e.g. `ss1`.
    pub prefix: &'static str,
    /// The tool's name (for messages).
    pub tool: &'static str,
    /// The verb of the recovery step: `search` or `list`.
    pub verb: &'static str,
}

/// A decoded cursor, to be checked against the capture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct After {
    /// `sha256:<64 hex>`.
    pub revision: String,
    /// The inputs digest.
    pub inputs: String,
    /// The sort key of the last hit of the previous page.
    pub key: Vec<u8>,
}

/// The most bytes one answer of a Phase-4 tool spends on its list (hits or edges) and the
/// members beside it (spec/surface.md §14.6 rule 9: answers within 256 KiB): a page stops
/// before the item that would pass it, and says so with `truncated` and `next_cursor`.
pub const ANSWER_BYTES: usize = 256 * 1024;

/// Room kept for the answer's fixed members and the dispatcher's `notices`.
const FIXED_ROOM: usize = 8 * 1024;

/// Keeps the leading items of a rendered page whose compact JSON fits in what
/// [`ANSWER_BYTES`] leaves after `others` bytes of the answer's other members (at least one
/// item, so paging always moves on). Returns the kept items and whether any was cut.
#[must_use]
pub fn fit<K>(rendered: Vec<(K, Value)>, others: usize) -> (Vec<(K, Value)>, bool) {
    let budget = ANSWER_BYTES.saturating_sub(others + FIXED_ROOM);
    let mut used = 0usize;
    let mut kept = Vec::with_capacity(rendered.len());
    let total = rendered.len();
    for (k, v) in rendered {
        let size = serde_json::to_string(&v).map_or(usize::MAX, |t| t.len() + 1);
        if !kept.is_empty() && used.saturating_add(size) > budget {
            break;
        }
        used = used.saturating_add(size);
        kept.push((k, v));
    }
    let cut = kept.len() < total;
    (kept, cut)
}

/// 16 hex digits of the SHA-256 of the call's arguments other than `cursor` and `limit`
/// (serialised with sorted keys), under the tool's name, so a cursor of one tool never
/// continues another's answer. `limit` may change between pages.
#[must_use]
pub fn inputs_digest(args: &Value) -> String {
    let sorted: BTreeMap<&String, &Value> = args
        .as_object()
        .map(|m| {
            m.iter()
                .filter(|(k, _)| k.as_str() != "cursor" && k.as_str() != "limit")
                .collect()
        })
        .unwrap_or_default();
    let text = serde_json::to_string(&sorted).unwrap_or_default();
    digest::hex(&digest::sha256(text.as_bytes())[..8])
}

impl Cursors {
    /// [`inputs_digest`] of `args` under this tool's name.
    #[must_use]
    pub fn inputs(&self, args: &Value) -> String {
        let mut scoped = serde_json::Map::new();
        scoped.insert("tool".into(), Value::String(self.tool.to_owned()));
        scoped.insert("arguments".into(), args.clone());
        if let Some(m) = args.as_object() {
            let kept: serde_json::Map<String, Value> = m
                .iter()
                .filter(|(k, _)| k.as_str() != "cursor" && k.as_str() != "limit")
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            scoped.insert("arguments".into(), Value::Object(kept));
        }
        inputs_digest(&Value::Object(scoped))
    }

    /// The cursor after the hit with sort key `key`, on `revision` (`sha256:<64 hex>`).
    #[must_use]
    pub fn encode(&self, revision: &str, inputs: &str, key: &[u8]) -> String {
        let digits = revision.strip_prefix("sha256:").unwrap_or(revision);
        format!("{}.{digits}.{inputs}.{}", self.prefix, digest::hex(key))
    }

    fn recovery(&self) -> Diagnostic {
        Diagnostic::recovery(
            "cursor",
            format!(
                "Call {} again without cursor to start from the first page, then pass each next_cursor unchanged with the same other arguments.",
                self.tool
            ),
        )
    }

    fn bad(&self) -> ToolError {
        ToolError::invalid_request(format!(
            "cursor is not a next_cursor of {}; {} again without cursor",
            self.tool, self.verb
        ))
        .with_diagnostic(self.recovery())
    }

    /// Decodes `cursor` (pure; the value is never echoed) and checks its key with `key_ok`
    /// (the shape of this tool's sort keys).
    ///
    /// # Errors
    /// `invalid_request` for a string that is not a cursor of this tool.
    pub fn decode_checked(
        &self,
        cursor: &str,
        key_ok: impl Fn(&[u8]) -> bool,
    ) -> Result<After, ToolError> {
        let a = self.decode(cursor)?;
        if key_ok(&a.key) {
            Ok(a)
        } else {
            Err(self.bad())
        }
    }

    /// Decodes `cursor` (pure; the value is never echoed).
    ///
    /// # Errors
    /// `invalid_request` for a string that is not a cursor of this tool.
    pub fn decode(&self, cursor: &str) -> Result<After, ToolError> {
        let rest = cursor
            .strip_prefix(self.prefix)
            .and_then(|r| r.strip_prefix('.'))
            .ok_or_else(|| self.bad())?;
        let mut parts = rest.splitn(3, '.');
        let (Some(rev), Some(inputs), Some(key)) = (parts.next(), parts.next(), parts.next())
        else {
            return Err(self.bad());
        };
        let hex = |s: &str| s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
        if rev.len() != 64 || !hex(rev) || inputs.len() != 16 || !hex(inputs) || !hex(key) {
            return Err(self.bad());
        }
        if key.len() % 2 != 0 {
            return Err(self.bad());
        }
        let key = (0..key.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&key[i..i + 2], 16))
            .collect::<Result<Vec<u8>, _>>()
            .map_err(|_| self.bad())?;
        Ok(After {
            revision: format!("sha256:{rev}"),
            inputs: inputs.to_owned(),
            key,
        })
    }

    /// Checks a decoded cursor against the call: its inputs digest, then the captured
    /// revision (spec/surface.md §14.6 rule 6).
    ///
    /// # Errors
    /// `invalid_request`: another call's cursor, or `the bundle changed since this cursor;
    /// <verb> again without cursor`.
    pub fn check(&self, after: &After, revision: &str, inputs: &str) -> Result<(), ToolError> {
        if after.inputs != inputs {
            return Err(ToolError::invalid_request(format!(
                "cursor belongs to a {} call with other arguments; pass it with the same arguments, or {} again without cursor",
                self.tool, self.verb
            ))
            .with_diagnostic(self.recovery()));
        }
        if after.revision != revision {
            return Err(ToolError::invalid_request(format!(
                "the bundle changed since this cursor; {} again without cursor",
                self.verb
            ))
            .with_diagnostic(self.recovery()));
        }
        Ok(())
    }
}

/// The page of `items` (sorted; `key` gives each item's sort key as bytes in the same order
/// as the items) after `after`, at most `limit` long, and whether more items follow it.
pub fn page<T>(
    items: Vec<T>,
    after: Option<&[u8]>,
    limit: usize,
    is_after: impl Fn(&T, &[u8]) -> bool,
) -> (Vec<T>, bool) {
    let mut it = items
        .into_iter()
        .skip_while(|i| after.is_some_and(|k| !is_after(i, k)));
    let page: Vec<T> = it.by_ref().take(limit).collect();
    let more = it.next().is_some();
    (page, more)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const C: Cursors = Cursors {
        prefix: "ts1",
        tool: "t",
        verb: "search",
    };

    #[test]
    fn round_trip_and_checks() {
        let rev = format!("sha256:{}", "ab".repeat(32));
        let args = json!({"query": "x", "limit": 3, "cursor": "c"});
        let inputs = C.inputs(&args);
        assert_eq!(inputs, C.inputs(&json!({"limit": 9, "query": "x"})));
        assert_ne!(inputs, C.inputs(&json!({"query": "y"})));
        let other = Cursors { tool: "u", ..C };
        assert_ne!(inputs, other.inputs(&args), "a cursor is bound to its tool");
        let c = C.encode(&rev, &inputs, b"key\0x");
        let a = C.decode(&c).expect("decodes");
        assert_eq!(a.key, b"key\0x");
        assert!(C.check(&a, &rev, &inputs).is_ok());
        let other = format!("sha256:{}", "cd".repeat(32));
        let e = C.check(&a, &other, &inputs).expect_err("stale");
        assert_eq!(
            e.message,
            "the bundle changed since this cursor; search again without cursor"
        );
        assert!(C.check(&a, &rev, "0000000000000000").is_err());
        for bad in ["", "ts1", "ts1.zz", "xx1.00.00.00", &c[..c.len() - 1]] {
            assert!(C.decode(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn fit_keeps_at_least_one_item_and_stays_within_the_budget() {
        let big = || json!("x".repeat(100 * 1024));
        let (kept, cut) = fit(vec![(1, big()), (2, big()), (3, big())], 0);
        assert_eq!((kept.len(), cut), (2, true));
        let (kept, cut) = fit(vec![(1, big())], ANSWER_BYTES);
        assert_eq!((kept.len(), cut), (1, false));
        let (kept, cut) = fit(vec![(1, json!(1)), (2, json!(2))], 0);
        assert_eq!((kept.len(), cut), (2, false));
    }

    #[test]
    fn pages_concatenate_to_the_whole() {
        let items: Vec<u32> = (0..10).collect();
        let key = |i: &u32| vec![u8::try_from(*i).unwrap_or(0)];
        let mut after: Option<Vec<u8>> = None;
        let mut all = Vec::new();
        loop {
            let (p, more) = page(items.clone(), after.as_deref(), 3, |i, k| {
                key(i).as_slice() > k
            });
            after = p.last().map(key);
            all.extend(p);
            if !more {
                break;
            }
        }
        assert_eq!(all, items);
    }
}
