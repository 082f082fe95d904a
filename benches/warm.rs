//! Benchmark of the warm server (spec/store.md §17, scenario P4-10): one `okf-mcp serve`
//! process driven over stdio, its capture cache on (the default) or off (`--no-cache`),
//! against the floor of the same run (walk, read and SHA-256 every visible file once, on one
//! thread, in this process). Results and their reading: `docs/bench.md` ("Warm server").
//!
//! Run: `cargo bench --bench warm` (release profile). `harness = false`.
//!
//! Scenarios:
//! 1. a generated 0.2 bundle of 9,000 concepts (`support/bundle02.rs`, the patch bench's):
//!    ten one-concept `preview_concept_patch` calls, each on another concept, in one warm
//!    server and in one cold server, each preview paired with a floor run right before it;
//! 2. the generated 5,000-concept bundle of the search bench (`tests/it/support/gen.rs`, about
//!    37 MiB): `search_sections`, a default `list_concepts` page, and `get_neighbors` and
//!    `get_semantic_graph` of one concept with their defaults, ten times each, warm and
//!    cold, and the first (filling) call of the warm server against the floor; the server gets
//!    a pause of 1.5 s after its first search (an agent's think time), in which a warm server
//!    builds the section indexes that search found missing;
//! 3. the stat floor of each bundle (every entry `lstat`ed without following, relative to its
//!    open parent, on one thread: the least a warm capture does, spec/store.md §17 rule 2);
//! 4. the peak resident set (`VmHWM` of the server process) of the warm servers after their
//!    calls, and of a cold server that answers one `list_concepts`, `read_concept` or
//!    `validate_bundle` call on the 5,000-concept bundle (spec issue 24 item 5).
//!
//! The racy rule (spec/store.md §17 rule 2) trusts a file only when it is more than 2 s older
//! than the newest change the capture saw, so a bundle written in one batch and never touched
//! since is read again on every call. Each bundle is therefore aged 2.1 s after it was
//! written and then one of its files is rewritten with the same bytes: the last edit of a
//! session in progress. The first call fills the cache; the figures are of the calls after it.
//!
//! Everything happens in a temp dir; nothing under the repository is touched.

#![allow(clippy::disallowed_methods, clippy::unwrap_used)] // its own temp files

#[path = "../tests/it/support/gen.rs"]
mod gen;

#[path = "support/bundle02.rs"]
mod bundle02;

use serde_json::{json, Value};
use std::hint::black_box;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

type Res<T> = Result<T, Box<dyn std::error::Error>>;

const RUNS: usize = 10;
/// The pause after a server's first search (see where it is used).
const PAUSE: Duration = Duration::from_millis(1_500);
/// Past the racy window (2 s), with a margin.
const AGE: Duration = Duration::from_millis(2_100);

