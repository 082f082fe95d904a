//! `bundle_path` validation and the pinned root handle (spec/surface.md §7).
//!
//! Rules 1–4 are pure string checks; rules 5–9 are a walk from `/` that, for each component,
//! `lstat`s it relative to the already-open parent handle, opens it without following
//! symlinks, and compares the opened handle's `fstat` identity (device, inode) with the
//! `lstat`. No other path resolution ever happens (macOS only: the `/tmp`, `/var`, `/etc`
//! rewrite of §7). Handles opened during the walk are closed in reverse order of opening.
//!
//! Invariant: no message produced here contains the path or any part of it; at most a fixed
//! rule text (spec/surface.md §7 table, §10).

use crate::envelope::ToolError;
use cap_fs_ext::{DirExt, MetadataExt};
use cap_std::ambient_authority;
use cap_std::fs::{Dir, Metadata};

/// Message of rule 1 (spec/surface.md §7).
pub const MSG_REQUIRED: &str = "bundle_path is required";
/// Message of rule 2.
pub const MSG_WHITESPACE: &str = "bundle_path must not contain surrounding whitespace";
/// Message of rule 3.
pub const MSG_ABSOLUTE: &str = "bundle_path must be absolute";
/// Message of rule 4.
pub const MSG_CLEAN: &str = "bundle_path must be clean";
/// Message of rule 5.
pub const MSG_SYMLINK: &str = "bundle_path must not be a symlink";
/// Message of rule 6.
pub const MSG_ANCESTOR_SYMLINK: &str = "bundle_path must not contain a symlink";
/// Message of rule 7.
pub const MSG_NOT_DIRECTORY: &str = "bundle_path must be a directory";
/// Message of rule 8.
pub const MSG_NOT_ACCESSIBLE: &str = "bundle_path is not accessible";
/// Message of rule 9.
pub const MSG_CHANGED: &str = "bundle_path changed while opening";

/// Message of the scope rule (spec/surface.md §18.4 rule 1); the allowed roots follow it.
pub const MSG_OUTSIDE: &str = "bundle_path is outside the allowed roots";

/// Identity of a directory: (device, inode).
type Id = (u64, u64);

/// One allowed root of spec/surface.md §18.4: the directory as the host named it (after the
/// one resolution at startup) and the identities of the directories from `/` down to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowedRoot {
    /// The resolved absolute path; the refusal shows its last component.
    pub shown: String,
    /// Identities of `/`, each ancestor and the root itself, in walk order.
    chain: Vec<Id>,
}

impl AllowedRoot {
    fn id(&self) -> Option<Id> {
        self.chain.last().copied()
    }
    /// Whether `other` is this root or lies inside it.
    fn contains(&self, other: &Self) -> bool {
        self.id().is_some_and(|id| other.chain.contains(&id))
    }
}

/// Resolves a `--root` directory once, at startup (spec/surface.md §18.4 rule 1): it must be
/// absolute; symlinks in it are resolved here, once (`realpath`), and never again; the
/// result must be a directory that the bundle_path walk can open.
///
/// # Errors
/// A one-line reason without the path (the caller prints it as a startup error).
pub fn resolve_root(dir: &std::path::Path) -> Result<AllowedRoot, &'static str> {
    if !dir.is_absolute() {
        return Err("a --root directory must be an absolute path");
    }
    let real = std::fs::canonicalize(dir).map_err(|_| "a --root directory is not accessible")?;
    let real = real
        .to_str()
        .ok_or("a --root directory must be valid UTF-8")?
        .to_owned();
    let path = platform_rewrite(&real);
    let (_, chain) =
        walk_chain(&path, None).map_err(|_| "a --root directory is not an accessible directory")?;
    Ok(AllowedRoot { shown: real, chain })
}

/// The roots from `--root` and from the client's MCP `roots` (spec/surface.md §18.4).
#[derive(Debug, Default)]
struct ScopeState {
    cli: Option<Vec<AllowedRoot>>,
    client: Option<Vec<AllowedRoot>>,
    /// The client's first `roots/list` answer was `[]` (rule 2a): `client` is `None` (only
    /// `--root` bounds `bundle_path`) and every answer carries the `roots_empty` notice.
    client_empty: bool,
}

