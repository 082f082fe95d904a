//! The attested-computation model (spec/concept-patch.md §2.3: [`AttestedComputation`],
//! [`Parameter`], [`Executor`], [`ComputationBody`]) and the body side of
//! `put_attested_computation` (§3.7): the `# Computation` section, its classification, the
//! body edit of inline and file mode, and the post-check helpers. Used by the concept patch
//! and by the migration (spec/migration.md §6.6).
//!
//! The section runs from a level-1 ATX heading whose text is exactly `Computation` to the
//! next level-1 ATX heading or the end of the body. Lines inside fenced code blocks and
//! indented lines (four columns or more) are never taken for headings or fences. Lines end
//! after `\n`, `\r\n` or a lone `\r` (CommonMark). Edits are one contiguous byte range of the
//! body; every byte outside it is preserved.
//!
//! # Limitations
//! Only top-level blocks are recognised: a fence or heading inside a block quote, a list item
//! or an HTML block is read as ordinary text, and setext headings never open a section.

use std::ops::Range;

/// The heading text that opens the section.
pub const SECTION_TITLE: &str = "Computation";

/// A fault of the section that rejects the patch (spec/concept-patch.md §3.7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SectionError {
    /// Several sections, prose before the fence, several fences or an indented code block
    /// (in inline mode also a prose-only section, where the fence would follow prose).
    #[error("use one fenced code block under # Computation")]
    Ambiguous,
    /// The fence in the section is never closed.
    #[error("the code fence under # Computation is not closed")]
    Unclosed,
}

impl SectionError {
    /// The rejection diagnostic code.
    #[must_use]
    pub fn code(self) -> &'static str {
        match self {
            SectionError::Ambiguous => "ambiguous_computation_section",
            SectionError::Unclosed => "unclosed_computation_fence",
        }
    }
}

/// A post-check failure after the edit (spec/concept-patch.md §3.7 "Post-check").
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PostCheckError {
    /// The document does not have the shape of the requested mode.
    #[error("the computation does not have the requested mode")]
    ModeMismatch,
    /// The mode matches, but the content, info string or path differ.
    #[error("the computation differs from the request")]
    SemanticMismatch,
}

impl PostCheckError {
    /// The rejection diagnostic code.
    #[must_use]
    pub fn code(self) -> &'static str {
        match self {
            PostCheckError::ModeMismatch => "computation_mode_mismatch",
            PostCheckError::SemanticMismatch => "computation_semantic_mismatch",
        }
    }
}

/// A fenced code block of the body (byte ranges into the body).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fence {
    /// From the start of the opening line to the end of the closing line, terminator
    /// included when present.
    pub range: Range<usize>,
    /// The bytes between the opening line and the closing line.
    pub content: Range<usize>,
    /// The info string, trimmed of spaces and tabs (`""` when none).
    pub info: String,
    /// Whether the closing line ends with a line terminator.
    pub closing_terminated: bool,
}

/// The state of the `# Computation` section of a body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Section {
    /// No `# Computation` heading.
    Absent,
    /// A section that holds only blank lines; `heading` is the heading line's range.
    Empty { heading: Range<usize> },
    /// The first non-blank content is the only fence, and there is no other code block.
    Direct { heading: Range<usize>, fence: Fence },
    /// Non-blank content but no fence and no code block.
    ProseOnly { heading: Range<usize> },
}

/// A body edit: replace `range` of the body by `replacement`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BodyEdit {
    pub range: Range<usize>,
    pub replacement: String,
}

impl BodyEdit {
    /// The body with this edit applied; bytes outside `range` are copied unchanged.
    #[must_use]
    pub fn apply(&self, body: &str) -> String {
        let mut s = String::with_capacity(body.len() + self.replacement.len());
        s.push_str(&body[..self.range.start]);
        s.push_str(&self.replacement);
        s.push_str(&body[self.range.end..]);
        s
    }
}

#[derive(Debug, Clone, Copy)]
struct Line {
    start: usize,
    /// End of the content, before the terminator.
    content_end: usize,
    /// End including the terminator.
    end: usize,
}

