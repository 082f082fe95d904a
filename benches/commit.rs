//! Benchmark of one store commit of 5,000 changed files (spec/migration.md §12.5, issue 9)
//! against the durable floor of the same writes, on a generated bundle of 5,000 concepts of
//! ≈ 3 KB. Results and their reading: `docs/bench.md`.
//!
//! Run: `cargo bench --bench commit` (release profile). `harness = false`: this file owns its
//! timing loop. Rows:
//! - (a) a streamed `store::commit::Txn` commit with the production options: payloads produced under
//!   the lock as they are staged, C5 capture, one `syncfs` for the staged set
//!   (`Durable::sync_batch`), journal, publish, receipt;
//! - (b) the durable floor: a plain program writes the same 5,000 payloads into a staging
//!   directory on the same filesystem, makes them durable with one `syncfs`, renames each into
//!   place and `fsync`s the 50 target directories;
//! - (c) the floor with one `fsync` per payload instead of the `syncfs`; with
//!   `--features fault-injection` also the store with a durability seam whose `sync_batch`
//!   `fsync`s every payload (`StoreOptions::with_fs`);
//! - (d) peak RSS of one store commit in a child process with ≈ 1 KiB and ≈ 8 KiB payloads.
//!
//! Every timed repetition starts from the pre-state: every concept is rewritten with its base
//! bytes and the filesystem is synced (untimed), so each one writes 5,000 changed files and
//! flushes only its own data. Variants alternate within a round (A/B, then B/A), and the
//! figures are medians.
//!
//! Modes of the binary: no arguments (or cargo's `--bench`): everything; `--child rss <pad>`:
//! generate a bundle, run one commit with payloads of ≈ `pad` bytes and print `VmHWM` (kB)
//! before and after it.

// The bench builds its own temp bundles and its own floor program; only the store's commit
// under test goes through the store.
#![allow(clippy::disallowed_methods)]

use okf_mcp::cancel::Cancel;
use okf_mcp::digest::{self, Encoder};
use okf_mcp::okf::capture::Capture;
use okf_mcp::plan::stream::{Emit, Payloads, PlannedWrite, Writes};
use okf_mcp::store::capture::{capture_with, Spill};
use okf_mcp::store::commit::{manifest, CommitOutcome, CommitRequest, Reserve, Txn};
use okf_mcp::store::error::StoreError;
use okf_mcp::store::handle::StoreOptions;
use okf_mcp::store::root::{self, Root};
use std::collections::BTreeMap;
use std::hint::black_box;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

type Res<T> = Result<T, Box<dyn std::error::Error>>;

/// Concept files, all changed by every commit; the root `index.md` is not.
const CONCEPTS: usize = 5_000;
/// Leaf folders (`cNN/`), so a publish touches 50 directories.
const FOLDERS: usize = 50;
/// Size of the base and new bytes of a concept in the timed rows.
const PAD: usize = 3_100;
/// Counted rounds of (a)/(b) after one warm-up round.
const REPS: usize = 7;
/// Counted rounds of (c): one `fsync` per file costs seconds per repetition on this disk.
const SERIAL_REPS: usize = 3;

fn main() -> Res<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--child") {
        return child(&args[1..]);
    }
    let started = Instant::now();
    let mut report = String::new();
    report.push_str(&timed_rows()?);
    report.push_str(&memory_rows()?);
    println!("\n{report}");
    eprintln!("total {:.0} s", started.elapsed().as_secs_f64());
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// The bundle

fn concept_path(i: usize) -> String {
    format!("c{:02}/concept-{i:05}.md", i % FOLDERS)
}

/// Frontmatter and a body of plain text, padded to about `pad` bytes.
fn padded(head: &str, pad: usize) -> Vec<u8> {
    let mut b = head.as_bytes().to_vec();
    while b.len() < pad {
        b.extend_from_slice(b"The figures are reconciled nightly against the ledger.\n");
    }
    b
}

fn base_bytes(i: usize) -> Vec<u8> {
    padded(
        &format!("---\ntype: note\ntitle: Concept {i}\nstatus: stable\n---\n# Concept {i}\n\n"),
        PAD,
    )
}