impl ScopeState {
    /// The effective roots: one list alone as it is; both → their intersection (each root of
    /// one list that lies inside a root of the other). `None`: no restriction.
    fn effective(&self) -> Option<Vec<AllowedRoot>> {
        match (&self.cli, &self.client) {
            (None, None) => None,
            (Some(a), None) | (None, Some(a)) => Some(a.clone()),
            (Some(a), Some(b)) => {
                let mut out: Vec<AllowedRoot> = Vec::new();
                for x in a.iter().chain(b) {
                    let in_a = a.iter().any(|r| r.contains(x));
                    let in_b = b.iter().any(|r| r.contains(x));
                    if in_a && in_b && !out.contains(x) {
                        out.push(x.clone());
                    }
                }
                Some(out)
            }
        }
    }
}

static SCOPE: std::sync::RwLock<ScopeState> = std::sync::RwLock::new(ScopeState {
    cli: None,
    client: None,
    client_empty: false,
});

/// Sets the `--root` directories of this process (`okf-mcp serve --root`).
pub fn set_cli_roots(roots: Vec<AllowedRoot>) {
    if let Ok(mut s) = SCOPE.write() {
        s.cli = Some(roots);
    }
}

/// Sets (or, with `None`, clears) the client's MCP roots (spec/surface.md §18.4 rule 2);
/// ends the state of [`set_client_roots_empty`].
pub fn set_client_roots(roots: Option<Vec<AllowedRoot>>) {
    if let Ok(mut s) = SCOPE.write() {
        s.client = roots;
        s.client_empty = false;
    }
}

/// The client's first `roots/list` answer was `[]` (spec/surface.md §18.4 rule 2a): the
/// client's roots restrict nothing (only `--root` applies; without it every path), and
/// [`client_roots_empty`] is true until the next [`set_client_roots`].
pub fn set_client_roots_empty() {
    if let Ok(mut s) = SCOPE.write() {
        s.client = None;
        s.client_empty = true;
    }
}

/// Whether the state of [`set_client_roots_empty`] is in force (the `roots_empty` notice of
/// spec/surface.md §18.4 rule 2a is due). A poisoned lock reads as false: the scope itself
/// then allows nothing.
#[must_use]
pub fn client_roots_empty() -> bool {
    SCOPE.read().is_ok_and(|s| s.client_empty)
}

/// Fail closed (spec/surface.md §18.4 rule 2): when the client advertises `roots` but none are
/// known yet, nothing is allowed until its answer arrives. Known roots, and a first empty
/// answer (rule 2a), stay in force.
pub fn close_client_roots_if_unknown() {
    if let Ok(mut s) = SCOPE.write() {
        if s.client.is_none() && !s.client_empty {
            s.client = Some(Vec::new());
        }
    }
}

/// The roots in force; a poisoned lock allows nothing (fail closed).
fn effective_scope() -> Option<Vec<AllowedRoot>> {
    match SCOPE.read() {
        Ok(s) => s.effective(),
        Err(_) => Some(Vec::new()),
    }
}

/// The scope refusal. It names the allowed roots by their last component (`/` for the
/// filesystem root): an absolute path in a message would be redacted (spec/surface.md §10,
/// §18.4 rule 1), and the refused `bundle_path` is never echoed.
fn outside(roots: &[AllowedRoot]) -> ToolError {
    let shown: Vec<&str> = roots
        .iter()
        .map(|r| match r.shown.rsplit('/').next() {
            Some(last) if !last.is_empty() => last,
            _ => "/",
        })
        .collect();
    let list = if shown.is_empty() {
        "none".to_owned()
    } else {
        shown.join(", ")
    };
    ToolError::invalid_request(format!("{MSG_OUTSIDE}: {list}")).with_diagnostic(
        crate::envelope::Diagnostic::recovery(
            "bundle_path",
            "Use a bundle inside one of the allowed roots; the host sets them (okf-mcp serve --root, MCP roots).",
        ),
    )
}

