//! The OKF validator (spec/surface.md §13.2, README R22, R40, R45).
//!
//! Runs on any [`Capture`] — a real capture or a staged overlay built with
//! [`Capture::from_files`] — with [`ValidationOptions`] `{strict, check_links, check_orphans,
//! spec_version, temporal_profile, as_of}` and returns typed [`Finding`]s sorted by
//! (file, code, message). Planners compare findings by (`file`, `code`). Pure: no I/O.
//!
//! Messages are fixed neutral sentences: they never contain frontmatter values, document text
//! or argument values; the finding's `file` names the document.

use crate::envelope::Severity;
use crate::okf::actor::is_document_actor;
use crate::okf::bundle::{
    parse_bundle, parse_bundle_visiting, parse_document, Bundle, BundleFault, Doc, ParseFault,
    Parsed,
};
use crate::okf::capture::{overlay_capture, Capture, CapturedFile};
use crate::okf::finding::Finding;
use crate::okf::grammar::DocClass;
use crate::okf::links::resolve_link;
use crate::okf::markdown;
use crate::okf::memo::{self, DocOptions};
use crate::okf::project::{
    self, field, non_blank_str, non_empty_str, non_negative_int, ATTESTED_COMPUTATION, STATUSES,
};
use crate::okf::temporal::{parse_date, parse_offset_datetime, Profile};
use crate::okf::version::{self, Declaration, Target, Version};
use crate::okf::yaml::{Node, Resolved};
use std::cmp::Ordering;
use std::collections::BTreeSet;
use std::sync::Arc;

/// Validator options (spec/surface.md §13.2).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ValidationOptions {
    /// Strict: the "strict ERROR, else WARN" rows are `ERROR`.
    pub strict: bool,
    /// Report `broken_link`.
    pub check_links: bool,
    /// Report `orphan_concept`.
    pub check_orphans: bool,
    /// The asserted version; `None` = `auto` (never asserts, README R45).
    pub spec_version: Option<Target>,
    pub temporal_profile: Profile,
    /// `as_of` already validated under `temporal_profile`; enables `stale_concept`.
    pub as_of: Option<String>,
}

/// The validator's result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    pub declaration: Declaration,
    /// The resolved version (explicit when `spec_version` is set).
    pub version: Version,
    /// Number of visible `.md` files.
    pub scanned_files: usize,
    /// Sorted by (file, code, message); deduplicated.
    pub findings: Vec<Finding>,
}

impl Report {
    /// Number of findings of `severity`.
    #[must_use]
    pub fn count(&self, severity: Severity) -> usize {
        self.findings
            .iter()
            .filter(|f| f.severity == severity)
            .count()
    }
    /// Whether no finding is an `ERROR`.
    #[must_use]
    pub fn conformant(&self) -> bool {
        self.count(Severity::Error) == 0
    }
}

/// Validates a capture or staged overlay.
///
/// # Errors
/// [`BundleFault`] when a document exceeds the YAML limits or has a broken YAML graph
/// (spec/store.md §3.4); those fail the calling tool.
pub fn validate(capture: &Capture, opts: &ValidationOptions) -> Result<Report, BundleFault> {
    let bundle = parse_for_validation(capture, opts)?;
    Ok(validate_bundle(&bundle, opts))
}

/// Parses `capture` for a validation under `opts`: [`parse_bundle`], except that the own
/// findings of every document parsed now are computed while its parse is at hand and
/// remembered ([`memo`]), and the parse is then dropped. The [`validate_bundle`] that follows
/// with the same `opts` takes them from the memo, so every document is parsed once and peak
/// memory holds the capture plus a couple of parses, not a parse of every document.
///
/// # Errors
/// As [`parse_bundle`].
pub fn parse_for_validation<'c>(
    capture: &'c Capture,
    opts: &ValidationOptions,
) -> Result<Bundle<'c>, BundleFault> {
    // The 0.2-only rows depend on the root declaration: read it first (a faulty root index
    // is reported by the bundle parse below, in path order).
    let v02 = match capture
        .get("index.md")
        .map(|f| (f, parse_document(f.bytes())))
    {
        Some((f, Ok(p))) => {
            let doc = Doc::new(f, DocClass::Reserved, p);
            let decl = version::declaration_of(Some(&doc));
            version::resolve(&decl, opts.spec_version).effective != Some("0.1")
        }
        Some((_, Err(_))) => true,
        None => version::resolve(&Declaration::Absent, opts.spec_version).effective != Some("0.1"),
    };
    let dopts = doc_options(opts, v02);
    let visit = |d: &Doc<'_>| doc_findings(opts, v02, d);
    let (bundle, found) = parse_bundle_visiting(capture, Some(&visit))?;
    for (i, f) in found {
        // Never remember what was computed from a spilled file's (absent) bytes.
        if let Some(d) = bundle.docs.get(i).filter(|d| d.file.is_resident()) {
            memo::remember_findings(&d.file.path, &d.file.digest, &dopts, f);
        }
    }
    Ok(bundle)
}

/// The [`crate::store::capture::Spill`] visit of a capture that a validation under `opts`
/// will read, so that the capture need not keep every document in memory (spec/store.md §3.4:
/// the parse during capture). For each concept or reserved document it parses the bytes
/// while they are at hand, computes the document's own findings and remembers both in the
/// [`memo`] (the clean digest and the findings under these options), then lets the bytes go;
/// [`parse_for_validation`] and [`validate_bundle`] find them there and never parse it again.
///
/// Kept (returns `true`): every path `keep` names, and a document with a YAML limit or graph
/// fault (the bundle parse reports it). Spilled: every other file, also ones the memo already
/// knows (not parsed again). Non-document files are never parsed.
///
/// `None` when the 0.2-only rows depend on the root declaration, i.e. unless `opts` asserts
/// OKF 0.2 (the declaration is only known once the root `index.md` is read). A memo cleared
/// between the capture and the validation (bounded tables, other requests) shows as
/// [`Capture::missed`] on the spilled capture: the caller captures again with every file
/// resident.
///
/// `profiles` lists the temporal profiles whose findings are remembered (each replacing
/// `opts.temporal_profile`): one for an explicit profile, both for `auto`, which is resolved
/// only once the whole capture is known (spec/temporal.md §11). Every concept visited also
/// has its temporal kinds remembered ([`crate::okf::detect`]).
#[must_use]
pub fn spill_visitor<'k>(
    opts: &ValidationOptions,
    profiles: &[Profile],
    keep: &'k (dyn Fn(&str) -> bool + Sync),
) -> Option<impl Fn(&str, &[u8], &[u8; 32]) -> bool + Sync + 'k> {
    if opts.spec_version != Some(Target::V02) || profiles.is_empty() {
        return None;
    }
    let all: Vec<(ValidationOptions, DocOptions)> = profiles
        .iter()
        .map(|p| {
            let o = ValidationOptions {
                temporal_profile: *p,
                ..opts.clone()
            };
            let d = doc_options(&o, true);
            (o, d)
        })
        .collect();
    Some(move |path: &str, bytes: &[u8], digest: &[u8; 32]| {
        if keep(path) {
            return true;
        }
        let class = crate::okf::grammar::classify(path);
        if !matches!(class, DocClass::Concept(_) | DocClass::Reserved) {
            return false;
        }
        let concept = matches!(class, DocClass::Concept(_));
        if all.iter().all(|(_, d)| memo::knows(path, digest, d))
            && (!concept || memo::kinds(digest).is_some())
        {
            return false;
        }
        let Ok(parsed) = parse_document(bytes) else {
            return true;
        };
        if concept {
            let root = parsed.as_ref().ok().and_then(Parsed::root);
            crate::okf::detect::remember(digest, root);
        }
        for (o, d) in &all {
            let mut cx = Checks {
                opts: o,
                v02: true,
                out: BTreeSet::new(),
            };
            check_doc(&mut cx, path, &class, &parsed, Some(bytes));
            memo::remember_clean(path, digest, d, cx.out.into_iter().collect());
        }
        false
    })
}

