//! The concept filters of `list_concepts` (spec/surface.md §18.5 rule 1), which the search
//! tools and `get_neighbors` accept too (§14.6 rule 5): exact matches on a card, combined with
//! AND. Pure.

use serde_json::Value;

/// The filters of one call; an absent filter matches everything.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Filters {
    /// `stale`: the card's `stale` is exactly this (needs `as_of`).
    pub stale: Option<bool>,
    /// `status`: the card's effective status.
    pub status: Option<String>,
    /// `type`: the card's `type`.
    pub kind: Option<String>,
    /// `tag`: one of the card's tags.
    pub tag: Option<String>,
    /// `trust`: the card's trust tier.
    pub trust: Option<String>,
}

impl Filters {
    /// The filters among schema-valid arguments (`stale`, `status`, `type`, `tag`, `trust`).
    #[must_use]
    pub fn from_args(args: &Value) -> Self {
        let s = |k: &str| args.get(k).and_then(Value::as_str).map(str::to_owned);
        Self {
            stale: args.get("stale").and_then(Value::as_bool),
            status: s("status"),
            kind: s("type"),
            tag: s("tag"),
            trust: s("trust"),
        }
    }

    /// Whether no filter is given.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.stale.is_none()
            && self.status.is_none()
            && self.kind.is_none()
            && self.tag.is_none()
            && self.trust.is_none()
    }

    /// Whether a card (or list entry) matches every filter given; a `null` member matches
    /// nothing, and so does a missing card (`None`: an `index.md` node or an unparseable
    /// concept) unless no filter is given.
    #[must_use]
    pub fn matches(&self, card: Option<&Value>) -> bool {
        if self.is_empty() {
            return true;
        }
        let Some(e) = card else {
            return false;
        };
        let eq = |k: &str, want: &Option<String>| {
            want.as_deref()
                .is_none_or(|w| e.get(k).and_then(Value::as_str) == Some(w))
        };
        self.stale
            .is_none_or(|w| e.get("stale").and_then(Value::as_bool) == Some(w))
            && eq("status", &self.status)
            && eq("type", &self.kind)
            && eq("trust", &self.trust)
            && self.tag.as_deref().is_none_or(|w| {
                e.get("tags")
                    .and_then(Value::as_array)
                    .is_some_and(|t| t.iter().any(|x| x.as_str() == Some(w)))
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn exact_matches_combined_with_and() {
        let card = json!({"status": "stable", "type": "Table", "tags": ["a", "b"], "trust": "unverified", "stale": false});
        let f = |v: Value| Filters::from_args(&v);
        assert!(f(json!({})).matches(Some(&card)));
        assert!(f(json!({})).matches(None));
        assert!(f(json!({"tag": "b", "type": "Table"})).matches(Some(&card)));
        assert!(!f(json!({"tag": "c"})).matches(Some(&card)));
        assert!(!f(json!({"stale": true})).matches(Some(&card)));
        assert!(!f(json!({"status": "stable"})).matches(None));
    }
}
