//! Frontmatter split + YAML parse (spec/store.md §3.4–§3.5), with the full event parser as the
//! oracle of the fast path: `yaml::parse` (fast path first) and `yaml::parse_full` must give
//! the same tree or the same error for every input (the crate is built with `yaml-tripwire`,
//! so `parse` also asserts it internally). Input: a document's bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use okf_mcp::okf::{document, yaml};

fuzz_target!(|data: &[u8]| {
    if let Ok(split) = document::split(data) {
        assert!(split.body.start <= split.body.end && split.body.end <= split.text.len());
        if let Some(r) = &split.frontmatter {
            assert!(r.start <= r.end && r.end <= split.body.start);
            let text = &split.text[r.clone()];
            assert_eq!(
                yaml::parse(text),
                yaml::parse_full(text),
                "fast path vs full parser"
            );
        }
    }
    // The whole input as frontmatter text too (most inputs have no fences).
    if let Ok(text) = std::str::from_utf8(data) {
        assert_eq!(
            yaml::parse(text),
            yaml::parse_full(text),
            "fast path vs full parser"
        );
    }
});
