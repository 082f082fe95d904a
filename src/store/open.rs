//! Opening the store (spec/store.md §7 steps 1–5, §10.1 C1–C3): the private directories,
//! the lock, the folding probe and recovery, giving a [`Handle`].

use crate::cancel::Cancel;
use crate::envelope::{Diagnostic, Severity, ToolError};
use crate::store::durable::{at_path, At, Durable};
use crate::store::error::StoreError;
use crate::store::fault::Point;
use crate::store::handle::{checkpoint, point, Folding, Handle, StoreOptions, SUBDIRS};
use crate::store::lock::{self, LockError};
use crate::store::recovery;
use crate::store::root::Root;
use cap_fs_ext::{DirExt, FollowSymlinks, MetadataExt, OpenOptionsFollowExt};
use cap_std::fs::{Dir, OpenOptions, OpenOptionsExt, PermissionsExt};
use std::cell::Cell;

/// How [`open`] treats a missing `.okf/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Create {
    /// Create `.okf/` and its subdirectories (a fresh commit).
    Yes,
    /// Report `None` (replay-only lookup: S-2 forbids creating private state).
    No,
    /// The lock-first reservation of `commit::Txn::begin` (docs/store.md §3.1): report `None`
    /// unless `.okf/`, its four subdirectories and `.okf/lock` already exist, the lock is
    /// free at the first attempt (no wait), and no journal is pending in `transactions/`.
    /// Creates nothing and writes nothing: the folding probe and recovery (§7 steps 4–5)
    /// are deferred to [`Handle::prepare`], run only once the store is actually needed.
    Existing,
}

/// Opens the store (§7 steps 1–5, C1–C3). `cancel` is `Some` before the boundary (the
/// checkpoints of §14 apply) and `None` for the post-boundary retry of §10.2.
/// `probe_tag` names the folding-probe files (the transaction id). `Ok(None)`: `.okf/` is
/// absent and `create` is not [`Create::Yes`], or (only for [`Create::Existing`]) one of its
/// subdirectories is absent; nothing was created then.
///
/// # Errors
/// `.okf` symlink → `Refused(invalid_request)`; not a directory → `Rejected`; lock timeout;
/// cancellation; I/O; recovery errors.
pub(crate) fn open<'r>(
    root: &'r Root,
    opts: &StoreOptions,
    cancel: Option<&Cancel>,
    create: Create,
    probe_tag: &str,
) -> Result<Option<Handle<'r>>, StoreError> {
    #[cfg(feature = "fault-injection")]
    crate::store::hooks::record(|| crate::store::hooks::IoEvent::StoreOpen);
    checkpoint(cancel)?;
    let fs = opts.fs.as_ref();
    let root_at = At {
        dir: &root.dir,
        rel: "",
    };
    let (okf, mut fresh) = match private_dir(root_at, ".okf", fs, create)? {
        Some(d) => d,
        None => return Ok(None),
    };
    let created = fresh;
    let okf_at = At {
        dir: &okf,
        rel: ".okf",
    };
    let sub_create = match create {
        Create::Existing => Create::Existing,
        Create::Yes | Create::No => Create::Yes,
    };
    let mut subs = Vec::with_capacity(4);
    for name in SUBDIRS {
        match private_dir(okf_at, name, fs, sub_create)? {
            Some((d, created)) => {
                fresh |= created;
                subs.push(d);
            }
            None if create == Create::Existing => return Ok(None),
            None => return Err(StoreError::Rejected("private state is incomplete")),
        }
    }
    if fresh {
        write_gitignore(okf_at, fs)?;
    }
    let caps = subs.pop();
    let receipts = subs.pop();
    let staging = subs.pop();
    let tx = subs.pop();
    let (Some(tx), Some(staging), Some(receipts), Some(caps)) = (tx, staging, receipts, caps)
    else {
        return Err(StoreError::Rejected("private state is incomplete"));
    };
    let meta = root.dir.dir_metadata().map_err(StoreError::io("open"))?;
    let reserve = create == Create::Existing;
    if reserve && !okf.symlink_metadata("lock").is_ok_and(|m| m.is_file()) {
        return Ok(None);
    }
    check_lock_entry(&okf)?;
    let timeout = if reserve {
        std::time::Duration::ZERO
    } else {
        opts.lock_timeout
    };
    let lock = match lock::acquire(&okf, (meta.dev(), meta.ino()), timeout, cancel) {
        Err(LockError::Timeout) if reserve => return Ok(None),
        other => other,
    };
    let lock = lock.map_err(|e| match e {
        LockError::Timeout => StoreError::LockTimeout,
        LockError::Cancelled => StoreError::Cancelled,
        LockError::Io(source) => StoreError::Io {
            step: "lock",
            source: at_path(source, ".okf/lock"),
        },
    })?;
    let mut h = Handle {
        root,
        okf,
        tx,
        staging,
        receipts,
        caps,
        opts: opts.clone(),
        folding: Folding::default(),
        new_file_mode: 0o644,
        completed: Vec::new(),
        poisoned: Cell::new(false),
        prepared: false,
        probe_tag: probe_tag.to_owned(),
        probed: false,
        created,
        lock,
    };
    if reserve {
        if recovery::journal_pending(&h)? {
            return Ok(None);
        }
        return Ok(Some(h));
    }
    h.prepare(cancel)?;
    Ok(Some(h))
}

