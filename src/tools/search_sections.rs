//! `search_sections` (spec/surface.md §14.4, §14.5 rule 3, §14.6 rules 1–3, 5, 6, 9).
//!
//! Pure checks first (temporal profile, `as_of`, filters, query terms, cursor), then
//! `bundle_path`, one capture, and the BM25 ranking of every concept's sections
//! ([`crate::view::rank`]). A concept document that cannot be parsed is not searched; the
//! answer then carries the `WARN` notice `documents_not_searched`.

use crate::envelope::{Diagnostic, Severity, ToolError};
use crate::okf::project;
use crate::tools::common::{filters_arg, insert_profile, str_arg, ReadProfile};
use crate::tools::def::checked_in;
use crate::tools::paging::{self, Cursors, MAX_CURSOR};
use crate::tools::read;
use crate::tools::schema_parts::{
    as_of_prop, closed, count, filter_props, input_root, nullable_string, output_root,
    profile_branches, r, string_1_max, string_array, temporal_profile_prop, with, SchemaRoot,
    EXAMPLE_BUNDLE_PATH,
};
use crate::tools::{Ctx, Success, ToolSpec};
use crate::view::index::{DocIndex, IndexKey, IndexMemo, MAX_INDEXED_DOC_BYTES, MAX_INDEX_BYTES};
use crate::view::rank::{self, SearchDoc};
use crate::view::sections;
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock};

/// The section indexes of a warm server, by document content and id (spec/store.md §17).
static INDEXES: LazyLock<IndexMemo> = LazyLock::new(|| IndexMemo::new(MAX_INDEX_BYTES));

/// The documents one step of [`index_later`] indexes before keeping them.
const INDEX_CHUNK: usize = 256;

/// Whether a thread is building section indexes ([`index_later`]).
static INDEXING: AtomicBool = AtomicBool::new(false);

