//! Benchmark of `preview_concept_patch` and `apply_concept_patch` against the floor
//! (walk + read + SHA-256 of every visible file once), on generated bundles of 1,000 and
//! 9,000 concepts. Results and their reading: `docs/bench.md`.
//!
//! Run: `cargo bench --bench patch` (release profile). `harness = false`: this file owns its
//! timing loop (warm-up run, then `REPS` repetitions, median reported).
//!
//! Modes of the binary:
//! - no arguments (or cargo's `--bench`): generate the bundles, time every scenario, time the
//!   phases of one apply, and measure peak memory of each scenario in a child process;
//! - `--child <scenario> <bundle> [<expected_revision> <plan_digest> <concept_id>]`: run one
//!   scenario once and print `VmHWM` (kB) from `/proc/self/status`, so peaks never mix;
//!   `--child generate <dir> <concepts>` writes a bench bundle (for profiling by hand).
//!
//! Every scenario works on a bundle in a temp dir; nothing under the repository is touched.

use okf_mcp::cancel::Cancel;
use okf_mcp::digest;
use okf_mcp::okf::bundle::parse_bundle;
use okf_mcp::okf::capture::overlay_capture;
use okf_mcp::okf::memo;
use okf_mcp::okf::temporal::Profile;
use okf_mcp::okf::validate::{self, ValidationOptions};
use okf_mcp::okf::version::Target;
use okf_mcp::plan::identity::ChangeSet;
use okf_mcp::plan::patch::ops::parse_patch_request;
use okf_mcp::plan::patch::planner::{plan_patch, validation_options};
use okf_mcp::store::capture;
use okf_mcp::store::commit::{manifest, CommitRequest, Reserve, Txn};
use okf_mcp::store::handle::StoreOptions;
use okf_mcp::store::root;
use okf_mcp::tools::Ctx;
use okf_mcp::wire::dispatch::call;
use serde_json::{json, Value};
use std::hint::black_box;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

type Res<T> = Result<T, Box<dyn std::error::Error>>;

#[path = "support/bundle02.rs"]
mod bundle02;
use bundle02::{concept_id, concept_path, floor, generate};

const ACTOR: &str = "bench-agent";

fn main() -> Res<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--child") {
        return child(&args[1..]);
    }
    let mut report = String::new();
    for &(n, reps) in &[(1_000usize, 15usize), (9_000, 9)] {
        report.push_str(&run_size(n, reps)?);
    }
    report.push_str(&memory_vs_bytes()?);
    println!("\n{report}");
    Ok(())
}

/// The durable effects of one commit without any capture or planning (spec/store.md §10):
/// stage a 3 KB payload (write, fsync, fsync its directory and that one's parent), write the journal (write, fsync, rename,
/// fsync dir), publish (rename, fsync dir), write the receipt (write, fsync, rename, fsync dir)
/// and remove the journal (unlink, fsync dir): 9 fsyncs. Returns the time taken.
#[allow(clippy::disallowed_methods)] // a probe directory of the bench's own, not a bundle
fn durable_floor(dir: &Path) -> Res<Duration> {
    fn write_synced(path: &Path, bytes: &[u8]) -> Res<()> {
        let mut f = std::fs::File::create(path)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        Ok(())
    }
    fn sync_dir(dir: &Path) -> Res<()> {
        std::fs::File::open(dir)?.sync_all()?;
        Ok(())
    }
    let payload = vec![b'x'; 3 * 1024];
    let t = Instant::now();
    write_synced(&dir.join("payload"), &payload)?;
    sync_dir(dir)?;
    sync_dir(dir.parent().unwrap_or(dir))?;
    write_synced(&dir.join("journal.tmp"), &payload[..512])?;
    std::fs::rename(dir.join("journal.tmp"), dir.join("journal"))?;
    sync_dir(dir)?;
    std::fs::rename(dir.join("payload"), dir.join("published.md"))?;
    sync_dir(dir)?;
    write_synced(&dir.join("receipt.tmp"), &payload[..1024])?;
    std::fs::rename(dir.join("receipt.tmp"), dir.join("receipt"))?;
    sync_dir(dir)?;
    std::fs::remove_file(dir.join("journal"))?;
    sync_dir(dir)?;
    Ok(t.elapsed())
}