/// A validated, pinned bundle root. All later access is relative to [`Root::dir`] with
/// no-follow semantics.
#[derive(Debug)]
pub struct Root {
    /// The pinned directory handle of the bundle root.
    pub dir: Dir,
}

/// Validates `bundle_path` (rules 1–9 of spec/surface.md §7, in that order) and opens it
/// component by component from `/` without following symlinks.
///
/// Must only be called after every pure input check of the tool (spec/surface.md §9.1 step
/// 6): rules 5–9 perform `lstat` and open calls.
///
/// # Errors
/// `invalid_request` with the fixed message of the first failed rule (the `MSG_*`
/// constants); messages never contain the path.
pub fn open(bundle_path: &str) -> Result<Root, ToolError> {
    check_syntax(bundle_path)?;
    let path = platform_rewrite(bundle_path);
    let scope = effective_scope();
    walk_chain(&path, scope.as_deref()).map(|(dir, _)| Root { dir })
}

/// Whether the root has a `.okf` entry of any type (spec/concept-patch.md §6.2 step 7,
/// spec/store.md §13 rows 3 and 8): `Ok(false)` only when the entry does not exist.
///
/// # Errors
/// `operation_rejected` when the entry cannot be examined (e.g. permission denied), so an
/// unreadable `.okf` is never mistaken for an absent one.
pub fn has_private_state(root: &Root) -> Result<bool, ToolError> {
    #[cfg(feature = "fault-injection")]
    crate::store::hooks::record(|| crate::store::hooks::IoEvent::ProbePrivateState);
    match root.dir.symlink_metadata(".okf") {
        Ok(_) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(_) => Err(ToolError::new(
            crate::envelope::codes::OPERATION_REJECTED,
            "private state could not be examined",
        )),
    }
}

/// Whether the bundle-relative `path` is itself a directory (`lstat`, never followed;
/// spec/concept-patch.md §10.3 step 5.1). Also true for an empty directory, which a capture
/// does not list; `false` when it does not exist or cannot be examined.
#[must_use]
pub fn is_directory(root: &Root, path: &str) -> bool {
    #[cfg(feature = "fault-injection")]
    crate::store::hooks::record(|| crate::store::hooks::IoEvent::Lstat(path.to_owned()));
    root.dir.symlink_metadata(path).is_ok_and(|m| m.is_dir())
}

/// Whether the journal of transaction `txn_id` (spec/store.md §6.2 `txn-<hex>`) is pending:
/// `.okf/transactions/<txn_id>.json` is a regular file (`lstat`, never followed). Only looks;
/// opens nothing, takes no lock, recovers nothing. `false` when it cannot be examined.
#[must_use]
pub fn journal_pending(root: &Root, txn_id: &str) -> bool {
    #[cfg(feature = "fault-injection")]
    crate::store::hooks::record(|| crate::store::hooks::IoEvent::ProbePrivateState);
    root.dir
        .symlink_metadata(format!(".okf/transactions/{txn_id}.json"))
        .is_ok_and(|m| m.is_file())
}

/// Maximum bytes of `bundle_path` (spec/surface.md §11).
pub const MAX_BUNDLE_PATH_BYTES: usize = 4096;

/// The 4096-byte cap and rules 1–4 of spec/surface.md §7: pure checks, no filesystem access.
///
/// # Errors
/// `resource_limit` over 4096 bytes; `invalid_request` with [`MSG_REQUIRED`],
/// [`MSG_WHITESPACE`], [`MSG_ABSOLUTE`] or [`MSG_CLEAN`].
pub fn check_syntax(bundle_path: &str) -> Result<(), ToolError> {
    // The 4096-byte cap (spec/surface.md §11, README R26) is a size limit, checked before any
    // filesystem access; the schema's `maxLength` counts characters, not bytes.
    if bundle_path.len() > MAX_BUNDLE_PATH_BYTES {
        return Err(ToolError::resource_limit(
            "bundle_path exceeds the 4096-byte limit",
        ));
    }
    if bundle_path.is_empty() {
        return Err(ToolError::invalid_request(MSG_REQUIRED));
    }
    if bundle_path.trim() != bundle_path {
        return Err(ToolError::invalid_request(MSG_WHITESPACE));
    }
    if !bundle_path.starts_with('/') {
        return Err(ToolError::invalid_request(MSG_ABSOLUTE));
    }
    if bundle_path == "/" {
        return Ok(());
    }
    match unclean_rule(bundle_path) {
        None => Ok(()),
        Some(fix) => Err(ToolError::invalid_request(format!("{MSG_CLEAN}: {fix}"))),
    }
}

