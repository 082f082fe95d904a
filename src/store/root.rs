//! `bundle_path` validation and the pinned root handle (spec/surface.md §7).

use crate::wire::envelope::ToolError;
use cap_fs_ext::DirExt;
use cap_std::ambient_authority;
use cap_std::fs::Dir;

/// A validated, pinned bundle root. All later access is relative to [`Root::dir`] with
/// no-follow semantics.
#[derive(Debug)]
pub struct Root {
    pub dir: Dir,
}

/// Validates `bundle_path` (rules 2–9 of spec/surface.md §7) and opens it component by
/// component from `/` without following symlinks.
///
/// # Errors
/// `invalid_request` with the fixed message of the failed rule; messages never contain the path.
pub fn open(bundle_path: &str) -> Result<Root, ToolError> {
    if bundle_path.is_empty() {
        return Err(ToolError::invalid_request("bundle_path is required"));
    }
    if bundle_path.trim() != bundle_path {
        return Err(ToolError::invalid_request(
            "bundle_path must not contain surrounding whitespace",
        ));
    }
    if !bundle_path.starts_with('/') {
        return Err(ToolError::invalid_request("bundle_path must be absolute"));
    }
    let clean = bundle_path == "/"
        || (!bundle_path.ends_with('/')
            && !bundle_path.contains('\0')
            && bundle_path[1..]
                .split('/')
                .all(|c| !c.is_empty() && c != "." && c != ".."));
    if !clean {
        return Err(ToolError::invalid_request("bundle_path must be clean"));
    }
    let inaccessible = || ToolError::invalid_request("bundle_path is not accessible");
    let mut dir = Dir::open_ambient_dir("/", ambient_authority()).map_err(|_| inaccessible())?;
    let comps: Vec<&str> = bundle_path[1..]
        .split('/')
        .filter(|c| !c.is_empty())
        .collect();
    for (i, comp) in comps.iter().enumerate() {
        let last = i + 1 == comps.len();
        let meta = dir.symlink_metadata(comp).map_err(|_| inaccessible())?;
        if meta.file_type().is_symlink() {
            return Err(ToolError::invalid_request(if last {
                "bundle_path must not be a symlink"
            } else {
                "bundle_path must not contain a symlink"
            }));
        }
        if !meta.is_dir() {
            return Err(ToolError::invalid_request(if last {
                "bundle_path must be a directory"
            } else {
                "bundle_path is not accessible"
            }));
        }
        let next = dir.open_dir_nofollow(comp).map_err(|_| inaccessible())?;
        let after = next.dir_metadata().map_err(|_| inaccessible())?;
        if !same_identity(&meta, &after) {
            return Err(ToolError::invalid_request(
                "bundle_path changed while opening",
            ));
        }
        dir = next;
    }
    Ok(Root { dir })
}

fn same_identity(a: &cap_std::fs::Metadata, b: &cap_std::fs::Metadata) -> bool {
    use cap_fs_ext::MetadataExt;
    a.dev() == b.dev() && a.ino() == b.ino()
}