fn patch_ops(id: &str) -> Value {
    json!([{"kind": "set_lifecycle", "concept_id": id,
            "lifecycle": {"status": "draft", "stale_after": null}}])
}

fn preview_args(dir: &Path, id: &str) -> Value {
    json!({"bundle_path": dir.to_string_lossy(), "actor": ACTOR, "operations": patch_ops(id)})
}

fn apply_args(dir: &Path, id: &str, rev: &str, plan: &str) -> Value {
    json!({"bundle_path": dir.to_string_lossy(), "actor": ACTOR, "operations": patch_ops(id),
           "expected_revision": rev, "expected_plan_digest": plan})
}

fn dispatch(tool: &str, args: &Value) -> Res<Value> {
    let bytes = serde_json::to_vec(args)?;
    let r = call(tool, Some(&bytes), &Ctx::default()).ok_or("tool not registered")?;
    if r.is_error {
        return Err(format!(
            "{tool} failed: {}",
            r.texts.last().map_or("", String::as_str)
        )
        .into());
    }
    Ok(r.structured)
}

/// Preview through the dispatcher; returns `(base_revision, plan_digest)`, checking the plan
/// is applicable (a rejected or no-op plan would measure the wrong thing).
fn preview(dir: &Path, id: &str) -> Res<(String, String)> {
    let s = dispatch("preview_concept_patch", &preview_args(dir, id))?;
    if s["status"] != "applicable" {
        return Err(format!(
            "preview status {} for {id}: {}",
            s["status"], s["diagnostics"]
        )
        .into());
    }
    let rev = s["base_revision"].as_str().ok_or("no base_revision")?;
    let plan = s["plan_digest"].as_str().ok_or("no plan_digest")?;
    Ok((rev.to_owned(), plan.to_owned()))
}