/// Which "clean" rule of spec/surface.md §7 rule 4 an absolute `bundle_path` (other than `/`)
/// breaks first, as the fix to make (spec/surface.md §18.3 rule 3: each rule has its own
/// message). The fixes name no path fragment and use no `/` or `..`, which redaction would
/// hide (§10). `None` when the path is clean.
#[must_use]
pub fn unclean_rule(bundle_path: &str) -> Option<&'static str> {
    if bundle_path.contains('\0') {
        return Some("remove the NUL character");
    }
    let rest = bundle_path.strip_prefix('/').unwrap_or(bundle_path);
    if rest.ends_with('/') && !rest.trim_end_matches('/').split('/').any(str::is_empty) {
        return Some("remove the trailing slash");
    }
    let comps: Vec<&str> = rest.split('/').collect();
    if comps.iter().any(|c| c.is_empty()) {
        return Some("remove the empty component (a doubled or trailing slash)");
    }
    if comps.contains(&".") {
        return Some("remove the single-dot components (each names the directory itself)");
    }
    if comps.contains(&"..") {
        return Some(
            "remove the double-dot components and name the directory directly (parent steps are never resolved)",
        );
    }
    None
}

/// The macOS-only rewrite of a leading `/tmp`, `/var` or `/etc` to `/private/…`
/// (spec/surface.md §7); the identity on every other platform.
fn platform_rewrite(path: &str) -> String {
    #[cfg(target_os = "macos")]
    {
        for top in ["/tmp", "/var", "/etc"] {
            if path == top || path.strip_prefix(top).is_some_and(|r| r.starts_with('/')) {
                return format!("/private{path}");
            }
        }
    }
    path.to_owned()
}

/// Directory handles of the walk; dropped (closed) last-opened first.
struct Handles(Vec<Dir>);

impl Drop for Handles {
    fn drop(&mut self) {
        while let Some(h) = self.0.pop() {
            drop(h);
        }
    }
}

