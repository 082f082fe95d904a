#!/usr/bin/env python3
"""Answer sizes of list_concepts and validate_bundle (spec/surface.md §18.5), in characters of
the CallToolResult line `okf-mcp call` prints, on generated bundles of 1,000 and 9,000
concepts (the same shape as tests/it/host.rs::generated_bundle). Usage, from the repository
root after `cargo build`:  python3 tests/tools/list_sizes.py [path/to/okf-mcp]
"""
import json, os, subprocess, sys, tempfile

BIN = sys.argv[1] if len(sys.argv) > 1 else "target/debug/okf-mcp"

def bundle(d, n):
    os.makedirs(os.path.join(d, "c"))
    open(os.path.join(d, "index.md"), "w").write('---\nokf_version: "0.2"\n---\n# Index\n')
    for i in range(n):
        kind = "Table" if i % 3 == 0 else "Metric"
        status = {0: "status: draft\n", 1: "status: deprecated\n"}.get(i % 4, "")
        ver = {0: "verified: { by: human:ann, at: 2026-01-01T00:00:00Z }\n",
               1: "verified: { by: process:nightly, at: 2026-01-01T00:00:00Z }\n"}.get(i % 7, "")
        open(os.path.join(d, "c", "%04d.md" % i), "w").write(
            "---\ntype: %s\ntitle: Concept %d\ndescription: Generated concept number %d.\n%stags: [t%d, common]\nstale_after: 2026-01-%02d\n%s---\n# Concept %d\n\nBody of concept %d. See [missing](missing-%d.md).\n"
            % (kind, i, i, status, i % 5, i % 28 + 1, ver, i, i, i))

def size(tool, args):
    out = subprocess.run([BIN, "call", tool, "--args", json.dumps(args)], capture_output=True, text=True)
    return len(out.stdout.rstrip("\n"))

for n in (1000, 9000):
    with tempfile.TemporaryDirectory() as t:
        b = os.path.join(t, "bundle")
        bundle(b, n)
        rows = [
            ("list_concepts (default limit 200)", size("list_concepts", {"bundle_path": b})),
            ("list_concepts limit 1000", size("list_concepts", {"bundle_path": b, "limit": 1000})),
            ("list_concepts limit 20, status draft", size("list_concepts", {"bundle_path": b, "limit": 20, "status": "draft"})),
            ("validate_bundle check_links (default limit 1000)", size("validate_bundle", {"bundle_path": b, "check_links": True})),
            ("validate_bundle check_links limit 50", size("validate_bundle", {"bundle_path": b, "check_links": True, "limit": 50})),
        ]
        for name, chars in rows:
            print("%5d concepts | %-50s | %9d chars" % (n, name, chars))
