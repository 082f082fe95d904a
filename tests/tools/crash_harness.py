#!/usr/bin/env python3
"""External crash harness (issue 12, docs/reliability.md §3): SIGKILLs a real `okf-mcp call`
apply at random moments and checks the store's promises with no test hooks.

The binary is a release build without the `fault-injection` feature (`cargo build
--release`). For each kill the harness takes a new copy of the workflow's bundle, starts the
apply with the arguments its preview authorised, and kills it:

- `random`: after a random delay over 0-120 % of an uninterrupted apply's wall time;
- `journal`: right after `.okf/transactions/<txn>.json` appears (the commit point), plus a
  random 0-3 ms;
- `recovery`: as `journal`, then the replay that recovers the commit is killed too, after a
  random delay over 0-100 % of the apply's wall time.

After each kill, before anything else opens the store:
1. every visible file (`.okf/` excluded) is wholly its pre or its post bytes, and no path is
   added or lost other than the ones the plan writes;
2. the root `index.md` is never ahead: when it holds its post bytes, so does every file.
Then the exact replay must answer `applied`, equal to the uninterrupted apply's answer but for
its diagnostics (revisions, digests, paths), leave exactly the
post-state, one receipt, and no journal or staging entry; a second replay must answer the
identical result with `receipt_replayed` and write nothing (same inodes, same receipt bytes).

Workflows (`--workflow`): `migration` (a copy of ../shared/corpus/knowledge-catalog/v0.1/
stackoverflow, migrated with its own proposals: about 50 files and the root index per apply),
`migration-agent` (MIG-44: the generated bundle named by `--bundle`, about 5,000 documents,
migrated by the four calls of spec/migration.md §12.7 rule 6: proposals accepted by digest,
the apply without proof),
`patch` (`apply_concept_patch` deprecating every concept of fixtures/bundles/patch-ext) and
`temporal` (`apply_temporal_upgrade` of fixtures/bundles/temporal-date, every legacy date
mapped to midnight UTC). A workflow is a function below returning the bundle and the apply
arguments; a new one plugs in the same way.

`--warm` (issue 24, spec/store.md §17): one long-running `okf-mcp serve` (its capture cache
on) previews every copy. Before the kill the copy is aged past the racy window (2.1 s) and its
root `index.md` rewritten with its own bytes, so the server's second preview takes every other
file from its cache; after the kill, and after the replay, the warm preview must equal a cold
`okf-mcp call` preview of the same tree (`structuredContent`, exactly). The last line adds how
many files the warm captures took from the cache (it must be more than none).

`--faults` (issue 25 item 6, root only; without root it prints why and exits 0): instead of
kills, `--kills` trials each plant one permission fault (`chmod 0555`, `chattr +i`, a
read-only bind mount, in turn) on one of `.okf/receipts`, `.okf/transactions`,
`.okf/staging`, `.okf/capabilities` and a target directory. Even trials stop the apply right
after its journal appears, plant the fault and let it go on: the answer is `applied` with
the post-state and a receipt, or a retryable error that names a path; odd trials plant it
after the apply: the exact replay answers `receipt_replayed` and writes nothing. Every trial
then removes the fault: the replay applies, leaves the post-state, one receipt and no
journal, and a second replay writes nothing.

Usage:
  python3 tests/tools/crash_harness.py --bin target/release/okf-mcp [--workflow migration]
      [--kills 100] [--seed 1] [--modes random,journal,recovery] [--bundle DIR] [--faults]
      [--warm]
Exit status 0 when every kill kept every promise; the last line sums up the run.
"""
import argparse
import glob
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = os.path.join(REPO, "..", "shared", "corpus", "knowledge-catalog")


class Failure(Exception):
    pass


