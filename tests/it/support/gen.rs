//! Deterministic generator of an OKF v0.1 bundle in the generator dialect of issue 10 (the
//! dialect of `fixtures/bundles/demo-v01` at scale): a root `index.md` without frontmatter;
//! concepts under nested folders with frontmatter (`type`, `title`, `description`, a quoted
//! `timestamp`), bodies of about 8 KB per size factor with headings, prose, pandoc inline
//! notes `^[page.md]` and `[N]` claims, and a `# Citations` section of 1–8 ordered-list
//! entries (`1. [page.md](/references/page-1a2b.md)`, `2. [Title](https://example.test/x)`);
//! about 10 % of the documents are reference documents under `references/` **without**
//! `type` (pre-existing errors that the migration does not touch: no timestamp, no section).
//! [`generate_with_leftovers`] adds the generator leftovers of spec/migration.md §12.8 (prose,
//! entry-like lines, sub-headings and new lists after the citation entries, bare-path entries)
//! to one concept in `every`.
//!
//! Std only, no randomness crate: every choice is a pure function of the document index
//! (splitmix64). Shared by `tests/it/migration_scale.rs` and, through `#[path]`,
//! `benches/migration.rs`.
#![allow(dead_code, clippy::disallowed_methods)] // writes its own temp bundles, not a user's

use std::fmt::Write as _;
use std::path::Path;

/// The timestamp every generated concept carries (as the generator of issue 10 wrote it).
pub const TIMESTAMP: &str = "'2026-05-28T22:43:59+00:00'";

/// Concepts per leaf folder; leaf folders nest as `domain-NN/group-NNN/`.
const PER_FOLDER: usize = 50;
/// Leaf folders per domain.
const GROUPS_PER_DOMAIN: usize = 20;

/// Reference words; a document cites consecutive references, so its link texts are distinct.
const WORDS: [&str; 16] = [
    "page",
    "orders",
    "ledger",
    "billing",
    "sessions",
    "events",
    "users",
    "inventory",
    "shipping",
    "returns",
    "pricing",
    "catalog",
    "payments",
    "refunds",
    "campaigns",
    "audits",
];

const TYPES: [&str; 5] = ["BigQuery Table", "Metric", "Dataset", "Dashboard", "Join"];

/// splitmix64: the deterministic source of every choice.
fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// What to generate: `documents` files besides the root `index.md` (every tenth one a
/// reference document without `type`), bodies of about `size` × 8 KB.
#[derive(Clone, Copy, Debug)]
pub struct Spec {
    pub documents: usize,
    pub size: usize,
}

/// What was generated.
#[derive(Debug, Default)]
pub struct Generated {
    /// Concept paths (typed, timestamped, with a `# Citations` section), in index order.
    pub concepts: Vec<String>,
    /// Reference paths (no `type`: one pre-existing `missing_type` error each).
    pub references: Vec<String>,
    /// All files written, the root `index.md` included.
    pub files: usize,
    /// Their total size.
    pub bytes: u64,
    /// Citation entries over all sections.
    pub entries: usize,
    /// `^[…]` inline notes (single and combined) over all bodies.
    pub inline_notes: usize,
    /// `[N]` claim markers over all bodies.
    pub claim_markers: usize,
    /// Concepts with generator leftovers inside their citations section (spec/migration.md
    /// §12.8), by variant: `[example, bare_path, kept_claims]`.
    pub leftovers: [Vec<String>; 3],
}

/// Number of reference documents among `documents`: about 10 %.
#[must_use]
pub fn reference_count(documents: usize) -> usize {
    (documents / 10).max(1)
}

/// `references/<word>-<4 hex>.md`; distinct for every `j < 65,536` (odd multiplier).
#[must_use]
pub fn reference_path(j: usize) -> String {
    format!(
        "references/{}-{:04x}.md",
        WORDS[j % WORDS.len()],
        (j as u64).wrapping_mul(0x9e37).wrapping_add(0x1a2b) & 0xffff
    )
}

/// The link text a concept uses for reference `j` (and the text of its inline notes).
#[must_use]
pub fn reference_text(j: usize) -> String {
    format!("{}.md", WORDS[j % WORDS.len()])
}

/// `domain-NN/group-NNN/<word>-NNNNN.md`.
#[must_use]
pub fn concept_path(i: usize) -> String {
    let folder = i / PER_FOLDER;
    format!(
        "domain-{:02}/group-{:03}/{}-{:05}.md",
        folder / GROUPS_PER_DOMAIN,
        folder,
        WORDS[(i * 7) % WORDS.len()],
        i
    )
}