/// The new bytes of `path`: generated on demand, never held for the whole commit.
fn new_bytes(path: &str, pad: usize) -> Vec<u8> {
    padded(
        &format!("---\ntype: note\ntitle: {path}\nstatus: deprecated\n---\n# {path}\n\n"),
        pad,
    )
}

const INDEX: &[u8] = b"---\nokf_version: \"0.2\"\ntitle: Commit bench\n---\n# Commit bench\n";

/// `syncfs` of the filesystem holding `dir`.
fn sync_fs(dir: &Path) -> Res<()> {
    rustix::fs::syncfs(std::fs::File::open(dir)?)?;
    Ok(())
}

fn generate(b: &Path) -> Res<()> {
    for f in 0..FOLDERS {
        std::fs::create_dir_all(b.join(format!("c{f:02}")))?;
    }
    std::fs::write(b.join("index.md"), INDEX)?;
    restore(b)
}

/// The pre-state: every concept holds its base bytes, and nothing is left dirty in the
/// page cache for the next timed step to flush.
fn restore(b: &Path) -> Res<()> {
    for i in 0..CONCEPTS {
        std::fs::write(b.join(concept_path(i)), base_bytes(i))?;
    }
    sync_fs(b)
}

/// Checks that the tree holds the new bytes (a few files, spread over the folders).
fn check_post(b: &Path, pad: usize) -> Res<()> {
    for i in [0, CONCEPTS / 3, CONCEPTS / 2 + 7, CONCEPTS - 1] {
        let p = concept_path(i);
        if std::fs::read(b.join(&p))? != new_bytes(&p, pad) {
            return Err(format!("{p} does not hold the new bytes").into());
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// (a) the store

/// The payloads of the commit, produced one at a time under the lock.
struct Gen {
    pad: usize,
}

impl Payloads<StoreError> for Gen {
    fn produce(
        &self,
        _locked: &Capture,
        emit: &mut Emit<'_, StoreError>,
    ) -> Result<(), StoreError> {
        for i in 0..CONCEPTS {
            let p = concept_path(i);
            emit(&p, &new_bytes(&p, self.pad))?;
        }
        Ok(())
    }
}

/// The store's streamed commit of `req` (capture-first: the store captures under its lock).
fn commit_streamed(
    root: &Root,
    req: &CommitRequest,
    payloads: &Gen,
    opts: &StoreOptions,
) -> Result<CommitOutcome, StoreError> {
    let cancel = Cancel::new();
    Txn::begin(
        root,
        &req.idempotency_key,
        &req.request_digest,
        Reserve::Deferred,
        &cancel,
        opts,
    )?
    .commit(req, Some(payloads), None, &cancel)
}

fn open_root(b: &Path) -> Res<Root> {
    root::open(b.to_str().ok_or("temp path is not UTF-8")?).map_err(|e| e.message.into())
}

/// The streamed request changing every concept (untimed: the planner's part). `n` makes
/// each repetition's idempotency key its own, so no commit is a receipt replay.
fn request(root: &Root, pad: usize, n: usize) -> Res<CommitRequest> {
    let cap =
        capture_with(root, &Cancel::new(), Some(&Spill::DIGESTS_ONLY)).map_err(|e| e.message)?;
    if cap.files.len() != CONCEPTS + 1 {
        return Err(format!("captured {} files", cap.files.len()).into());
    }
    let writes: Vec<PlannedWrite> = (0..CONCEPTS)
        .map(|i| {
            let p = concept_path(i);
            PlannedWrite::of(&p, &new_bytes(&p, pad))
        })
        .collect();
    let mut result: BTreeMap<&str, &[u8; 32]> = cap
        .files
        .iter()
        .map(|f| (f.path.as_str(), &f.digest))
        .collect();
    for w in &writes {
        result.insert(w.path.as_str(), &w.digest);
    }
    let result_revision = digest::revision(result);
    let tag = n.to_string();
    let plan_digest = Encoder::tagged("bench:commit-plan").str(&tag).digest();
    Ok(CommitRequest {
        change_set_id: format!("mcp-patch-bench-{n}"),
        idempotency_key: digest::idempotency_key("mcp:concept-patch", &plan_digest)
            .map_err(|()| "idempotency key")?,
        request_digest: Encoder::tagged("bench:commit").str(&tag).digest(),
        base_revision: cap.revision.clone(),
        result_revision,
        base: manifest(&cap),
        writes: Writes::Streamed(writes),
        changed_refs: (0..CONCEPTS)
            .map(|i| concept_path(i).trim_end_matches(".md").to_owned())
            .collect(),
        replay: None,
    })
}

/// One store commit from the pre-state; returns its time (the request is built untimed).
fn store_commit(b: &Path, n: usize, serial: bool) -> Res<Duration> {
    restore(b)?;
    let root = open_root(b)?;
    let req = request(&root, PAD, n)?;
    let t = Instant::now();
    let out = if serial {
        serial_commit(&root, &req)?
    } else {
        commit_streamed(&root, &req, &Gen { pad: PAD }, &StoreOptions::from_env())
            .map_err(|e| format!("commit: {e:?}"))?
    };
    let d = t.elapsed();
    if out.receipt.receipt.changed_files.len() != CONCEPTS {
        return Err("the receipt does not list 5,000 changed files".into());
    }
    check_post(b, PAD)?;
    Ok(d)
}

#[cfg(not(feature = "fault-injection"))]
fn serial_commit(_root: &Root, _req: &CommitRequest) -> Res<CommitOutcome> {
    Err("the per-file fsync seam needs --features fault-injection".into())
}

/// The store with a durability seam that `fsync`s each staged payload instead of one
/// `syncfs` (`StoreOptions::with_fs` exists only under `fault-injection`).
#[cfg(feature = "fault-injection")]
fn serial_commit(root: &Root, req: &CommitRequest) -> Res<CommitOutcome> {
    let opts = StoreOptions::default().with_fs(std::sync::Arc::new(serial_fs::SerialFs));
    commit_streamed(root, req, &Gen { pad: PAD }, &opts)
        .map_err(|e| format!("commit: {e:?}").into())
}

#[cfg(feature = "fault-injection")]
mod serial_fs {
    use cap_std::fs::File;
    use okf_mcp::store::durable::{At, Durable, RealFs};
    use std::io;

    /// [`RealFs`] except that [`Durable::sync_batch`] `fsync`s every file, whatever their
    /// number.
    #[derive(Debug)]
    pub struct SerialFs;

    impl Durable for SerialFs {
        fn create_write(&self, at: At<'_>, name: &str, bytes: &[u8]) -> io::Result<File> {
            RealFs.create_write(at, name, bytes)
        }
        fn sync_file(&self, at: At<'_>, name: &str, file: &File) -> io::Result<()> {
            RealFs.sync_file(at, name, file)
        }
        fn sync_batch(&self, at: At<'_>, names: &[&str]) -> io::Result<()> {
            for name in names {
                at.dir.open(name)?.sync_all()?;
            }
            Ok(())
        }
        fn rename(&self, from: At<'_>, f: &str, to: At<'_>, t: &str) -> io::Result<()> {
            RealFs.rename(from, f, to, t)
        }
        fn sync_dir(&self, at: At<'_>) -> io::Result<()> {
            RealFs.sync_dir(at)
        }
        fn remove_file(&self, at: At<'_>, name: &str) -> io::Result<()> {
            RealFs.remove_file(at, name)
        }
        fn remove_dir_all(&self, at: At<'_>, name: &str) -> io::Result<()> {
            RealFs.remove_dir_all(at, name)
        }
        fn mkdir(&self, at: At<'_>, name: &str, mode: u32) -> io::Result<()> {
            RealFs.mkdir(at, name, mode)
        }
        fn set_mode(&self, at: At<'_>, name: &str, mode: u32) -> io::Result<()> {
            RealFs.set_mode(at, name, mode)
        }
    }
}

/// The store's C5 capture alone (digests only), from the same pre-state.
fn capture_alone(b: &Path) -> Res<Duration> {
    restore(b)?;
    let root = open_root(b)?;
    let t = Instant::now();
    let cap =
        capture_with(&root, &Cancel::new(), Some(&Spill::DIGESTS_ONLY)).map_err(|e| e.message)?;
    let d = t.elapsed();
    black_box(cap);
    Ok(d)
}

// ---------------------------------------------------------------------------------------------
// (b), (c) the floor: a plain program

/// The phases of one floor run: writes, durability step, renames, directory `fsync`s.
type FloorPhases = [Duration; 4];

/// Writes the 5,000 payloads into `staging` (beside the bundle, same filesystem), makes them
/// durable (one `syncfs`, or one `fsync` per file when `serial`), renames each into place
/// and `fsync`s every target directory; returns its time and pushes its phases to `phases`.
fn floor(
    b: &Path,
    staging: &Path,
    serial: bool,
    phases: &std::cell::RefCell<Vec<FloorPhases>>,
) -> Res<Duration> {
    restore(b)?;
    let t = Instant::now();
    std::fs::create_dir(staging)?;
    let mut fsyncs = Duration::ZERO;
    for i in 0..CONCEPTS {
        let p = concept_path(i);
        let mut f = std::fs::File::create_new(staging.join(format!("p{i:05}")))?;
        f.write_all(&new_bytes(&p, PAD))?;
        if serial {
            let s = Instant::now();
            f.sync_all()?;
            fsyncs += s.elapsed();
        }
    }
    let written = t.elapsed() - fsyncs;
    let s = Instant::now();
    if !serial {
        sync_fs(staging)?;
    }
    let durable = s.elapsed() + fsyncs;
    let s = Instant::now();
    for i in 0..CONCEPTS {
        std::fs::rename(staging.join(format!("p{i:05}")), b.join(concept_path(i)))?;
    }
    let renamed = s.elapsed();
    let s = Instant::now();
    for f in 0..FOLDERS {
        std::fs::File::open(b.join(format!("c{f:02}")))?.sync_all()?;
    }
    std::fs::remove_dir(staging)?;
    let dirs = s.elapsed();
    let d = t.elapsed();
    phases.borrow_mut().push([written, durable, renamed, dirs]);
    check_post(b, PAD)?;
    Ok(d)
}

/// The median of each phase over the counted rounds (the last `counted` entries).
fn phase_medians(phases: &std::cell::RefCell<Vec<FloorPhases>>, counted: usize) -> FloorPhases {
    let all = phases.borrow();
    let kept = &all[all.len().saturating_sub(counted)..];
    let mut out = [Duration::ZERO; 4];
    for (k, o) in out.iter_mut().enumerate() {
        *o = median(kept.iter().map(|p| p[k]).collect());
    }
    out
}

/// The phases' names, for a row label.
const PHASES: &str = "writes / durability step / renames / dir `fsync`s";

/// "1234 / 567 / 89 / 12 ms", in the order of [`PHASES`].
fn phase_text(p: FloorPhases) -> String {
    format!(
        "{:.0} / {:.0} / {:.0} / {:.0} ms",
        ms(p[0]),
        ms(p[1]),
        ms(p[2]),
        ms(p[3])
    )
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

fn ratio(a: Duration, b: Duration) -> f64 {
    a.as_secs_f64() / b.as_secs_f64()
}

/// Median and range of per-round ratios.
fn ratio_range(a: &[Duration], b: &[Duration]) -> String {
    let mut r: Vec<f64> = a.iter().zip(b).map(|(x, y)| ratio(*x, *y)).collect();
    r.sort_by(f64::total_cmp);
    format!(
        "{:.2}× ({:.2}–{:.2}×)",
        r[r.len() / 2],
        r[0],
        r[r.len() - 1]
    )
}

/// One variant of a round.
type Step<'a> = Box<dyn FnMut(usize) -> Res<Duration> + 'a>;

/// Runs `rounds` rounds (plus one warm-up when `warm_up`) of every step, rotating which step
/// goes first; returns each step's samples.
fn rounds(
    steps: &mut [Step<'_>],
    rounds: usize,
    warm_up: bool,
    tag: &str,
) -> Res<Vec<Vec<Duration>>> {
    let mut samples = vec![Vec::new(); steps.len()];
    let first = usize::from(!warm_up);
    for r in first..=rounds {
        for k in 0..steps.len() {
            let s = (r + k) % steps.len();
            let d = steps[s](r)?;
            if r > 0 {
                samples[s].push(d);
            }
        }
        eprintln!(
            "[{tag}] round {r}: {}",
            samples
                .iter()
                .map(|v| v
                    .last()
                    .map_or("warm-up".to_owned(), |d| format!("{:.0} ms", ms(*d))))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    Ok(samples)
}

fn timed_rows() -> Res<String> {
    let tmp = tempfile::tempdir()?;
    let b = tmp.path().join("bundle");
    let staging = tmp.path().join("floor-staging");
    let t = Instant::now();
    generate(&b)?;
    eprintln!(
        "generated {} files of ≈ {PAD} bytes in {:.1} s",
        CONCEPTS + 1,
        t.elapsed().as_secs_f64()
    );
    // Each store commit gets its own request and key.
    let n = std::cell::Cell::new(0usize);
    let next = || {
        n.set(n.get() + 1);
        n.get()
    };

    // (a) against (b), with the C5 capture alone as a third step.
    let batch_phases = std::cell::RefCell::new(Vec::new());
    let serial_phases = std::cell::RefCell::new(Vec::new());
    let ab = {
        let (bb, st) = (b.as_path(), staging.as_path());
        let mut steps: Vec<Step<'_>> = vec![
            Box::new(|_| store_commit(bb, next(), false)),
            Box::new(|_| floor(bb, st, false, &batch_phases)),
            Box::new(|_| capture_alone(bb)),
        ];
        rounds(&mut steps, REPS, true, "store / floor / capture")?
    };

    // (c) one fsync per payload against the batch, in the floor (and in the store).
    let serial_store = cfg!(feature = "fault-injection");
    let ab_phases = phase_medians(&batch_phases, REPS);
    let c = {
        let (bb, st) = (b.as_path(), staging.as_path());
        let mut steps: Vec<Step<'_>> = vec![
            Box::new(|_| floor(bb, st, true, &serial_phases)),
            Box::new(|_| floor(bb, st, false, &batch_phases)),
        ];
        if serial_store {
            steps.push(Box::new(|_| store_commit(bb, next(), true)));
            steps.push(Box::new(|_| store_commit(bb, next(), false)));
        }
        rounds(&mut steps, SERIAL_REPS, false, "serial / batch")?
    };

    let (store, fl, cap) = (
        median(ab[0].clone()),
        median(ab[1].clone()),
        median(ab[2].clone()),
    );
    let mut out = format!(
        "## Commit of {CONCEPTS} changed files (≈ {PAD} B each, {FOLDERS} folders; {REPS} rounds, median)\n\n"
    );
    out.push_str("| Row | Median | min–max | Ratio to the floor |\n|---|---:|---:|---:|\n");
    let range = |v: &[Duration]| {
        let lo = v.iter().min().copied().unwrap_or_default();
        let hi = v.iter().max().copied().unwrap_or_default();
        format!("{:.0}–{:.0} ms", ms(lo), ms(hi))
    };
    out.push_str(&format!(
        "| (b) floor: writes to staging + 1 `syncfs` + renames + {FOLDERS} dir `fsync`s | {:.0} ms | {} | 1.00× |\n",
        ms(fl),
        range(&ab[1])
    ));
    out.push_str(&format!(
        "| of (b): {PHASES} | {} | | |\n",
        phase_text(ab_phases)
    ));
    out.push_str(&format!(
        "| (a) store: `commit_streamed`, production options | {:.0} ms | {} | {:.2}× (per round {}) |\n",
        ms(store),
        range(&ab[0]),
        ratio(store, fl),
        ratio_range(&ab[0], &ab[1])
    ));
    out.push_str(&format!(
        "| of (a): the C5 capture alone (walk + read + SHA-256, digests only) | {:.0} ms | {} | {:.2}× |\n",
        ms(cap),
        range(&ab[2]),
        ratio(cap, fl)
    ));
    out.push_str(&format!(
        "\n### One `fsync` per file against the batch ({SERIAL_REPS} rounds, median)\n\n"
    ));
    out.push_str("| Row | Median | min–max | Serial / batch |\n|---|---:|---:|---:|\n");
    let (fs_serial, fs_batch) = (median(c[0].clone()), median(c[1].clone()));
    out.push_str(&format!(
        "| floor, one `fsync` per file | {:.0} ms | {} | {:.2}× (per round {}) |\n",
        ms(fs_serial),
        range(&c[0]),
        ratio(fs_serial, fs_batch),
        ratio_range(&c[0], &c[1])
    ));
    out.push_str(&format!(
        "| of it: {PHASES} | {} | | |\n",
        phase_text(phase_medians(&serial_phases, SERIAL_REPS))
    ));
    out.push_str(&format!(
        "| floor, one `syncfs` | {:.0} ms | {} | – |\n",
        ms(fs_batch),
        range(&c[1])
    ));
    out.push_str(&format!(
        "| of it: {PHASES} | {} | | |\n",
        phase_text(phase_medians(&batch_phases, SERIAL_REPS))
    ));
    if serial_store {
        let (st_serial, st_batch) = (median(c[2].clone()), median(c[3].clone()));
        out.push_str(&format!(
            "| store, seam with one `fsync` per payload | {:.0} ms | {} | {:.2}× (per round {}) |\n",
            ms(st_serial),
            range(&c[2]),
            ratio(st_serial, st_batch),
            ratio_range(&c[2], &c[3])
        ));
        out.push_str(&format!(
            "| store, `sync_batch` (`syncfs`) | {:.0} ms | {} | – |\n",
            ms(st_batch),
            range(&c[3])
        ));
    } else {
        out.push_str(
            "\n(The store's per-payload `fsync` rows need `--features fault-injection`.)\n",
        );
    }
    out.push('\n');
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// (d) peak memory (child processes)

/// `VmHWM` of this process in kB (Linux `/proc/self/status`).
fn vm_hwm_kb() -> Res<u64> {
    let status = std::fs::read_to_string("/proc/self/status")?;
    let line = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .ok_or("no VmHWM")?;
    Ok(line.split_whitespace().nth(1).ok_or("bad VmHWM")?.parse()?)
}

fn child(args: &[String]) -> Res<()> {
    let arg = |i: usize| args.get(i).map(String::as_str).ok_or("missing argument");
    if arg(0)? != "rss" {
        return Err(format!("unknown child mode {}", arg(0)?).into());
    }
    let pad: usize = arg(1)?.parse()?;
    let tmp = tempfile::tempdir()?;
    let b = tmp.path().join("bundle");
    generate(&b)?;
    let root = open_root(&b)?;
    let req = request(&root, pad, 1)?;
    let before = vm_hwm_kb()?;
    let out = commit_streamed(&root, &req, &Gen { pad }, &StoreOptions::from_env())
        .map_err(|e| format!("commit: {e:?}"))?;
    let peak = vm_hwm_kb()?;
    if out.receipt.receipt.changed_files.len() != CONCEPTS {
        return Err("the receipt does not list 5,000 changed files".into());
    }
    check_post(&b, pad)?;
    println!("{before} {peak}");
    Ok(())
}

fn child_peak(exe: &PathBuf, pad: usize) -> Res<(u64, u64)> {
    let out = Command::new(exe)
        .args(["--child", "rss", &pad.to_string()])
        .output()?;
    if !out.status.success() {
        return Err(format!(
            "child rss {pad} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        )
        .into());
    }
    let text = String::from_utf8(out.stdout)?;
    let mut it = text.split_whitespace().map(str::parse::<u64>);
    match (it.next(), it.next()) {
        (Some(Ok(before)), Some(Ok(peak))) => Ok((before, peak)),
        _ => Err(format!("bad child output {text:?}").into()),
    }
}

fn memory_rows() -> Res<String> {
    let exe = std::env::current_exe()?;
    let mut out = format!(
        "## Peak RSS of one store commit of {CONCEPTS} changed files (one child each, `VmHWM`)\n\n"
    );
    out.push_str("| Payloads | All payload bytes | Before the commit | Peak | Peak − before |\n");
    out.push_str("|---|---:|---:|---:|---:|\n");
    let mib = |k: u64| k as f64 / 1024.0;
    for pad in [1024usize, 8 * 1024] {
        let (before, peak) = child_peak(&exe, pad)?;
        let bytes: usize = (0..CONCEPTS)
            .map(|i| new_bytes(&concept_path(i), pad).len())
            .sum();
        eprintln!("[rss] pad {pad}: before {before} kB, peak {peak} kB");
        out.push_str(&format!(
            "| ≈ {} KiB | {:.1} MiB | {:.1} MiB | {:.1} MiB | {:+.1} MiB |\n",
            pad / 1024,
            bytes as f64 / 1048576.0,
            mib(before),
            mib(peak),
            mib(peak) - mib(before)
        ));
    }
    out.push('\n');
    Ok(out)
}