impl Handle<'_> {
    /// §7 steps 4–5 on a locked handle: the `after_lock` fault point, recovery (C3), the
    /// `after_recovery` point and a checkpoint. The folding probe runs first only when a
    /// journal is pending (its publication needs the mode of new files); otherwise it is
    /// left to [`Handle::probe_for_write`], so that an exact replay answered from a durable
    /// receipt writes nothing at all (issue 25 item 3). Runs once; a handle from
    /// [`Create::Existing`] runs it when the store is first needed (its reservation saw no
    /// pending journal and has held the lock since, so recovery changes nothing visible).
    ///
    /// # Errors
    /// Probe and recovery errors; cancellation; injected faults.
    pub(crate) fn prepare(&mut self, cancel: Option<&Cancel>) -> Result<(), StoreError> {
        if self.prepared {
            return Ok(());
        }
        let opts = self.opts.clone();
        point(&opts, Point::AfterLock, cancel)?;
        if recovery::journal_pending(self)? {
            self.probe_for_write()?;
        }
        self.completed = recovery::recover(self)?;
        point(&opts, Point::AfterRecovery, cancel)?;
        checkpoint(cancel)?;
        self.prepared = true;
        Ok(())
    }

    /// The folding probe of §7 step 4, once per open, before anything is written: it measures
    /// the folding C6 checks new paths against and the mode of new files. A probe that
    /// cannot create its file is a retryable error naming `.okf/capabilities` (issue 25 item
    /// 3: the caller fixes the directory and repeats the same call).
    ///
    /// # Errors
    /// `Io` (`folding probe`) naming `.okf/capabilities`.
    pub(crate) fn probe_for_write(&mut self) -> Result<(), StoreError> {
        if self.probed {
            return Ok(());
        }
        let tag = self.probe_tag.clone();
        probe(self, &tag)?;
        self.probed = true;
        Ok(())
    }
}

/// Name of the file that keeps the store out of git (spec/surface.md §18.7 rule 5).
pub(crate) const GITIGNORE: &str = ".gitignore";

/// Its content: ignore everything under `.okf/`, the file itself included.
pub(crate) const GITIGNORE_TEXT: &[u8] = b"*\n";

