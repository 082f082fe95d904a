//! Markdown link targets resolved to bundle paths (spec/surface.md §13.2 `broken_link`,
//! `orphan_concept`). Pure: no I/O.

/// Resolves a link target against the linking document's directory; `None` when it escapes
/// the bundle root.
///
/// `from` is the linking document's bundle-relative path (`a/b.md`), `target` a Markdown link
/// destination as written (percent-decoded here; a leading `/` is the bundle root). The
/// answer is a bundle-relative path (`a/c d.md`), not checked against any capture.
pub fn resolve_link(from: &str, target: &str) -> Option<String> {
    let decoded = percent_decode(target);
    let (base, rel): (Vec<&str>, &str) = match decoded.strip_prefix('/') {
        Some(r) => (Vec::new(), r),
        None => {
            let mut dir: Vec<&str> = from.split('/').collect();
            dir.pop();
            (dir, decoded.as_str())
        }
    };
    let mut parts: Vec<String> = base.into_iter().map(str::to_owned).collect();
    for seg in rel.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            s => parts.push(s.to_owned()),
        }
    }
    Some(parts.join("/"))
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = b
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok());
            if let Some(v) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                out.push(v);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8(out).unwrap_or_else(|_| s.to_owned())
}
