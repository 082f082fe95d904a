//! Capture: one bounded, symlink-refusing, in-memory read of the visible tree and its
//! revision (spec/store.md §3).

use crate::cancel::Cancel;
use crate::plan::digest;
use crate::store::root::Root;
use crate::wire::envelope::{Diagnostic, Severity, ToolError};
use cap_fs_ext::{DirExt, FollowSymlinks, OpenOptionsFollowExt};
use cap_std::fs::{Dir, OpenOptions};
use std::io::Read;

/// Visible-file limit (spec/store.md §3.3).
pub const MAX_FILES: usize = 10_000;
/// Per-file limit in bytes.
pub const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;
/// Total-bytes limit.
pub const MAX_TOTAL_BYTES: u64 = 64 * 1024 * 1024;
/// Path limits: bytes and components.
pub const MAX_PATH_BYTES: usize = 4096;
pub const MAX_PATH_COMPONENTS: usize = 64;

/// One visible regular file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CapturedFile {
    /// Bundle-relative path (spec/store.md §3.2).
    pub path: String,
    pub bytes: Vec<u8>,
    /// `H(bytes)`.
    pub digest: [u8; 32],
}

/// The visible tree, sorted by path bytes, with its revision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capture {
    pub files: Vec<CapturedFile>,
    /// `sha256:<64 hex>` (spec/store.md §3.6).
    pub revision: String,
}

impl Capture {
    /// Builds a capture from in-memory files (tests, overlays); sorts by path bytes.
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
}

struct Walk<'a> {
    cancel: &'a Cancel,
    files: Vec<(String, Vec<u8>)>,
    total: u64,
}

/// Captures the visible tree under `root` (spec/store.md §3.1–§3.3, §3.7).
///
/// # Errors
/// `invalid_request` for symlinks, special files and unrepresentable paths (naming the
/// bundle-relative path where it is representable); `resource_limit` for the limits;
/// `operation_cancelled` at the per-file checkpoints.
pub fn capture(root: &Root, cancel: &Cancel) -> Result<Capture, ToolError> {
    cancel.check()?;
    let mut w = Walk {
        cancel,
        files: Vec::new(),
        total: 0,
    };
    walk_dir(&root.dir, "", 0, &mut w)?;
    cancel.check()?;
    Ok(Capture::from_files(w.files))
}

fn io_fault(_e: std::io::Error) -> ToolError {
    ToolError::new(
        crate::wire::envelope::codes::OPERATION_REJECTED,
        "bundle could not be read",
    )
}

fn walk_dir(dir: &Dir, prefix: &str, depth: usize, w: &mut Walk<'_>) -> Result<(), ToolError> {
    let mut names = Vec::new();
    for entry in dir.entries().map_err(io_fault)? {
        let entry = entry.map_err(io_fault)?;
        let name = entry.file_name();
        let Some(name) = name.to_str().map(str::to_owned) else {
            return Err(ToolError::invalid_request(
                "bundle contains a path that cannot be represented",
            ));
        };
        names.push(name);
    }
    names.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
    for name in names {
        if depth == 0 && (name == ".okf" || name == ".git") {
            continue;
        }
        if name.contains('\\') || name.chars().any(|c| c <= '\u{1f}' || c == '\u{7f}') {
            return Err(ToolError::invalid_request(
                "bundle contains a path that cannot be represented",
            ));
        }
        let path = if prefix.is_empty() {
            name.clone()
        } else {
            format!("{prefix}/{name}")
        };
        if path.len() > MAX_PATH_BYTES || depth + 1 > MAX_PATH_COMPONENTS {
            return Err(ToolError::resource_limit(
                "bundle path exceeds the path limits",
            ));
        }
        let meta = dir.symlink_metadata(&name).map_err(io_fault)?;
        let ft = meta.file_type();
        if ft.is_symlink() {
            return Err(refused(
                "symlink_refused",
                "bundle contains a symlink",
                &path,
            ));
        }
        if ft.is_dir() {
            let sub = dir.open_dir_nofollow(&name).map_err(io_fault)?;
            walk_dir(&sub, &path, depth + 1, w)?;
            continue;
        }
        if !ft.is_file() {
            return Err(refused(
                "unsupported_file_type",
                "bundle contains an unsupported file type",
                &path,
            ));
        }
        if w.files.len() >= MAX_FILES {
            return Err(ToolError::resource_limit(
                "bundle has more than 10000 files",
            ));
        }
        if meta.len() > MAX_FILE_BYTES {
            return Err(ToolError::resource_limit("a bundle file exceeds 16 MiB"));
        }
        if w.total + meta.len() > MAX_TOTAL_BYTES {
            return Err(ToolError::resource_limit("bundle exceeds 64 MiB in total"));
        }
        let mut opts = OpenOptions::new();
        opts.read(true).follow(FollowSymlinks::No);
        let mut f = dir.open_with(&name, &opts).map_err(|_| {
            refused(
                "unsupported_file_type",
                "bundle contains an unsupported file type",
                &path,
            )
        })?;
        let m2 = f.metadata().map_err(io_fault)?;
        if !m2.is_file() {
            return Err(refused(
                "unsupported_file_type",
                "bundle contains an unsupported file type",
                &path,
            ));
        }
        let mut bytes = Vec::new();
        (&mut f)
            .take(MAX_FILE_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(io_fault)?;
        if bytes.len() as u64 > MAX_FILE_BYTES {
            return Err(ToolError::resource_limit("a bundle file exceeds 16 MiB"));
        }
        w.total += bytes.len() as u64;
        if w.total > MAX_TOTAL_BYTES {
            return Err(ToolError::resource_limit("bundle exceeds 64 MiB in total"));
        }
        w.files.push((path, bytes));
        w.cancel.check()?;
    }
    Ok(())
}

fn refused(code: &str, what: &str, path: &str) -> ToolError {
    ToolError::invalid_request(format!("{what}: {path}"))
        .with_diagnostic(Diagnostic::new(code, Severity::Error, what).with_file(path))
}