/// Writes `.okf/.gitignore` (`*`) when the store's directories were created by this open
/// (spec/surface.md §18.7 rule 5; an open that finishes a crashed creation writes it too),
/// durably: the file is `fsync`ed, then `.okf/`. An existing entry of that name (another
/// writer's, or the host's own) is kept as it is. The store never reads the file; the
/// capture skips the root `.okf` entry, so the revision does not see it.
///
/// # Errors
/// I/O (`create private state`).
fn write_gitignore(okf: At<'_>, fs: &dyn Durable) -> Result<(), StoreError> {
    let io = StoreError::io("create private state");
    match fs.create_write(okf, GITIGNORE, GITIGNORE_TEXT) {
        Ok(f) => {
            fs.sync_file(okf, GITIGNORE, &f).map_err(io)?;
            drop(f);
            fs.sync_dir(okf)
                .map_err(StoreError::io("create private state"))
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(source) => Err(StoreError::Io {
            step: "create private state",
            source,
        }),
    }
}

/// §7 step 2 for one private directory: absent → create (0700) when `create` is
/// [`Create::Yes`], else `None`; symlink →
/// `invalid_request`; not a directory → `operation_rejected`. The flag is true when this
/// call created the directory.
/// spec/store.md §16 rule 5 (STO-20): a `.okf/lock` that exists but is not a regular file
/// (a symlink, FIFO, socket, device or directory) is refused by name with a recovery step,
/// never opened or followed (`lstat` only). An absent lock is created by the lock itself.
fn check_lock_entry(okf: &Dir) -> Result<(), StoreError> {
    let Ok(m) = okf.symlink_metadata("lock") else {
        return Ok(());
    };
    let ft = m.file_type();
    let what = if ft.is_file() {
        return Ok(());
    } else if ft.is_symlink() {
        "a symlink"
    } else if ft.is_dir() {
        "a directory"
    } else {
        "not a regular file (a FIFO, socket or device)"
    };
    Err(StoreError::Refused(
        ToolError::new(
            crate::envelope::codes::OPERATION_REJECTED,
            format!(".okf/lock is {what}: the store cannot be locked"),
        )
        .with_diagnostic(Diagnostic::recovery(
            "",
            format!(
                ".okf/lock is {what}: remove it (nothing else in .okf/ needs to change), then repeat the same call; nothing was changed"
            ),
        )),
    ))
}

fn private_dir(
    parent: At<'_>,
    name: &str,
    fs: &dyn Durable,
    create: Create,
) -> Result<Option<(Dir, bool)>, StoreError> {
    let shown = parent.join(name);
    let mut created = false;
    match parent.dir.symlink_metadata(name) {
        Ok(m) if m.file_type().is_symlink() => {
            return Err(StoreError::Refused(
                ToolError::invalid_request(format!("bundle contains a symlink: {shown}"))
                    .with_diagnostic(Diagnostic::new(
                        "symlink_refused",
                        Severity::Error,
                        "bundle contains a symlink",
                    )),
            ))
        }
        Ok(m) if !m.is_dir() => {
            // spec/store.md §7 step 2, naming the path with a next step (§16 rule 5).
            return Err(StoreError::Refused(
                ToolError::new(
                    crate::envelope::codes::OPERATION_REJECTED,
                    format!("{}: {shown}", crate::store::error::NOT_A_DIRECTORY),
                )
                .with_diagnostic(Diagnostic::recovery(
                    "",
                    format!("{shown} is not a directory: move it out of the way (okf-mcp keeps no state in it), then repeat the same call; nothing was changed"),
                )),
            ));
        }
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            created = true;
            if create != Create::Yes {
                return Ok(None);
            }
            match fs.mkdir(parent, name, 0o700) {
                Ok(()) => {}
                // Another writer created it between our lstat and mkdir: check it again.
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    return private_dir(parent, name, fs, Create::No);
                }
                Err(source) => {
                    return Err(StoreError::Io {
                        step: "create private state",
                        source,
                    })
                }
            }
            fs.sync_dir(parent)
                .map_err(StoreError::io("create private state"))?;
        }
        Err(source) => {
            return Err(StoreError::Io {
                step: "open private state",
                source: at_path(source, &shown),
            })
        }
    }
    parent
        .dir
        .open_dir_nofollow(name)
        .map(|d| Some((d, created)))
        .map_err(|e| StoreError::Io {
            step: "open private state",
            source: at_path(e, &shown),
        })
}

/// §7 step 4: the folding probe, plus the umask-derived mode of new files (C11).
fn probe(h: &mut Handle<'_>, tag: &str) -> Result<(), StoreError> {
    let mut o = OpenOptions::new();
    o.write(true)
        .create_new(true)
        .follow(FollowSymlinks::No)
        .mode(0o644);
    // `-mode`: the mode probe when the case probe cannot be created (below), and the
    // separate mode probe of earlier versions, whose leftovers are removed too.
    let mode_name = format!("{tag}-mode");
    let case_name = format!("{tag}-case-a");
    let nf_name = format!("{tag}-nf-\u{e9}");
    // Leftovers of a crashed probe with the same tag would make `create_new` fail; R1 runs
    // only after the probe, so remove them first.
    for n in [&mode_name, &case_name, &nf_name] {
        let _ = h.caps.remove_file(n);
    }
    // The case probe file also gives the umask-derived mode of new files: one file fewer
    // to create and delete per open. Should it not be creatable (an entry that could not be
    // removed holds its name), `-mode` measures the mode and case folding reads as absent.
    let (f, case_probe) = match h.caps.open_with(&case_name, &o) {
        Ok(f) => (f, &case_name),
        Err(_) => (
            h.caps
                .open_with(&mode_name, &o)
                .map_err(|e| StoreError::Io {
                    step: crate::store::error::PROBE_STEP,
                    source: at_path(e, ".okf/capabilities"),
                })?,
            &mode_name,
        ),
    };
    h.new_file_mode = f
        .metadata()
        .map_err(|e| StoreError::Io {
            step: crate::store::error::PROBE_STEP,
            source: at_path(e, ".okf/capabilities"),
        })?
        .permissions()
        .mode()
        & 0o777;
    drop(f);
    let case =
        case_probe == &case_name && h.caps.symlink_metadata(case_name.to_uppercase()).is_ok();
    let _ = h.caps.remove_file(case_probe);
    #[cfg(feature = "fault-injection")]
    if let Some(f) = h.opts.folding {
        h.folding = f;
        return Ok(());
    }
    let mut folding = Folding {
        case,
        ..Folding::default()
    };
    if h.caps.open_with(&nf_name, &o).is_ok() {
        folding.normalization = h
            .caps
            .symlink_metadata(format!("{tag}-nf-e\u{301}"))
            .is_ok();
        let _ = h.caps.remove_file(&nf_name);
    }
    h.folding = folding;
    Ok(())
}
