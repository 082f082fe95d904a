//! pulldown-cmark as a differential oracle of the Markdown scanner (`okf::markdown`, issue 21
//! item 7). Input: any bytes, read as UTF-8 (lossy); the lines outside the constructs the
//! scanner claims to handle are dropped (`supported_part`), and on the rest the scanner and
//! pulldown-cmark must agree on headings, fences, indented code, code spans and `.md` link
//! destinations (`tests/it/support/markdown_oracle.rs`, shared with the proptest).
#![no_main]

#[path = "../../tests/it/support/markdown_oracle.rs"]
#[allow(dead_code)]
mod oracle;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let body = oracle::supported_part(&text);
    if let Err(e) = oracle::compare(&body) {
        panic!("{e}\nbody: {body:?}");
    }
});
