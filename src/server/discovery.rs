//! What a host learns before its first call (spec/surface.md §18.6): the `initialize`
//! `instructions`, the server's `title`, and the MCP prompts for the common jobs.
//!
//! The instructions carry, once, what every tool shares (the preview → review → apply →
//! replay protocol, `retryable`, the temporal profiles, the input rules and limits, and how
//! the host scopes `bundle_path` per protocol version, spec/surface.md §18.4 rule 2b), so the
//! tool descriptions can stay short (AUT-08).

use rmcp::model::{GetPromptResult, Prompt, PromptArgument, PromptMessage, Role};

/// `serverInfo.title` (spec/surface.md §18.6 rule 2).
pub const SERVER_TITLE: &str = "OKF knowledge bundle";

/// The `instructions` of `initialize` (spec/surface.md §18.6 rule 1).
pub const INSTRUCTIONS: &str = "\
okf-mcp reads and safely changes an OKF knowledge bundle: a directory of Markdown files with YAML frontmatter. bundle_path is the absolute path of the bundle root (no trailing /, no . or .. components, no symlinks); a concept_id is the bundle-relative path without .md, e.g. tables/orders.

Protocol of every change: 1. preview (preview_concept_patch, preview_v02_migration, preview_temporal_upgrade) writes nothing and returns the plan: its base revision, a plan digest, and a diff (the temporal upgrade lists the dates it will change). 2. Show the change to the user: a preview or a read is not authorisation. 3. Apply with the same arguments plus what the preview returned, unchanged, under the names the apply tool's schema and description give (apply_concept_patch: expected_revision = base_revision, never result_revision, and expected_plan_digest = plan_digest; apply_v02_migration: expected_source = source, base_revision, expected_plan_digest = plan_digest, and accept_proposals when the preview accepted proposals by their proposals_digest; apply_temporal_upgrade: base_revision, plan_digest); never build or edit a digest. 4. If an apply times out or answers operation_cancelled, the outcome is unknown: repeat the exact same call. A committed apply answers again from its stored receipt (receipt_replayed) and never writes twice; revision_conflict or source_conflict means the bundle moved and nothing was committed: preview again. The apply tools and write_concept say idempotentHint false on purpose: an exact repeat is safe and never writes twice, but a client must not retry them blindly, only after an unknown outcome (step 4) and with the identical arguments. write_concept replaces a whole concept and has no preview.