fn lines(body: &str) -> Vec<Line> {
    let b = body.as_bytes();
    let mut out = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\n' => {
                out.push(Line {
                    start,
                    content_end: i,
                    end: i + 1,
                });
                i += 1;
                start = i;
            }
            b'\r' => {
                let end = if b.get(i + 1) == Some(&b'\n') {
                    i + 2
                } else {
                    i + 1
                };
                out.push(Line {
                    start,
                    content_end: i,
                    end,
                });
                i = end;
                start = i;
            }
            _ => i += 1,
        }
    }
    if start < b.len() {
        out.push(Line {
            start,
            content_end: b.len(),
            end: b.len(),
        });
    }
    out
}

/// Leading indentation in columns (tab stops of 4) and the byte index after it.
fn indent(s: &str) -> (usize, usize) {
    let mut cols = 0;
    for (i, c) in s.char_indices() {
        match c {
            ' ' => cols += 1,
            '\t' => cols += 4 - cols % 4,
            _ => return (cols, i),
        }
    }
    (cols, s.len())
}

fn is_blank(s: &str) -> bool {
    s.chars().all(|c| c == ' ' || c == '\t')
}

/// An opening fence: (delimiter, run length, info string).
fn opening_fence(s: &str) -> Option<(char, usize, &str)> {
    let (cols, at) = indent(s);
    if cols > 3 {
        return None;
    }
    let rest = &s[at..];
    let ch = rest.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let run = rest.chars().take_while(|c| *c == ch).count();
    if run < 3 {
        return None;
    }
    let info = &rest[run..];
    if ch == '`' && info.contains('`') {
        return None;
    }
    Some((ch, run, info.trim_matches([' ', '\t'])))
}

fn closes(s: &str, ch: char, len: usize) -> bool {
    let (cols, at) = indent(s);
    if cols > 3 {
        return false;
    }
    let rest = &s[at..];
    let run = rest.chars().take_while(|c| *c == ch).count();
    run >= len && is_blank(&rest[run..])
}

/// The text of a level-1 ATX heading line, or `None`.
fn h1_text(s: &str) -> Option<&str> {
    let (cols, at) = indent(s);
    if cols > 3 {
        return None;
    }
    let rest = s[at..].strip_prefix('#')?;
    if !(rest.is_empty() || rest.starts_with([' ', '\t'])) {
        return None;
    }
    let t = rest.trim_matches([' ', '\t']);
    // An optional closing sequence of `#`s preceded by a space or tab (or the whole text).
    let stripped = t.trim_end_matches('#');
    if stripped.is_empty() {
        return Some("");
    }
    if stripped.len() < t.len() && stripped.ends_with([' ', '\t']) {
        return Some(stripped.trim_end_matches([' ', '\t']));
    }
    Some(t)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Blank,
    /// A line of non-code content outside fences.
    Text,
    /// A level-1 heading; `true` when its text is `Computation`.
    H1(bool),
    /// Part of a fence: index into the fence list.
    Fence(usize),
}

struct Scan {
    lines: Vec<Line>,
    kinds: Vec<Kind>,
    /// (first line, closing line or `None` when unclosed, delimiter info).
    fences: Vec<(usize, Option<usize>, String)>,
}

fn scan(body: &str) -> Scan {
    let lines = lines(body);
    let mut kinds = Vec::with_capacity(lines.len());
    let mut fences: Vec<(usize, Option<usize>, String)> = Vec::new();
    let mut open: Option<(char, usize)> = None;
    for (n, l) in lines.iter().enumerate() {
        let s = &body[l.start..l.content_end];
        if let Some((ch, len)) = open {
            let idx = fences.len() - 1;
            if closes(s, ch, len) {
                fences[idx].1 = Some(n);
                open = None;
            }
            kinds.push(Kind::Fence(idx));
            continue;
        }
        if let Some((ch, len, info)) = opening_fence(s) {
            fences.push((n, None, info.to_owned()));
            open = Some((ch, len));
            kinds.push(Kind::Fence(fences.len() - 1));
        } else if is_blank(s) {
            kinds.push(Kind::Blank);
        } else if let Some(t) = h1_text(s) {
            kinds.push(Kind::H1(t == SECTION_TITLE));
        } else {
            kinds.push(Kind::Text);
        }
    }
    Scan {
        lines,
        kinds,
        fences,
    }
}

