//! Capture: one bounded, symlink-refusing, in-memory read of the visible tree and its
//! revision (spec/store.md §3).
//!
//! The walk starts at the pinned root handle ([`Root`]) and visits the entries of each
//! directory in ascending byte order of their names. Every entry is `lstat`ed relative to its
//! already-open parent handle; directories are opened with no-follow and identity-checked
//! before descending; regular files are opened with no-follow, read-only, close-on-exec and
//! non-blocking flags, and the handle is re-checked to be a regular file with the identity the
//! `lstat` saw (spec/store.md §3.7). Nothing is ever followed and no open can block.
//!
//! Invariants:
//! - The recursion depth is bounded by [`MAX_PATH_COMPONENTS`]: an entry whose path would
//!   exceed it fails before it is opened.
//! - Limits of spec/store.md §3.3 are checked on the `lstat` size before a file is read, and
//!   again on the bytes read (a file growing after its `lstat` cannot exceed them).
//! - Error messages carry at most a bundle-relative path (spec/store.md §3.1); a path that is
//!   not representable (spec/store.md §3.2 rules 1–2) is never echoed.

use crate::cancel::Cancel;
use crate::plan::digest;
use crate::store::root::{same_identity, Root};
use crate::wire::envelope::{codes, Diagnostic, Severity, ToolError};
use cap_fs_ext::{DirExt, FollowSymlinks, OpenOptionsFollowExt, OpenOptionsSyncExt};
use cap_std::fs::{Dir, Metadata, OpenOptions};
use std::ffi::OsString;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;

/// Visible-file limit: at most 10,000 visible files (spec/store.md §3.3).
pub const MAX_FILES: usize = 10_000;
/// Per-file limit: at most 16 MiB = 16,777,216 bytes (spec/store.md §3.3).
pub const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;
/// Total-bytes limit: at most 64 MiB = 67,108,864 bytes over all visible files.
pub const MAX_TOTAL_BYTES: u64 = 64 * 1024 * 1024;
/// Path limit in bytes of a bundle-relative path (spec/store.md §3.2 rule 3).
pub const MAX_PATH_BYTES: usize = 4096;
/// Path limit in components of a bundle-relative path (spec/store.md §3.2 rule 3).
pub const MAX_PATH_COMPONENTS: usize = 64;

/// Message of a visible path that violates spec/store.md §3.2 rules 1–2 (path not echoed).
pub const MSG_UNREPRESENTABLE: &str = "bundle contains a path that cannot be represented";
/// Message prefix of a symlink in the bundle; `: <path>` follows (spec/store.md §3.1).
pub const MSG_SYMLINK: &str = "bundle contains a symlink";
/// Message prefix of a FIFO, socket or device in the bundle; `: <path>` follows.
pub const MSG_UNSUPPORTED: &str = "bundle contains an unsupported file type";
/// Diagnostic code of a refused symlink (spec/store.md §3.1).
pub const DIAG_SYMLINK: &str = "symlink_refused";
/// Diagnostic code of a refused FIFO, socket or device (spec/store.md §3.1).
pub const DIAG_UNSUPPORTED: &str = "unsupported_file_type";

/// One visible regular file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CapturedFile {
    /// Bundle-relative path (spec/store.md §3.2).
    pub path: String,
    /// The exact bytes read.
    pub bytes: Vec<u8>,
    /// `H(bytes)`: raw SHA-256 (spec/store.md §3.6 step 1).
    pub digest: [u8; 32],
}

/// The visible tree, sorted by path bytes, with its revision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capture {
    /// Every visible file, ascending by path bytes.
    pub files: Vec<CapturedFile>,
    /// `sha256:<64 hex>` (spec/store.md §3.6).
    pub revision: String,
}

impl Capture {
    /// Builds a capture from in-memory files (tests, overlays); sorts by path bytes and
    /// computes the revision of spec/store.md §3.6. Paths are taken as given (no grammar
    /// check).
    #[must_use]
    pub fn from_files(files: impl IntoIterator<Item = (String, Vec<u8>)>) -> Self {
        let mut files: Vec<CapturedFile> = files
            .into_iter()
            .map(|(path, bytes)| {
                let digest = digest::sha256(&bytes);
                CapturedFile {
                    path,
                    bytes,
                    digest,
                }
            })
            .collect();
        files.sort_by(|a, b| a.path.as_bytes().cmp(b.path.as_bytes()));
        let revision = digest::revision(files.iter().map(|f| (f.path.as_str(), &f.digest)));
        Self { files, revision }
    }