/// Rules 5–9: the walk from `/` over the components of an already clean absolute path,
/// giving the pinned handle and the identities of the directories walked.
///
/// With `scope` (spec/surface.md §18.4 rule 1), the walk must pass through the handle of an
/// allowed root, compared by identity on the handles it opens (no string prefix test): it
/// stops with the scope refusal at the first directory that is neither an allowed root nor
/// on the way to one, and every failure before it has reached a root is that refusal too,
/// so nothing is learnt about paths outside the roots.
fn walk_chain(path: &str, scope: Option<&[AllowedRoot]>) -> Result<(Dir, Vec<Id>), ToolError> {
    #[cfg(feature = "fault-injection")]
    crate::store::hooks::record(|| crate::store::hooks::IoEvent::OpenRoot);
    let mut inside = scope.is_none();
    let mut chain: Vec<Id> = Vec::new();
    let mut step = |id: Id, inside: &mut bool| -> Result<(), ToolError> {
        chain.push(id);
        if let Some(roots) = scope {
            if !*inside {
                if roots.iter().any(|r| r.id() == Some(id)) {
                    *inside = true;
                } else if !roots.iter().any(|r| r.chain.contains(&id)) {
                    return Err(outside(roots));
                }
            }
        }
        Ok(())
    };
    let result = (|| {
        let refuse = ToolError::invalid_request;
        let mut handles = Handles(Vec::new());
        let top = Dir::open_ambient_dir("/", ambient_authority())
            .map_err(|_| refuse(MSG_NOT_ACCESSIBLE))?;
        let m = top.dir_metadata().map_err(|_| refuse(MSG_NOT_ACCESSIBLE))?;
        step((m.dev(), m.ino()), &mut inside)?;
        handles.0.push(top);
        let comps: Vec<&str> = path.split('/').filter(|c| !c.is_empty()).collect();
        for (i, comp) in comps.iter().enumerate() {
            let last = i + 1 == comps.len();
            let Some(parent) = handles.0.last() else {
                return Err(refuse(MSG_NOT_ACCESSIBLE));
            };
            let before = parent
                .symlink_metadata(comp)
                .map_err(|_| refuse(MSG_NOT_ACCESSIBLE))?;
            if before.file_type().is_symlink() {
                return Err(refuse(if last {
                    MSG_SYMLINK
                } else {
                    MSG_ANCESTOR_SYMLINK
                }));
            }
            if !before.is_dir() {
                // An ancestor that is not a directory cannot be opened as one (rule 8).
                return Err(refuse(if last {
                    MSG_NOT_DIRECTORY
                } else {
                    MSG_NOT_ACCESSIBLE
                }));
            }
            let next = parent.open_dir_nofollow(comp).map_err(|e| {
                if replaced_since_lstat(&e) {
                    refuse(MSG_CHANGED)
                } else {
                    refuse(MSG_NOT_ACCESSIBLE)
                }
            })?;
            let after = next
                .dir_metadata()
                .map_err(|_| refuse(MSG_NOT_ACCESSIBLE))?;
            if !same_identity(&before, &after) {
                return Err(refuse(MSG_CHANGED));
            }
            step((after.dev(), after.ino()), &mut inside)?;
            handles.0.push(next);
        }
        let dir = handles.0.pop().ok_or_else(|| refuse(MSG_NOT_ACCESSIBLE))?;
        drop(handles);
        Ok(dir)
    })();
    match (result, scope) {
        (Ok(dir), _) if inside => Ok((dir, chain)),
        (Err(e), _) if inside => Err(e),
        (_, Some(roots)) => Err(outside(roots)),
        (r, None) => r.map(|d| (d, chain)),
    }
}

/// Whether a no-follow directory open failed because the entry `lstat` saw as a directory
/// is now a symlink (`ELOOP`) or no directory at all (`ENOTDIR`).
fn replaced_since_lstat(e: &std::io::Error) -> bool {
    let os = e.raw_os_error();
    os == Some(rustix::io::Errno::LOOP.raw_os_error())
        || os == Some(rustix::io::Errno::NOTDIR.raw_os_error())
}

/// Same file: equal device and inode numbers.
pub(crate) fn same_identity(a: &Metadata, b: &Metadata) -> bool {
    a.dev() == b.dev() && a.ino() == b.ino()
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)] // tests build their own temp trees
mod tests {
    use super::*;

    fn at(shown: &str, chain: &[u64]) -> AllowedRoot {
        AllowedRoot {
            shown: shown.to_owned(),
            chain: chain.iter().map(|i| (1, *i)).collect(),
        }
    }

    #[test]
    fn aut_06_cli_and_client_roots_combine_as_their_intersection() {
        // /a (1→2), /a/b (1→2→3), /c (1→4), /a/b/d (1→2→3→5)
        let (a, ab, c, abd) = (
            at("/a", &[1, 2]),
            at("/a/b", &[1, 2, 3]),
            at("/c", &[1, 4]),
            at("/a/b/d", &[1, 2, 3, 5]),
        );
        let none = ScopeState::default();
        assert_eq!(none.effective(), None, "no roots: no restriction");
        let cli_only = ScopeState {
            cli: Some(vec![a.clone()]),
            client: None,
            client_empty: false,
        };
        assert_eq!(cli_only.effective(), Some(vec![a.clone()]));
        let both = ScopeState {
            cli: Some(vec![a.clone(), abd.clone()]),
            client: Some(vec![ab.clone(), c.clone()]),
            client_empty: false,
        };
        // /a ∩ /a/b = /a/b; /a/b/d lies in both; /c lies in no --root.
        assert_eq!(both.effective(), Some(vec![abd, ab]));
        let disjoint = ScopeState {
            cli: Some(vec![c]),
            client: Some(vec![a]),
            client_empty: false,
        };
        assert_eq!(disjoint.effective(), Some(vec![]), "nothing is allowed");
    }