/// Classifies the `# Computation` section of `body` (spec/concept-patch.md §3.7 table).
///
/// # Errors
/// [`SectionError::Ambiguous`] for several sections, prose before the first fence, several
/// fences or an indented code block; [`SectionError::Unclosed`] for an unclosed fence.
pub fn classify(body: &str) -> Result<Section, SectionError> {
    let sc = scan(body);
    let mut headings = sc
        .kinds
        .iter()
        .enumerate()
        .filter(|(_, k)| **k == Kind::H1(true))
        .map(|(n, _)| n);
    let Some(h) = headings.next() else {
        return Ok(Section::Absent);
    };
    if headings.next().is_some() {
        return Err(SectionError::Ambiguous);
    }
    let heading = sc.lines[h].start..sc.lines[h].end;
    let end = (h + 1..sc.lines.len())
        .find(|&n| matches!(sc.kinds[n], Kind::H1(_)))
        .unwrap_or(sc.lines.len());

    let mut fence_ids: Vec<usize> = Vec::new();
    let mut first_content: Option<Kind> = None;
    let mut in_paragraph = false;
    for n in h + 1..end {
        let k = sc.kinds[n];
        match k {
            Kind::Blank => in_paragraph = false,
            Kind::Fence(id) => {
                in_paragraph = false;
                if !fence_ids.contains(&id) {
                    fence_ids.push(id);
                }
            }
            Kind::Text => {
                let l = sc.lines[n];
                let (cols, _) = indent(&body[l.start..l.content_end]);
                if cols >= 4 && !in_paragraph {
                    return Err(SectionError::Ambiguous);
                }
                in_paragraph = true;
            }
            Kind::H1(_) => {}
        }
        if first_content.is_none() && k != Kind::Blank {
            first_content = Some(k);
        }
    }
    if fence_ids
        .iter()
        .any(|&id| sc.fences.get(id).is_some_and(|f| f.1.is_none()))
    {
        return Err(SectionError::Unclosed);
    }
    match (fence_ids.as_slice(), first_content) {
        ([], None) => Ok(Section::Empty { heading }),
        ([], Some(_)) => Ok(Section::ProseOnly { heading }),
        ([id], Some(Kind::Fence(first))) if *id == first => {
            let (open, close, info) = &sc.fences[*id];
            let close = close.ok_or(SectionError::Unclosed)?;
            let (o, c) = (sc.lines[*open], sc.lines[close]);
            Ok(Section::Direct {
                heading,
                fence: Fence {
                    range: o.start..c.end,
                    content: o.end..c.start,
                    info: info.clone(),
                    closing_terminated: c.end > c.content_end,
                },
            })
        }
        _ => Err(SectionError::Ambiguous),
    }
}

fn longest_run(s: &str, ch: char) -> usize {
    let mut best = 0;
    let mut cur = 0;
    for c in s.chars() {
        if c == ch {
            cur += 1;
            best = best.max(cur);
        } else {
            cur = 0;
        }
    }
    best
}

fn ends_with_break(s: &str) -> bool {
    s.ends_with('\n') || s.ends_with('\r')
}

/// Renders the fence of spec/concept-patch.md §3.7 "Fence rendering": backtick delimiter, or
/// `~` if `language` contains a backtick; length max(3, longest run of the delimiter in the
/// content + 1); info = `language`; content verbatim plus `nl` when it does not end with a
/// line break (empty content: no content line); closing fence of the same length; every
/// generated line break is `nl`. The result ends with `nl`.
#[must_use]
pub fn render_fence(code: &str, language: Option<&str>, nl: &str) -> String {
    let ch = if language.is_some_and(|l| l.contains('`')) {
        '~'
    } else {
        '`'
    };
    let len = (longest_run(code, ch) + 1).max(3);
    let fence: String = std::iter::repeat_n(ch, len).collect();
    let mut s = String::with_capacity(code.len() + 2 * len + 16);
    s.push_str(&fence);
    s.push_str(language.unwrap_or(""));
    s.push_str(nl);
    if !code.is_empty() {
        s.push_str(code);
        if !ends_with_break(code) {
            s.push_str(nl);
        }
    }
    s.push_str(&fence);
    s.push_str(nl);
    s
}