    /// The file at `path`, if visible.
    #[must_use]
    pub fn get(&self, path: &str) -> Option<&CapturedFile> {
        self.files
            .binary_search_by(|f| f.path.as_bytes().cmp(path.as_bytes()))
            .ok()
            .map(|i| &self.files[i])
    }

    /// Total bytes of all visible files.
    #[must_use]
    pub fn total_bytes(&self) -> u64 {
        self.files.iter().map(|f| f.bytes.len() as u64).sum()
    }
}

struct Walk<'a> {
    cancel: &'a Cancel,
    files: Vec<(String, Vec<u8>)>,
    total: u64,
    #[cfg(feature = "fault-injection")]
    hooks: crate::store::hooks::CaptureHooks,
}

/// Captures the visible tree under `root` (spec/store.md §3.1–§3.3, §3.7).
///
/// Checks cancellation before the walk, after each file read and after the walk
/// (spec/store.md §14). Root-level `.okf` and `.git` entries of any type are skipped; every
/// other entry is walked. Never writes anything.
///
/// # Errors
/// - `invalid_request` `bundle contains a symlink: <path>` with one `symlink_refused`
///   diagnostic whose `file` is the path;
/// - `invalid_request` `bundle contains an unsupported file type: <path>` with one
///   `unsupported_file_type` diagnostic (FIFO, socket, block or character device, also when
///   swapped in between `lstat` and open);
/// - `invalid_request` [`MSG_UNREPRESENTABLE`] for a name that is not UTF-8 or contains `\`
///   or a control character (the path is not echoed);
/// - `resource_limit` for the limits of spec/store.md §3.3;
/// - `operation_cancelled` at a checkpoint;
/// - `operation_rejected` when the tree cannot be read or changes under the walk in a way
///   none of the above describes (an entry vanished or was replaced by another file).
pub fn capture(root: &Root, cancel: &Cancel) -> Result<Capture, ToolError> {
    cancel.check()?;
    let mut w = Walk {
        cancel,
        files: Vec::new(),
        total: 0,
        #[cfg(feature = "fault-injection")]
        hooks: crate::store::hooks::current(),
    };
    walk_dir(&root.dir, "", 0, &mut w)?;
    cancel.check()?;
    Ok(Capture::from_files(w.files))
}

fn unreadable() -> ToolError {
    ToolError::new(codes::OPERATION_REJECTED, "bundle could not be read")
}

fn changed() -> ToolError {
    ToolError::new(
        codes::OPERATION_REJECTED,
        "bundle changed while it was captured",
    )
}

fn limit_files() -> ToolError {
    ToolError::resource_limit("bundle has more than 10000 visible files")
}

fn limit_file_size() -> ToolError {
    ToolError::resource_limit("a bundle file exceeds 16 MiB")
}

fn limit_total() -> ToolError {
    ToolError::resource_limit("bundle exceeds 64 MiB in total")
}

fn limit_path() -> ToolError {
    ToolError::resource_limit("a bundle path exceeds 4096 bytes or 64 components")
}

/// The refusal of spec/store.md §3.1 for a symlink or special file at `path`.
fn refused(code: &str, what: &str, path: &str) -> ToolError {
    ToolError::invalid_request(format!("{what}: {path}"))
        .with_diagnostic(Diagnostic::new(code, Severity::Error, what).with_file(path))
}

fn symlink_at(path: &str) -> ToolError {
    refused(DIAG_SYMLINK, MSG_SYMLINK, path)
}

fn unsupported_at(path: &str) -> ToolError {
    refused(DIAG_UNSUPPORTED, MSG_UNSUPPORTED, path)
}

/// The refusal for a non-regular, non-directory entry type.
fn refuse_type(meta: &Metadata, path: &str) -> ToolError {
    if meta.file_type().is_symlink() {
        symlink_at(path)
    } else {
        unsupported_at(path)
    }
}