/// The memo key of a document's own findings under `opts` ([`memo::DocOptions`]): `strict`,
/// `temporal_profile` and `as_of` copied, and `v02`, whether the 0.2-only rows apply (resolved
/// by the caller from `opts.spec_version` and the root declaration). `check_links` and
/// `check_orphans` drive cross-document rows only, and `spec_version` enters only through
/// `v02`, so neither is part of the key.
fn doc_options(opts: &ValidationOptions, v02: bool) -> DocOptions {
    DocOptions {
        strict: opts.strict,
        v02,
        temporal_profile: opts.temporal_profile,
        as_of: opts.as_of.clone(),
    }
}

struct Checks<'o> {
    opts: &'o ValidationOptions,
    /// Evaluate the 0.2-only rows (false when validated as 0.1).
    v02: bool,
    out: BTreeSet<Finding>,
}

/// The per-file rows: `noncanonical_concept_path` once per `.md` file that is neither
/// reserved nor a concept (spec/surface.md §13.1 rule 5), then every document's own checks.
///
/// A document's own findings are a pure function of its path, bytes and [`DocOptions`]; they
/// come from [`memo`] when known, else they are computed (on two threads when many documents
/// are new, each parse dropped right after its checks) and remembered.
fn check_files(cx: &mut Checks<'_>, files: &[CapturedFile], docs: &[Doc<'_>]) {
    for file in files {
        if crate::okf::grammar::classify(&file.path) == DocClass::NoncanonicalMarkdown {
            cx.push(
                &file.path,
                "noncanonical_concept_path",
                Severity::Warn,
                "a Markdown file whose path is not a canonical concept id is not a concept",
            );
        }
    }
    let dopts = doc_options(cx.opts, cx.v02);
    let keys: Vec<(&str, &[u8; 32])> = docs
        .iter()
        .map(|d| (d.file.path.as_str(), &d.file.digest))
        .collect();
    let mut misses: Vec<&Doc<'_>> = Vec::new();
    for (doc, known) in docs.iter().zip(memo::findings_many(&keys, &dopts)) {
        match known {
            Some(found) => cx.out.extend(found.iter().cloned()),
            None => misses.push(doc),
        }
    }
    let computed = doc_findings_many(cx.opts, cx.v02, &misses);
    for (doc, found) in misses.iter().zip(computed) {
        cx.out.extend(found.iter().cloned());
        if doc.file.is_resident() {
            memo::remember_findings(&doc.file.path, &doc.file.digest, &dopts, found);
        }
    }
}

/// The own findings of each document of `docs`, in order (two threads when many).
fn doc_findings_many(
    opts: &ValidationOptions,
    v02: bool,
    docs: &[&Doc<'_>],
) -> Vec<Arc<[Finding]>> {
    crate::okf::par::map(docs, |d| doc_findings(opts, v02, d))
}

/// The findings of one document's own rows (no bundle-level or cross-document rows).
fn doc_findings(opts: &ValidationOptions, v02: bool, doc: &Doc<'_>) -> Arc<[Finding]> {
    let mut cx = Checks {
        opts,
        v02,
        out: BTreeSet::new(),
    };
    let parsed = doc.parsed_transient();
    // A spilled file's bytes are not at hand: its message then has no position.
    let bytes = doc.file.is_resident().then(|| doc.file.bytes());
    check_doc(&mut cx, &doc.file.path, &doc.class, &parsed, bytes);
    cx.out.into_iter().collect::<Vec<_>>().into()
}

impl Checks<'_> {
    fn push(
        &mut self,
        file: &str,
        code: &'static str,
        severity: Severity,
        message: impl Into<std::borrow::Cow<'static, str>>,
    ) {
        self.out.insert(Finding {
            file: file.to_owned(),
            code,
            message: message.into(),
            severity,
        });
    }
    /// [`Checks::push`] with a message built from the document (the footnote label, key or
    /// link target at fault, spec/surface.md §18.3 rule 3).
    fn push_owned(&mut self, file: &str, code: &'static str, severity: Severity, message: String) {
        self.out.insert(Finding {
            file: file.to_owned(),
            code,
            message: message.into(),
            severity,
        });
    }
    fn strict_sev(&self) -> Severity {
        if self.opts.strict {
            Severity::Error
        } else {
            Severity::Warn
        }
    }
    fn soft(&mut self, file: &str, code: &'static str, message: &'static str) {
        let s = self.strict_sev();
        self.push(file, code, s, message);
    }
}

/// Validates a parsed bundle (see [`validate`]).
#[must_use]
pub fn validate_bundle(bundle: &Bundle<'_>, opts: &ValidationOptions) -> Report {
    let declaration = version::declaration(bundle);
    let version = version::resolve(&declaration, opts.spec_version);
    let v02 = version.effective != Some("0.1");
    let mut cx = Checks {
        opts,
        v02,
        out: BTreeSet::new(),
    };
    check_version(&mut cx, &declaration);
    check_files(&mut cx, &bundle.capture.files, &bundle.docs);
    if opts.check_links || opts.check_orphans {
        check_links(&mut cx, bundle);
    }
    let scanned_files = bundle
        .capture
        .files
        .iter()
        .filter(|f| f.path.ends_with(".md"))
        .count();
    Report {
        declaration,
        version,
        scanned_files,
        findings: sorted(cx.out),
    }
}

