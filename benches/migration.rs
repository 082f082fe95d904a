//! Benchmark of the OKF 0.1 → 0.2 migration (`preview_v02_migration`, `apply_v02_migration`)
//! against the floor (walk + read + SHA-256 of every visible file, one file at a time), on a
//! generated v0.1 bundle of 5,000 documents in the generator dialect of issue 10
//! (`tests/it/support/gen.rs`: 4,500 concepts with ordered-list citations, inline
//! notes and `[N]` claims, the §12.8 generator leftovers in 1 % of the concepts, 500 untyped
//! reference documents, a root `index.md`), at document
//! size 1× (≈ 8 KB bodies) and 4×. Results and their reading: `docs/bench.md`.
//!
//! Run: `cargo bench --bench migration` (release profile). `harness = false`: this file owns
//! its timing loop (one warm-up run, then `REPS` repetitions, median reported).
//!
//! Modes of the binary:
//! - no arguments (or cargo's `--bench`): generate both bundles, time every scenario, and
//!   measure peak memory of each scenario in a child process;
//! - `--child <scenario> <path>`: run one scenario once and print `VmHWM` (kB) from
//!   `/proc/self/status`, so peaks never mix: `idle`, `floor <bundle>`, `preview <args.json>`,
//!   `apply <args.json>` (the parent makes a fresh copy of the bundle first), `first
//!   <first.json>` (the first preview of the sequence, `blocked`);
//!   `--child generate <dir> <documents> <size>` writes a bench bundle (for profiling by hand);
//!   `--child prepare <dir> <documents> <size>` also writes `<dir>/preview.json` (the
//!   accepting preview), `<dir>/d<documents>x<size>/first.json` (the first preview) and
//!   `<dir>/apply.json` for the bundle `<dir>/d<documents>x<size>/work` (an apply changes that
//!   bundle: copy `…/pristine` over it again before each run of the `apply` child);
//!   `--child time-preview <args.json> <n>` times n first-call previews in one process.
//!
//! Every scenario works on bundles in a temp dir; nothing under the repository is touched.
#![allow(clippy::disallowed_methods)] // the bench builds and copies its own temp bundles

#[path = "../tests/it/support/gen.rs"]
mod gen;

#[path = "support/bundle02.rs"]
mod bundle02;
use bundle02::floor;

use okf_mcp::okf::memo;
use okf_mcp::tools::Ctx;
use okf_mcp::wire::dispatch::call;
use serde_json::{json, Value};
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

type Res<T> = Result<T, Box<dyn std::error::Error>>;

const DOCUMENTS: usize = 5_000;
/// The file count of the 1×-versus-4× memory comparison.
const SAME_COUNT: usize = 2_000;
const GENERATED_BY: &str = "catalog-generator/1.0";

fn main() -> Res<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--child") {
        return child(&args[1..]);
    }
    let started = Instant::now();
    let tmp = tempfile::tempdir()?;
    // 5,000 documents at 1× (≈ 37 MiB): time and peak RSS.
    let big = Prepared::new(tmp.path(), DOCUMENTS, 1)?;
    let t_big = timing(&big, 3, true)?;
    let m_big = memory(&big)?;
    drop(big);
    // 1× against 4× document size at the same file count: 2,000 documents, the most whose 4×
    // bundle (≈ 57 MiB) stays under the 64 MiB capture limit (5,000 at 4× would be ≈ 143 MiB
    // and is refused with `resource_limit`).
    let one = Prepared::new(tmp.path(), SAME_COUNT, 1)?;
    let m_one = memory(&one)?;
    drop(one);
    let four = Prepared::new(tmp.path(), SAME_COUNT, 4)?;
    let t_four = timing(&four, 3, false)?;
    let m_four = memory(&four)?;
    println!(
        "\n{}",
        report(&[
            (&big_info(&t_big), Some(&t_big), &m_big),
            (
                &format!("{SAME_COUNT} × 1×, {:.1} MiB", m_one.mib),
                None,
                &m_one
            ),
            (
                &format!("{SAME_COUNT} × 4×, {:.1} MiB", m_four.mib),
                Some(&t_four),
                &m_four
            ),
        ])
    );
    eprintln!("total bench time {:.0} s", started.elapsed().as_secs_f64());
    Ok(())
}

fn big_info(t: &Times) -> String {
    format!("{DOCUMENTS} × 1×, {:.1} MiB", t.mib)
}

// ---------------------------------------------------------------------------------------------
// Preparation

