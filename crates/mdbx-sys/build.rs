//! Compiles the vendored libmdbx (`libmdbx/mdbx.c`, the amalgamated source with Tabula's
//! patches applied) into a static library. The Rust bindings are committed
//! (`src/bindings.rs`), so this needs a C compiler and nothing else: no bindgen, no libclang.
//!
//! Every libmdbx build option that Tabula relies on is defined here, explicitly; the options
//! not named keep libmdbx's own defaults for the target (`mdbx_build.options` lists them all).

use std::env;
use std::path::PathBuf;

// `BUILD_METADATA`: the patch set, written by `scripts/libmdbx.sh` from `patches/series`.
include!("src/build_metadata.rs");

fn main() {
    let dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"))
        .join("libmdbx");
    for file in ["mdbx.c", "mdbx.h", "mdbx-internals.h"] {
        println!("cargo:rerun-if-changed={}", dir.join(file).display());
    }
    println!("cargo:rerun-if-changed=src/build_metadata.rs");
    println!("cargo:rerun-if-changed=build.rs");

    // The committed bindings are generated from the POSIX side of mdbx.h (file handles are
    // `int`, not `HANDLE`); on Windows they would not match the C declarations.
    let family = env::var("CARGO_CFG_TARGET_FAMILY").unwrap_or_default();
    if !family.split(',').any(|f| f == "unix") {
        panic!(
            "tabula-mdbx-sys supports Unix targets only (its committed bindings are generated \
             from the POSIX declarations of mdbx.h), not target family `{family}`"
        );
    }

    let mut build = cc::Build::new();
    build
        .flag_if_supported("-Wall")
        .flag_if_supported("-ffunction-sections")
        .flag_if_supported("-fvisibility=hidden")
        .flag_if_supported("-Wno-error=attributes");

    // Assertions follow the profile's debug assertions (`CARGO_CFG_DEBUG_ASSERTIONS`, not
    // `DEBUG`, which is about debug info): a test build runs libmdbx's internal checks
    // (`MDBX_FORCE_ASSERTIONS=1`, i.e. `MDBX_CHECKING=2`), a release build none (`NDEBUG`).
    // `MDBX_DEBUG=0` in both: no debug logging, whose cost would distort every figure.
    build.define("MDBX_DEBUG", "0");
    if env::var_os("CARGO_CFG_DEBUG_ASSERTIONS").is_some() {
        build.define("MDBX_FORCE_ASSERTIONS", "1");
    } else {
        build.define("NDEBUG", "1");
    }

    // No owner-thread check on transactions. Tabula opens every environment with
    // `MDBX_NOSTICKYTHREADS` and enforces the rules in Rust instead: a write transaction is
    // `!Send`, every transaction `!Sync`, and the writer may reset a parked reader's
    // transaction from its own thread (docs/design.md, "Transactions"), which the check would
    // refuse. reth builds libmdbx the same way.
    build.define("MDBX_TXN_CHECKOWNER", "0");

    // How the data file grows: each growth step reserves its space (fallocate) before the file
    // is extended, libmdbx's default on Linux. The reservation is what makes a full disk an
    // `ENOSPC` from the write transaction rather than a SIGBUS when a page is stored through a
    // writable map (`write_map`, which Tabula enables on ext4 and XFS: docs/design.md, "A full
    // disk"). 0 (reth's choice, `ftruncate` only) measured faster durable commits on ext4 but
    // would lose that (patches/libmdbx-0.14.4-fallocate-enospc.md). The reservation's cost on
    // ext4 and XFS (commits converting unwritten extents at the flush) is taken away by the
    // patch growth-written: the commit after a growth writes zeroes over what it left unused.
    build.define("MDBX_USE_FALLOCATE", "1");
    // Which call reserves. Where <linux/falloc.h> defines FALLOC_FL_ALLOCATE_RANGE (recent
    // kernel headers) libmdbx calls fallocate(), else posix_fallocate(), which glibc emulates
    // by writing into every block where the file system has no fallocate. Defined here (as the
    // header defines it) so every Linux build takes the fallocate() path, whatever its headers;
    // the patch fallocate-enospc makes that path report ENOSPC, which libmdbx 0.14.4 drops.
    if env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux") {
        build.define("FALLOC_FL_ALLOCATE_RANGE", "0x00");
    }

    // Names the patch set in the library itself (`mdbx_build.metadata`). Tabula compares it
    // with `BUILD_METADATA` at every open, so a program whose libmdbx symbols come from
    // somewhere else (a `links` override, another static library) is refused instead of run
    // on an engine whose fixes Tabula counts on.
    build.define(
        "MDBX_BUILD_METADATA",
        Some(format!("{BUILD_METADATA:?}").as_str()),
    );

    // `__cpu_model` (behind `__builtin_cpu_supports`) is missing from musl's runtime.
    if env::var("TARGET").is_ok_and(|t| t.ends_with("-musl")) {
        build.define("MDBX_HAVE_BUILTIN_CPU_SUPPORTS", "0");
    }

    // The compiler flags, recorded in `mdbx_build.flags` (what `mdbx_chk -V` and Tabula's
    // `tabula info` can show); informational only.
    let cflags = build.get_compiler().cflags_env();
    build.define("MDBX_BUILD_FLAGS", Some(format!("{cflags:?}").as_str()));

    build.file(dir.join("mdbx.c")).compile("mdbx");
}