/// Validates the staged bundle `base + writes` incrementally (spec/surface.md §13.2,
/// spec/concept-patch.md §3 rule 3).
///
/// `base_report` MUST be `validate_bundle(base_bundle, opts)` with the same `opts`. `writes`
/// are `(bundle-relative path, new bytes)`; a path may repeat (the last write wins), a path
/// absent from the base is a new file. The result is exactly the report
/// `validate(&overlay, opts)` returns for the overlay capture (every base file with the
/// writes applied): same declaration, version, `scanned_files`, findings and order, and the
/// same [`BundleFault`] (the first written document in path order with a YAML limit or graph
/// fault; untouched documents parsed in the base and cannot fault).
///
/// Only the written documents are parsed; the base's findings of every other file are reused.
/// Falls back to a full validation of the overlay when a cross-document or bundle-wide
/// finding can change: `check_links` / `check_orphans` on, or the written root `index.md`
/// changes the effective version (which decides the 0.2-only rows of every document).
///
/// # Errors
/// [`BundleFault`] as above.
pub fn validate_staged(
    base_bundle: &Bundle<'_>,
    base_report: &Report,
    writes: &[(String, Vec<u8>)],
    opts: &ValidationOptions,
) -> Result<Report, BundleFault> {
    let base = base_bundle.capture;
    // Last write per path wins, in path-byte order (as in a BTreeMap overlay).
    let latest: Vec<(&str, &[u8])> = writes
        .iter()
        .map(|(p, b)| (p.as_str(), b.as_slice()))
        .collect::<std::collections::BTreeMap<&str, &[u8]>>()
        .into_iter()
        .collect();
    if opts.check_links || opts.check_orphans {
        return validate(&overlay_capture(base, writes), opts);
    }
    let written = Capture::from_files(latest.iter().map(|(p, b)| ((*p).to_owned(), b.to_vec())));
    let parsed = parse_bundle(&written)?;
    let root_written = written.get("index.md").is_some();
    let declaration = if root_written {
        version::declaration(&parsed)
    } else {
        base_report.declaration.clone()
    };
    let version = version::resolve(&declaration, opts.spec_version);
    let v02 = version.effective != Some("0.1");
    if v02 != (base_report.version.effective != Some("0.1")) {
        return validate(&overlay_capture(base, writes), opts);
    }
    let mut cx = Checks {
        opts,
        v02,
        out: base_report
            .findings
            .iter()
            .filter(|f| written.get(&f.file).is_none())
            .cloned()
            .collect(),
    };
    if root_written {
        check_version(&mut cx, &declaration);
    }
    check_files(&mut cx, &written.files, &parsed.docs);
    let new_md = written
        .files
        .iter()
        .filter(|f| f.path.ends_with(".md") && base.get(&f.path).is_none())
        .count();
    Ok(Report {
        declaration,
        version,
        scanned_files: base_report.scanned_files + new_md,
        findings: sorted(cx.out),
    })
}

/// Findings in report order: by (file bytes, code, message).
fn sorted(out: BTreeSet<Finding>) -> Vec<Finding> {
    let mut findings: Vec<Finding> = out.into_iter().collect();
    findings.sort_by(|a, b| {
        a.file
            .as_bytes()
            .cmp(b.file.as_bytes())
            .then(a.code.cmp(b.code))
            .then(a.message.cmp(&b.message))
    });
    findings
}

fn check_version(cx: &mut Checks<'_>, decl: &Declaration) {
    const ROOT: &str = "index.md";
    match decl {
        Declaration::Absent => {}
        Declaration::InvalidScalar(_) | Declaration::NonScalar => cx.push(
            ROOT,
            "version_declaration_invalid",
            Severity::Error,
            "the root okf_version declaration is not a valid version",
        ),
        Declaration::Valid(t) => {
            if let Some(target) = cx.opts.spec_version {
                if t != target.as_str() {
                    let msg = if t == "0.1" && target == Target::V02 {
                        "the bundle declares 0.1; migrate it with preview_v02_migration first"
                    } else {
                        "the declared OKF version differs from the requested version"
                    };
                    cx.push(ROOT, "version_assertion_failed", Severity::Error, msg);
                }
            }
            if version::is_future(t) {
                cx.push(
                    ROOT,
                    "future_version",
                    Severity::Warn,
                    "the bundle declares an OKF version newer than 0.2; read on a best-effort basis",
                );
            }
        }
    }
}

/// `bytes`: the document's bytes when at hand, for the line and column of a YAML fault
/// (spec/surface.md §18.3 rule 3).
fn check_doc(
    cx: &mut Checks<'_>,
    path: &str,
    class: &DocClass,
    parsed: &Result<Parsed<'_>, ParseFault>,
    bytes: Option<&[u8]>,
) {
    let parsed = match parsed {
        Ok(p) => p,
        Err(f) => {
            let at = bytes.map(parse_position).unwrap_or_default();
            if at.is_empty() {
                cx.push(path, f.code(), Severity::Error, parse_message(f.code()));
            } else {
                cx.push_owned(
                    path,
                    f.code(),
                    Severity::Error,
                    format!("{}{at}", parse_message(f.code())),
                );
            }
            return;
        }
    };
    let body = parsed.split.body_text();
    let root = parsed.root();
    match class {
        DocClass::Concept(_) => {
            if !parsed.has_frontmatter() {
                cx.push(
                    path,
                    "missing_frontmatter",
                    Severity::Error,
                    "a concept has no YAML frontmatter block",
                );
            } else {
                check_concept_frontmatter(cx, path, root, body);
            }
            if cx.v02
                && field(root, "timestamp").is_some()
                && root.and_then(|r| r.get("generated")).is_none()
            {
                cx.push(
                    path,
                    "legacy_timestamp",
                    Severity::Info,
                    "a v0.1 timestamp is present without generated; migrate with preview_v02_migration",
                );
            }
            if cx.v02 {
                check_attributions(cx, path, root, body);
            }
        }
        _ => check_reserved(cx, path, parsed.has_frontmatter(), root, body),
    }
    if cx.v02 && !markdown::citations_sections(body).is_empty() {
        cx.push(
            path,
            "legacy_citations",
            Severity::Info,
            "a v0.1 Citations section is present; migrate with preview_v02_migration",
        );
    }
}

/// At most three names, each cut to 64 bytes (an ellipsis, never "..", which §10 redacts),
/// then `and N more`, then `suffix`: keeps a
/// message naming document content within the 512-byte cap (spec/surface.md §4).
fn name_list(names: &[String], suffix: &str) -> String {
    let cut = |n: &String| -> String {
        if n.len() <= 64 {
            return n.clone();
        }
        let mut end = 61;
        while !n.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}…", &n[..end])
    };
    let mut s = names.iter().take(3).map(cut).collect::<Vec<_>>().join(", ");
    if names.len() > 3 {
        s.push_str(&format!(" and {} more", names.len() - 3));
    }
    s.push_str(suffix);
    s
}

