"""Independent oracles of the Phase-4 tools (spec/surface.md §14.5 rule 3, §14.6 rules 1-3;
§14.3), driven by tests/it/phase4_oracle.rs. Written from the spec, sharing no code with the
Rust implementation.

Usage:
  phase4_oracle.py bm25 <plan.json>
      plan: {"bundles": [{"root": dir, "queries": [q, ...]}, ...]}
      prints {"results": [[hits per query] per bundle]}, each hit
      {"concept_id", "line_start", "line_end", "heading", "score"} in the order of §14.5
      rule 3 (score desc, concept id, line_start), every section holding all terms.
  phase4_oracle.py expand <graph.json>...
      expands each JSON-LD document with pyld and a document loader that refuses every
      fetch; prints {"expanded": [node count per file], "errors": [...]}.

The term model: NFC(casefold(NFC(text))) with Python's unicodedata and str.casefold (full
case folding); a term is a maximal run of characters of general category L*, M* or N*.
"""

import json
import math
import os
import sys
import unicodedata

K1 = 1.2
B = 0.75


def fold(text):
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", text).casefold())


def terms(text):
    out, cur = [], []
    for ch in fold(text):
        if unicodedata.category(ch)[0] in "LMN":
            cur.append(ch)
        elif cur:
            out.append("".join(cur))
            cur = []
    if cur:
        out.append("".join(cur))
    return out


def distinct(ts):
    seen, out = set(), []
    for t in ts:
        if t not in seen:
            seen.add(t)
            out.append(t)
    return out


# --- documents --------------------------------------------------------------------------------


def split(text):
    """(title or None, body line list, 1-based line number of the first body line)."""
    lines = text.split("\n")
    title = None
    if lines and lines[0].rstrip("\r") == "---":
        for i in range(1, len(lines)):
            if lines[i].rstrip("\r") == "---":
                for fm in lines[1:i]:
                    if fm.startswith("title: "):
                        v = fm[len("title: "):].rstrip("\r")
                        title = json.loads(v) if v.startswith('"') else v
                        title = title if title else None
                body = lines[i + 1:]
                return title, body, i + 2
        raise ValueError("unterminated frontmatter")
    return None, lines, 1


def indent_cols(line):
    col = 0
    for ch in line:
        if ch == " ":
            col += 1
        elif ch == "\t":
            col += 4 - col % 4
        else:
            break
    return col


def atx(line):
    s = line.lstrip(" ")
    if len(line) - len(s) > 3:
        return None
    n = len(s) - len(s.lstrip("#"))
    if n == 0 or n > 6:
        return None
    rest = s[n:]
    if rest and rest[0] not in " \t":
        return None
    content = rest.strip(" \t")
    stripped = content.rstrip("#")
    if len(stripped) < len(content) and (stripped == "" or stripped[-1] in " \t"):
        content = stripped.rstrip(" \t")
    return content


def fence(line):
    s = line.lstrip(" ")
    if len(line) - len(s) > 3:
        return None
    for c in "`~":
        n = len(s) - len(s.lstrip(c))
        if n >= 3:
            if c == "`" and "`" in s[n:]:
                return None
            return (c, n)
    return None


def is_list_item(line):
    s = line.lstrip(" ")
    if len(line) - len(s) > 3:
        return False
    if s[:1] in ("-", "*", "+") and (len(s) == 1 or s[1] in " \t"):
        return True
    d = len(s) - len(s.lstrip("0123456789"))
    return 1 <= d <= 9 and s[d:d + 1] in (".", ")") and (len(s) == d + 1 or s[d + 1] in " \t")


def underline(line):
    s = line.lstrip(" ")
    if len(line) - len(s) > 3:
        return None
    s = s.rstrip(" \t")
    if s and set(s) == {"="}:
        return 1
    if s and set(s) == {"-"}:
        return 2
    return None


def thematic(line):
    s = line.lstrip(" ")
    if len(line) - len(s) > 3:
        return False
    marks = [c for c in s if c not in " \t"]
    return len(marks) >= 3 and marks[0] in "-*_" and all(c == marks[0] for c in marks)


