//! Writes the Rust bindings of a libmdbx header: `tabula-mdbx-sys-gen MDBX_H OUT`.
//!
//! The options are those the registry's `mdbx-sys` 14.4.0 ran in its build script, so the
//! bindings declare the same items with the same types, except that the types which differ
//! between Unix targets (`pid_t`, `mode_t`, `pthread_t`, `va_list`) are left out here and
//! defined in `src/lib.rs` from `libc` (or opaque), so one generated file serves every Unix
//! target.

use bindgen::{
    Formatter,
    callbacks::{DeriveTrait, ImplementsTrait, IntKind, ParseCallbacks},
};

#[derive(Debug)]
struct Callbacks;

impl ParseCallbacks for Callbacks {
    // `#define` constants: the header's flags and sizes are unsigned.
    fn int_macro(&self, _name: &str, _value: i64) -> Option<IntKind> {
        Some(IntKind::UInt)
    }

    // The left-out integer types are `Copy` and `Debug` on every target (`libc`'s), so the
    // structs holding them (`MDBX_defrag_result`) keep their derives.
    fn blocklisted_type_implements_trait(
        &self,
        name: &str,
        _derive: DeriveTrait,
    ) -> Option<ImplementsTrait> {
        matches!(name, "pid_t" | "mode_t" | "pthread_t").then_some(ImplementsTrait::Yes)
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, header, out] = args.as_slice() else {
        eprintln!("usage: tabula-mdbx-sys-gen MDBX_H OUT");
        std::process::exit(2);
    };
    let bindings = bindgen::Builder::default()
        .header(header)
        .allowlist_var("^(MDBX|mdbx)_.*")
        .allowlist_type("^(MDBX|mdbx)_.*")
        .allowlist_function("^(MDBX|mdbx)_.*")
        .blocklist_type("^(__)?(pid_t|mode_t|pthread_t)$")
        .blocklist_type("^(va_list|__builtin_va_list|__va_list_tag)$")
        .size_t_is_usize(true)
        .ctypes_prefix("::libc")
        .parse_callbacks(Box::new(Callbacks))
        .layout_tests(false)
        .prepend_enum_name(false)
        .generate_comments(false)
        .disable_header_comment()
        .formatter(Formatter::None)
        .generate()
        .unwrap_or_else(|e| {
            eprintln!("bindgen failed on {header}: {e}");
            std::process::exit(1);
        });
    bindings.write_to_file(out).unwrap_or_else(|e| {
        eprintln!("cannot write {out}: {e}");
        std::process::exit(1);
    });
}