/// ` (line L, column C)` of the YAML fault in a document's frontmatter, counted in the whole
/// file (the frontmatter starts on line 2, after its `---` fence); empty when the document
/// has no frontmatter text or no position is found (spec/surface.md §18.3 rule 3).
#[must_use]
pub fn parse_position(bytes: &[u8]) -> String {
    let Ok(split) = crate::okf::document::split(bytes) else {
        return String::new();
    };
    split
        .frontmatter_text()
        .map(|fm| crate::okf::yaml::error_position_text(fm, 1))
        .unwrap_or_default()
}

/// Fixed neutral message per parse code (spec/surface.md §12.6).
#[must_use]
pub fn parse_message(code: &str) -> &'static str {
    match code {
        "invalid_encoding" => "the document is not valid UTF-8",
        "unterminated_frontmatter" => "the frontmatter block has no closing fence",
        _ => "the frontmatter is not one YAML mapping with unique keys",
    }
}

fn check_reserved(cx: &mut Checks<'_>, path: &str, has_fm: bool, root: Option<&Node>, body: &str) {
    let last = path.rsplit('/').next().unwrap_or(path);
    if path == "index.md" {
        let extra: Vec<String> = root
            .and_then(Node::entries)
            .map(|e| {
                e.iter()
                    .filter(|(k, _)| k.scalar_text() != Some("okf_version"))
                    .map(|(k, _)| k.scalar_text().unwrap_or("(a non-scalar key)").to_owned())
                    .collect()
            })
            .unwrap_or_default();
        if !extra.is_empty() {
            cx.push_owned(
                path,
                "reserved_frontmatter",
                Severity::Warn,
                format!(
                    "the root index frontmatter holds keys other than okf_version: {}; move them to a concept or remove them",
                    name_list(&extra, "")
                ),
            );
        }
    } else if has_fm {
        cx.push(
            path,
            "reserved_frontmatter",
            Severity::Warn,
            "a nested index or a log file carries frontmatter",
        );
    }
    if last == "log.md"
        && markdown::level2_headings(body)
            .iter()
            .any(|h| parse_date(h).is_none())
    {
        cx.push(
            path,
            "log_heading_invalid",
            Severity::Warn,
            "a log date heading is not in YYYY-MM-DD form",
        );
    }
}

#[allow(clippy::too_many_lines)]
fn check_concept_frontmatter(cx: &mut Checks<'_>, path: &str, root: Option<&Node>, body: &str) {
    if non_empty_str(field(root, "type")).is_none() {
        cx.push(
            path,
            "missing_type",
            Severity::Error,
            "the frontmatter has no non-empty string type",
        );
    }
    if let Some(as_of) = cx.opts.as_of.as_deref() {
        let p = cx.opts.temporal_profile;
        if project::stale(root, p, Some(as_of)) == Some(true) {
            cx.push(
                path,
                "stale_concept",
                Severity::Info,
                "the concept is stale at as_of",
            );
        }
    }
    if !cx.v02 {
        return;
    }
    let profile = cx.opts.temporal_profile;
    // generated
    if let Some(g) = field(root, "generated") {
        if g.entries().is_none() {
            cx.soft(path, "invalid_generated", "generated is not a mapping");
        } else {
            if !g
                .get("by")
                .and_then(Node::as_str)
                .is_some_and(is_document_actor)
            {
                cx.soft(
                    path,
                    "invalid_generated",
                    "generated.by is missing or not an actor",
                );
            }
            if let Some(at) = g.get("at").filter(|n| !n.is_null()) {
                if at
                    .as_str()
                    .is_none_or(|s| parse_offset_datetime(s).is_none())
                {
                    cx.soft(
                        path,
                        "invalid_generated",
                        "generated.at is not an offset datetime",
                    );
                }
            }
        }
    }
    // verified
    if let Some(v) = field(root, "verified") {
        if v.entries().is_none() && v.items().is_none() {
            cx.soft(
                path,
                "invalid_verified",
                "verified is neither a mapping nor a list",
            );
        } else if project::verified_items(root)
            .into_iter()
            .any(|e| project::valid_event(e).is_none())
        {
            cx.soft(
                path,
                "invalid_verified",
                "a verification event lacks an actor by or an offset-datetime at",
            );
        }
    }
    // sources
    if let Some(s) = field(root, "sources") {
        match s.items() {
            None => cx.soft(path, "invalid_sources", "sources is not a list"),
            Some(items) => {
                let mut ids: Vec<&str> = Vec::new();
                for (i, item) in items.iter().map(Node::deref_alias).enumerate() {
                    if item.entries().is_none() {
                        cx.soft(path, "invalid_sources", "a sources item is not a mapping");
                        continue;
                    }
                    if non_blank_str(item.get("resource")).is_none() {
                        cx.soft(path, "invalid_sources", "a sources item has no resource");
                    }
                    if let Some(id) = item.get("id").and_then(Node::scalar_text) {
                        if ids.contains(&id) {
                            cx.soft(
                                path,
                                "duplicate_source_id",
                                "two sources items share one id",
                            );
                        }
                        ids.push(id);
                    }
                    if let Some(u) = item.get("usage_count") {
                        if non_negative_int(u).is_none() {
                            cx.soft(
                                path,
                                "usage_count_invalid",
                                "usage_count is not a non-negative integer",
                            );
                        }
                    }
                    check_temporal(
                        cx,
                        path,
                        &format!("sources[{i}].last_modified"),
                        item.get("last_modified"),
                    );
                    check_window(
                        cx,
                        path,
                        &format!("sources[{i}].usage_window"),
                        item.get("usage_window"),
                        profile,
                    );
                }
            }
        }
    }
    check_window(
        cx,
        path,
        "usage_window",
        field(root, "usage_window"),
        profile,
    );
    check_temporal(cx, path, "stale_after", field(root, "stale_after"));
    // status
    if let Some(st) = field(root, "status") {
        if !st.as_str().is_some_and(|s| STATUSES.contains(&s)) {
            cx.push(
                path,
                "status_invalid",
                Severity::Warn,
                "status is not draft, stable or deprecated",
            );
        }
    }
    check_computation(cx, path, root, body);
}

/// `temporal_profile_mismatch` for a present value not valid under the profile. The message
/// names the concept, the field's path of spec/temporal.md §3 (`at`, e.g.
/// `sources[0].last_modified`) and the profile under which the value would be valid
/// (spec/temporal.md §11 rule 5); never the value.
fn check_temporal(cx: &mut Checks<'_>, path: &str, at: &str, node: Option<&Node>) {
    let Some(n) = node.filter(|n| !n.is_null()) else {
        return;
    };
    let profile = cx.opts.temporal_profile;
    if project::temporal_value(Some(n), profile).is_none() {
        cx.push(
            path,
            "temporal_profile_mismatch",
            Severity::Warn,
            mismatch_message(path, at, profile, n.as_str()),
        );
    }
}