def call(binary, tool, args):
    """Runs one tool; returns (structuredContent, isError)."""
    p = subprocess.run([binary, "call", tool, "--args-file", "-"], input=json.dumps(args).encode(),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
    try:
        out = json.loads(p.stdout)
    except ValueError as e:
        raise Failure(f"{tool}: no JSON result (exit {p.returncode}): {p.stderr[-400:]!r}") from e
    return out.get("structuredContent", {}), bool(out.get("isError"))


class WarmServer:
    """One `okf-mcp serve` over stdio, its capture cache on; its debug events (counts only)
    go to a file beside the work dir, read once it has stopped."""

    def __init__(self, binary, work):
        self.log = work + ".warm.log"
        env = dict(os.environ, RUST_LOG="okf_mcp::store::capture=debug")
        self.p = subprocess.Popen([binary, "serve"], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=open(self.log, "w"), env=env)
        self.next_id = 1
        self.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                    "clientInfo": {"name": "crash-harness", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, msg):
        self.p.stdin.write((json.dumps(msg) + "\n").encode())
        self.p.stdin.flush()

    def request(self, method, params):
        i = self.next_id
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": i, "method": method, "params": params})
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise Failure("warm server: stdout closed")
            m = json.loads(line)
            if m.get("id") == i:
                return m

    def call(self, tool, args):
        m = self.request("tools/call", {"name": tool, "arguments": args})
        r = m.get("result", {})
        return r.get("structuredContent", {}), bool(r.get("isError"))

    def stop(self):
        """Closes stdin, waits, and returns the files the warm captures took from the cache."""
        self.p.stdin.close()
        self.p.wait(timeout=60)
        total = 0
        with open(self.log, encoding="utf-8") as fh:
            for line in fh:
                if "reused_files=" in line:
                    total += int(line.split("reused_files=")[1].split()[0])
        os.unlink(self.log)
        return total


def preview_of(tool, args):
    """The preview tool and arguments behind an apply: the same call without what the
    preview returned."""
    keep = {k: v for k, v in args.items()
            if not k.startswith("expected_") and k not in ("proof", "base_revision", "plan_digest")}
    return tool.replace("apply_", "preview_", 1), keep


def warm_equals_cold(server, binary, tool, args, what):
    warm, werr = server.call(tool, args)
    cold, cerr = call(binary, tool, args)
    if (warm, werr) != (cold, cerr):
        raise Failure(f"{what}: the warm {tool} differs from the cold one: {warm} != {cold}")


def visible(root):
    """{relative path: bytes} of the visible tree (`.okf/` skipped)."""
    out = {}
    for d, dirs, files in os.walk(root):
        rel = os.path.relpath(d, root)
        if rel == ".":
            dirs[:] = [x for x in dirs if x != ".okf"]
        for f in files:
            p = os.path.join(d, f)
            with open(p, "rb") as fh:
                out[os.path.normpath(os.path.join(rel, f))] = fh.read()
    return out


def inodes(root):
    return {p: os.stat(os.path.join(root, p)).st_ino for p in visible(root)}


def copy(src, dst):
    shutil.copytree(src, dst, symlinks=True)


def migration_workflow(binary, work):
    src = os.path.join(CORPUS, "v0.1", "stackoverflow")
    if not os.path.isfile(os.path.join(src, "index.md")):
        raise Failure(f"missing corpus bundle {src}")
    base = os.path.join(work, "template")
    copy(src, base)
    a = {"bundle_path": base, "timestamp_policy": "remove_after_copy", "citation_mappings": []}
    p, err = call(binary, "preview_v02_migration", a)
    if err or p.get("status") != "blocked":
        raise Failure(f"first preview: {p}")
    a["citation_mappings"] = p["proposed_citation_mappings"]
    a["generated_by"] = "agent/crash-harness"
    p, err = call(binary, "preview_v02_migration", a)
    if err or p.get("status") != "applicable":
        raise Failure(f"preview with proposals: {p}")
    a.update({"expected_source": p["source"], "proof": p["proof"],
              "expected_plan_digest": p["plan_digest"]})
    return base, "apply_v02_migration", a


def patch_workflow(binary, work):
    src = os.path.join(REPO, "fixtures", "bundles", "patch-ext")
    base = os.path.join(work, "template")
    copy(src, base)
    p, err = call(binary, "list_concepts", {"bundle_path": base})
    if err:
        raise Failure(f"list_concepts: {p}")
    # One lifecycle change per concept: a multi-file apply.
    ops = [{"kind": "set_lifecycle", "concept_id": c["id"],
            "lifecycle": {"status": "deprecated", "stale_after": None}} for c in p["concepts"]]
    a = {"bundle_path": base, "actor": "agent/crash-harness", "operations": ops}
    p, err = call(binary, "preview_concept_patch", a)
    if err or p.get("status") != "applicable":
        raise Failure(f"patch preview: {p}")
    a.update({"expected_revision": p["base_revision"], "expected_plan_digest": p["plan_digest"]})
    return base, "apply_concept_patch", a


def temporal_workflow(binary, work):
    src = os.path.join(REPO, "fixtures", "bundles", "temporal-date")
    base = os.path.join(work, "template")
    copy(src, base)
    a = {"bundle_path": base, "id": "crash-harness", "actor": "agent/crash-harness"}
    p, err = call(binary, "preview_temporal_upgrade", a)
    if err or p.get("status") != "incomplete":
        raise Failure(f"temporal preview without mappings: {p}")
    a["mappings"] = [dict(u, to=u["from"] + "T00:00:00Z") for u in p["unresolved"]]
    p, err = call(binary, "preview_temporal_upgrade", a)
    if err or p.get("status") != "ready":
        raise Failure(f"temporal preview with mappings: {p}")
    a.update({"base_revision": p["base_revision"], "plan_digest": p["plan_digest"]})
    return base, "apply_temporal_upgrade", a


def migration_agent_workflow(binary, work, bundle):
    """The four-call sequence of spec/migration.md §12.7 rule 6 on a generated bundle
    (`--bundle`, written by the ignored test
    `migration_agents::write_the_crash_harness_bundle_of_the_four_call_sequence`): the first preview,
    the preview accepting its proposals by digest, and the apply without proof that is
    killed. The apply's arguments stay small (checked: at most 4 KiB)."""
    if not bundle or not os.path.isfile(os.path.join(bundle, "index.md")):
        raise Failure(f"--bundle must name a generated bundle: {bundle!r}")
    base = os.path.join(work, "template")
    copy(bundle, base)
    a = {"bundle_path": base, "from": "0.1", "timestamp_policy": "remove_after_copy",
         "generated_by": "agent/crash-harness", "citation_mappings": []}
    p, err = call(binary, "preview_v02_migration", a)
    if err or p.get("status") != "blocked" or not p.get("proposals_digest"):
        raise Failure(f"first preview: {str(p)[:400]}")
    a.update({"accept_proposals": p["proposals_digest"], "accept_needs_review": True})
    p, err = call(binary, "preview_v02_migration", a)
    if err or p.get("status") != "applicable":
        raise Failure(f"accepting preview: {str(p)[:400]}")
    a.update({"expected_source": p["source"], "base_revision": p["base_revision"],
              "expected_plan_digest": p["plan_digest"]})
    size = len(json.dumps(dict(a, bundle_path="/" + "x" * 64)).encode())
    if size > 4096:
        raise Failure(f"the apply's arguments are {size} bytes")
    return base, "apply_v02_migration", a


WORKFLOWS = {"migration": migration_workflow, "patch": patch_workflow,
             "temporal": temporal_workflow, "migration-agent": migration_agent_workflow}


def kill_after(proc, delay):
    time.sleep(delay)
    if proc.poll() is None:
        proc.send_signal(signal.SIGKILL)
    proc.wait()
    return proc.returncode == -signal.SIGKILL


def kill_at_journal(proc, root, rng, deadline):
    """Kills `proc` just after a journal appears (or when it ends / the deadline passes)."""
    pattern = os.path.join(root, ".okf", "transactions", "txn-*.json")
    while proc.poll() is None and time.monotonic() < deadline:
        if glob.glob(pattern):
            time.sleep(rng.uniform(0, 0.003))
            break
        time.sleep(0.0002)
    if proc.poll() is None:
        proc.send_signal(signal.SIGKILL)
    proc.wait()
    return proc.returncode == -signal.SIGKILL


def spawn(binary, tool, args, stdout=subprocess.DEVNULL):
    """Starts the tool with its arguments in a file beside the bundle (never inside it)."""
    path = args["bundle_path"] + ".args.json"
    with open(path, "w", encoding="utf-8") as fh:
        json.dump(args, fh)
    return subprocess.Popen([binary, "call", tool, "--args-file", path],
                            stdout=stdout, stderr=subprocess.DEVNULL)


def check_after_kill(root, pre, post, what):
    now = visible(root)
    allowed = set(pre) | set(post)
    for p in now:
        if p not in allowed:
            raise Failure(f"{what}: unexpected visible file {p}")
    for p in set(pre) | set(post):
        if p not in now:
            if p in pre and p in post:
                raise Failure(f"{what}: {p} vanished")
            continue
        if now[p] != pre.get(p) and now[p] != post.get(p):
            raise Failure(f"{what}: {p} is neither its pre nor its post bytes")
    if now.get("index.md") == post.get("index.md") and pre.get("index.md") != post.get("index.md"):
        for p, b in post.items():
            if now.get(p) != b:
                raise Failure(f"{what}: index.md published ahead of {p}")
    return "pre" if now == pre else ("post" if now == post else "mixed")


def store_leftovers(root):
    okf = os.path.join(root, ".okf")
    left = glob.glob(os.path.join(okf, "transactions", "*")) + glob.glob(os.path.join(okf, "staging", "*"))
    return [os.path.relpath(p, root) for p in left]


def receipts(root):
    return sorted(glob.glob(os.path.join(root, ".okf", "receipts", "*.json")))


# --faults (issue 25 item 6): permission faults on the store's own directories and on a
# target directory, as root.
FAULT_KINDS = ("chmod", "chattr", "robind")
FAULT_DIRS = (".okf/receipts", ".okf/transactions", ".okf/staging", ".okf/capabilities", "target")


class Fault:
    """One fault on a directory: `chmod 0555`, `chattr +i` or a read-only bind mount;
    `undo()` removes it (also after a failure, from `finally`)."""

    def __init__(self, kind, path):
        self.kind, self.path, self.mode = kind, path, os.stat(path).st_mode & 0o7777
        if kind == "chmod":
            os.chmod(path, 0o555)
        elif kind == "chattr":
            subprocess.run(["chattr", "+i", path], check=True, capture_output=True)
        else:
            subprocess.run(["mount", "--bind", path, path], check=True, capture_output=True)
            subprocess.run(["mount", "-o", "remount,ro,bind", path, path], check=True,
                           capture_output=True)

    def undo(self):
        if self.kind == "chmod":
            os.chmod(self.path, self.mode)
        elif self.kind == "chattr":
            subprocess.run(["chattr", "-i", self.path], check=False, capture_output=True)
        else:
            subprocess.run(["umount", self.path], check=False, capture_output=True)


def fault_kinds_here(work):
    """The fault kinds this machine can plant (`chattr` needs attributes, `robind` mounts)."""
    kinds = ["chmod"]
    probe = os.path.join(work, "fault-probe")
    os.mkdir(probe)
    for kind in ("chattr", "robind"):
        try:
            Fault(kind, probe).undo()
            kinds.append(kind)
        except (subprocess.CalledProcessError, OSError):
            pass
    os.rmdir(probe)
    return kinds


def tree(root):
    """Every file under `root` (`.okf/` included) with its bytes, and every directory."""
    out = {}
    for d, dirs, files in os.walk(root):
        rel = os.path.relpath(d, root)
        out[rel + "/"] = b""
        for f in files:
            with open(os.path.join(d, f), "rb") as fh:
                out[os.path.normpath(os.path.join(rel, f))] = fh.read()
    return out


def stop_at_journal(proc, root, deadline):
    """SIGSTOPs `proc` right after its journal appears; False when it ended first."""
    pattern = os.path.join(root, ".okf", "transactions", "txn-*.json")
    while proc.poll() is None and time.monotonic() < deadline:
        if glob.glob(pattern):
            proc.send_signal(signal.SIGSTOP)
            return True
        time.sleep(0.0002)
    return False


def names_a_path(e):
    """Whether an error names the path it concerns (message or a diagnostic's `file`)."""
    if any(d.get("file") for d in e.get("diagnostics", [])):
        return True
    return "/" in e.get("message", "") or ".md" in e.get("message", "")


def settled_replay(binary, tool, a, root, post, what):
    """The exact replay after the fault is gone: `applied`, the post-state, one receipt, no
    journal or staging entry; then a second replay answers `receipt_replayed` and writes
    nothing."""
    r, err = call(binary, tool, a)
    if err or r.get("status") != "applied":
        raise Failure(f"{what}: replay after the fault: {r}")
    if visible(root) != post:
        raise Failure(f"{what}: the replay did not leave the post-state")
    left = store_leftovers(root)
    if left:
        raise Failure(f"{what}: leftovers in .okf: {left}")
    if len(receipts(root)) != 1:
        raise Failure(f"{what}: {len(receipts(root))} receipts")
    before = tree(root)
    r2, err = call(binary, tool, a)
    codes = [d.get("code") for d in r2.get("diagnostics", [])]
    if err or r2.get("status") != "applied" or "receipt_replayed" not in codes:
        raise Failure(f"{what}: second replay: {r2}")
    if tree(root) != before:
        raise Failure(f"{what}: the second replay wrote")


def faults_main(o, binary, work):
    """`--faults`: each trial plants one fault (kind x directory, in turn) on a fresh copy.
    Even trials stop the apply right after its journal appears, plant the fault, let it go
    on: its answer is `applied` with the post-state and a receipt, or a retryable error that
    names a path, and the visible tree is pre, post or a valid mix. Odd trials plant the
    fault after an uninterrupted apply: the exact replay must answer `receipt_replayed`
    and write nothing. Every trial then removes the fault and checks the settled replay."""
    if os.geteuid() != 0:
        print(f"crash harness: faults: {o.workflow}: skipped: not running as root "
              "(chmod does not stop root, and chattr and mounts need it)")
        return 0
    kinds = fault_kinds_here(work)
    combos = [(k, d) for d in FAULT_DIRS for k in FAULT_KINDS if k in kinds]
    base, tool, args = WORKFLOWS[o.workflow](binary, work)
    pre = visible(base)
    first = os.path.join(work, "c0")
    copy(base, first)
    r0, err = call(binary, tool, dict(args, bundle_path=first))
    if err or r0.get("status") != "applied":
        raise Failure(f"uninterrupted apply: {r0}")
    post = visible(first)
    changed = sorted(p for p in post if post[p] != pre.get(p))
    counts = {"applied": 0, "retryable": 0, "finished_first": 0, "replay_under_fault": 0}
    t0 = time.monotonic()
    for i in range(o.kills):
        kind, target = combos[(i // 2) % len(combos)]
        root = os.path.join(work, f"c{i + 1}")
        copy(base, root)
        a = dict(args, bundle_path=root)
        if target == "target":
            d = os.path.dirname(changed[i % len(changed)])
            path = os.path.join(root, d) if d else root
        else:
            path = os.path.join(root, target)
        what = f"trial {i + 1} ({kind} on {target})"
        fault = None
        try:
            if i % 2 == 0:
                proc = spawn(binary, tool, a, subprocess.PIPE)
                stopped = stop_at_journal(proc, root, time.monotonic() + 30)
                if stopped:
                    if os.path.isdir(path):
                        fault = Fault(kind, path)
                    proc.send_signal(signal.SIGCONT)
                else:
                    counts["finished_first"] += 1
                out, _ = proc.communicate()
                try:
                    res = json.loads(out)
                except ValueError as e:
                    raise Failure(f"{what}: no JSON result (exit {proc.returncode})") from e
                r, err = res.get("structuredContent", {}), bool(res.get("isError"))
                if not err:
                    if r.get("status") != "applied" or visible(root) != post or not receipts(root):
                        raise Failure(f"{what}: answered {r} without post-state and receipt")
                    counts["applied"] += 1
                elif r.get("retryable") is True and names_a_path(r):
                    counts["retryable"] += 1
                else:
                    raise Failure(f"{what}: a non-retryable or unnamed error: {r}")
                check_after_kill(root, pre, post, what)
            else:
                r, err = call(binary, tool, a)
                if err or r.get("status") != "applied":
                    raise Failure(f"{what}: the apply: {r}")
                fault = Fault(kind, path)
                before = tree(root)
                r, err = call(binary, tool, a)
                codes = [d.get("code") for d in r.get("diagnostics", [])]
                if err or r.get("status") != "applied" or "receipt_replayed" not in codes:
                    raise Failure(f"{what}: the replay under the fault: {r}")
                if tree(root) != before:
                    raise Failure(f"{what}: the replay under the fault wrote")
                counts["replay_under_fault"] += 1
        finally:
            if fault:
                fault.undo()
        settled_replay(binary, tool, a, root, post, what)
        shutil.rmtree(root, ignore_errors=True)
        if os.path.exists(root + ".args.json"):
            os.unlink(root + ".args.json")
    print(f"crash harness: faults: {o.workflow}: {o.kills} trials over {len(combos)} faults "
          f"({', '.join(kinds)} on {', '.join(FAULT_DIRS)}); stopped at the journal: "
          f"{counts['applied']} applied, {counts['retryable']} retryable errors naming a path, "
          f"{counts['finished_first']} applies finished before the fault; "
          f"{counts['replay_under_fault']} replays under a fault answered receipt_replayed "
          f"without writing; every settled replay applied once; "
          f"{time.monotonic() - t0:.1f} s")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--workflow", default="migration", choices=sorted(WORKFLOWS))
    ap.add_argument("--kills", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--modes", default="random,journal,recovery")
    ap.add_argument("--bundle", help="the generated bundle of --workflow migration-agent")
    ap.add_argument("--warm", action="store_true",
                    help="previews by one long-running serve with its capture cache, compared "
                         "with cold previews around every kill")
    ap.add_argument("--faults", action="store_true",
                    help="permission faults on .okf/ directories and a target directory "
                         "(as root; --kills is the number of trials)")
    o = ap.parse_args()
    binary = os.path.abspath(o.bin)
    if o.faults:
        work = tempfile.mkdtemp(prefix="okf-faults-")
        try:
            rc = faults_main(o, binary, work)
        except Failure as e:
            print(f"crash harness: faults: FAILED: {e} (work dir kept: {work})", file=sys.stderr)
            return 1
        shutil.rmtree(work, ignore_errors=True)
        return rc
    rng = random.Random(o.seed)
    modes = o.modes.split(",")
    t0 = time.monotonic()
    work = tempfile.mkdtemp(prefix="okf-crash-")
    counts = {"pre": 0, "post": 0, "mixed": 0, "finished": 0, "recovery_killed": 0}
    server = None
    try:
        if o.workflow == "migration-agent":
            base, tool, args = migration_agent_workflow(binary, work, o.bundle)
        else:
            base, tool, args = WORKFLOWS[o.workflow](binary, work)
        pre = visible(base)
        # The post-state and the wall time of an uninterrupted apply (copy 0).
        first = os.path.join(work, "c0")
        copy(base, first)
        args0 = dict(args, bundle_path=first)
        started = time.monotonic()
        r0, err = call(binary, tool, args0)
        wall = time.monotonic() - started
        if err or r0.get("status") != "applied":
            raise Failure(f"uninterrupted apply: {r0}")
        post = visible(first)
        written = len([p for p in post if post[p] != pre.get(p)])
        if o.warm:
            server = WarmServer(binary, work)
            ptool, pargs = preview_of(tool, args)
        for i in range(o.kills):
            mode = modes[i % len(modes)]
            what = f"kill {i + 1} ({mode})"
            root = os.path.join(work, f"c{i + 1}")
            copy(base, root)
            a = dict(args, bundle_path=root)
            if server:
                pa = dict(pargs, bundle_path=root)
                time.sleep(2.1)
                index = os.path.join(root, "index.md")
                with open(index, "rb") as fh:
                    data = fh.read()
                with open(index, "wb") as fh:
                    fh.write(data)
                server.call(ptool, pa)
                warm_equals_cold(server, binary, ptool, pa, what + ", before the kill")
            proc = spawn(binary, tool, a)
            if mode == "random":
                killed = kill_after(proc, rng.uniform(0, 1.2 * wall))
            else:
                killed = kill_at_journal(proc, root, rng, time.monotonic() + 30 * wall + 5)
            if not killed:
                counts["finished"] += 1
            state = check_after_kill(root, pre, post, what)
            counts[state] += 1
            if mode == "recovery":
                rp = spawn(binary, tool, a)
                if kill_after(rp, rng.uniform(0, wall)):
                    counts["recovery_killed"] += 1
                check_after_kill(root, pre, post, what + ", recovery killed")
            if server:
                warm_equals_cold(server, binary, ptool, pa, what + ", after the kill")
            r, err = call(binary, tool, a)
            if err or r.get("status") != "applied":
                raise Failure(f"{what}: replay: {r}")
            for k in set(r) | set(r0):
                # A replay may add receipt_replayed: the diagnostics and their counts differ.
                if k in ("diagnostics", "diagnostic_counts"):
                    continue
                want, got = r0.get(k), r.get(k)
                if k == "notices":
                    # The commit that created .okf/ says so once (store_created); a replay
                    # creates nothing.
                    strip = lambda n: [x for x in (n or []) if x.get("code") != "store_created"]
                    want, got = strip(want), strip(got)
                if k == "totals":
                    want, got = dict(want, diagnostics=0), dict(got, diagnostics=0)
                if got != want:
                    raise Failure(f"{what}: replay {k} {got} != {want}")
            if visible(root) != post:
                raise Failure(f"{what}: the replay did not leave the post-state")
            left = store_leftovers(root)
            if left:
                raise Failure(f"{what}: leftovers in .okf: {left}")
            rec = receipts(root)
            if len(rec) != 1:
                raise Failure(f"{what}: {len(rec)} receipts")
            with open(rec[0], "rb") as fh:
                receipt = fh.read()
            ino = inodes(root)
            r2, err = call(binary, tool, a)
            codes = [d.get("code") for d in r2.get("diagnostics", [])]
            if err or r2.get("status") != "applied" or "receipt_replayed" not in codes:
                raise Failure(f"{what}: second replay: {r2}")
            with open(rec[0], "rb") as fh:
                if fh.read() != receipt:
                    raise Failure(f"{what}: the second replay rewrote the receipt")
            if inodes(root) != ino or visible(root) != post:
                raise Failure(f"{what}: the second replay wrote")
            if server:
                warm_equals_cold(server, binary, ptool, pa, what + ", after the replay")
            # Every promise held for this copy: free its disk (a failed one is kept).
            shutil.rmtree(root, ignore_errors=True)
            os.unlink(root + ".args.json")
        elapsed = time.monotonic() - t0
        warm = ""
        if server:
            reused = server.stop()
            server = None
            if reused == 0:
                raise Failure("the warm server took no file from its cache")
            warm = f" warm previews took {reused} files from the cache, each equal to a cold one;"
        print(f"crash harness: {o.workflow}{' --warm' if warm else ''}: {o.kills} kills ({','.join(modes)}), seed {o.seed},{warm} "
              f"{written} files written per apply, uninterrupted apply {wall * 1000:.0f} ms; "
              f"after the kill: {counts['pre']} pre, {counts['post']} post, {counts['mixed']} "
              f"mixed-but-valid (published in part, index.md not ahead), {counts['finished']} "
              f"applies finished before their kill, {counts['recovery_killed']} recoveries "
              f"killed; every replay applied once; {elapsed:.1f} s")
    except Failure as e:
        print(f"crash harness: FAILED: {e} (work dir kept: {work})", file=sys.stderr)
        return 1
    finally:
        if server:
            server.p.kill()
    shutil.rmtree(work, ignore_errors=True)
    return 0


sys.exit(main())