/// The body edit of `put_attested_computation` (spec/concept-patch.md §3.7 body table), or
/// `None` when the body stays as it is. `crlf` is the document's newline style (`\r\n` iff
/// the document contains one, §4.1 rule 5).
///
/// Inline: no section → `# Computation`, a blank line and the fence appended (after a blank
/// line unless the body is empty or already ends with one); empty section → a blank line and
/// the fence after the heading; direct fence → replaced (keeping a missing final line break
/// of its closing line). File: direct fence → removed with one following blank line, and the
/// heading line too when the section then holds only blank lines; otherwise no change.
///
/// # Errors
/// [`SectionError`] from [`classify`]; in inline mode also `Ambiguous` for a prose-only
/// section, and `Unclosed` when there is no section and an unclosed fence anywhere in the
/// body would swallow the appended one.
pub fn body_edit(
    body: &str,
    crlf: bool,
    desired: &ComputationBody,
) -> Result<Option<BodyEdit>, SectionError> {
    let nl = if crlf { "\r\n" } else { "\n" };
    let section = classify(body)?;
    match desired {
        ComputationBody::Inline { code, language } => {
            let fence = render_fence(code, language.as_deref(), nl);
            let edit = match section {
                Section::Absent => {
                    // An unclosed fence elsewhere would swallow the appended section.
                    if scan(body).fences.iter().any(|f| f.1.is_none()) {
                        return Err(SectionError::Unclosed);
                    }
                    let prefix = if body.is_empty() {
                        ""
                    } else if !ends_with_break(body) {
                        if crlf {
                            "\r\n\r\n"
                        } else {
                            "\n\n"
                        }
                    } else if last_line_blank(body) {
                        ""
                    } else {
                        nl
                    };
                    BodyEdit {
                        range: body.len()..body.len(),
                        replacement: format!("{prefix}# {SECTION_TITLE}{nl}{nl}{fence}"),
                    }
                }
                Section::Empty { heading } => {
                    let h = &body[heading.clone()];
                    let lead = if ends_with_break(h) {
                        nl.to_owned()
                    } else {
                        format!("{nl}{nl}")
                    };
                    BodyEdit {
                        range: heading.end..heading.end,
                        replacement: format!("{lead}{fence}"),
                    }
                }
                Section::Direct { fence: f, .. } => {
                    // Desired state: a fence whose content and info already equal the
                    // request stays as it is, whatever newline style it was rendered with.
                    if post_check(body, None, desired).is_ok() {
                        return Ok(None);
                    }
                    let mut replacement = fence;
                    if !f.closing_terminated {
                        replacement.truncate(replacement.len() - nl.len());
                    }
                    BodyEdit {
                        range: f.range,
                        replacement,
                    }
                }
                Section::ProseOnly { .. } => return Err(SectionError::Ambiguous),
            };
            Ok((body[edit.range.clone()] != edit.replacement).then_some(edit))
        }
        ComputationBody::File { .. } => {
            let Section::Direct { heading, fence } = section else {
                return Ok(None);
            };
            let ls = lines(body);
            let mut removed_end = fence.range.end;
            if let Some(next) = ls.iter().find(|l| l.start == fence.range.end) {
                if is_blank(&body[next.start..next.content_end]) {
                    removed_end = next.end;
                }
            }
            // The rest of the section after the removal, up to the next level-1 heading.
            let rest_blank = ls
                .iter()
                .filter(|l| l.start >= removed_end)
                .take_while(|l| h1_text(&body[l.start..l.content_end]).is_none())
                .all(|l| is_blank(&body[l.start..l.content_end]));
            if rest_blank {
                // Remove the heading line as well; the blank lines between it and the fence
                // stay.
                Ok(Some(BodyEdit {
                    range: heading.start..removed_end,
                    replacement: body[heading.end..fence.range.start].to_owned(),
                }))
            } else {
                Ok(Some(BodyEdit {
                    range: fence.range.start..removed_end,
                    replacement: String::new(),
                }))
            }
        }
    }
}

