//! The sentences every tool description shares (spec/surface.md §17.5), as macros that expand
//! to string literals so a tool module can build its description with `concat!` at compile
//! time.
//!
//! A tool's description is declared in its own module, next to its handler; these shared
//! sentences live in the tools layer because tool modules may not import the wire layer
//! (tests/it/layers.rs).

/// Shared sentence on `retryable` (spec/surface.md §17.5).
macro_rules! retryable_note {
    () => {
        " retryable: true means the situation can clear, not that the same call will succeed: follow the recovery_step diagnostic, which says whether to repeat the call or preview again."
    };
}
pub(crate) use retryable_note;

/// Shared errors of every tool (spec/surface.md §5).
macro_rules! input_errors {
    () => {
        " Input errors (nothing is read or written): schema_validation (fix the fields named in the invalid_input diagnostics), unknown_parameter (use the canonical name in the diagnostic field), invalid_request (bad JSON, duplicate keys, non-canonical ids, or a bundle_path that is not an absolute, clean, symlink-free directory), resource_limit (narrow the request; repeating it hits the same limit). Bundle errors: invalid_request for symlinks or special files inside the bundle, invalid_yaml_graph for a broken YAML graph (repair the named file), resource_limit for a bundle beyond the limits (10,000 files, 16 MiB per file, 64 MiB total). operation_cancelled (retryable): the request was cancelled; call again."
    };
}
pub(crate) use input_errors;

/// Shared replay protocol of the mutating tools (spec/store.md §13).
macro_rules! replay_protocol {
    () => {
        " A preview or a read alone is not authorisation: apply only changes the user has approved. Replay protocol: a timeout or operation_cancelled means the outcome is unknown; inspect the bundle, then repeat the exact same arguments before building anything new: if the first call committed, the repeat returns its stored result (with a receipt_replayed diagnostic) and publishes nothing twice; if it did not, the repeat performs it; if the bundle moved and nothing was committed, the repeat reports a conflict and you preview again. Never change arguments under the same intent and never invent a digest or token."
    };
}
pub(crate) use replay_protocol;
