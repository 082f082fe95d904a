//! Benchmark of the Phase-4 read tools (`search_sections`, `search_concepts`, `get_neighbors`,
//! `get_semantic_graph` with a one-concept subgraph; `list_concepts` with a page of one as the
//! cost of the shared read pipeline: capture, parse, profile) as cold one-shot CLI calls
//! (`okf-mcp call …`, a new process each) on a generated bundle of 5,000 concepts (≈ 37 MiB,
//! `tests/it/support/gen.rs`, the migration bench's generator), against the floor: a process
//! that walks the bundle and reads and SHA-256-hashes every file on one thread. Results and
//! their reading: `docs/bench.md`.
//!
//! Run: `cargo bench --bench search` (release profile). `harness = false`: this file owns its
//! timing loop: one warm-up pair, then `PAIRS` pairs run in turn (tool, floor, tool, floor, …);
//! the ratio is taken pair by pair and its median reported, so a drift in the machine's speed
//! moves both sides of a pair alike.
//!
//! Modes of the binary:
//! - no arguments (or cargo's `--bench`): generate the bundle, time every tool against the
//!   floor, then measure the peak memory of each tool in a child process;
//! - `--child floor <dir>`: the floor, once;
//! - `--child peak <tool> <args.json>`: the tool through the library dispatcher (the code path of
//!   `okf-mcp call`), once, then print `VmHWM` (kB) from `/proc/self/status`;
//! - `--child generate <dir> <documents>`: write a bench bundle (for profiling by hand).
//!
//! Everything happens in a temp dir; nothing under the repository is touched.

#![allow(clippy::disallowed_methods, clippy::unwrap_used)] // its own temp files

#[path = "../tests/it/support/gen.rs"]
mod gen;

#[path = "support/bundle02.rs"]
mod bundle02;
use bundle02::floor;

use okf_mcp::tools::Ctx;
use okf_mcp::wire::dispatch::call;
use serde_json::{json, Value};
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

const DOCUMENTS: usize = 5_000;
const PAIRS: usize = 7;

fn main() -> Res<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--child") {
        return child(&args[1..]);
    }
    let tmp = tempfile::tempdir()?;
    let root = tmp.path().join("bundle");
    let g = gen::generate(
        &root,
        gen::Spec {
            documents: DOCUMENTS,
            size: 1,
        },
    );
    let mib = g.bytes as f64 / (1024.0 * 1024.0);
    let id = g.concepts[g.concepts.len() / 2]
        .strip_suffix(".md")
        .unwrap_or_default()
        .to_owned();
    let cases: Vec<(&str, &str, Value)> = vec![
        (
            "list_concepts",
            "list_concepts (one page of 1: the read pipeline alone)",
            json!({"bundle_path": root, "limit": 1}),
        ),
        (
            "search_sections",
            "search_sections \"orders ledger\"",
            json!({"bundle_path": root, "query": "orders ledger"}),
        ),
        (
            "search_concepts",
            "search_concepts \"ledger\"",
            json!({"bundle_path": root, "query": "ledger"}),
        ),
        (
            "get_neighbors",
            "get_neighbors (one concept, depth 1)",
            json!({"bundle_path": root, "concept_id": id}),
        ),
        (
            "get_semantic_graph",
            "get_semantic_graph (one concept, depth 1)",
            json!({"bundle_path": root, "concept_ids": [id]}),
        ),
    ];
    let exe = std::env::current_exe()?;
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_okf-mcp"));
    println!(
        "bundle: {} files, {mib:.1} MiB; {PAIRS} pairs after one warm-up pair; medians",
        g.files
    );
    println!("| call | tool (ms) | floor (ms) | ratio (median of pairs) | peak RSS (MiB) |");
    println!("|---|---|---|---|---|");
    for (tool, label, args) in &cases {
        let args_file = tmp.path().join(format!("{tool}.json"));
        std::fs::write(&args_file, serde_json::to_vec(args)?)?;
        let run_tool = || -> Res<f64> {
            let t = Instant::now();
            let out = Command::new(&bin)
                .args(["call", tool, "--args-file"])
                .arg(&args_file)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .output()?;
            let dt = t.elapsed().as_secs_f64() * 1e3;
            let text = String::from_utf8_lossy(&out.stdout);
            if !out.status.success() || text.contains("\"isError\":true") {
                return Err(format!("{tool} failed: {text}").into());
            }
            Ok(dt)
        };
        let run_floor = || -> Res<f64> {
            let t = Instant::now();
            let st = Command::new(&exe)
                .args(["--child", "floor"])
                .arg(&root)
                .status()?;
            if !st.success() {
                return Err("floor failed".into());
            }
            Ok(t.elapsed().as_secs_f64() * 1e3)
        };
        run_tool()?;
        run_floor()?;
        let (mut ts, mut fs, mut rs) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..PAIRS {
            let t = run_tool()?;
            let f = run_floor()?;
            ts.push(t);
            fs.push(f);
            rs.push(t / f);
        }
        let peak = child_peak(&exe, &["peak", tool, args_file.to_str().ok_or("path")?])?;
        println!(
            "| {label} | {:.0} | {:.0} | {:.2}× | {:.1} |",
            median(&mut ts),
            median(&mut fs),
            median(&mut rs),
            peak as f64 / 1024.0
        );
    }
    let idle = child_peak(&exe, &["idle"])?;
    println!("idle child peak RSS: {:.1} MiB", idle as f64 / 1024.0);
    Ok(())
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn child_peak(exe: &PathBuf, args: &[&str]) -> Res<u64> {
    let out = Command::new(exe).arg("--child").args(args).output()?;
    if !out.status.success() {
        return Err(format!(
            "child {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        )
        .into());
    }
    Ok(String::from_utf8(out.stdout)?.trim().parse()?)
}

fn vm_hwm() -> Res<u64> {
    let status = std::fs::read_to_string("/proc/self/status")?;
    let line = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .ok_or("no VmHWM")?;
    Ok(line
        .split_whitespace()
        .nth(1)
        .ok_or("VmHWM value")?
        .parse()?)
}

fn child(args: &[String]) -> Res<()> {
    let arg = |i: usize| args.get(i).map(String::as_str).ok_or("missing argument");
    match arg(0)? {
        "idle" => println!("{}", vm_hwm()?),
        "floor" => {
            black_box(floor(Path::new(arg(1)?))?);
        }
        "peak" => {
            let bytes = std::fs::read(arg(2)?)?;
            let r = call(arg(1)?, Some(&bytes), &Ctx::default()).ok_or("tool not registered")?;
            if r.is_error {
                return Err(format!("{} failed", arg(1)?).into());
            }
            black_box(&r);
            println!("{}", vm_hwm()?);
        }
        "generate" => {
            gen::generate(
                Path::new(arg(1)?),
                gen::Spec {
                    documents: arg(2)?.parse()?,
                    size: 1,
                },
            );
        }
        other => return Err(format!("unknown child mode {other}").into()),
    }
    Ok(())
}