fn last_line_blank(body: &str) -> bool {
    lines(body)
        .last()
        .is_some_and(|l| is_blank(&body[l.start..l.content_end]))
}

/// The post-check of spec/concept-patch.md §3.7 on the edited body and the re-parsed
/// frontmatter's `computation` value (`None` when the key is absent).
///
/// Inline: exactly one direct fence whose content (ignoring one line break added by
/// rendering) and info equal the request, and no `computation` key. File: no fence in the
/// section and `computation` equal to the path.
///
/// # Errors
/// [`PostCheckError::ModeMismatch`] when the shape is that of another mode (or the section is
/// ambiguous); [`PostCheckError::SemanticMismatch`] when the content, info or path differ.
pub fn post_check(
    body: &str,
    computation_key: Option<&str>,
    desired: &ComputationBody,
) -> Result<(), PostCheckError> {
    let section = classify(body).map_err(|_| PostCheckError::ModeMismatch)?;
    match desired {
        ComputationBody::Inline { code, language } => {
            let Section::Direct { fence, .. } = section else {
                return Err(PostCheckError::ModeMismatch);
            };
            if computation_key.is_some() {
                return Err(PostCheckError::ModeMismatch);
            }
            let content = &body[fence.content.clone()];
            let content_ok = content == code
                || (!ends_with_break(code)
                    && [content.strip_suffix("\r\n"), content.strip_suffix('\n')]
                        .contains(&Some(code.as_str())));
            if !content_ok || fence.info != language.as_deref().unwrap_or("") {
                return Err(PostCheckError::SemanticMismatch);
            }
            Ok(())
        }
        ComputationBody::File { path } => {
            if matches!(section, Section::Direct { .. }) {
                return Err(PostCheckError::ModeMismatch);
            }
            match computation_key {
                None => Err(PostCheckError::ModeMismatch),
                Some(k) if k != path => Err(PostCheckError::SemanticMismatch),
                Some(_) => Ok(()),
            }
        }
    }
}

/// Maximum bytes of `inline_computation`: 1 MiB (spec/concept-patch.md §2.3).
pub const MAX_INLINE_COMPUTATION: usize = 1024 * 1024;

/// One computation parameter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Parameter {
    /// Unique within the computation.
    pub name: String,
    /// The parameter type, as the runtime reads it (wire `type`).
    pub type_: String,
    /// Whether the parameter must be supplied.
    pub required: bool,
}

/// `executor` payload: `resource` and a non-empty list of unique receipt entries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Executor {
    /// Run instructions or code (passive data, never executed).
    pub resource: String,
    /// Fields a run must return: 1..256, unique.
    pub receipt: Vec<String>,
}

/// Where the computation lives (the `mode` coupling of spec/concept-patch.md §2.3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ComputationBody {
    /// `mode: "inline"`: the fenced code under `# Computation` (`code` may be `""`).
    Inline {
        code: String,
        language: Option<String>,
    },
    /// `mode: "file"`: the `computation` key names the file.
    File { path: String },
}

/// `attested_computation` payload (spec/concept-patch.md §2.3, §3.7).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttestedComputation {
    /// How the computation is run (OKF v0.2 §10.2).
    pub runtime: String,
    /// Desired parameters, in order.
    pub parameters: Vec<Parameter>,
    /// The executor contract.
    pub executor: Executor,
    /// `attester.resource`.
    /// `attester.resource`.
    pub attester_resource: String,
    /// Inline fence or computation file path.
    pub body: ComputationBody,
}

impl AttestedComputation {
    /// The wire `mode`: `inline` or `file`.
    #[must_use]
    pub fn mode(&self) -> &'static str {
        match self.body {
            ComputationBody::Inline { .. } => "inline",
            ComputationBody::File { .. } => "file",
        }
    }
}

#[cfg(test)]
#[path = "computation_tests.rs"]
mod tests;