fn apply(dir: &Path, id: &str, rev: &str, plan: &str) -> Res<()> {
    let s = dispatch("apply_concept_patch", &apply_args(dir, id, rev, plan))?;
    if s["status"] != "applied" {
        return Err(format!("apply status {}", s["status"]).into());
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

fn run_size(n: usize, reps: usize) -> Res<String> {
    let tmp = tempfile::tempdir()?;
    let dir = tmp.path().join("bundle");
    let t = Instant::now();
    let total = generate(&dir, n)?;
    eprintln!(
        "[{n}] generated {} files, {:.1} MiB in {:.1}s",
        n + 1,
        total as f64 / 1048576.0,
        t.elapsed().as_secs_f64()
    );
    // Sanity: the generated bundle is conformant, so plans carry no preexisting noise.
    let v = dispatch(
        "validate_bundle",
        &json!({"bundle_path": dir.to_string_lossy()}),
    )?;
    eprintln!(
        "[{n}] validate_bundle conformant = {}, diagnostics = {}",
        v["conformance"]["conformant"],
        v["diagnostics"].as_array().map_or(0, Vec::len)
    );

    // (a) floor
    black_box(floor(&dir)?);
    let mut fl = Vec::new();
    for _ in 0..reps {
        let t = Instant::now();
        black_box(floor(&dir)?);
        fl.push(t.elapsed());
    }
    let floor_med = median(fl);
    eprintln!("[{n}] floor   median {:.1} ms", ms(floor_med));

    // (b) preview of a one-concept patch (the bundle never changes).
    let pid = concept_id(n / 2);
    black_box(preview(&dir, &pid)?);
    let mut pv = Vec::new();
    for _ in 0..reps {
        let t = Instant::now();
        black_box(preview(&dir, &pid)?);
        pv.push(t.elapsed());
    }
    let preview_med = median(pv);
    eprintln!("[{n}] preview median {:.1} ms", ms(preview_med));
    // (b') the same preview as the first call of a process: the parse memo is cleared first.
    let mut pvc = Vec::new();
    for _ in 0..reps {
        memo::clear();
        let t = Instant::now();
        black_box(preview(&dir, &pid)?);
        pvc.push(t.elapsed());
    }
    let preview_cold_med = median(pvc);
    eprintln!(
        "[{n}] preview (memo cleared) median {:.1} ms",
        ms(preview_cold_med)
    );

    // (c) apply of a fresh one-concept patch: each repetition previews (untimed) a patch of
    // another concept, then times the apply.
    let mut ap = Vec::new();
    for r in 0..=reps {
        let id = concept_id((r * 37 + 3) % n);
        let (rev, plan) = preview(&dir, &id)?;
        let t = Instant::now();
        apply(&dir, &id, &rev, &plan)?;
        if r > 0 {
            ap.push(t.elapsed()); // repetition 0 is the warm-up (creates `.okf/`)
        }
    }
    let apply_med = median(ap);
    eprintln!("[{n}] apply   median {:.1} ms", ms(apply_med));
    // (c') the same with the memo cleared between the untimed preview and the timed apply.
    let mut apc = Vec::new();
    for r in 0..reps {
        let id = concept_id((r * 41 + 11) % n);
        let (rev, plan) = preview(&dir, &id)?;
        memo::clear();
        let t = Instant::now();
        apply(&dir, &id, &rev, &plan)?;
        apc.push(t.elapsed());
    }
    let apply_cold_med = median(apc);
    eprintln!(
        "[{n}] apply (memo cleared) median {:.1} ms",
        ms(apply_cold_med)
    );

    // (d) the durable-commit floor: the file writes, renames and 9 fsyncs of one commit
    // alone (spec/store.md §10 C8–C15), in a directory beside the bundle.
    let probe = dir.with_extension("fsync-probe");
    std::fs::create_dir_all(&probe)?;
    black_box(durable_floor(&probe)?);
    let mut df = Vec::new();
    for _ in 0..reps {
        df.push(durable_floor(&probe)?);
    }
    std::fs::remove_dir_all(&probe)?;
    let durable_med = median(df);
    eprintln!("[{n}] durable floor median {:.1} ms", ms(durable_med));

    // Phases of one apply, replicating apply_concept_patch's steps with the library parts.
    let phases = phases(&dir, n / 2 + 100, reps)?;

    // Peak memory, one child process per scenario.
    let exe = std::env::current_exe()?;
    let baseline = child_peak(&exe, &["idle", &dir.to_string_lossy()])?;
    let peak_floor = child_peak(&exe, &["floor", &dir.to_string_lossy()])?;
    let peak_preview = child_peak(&exe, &["preview", &dir.to_string_lossy(), &pid])?;
    let mut parts = Vec::new();
    for part in [
        "capture",
        "capture (digests only)",
        "capture+parse",
        "capture+validate",
    ] {
        parts.push((part, child_peak(&exe, &[part, &dir.to_string_lossy()])?));
    }
    let mid = concept_id(n / 2 + 200);
    let (rev, plan) = preview(&dir, &mid)?;
    let peak_apply = child_peak(&exe, &["apply", &dir.to_string_lossy(), &mid, &rev, &plan])?;
    let mid2 = concept_id(n / 2 + 300);
    let (rev2, plan2) = preview(&dir, &mid2)?;
    let peak_apply_warm = child_peak(
        &exe,
        &["apply-warm", &dir.to_string_lossy(), &mid2, &rev2, &plan2],
    )?;

    let kib = total as f64 / 1024.0;
    let mib = |k: u64| k as f64 / 1024.0;
    let over = |k: u64| (k as f64 - kib) / 1024.0;
    let over_idle = |k: u64| (k as f64 - baseline as f64) / 1024.0;
    let mut out = String::new();
    out.push_str(&format!(
        "## {n} concepts ({} files, {:.1} MiB, {reps} repetitions, median)\n\n",
        n + 1,
        total as f64 / 1048576.0
    ));
    out.push_str(
        "| Scenario | Median | Ratio to floor | Peak RSS | Peak RSS − idle | Peak RSS − bundle size |\n",
    );
    out.push_str("|---|---:|---:|---:|---:|---:|\n");
    out.push_str(&format!(
        "| idle child (baseline) | – | – | {:.1} MiB | – | – |\n",
        mib(baseline)
    ));
    let f = floor_med.as_secs_f64();
    for (name, d, peak) in [
        ("floor: walk + read + SHA-256", floor_med, Some(peak_floor)),
        ("preview_concept_patch (memo warm)", preview_med, None),
        (
            "preview_concept_patch (memo cleared: first call of a process)",
            preview_cold_med,
            Some(peak_preview),
        ),
        (
            "apply_concept_patch (memo warm)",
            apply_med,
            Some(peak_apply_warm),
        ),
        (
            "apply_concept_patch (memo cleared: first call of a process)",
            apply_cold_med,
            Some(peak_apply),
        ),
        (
            "durable-commit floor: 3 file writes, 4 renames, 9 fsyncs (no capture)",
            durable_med,
            None,
        ),
    ] {
        let (p, i, o) = peak.map_or(
            ("–".to_owned(), "–".to_owned(), "–".to_owned()),
            |k| {
                (
                    format!("{:.1} MiB", mib(k)),
                    format!("{:+.1} MiB", over_idle(k)),
                    format!("{:+.1} MiB", over(k)),
                )
            },
        );
        out.push_str(&format!(
            "| {name} | {:.1} ms | {:.2}× | {p} | {i} | {o} |\n",
            ms(d),
            d.as_secs_f64() / f,
        ));
    }
    out.push_str("\nPeak RSS of parts (one child each, no timing):\n\n");
    out.push_str(
        "| Part | Peak RSS | Peak RSS − idle | Peak RSS − bundle size |\n|---|---:|---:|---:|\n",
    );
    for (part, peak) in parts {
        out.push_str(&format!(
            "| {part} | {:.1} MiB | {:+.1} MiB | {:+.1} MiB |\n",
            mib(peak),
            over_idle(peak),
            over(peak)
        ));
    }
    out.push_str("\nPhases of one apply (median of the same repetitions):\n\n");
    out.push_str("| Phase | Median | Ratio to floor |\n|---|---:|---:|\n");
    for (name, d) in phases {
        out.push_str(&format!(
            "| {name} | {:.1} ms | {:.2}× |\n",
            ms(d),
            d.as_secs_f64() / f
        ));
    }
    out.push('\n');
    Ok(out)
}

/// Peak memory of the same 1,001 files at two sizes: the generated bundle (≈ 3.1 KB per
/// file) and the same bundle with ≈ 25 KB of plain text appended to every concept body.
/// A resident capture grows with the bytes; preview and apply must not (docs/store.md §3.2).
fn memory_vs_bytes() -> Res<String> {
    let pad = format!(
        "\n{}",
        format!(
            "{}\n\n",
            "Padding text without links or citations. ".repeat(20)
        )
        .repeat(30)
    );
    let tmp = tempfile::tempdir()?;
    let small = tmp.path().join("small");
    let large = tmp.path().join("large");
    let n = 1_000;
    let small_total = generate(&small, n)?;
    generate(&large, n)?;
    for i in 0..n {
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(large.join(concept_path(i)))?;
        std::io::Write::write_all(&mut f, pad.as_bytes())?;
    }
    let large_total = small_total + (n * pad.len()) as u64;
    let exe = std::env::current_exe()?;
    let id = concept_id(n / 2);
    let mut rows: Vec<(&str, u64, u64)> = Vec::new();
    for (name, args) in [
        ("idle child", vec!["idle"]),
        ("capture (resident)", vec!["capture"]),
        ("capture (digests only)", vec!["capture (digests only)"]),
        ("preview_concept_patch (first call)", vec!["preview"]),
    ] {
        let peak = |dir: &Path| -> Res<u64> {
            let d = dir.to_string_lossy();
            let mut a: Vec<&str> = args.clone();
            a.insert(1, &d);
            if name.starts_with("preview") {
                a.push(&id);
            }
            child_peak(&exe, &a)
        };
        rows.push((name, peak(&small)?, peak(&large)?));
    }
    let mib = |k: u64| k as f64 / 1024.0;
    let mut out = format!(
        "## Peak RSS against bundle bytes ({} files: {:.1} MiB and {:.1} MiB)\n\n",
        n + 1,
        small_total as f64 / 1048576.0,
        large_total as f64 / 1048576.0
    );
    out.push_str("| Child | small bundle | large bundle | difference |\n|---|---:|---:|---:|\n");
    for (name, a, b) in rows {
        out.push_str(&format!(
            "| {name} | {:.1} MiB | {:.1} MiB | {:+.1} MiB |\n",
            mib(a),
            mib(b),
            mib(b) - mib(a)
        ));
    }
    out.push('\n');
    Ok(out)
}

/// Times the steps of `apply_concept_patch` one by one (spec/store.md §3, §10): capture,
/// parse of the base, plan (with its own parts: base validation, overlay + re-hash, staged
/// validation, timed separately on the same capture), commit (with its locked re-capture).
fn phases(dir: &Path, first: usize, reps: usize) -> Res<Vec<(&'static str, Duration)>> {
    let names = [
        "capture (walk + read + SHA-256 + revision)",
        "parse_bundle of the base",
        "plan_patch (total)",
        "  of which: validate base",
        "  of which: overlay_capture (copy + re-hash)",
        "  of which: validate staged",
        "  incremental: validate_bundle of the already parsed base",
        "  incremental: validate_staged (parses the written documents only)",
        "  incremental: digest::revision_with (no copy, hashes the writes)",
        "commit (lock, re-capture, stage, fsync, publish, receipt)",
        "  of which: re-capture under the lock",
    ];
    let mut samples: Vec<Vec<Duration>> = vec![Vec::new(); names.len()];
    let cancel = Cancel::default();
    let bundle = dir.to_string_lossy().into_owned();
    for r in 0..=reps {
        let id = concept_id(first + r);
        let (rev, plan_digest) = preview(dir, &id)?;
        let args = apply_args(dir, &id, &rev, &plan_digest);
        let req = parse_patch_request(&args, true).map_err(|e| e.message)?;
        let mut s = Vec::with_capacity(names.len());

        let t = Instant::now();
        let rt = root::open(&bundle).map_err(|e| e.message)?;
        let cap = capture::capture(&rt, &cancel).map_err(|e| e.message)?;
        s.push(t.elapsed());

        let t = Instant::now();
        let parsed = black_box(parse_bundle(&cap).map_err(|_| "bundle fault")?);
        s.push(t.elapsed());

        let t = Instant::now();
        let plan = plan_patch(&cap, &req, &rev, &cancel).map_err(|e| e.message)?;
        s.push(t.elapsed());
        if plan.plan_digest != plan_digest {
            return Err("plan digest differs from the preview".into());
        }

        let opts = validation_options(&req);
        let t = Instant::now();
        black_box(validate::validate(&cap, &opts).map_err(|_| "bundle fault")?);
        s.push(t.elapsed());
        let t = Instant::now();
        let writes = plan
            .writes
            .resident()
            .ok_or("a patch plan holds its bytes")?;
        let staged = overlay_capture(&cap, writes);
        s.push(t.elapsed());
        let t = Instant::now();
        let full = black_box(validate::validate(&staged, &opts).map_err(|_| "bundle fault")?);
        s.push(t.elapsed());
        drop(staged);

        // The incremental path (parse once, validate the writes only, no overlay copy); the
        // bench refuses to report figures if its answers differ from the full path.
        let t = Instant::now();
        let base_report = black_box(validate::validate_bundle(&parsed, &opts));
        s.push(t.elapsed());
        let t = Instant::now();
        let fast = black_box(
            validate::validate_staged(&parsed, &base_report, writes, &opts)
                .map_err(|_| "bundle fault")?,
        );
        s.push(t.elapsed());
        let t = Instant::now();
        let revision = black_box(digest::revision_with(
            cap.files.iter().map(|f| (f.path.as_str(), &f.digest)),
            writes,
        ));
        s.push(t.elapsed());
        if fast != full || Some(&revision) != plan.result_revision.as_ref() {
            return Err("incremental validation or revision differs from the full path".into());
        }
        drop(parsed);

        let change_set = ChangeSet::concept_patch(&req.actor, &rev, &req.operations);
        let key =
            digest::idempotency_key(<okf_mcp::tools::concept_patch::ConceptPatch as okf_mcp::tools::spine::Workflow>::NAMESPACE, &plan_digest)
                .map_err(|()| "idempotency key")?;
        let request = CommitRequest {
            change_set_id: change_set.id.clone(),
            idempotency_key: key,
            request_digest: change_set.request_digest(),
            base_revision: rev.clone(),
            result_revision: plan.result_revision.clone().unwrap_or_default(),
            base: manifest(&cap),
            writes: plan.writes,
            changed_refs: plan.changed_refs,
            replay: None,
        };
        let t = Instant::now();
        black_box(capture::capture(&rt, &cancel).map_err(|e| e.message)?);
        let recapture = t.elapsed();
        let t = Instant::now();
        let _committed = Txn::begin(
            &rt,
            &request.idempotency_key,
            &request.request_digest,
            Reserve::Deferred,
            &cancel,
            &StoreOptions::from_env(),
        )
        .and_then(|txn| txn.commit(&request, None, None, &cancel))
        .map_err(|e| format!("{e:?}"))?;
        s.push(t.elapsed());
        s.push(recapture);

        if r > 0 {
            for (acc, d) in samples.iter_mut().zip(s) {
                acc.push(d);
            }
        }
    }
    Ok(names
        .into_iter()
        .zip(samples)
        .map(|(n, v)| (n, median(v)))
        .collect())
}

// ---------------------------------------------------------------------------------------------
// Peak memory (child processes)

/// `VmHWM` of this process in kB (Linux `/proc/self/status`).
fn vm_hwm_kb() -> Res<u64> {
    let status = std::fs::read_to_string("/proc/self/status")?;
    let line = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .ok_or("no VmHWM")?;
    let kb = line.split_whitespace().nth(1).ok_or("bad VmHWM")?.parse()?;
    Ok(kb)
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

fn capture_only(dir: &Path) -> Res<okf_mcp::okf::capture::Capture> {
    let rt = root::open(&dir.to_string_lossy()).map_err(|e| e.message)?;
    Ok(capture::capture(&rt, &Cancel::default()).map_err(|e| e.message)?)
}

/// The validator options `plan_patch` uses (date profile).
fn strict_v02() -> ValidationOptions {
    ValidationOptions {
        strict: true,
        check_links: false,
        check_orphans: false,
        spec_version: Some(Target::V02),
        temporal_profile: Profile::Date,
        as_of: None,
    }
}

fn child(args: &[String]) -> Res<()> {
    let arg = |i: usize| args.get(i).map(String::as_str).ok_or("missing argument");
    let dir = Path::new(arg(1)?);
    match arg(0)? {
        "idle" => {}
        // For profiling by hand: `--child generate <dir> <concepts>` writes a bench bundle.
        "generate" => {
            generate(dir, arg(2)?.parse()?)?;
        }
        "floor" => {
            black_box(floor(dir)?);
        }
        "preview" => {
            black_box(preview(dir, arg(2)?)?);
        }
        "apply" => apply(dir, arg(2)?, arg(3)?, arg(4)?)?,
        // A server that already answered a preview of this bundle (the memo is warm): the
        // preview runs first, then the apply; the peak covers both.
        "apply-warm" => {
            black_box(preview(dir, arg(2)?)?);
            apply(dir, arg(2)?, arg(3)?, arg(4)?)?;
        }
        "capture" => {
            black_box(capture_only(dir)?);
        }
        "capture (digests only)" => {
            let rt = root::open(&dir.to_string_lossy()).map_err(|e| e.message)?;
            black_box(
                capture::capture_with(&rt, &Cancel::default(), Some(&capture::Spill::DIGESTS_ONLY))
                    .map_err(|e| e.message)?,
            );
        }
        "capture+parse" => {
            let cap = capture_only(dir)?;
            black_box(parse_bundle(&cap).map_err(|_| "bundle fault")?);
        }
        "capture+validate" => {
            let cap = capture_only(dir)?;
            black_box(validate::validate(&cap, &strict_v02()).map_err(|_| "bundle fault")?);
        }
        other => return Err(format!("unknown scenario {other}").into()),
    }
    println!("{}", vm_hwm_kb()?);
    Ok(())
}