fn reference_doc(j: usize) -> String {
    let h = mix(j as u64 ^ 0xfeed);
    let mut s = format!(
        "---\ntitle: {} reference {j}\ndescription: Source notes for the {} pages, as crawled.\n---\n\n# {}\n\n",
        WORDS[j % WORDS.len()],
        WORDS[j % WORDS.len()],
        reference_text(j)
    );
    for p in 0..(2 + h % 3) {
        let _ = write!(
            s,
            "Crawled page {j}, part {p}. The source describes how the {} records are produced \
             upstream and which fields are reliable; it was captured by the generator and has \
             never been given a type.\n\n",
            WORDS[(j + p as usize) % WORDS.len()]
        );
    }
    s
}

/// One citation entry of a concept: a reference (cited by an inline note) or a URL (cited by
/// a `[N]` claim).
enum Entry {
    Reference(usize),
    Url(String, String),
}

/// A paragraph of about 430 bytes, varied by `(i, p)`.
fn paragraph(i: usize, p: usize, concepts: usize) -> String {
    let h = mix(((i as u64) << 20) ^ p as u64);
    let w = |k: u64| WORDS[((h >> (k * 4)) % WORDS.len() as u64) as usize];
    let link = concept_path((i + p * 13 + 1) % concepts.max(1));
    format!(
        "Paragraph {p} of concept {i}. The {} figures are derived from the {} feed after \
         reconciliation; late adjustments are booked to the period in which they are approved, \
         not the one in which they occurred. Owners review the {} definition every quarter and \
         record changes in the change log, and downstream {} dashboards read the published view \
         only. See [the upstream {}](/{link}) for the source",
        w(0),
        w(1),
        w(2),
        w(3),
        w(4)
    )
}

/// The §12.8 variant of concept `i`, when it has leftovers (one concept in `every`).
fn leftover_variant(i: usize, every: usize) -> Option<usize> {
    (every > 0 && i % every == every / 2).then(|| (i / every) % 3)
}

/// Appends generator leftovers to a citations section of `k` ordered entries (§12.8),
/// variant `v`: 0 the spec's example (prose, an entry-like line with an unclosed note, a
/// sub-heading and a new list); 1 a bare-path entry `N. word.md>` in the owned run (an entry
/// that needs review) and numbered prose after it; 2 kept prose with a claim marker `[1]` and
/// the mapped inline note `note`, then `**Mode**` lines that an older parser took for
/// entries. Every variant gets a proposal under `trailing_content: "keep"`.
fn leftovers(s: &mut String, v: usize, k: usize, note: Option<&str>) {
    match v {
        0 => {
            let _ = write!(
                s,
                "\nEvery step refers to the guide\n{}. for the details. ^[guide.md\n\n## Lifecycle\n\n1. **Build**: create the agent\n{}. evaluate it\n",
                k + 1,
                k + 2
            );
        }
        1 => {
            let _ = write!(
                s,
                "{}. {}>\n\nSee the steps below.\n1. **Step**: load\n2. **Step**: check\n",
                k + 1,
                WORDS[k % WORDS.len()]
            );
        }
        _ => {
            let _ = write!(s, "\nThe pipeline has two modes [1]");
            if let Some(n) = note {
                let _ = write!(s, " ^[{n}]");
            }
            s.push_str(
                ".\n\n1. **Continuous mode**: Runs the pipeline continuously\n2. **Batch mode**: Runs the pipeline once per day\n\n### Notes\n\n1. Generated by the catalog generator.\n",
            );
        }
    }
}

