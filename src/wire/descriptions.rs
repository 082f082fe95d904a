//! Tool descriptions (spec/surface.md §17.5), the `description` of each tool in `tools/list`.
//!
//! Each says when to use the tool, which sibling to use instead, what it returns, its limits,
//! its statuses and error codes with the next step for each, and the next step after success.
//! Mutating tools add that a preview alone is not authorisation and the replay protocol of
//! spec/store.md §13; apply tools name their paired preview.

use crate::tools::describe::{input_errors, replay_protocol, retryable_note};

/// `list_concepts` (spec/surface.md §12.3).
pub const LIST_CONCEPTS: &str = concat!(
    "Use first to discover what an OKF bundle contains: lists every concept (a non-reserved .md file with a canonical id) with its card: id, path, type, title, description, tags, status, trust tier, staleness, generated_at, source count, computation summary and legacy fallbacks, plus the bundle's version resolution. Read-only; never writes, never opens .okf/. ",
    "Use read_concept instead for one concept's bytes and full projection, validate_bundle for conformance findings. ",
    "Inputs: bundle_path (absolute path of the bundle root), optional temporal_profile (\"date-3fcbb9f\" default or \"instant-0b87c52\") and as_of (YYYY-MM-DD under the date profile, an offset datetime under the instant profile; without it staleness is null, the wall clock is never used). ",
    "Limits: at most 10,000 concepts (more gives resource_limit; use a smaller bundle). ",
    "A concept whose document cannot be parsed never makes this tool fail: its entry has parse_error set (invalid_encoding, unterminated_frontmatter or invalid_frontmatter) and every other member null, empty or false; repair it with write_concept. ",
    "Errors:",
    input_errors!(),
    retryable_note!(),
    " Next step after success: read_concept on the concepts of interest, or preview_concept_patch to change metadata."
);

/// `read_concept` (spec/surface.md §12.4).
pub const READ_CONCEPT: &str = concat!(
    "Use to inspect one concept before reviewing or changing it: returns the exact file bytes as text content and, structured, the id, path, version resolution, frontmatter_yaml (verbatim), body (verbatim), a typed projection (type, title, tags, sources, attributions, usage window, generated, verified events, trust, status, stale_after, attested computation) and legacy fallbacks. Read-only. ",
    "Use list_concepts instead to find ids, validate_bundle for findings across the bundle. ",
    "Inputs: bundle_path, concept_id (bundle-relative id without .md, e.g. tables/orders), optional temporal_profile. ",
    "Limits: concept_id at most 4096 bytes; the bundle limits of every tool. ",
    "Errors: concept_not_found (no concept with that id: find a current id with list_concepts); operation_rejected when the requested document cannot be parsed (the text content lists the findings; repair it with write_concept).",
    input_errors!(),
    retryable_note!(),
    " Next step after success: preview_concept_patch for a bounded metadata change, or write_concept to replace the whole concept after review."
);

/// `validate_bundle` (spec/surface.md §12.5, §13.2).
pub const VALIDATE_BUNDLE: &str = concat!(
    "Use to check a bundle against OKF: runs the validator and returns scanned_files, conformance {conformant, errors}, guidance {warnings, info} and diagnostics with stable codes sorted by file, code and message. A non-conformant bundle is a successful result (isError false); only ERROR findings make it non-conformant. Read-only. ",
    "Use list_concepts or read_concept instead to inspect content. ",
    "Inputs: bundle_path; optional strict, check_links, check_orphans (booleans, default false), target_version (auto, 0.1 or 0.2; auto never asserts a version), temporal_profile and as_of (as for list_concepts). ",
    "Limits: at most 10,000 diagnostics; the bundle limits of every tool. ",
    "Errors:",
    input_errors!(),
    retryable_note!(),
    " Next step after success: fix ERROR findings with preview_concept_patch or write_concept, then validate again; after a temporal upgrade validate with temporal_profile \"instant-0b87c52\"."
);

/// `preview_concept_patch` (spec/concept-patch.md §5.1, §6.1).
pub const PREVIEW_CONCEPT_PATCH: &str = concat!(
    "Use to rehearse a bounded change of concept metadata: an ordered list of desired-state operations (set_generated, ensure_verification, remove_verification, put_source, remove_source, set_usage_window, set_lifecycle, put_attested_computation, set_bundle_version). Builds the plan in memory, validates the staged bundle strictly against OKF 0.2 and writes nothing. ",
    "Use apply_concept_patch afterwards to commit the reviewed plan; use write_concept only to replace a whole concept. ",
    "Returns status, base_revision, result_revision, plan_digest, a unified diff (at most 1 MiB; diff_truncated says when it was cut), affected_paths, diagnostics and unknown_preserved. ",
    "Statuses: applicable (review the diff, then apply with the same actor, temporal_profile and operations plus expected_revision = base_revision and expected_plan_digest = plan_digest, unchanged); noop (nothing to change; nothing to apply); rejected (the ERROR diagnostics say why, e.g. missing_concept, ambiguous_presentation, staged_validation_failed; fix the operations and preview again; a rejected plan_digest cannot be applied usefully). ",
    "Limits: 1 to 256 operations, actor 1 to 256 bytes, text fields at most 4096 bytes, inline_computation at most 1 MiB, arguments at most 16 MiB. ",
    "Errors: invalid_request for per-operation domain faults (message operations[i]: reason).",
    input_errors!(),
    retryable_note!(),
    " A preview is not authorisation: show the diff to the user before applying. Next step after success: apply_concept_patch with the values above once the user approves."
);