/// A name is representable when it is UTF-8 without `\` and control characters
/// (spec/store.md §3.2 rules 1–2; `.`/`..`/empty never come out of a directory listing).
fn representable(name: &OsString) -> Option<&str> {
    let s = name.to_str()?;
    if s.is_empty()
        || s == "."
        || s == ".."
        || s.chars()
            .any(|c| c == '\\' || c <= '\u{1f}' || c == '\u{7f}')
    {
        return None;
    }
    Some(s)
}

/// After a failed open of an entry `lstat` saw as `expected`, classifies what is there now.
fn after_failed_open(dir: &Dir, name: &str, path: &str) -> ToolError {
    match dir.symlink_metadata(name) {
        Ok(m) if m.file_type().is_symlink() => symlink_at(path),
        Ok(m) if !m.is_file() && !m.is_dir() => unsupported_at(path),
        Ok(_) => unreadable(),
        Err(_) => changed(),
    }
}

fn walk_dir(dir: &Dir, prefix: &str, depth: usize, w: &mut Walk<'_>) -> Result<(), ToolError> {
    let mut names: Vec<OsString> = Vec::new();
    for entry in dir.entries().map_err(|_| unreadable())? {
        names.push(entry.map_err(|_| unreadable())?.file_name());
    }
    names.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
    for raw in &names {
        if depth == 0 && (raw.as_bytes() == b".okf" || raw.as_bytes() == b".git") {
            continue;
        }
        let name =
            representable(raw).ok_or_else(|| ToolError::invalid_request(MSG_UNREPRESENTABLE))?;
        let path = if prefix.is_empty() {
            name.to_owned()
        } else {
            format!("{prefix}/{name}")
        };
        if path.len() > MAX_PATH_BYTES || depth + 1 > MAX_PATH_COMPONENTS {
            return Err(limit_path());
        }
        let meta = dir.symlink_metadata(name).map_err(|_| changed())?;
        let ft = meta.file_type();
        if ft.is_dir() {
            let sub = dir
                .open_dir_nofollow(name)
                .map_err(|_| after_failed_open(dir, name, &path))?;
            let opened = sub.dir_metadata().map_err(|_| unreadable())?;
            if !same_identity(&meta, &opened) {
                return Err(changed());
            }
            walk_dir(&sub, &path, depth + 1, w)?;
            continue;
        }
        if !ft.is_file() {
            return Err(refuse_type(&meta, &path));
        }
        read_file(dir, name, path, &meta, w)?;
    }
    Ok(())
}

