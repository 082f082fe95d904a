//! The stdio framing layer (spec/surface.md §1.1): every input line is scanned and framed
//! without panicking, and what is forwarded to rmcp is one JSON value on one line; a line the
//! layer answers itself gets one JSON-RPC error (−32700 or −32600) and is not forwarded.
//! Input: a stream of lines (split on `\n`), each also framed as a truncated line.
#![no_main]

use libfuzzer_sys::fuzz_target;
use okf_mcp::server::framing::{frame_line, response_id_key, scan};

fuzz_target!(|data: &[u8]| {
    let registered = |name: &str| name == "list_concepts" || name == "apply_v02_migration";
    for line in data.split(|b| *b == b'\n') {
        let _ = scan(line);
        let _ = response_id_key(line);
        for truncated in [false, true] {
            let framed = frame_line(line, truncated, &registered);
            if let Some(reply) = &framed.reply {
                // The layer's own answer (spec/surface.md §18.8): one JSON-RPC error line.
                assert!(
                    framed.forward.is_none(),
                    "a line is answered or forwarded, not both"
                );
                assert!(!reply.contains(&b'\n'));
                let v: serde_json::Value = serde_json::from_slice(reply).expect("a JSON reply");
                let code = v["error"]["code"].as_i64();
                assert!(code == Some(-32700) || code == Some(-32600), "{v}");
            }
            if let Some(frame) = &framed.forward {
                assert!(!frame.contains(&b'\n'), "a forwarded frame is one line");
                if !truncated {
                    // What rmcp receives is either the line itself or a replacement the
                    // layer built; a replacement is always valid JSON.
                    let trimmed = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
                    let trimmed = trimmed.strip_suffix(b"\r").unwrap_or(trimmed);
                    if frame.as_slice() != trimmed {
                        serde_json::from_slice::<serde_json::Value>(frame)
                            .expect("a rewritten frame is JSON");
                    }
                }
            }
        }
    }
});