/// One generated bundle: a pristine copy, the work copy every scenario runs on, and the
/// preview and apply arguments (with the preview's own proposals passed back) for the work
/// copy's path, stored in files for the children.
struct Prepared {
    documents: usize,
    size: usize,
    pristine: PathBuf,
    work: PathBuf,
    base: PathBuf,
    copies: std::cell::Cell<usize>,
    preview_file: PathBuf,
    /// The first preview of the sequence (`citation_mappings: []`, nothing accepted).
    first_args: Value,
    /// Its `proposals_digest` (a changed one would measure the wrong thing).
    proposals_digest: Value,
    preview_args: Value,
    apply_args: Value,
    plan_digest: Value,
    /// The files the apply changes, with their new bytes (path relative to the bundle), in
    /// path order: what the durable-write floor writes.
    changes: Vec<(PathBuf, Vec<u8>)>,
    bytes: u64,
}

impl Prepared {
    fn new(tmp: &Path, documents: usize, size: usize) -> Res<Self> {
        let base = tmp.join(format!("d{documents}x{size}"));
        let pristine = base.join("pristine");
        let work = base.join("work");
        let t = Instant::now();
        // With the §12.8 generator leftovers in one concept of 100, as in MIG-44.
        let g = gen::generate_with_leftovers(&pristine, gen::Spec { documents, size }, 100);
        copy_dir(&pristine, &work)?;
        eprintln!(
            "[{documents} × {size}×] generated {} files, {:.1} MiB in {:.1} s",
            g.files,
            g.bytes as f64 / 1_048_576.0,
            t.elapsed().as_secs_f64()
        );
        let bundle = work.to_string_lossy().into_owned();
        let mut a = json!({"bundle_path": bundle, "from": "0.1", "timestamp_policy": "remove_after_copy",
                           "generated_by": GENERATED_BY, "citation_mappings": []});
        // The four-call sequence of spec/migration.md §12.7 rule 6: the first preview, the
        // preview accepting its proposals by digest, the proofless apply.
        let first_args = a.clone();
        let blocked = dispatch("preview_v02_migration", &a)?;
        if blocked["status"] != "blocked" || blocked["proposals_digest"] == "" {
            return Err(format!("first preview: {}", blocked["status"]).into());
        }
        a["accept_proposals"] = blocked["proposals_digest"].clone();
        a["accept_needs_review"] = json!(true);
        let p = dispatch("preview_v02_migration", &a)?;
        if p["status"] != "applicable" {
            return Err(format!("preview with proposals: {}", p["blockers"]).into());
        }
        let mut x = a.clone();
        x["expected_source"] = p["source"].clone();
        x["base_revision"] = p["base_revision"].clone();
        x["expected_plan_digest"] = p["plan_digest"].clone();
        let preview_file = base.join("preview.json");
        std::fs::write(&preview_file, serde_json::to_vec(&a)?)?;
        std::fs::write(base.join("first.json"), serde_json::to_vec(&first_args)?)?;
        // The apply's writes, for the durable-write floor: apply once on a scratch copy and
        // keep every file whose bytes changed (untimed).
        let scratch = base.join("scratch");
        copy_dir(&pristine, &scratch)?;
        let mut xs = x.clone();
        xs["bundle_path"] = json!(scratch.to_string_lossy());
        apply(&xs)?;
        let mut changes = Vec::new();
        changed_files(&pristine, &scratch, Path::new(""), &mut changes)?;
        eprintln!(
            "[{documents} × {size}×] {} proposed mappings, {} affected paths, apply arguments {:.1} KiB",
            blocked["totals"]["proposed_citation_mappings"],
            p["totals"]["affected_paths"],
            serde_json::to_vec(&x)?.len() as f64 / 1024.0
        );
        Ok(Self {
            documents,
            size,
            pristine,
            work,
            base,
            copies: std::cell::Cell::new(0),
            preview_file,
            proposals_digest: blocked["proposals_digest"].clone(),
            first_args,
            preview_args: a,
            apply_args: x,
            plan_digest: p["plan_digest"].clone(),
            changes,
            bytes: g.bytes,
        })
    }