/// The message of a `temporal_profile_mismatch` (spec/temporal.md §11 rule 5): the concept
/// (its id, when at most 200 bytes), the field path and the profile the value fits, if any.
#[must_use]
pub fn mismatch_message(path: &str, at: &str, profile: Profile, value: Option<&str>) -> String {
    let other = match profile {
        Profile::Date => Profile::Instant,
        Profile::Instant => Profile::Date,
    };
    let id = path.strip_suffix(".md").unwrap_or(path);
    let concept = if id.len() <= 200 {
        format!("concept {id}")
    } else {
        "the concept".to_owned()
    };
    let fits = match (value.is_some_and(|v| other.is_valid(v)), other) {
        (true, Profile::Date) => format!(
            "it would be valid under {} (a legacy date; preview_temporal_upgrade converts it)",
            other.id()
        ),
        (true, Profile::Instant) => format!("it would be valid under {}", other.id()),
        (false, _) => "it is valid under neither profile".to_owned(),
    };
    format!(
        "{at} of {concept} is not valid under {}; {fits}",
        profile.id()
    )
}

fn check_window(cx: &mut Checks<'_>, path: &str, at: &str, node: Option<&Node>, profile: Profile) {
    let Some(w) = node.filter(|n| !n.is_null()) else {
        return;
    };
    let (from, to) = (
        w.get("from").filter(|n| !n.is_null()),
        w.get("to").filter(|n| !n.is_null()),
    );
    if w.entries().is_none() || from.is_none() || to.is_none() {
        cx.soft(
            path,
            "invalid_usage_window",
            "usage_window is not a mapping with both from and to",
        );
        return;
    }
    check_temporal(cx, path, &format!("{at}.from"), from);
    check_temporal(cx, path, &format!("{at}.to"), to);
    let f = project::temporal_value(from, profile);
    let t = project::temporal_value(to, profile);
    if let (Some(f), Some(t)) = (f, t) {
        if profile.compare(f, t) == Some(Ordering::Greater) {
            cx.soft(
                path,
                "invalid_usage_window",
                "usage_window starts after it ends",
            );
        }
    }
}

fn check_computation(cx: &mut Checks<'_>, path: &str, root: Option<&Node>, body: &str) {
    if non_empty_str(field(root, "type")) != Some(ATTESTED_COMPUTATION) {
        return;
    }
    const MSG: &str = "the attested computation contract is malformed";
    if non_blank_str(field(root, "runtime")).is_none() {
        cx.soft(
            path,
            "invalid_computation",
            "an attested computation has no runtime",
        );
    }
    if let Some(ps) = field(root, "parameters") {
        let ok = ps.items().is_some_and(|items| {
            let mut names: Vec<&str> = Vec::new();
            items.iter().all(|p| {
                let name = p
                    .get("name")
                    .and_then(Node::as_str)
                    .filter(|s| !s.is_empty());
                let ty = p
                    .get("type")
                    .and_then(Node::as_str)
                    .filter(|s| !s.is_empty());
                let req = p
                    .get("required")
                    .and_then(Node::resolved)
                    .is_some_and(|r| matches!(r, Resolved::Bool(_)));
                let keys_ok = p.entries().is_some_and(|e| e.len() == 3);
                match name {
                    Some(n) if ty.is_some() && req && keys_ok && !names.contains(&n) => {
                        names.push(n);
                        true
                    }
                    _ => false,
                }
            })
        });
        if !ok {
            cx.soft(path, "invalid_computation", MSG);
        }
    }
    if let Some(e) = field(root, "executor") {
        let resource_ok = non_blank_str(e.get("resource")).is_some();
        let receipt_ok = match e.get("receipt") {
            None => true,
            Some(r) => r.items().is_some_and(|items| {
                let texts: Vec<Option<&str>> = items.iter().map(Node::as_str).collect();
                !items.is_empty()
                    && texts.iter().all(Option::is_some)
                    && texts
                        .iter()
                        .enumerate()
                        .all(|(i, t)| !texts[..i].contains(t))
            }),
        };
        if e.entries().is_none() || !resource_ok || !receipt_ok {
            cx.soft(path, "invalid_computation", MSG);
        }
    }
    if let Some(a) = field(root, "attester") {
        if non_blank_str(a.get("resource")).is_none() {
            cx.soft(path, "invalid_computation", MSG);
        }
    }
    if field(root, "computation").is_some() && markdown::has_computation_fence(body) {
        cx.soft(
            path,
            "invalid_computation",
            "both a computation path and a Computation fence are present",
        );
    }
}

fn check_attributions(cx: &mut Checks<'_>, path: &str, root: Option<&Node>, body: &str) {
    let all_ids: Vec<String> = field(root, "sources")
        .and_then(Node::items)
        .map(|items| {
            items
                .iter()
                .filter_map(|i| i.get("id").and_then(Node::scalar_text))
                .map(markdown::normalise_label)
                .collect()
        })
        .unwrap_or_default();
    let resolves = |l: &str| all_ids.contains(&markdown::normalise_label(l));
    // The raw labels (a superset of the scan's) usually all resolve: then so do the scan's,
    // and the line scan is skipped.
    let unresolved: Vec<String> = match markdown::footnote_label_superset(body) {
        Some(labels) if labels.iter().all(|l| resolves(l)) => Vec::new(),
        _ => {
            let mut v: Vec<String> = markdown::footnote_references(body)
                .into_iter()
                .filter(|l| !resolves(l))
                .collect();
            v.dedup();
            v
        }
    };
    if !unresolved.is_empty() {
        let refs: Vec<String> = unresolved.iter().map(|l| format!("[^{l}]")).collect();
        cx.push_owned(
            path,
            "unresolved_attribution",
            Severity::Warn,
            format!(
                "{} {} no sources id; add a source with that id or fix the label",
                if refs.len() == 1 {
                    "footnote"
                } else {
                    "footnotes"
                },
                name_list(
                    &refs,
                    if refs.len() == 1 {
                        " matches"
                    } else {
                        " match"
                    }
                ),
            ),
        );
    }
}