    fn msg(p: &str) -> String {
        match open(p) {
            Ok(_) => "ok".to_owned(),
            Err(e) => {
                assert_eq!(e.code, "invalid_request");
                e.message
            }
        }
    }

    #[test]
    fn syntax_rules_in_order() {
        assert_eq!(msg(""), MSG_REQUIRED);
        assert_eq!(msg(" /a"), MSG_WHITESPACE);
        assert_eq!(msg("/a\n"), MSG_WHITESPACE);
        assert_eq!(msg(" a"), MSG_WHITESPACE);
        assert_eq!(msg("a/b"), MSG_ABSOLUTE);
        assert_eq!(msg("./a"), MSG_ABSOLUTE);
        // Each clean rule says its own fix (spec/surface.md §18.3 rule 3).
        for (p, fix) in [
            ("/a/./b", "remove the single-dot components"),
            ("/a/../b", "remove the double-dot components"),
            ("/a//b", "remove the empty component"),
            ("/a/b/", "remove the trailing slash"),
            ("//", "remove the empty component"),
            ("/a\0b", "remove the NUL character"),
            ("/.", "remove the single-dot components"),
            ("/..", "remove the double-dot components"),
        ] {
            let m = msg(p);
            assert!(m.starts_with(&format!("{MSG_CLEAN}: {fix}")), "{p:?}: {m}");
            assert!(!crate::envelope::is_sensitive(&m), "{m}");
        }
    }

    #[test]
    fn root_and_real_directories_open() {
        assert_eq!(msg("/"), "ok");
        let tmp = tempfile::tempdir().expect("tempdir");
        let p = tmp.path().to_str().expect("utf-8 temp path").to_owned();
        assert_eq!(msg(&p), "ok");
    }

    #[test]
    fn walk_rules_5_to_8() {
        let tmp = tempfile::tempdir().expect("tempdir");
        let base = tmp.path();
        std::fs::create_dir(base.join("d")).expect("mkdir");
        std::fs::write(base.join("f"), b"x").expect("write");
        std::os::unix::fs::symlink(base.join("d"), base.join("l")).expect("symlink");
        let s = |rel: &str| format!("{}/{rel}", base.to_str().expect("utf-8"));
        assert_eq!(msg(&s("d")), "ok");
        assert_eq!(msg(&s("l")), MSG_SYMLINK);
        assert_eq!(msg(&s("l/x")), MSG_ANCESTOR_SYMLINK);
        assert_eq!(msg(&s("f")), MSG_NOT_DIRECTORY);
        assert_eq!(msg(&s("f/x")), MSG_NOT_ACCESSIBLE);
        assert_eq!(msg(&s("missing")), MSG_NOT_ACCESSIBLE);
        assert_eq!(msg(&s("missing/x")), MSG_NOT_ACCESSIBLE);
    }

    #[test]
    fn the_pinned_handle_is_the_directory_itself() {
        let tmp = tempfile::tempdir().expect("tempdir");
        std::fs::write(tmp.path().join("marker"), b"m").expect("write");
        let root = open(tmp.path().to_str().expect("utf-8")).expect("open");
        assert!(root.dir.symlink_metadata("marker").is_ok());
    }
}

#[cfg(test)]
mod byte_cap_tests {
    #[test]
    fn bundle_path_over_4096_bytes_is_a_resource_limit_before_io() {
        let long = format!("/{}", "東".repeat(1500));
        assert!(long.chars().count() <= 4096 && long.len() > 4096);
        let e = super::open(&long).expect_err("over the byte cap");
        assert_eq!(e.code, "resource_limit");
        let ok = format!("/{}", "a".repeat(4095));
        assert_eq!(super::check_syntax(&ok), Ok(()));
    }
}