    /// A fresh copy of the pristine bundle at a new path (`copy-N`; no copy is deleted before
    /// the bench ends: on an ext4 without a journal, as here, inodes freed in the last minutes
    /// make new ones slow to allocate, which would charge the bench's own clean-up to the next
    /// apply), written back to disk (`sync`) so that the apply's durability step does not
    /// also flush the copy. Returns the copy's preview and apply arguments (the proof is
    /// content-bound, not path-bound: the same proof and digest apply to every copy).
    fn fresh(&self) -> Res<(Value, Value)> {
        let n = self.copies.get();
        self.copies.set(n + 1);
        let dir = self.base.join(format!("copy-{n}"));
        copy_dir(&self.pristine, &dir)?;
        if !Command::new("sync").status()?.success() {
            return Err("sync failed".into());
        }
        let path = json!(dir.to_string_lossy());
        let mut a = self.preview_args.clone();
        a["bundle_path"] = path.clone();
        let mut x = self.apply_args.clone();
        x["bundle_path"] = path;
        Ok((a, x))
    }

    fn mib(&self) -> f64 {
        self.bytes as f64 / 1_048_576.0
    }
}

/// The files of `new` (root `.okf` skipped) that are absent from `old` or differ, with their
/// bytes, in path order.
fn changed_files(old: &Path, new: &Path, rel: &Path, out: &mut Vec<(PathBuf, Vec<u8>)>) -> Res<()> {
    let mut entries: Vec<_> = std::fs::read_dir(new.join(rel))?.collect::<Result<_, _>>()?;
    entries.sort_by_key(std::fs::DirEntry::file_name);
    for e in entries {
        if rel.as_os_str().is_empty() && e.file_name() == ".okf" {
            continue;
        }
        let r = rel.join(e.file_name());
        if e.file_type()?.is_dir() {
            changed_files(old, new, &r, out)?;
        } else {
            let bytes = std::fs::read(e.path())?;
            if std::fs::read(old.join(&r)).ok().as_ref() != Some(&bytes) {
                out.push((r, bytes));
            }
        }
    }
    Ok(())
}

/// The durable-write floor: a plain program writes the apply's changed files into `root`
/// (each into a staging file of its own, then renamed over its target) and makes all of it
/// durable with one `syncfs`.
fn write_floor(root: &Path, changes: &[(PathBuf, Vec<u8>)]) -> Res<()> {
    let stage = root.join(".floor-staging");
    std::fs::create_dir_all(&stage)?;
    for (i, (_, bytes)) in changes.iter().enumerate() {
        std::fs::write(stage.join(i.to_string()), bytes)?;
    }
    for (i, (rel, _)) in changes.iter().enumerate() {
        std::fs::rename(stage.join(i.to_string()), root.join(rel))?;
    }
    let dir = std::fs::File::open(root)?;
    rustix::fs::syncfs(&dir)?;
    std::fs::remove_dir(&stage)?;
    Ok(())
}