/// One `okf-mcp serve` over stdio.
struct Server {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl Server {
    fn start(args: &[&str]) -> Res<Self> {
        let mut child = Command::new(env!("CARGO_BIN_EXE_okf-mcp"))
            .arg("serve")
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()?;
        let stdin = child.stdin.take().ok_or("stdin")?;
        let stdout = BufReader::new(child.stdout.take().ok_or("stdout")?);
        let mut s = Server {
            child,
            stdin,
            stdout,
            next_id: 1,
        };
        s.request(
            "initialize",
            json!({"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}),
        )?;
        writeln!(
            s.stdin,
            "{}",
            json!({"jsonrpc":"2.0","method":"notifications/initialized"})
        )?;
        Ok(s)
    }

    fn request(&mut self, method: &str, params: Value) -> Res<Value> {
        let id = self.next_id;
        self.next_id += 1;
        writeln!(
            self.stdin,
            "{}",
            json!({"jsonrpc":"2.0","id":id,"method":method,"params":params})
        )?;
        self.stdin.flush()?;
        loop {
            let mut line = String::new();
            if self.stdout.read_line(&mut line)? == 0 {
                return Err("server closed stdout".into());
            }
            let v: Value = serde_json::from_str(&line)?;
            if v["id"] == json!(id) {
                return Ok(v);
            }
        }
    }

    /// One `tools/call`: its wall time and its `structuredContent` (an error result fails).
    fn call(&mut self, tool: &str, args: &Value) -> Res<(Duration, Value)> {
        let t = Instant::now();
        let v = self.request("tools/call", json!({"name": tool, "arguments": args}))?;
        let took = t.elapsed();
        let r = &v["result"];
        if r["isError"] != json!(false) {
            return Err(format!("{tool} failed: {}", r["structuredContent"]).into());
        }
        Ok((took, r["structuredContent"].clone()))
    }

    /// The server's peak resident set in KiB (`VmHWM`).
    fn peak_kib(&self) -> Res<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))?;
        let line = status
            .lines()
            .find(|l| l.starts_with("VmHWM:"))
            .ok_or("no VmHWM")?;
        Ok(line.split_whitespace().nth(1).ok_or("VmHWM")?.parse()?)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Ages the bundle past the racy window, then rewrites `last` with its own bytes (the last
/// edit of a session; see the module docs).
fn age_then_touch(last: &Path) -> Res<()> {
    std::thread::sleep(AGE);
    let bytes = std::fs::read(last)?;
    std::fs::write(last, bytes)?;
    Ok(())
}

fn floor_ms(dir: &Path) -> Res<f64> {
    let t = Instant::now();
    black_box(bundle02::floor(dir)?);
    Ok(ms(t.elapsed()))
}

/// The stat floor of a warm capture, in ms: list every directory and `lstat` every entry
/// without following, relative to its open parent, on one thread (what spec/store.md §17
/// rule 2 asks of every warm capture, and nothing else).
fn lstat_floor_ms(dir: &Path) -> Res<f64> {
    fn walk(dir: &Path, n: &mut usize) -> Res<()> {
        let fd = rustix::fs::open(
            dir,
            rustix::fs::OFlags::DIRECTORY
                | rustix::fs::OFlags::NOFOLLOW
                | rustix::fs::OFlags::CLOEXEC,
            rustix::fs::Mode::empty(),
        )?;
        for e in std::fs::read_dir(dir)? {
            let name = e?.file_name();
            let st =
                rustix::fs::statat(&fd, name.as_os_str(), rustix::fs::AtFlags::SYMLINK_NOFOLLOW)?;
            *n += 1;
            if rustix::fs::FileType::from_raw_mode(st.st_mode) == rustix::fs::FileType::Directory {
                walk(&dir.join(&name), n)?;
            }
        }
        Ok(())
    }
    let t = Instant::now();
    let mut n = 0usize;
    walk(dir, &mut n)?;
    black_box(n);
    Ok(ms(t.elapsed()))
}

fn main() -> Res<()> {
    p4_10_warm_server_against_the_floor()
}

/// Scenario P4-10 (spec/scenarios.md): every figure of the module docs, printed.
fn p4_10_warm_server_against_the_floor() -> Res<()> {
    let tmp = tempfile::tempdir()?;
    let mut report = String::new();

    // 1. One-concept patch previews on 9,000 concepts.
    let b9 = tmp.path().join("b9000");
    let bytes9 = bundle02::generate(&b9, 9_000)?;
    age_then_touch(&b9.join(bundle02::concept_path(0)))?;
    let preview = |id: &str| {
        json!({"bundle_path": b9, "actor": "bench-agent", "operations": [
            {"kind": "set_lifecycle", "concept_id": id, "lifecycle": {"status": "deprecated"}}
        ]})
    };
    black_box(floor_ms(&b9)?);
    let mut rows = Vec::new();
    for (label, args) in [
        ("warm", &[][..]),
        ("cold (--no-cache)", &["--no-cache"][..]),
    ] {
        let mut s = Server::start(args)?;
        let (first, p) = s.call("preview_concept_patch", &preview(&bundle02::concept_id(1)))?;
        assert_eq!(p["status"], "applicable", "{p}");
        let (mut t, mut f) = (Vec::new(), Vec::new());
        for r in 0..RUNS {
            f.push(floor_ms(&b9)?);
            let id = bundle02::concept_id(100 + r * 731);
            let (d, p) = s.call("preview_concept_patch", &preview(&id))?;
            assert_eq!(p["status"], "applicable", "{p}");
            t.push(ms(d));
        }
        let ratios: Vec<f64> = t.iter().zip(&f).map(|(a, b)| a / b).collect();
        let mut ratios = ratios;
        rows.push(format!(
            "  {label:<18} first {:>7.1} ms · next {RUNS}: median {:>7.1} ms · floor {:>6.1} ms · ratio {:.3}× · server peak RSS {} MiB",
            ms(first),
            median(&mut t),
            median(&mut f),
            median(&mut ratios),
            s.peak_kib()? / 1024
        ));
    }
    let stat9 = {
        let mut v: Vec<f64> = (0..5).map(|_| lstat_floor_ms(&b9)).collect::<Res<_>>()?;
        median(&mut v)
    };
    report.push_str(&format!(
        "preview_concept_patch, one concept, 9,000 concepts ({:.1} MiB), one server over stdio; lstat floor {stat9:.1} ms:\n{}\n",
        bytes9 as f64 / (1024.0 * 1024.0),
        rows.join("\n")
    ));

    // 2. Search and list on the 5,000-concept bundle of the search bench.
    let b5 = tmp.path().join("b5000");
    let g = gen::generate(
        &b5,
        gen::Spec {
            documents: 5_000,
            size: 1,
        },
    );
    age_then_touch(&b5.join(&g.concepts[0]))?;
    let search = json!({"bundle_path": b5, "query": "ledger reconciliation billing"});
    let list = json!({"bundle_path": b5});
    let hub = g.concepts[g.concepts.len() / 3]
        .strip_suffix(".md")
        .unwrap_or_default()
        .to_owned();
    let neighbors = json!({"bundle_path": b5, "concept_id": hub});
    let graph = json!({"bundle_path": b5, "concept_ids": [hub]});
    let floor5 = {
        black_box(floor_ms(&b5)?);
        let mut f: Vec<f64> = (0..5).map(|_| floor_ms(&b5)).collect::<Res<_>>()?;
        median(&mut f)
    };
    let mut rows = Vec::new();
    for (label, args) in [
        ("warm", &[][..]),
        ("cold (--no-cache)", &["--no-cache"][..]),
    ] {
        let mut s = Server::start(args)?;
        let (first, _) = s.call("search_sections", &search)?;
        // An agent's pause between calls: the section indexes the first search left to build
        // are built by then (a search during that work answers unindexed).
        std::thread::sleep(PAUSE);
        let mut t: Vec<f64> = Vec::new();
        for _ in 0..RUNS {
            t.push(ms(s.call("search_sections", &search)?.0));
        }
        let mut l: Vec<f64> = Vec::new();
        for _ in 0..RUNS {
            l.push(ms(s.call("list_concepts", &list)?.0));
        }
        let (mut n, mut gr) = (Vec::new(), Vec::new());
        for _ in 0..RUNS {
            let (d, v) = s.call("get_neighbors", &neighbors)?;
            assert!(v.get("edges").is_some(), "{v}");
            n.push(ms(d));
            let (d, v) = s.call("get_semantic_graph", &graph)?;
            assert!(v.get("@graph").is_some(), "{v}");
            gr.push(ms(d));
        }
        rows.push(format!(
            "  {label:<18} first search_sections {:>7.1} ms ({:.2}× the floor) · next {RUNS}: search_sections median {:>7.1} ms · list_concepts page median {:>6.1} ms · get_neighbors median {:>6.1} ms · get_semantic_graph median {:>6.1} ms · server peak RSS {} MiB",
            ms(first),
            ms(first) / floor5,
            median(&mut t),
            median(&mut l),
            median(&mut n),
            median(&mut gr),
            s.peak_kib()? / 1024
        ));
    }
    let stat5 = {
        let mut v: Vec<f64> = (0..5).map(|_| lstat_floor_ms(&b5)).collect::<Res<_>>()?;
        median(&mut v)
    };
    report.push_str(&format!(
        "search_sections and list_concepts, {} concepts ({:.1} MiB), floor {floor5:.1} ms, lstat floor {stat5:.1} ms:\n{}\n",
        g.concepts.len(),
        g.bytes as f64 / (1024.0 * 1024.0),
        rows.join("\n")
    ));

    // 3. Cold read tools' peak RSS on the same bundle: one call in a fresh --no-cache server.
    let mut rows = Vec::new();
    let id = g.concepts[g.concepts.len() / 2]
        .strip_suffix(".md")
        .unwrap_or_default()
        .to_owned();
    for (tool, args) in [
        ("list_concepts", json!({"bundle_path": b5})),
        ("read_concept", json!({"bundle_path": b5, "concept_id": id})),
        ("validate_bundle", json!({"bundle_path": b5})),
    ] {
        let mut s = Server::start(&["--no-cache"])?;
        let baseline = s.peak_kib()?;
        let (d, _) = s.call(tool, &args)?;
        rows.push(format!(
            "  {tool:<16} {:>7.1} ms · peak RSS {:.1} MiB (an idle server: {:.1} MiB)",
            ms(d),
            s.peak_kib()? as f64 / 1024.0,
            baseline as f64 / 1024.0
        ));
    }
    report.push_str(&format!(
        "cold read tools, one call each in a fresh --no-cache server, same bundle:\n{}\n",
        rows.join("\n")
    ));
    println!("\n{report}");
    Ok(())
}