/// Builds, on a thread of its own, the section indexes of the searched documents that have
/// none, and keeps them for the next searches (a warm server, spec/store.md §17): the search
/// that finds them missing answers unindexed, at the cost of a cold search, instead of
/// waiting for them. At most one such thread runs; documents left out by a busy one are
/// indexed after a later search. Documents over [`MAX_INDEXED_DOC_BYTES`] are never indexed;
/// the work stops at the first chunk of [`INDEX_CHUNK`] indexes the memo's bound refuses
/// (a bundle whose indexes pass it costs one such chunk per search).
fn index_later(
    concepts: &[(&str, &crate::okf::bundle::Doc<'_>)],
    docs: &[SearchDoc<'_>],
    doc_of: &[usize],
    indexes: &[Option<Arc<DocIndex>>],
) {
    let missing: Vec<usize> = (0..docs.len())
        .filter(|&d| {
            indexes[d].is_none()
                && usize::try_from(concepts[doc_of[d]].1.file.size)
                    .is_ok_and(|n| n <= MAX_INDEXED_DOC_BYTES)
        })
        .collect();
    if missing.is_empty() || INDEXING.swap(true, Ordering::AcqRel) {
        return;
    }
    // Owned copies: the ids, titles and body ranges; the texts are the capture's shared bytes.
    let work: Vec<Unindexed> = missing
        .iter()
        .map(|&d| {
            let file = concepts[doc_of[d]].1.file;
            (
                (file.digest, Box::from(docs[d].id)),
                file.shared_bytes(),
                docs[d].body.clone(),
                docs[d].title.map(Box::from),
            )
        })
        .collect();
    let spawned = std::thread::Builder::new()
        .name("okf-index".into())
        .spawn(move || {
            let _done = Done;
            // In chunks, each kept before the next is built: the memory of the work beyond
            // the memo's bound is one chunk; a chunk the memo cannot hold ends it.
            let mut n = 0usize;
            for chunk in work.chunks(INDEX_CHUNK) {
                let built: Vec<(IndexKey, Arc<DocIndex>)> =
                    crate::okf::par::map(chunk, |(key, bytes, body, title)| {
                        let text = std::str::from_utf8(bytes).ok()?;
                        let doc = SearchDoc {
                            id: &key.1,
                            text,
                            body: body.clone(),
                            title: title.as_deref(),
                        };
                        Some((key.clone(), Arc::new(DocIndex::build(&doc))))
                    })
                    .into_iter()
                    .flatten()
                    .collect();
                n += built.len();
                if INDEXES.keep(built) > 0 {
                    break;
                }
            }
            let (held, bytes) = INDEXES.usage();
            // Counts only: never ids or document text (spec/surface.md §16).
            tracing::debug!(built = n, held, bytes, "section indexes");
        });
    if spawned.is_err() {
        INDEXING.store(false, Ordering::Release);
    }
}

/// The text of a hit's document: its [`SearchDoc`]'s, or for an indexed document (whose
/// search needs no text) the file's bytes, which parsed when the index was built and so are
/// UTF-8; the text an unindexed search would have split (the whole file, spec/store.md §3.4).
fn hit_text<'a>(d: &SearchDoc<'a>, file: &'a crate::okf::capture::CapturedFile) -> &'a str {
    if d.text.is_empty() {
        std::str::from_utf8(file.bytes()).unwrap_or_default()
    } else {
        d.text
    }
}

/// A document to index: its key, its bytes, its body range and its title.
type Unindexed = (IndexKey, Arc<Vec<u8>>, Range<usize>, Option<Box<str>>);

/// Clears [`INDEXING`] when the indexing thread ends, also by unwinding.
struct Done;

impl Drop for Done {
    fn drop(&mut self) {
        INDEXING.store(false, Ordering::Release);
    }
}

/// `search_sections` as registered (spec/surface.md §2, §14.4).
pub const TOOL: ToolSpec = ToolSpec {
    name: "search_sections",
    title: "Search sections (BM25)",
    read_only: true,
    description: DESCRIPTION,
    input_schema: checked_in!("search_sections", "input"),
    output_schema: checked_in!("search_sections", "output"),
    build_input_schema: input_schema,
    build_output_schema: output_schema,
    aliases: &[],
    shared_schema: None,
    argument_examples: &[],
    run,
};

/// The tool description (spec/surface.md §17.5).
const DESCRIPTION: &str = "Use to find where a topic is written: sections (the text between headings) ranked by BM25, headings weighing 3 and the concept title 2, that hold every word of the query, case- and accent-form-insensitive. Each hit gives concept_id, heading, locator path#Lstart-Lend, content_sha256, a snippet and the score. More pages: pass next_cursor as cursor. Next: read_concept on a hit; search_concepts to match ids and titles.";

/// Most distinct query terms (spec/surface.md §14.4, §11).
pub const MAX_TERMS: usize = 32;
/// `limit` when absent, and its maximum (spec/surface.md §11).
pub const DEFAULT_LIMIT: u64 = 20;
/// Largest `limit`.
pub const MAX_LIMIT: u64 = 100;

const CURSORS: Cursors = Cursors {
    prefix: "ss1",
    tool: "search_sections",
    verb: "search",
};

/// Code of the notice for concept documents that could not be parsed and were not searched.
pub const DOCUMENTS_NOT_SEARCHED: &str = "documents_not_searched";

/// The sort key of a hit in cursor form: score bits (big endian), `line_start`, concept id.
fn key(score: f64, line_start: usize, id: &str) -> Vec<u8> {
    let mut k = score.to_bits().to_be_bytes().to_vec();
    k.extend((line_start as u64).to_be_bytes());
    k.extend(id.as_bytes());
    k
}

/// Longest `heading` of a hit, in characters: a setext heading's paragraph can be long, and the
/// locator and digest say exactly where the section is.
pub const MAX_HEADING: usize = 512;

/// Whether `k` has the shape of a sort key of [`key`]: score bits, a line, a UTF-8 id.
fn key_ok(k: &[u8]) -> bool {
    k.len() > 16 && std::str::from_utf8(&k[16..]).is_ok()
}

/// Whether the hit `(score, id, line_start)` comes after the cursor key `k`.
fn is_after(score: f64, id: &str, line_start: usize, k: &[u8]) -> bool {
    let (Some(s), Some(l)) = (k.get(..8), k.get(8..16)) else {
        return true;
    };
    let mut sb = [0u8; 8];
    sb.copy_from_slice(s);
    let mut lb = [0u8; 8];
    lb.copy_from_slice(l);
    let last_id = String::from_utf8_lossy(&k[16..]);
    let last_line = usize::try_from(u64::from_be_bytes(lb)).unwrap_or(usize::MAX);
    rank::order(
        (score, id, line_start),
        (f64::from_bits(u64::from_be_bytes(sb)), &last_id, last_line),
    )
    .is_gt()
}

/// The folded, distinct terms of `query` (spec/surface.md §14.6 rule 1), checked.
///
/// # Errors
/// `resource_limit` over 32 distinct terms; `invalid_request` for a query without a term.
pub fn query_terms(query: &str) -> Result<Vec<String>, ToolError> {
    let terms = rank::query_terms(query);
    if terms.len() > MAX_TERMS {
        return Err(ToolError::new(
            crate::envelope::codes::RESOURCE_LIMIT,
            "query has more than 32 distinct terms",
        )
        .with_diagnostic(Diagnostic::recovery(
            "query",
            "Use at most 32 distinct words; the fewer, the more sections hold them all.",
        )));
    }
    if terms.is_empty() {
        return Err(ToolError::invalid_request(
            "query holds no term: search_sections matches words (runs of letters, marks and digits)",
        )
        .with_diagnostic(Diagnostic::recovery(
            "query",
            "Put at least one word in query, or use search_concepts to match any text of ids, titles and bodies.",
        )));
    }
    Ok(terms)
}

/// Runs the tool on schema-valid arguments.
///
/// # Errors
/// `invalid_request` (temporal profile, `as_of`, `stale` without `as_of`, a query without a
/// term, a malformed or stale `cursor`, `bundle_path`, symlinks), `resource_limit` (over 32
/// terms, capture and YAML limits), `invalid_yaml_graph`, `operation_cancelled`.
pub fn run(args: Value, ctx: &Ctx) -> Result<Success, ToolError> {
    let temporal = ReadProfile::from_args(&args)?;
    let filters = filters_arg(&args)?;
    let query = str_arg(&args, "query").to_owned();
    let terms = query_terms(&query)?;
    let limit = args
        .get("limit")
        .and_then(Value::as_u64)
        .unwrap_or(DEFAULT_LIMIT)
        .clamp(1, MAX_LIMIT);
    let limit = usize::try_from(limit).unwrap_or(1);
    let inputs = CURSORS.inputs(&args);
    let after = match args.get("cursor").and_then(Value::as_str) {
        Some(c) => Some(CURSORS.decode_checked(c, key_ok)?),
        None => None,
    };
    let capture = read::open(str_arg(&args, "bundle_path"), ctx)?;
    if let Some(a) = &after {
        CURSORS.check(a, &capture.revision, &inputs)?;
    }
    let bundle = read::parse(&capture, None)?;
    let (resolution, as_of) = temporal.resolve(&capture)?;
    let profile = resolution.profile;
    ctx.cancel.check()?;
    let concepts: Vec<_> = bundle.concepts().collect();
    // A warm server keeps each document's section index by content (spec/store.md §17).
    let warm = crate::store::capture::is_warm();
    let held = if warm {
        INDEXES.begin(
            &concepts
                .iter()
                .map(|(id, doc)| (doc.file.digest, Box::from(*id)))
                .collect::<Vec<IndexKey>>(),
        )
    } else {
        Vec::new()
    };
    let mut skipped = 0usize;
    let mut docs: Vec<SearchDoc<'_>> = Vec::with_capacity(concepts.len());
    let mut doc_of: Vec<usize> = Vec::with_capacity(concepts.len());
    let mut indexes: Vec<Option<Arc<DocIndex>>> = Vec::with_capacity(concepts.len());
    for (k, (id, doc)) in concepts.iter().enumerate() {
        if let Some(ix) = held.get(k).and_then(Option::as_ref) {
            // The text is needed only to render a hit ([`hit_text`]).
            docs.push(ix.search_doc(id, ""));
            indexes.push(Some(Arc::clone(ix)));
            doc_of.push(k);
            continue;
        }
        let Ok(p) = doc.parsed() else {
            skipped += 1;
            continue;
        };
        docs.push(SearchDoc {
            id,
            text: p.split.text,
            body: p.split.body.clone(),
            title: project::non_empty_str(project::field(p.root(), "title")),
        });
        indexes.push(None);
        doc_of.push(k);
    }
    let (hits, _) = if warm {
        let out = rank::rank_indexed(&docs, &indexes, &terms);
        index_later(&concepts, &docs, &doc_of, &indexes);
        out
    } else {
        rank::rank(&docs, &terms)
    };
    ctx.cancel.check()?;
    if skipped > 0 {
        crate::notices::push(Diagnostic::new(
            DOCUMENTS_NOT_SEARCHED,
            Severity::Warn,
            format!("{skipped} concept document(s) cannot be parsed and were not searched; validate_bundle names them"),
        ));
    }
    let mut cards: HashMap<usize, Option<Value>> = HashMap::new();
    let mut card_of = |d: usize| -> Option<Value> {
        cards
            .entry(d)
            .or_insert_with(|| {
                let (id, doc) = concepts[doc_of[d]];
                project::card(id, doc, profile, as_of.as_deref())
            })
            .clone()
    };
    let kept: Vec<rank::Hit> = if filters.is_empty() {
        hits
    } else {
        hits.into_iter()
            .filter(|h| filters.matches(card_of(h.doc).as_ref()))
            .collect()
    };
    let total = kept.len();
    let (page, more) = paging::page(
        kept,
        after.as_ref().map(|a| a.key.as_slice()),
        limit,
        |h, k| is_after(h.score, docs[h.doc].id, h.section.line_start, k),
    );
    let rendered: Vec<(Vec<u8>, Value)> = page
        .iter()
        .map(|h| {
            let d = &docs[h.doc];
            let text = hit_text(d, concepts[doc_of[h.doc]].1.file);
            let path = &concepts[doc_of[h.doc]].1.file.path;
            let s = &h.section;
            let bytes = text.get(s.bytes.clone()).unwrap_or_default();
            let heading: String = s.heading.chars().take(MAX_HEADING).collect();
            (
                key(h.score, s.line_start, d.id),
                json!({
                    "concept_id": d.id,
                    "path": path,
                    "heading": heading,
                    "locator": format!("{path}#L{}-L{}", s.line_start, s.line_end),
                    "line_start": s.line_start,
                    "line_end": s.line_end,
                    "content_sha256": crate::digest::hex(&crate::digest::sha256(bytes.as_bytes())),
                    "snippet": sections::snippet(text, s, &terms),
                    "score": h.score,
                    "matched_terms": terms,
                }),
            )
        })
        .collect();
    let others = query.len() + terms.iter().map(String::len).sum::<usize>() * 2;
    let (kept, cut) = paging::fit(rendered, others);
    let more = more || cut;
    let next_cursor = match kept.last() {
        Some((k, _)) if more => Some(CURSORS.encode(&capture.revision, &inputs, k)),
        _ => None,
    };
    let hits: Vec<Value> = kept.into_iter().map(|(_, v)| v).collect();
    let mut m = Map::new();
    m.insert("query".into(), json!(query));
    m.insert("terms".into(), json!(terms));
    m.insert(
        "snapshot_revision".into(),
        json!(capture
            .revision
            .strip_prefix("sha256:")
            .unwrap_or(&capture.revision)),
    );
    m.insert("total".into(), json!(total));
    m.insert("truncated".into(), json!(more));
    m.insert("hits".into(), Value::Array(hits));
    m.insert("next_cursor".into(), json!(next_cursor));
    m.insert("as_of".into(), json!(as_of));
    insert_profile(&mut m, &resolution);
    Ok(Success::json(Value::Object(m)))
}

// ---------------------------------------------------------------------------------------------
// Schemas (spec/surface.md §17): the generator of the checked-in files
// ---------------------------------------------------------------------------------------------

/// The `query` property of the search tools (spec/surface.md §11: 1..512 characters).
#[must_use]
pub fn query_prop(what: &str) -> Value {
    json!({"description": what, "type": "string", "minLength": 1, "maxLength": 512, "pattern": "\\S"})
}

/// The `limit` property of the Phase-4 tools (spec/surface.md §11: 1..100, default 20).
#[must_use]
pub fn limit_prop(what: &str) -> Value {
    json!({"description": format!("Most {what} in this page (default 20)."), "type": "integer", "minimum": 1, "maximum": MAX_LIMIT})
}

/// The `cursor` property of the Phase-4 tools (spec/surface.md §14.6 rule 6).
#[must_use]
pub fn cursor_prop() -> Value {
    json!({"description": "The next_cursor of the previous page, unchanged, with the same other arguments; leave out for the first page. Bound to the bundle's revision.", "type": "string", "minLength": 1, "maxLength": MAX_CURSOR})
}

/// The input schema root (spec/surface.md §2, §14.4, §14.6).
fn input_schema() -> SchemaRoot {
    let mut m = input_root(
        "search_sections",
        "Arguments of search_sections (spec/surface.md §2, §14.4, §14.6).",
        &["bundle_path", "query"],
        [
            ("bundle_path", r("bundle_path")),
            (
                "query",
                query_prop("Words to find; every word must occur in a section, its heading or its concept's title (AND). Case, Unicode case folding and NFC forms do not matter; at most 32 distinct words."),
            ),
            ("limit", limit_prop("hits")),
            ("cursor", cursor_prop()),
            ("temporal_profile", temporal_profile_prop()),
            ("as_of", as_of_prop()),
        ]
        .into_iter()
        .chain(filter_props("hits of concepts"))
        .collect(),
    );
    profile_branches(&mut m, true, false);
    m.insert(
        "examples".into(),
        json!([{"bundle_path": EXAMPLE_BUNDLE_PATH, "query": "order revenue", "limit": 10}]),
    );
    SchemaRoot::new(m)
}

/// The output schema root (spec/surface.md §14.4).
fn output_schema() -> SchemaRoot {
    let hit = closed(vec![
        ("concept_id", json!({"type": "string"})),
        ("path", r("bundle_relative_path")),
        (
            "heading",
            json!({"type": "string", "maxLength": MAX_HEADING, "description": "The section's heading text, cut to 512 characters; \"\" for the text before the first heading."}),
        ),
        ("locator", json!({"type": "string"})),
        ("line_start", json!({"type": "integer", "minimum": 1})),
        ("line_end", json!({"type": "integer", "minimum": 1})),
        (
            "content_sha256",
            json!({"type": "string", "pattern": "^[0-9a-f]{64}$"}),
        ),
        ("snippet", string_max_chars(512)),
        ("score", json!({"type": "number", "minimum": 0})),
        ("matched_terms", string_array(32)),
    ]);
    output_root(
        "search_sections",
        "Result of search_sections (spec/surface.md §14.4).",
        closed(vec![
            ("query", string_1_max(512)),
            ("terms", string_array(32)),
            (
                "snapshot_revision",
                json!({"type": "string", "pattern": "^[0-9a-f]{64}$"}),
            ),
            (
                "total",
                with(
                    count(),
                    "description",
                    json!("Hits after the filters, over all pages."),
                ),
            ),
            (
                "truncated",
                json!({"type": "boolean", "description": "Whether more hits follow this page (next_cursor is then set)."}),
            ),
            (
                "hits",
                json!({"type": "array", "maxItems": MAX_LIMIT, "items": hit}),
            ),
            (
                "next_cursor",
                with(
                    nullable_string(),
                    "description",
                    json!("Pass as cursor to get the next page; null on the last page."),
                ),
            ),
            ("as_of", nullable_string()),
            ("temporal_profile", r("temporal_profile_id")),
            ("temporal_profile_source", r("temporal_profile_source")),
        ]),
    )
}

fn string_max_chars(max: u64) -> Value {
    json!({"type": "string", "maxLength": max})
}