def sections(body):
    """[(heading text, first index, last heading index, end index)] over body lines (the
    generator's constructs: ATX, setext, fences, indented code, lists, paragraphs)."""
    heads = []  # (first, last, text)
    in_fence = None
    para = None  # (start, ok)
    prev_blank = True
    in_list = False
    for i, raw in enumerate(body):
        line = raw.rstrip("\r")
        blank = line.strip(" \t") == ""
        if in_fence:
            c, n = in_fence
            s = line.lstrip(" ")
            if len(line) - len(s) <= 3 and s.startswith(c * n) and s.strip(" \t").strip(c) == "":
                in_fence = None
            continue
        if blank:
            para = None
            prev_blank = True
            continue
        if indent_cols(line) >= 4 and para is None and not in_list:
            prev_blank = False
            continue
        f = fence(line)
        if f:
            in_fence = f
            para = None
            continue
        a = atx(line)
        if a is not None:
            heads.append((i, i, a))
            para = None
            in_list = False
            continue
        if para is not None:
            start, ok = para
            lvl = underline(line)
            if ok and lvl:
                text = "\n".join(l.rstrip("\r").strip(" \t") for l in body[start:i])
                heads.append((start, i, text))
                para = None
                continue
            if thematic(line):
                para = None
                continue
            para = (start, ok and not is_list_item(line))
        elif not thematic(line):
            para = (i, not is_list_item(line))
        if is_list_item(line):
            in_list = True
        elif indent_cols(line) == 0 and prev_blank:
            in_list = False
        prev_blank = False
    out = []
    first = heads[0][0] if heads else len(body)
    # A trailing "" element after the final newline is not a line.
    n = len(body) - 1 if body and body[-1] == "" else len(body)
    if first > 0:
        out.append(("", 0, -1, min(first, n)))
    for k, (f, l, t) in enumerate(heads):
        end = heads[k + 1][0] if k + 1 < len(heads) else n
        out.append((t, f, l, end))
    return out


def concept_files(root):
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith(".")]
        for f in filenames:
            if not f.endswith(".md") or f in ("index.md", "log.md") or f.startswith("."):
                continue
            p = os.path.join(dirpath, f)
            rel = os.path.relpath(p, root).replace(os.sep, "/")
            out.append((rel[:-3], p))
    return sorted(out, key=lambda x: x[0].encode())


def bm25(root, query):
    q = distinct(terms(query))
    secs = []  # (id, line_start, line_end, heading, tf list, length)
    for cid, path in concept_files(root):
        with open(path, encoding="utf-8", newline="") as fh:
            text = fh.read()
        title, body, base = split(text)
        title_text = title if title is not None else cid.rsplit("/", 1)[-1]
        tt = terms(title_text)
        for heading, first, last, end in sections(body):
            ht = terms(heading)
            bt = terms("\n".join(body[last + 1:end]))
            if not ht and not bt:
                continue
            tf = [bt.count(t) + 3 * ht.count(t) + 2 * tt.count(t) for t in q]
            length = len(bt) + 3 * len(ht) + 2 * len(tt)
            secs.append((cid, base + first, base + end - 1, heading, tf, length))
    n_sec = len(secs)
    if n_sec == 0 or not q:
        return []
    avgdl = sum(s[5] for s in secs) / n_sec
    df = [sum(1 for s in secs if s[4][i] > 0) for i in range(len(q))]
    idf = [math.log(1 + (n_sec - n + 0.5) / (n + 0.5)) for n in df]
    hits = []
    for cid, ls, le, heading, tf, length in secs:
        if not all(f > 0 for f in tf):
            continue
        norm = K1 * (1 - B + B * length / avgdl)
        score = sum(idf[i] * tf[i] * (K1 + 1) / (tf[i] + norm) for i in range(len(q)))
        hits.append({"concept_id": cid, "line_start": ls, "line_end": le, "heading": heading, "score": score})
    hits.sort(key=lambda h: (-h["score"], h["concept_id"].encode(), h["line_start"]))
    return hits


def expand(paths):
    from pyld import jsonld

    def refuse(url, options=None):
        raise RuntimeError("document loading refused: " + url)

    jsonld.set_document_loader(refuse)
    counts, errors = [], []
    for p in paths:
        with open(p, encoding="utf-8") as fh:
            doc = json.load(fh)
        try:
            out = jsonld.expand(doc, {"documentLoader": refuse})
            counts.append(len(out))
        except Exception as e:  # noqa: BLE001 - reported to the Rust test
            counts.append(-1)
            errors.append("%s: %s" % (os.path.basename(p), e))
    return {"expanded": counts, "errors": errors}


def main():
    if sys.argv[1] == "bm25":
        with open(sys.argv[2], encoding="utf-8") as fh:
            plan = json.load(fh)
        results = [[bm25(b["root"], q) for q in b["queries"]] for b in plan["bundles"]]
        print(json.dumps({"results": results}))
    elif sys.argv[1] == "expand":
        print(json.dumps(expand(sys.argv[2:])))
    else:
        sys.exit("unknown mode")


if __name__ == "__main__":
    main()