/// `apply_concept_patch` (spec/concept-patch.md §5.2, §6.2).
pub const APPLY_CONCEPT_PATCH: &str = concat!(
    "Use to commit a patch the user approved after preview_concept_patch, its paired preview: pass the identical bundle_path, actor, temporal_profile and operations plus expected_revision (the preview's base_revision) and expected_plan_digest (the preview's plan_digest), both unchanged. The plan is rebuilt and must match; the commit is atomic and compare-and-swap. There is no dry-run or mode switch: rehearse with preview_concept_patch. Use write_concept only for whole-concept replacement. ",
    "Returns status, base_revision, result_revision, plan_digest and changed_paths. ",
    "Statuses: applied (committed, or answered from the stored receipt with one receipt_replayed diagnostic; next read_concept or validate_bundle to confirm); noop (nothing to change); rejected (ERROR diagnostics say why; fix the operations and preview again). ",
    "Errors: revision_conflict (retryable: the bundle changed and no matching receipt exists; run preview_concept_patch again, review, apply the new values); plan_mismatch (the digest does not match the rebuilt plan or the arguments changed; preview again and pass its digest unchanged); idempotency_conflict (another request already committed under this plan; preview again); invalid_revision (use the exact base_revision of a fresh preview); operation_cancelled (retryable: outcome unknown, follow the replay protocol below); operation_rejected (storage fault or blocked publication: the recovery_step names the file to restore or delete).",
    input_errors!(),
    retryable_note!(),
    replay_protocol!(),
    " Limits: as preview_concept_patch."
);

/// `write_concept` (spec/concept-patch.md §10).
pub const WRITE_CONCEPT: &str = concat!(
    "Compatibility tool: replaces one whole concept file (creating it if absent) with the given frontmatter (YAML text without --- fences, written verbatim) and Markdown body. There is no preview pair and no dry-run: review the current content with read_concept first, and prefer preview_concept_patch / apply_concept_patch for bounded metadata changes. Also the repair for a concept that cannot be parsed. ",
    "The server derives the change id from the content; pass no revision, digest or idempotency token. The staged bundle is validated strictly (links and orphans included); only errors the write introduces block it. ",
    "Returns {status: \"success\", path, diagnostics} with diagnostics {severity, message, file?}, each message starting with its code. An identical replacement also answers success without writing. ",
    "Limits: frontmatter at most 1 MiB, body at most 16 MiB, the written file at most 16 MiB, concept_id at most 4096 bytes. ",
    "Errors: operation_rejected when validation blocks the write (nothing written; the text content lists the findings; fix the content and call again); invalid_request for malformed frontmatter (check the YAML syntax and remove aliases) or a target that is a directory; revision_conflict (retryable: the bundle kept changing; read the concept again and repeat with reviewed content); idempotency_conflict and plan_mismatch (a stored result does not match this request; read the concept and decide again); operation_cancelled (retryable: outcome unknown, follow the replay protocol below).",
    input_errors!(),
    retryable_note!(),
    replay_protocol!(),
    " Next step after success: read_concept or validate_bundle to confirm."
);

/// The description of a Phase-1 tool by name.
#[must_use]
pub fn for_tool(tool: &str) -> Option<&'static str> {
    Some(match tool {
        "list_concepts" => LIST_CONCEPTS,
        "read_concept" => READ_CONCEPT,
        "validate_bundle" => VALIDATE_BUNDLE,
        "preview_concept_patch" => PREVIEW_CONCEPT_PATCH,
        "apply_concept_patch" => APPLY_CONCEPT_PATCH,
        "write_concept" => WRITE_CONCEPT,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_description_states_the_shared_rules() {
        for t in crate::wire::schema_gen::PHASE1_TOOLS {
            let d = for_tool(t).expect("description");
            assert!(d.contains("retryable: true means"), "{t}");
            assert!(
                d.contains("Next step") || d.contains("next read_concept"),
                "{t}"
            );
            assert!(d.contains("Limits"), "{t}");
            assert!(d.contains("schema_validation"), "{t}");
        }
        for t in ["apply_concept_patch", "write_concept"] {
            let d = for_tool(t).expect("description");
            assert!(d.contains("not authorisation"), "{t}");
            assert!(d.contains("repeat the exact same arguments"), "{t}");
        }
        assert!(APPLY_CONCEPT_PATCH.contains("preview_concept_patch, its paired preview"));
    }
}
