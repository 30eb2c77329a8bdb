//! The committed libmdbx is what the script makes of the pristine copy and the patches, and
//! the library linked is the one built from it.

use std::ffi::CStr;
use std::path::Path;
use std::process::Command;

/// `scripts/libmdbx.sh --check`: the pristine copy matches its recorded sha256 sums, and
/// `libmdbx/`, `src/build_metadata.rs` and `src/bindings.rs` are what it and `patches/series`
/// give (a hand edit of the vendored tree, a patch added without rebuilding, or bindings not
/// regenerated after a header change fails here).
#[test]
fn the_committed_tree_is_pristine_plus_the_patches() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/libmdbx.sh");
    let out = Command::new("bash")
        .arg(&script)
        .arg("--check")
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", script.display()));
    assert!(
        out.status.success(),
        "{} --check failed:\n{}{}",
        script.display(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The linked library says it was built from this crate's patch set and is libmdbx 0.14.4.
#[test]
fn the_linked_libmdbx_is_this_build() {
    // SAFETY: `mdbx_build` and `mdbx_version` are immutable statics of the C library; their
    // strings are NUL-terminated literals.
    let (metadata, version, describe) = unsafe {
        let b = tabula_mdbx_sys::mdbx_build;
        let v = tabula_mdbx_sys::mdbx_version;
        (
            CStr::from_ptr(b.metadata).to_str().unwrap().to_owned(),
            (v.major, v.minor, v.patch),
            CStr::from_ptr(v.git.describe).to_str().unwrap().to_owned(),
        )
    };
    assert_eq!(metadata, tabula_mdbx_sys::BUILD_METADATA);
    assert_eq!(version, (0, 14, 4));
    assert_eq!(describe, "v0.14.4-0-g716ce9d5");
}