Finding: search_sections ranks the sections holding every word of a query (locator path#Lstart-Lend); search_concepts matches ids, titles, descriptions, tags and bodies; get_neighbors follows body links and index.md listings (direction in: backlinks); get_semantic_graph exports JSON-LD, whole or around concept_ids. They accept the list_concepts filters; a list with next_cursor continues with cursor = next_cursor and the same other arguments.

Results: the first text item is the JSON result; errors and previews add a readable second item. retryable: true means the situation can clear, not that the same call will succeed: follow the recovery_step diagnostic. An optional top-level argument passed as null is treated as absent (INFO notice null_argument_ignored); leave it out instead. Input errors change nothing: schema_validation and unknown_parameter name the field at fault; invalid_request covers bad JSON, duplicate keys, non-canonical ids and bundle_path rules; resource_limit means narrow the request (bundle limits: 10,000 files, 16 MiB per file, 64 MiB in total; each tool's argument limits are in its schema and errors).

Temporal profiles: temporal_profile defaults to auto, the profile the bundle's own values show (echoed as temporal_profile with temporal_profile_source); date-3fcbb9f uses calendar dates YYYY-MM-DD, instant-0b87c52 RFC 3339 datetimes with an explicit offset. Pass as_of in the bundle's profile; the wall clock is never used.

Scope: the host bounds bundle_path with okf-mcp serve --root (the workspace directory); a path outside it is refused as invalid_request (bundle_path is outside the allowed roots). Under protocol 2026-07-28 that is the only scoping: MCP roots are deprecated there and never asked. Under 2025-11-25 and earlier, a client that advertises roots is asked roots/list and its file:// roots are intersected with --root; a first empty list leaves --root alone in force (every path without it) and every answer then carries the WARN notice roots_empty; an empty list after a non-empty one, an error answer, no answer within 5 s, or no usable file:// directory allows nothing.

Actors: actor names who asks (1 to 256 bytes); values written into documents (generated.by, verified by) are human:<name>, process:<name> or producer/version, e.g. process:nightly.";

/// One prompt of spec/surface.md §18.6 rule 2: name, title, description, arguments
/// (name, description), and the text template with `{argument}` placeholders.
struct PromptSpec {
    name: &'static str,
    title: &'static str,
    description: &'static str,
    arguments: &'static [(&'static str, &'static str)],
    template: &'static str,
}

const PROMPTS: [PromptSpec; 4] = [
    PromptSpec {
        name: "review_stale_concepts",
        title: "Review stale concepts",
        description: "Find the concepts of a bundle that are stale at a date and propose what to do with each.",
        arguments: &[
            ("bundle_path", "Absolute path of the bundle root"),
            ("as_of", "The date (or instant) to judge staleness at, in the bundle's profile"),
        ],
        template: "Review the stale concepts of the OKF bundle at {bundle_path} as of {as_of}. \
1. Call list_concepts with bundle_path, as_of and stale: true (follow next_cursor until it is null). \
2. For each stale concept call read_concept and judge whether its content still holds. \
3. Propose, per concept, one of: re-verify (ensure_verification), move stale_after (set_lifecycle with stale_after only), or deprecate (set_lifecycle with status deprecated only). \
4. Call preview_concept_patch with an actor naming you (e.g. agent/1.0), show me the diff and wait for my approval before apply_concept_patch.",
    },
    PromptSpec {
        name: "fix_stale_concepts_about",
        title: "Find and fix stale concepts about a topic",
        description: "Search a bundle for the concepts about a topic that are stale at a date, read the passages, and propose what to do with each.",
        arguments: &[
            ("bundle_path", "Absolute path of the bundle root"),
            ("topic", "Words the concepts are about, e.g. orders revenue"),
            ("as_of", "The date (or instant) to judge staleness at, in the bundle's profile"),
        ],
        template: "Find and fix the stale concepts about {topic} in the OKF bundle at {bundle_path} as of {as_of}. \
1. Call search_concepts with bundle_path, query {topic}, match all_terms, as_of and stale: true; if it finds nothing, call search_sections with query {topic} and the same as_of and stale, and take the concept_id of each hit (follow next_cursor until it is null). \
2. For each concept call read_concept (and get_neighbors with direction in to see what depends on it) and judge whether its content still holds. \
3. Propose, per concept, one of: re-verify (ensure_verification), move stale_after (set_lifecycle with stale_after only), or deprecate (set_lifecycle with status deprecated only). \
4. Call preview_concept_patch with an actor naming you (e.g. agent/1.0), show me the diff and wait for my approval before apply_concept_patch.",
    },
    PromptSpec {
        name: "verify_concept",
        title: "Verify a concept",
        description: "Record that a concept was checked, after reading it and previewing the change.",
        arguments: &[
            ("bundle_path", "Absolute path of the bundle root"),
            ("concept_id", "The concept id, e.g. tables/orders"),
            ("verified_by", "Who verified it: human:<name>, process:<name> or producer/version"),
        ],
        template: "Verify the concept {concept_id} of the OKF bundle at {bundle_path} on behalf of {verified_by}. \
1. Call read_concept and summarise what it claims and its sources. \
2. Call preview_concept_patch with an actor naming you (e.g. agent/1.0) and one ensure_verification operation (verification.by = {verified_by}, verification.at = the current time as an RFC 3339 datetime with an offset, e.g. 2026-01-02T03:04:05Z). \
3. Show me the diff; after I approve, call apply_concept_patch with the same arguments plus expected_revision = base_revision and expected_plan_digest = plan_digest.",
    },
    PromptSpec {
        name: "migrate_bundle_to_0_2",
        title: "Migrate a bundle to OKF 0.2",
        description: "Migrate an OKF 0.1 bundle to 0.2: preview, review the citation proposals, apply, validate.",
        arguments: &[("bundle_path", "Absolute path of the bundle root")],
        template: "Migrate the OKF bundle at {bundle_path} from 0.1 to 0.2. \
1. Call preview_v02_migration with bundle_path, timestamp_policy preserve, citation_mappings [] and generated_by naming you (e.g. agent/1.0); use from 0.1 when the root index.md declares no version. \
2. Show me totals, diagnostic_counts, the blocked documents and proposed_citation_mappings: they are unreviewed suggestions, a starting point to review, never already reviewed; entries marked needs_review came from prose. \
3. After I accept the set as shown, preview again with the same arguments plus accept_proposals = proposals_digest (and accept_needs_review true only if I accept those entries too); for documents I correct, pass their citation_mappings items instead. \
4. Show me the diff; after I approve, call apply_v02_migration with the same arguments plus expected_source = source, base_revision and expected_plan_digest = plan_digest, unchanged (when the status is noop because the bundle is already 0.2, pass expected_source only). If the answer is lost, repeat the exact same call. \
5. Call validate_bundle with strict true and target_version 0.2 and report the result.",
    },
];

/// The prompts of `prompts/list`.
#[must_use]
pub fn prompts() -> Vec<Prompt> {
    PROMPTS
        .iter()
        .map(|p| {
            let args = p
                .arguments
                .iter()
                .map(|(n, d)| {
                    PromptArgument::new(*n)
                        .with_description(*d)
                        .with_required(true)
                })
                .collect();
            Prompt::new(p.name, Some(p.description), Some(args)).with_title(p.title)
        })
        .collect()
}

/// Why `prompts/get` fails: an unknown prompt, or a required argument that is missing or not
/// a string (named).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PromptError {
    /// No prompt has this name.
    Unknown,
    /// The named argument is missing, empty or not a string.
    Argument(&'static str),
}

/// `prompts/get`: the prompt's template with its arguments filled in, as one user message.
///
/// # Errors
/// [`PromptError`] for an unknown prompt or a missing argument. Argument values are placed in
/// the text verbatim and never interpreted.
pub fn get(
    name: &str,
    arguments: Option<&serde_json::Map<String, serde_json::Value>>,
) -> Result<GetPromptResult, PromptError> {
    let p = PROMPTS
        .iter()
        .find(|p| p.name == name)
        .ok_or(PromptError::Unknown)?;
    let mut text = p.template.to_owned();
    for (arg, _) in p.arguments {
        let value = arguments
            .and_then(|m| m.get(*arg))
            .and_then(serde_json::Value::as_str)
            .filter(|v| !v.is_empty())
            .ok_or(PromptError::Argument(arg))?;
        text = text.replace(&format!("{{{arg}}}"), value);
    }
    Ok(
        GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)])
            .with_description(p.description),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_prompt_names_only_registered_tools_and_fills_every_placeholder() {
        for p in &PROMPTS {
            let args: serde_json::Map<String, serde_json::Value> = p
                .arguments
                .iter()
                .map(|(n, _)| ((*n).to_owned(), serde_json::Value::String(format!("<{n}>"))))
                .collect();
            let r = get(p.name, Some(&args)).expect("prompt");
            let m = serde_json::to_value(&r.messages).expect("json");
            let text = m[0]["content"]["text"].as_str().expect("one text message");
            assert!(!text.contains('{'), "{}: a placeholder is left", p.name);
            for (n, _) in p.arguments {
                assert!(text.contains(&format!("<{n}>")), "{}: {n}", p.name);
            }
            for word in p
                .template
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            {
                if word.contains('_')
                    && (word.starts_with("preview_")
                        || word.starts_with("apply_")
                        || word.ends_with("_concept")
                        || word.ends_with("_concepts")
                        || word.ends_with("_bundle"))
                    && !p.arguments.iter().any(|(n, _)| *n == word)
                    && word != p.name
                {
                    assert!(
                        crate::wire::registry::find(word).is_some(),
                        "{}: {word}",
                        p.name
                    );
                }
            }
            assert_eq!(
                get(p.name, None),
                Err(PromptError::Argument(p.arguments[0].0))
            );
        }
        assert_eq!(get("nope", None), Err(PromptError::Unknown));
    }

    #[test]
    fn instructions_name_only_registered_tools() {
        for word in INSTRUCTIONS.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')) {
            if word.starts_with("preview_")
                || word.starts_with("apply_")
                || word.ends_with("_concept")
            {
                assert!(crate::wire::registry::find(word).is_some(), "{word}");
            }
        }
    }
}
