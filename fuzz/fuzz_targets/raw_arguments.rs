//! The raw-argument decoder (spec/surface.md §9.2) and every tool's pure input checks
//! (§9.1 steps 2–5). Input: the raw `arguments` bytes of a `tools/call`.
//!
//! - `decode_arguments` never panics; what it accepts is a JSON object that `serde_json`
//!   reads as the same value (the decoder is stricter, never looser).
//! - Each registered tool runs on the accepted arguments with `bundle_path` replaced by a
//!   relative path, which the first filesystem step refuses before any I/O (§7 rule 3): so
//!   every decoder, schema check and canonical-form check runs, and nothing touches the disk.
#![no_main]

use libfuzzer_sys::fuzz_target;
use okf_mcp::tools::Ctx;
use okf_mcp::tools::TOOLS;
use okf_mcp::wire::{dispatch, raw};
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let Ok(v) = raw::decode_arguments(data) else {
        return;
    };
    let serde: Value = serde_json::from_slice(data).expect("accepted arguments are JSON");
    assert_eq!(v, serde, "the decoder and serde_json read the same value");
    let Value::Object(mut args) = v else {
        panic!("accepted arguments are an object")
    };
    args.insert("bundle_path".into(), Value::String("not/absolute".into()));
    let bytes = serde_json::to_vec(&Value::Object(args)).expect("serialise");
    for spec in TOOLS {
        let r = dispatch::call(spec.name, Some(&bytes), &Ctx::default()).expect("registered");
        if !r.is_error {
            // Only a tool that needs no bundle could succeed; none does today.
            panic!("{} succeeded without a bundle", spec.name);
        }
    }
});
