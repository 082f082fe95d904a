//! The 0.2 bench bundle of `benches/patch.rs` and `benches/warm.rs` (moved from `patch.rs`):
//! `n` concepts under `d<k>/a<j>/` with a few KB of prose each, and the floor every bench
//! compares with (walk, read and SHA-256 every visible file once, on one thread).

#![allow(dead_code)]

use okf_mcp::digest;
use std::path::Path;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// Concepts per leaf folder; folders nest as `d<k>/a<j>/`.
const PER_FOLDER: usize = 50;

// ---------------------------------------------------------------------------------------------
// Bundle generation

pub fn concept_path(i: usize) -> String {
    let folder = i / PER_FOLDER;
    format!("d{:02}/a{:03}/c{:05}.md", folder / 20, folder, i)
}

pub fn concept_id(i: usize) -> String {
    concept_path(i).trim_end_matches(".md").to_owned()
}

/// A few KB of deterministic prose: headings, a list, links to neighbours, one citation.
fn body(i: usize, n: usize) -> String {
    let mut s = String::new();
    s.push_str(&format!("# Concept {i}\n\n"));
    let paras = 3 + i % 5; // 3..7 paragraphs of ~420 bytes: ~1.5–3.5 KB bodies
    for p in 0..paras {
        s.push_str(&format!(
            "Paragraph {p} of concept {i}. The quarterly figures are derived from the ledger \
             after reconciliation; late adjustments are booked to the period in which they are \
             approved, not the one in which they occurred. Owners review the definition every \
             quarter and record changes in the change log. Downstream dashboards read the \
             published view only, never the staging tables, so a change here reaches them \
             after the nightly refresh. See [related](/{}) for the upstream source.\n\n",
            concept_path((i + p * 7 + 1) % n)
        ));
    }
    s.push_str("## Columns\n\n");
    for c in 0..6 {
        s.push_str(&format!(
            "- `col_{c}`: value {c} of the record, nullable when not reported.\n"
        ));
    }
    s.push_str("\nDefined in the schema.[^schema]\n\n[^schema]: Schema of the source table\n");
    s
}

fn frontmatter(i: usize) -> String {
    format!(
        "type: BigQuery Table\n\
         title: Table {i}\n\
         description: One row per record of source {i}, reconciled nightly.\n\
         tags: [bench, domain-{}, area-{}]\n\
         status: stable\n\
         # who wrote this card\n\
         generated: {{ by: reference_agent/bench, at: 2026-06-20T22:53:05Z }}\n\
         x-opaque: keep me {i}\n\
         sources:\n  \
           - id: schema\n    \
             resource: https://example.test/schema/t{i}\n    \
             title: Schema of the source table\n",
        i % 7,
        i % 13
    )
}

/// Writes a bundle of `n` concepts plus a root `index.md`; returns its total byte size.
#[allow(clippy::disallowed_methods)] // the bench builds its own temp bundle, not a user's
pub fn generate(dir: &Path, n: usize) -> Res<u64> {
    let mut total = 0u64;
    let index = "---\nokf_version: \"0.2\"\n---\n# Bench bundle\n\nGenerated concepts.\n";
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join("index.md"), index)?;
    total += index.len() as u64;
    for i in 0..n {
        let rel = concept_path(i);
        let path = dir.join(&rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let text = format!("---\n{}---\n\n{}", frontmatter(i), body(i, n));
        total += text.len() as u64;
        std::fs::write(path, text)?;
    }
    Ok(total)
}

/// The floor: walk (sorted, root `.okf` skipped), read and SHA-256 every file once.
pub fn floor(dir: &Path) -> Res<(usize, [u8; 32])> {
    fn walk(dir: &Path, top: bool, acc: &mut (usize, [u8; 32])) -> Res<()> {
        let mut entries: Vec<_> = std::fs::read_dir(dir)?.collect::<Result<_, _>>()?;
        entries.sort_by_key(std::fs::DirEntry::file_name);
        for e in entries {
            if top && e.file_name() == ".okf" {
                continue;
            }
            let ft = e.file_type()?;
            if ft.is_dir() {
                walk(&e.path(), false, acc)?;
            } else {
                let bytes = std::fs::read(e.path())?;
                let d = digest::sha256(&bytes);
                acc.0 += 1;
                for (a, b) in acc.1.iter_mut().zip(d) {
                    *a ^= b;
                }
            }
        }
        Ok(())
    }
    let mut acc = (0usize, [0u8; 32]);
    walk(dir, true, &mut acc)?;
    Ok(acc)
}