/// Reads one regular file seen by `lstat` as `meta`, under the limits, then runs the
/// per-file cancellation checkpoint.
fn read_file(
    dir: &Dir,
    name: &str,
    path: String,
    meta: &Metadata,
    w: &mut Walk<'_>,
) -> Result<(), ToolError> {
    if w.files.len() >= MAX_FILES {
        return Err(limit_files());
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(limit_file_size());
    }
    if w.total + meta.len() > MAX_TOTAL_BYTES {
        return Err(limit_total());
    }
    #[cfg(feature = "fault-injection")]
    w.hooks.after_lstat(dir, name, &path);
    let mut opts = OpenOptions::new();
    opts.read(true).follow(FollowSymlinks::No).nonblock(true);
    let file = dir
        .open_with(name, &opts)
        .map_err(|_| after_failed_open(dir, name, &path))?;
    let opened = file.metadata().map_err(|_| unreadable())?;
    if !opened.is_file() {
        return Err(refuse_type(&opened, &path));
    }
    if !same_identity(meta, &opened) {
        return Err(changed());
    }
    let per_file_budget = MAX_FILE_BYTES.min(MAX_TOTAL_BYTES - w.total);
    // Sized from the lstat length (at most 16 MiB, checked above) so a file that did not
    // grow since its lstat is read without reallocating; growth is still bounded by `take`.
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(per_file_budget + 1)
        .read_to_end(&mut bytes)
        .map_err(|_| unreadable())?;
    let n = bytes.len() as u64;
    if n > MAX_FILE_BYTES {
        return Err(limit_file_size());
    }
    if w.total + n > MAX_TOTAL_BYTES {
        return Err(limit_total());
    }
    w.total += n;
    w.files.push((path, bytes));
    #[cfg(feature = "fault-injection")]
    w.hooks.after_file_read(w.files.len(), w.cancel);
    w.cancel.check()
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests build their own temp trees
mod tests {
    use super::*;
    use std::fs;
    use std::path::Path;

    fn open(p: &Path) -> Root {
        crate::store::root::open(p.to_str().expect("utf-8")).expect("root")
    }

    fn cap(p: &Path) -> Result<Capture, ToolError> {
        capture(&open(p), &Cancel::new())
    }

    #[test]
    fn visits_in_byte_order_and_skips_only_root_private_entries() {
        let t = tempfile::tempdir().expect("tempdir");
        let b = t.path();
        for d in [".okf/x", ".git/objects", "x/.okf", "x/.git", ".hidden"] {
            fs::create_dir_all(b.join(d)).expect("mkdir");
        }
        for f in [
            "B.md",
            "a.md",
            "é.md",
            "Z",
            ".okf/x/r",
            ".git/HEAD",
            "x/.okf/s",
            "x/.git/t",
            ".hidden/h",
        ] {
            fs::write(b.join(f), f.as_bytes()).expect("write");
        }
        let c = cap(b).expect("capture");
        let paths: Vec<&str> = c.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                ".hidden/h",
                "B.md",
                "Z",
                "a.md",
                "x/.git/t",
                "x/.okf/s",
                "é.md"
            ]
        );
        assert_eq!(
            c.get("a.md").map(|f| f.bytes.as_slice()),
            Some(&b"a.md"[..])
        );
        assert_eq!(
            c.total_bytes(),
            paths.iter().map(|p| p.len() as u64).sum::<u64>()
        );
        let expected = Capture::from_files(
            paths
                .iter()
                .map(|p| ((*p).to_owned(), p.as_bytes().to_vec())),
        );
        assert_eq!(c.revision, expected.revision);
    }

    #[test]
    fn root_private_entries_of_any_type_are_skipped() {
        let t = tempfile::tempdir().expect("tempdir");
        let b = t.path();
        fs::write(b.join("a.md"), b"a").expect("write");
        std::os::unix::fs::symlink("/nonexistent", b.join(".okf")).expect("symlink");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            b.join(".git"),
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::RUSR | rustix::fs::Mode::WUSR,
            0,
        )
        .expect("mkfifo");
        assert_eq!(cap(b).expect("capture").files.len(), 1);
    }

    #[test]
    fn the_first_refusal_in_byte_order_wins() {
        let t = tempfile::tempdir().expect("tempdir");
        let b = t.path();
        fs::create_dir(b.join("d")).expect("mkdir");
        std::os::unix::fs::symlink("x", b.join("d/b")).expect("symlink");
        std::os::unix::fs::symlink("x", b.join("d/a")).expect("symlink");
        fs::write(b.join("c"), b"c").expect("write");
        let e = cap(b).expect_err("symlink");
        assert_eq!(e.message, "bundle contains a symlink: d/a");
        assert_eq!(e.diagnostics.len(), 1);
        assert_eq!(e.diagnostics[0].code, DIAG_SYMLINK);
        assert_eq!(e.diagnostics[0].file, "d/a");
    }

    #[test]
    fn control_and_backslash_names_are_unrepresentable() {
        for bad in ["a\\b", "a\u{1}b", "tab\there", "del\u{7f}"] {
            let t = tempfile::tempdir().expect("tempdir");
            fs::write(t.path().join(bad), b"x").expect("write");
            let e = cap(t.path()).expect_err(bad);
            assert_eq!(e.code, "invalid_request");
            assert_eq!(e.message, MSG_UNREPRESENTABLE);
            assert!(e.diagnostics.is_empty());
        }
    }

    #[test]
    fn cancellation_before_walk_is_reported() {
        let t = tempfile::tempdir().expect("tempdir");
        fs::write(t.path().join("a"), b"a").expect("write");
        let c = Cancel::new();
        c.cancel();
        let e = capture(&open(t.path()), &c).expect_err("cancelled");
        assert_eq!(e.code, "operation_cancelled");
    }
}