fn check_links(cx: &mut Checks<'_>, bundle: &Bundle<'_>) {
    let mut linked: BTreeSet<String> = BTreeSet::new();
    for doc in &bundle.docs {
        let parsed = doc.parsed_transient();
        let Ok(p) = &*parsed else { continue };
        let from = doc.file.path.as_str();
        let mut broken: Vec<String> = Vec::new();
        for target in markdown::md_links(p.split.body_text()) {
            match resolve_link(from, &target) {
                Some(t) if bundle.capture.get(&t).is_some() => {
                    if t != from {
                        linked.insert(t);
                    }
                }
                // A target the redaction of spec/surface.md §10 would hide (an absolute path,
                // a parent step) is described instead of named.
                Some(_) if !target.starts_with('/') && !target.contains("..") => {
                    broken.push(target);
                }
                Some(_) => broken.push("(a target with an absolute or parent path)".to_owned()),
                None => broken.push("(a target that leaves the bundle root)".to_owned()),
            }
        }
        broken.dedup();
        if !broken.is_empty() && cx.opts.check_links {
            cx.push_owned(
                from,
                "broken_link",
                Severity::Warn,
                format!(
                    "a Markdown link points to a document that is not in the bundle: {}",
                    name_list(&broken, "")
                ),
            );
        }
    }
    if cx.opts.check_orphans {
        for (_, doc) in bundle.concepts() {
            if !linked.contains(&doc.file.path) {
                cx.push(
                    &doc.file.path,
                    "orphan_concept",
                    Severity::Info,
                    "no other document links to this concept",
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::okf::yaml::Yaml;

    fn run(files: &[(&str, &str)], opts: &ValidationOptions) -> Report {
        let c = Capture::from_files(
            files
                .iter()
                .map(|(p, t)| ((*p).to_owned(), t.as_bytes().to_vec())),
        );
        validate(&c, opts).unwrap()
    }

    fn codes(r: &Report) -> Vec<(String, &'static str, Severity)> {
        r.findings
            .iter()
            .map(|f| (f.file.clone(), f.code, f.severity))
            .collect()
    }

    #[test]
    fn missing_type_and_frontmatter() {
        let r = run(
            &[
                ("a.md", "---\ntitle: x\n---\n"),
                ("b.md", "no fm\n"),
                ("c.md", "---\ntype: T\n---\n"),
            ],
            &ValidationOptions::default(),
        );
        assert_eq!(
            codes(&r),
            vec![
                ("a.md".into(), "missing_type", Severity::Error),
                ("b.md".into(), "missing_frontmatter", Severity::Error),
            ]
        );
        assert!(!r.conformant());
        assert_eq!(r.scanned_files, 3);
    }

    #[test]
    fn strict_switches_severity() {
        let files = [(
            "a.md",
            "---\ntype: T\ngenerated: {by: nobody, at: 2026-01-02}\n---\n",
        )];
        let soft = run(&files, &ValidationOptions::default());
        let strict = run(
            &files,
            &ValidationOptions {
                strict: true,
                ..ValidationOptions::default()
            },
        );
        assert!(soft
            .findings
            .iter()
            .all(|f| f.code == "invalid_generated" && f.severity == Severity::Warn));
        assert!(!soft.findings.is_empty());
        assert!(strict
            .findings
            .iter()
            .all(|f| f.code == "invalid_generated" && f.severity == Severity::Error));
    }

    #[test]
    fn version_rows() {
        let opts02 = ValidationOptions {
            spec_version: Some(Target::V02),
            strict: true,
            ..ValidationOptions::default()
        };
        let r = run(&[("index.md", "---\nokf_version: \"0.1\"\n---\n")], &opts02);
        assert_eq!(
            codes(&r),
            vec![(
                "index.md".into(),
                "version_assertion_failed",
                Severity::Error
            )]
        );
        let r = run(
            &[("index.md", "---\nokf_version: \"0.3\"\n---\n")],
            &ValidationOptions::default(),
        );
        assert_eq!(
            codes(&r),
            vec![("index.md".into(), "future_version", Severity::Warn)]
        );
        let r = run(&[("index.md", "---\nokf_version: \"0.3\"\n---\n")], &opts02);
        assert_eq!(
            codes(&r),
            vec![
                ("index.md".into(), "future_version", Severity::Warn),
                (
                    "index.md".into(),
                    "version_assertion_failed",
                    Severity::Error
                )
            ]
        );
        let r = run(
            &[("index.md", "---\nokf_version: [1]\n---\n")],
            &ValidationOptions::default(),
        );
        assert_eq!(
            codes(&r),
            vec![(
                "index.md".into(),
                "version_declaration_invalid",
                Severity::Error
            )]
        );
        assert_eq!(r.version.effective, None);
    }

    #[test]
    fn reserved_documents_and_noncanonical_paths() {
        let r = run(
            &[
                ("index.md", "---\nokf_version: \"0.2\"\ntitle: x\n---\n"),
                ("a/index.md", "---\n---\n"),
                ("a/log.md", "# Log\n\n## 2026-05-22\n## May 2026\n"),
                ("notes/a:b.md", "x"),
                (".github/t.md", "x"),
            ],
            &ValidationOptions::default(),
        );
        assert_eq!(
            codes(&r),
            vec![
                (
                    ".github/t.md".into(),
                    "noncanonical_concept_path",
                    Severity::Warn
                ),
                ("a/index.md".into(), "reserved_frontmatter", Severity::Warn),
                ("a/log.md".into(), "log_heading_invalid", Severity::Warn),
                ("index.md".into(), "reserved_frontmatter", Severity::Warn),
                (
                    "notes/a:b.md".into(),
                    "noncanonical_concept_path",
                    Severity::Warn
                ),
            ]
        );
        assert!(r.conformant());
    }

    #[test]
    fn v01_skips_exactly_the_listed_rows() {
        let concept = "---\ntype: T\ngenerated: x\nverified: 1\nsources:\n  - {id: a, resource: r, usage_count: -1, last_modified: nope}\n  - {id: a, resource: r}\n  - 3\nusage_window: {from: 2026-02-01, to: 2026-01-01}\nstatus: archived\nstale_after: 2026-01-02T00:00:00Z\ntimestamp: '2026-01-02T00:00:00Z'\n---\nA[^zz]\n\n# Citations\n\n[1] x\n";
        let ac = "---\ntype: Attested Computation\n---\n";
        let files = [
            ("index.md", "---\nokf_version: \"0.1\"\n---\n"),
            ("a.md", concept),
            ("b.md", ac),
            ("c.md", "---\n---\n"),
            ("d.md", "---\ntype: T\ntimestamp: x\n---\n"),
        ];
        let all = run(
            &files,
            &ValidationOptions {
                spec_version: Some(Target::V02),
                ..ValidationOptions::default()
            },
        );
        let got: BTreeSet<&str> = all.findings.iter().map(|f| f.code).collect();
        for f in &all.findings {
            assert!(!crate::envelope::is_sensitive(&f.message), "{}", f.message);
        }
        for c in [
            "invalid_generated",
            "invalid_verified",
            "invalid_sources",
            "duplicate_source_id",
            "usage_count_invalid",
            "invalid_usage_window",
            "invalid_computation",
            "status_invalid",
            "temporal_profile_mismatch",
            "unresolved_attribution",
            "legacy_timestamp",
            "legacy_citations",
        ] {
            assert!(got.contains(c), "0.2 run lacks {c}");
        }
        let r = run(
            &files,
            &ValidationOptions {
                spec_version: Some(Target::V01),
                ..ValidationOptions::default()
            },
        );
        assert_eq!(
            codes(&r),
            vec![("c.md".into(), "missing_type", Severity::Error)]
        );
        // auto on a 0.1 declaration also validates as 0.1.
        let r = run(&files, &ValidationOptions::default());
        assert_eq!(
            codes(&r),
            vec![("c.md".into(), "missing_type", Severity::Error)]
        );
    }

    #[test]
    fn links_and_orphans() {
        let files = [
            ("index.md", "* [A](a.md)\n"),
            (
                "a.md",
                "---\ntype: T\n---\n[b](/sub/b.md) [x](/x.md) [self](a.md)\n",
            ),
            ("sub/b.md", "---\ntype: T\n---\n[up](../a.md)\n"),
            ("c.md", "---\ntype: T\n---\n[c](c.md)\n"),
        ];
        let r = run(&files, &ValidationOptions::default());
        assert!(r.findings.is_empty());
        let r = run(
            &files,
            &ValidationOptions {
                check_links: true,
                check_orphans: true,
                ..ValidationOptions::default()
            },
        );
        assert_eq!(
            codes(&r),
            vec![
                ("a.md".into(), "broken_link", Severity::Warn),
                ("c.md".into(), "orphan_concept", Severity::Info),
            ]
        );
        assert_eq!(resolve_link("a/b.md", "../../x.md"), None);
        assert_eq!(
            resolve_link("a/b.md", "./c%20d.md").as_deref(),
            Some("a/c d.md")
        );
    }

    #[test]
    fn profile_mismatch_and_staleness() {
        let files = [("a.md", "---\ntype: T\nstale_after: 2026-01-02\nsources:\n  - {resource: r, last_modified: 2026-01-02T00:00:00Z}\n---\n")];
        let r = run(
            &files,
            &ValidationOptions {
                as_of: Some("2026-01-03".into()),
                ..ValidationOptions::default()
            },
        );
        assert_eq!(
            codes(&r),
            vec![
                ("a.md".into(), "stale_concept", Severity::Info),
                ("a.md".into(), "temporal_profile_mismatch", Severity::Warn),
            ]
        );
        let r = run(
            &files,
            &ValidationOptions {
                strict: true,
                temporal_profile: Profile::Instant,
                ..ValidationOptions::default()
            },
        );
        assert_eq!(
            codes(&r),
            vec![("a.md".into(), "temporal_profile_mismatch", Severity::Warn)]
        );
    }

    proptest::proptest! {
        #[test]
        fn validator_and_projections_never_panic(
            fm in "(type|status|verified|generated|sources|usage_window|by|at|id|resource|usage_count|stale_after|from|to|runtime|parameters|executor|receipt|[-:{}\\[\\], \n'\"&*!0-9a-z.T])*",
            body in "(\\PC|[\\[\\]^`#\n])*",
        ) {
            let text = format!("---\n{fm}\n---\n{body}");
            let c = Capture::from_files([
                ("a.md".to_owned(), text.into_bytes()),
                ("index.md".to_owned(), b"---\nokf_version: \"0.2\"\n---\n".to_vec()),
            ]);
            if let Ok(b) = parse_bundle(&c) {
                for profile in [Profile::Date, Profile::Instant] {
                    let opts = ValidationOptions {
                        strict: true,
                        check_links: true,
                        check_orphans: true,
                        spec_version: Some(Target::V02),
                        temporal_profile: profile,
                        as_of: Some("2026-01-02".into()),
                    };
                    let r = validate_bundle(&b, &opts);
                    proptest::prop_assert_eq!(r.scanned_files, 2);
                    for (id, d) in b.concepts() {
                        let _ = project::list_entry(id, d, profile, Some("2026-01-02"));
                        let _ = project::read_projection(d, profile);
                    }
                }
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]
        /// The memo (crate::okf::memo) never changes an answer: a report served from
        /// remembered parses and findings equals the report computed with the memo bypassed,
        /// for the same bundle under changing options (the memo is warm on the second run).
        #[test]
        fn memo_served_reports_equal_uncached_reports(
            base in proptest::collection::btree_map(0..PATHS.len(), 0..17usize, 0..=PATHS.len()),
            strict in proptest::bool::ANY,
            version in 0..3u8,
            as_of in proptest::bool::ANY,
            instant in proptest::bool::ANY,
        ) {
            let texts = contents();
            let c = Capture::from_files(
                base.iter().map(|(p, i)| (PATHS[*p].to_owned(), texts[*i].clone())),
            );
            let opts = ValidationOptions {
                strict,
                spec_version: [None, Some(Target::V01), Some(Target::V02)][usize::from(version)],
                temporal_profile: if instant { Profile::Instant } else { Profile::Date },
                as_of: as_of.then(|| "2026-01-03".to_owned()),
                ..ValidationOptions::default()
            };
            let fresh = crate::okf::memo::bypassed(|| validate(&c, &opts));
            let first = validate(&c, &opts);
            let warm = validate(&c, &opts);
            proptest::prop_assert_eq!(&first, &fresh);
            proptest::prop_assert_eq!(&warm, &fresh);
            if let Ok(b) = parse_bundle(&c) {
                for d in &b.docs {
                    let cold = crate::okf::memo::bypassed(|| {
                        crate::okf::bundle::parse_document(d.file.bytes())
                            .map(|p| p.map(|p| p.yaml.map(|y| y.value())))
                    });
                    let lazy = d.parsed().as_ref().map(|p| p.yaml.as_ref().map(Yaml::value));
                    proptest::prop_assert_eq!(cold, Ok(lazy.map_err(|f| *f)));
                }
            }
        }
    }

    /// Paths of generated bundles: root and nested reserved documents, concepts, a
    /// noncanonical Markdown path, a non-Markdown file.
    const PATHS: &[&str] = &[
        "index.md",
        "a.md",
        "b/c.md",
        "b/index.md",
        "b/log.md",
        "log.md",
        "notes/x:y.md",
        "d.txt",
        "e.md",
    ];

    /// Document texts; the last two fault the bundle (YAML graph, YAML limit).
    fn contents() -> Vec<Vec<u8>> {
        let mut v: Vec<Vec<u8>> = [
            "---\ntype: T\n---\nbody [a](/a.md) [c](b/c.md)\n",
            "---\ntype: T\nstatus: stable\nsources:\n  - {id: s1, resource: r}\n---\nx[^s1]\n",
            "---\ntitle: no type\n---\n[gone](missing.md)\n",
            "no frontmatter [e](/e.md)\n",
            "---\ntype: T\ntimestamp: '2026-01-02T00:00:00Z'\n---\n# Citations\n\n[1] x\n",
            "---\ntype: T\nstatus: archived\ngenerated: {by: nobody}\nstale_after: 2026-01-02\n---\n",
            "---\ntype: T\n",
            "---\na: 1\na: 2\n---\n",
            "---\nokf_version: \"0.2\"\n---\n* [A](a.md)\n",
            "---\nokf_version: \"0.1\"\n---\n",
            "---\nokf_version: \"0.3\"\ntitle: x\n---\n",
            "---\nokf_version: [1]\n---\n",
            "# Log\n\n## 2026-05-22\n## May 2026\n",
            "",
        ]
        .iter()
        .map(|t| t.as_bytes().to_vec())
        .collect();
        v.push(b"---\ntype: T\n\xff\n---\n".to_vec());
        v.push(b"---\na: *nope\n---\n".to_vec());
        v.push(format!("---\na: {}{}\n---\n", "[".repeat(70), "]".repeat(70)).into_bytes());
        v
    }

    /// Contents a base may hold (no bundle faults).
    const BASE_CONTENTS: usize = 15;

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(400))]
        #[test]
        fn validate_staged_equals_full_validation_of_the_overlay(
            base in proptest::collection::btree_map(0..PATHS.len(), 0..BASE_CONTENTS, 0..=PATHS.len()),
            writes in proptest::collection::vec((0..PATHS.len(), 0..17usize), 0..4),
            strict in proptest::bool::ANY,
            links in proptest::bool::weighted(0.2),
            orphans in proptest::bool::weighted(0.2),
            version in 0..3u8,
            as_of in proptest::bool::ANY,
            instant in proptest::bool::ANY,
        ) {
            let texts = contents();
            let base = Capture::from_files(
                base.iter().map(|(p, c)| (PATHS[*p].to_owned(), texts[*c].clone())),
            );
            let writes: Vec<(String, Vec<u8>)> = writes
                .iter()
                .map(|(p, c)| (PATHS[*p].to_owned(), texts[*c].clone()))
                .collect();
            let opts = ValidationOptions {
                strict,
                check_links: links,
                check_orphans: orphans,
                spec_version: [None, Some(Target::V01), Some(Target::V02)][usize::from(version)],
                temporal_profile: if instant { Profile::Instant } else { Profile::Date },
                as_of: as_of.then(|| "2026-01-03".to_owned()),
            };
            let mut overlay: std::collections::BTreeMap<String, Vec<u8>> = base
                .files
                .iter()
                .map(|f| (f.path.clone(), f.bytes().to_vec()))
                .collect();
            for (p, b) in &writes {
                overlay.insert(p.clone(), b.clone());
            }
            let overlay = Capture::from_files(overlay);
            let bundle = parse_bundle(&base).unwrap();
            let base_report = validate_bundle(&bundle, &opts);
            let full = validate(&overlay, &opts);
            let fast = validate_staged(&bundle, &base_report, &writes, &opts);
            proptest::prop_assert_eq!(fast, full);
            let digests = base.files.iter().map(|f| (f.path.as_str(), &f.digest));
            proptest::prop_assert_eq!(
                crate::digest::revision_with(digests, &writes),
                overlay.revision
            );
        }
    }

    #[test]
    fn validate_staged_reports_new_documents_and_root_changes() {
        let base = Capture::from_files([
            (
                "index.md".to_owned(),
                b"---\nokf_version: \"0.2\"\n---\n".to_vec(),
            ),
            ("a.md".to_owned(), b"---\ntitle: x\n---\n".to_vec()),
        ]);
        let opts = ValidationOptions {
            strict: true,
            spec_version: Some(Target::V02),
            ..ValidationOptions::default()
        };
        let bundle = parse_bundle(&base).unwrap();
        let base_report = validate_bundle(&bundle, &opts);
        let writes = vec![
            (
                "b.md".to_owned(),
                b"---\ntype: T\nstatus: x\n---\n".to_vec(),
            ),
            (
                "index.md".to_owned(),
                b"---\nokf_version: \"0.1\"\n---\n".to_vec(),
            ),
        ];
        let r = validate_staged(&bundle, &base_report, &writes, &opts).unwrap();
        assert_eq!(r.scanned_files, 3);
        assert_eq!(r.declaration, Declaration::Valid("0.1".into()));
        assert_eq!(
            codes(&r),
            vec![
                ("a.md".into(), "missing_type", Severity::Error),
                ("b.md".into(), "status_invalid", Severity::Warn),
                (
                    "index.md".into(),
                    "version_assertion_failed",
                    Severity::Error
                ),
            ]
        );
        let fault = vec![("c.md".to_owned(), b"---\na: *nope\n---\n".to_vec())];
        assert_eq!(
            validate_staged(&bundle, &base_report, &fault, &opts),
            Err(BundleFault::Graph {
                path: "c.md".into()
            })
        );
    }

    #[test]
    fn parse_faults_are_errors() {
        let r = run(
            &[
                ("a.md", "---\ntype: T\n"),
                ("b.md", "---\na: 1\na: 2\n---\n"),
            ],
            &ValidationOptions::default(),
        );
        assert_eq!(
            codes(&r),
            vec![
                ("a.md".into(), "unterminated_frontmatter", Severity::Error),
                ("b.md".into(), "invalid_frontmatter", Severity::Error),
            ]
        );
    }

    /// The memo key of every call site (the parse for validation, the spill visitor with
    /// `v02 = true`, the per-file rows with the context's `v02`) is `strict`,
    /// `temporal_profile` and `as_of` of the options and the `v02` passed; `check_links`,
    /// `check_orphans` and `spec_version` never change it.
    #[test]
    fn doc_options_copy_the_document_options_and_take_v02_as_given() {
        for strict in [false, true] {
            for temporal_profile in [Profile::Date, Profile::Instant] {
                for as_of in [None, Some("2026-01-01".to_owned())] {
                    for v02 in [false, true] {
                        let expected = DocOptions {
                            strict,
                            v02,
                            temporal_profile,
                            as_of: as_of.clone(),
                        };
                        for (check_links, check_orphans) in [(false, false), (true, true)] {
                            for spec_version in [None, Some(Target::V01), Some(Target::V02)] {
                                let opts = ValidationOptions {
                                    strict,
                                    check_links,
                                    check_orphans,
                                    spec_version,
                                    temporal_profile,
                                    as_of: as_of.clone(),
                                };
                                assert_eq!(doc_options(&opts, v02), expected, "{opts:?} {v02}");
                            }
                        }
                    }
                }
            }
        }
    }
}