fn concept_doc(
    i: usize,
    concepts: usize,
    refs: usize,
    size: usize,
    every: usize,
    g: &mut Generated,
) -> String {
    let h = mix(i as u64);
    let k = 1 + (h % 8) as usize; // 1..=8 entries
                                  // Consecutive references without wrapping: distinct words, hence distinct link texts.
    let span = WORDS.len().min(refs);
    let first_ref = (mix(h) % (refs - span + 1) as u64) as usize;
    let mut entries = Vec::with_capacity(k);
    let mut next_ref = first_ref;
    for t in 0..k {
        // About a quarter URL entries, never more than the 16 distinct reference words.
        if (h >> (8 + 2 * t)) & 3 == 0 || next_ref - first_ref >= span {
            entries.push(Entry::Url(
                format!("Warehouse handbook {i}.{t}"),
                format!("https://example.test/handbook/{i}/{t}"),
            ));
        } else {
            entries.push(Entry::Reference(next_ref));
            next_ref += 1;
        }
    }
    g.entries += k;
    // Claims: one per entry (an inline note or `[N]`), plus one combined note `^[a.md, b.md]`
    // in a third of the documents with two references.
    let mut claims: Vec<String> = entries
        .iter()
        .enumerate()
        .map(|(t, e)| match e {
            Entry::Reference(j) => {
                g.inline_notes += 1;
                format!(" ^[{}]", reference_text(*j))
            }
            Entry::Url(..) => {
                g.claim_markers += 1;
                format!(" [{}]", t + 1)
            }
        })
        .collect();
    let ref_texts: Vec<String> = entries
        .iter()
        .filter_map(|e| match e {
            Entry::Reference(j) => Some(reference_text(*j)),
            Entry::Url(..) => None,
        })
        .collect();
    if ref_texts.len() >= 2 && h.is_multiple_of(3) {
        g.inline_notes += 1;
        claims.push(format!(" ^[{}, {}]", ref_texts[0], ref_texts[1]));
    }
    let ty = TYPES[i % TYPES.len()];
    let mut s = format!(
        "---\ntype: {ty}\ntitle: {} {ty} {i}\ndescription: One row per {} record of source {i}, reconciled nightly.\ntimestamp: {TIMESTAMP}\n---\n\n# Overview\n\n",
        WORDS[(i * 7) % WORDS.len()],
        WORDS[(i * 3) % WORDS.len()]
    );
    let target = 8 * 1024 * size;
    let mut p = 0;
    while s.len() < target || p < claims.len() {
        if p > 0 && p % 4 == 0 {
            let _ = write!(s, "## Section {}\n\n", p / 4);
            if (p / 4) % 3 == 1 {
                for c in 0..4 {
                    let _ = writeln!(s, "- `col_{c}`: value {c} of the record, nullable.");
                }
                s.push('\n');
            } else if (p / 4) % 3 == 2 {
                s.push_str(
                    "| Field | Type |\n| --- | --- |\n| id | string |\n| amount | numeric |\n\n",
                );
            }
        }
        s.push_str(&paragraph(i, p, concepts));
        if let Some(c) = claims.get(p) {
            s.push_str(c);
        }
        s.push_str(".\n\n");
        p += 1;
    }
    s.push_str("# Citations\n\n");
    for (t, e) in entries.iter().enumerate() {
        match e {
            Entry::Reference(j) => {
                let _ = writeln!(
                    s,
                    "{}. [{}](/{})",
                    t + 1,
                    reference_text(*j),
                    reference_path(*j)
                );
            }
            Entry::Url(title, url) => {
                let _ = writeln!(s, "{}. [{title}]({url})", t + 1);
            }
        }
    }
    if let Some(v) = leftover_variant(i, every) {
        leftovers(&mut s, v, k, ref_texts.first().map(String::as_str));
    }
    s
}

fn put(root: &Path, rel: &str, text: &str, g: &mut Generated) {
    let p = root.join(rel);
    if let Some(d) = p.parent() {
        std::fs::create_dir_all(d).expect("mkdir");
    }
    std::fs::write(&p, text).expect("write");
    g.files += 1;
    g.bytes += text.len() as u64;
}

/// Writes the bundle described by `spec` at `root` (which must not exist yet).
pub fn generate(root: &Path, spec: Spec) -> Generated {
    generate_with_leftovers(root, spec, 0)
}

/// [`generate`], with generator leftovers (spec/migration.md §12.8) in one concept of every
/// `every` (100: 1 %), cycling through three variants; 0 for none.
pub fn generate_with_leftovers(root: &Path, spec: Spec, every: usize) -> Generated {
    assert!(spec.documents >= 10 && spec.size >= 1, "{spec:?}");
    assert!(!root.exists(), "{} exists", root.display());
    let refs = reference_count(spec.documents);
    let concepts = spec.documents - refs;
    let mut g = Generated::default();
    let mut index = String::from(
        "# Generated knowledge bundle\n\nProduced by a catalog generator (OKF 0.1).\n\n",
    );
    for d in 0..concepts.div_ceil(PER_FOLDER * GROUPS_PER_DOMAIN) {
        let first = d * PER_FOLDER * GROUPS_PER_DOMAIN;
        let _ = writeln!(
            index,
            "* [domain {d}]({}) - the first concept of domain {d}.",
            concept_path(first)
        );
    }
    let _ = writeln!(
        index,
        "* [references]({}) - crawled sources.",
        reference_path(0)
    );
    put(root, "index.md", &index, &mut g);
    for j in 0..refs {
        let rel = reference_path(j);
        put(root, &rel, &reference_doc(j), &mut g);
        g.references.push(rel);
    }
    for i in 0..concepts {
        let rel = concept_path(i);
        let text = concept_doc(i, concepts, refs, spec.size, every, &mut g);
        put(root, &rel, &text, &mut g);
        if let Some(v) = leftover_variant(i, every) {
            g.leftovers[v].push(rel.clone());
        }
        g.concepts.push(rel);
    }
    g
}
