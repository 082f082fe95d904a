#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets into fuzz/corpus/<target>/ (not committed).

Seeds come from the repository's fixtures (fixtures/bundles/) and the public corpus
(../shared/corpus/, beside the repository), plus a few hand-written argument objects and
JSON-RPC lines. libFuzzer then keeps its own finds in the same directories.
Run from anywhere:  python3 fuzz/seeds.py
"""
import hashlib
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
SOURCES = [os.path.join(REPO, "fixtures", "bundles"),
           os.path.join(REPO, "..", "shared", "corpus")]
MAX_FILES = 600
MAX_BYTES = 64 * 1024


def documents():
    out = []
    for src in SOURCES:
        for d, dirs, files in os.walk(src):
            dirs.sort()
            for f in sorted(files):
                if f.endswith(".md"):
                    p = os.path.join(d, f)
                    if os.path.getsize(p) <= MAX_BYTES:
                        out.append(p)
    if not out:
        sys.exit("fuzz/seeds.py: no seed documents found (fixtures/bundles, ../shared/corpus)")
    # An even spread when there are more than MAX_FILES.
    step = max(1, len(out) // MAX_FILES)
    return out[::step]


def split(data):
    """(frontmatter, body) like okf::document::split, or (None, data)."""
    for fence in (b"---\n", b"---\r\n"):
        if data.startswith(fence):
            rest = data[len(fence):]
            for close in (b"\n---\n", b"\r\n---\r\n", b"\n---\r\n"):
                i = rest.find(close)
                if i >= 0:
                    return rest[:i + 1], rest[i + len(close):]
    return None, data


def write(target, data):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    name = hashlib.sha1(data).hexdigest()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


ARGS = [
    {"bundle_path": "/b", "timestamp_policy": "remove_after_copy", "citation_mappings": []},
    {"bundle_path": "/b", "timestamp_policy": "preserve", "generated_by": "agent/1.0",
     "citation_mappings": [{"path": "t/a.md", "claim_markers": "ignore", "trailing_content": "keep",
                            "entries": [{"legacy_number": 1, "source_id": "spec", "title": "Spec",
                                         "resource": "https://x.test/s", "inline_note": "a.md"},
                                        {"legacy_entry": "[B](b.md)", "source_id": "b"}]}],
     "generated_at": [{"concept_id": "t/a", "at": "2026-01-01T00:00:00Z"}],
     "computations": [{"concept_id": "q/a", "contract": {"mode": "file", "runtime": "sql",
                        "parameters": [{"name": "y", "type": "integer", "required": True}],
                        "computation_path": "a.sql", "executor": {"resource": "r.md", "receipt": ["j"]},
                        "attester": {"resource": "a.py"}}, "asset": {"path": "q/a.sql", "content": ""}}]},
    {"bundle_path": "/b", "concept_id": "tables/orders", "expected_revision": "sha256:" + "0" * 64,
     "operations": [{"op": "set_lifecycle", "status": "deprecated", "stale_after": None},
                    {"op": "put_source", "source": {"id": "s", "resource": "https://e.test"}}]},
    {"bundle_path": "/b", "path": "a.md", "content": "---\ntype: T\n---\nbody\n", "limit": 10,
     "strict": True, "target_version": "0.2", "temporal_profile": "instant-0b87c52"},
    {"bundle_path": "/b", "a": [1, -2.5e3, True, False, None, "\u00e9\\n\"", {"b": {}}]},
]

LINES = [
    b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}',
    b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
    b'{"jsonrpc":"2.0","id":2,"method":"tools/list"}',
    b'{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"list_concepts","arguments":{"bundle_path":"/b"},"_meta":{"progressToken":7}}}',
    b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"apply_v02_migration","arguments":{"bundle_path":"/b","a":[1,2,{"b":null}]}}}',
    b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3,"reason":"r"}}',
    b'\xef\xbb\xbf{"jsonrpc":"2.0","id":4,"method":"ping"}\r',
    b'[{"jsonrpc":"2.0","id":5,"method":"ping"}]',
    b'{"jsonrpc":"2.0","id":6,"result":{}}',
    b'not json',
]


def main():
    docs = documents()
    for p in docs:
        with open(p, "rb") as f:
            data = f.read()
        write("frontmatter_yaml", data)
        fm, body = split(data)
        write("citations", body)
        write("markdown_oracle", body)
        if fm is not None:
            for program in (b"", b"\x00\x01\x00", b"\x03\x02\x05\x01", b"\x01\xc8\x03abc"):
                write("editor", program + b"\x00" + fm)
    for a in ARGS:
        write("raw_arguments", json.dumps(a).encode())
        write("raw_arguments", json.dumps(a, indent=1, ensure_ascii=False).encode())
    for line in LINES:
        write("framing", line)
    write("framing", b"\n".join(LINES))
    print(f"fuzz/seeds.py: seeds from {len(docs)} documents")


main()