fn copy_dir(src: &Path, dst: &Path) -> Res<()> {
    std::fs::create_dir_all(dst)?;
    let mut entries: Vec<_> = std::fs::read_dir(src)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(std::fs::DirEntry::file_name);
    for e in entries {
        let to = dst.join(e.file_name());
        if e.file_type()?.is_dir() {
            copy_dir(&e.path(), &to)?;
        } else {
            std::fs::copy(e.path(), &to)?;
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Scenarios

fn dispatch(tool: &str, args: &Value) -> Res<Value> {
    dispatch_bytes(tool, &serde_json::to_vec(args)?)
}

/// The dispatcher on the request's bytes, as a server receives them.
fn dispatch_bytes(tool: &str, bytes: &[u8]) -> Res<Value> {
    let r = call(tool, Some(bytes), &Ctx::default()).ok_or("tool not registered")?;
    if r.is_error {
        return Err(format!(
            "{tool} failed: {}",
            r.texts.last().map_or("", String::as_str)
        )
        .into());
    }
    Ok(r.structured)
}

/// The applicable preview (a changed status or digest would measure the wrong thing).
fn preview(args: &Value, digest: &Value) -> Res<()> {
    let p = dispatch("preview_v02_migration", args)?;
    if p["status"] != "applicable" || &p["plan_digest"] != digest {
        return Err(format!("preview status {}", p["status"]).into());
    }
    Ok(())
}

/// The first preview of the sequence: `blocked`, with the expected proposals digest.
fn preview_blocked(args: &Value, proposals: &Value) -> Res<()> {
    let p = dispatch("preview_v02_migration", args)?;
    if p["status"] != "blocked" || &p["proposals_digest"] != proposals {
        return Err(format!("first preview status {}", p["status"]).into());
    }
    Ok(())
}

/// The apply, which must commit (a fresh copy: never a replay).
fn apply(args: &Value) -> Res<()> {
    apply_bytes(&serde_json::to_vec(args)?)
}

fn apply_bytes(bytes: &[u8]) -> Res<()> {
    let r = dispatch_bytes("apply_v02_migration", bytes)?;
    if r["status"] != "applied" || r["diagnostics"] != json!([]) {
        return Err(format!("apply status {} {}", r["status"], r["diagnostics"]).into());
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Timing

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Medians of one bundle size.
struct Times {
    reps: usize,
    mib: f64,
    floor: Duration,
    /// The durable-write floor ([`write_floor`]) on a fresh copy.
    write_floor: Duration,
    /// The first preview of the sequence (`citation_mappings: []`), first call of a process.
    preview_blocked: Duration,
    preview_first: Duration,
    preview_warm: Option<Duration>,
    apply_first: Duration,
    apply_warm: Option<Duration>,
}

/// Times the floor, the preview (first call of a process: memo cleared; and, with `warm`, a
/// repeated preview in one process) and the apply (each on a fresh copy made outside the
/// timed region; first call, and with `warm` after an untimed preview in the same process).
fn timing(b: &Prepared, reps: usize, warm: bool) -> Res<Times> {
    let tag = format!("[{} × {}×]", b.documents, b.size);
    let timed = |f: &mut dyn FnMut() -> Res<Duration>| -> Res<Duration> {
        f()?; // warm-up
        let mut v = Vec::with_capacity(reps);
        for _ in 0..reps {
            v.push(f()?);
        }
        Ok(median(v))
    };
    let fl = timed(&mut || {
        let t = Instant::now();
        black_box(floor(&b.work)?);
        Ok(t.elapsed())
    })?;
    eprintln!("{tag} floor median {:.1} ms", ms(fl));
    let wf = timed(&mut || {
        let (a, _) = b.fresh()?;
        let root = PathBuf::from(a["bundle_path"].as_str().ok_or("path")?);
        let t = Instant::now();
        write_floor(&root, &b.changes)?;
        Ok(t.elapsed())
    })?;
    eprintln!(
        "{tag} durable-write floor ({} files) median {:.1} ms",
        b.changes.len(),
        ms(wf)
    );
    let preview_blocked_t = timed(&mut || {
        memo::clear();
        let t = Instant::now();
        preview_blocked(&b.first_args, &b.proposals_digest)?;
        Ok(t.elapsed())
    })?;
    eprintln!(
        "{tag} first preview (blocked, first call) median {:.1} ms",
        ms(preview_blocked_t)
    );
    let preview_first = timed(&mut || {
        memo::clear();
        let t = Instant::now();
        preview(&b.preview_args, &b.plan_digest)?;
        Ok(t.elapsed())
    })?;
    eprintln!(
        "{tag} preview (first call) median {:.1} ms",
        ms(preview_first)
    );
    let preview_warm = if warm {
        let d = timed(&mut || {
            let t = Instant::now();
            preview(&b.preview_args, &b.plan_digest)?;
            Ok(t.elapsed())
        })?;
        eprintln!("{tag} preview (memo warm) median {:.1} ms", ms(d));
        Some(d)
    } else {
        None
    };
    let apply_first = timed(&mut || {
        let (_, x) = b.fresh()?;
        memo::clear();
        let t = Instant::now();
        apply(&x)?;
        Ok(t.elapsed())
    })?;
    eprintln!("{tag} apply (first call) median {:.1} ms", ms(apply_first));
    let apply_warm = if warm {
        let d = timed(&mut || {
            let (a, x) = b.fresh()?;
            memo::clear();
            preview(&a, &b.plan_digest)?;
            let t = Instant::now();
            apply(&x)?;
            Ok(t.elapsed())
        })?;
        eprintln!("{tag} apply (after a preview) median {:.1} ms", ms(d));
        Some(d)
    } else {
        None
    };
    Ok(Times {
        reps,
        mib: b.mib(),
        floor: fl,
        write_floor: wf,
        preview_blocked: preview_blocked_t,
        preview_first,
        preview_warm,
        apply_first,
        apply_warm,
    })
}

// ---------------------------------------------------------------------------------------------
// Peak memory (child processes)

/// Peak RSS (kB) of the idle, floor, preview and apply children on one bundle size.
struct Peaks {
    mib: f64,
    idle: u64,
    floor: u64,
    args: u64,
    preview: u64,
    apply: u64,
}

fn memory(b: &Prepared) -> Res<Peaks> {
    let exe = std::env::current_exe()?;
    let (_, x) = b.fresh()?;
    let apply_file = b.base.join(format!("apply-{}.json", b.copies.get()));
    std::fs::write(&apply_file, serde_json::to_vec(&x)?)?;
    let idle = child_peak(&exe, &["idle"])?;
    let fl = child_peak(&exe, &["floor", &b.work.to_string_lossy()])?;
    let args = child_peak(&exe, &["args", &apply_file.to_string_lossy()])?;
    let preview = child_peak(&exe, &["preview", &b.preview_file.to_string_lossy()])?;
    let apply = child_peak(&exe, &["apply", &apply_file.to_string_lossy()])?;
    eprintln!(
        "[{} × {}×] peak RSS idle {idle} kB, floor {fl} kB, preview {preview} kB, apply {apply} kB",
        b.documents, b.size
    );
    Ok(Peaks {
        mib: b.mib(),
        idle,
        floor: fl,
        args,
        preview,
        apply,
    })
}

/// `VmHWM` of this process in kB (Linux `/proc/self/status`).
fn vm_hwm_kb() -> Res<u64> {
    let status = std::fs::read_to_string("/proc/self/status")?;
    let line = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .ok_or("no VmHWM")?;
    Ok(line.split_whitespace().nth(1).ok_or("bad VmHWM")?.parse()?)
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

fn child(args: &[String]) -> Res<()> {
    let arg = |i: usize| args.get(i).map(String::as_str).ok_or("missing argument");
    match arg(0)? {
        "idle" => {}
        "generate" => {
            gen::generate(
                Path::new(arg(1)?),
                gen::Spec {
                    documents: arg(2)?.parse()?,
                    size: arg(3)?.parse()?,
                },
            );
        }
        "prepare" => {
            let dir = Path::new(arg(1)?);
            let b = Prepared::new(dir, arg(2)?.parse()?, arg(3)?.parse()?)?;
            std::fs::write(
                dir.join("preview.json"),
                serde_json::to_vec(&b.preview_args)?,
            )?;
            std::fs::write(dir.join("apply.json"), serde_json::to_vec(&b.apply_args)?)?;
            eprintln!("bundle {}", b.work.display());
        }
        "floor" => {
            black_box(floor(Path::new(arg(1)?))?);
        }
        // What the request alone costs: the apply's arguments read and parsed into a JSON
        // value, as a server holds them before decoding.
        "args" => {
            let bytes = std::fs::read(arg(1)?)?;
            let v: Value = serde_json::from_slice(&bytes)?;
            black_box((&bytes, &v));
        }
        // The preview and the apply get the file's bytes as they are (no copy parsed here).
        "preview" => {
            let p = dispatch_bytes("preview_v02_migration", &std::fs::read(arg(1)?)?)?;
            if p["status"] != "applicable" {
                return Err(format!("preview status {}", p["status"]).into());
            }
        }
        "apply" => apply_bytes(&std::fs::read(arg(1)?)?)?,
        // `first <first.json>`: the first preview of the sequence (blocked, with proposals).
        "first" => {
            let p = dispatch_bytes("preview_v02_migration", &std::fs::read(arg(1)?)?)?;
            if p["status"] != "blocked" {
                return Err(format!("first preview status {}", p["status"]).into());
            }
        }
        // `time-preview <args.json> <n>`: n first-call previews in this process (memo cleared
        // before each), one line of milliseconds each (for profiling by hand).
        "time-preview" => {
            let bytes = std::fs::read(arg(1)?)?;
            for _ in 0..arg(2)?.parse::<usize>()? {
                memo::clear();
                let t = Instant::now();
                let p = dispatch_bytes("preview_v02_migration", &bytes)?;
                eprintln!("preview {:.1} ms, {}", ms(t.elapsed()), p["status"]);
            }
        }
        other => return Err(format!("unknown scenario {other}").into()),
    }
    println!("{}", vm_hwm_kb()?);
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Report

/// One column of the report: its label, its times (when timed) and its peaks.
type Column<'a> = (&'a str, Option<&'a Times>, &'a Peaks);

fn report(cols: &[Column<'_>]) -> String {
    let mut out = String::from(
        "## Migration of generated v0.1 bundles (90 % concepts, 10 % untyped references, plus the root index)\n\n",
    );
    let timed: Vec<(&str, &Times)> = cols
        .iter()
        .filter_map(|(n, t, _)| t.map(|t| (*n, t)))
        .collect();
    out.push_str("Time: median after one warm-up; ratio = median / floor of the same bundle.\n\n| Scenario |");
    for (n, t) in &timed {
        out.push_str(&format!(" {n} ({} reps) | ratio |", t.reps));
    }
    out.push_str(" Target |\n|---|");
    for _ in &timed {
        out.push_str("---:|---:|");
    }
    out.push_str("---|\n");
    type Pick = fn(&Times) -> Option<Duration>;
    let rows: [(&str, Pick, Option<f64>); 7] = [
        (
            "floor: walk + read + SHA-256 (one file at a time)",
            |t| Some(t.floor),
            None,
        ),
        (
            "durable-write floor: the apply's files written, renamed, one syncfs",
            |t| Some(t.write_floor),
            None,
        ),
        (
            "first preview (`citation_mappings: []`: blocked, proposals), first call",
            |t| Some(t.preview_blocked),
            Some(2.0),
        ),
        (
            "preview accepting the proposals by digest, first call of a process",
            |t| Some(t.preview_first),
            Some(2.0),
        ),
        (
            "preview_v02_migration, repeated in one process",
            |t| t.preview_warm,
            None,
        ),
        (
            "apply_v02_migration, first call of a process (fresh copy); ratio to floor + durable-write floor",
            |t| Some(t.apply_first),
            Some(2.0),
        ),
        (
            "apply_v02_migration after a preview in the same process (fresh copy)",
            |t| t.apply_warm,
            None,
        ),
    ];
    for (name, pick, target) in rows {
        out.push_str(&format!("| {name} |"));
        let mut worst: f64 = 0.0;
        // An apply is compared with reading and hashing plus writing durably.
        let apply = name.starts_with("apply_");
        for (_, t) in &timed {
            match pick(t) {
                Some(d) => {
                    let denominator = if apply {
                        t.floor + t.write_floor
                    } else {
                        t.floor
                    };
                    let r = d.as_secs_f64() / denominator.as_secs_f64();
                    worst = worst.max(r);
                    out.push_str(&format!(" {:.1} ms | {r:.2}× |", ms(d)));
                }
                None => out.push_str(" – | – |"),
            }
        }
        match target {
            Some(t) if worst <= t => out.push_str(&format!(" ≤ {t:.1}× met |\n")),
            Some(t) => out.push_str(&format!(" ≤ {t:.1}× **missed** |\n")),
            None => out.push_str(" – |\n"),
        }
    }
    let mib = |k: u64| k as f64 / 1024.0;
    out.push_str("\nPeak RSS (`VmHWM`, one child process each, first call):\n\n| Child |");
    for (n, _, _) in cols {
        out.push_str(&format!(" {n} |"));
    }
    out.push_str(" 4× vs 1× | Target (≤ 64 MiB; within 10 % from 1× to 4×) |\n|---|");
    for _ in cols {
        out.push_str("---:|");
    }
    out.push_str("---:|---|\n");
    type PickPeak = fn(&Peaks) -> u64;
    let rows: [(&str, PickPeak, bool); 5] = [
        ("idle", |p| p.idle, false),
        ("floor", |p| p.floor, false),
        (
            "the apply's arguments alone (read + parsed into a JSON value)",
            |p| p.args,
            false,
        ),
        ("preview_v02_migration", |p| p.preview, true),
        ("apply_v02_migration", |p| p.apply, true),
    ];
    for (name, pick, target) in rows {
        out.push_str(&format!("| {name} |"));
        for (_, _, p) in cols {
            out.push_str(&format!(" {:.1} MiB |", mib(pick(p))));
        }
        // The last two columns are the same file count at 1× and 4×.
        let (a, b) = (pick(cols[cols.len() - 2].2), pick(cols[cols.len() - 1].2));
        let change = (b as f64 - a as f64) / a as f64 * 100.0;
        out.push_str(&format!(" {change:+.1} % |"));
        if target {
            let max = cols.iter().map(|(_, _, p)| pick(p)).max().unwrap_or(0);
            let cap = mib(max) <= 64.0;
            let flat = change.abs() <= 10.0;
            let v = match (cap, flat) {
                (true, true) => "met".to_owned(),
                (true, false) => "**missed** (> 10 %)".to_owned(),
                (false, true) => "**missed** (> 64 MiB)".to_owned(),
                (false, false) => "**missed** (> 64 MiB, > 10 %)".to_owned(),
            };
            out.push_str(&format!(" {v} |\n"));
        } else {
            out.push_str(" – |\n");
        }
    }
    out
}
