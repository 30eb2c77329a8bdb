//! A fresh database for a test: a new temporary directory, the database opened in it. The
//! directory is removed when the returned `TempDir` is dropped, so a test keeps it alive as long
//! as the database (`let (_dir, db) = tempdb::open::<App>();`).
//!
//! Included by path (`#[path = "support/tempdb.rs"] mod tempdb;`); it needs `tabula` and
//! `tempfile`.
#![allow(dead_code)] // each test file uses a part

use tabula::{Db, Options, Schema};
use tempfile::TempDir;

/// The options of [`open`]: a map of up to 1 GiB, so that no test meets the size limit unless it
/// sets one.
pub fn options() -> Options {
    Options::new().max_size(1 << 30)
}

/// A fresh database of `S` in a new temporary directory, opened with [`options`].
///
/// # Panics
///
/// If the directory cannot be made or the database cannot be opened.
pub fn open<S: Schema>() -> (TempDir, Db<S>) {
    open_with(options())
}

/// A fresh database of `S` in a new temporary directory, opened with `options`.
///
/// # Panics
///
/// If the directory cannot be made or the database cannot be opened.
pub fn open_with<S: Schema>(options: Options) -> (TempDir, Db<S>) {
    let dir = tempfile::tempdir().unwrap();
    let db = tabula::open::<S>(dir.path(), options)
        .unwrap_or_else(|e| panic!("open a database in {}: {e}", dir.path().display()));
    (dir, db)
}
