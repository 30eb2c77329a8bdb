//! What `tabula::open` does with a path that does not hold a usable database, and with options
//! libmdbx would refuse: a clear error at once, naming what was found, and nothing changed on
//! disk.
//!
//! - Only a missing or empty data file is a new database; a truncated one (too short for its
//!   meta pages) is refused, read-write and read-only, and left byte for byte as it was.
//! - A FIFO, socket, device or directory where the data file (or the lock file) belongs is
//!   refused before libmdbx opens it (opening a FIFO would block forever).
//! - Every `Options` value libmdbx would reject is refused before libmdbx is called, with the
//!   option's name and valid range.

use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use tabula::{Db, Error, Options, Schema, Table};

#[derive(Table)]
#[table(name = "items", key = u64, value = String)]
struct Items;

#[derive(Schema)]
struct Store(Items);

/// How long an open may take before the test calls it hung. Not a timing assertion: a guarded
/// open returns in milliseconds, an unguarded open of a FIFO never returns.
const HANG: Duration = Duration::from_secs(60);

/// Opens in another thread and fails the test if the open does not return (a FIFO blocks
/// `open(2)` until a writer appears).
fn open_or_hang(path: &Path, options: Options) -> tabula::Result<Db<Store>> {
    let path = path.to_path_buf();
    let (tx, rx) = mpsc::channel();
    let shown = path.display().to_string();
    std::thread::spawn(move || {
        let _ = tx.send(tabula::open::<Store>(&path, options));
    });
    rx.recv_timeout(HANG)
        .unwrap_or_else(|_| panic!("opening `{shown}` did not return within {HANG:?}: it hangs"))
}

fn value(i: u64) -> String {
    format!("value number {i} with some padding to fill pages")
}

/// A database of 3,500 entries, closed. `no_sub_dir`: the path is the data file.
fn make_db(path: &Path, no_sub_dir: bool) -> PathBuf {
    let db = tabula::open::<Store>(path, Options::new().no_sub_dir(no_sub_dir)).unwrap();
    let mut tx = db.write().unwrap();
    for i in 0..3500u64 {
        tx.put::<Items>(&i, &value(i)).unwrap();
    }
    tx.commit().unwrap();
    drop(db);
    if no_sub_dir {
        path.to_path_buf()
    } else {
        path.join("mdbx.dat")
    }
}

fn mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("the `mkfifo` command (coreutils) runs");
    assert!(status.success(), "mkfifo {}", path.display());
}

fn assert_bad_file(err: &Error, path: &Path, needles: &[&str]) {
    assert!(matches!(err, Error::BadFile { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(
        msg.contains(&path.display().to_string()),
        "names the path: {msg}"
    );
    for needle in needles {
        assert!(msg.contains(needle), "expected `{needle}` in: {msg}");
    }
}

#[test]
fn truncated_database_is_refused_and_left_byte_identical() {
    for no_sub_dir in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let path = if no_sub_dir {
            dir.path().join("store.db")
        } else {
            dir.path().to_path_buf()
        };
        let file = make_db(&path, no_sub_dir);
        let whole = std::fs::read(&file).unwrap();
        // 1 byte: shorter than any meta page; 4,096: one 4 KiB page of three; 8,300: two and
        // a bit. libmdbx 0.14.4 took each of them for a new database and re-initialised it.
        for cut in [1usize, 4096, 8300] {
            std::fs::write(&file, &whole[..cut]).unwrap();
            for read_only in [false, true] {
                let options = Options::new().no_sub_dir(no_sub_dir).read_only(read_only);
                let err = open_or_hang(&path, options).unwrap_err();
                assert_bad_file(
                    &err,
                    &file,
                    &[
                        &format!("{cut} bytes"),
                        "truncated",
                        "restore it from a backup",
                    ],
                );
                assert_eq!(
                    std::fs::read(&file).unwrap(),
                    &whole[..cut],
                    "no_sub_dir {no_sub_dir}, cut to {cut}, read_only {read_only}: the file \
                     must be left untouched"
                );
            }
        }
        // The whole file still opens with every entry.
        std::fs::write(&file, &whole).unwrap();
        let db = open_or_hang(&path, Options::new().no_sub_dir(no_sub_dir)).unwrap();
        let tx = db.read().unwrap();
        assert_eq!(tx.len::<Items>().unwrap(), 3500);
        assert_eq!(tx.get::<Items>(&3499).unwrap(), Some(value(3499)));
    }
}

#[test]
fn foreign_file_with_a_large_page_size_option_is_not_overwritten() {
    // libmdbx reads the meta headers at multiples of the page size it was configured with; a
    // 100 KB file read at 64 KiB steps came up short and was re-initialised as a new database.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("notes.txt");
    let text = "a file that is not a database\n".repeat(3500);
    std::fs::write(&file, &text).unwrap();
    let options = Options::new().no_sub_dir(true).page_size(65536);
    let err = open_or_hang(&file, options).unwrap_err();
    assert_bad_file(
        &err,
        &file,
        &[&format!("{} bytes", text.len()), "truncated"],
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
}

#[test]
fn missing_or_empty_data_file_is_a_new_database_read_write_only() {
    for no_sub_dir in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let (path, file) = if no_sub_dir {
            let f = dir.path().join("store.db");
            (f.clone(), f)
        } else {
            (dir.path().to_path_buf(), dir.path().join("mdbx.dat"))
        };
        std::fs::write(&file, b"").unwrap();
        let options = || Options::new().no_sub_dir(no_sub_dir);
        // Read-only: nothing to open, and nothing is created.
        let err = open_or_hang(&path, options().read_only(true)).unwrap_err();
        assert_bad_file(&err, &file, &["empty", "read-only open does not create"]);
        assert_eq!(std::fs::metadata(&file).unwrap().len(), 0);
        // Read-write: a new database.
        let db = open_or_hang(&path, options()).unwrap();
        let mut tx = db.write().unwrap();
        tx.put::<Items>(&1, &value(1)).unwrap();
        tx.commit().unwrap();
        drop(db);
        std::fs::remove_file(&file).unwrap();
        let db = open_or_hang(&path, options()).unwrap();
        assert_eq!(
            db.read().unwrap().len::<Items>().unwrap(),
            0,
            "missing: new"
        );
    }
}

#[test]
fn small_valid_database_still_opens() {
    // 256-byte pages and the smallest geometry: a valid data file of one 4 KiB OS page.
    let dir = tempfile::tempdir().unwrap();
    let options = || Options::new().page_size(256).min_size(0).max_size(1 << 20);
    let db = open_or_hang(dir.path(), options()).unwrap();
    let mut tx = db.write().unwrap();
    tx.put::<Items>(&7, &"seven".to_string()).unwrap();
    tx.commit().unwrap();
    drop(db);
    let len = std::fs::metadata(dir.path().join("mdbx.dat"))
        .unwrap()
        .len();
    eprintln!("small database file: {len} bytes");
    for read_only in [false, true] {
        let db = open_or_hang(dir.path(), options().read_only(read_only)).unwrap();
        assert_eq!(
            db.read().unwrap().get::<Items>(&7).unwrap().as_deref(),
            Some("seven")
        );
    }
}

#[test]
fn fifo_in_place_of_the_data_file_is_refused_at_once() {
    for no_sub_dir in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let (path, file) = if no_sub_dir {
            let f = dir.path().join("store.db");
            (f.clone(), f)
        } else {
            (dir.path().to_path_buf(), dir.path().join("mdbx.dat"))
        };
        mkfifo(&file);
        // Read-only first: `open(2)` of a FIFO for reading blocks until a writer appears.
        for read_only in [true, false] {
            let options = Options::new().no_sub_dir(no_sub_dir).read_only(read_only);
            let err = open_or_hang(&path, options).unwrap_err();
            assert_bad_file(&err, &file, &["FIFO", "not a regular file"]);
        }
    }
}

#[test]
fn socket_device_or_directory_in_place_of_the_data_file_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("socket");
    std::fs::create_dir(&socket).unwrap();
    let _listener = std::os::unix::net::UnixListener::bind(socket.join("mdbx.dat")).unwrap();
    let device = dir.path().join("device");
    std::fs::create_dir(&device).unwrap();
    std::os::unix::fs::symlink("/dev/null", device.join("mdbx.dat")).unwrap();
    let directory = dir.path().join("directory");
    std::fs::create_dir_all(directory.join("mdbx.dat")).unwrap();
    for (path, what) in [
        (&socket, "socket"),
        (&device, "character device"),
        (&directory, "directory"),
    ] {
        for read_only in [false, true] {
            let err = open_or_hang(path, Options::new().read_only(read_only)).unwrap_err();
            assert_bad_file(&err, &path.join("mdbx.dat"), &[what, "not a regular file"]);
        }
    }
    assert!(
        std::fs::metadata("/dev/null").unwrap().len() == 0,
        "/dev/null untouched"
    );
}

#[test]
fn lock_file_that_is_not_a_regular_file_is_refused() {
    for (no_sub_dir, make_fifo) in [(false, true), (false, false), (true, true), (true, false)] {
        let dir = tempfile::tempdir().unwrap();
        let (path, lock) = if no_sub_dir {
            let f = dir.path().join("store.db");
            (f, dir.path().join("store.db-lck"))
        } else {
            (dir.path().to_path_buf(), dir.path().join("mdbx.lck"))
        };
        make_db(&path, no_sub_dir);
        std::fs::remove_file(&lock).unwrap();
        let what = if make_fifo {
            mkfifo(&lock);
            "FIFO"
        } else {
            std::fs::create_dir(&lock).unwrap();
            "directory"
        };
        for read_only in [false, true] {
            let options = Options::new().no_sub_dir(no_sub_dir).read_only(read_only);
            let err = open_or_hang(&path, options).unwrap_err();
            assert_bad_file(&err, &lock, &[what, "lock file"]);
        }
    }
}

#[test]
fn path_of_the_wrong_kind_for_the_layout_is_named() {
    let dir = tempfile::tempdir().unwrap();
    // A database made with `no_sub_dir`, opened without it.
    let file = make_db(&dir.path().join("store.db"), true);
    let before = std::fs::read(&file).unwrap();
    for read_only in [false, true] {
        let err = open_or_hang(&file, Options::new().read_only(read_only)).unwrap_err();
        assert_bad_file(
            &err,
            &file,
            &["regular file, not a directory", "no_sub_dir(true)"],
        );
    }
    assert_eq!(std::fs::read(&file).unwrap(), before);
    // A database directory opened with `no_sub_dir`.
    let db_dir = dir.path().join("db");
    make_db(&db_dir, false);
    for read_only in [false, true] {
        let options = Options::new().no_sub_dir(true).read_only(read_only);
        let err = open_or_hang(&db_dir, options).unwrap_err();
        assert_bad_file(&err, &db_dir, &["directory", "no_sub_dir"]);
    }
    // A FIFO given as the database directory.
    let fifo = dir.path().join("fifo");
    mkfifo(&fifo);
    for read_only in [false, true] {
        let err = open_or_hang(&fifo, Options::new().read_only(read_only)).unwrap_err();
        assert_bad_file(&err, &fifo, &["FIFO", "not a directory"]);
    }
}

#[test]
fn short_text_file_opened_read_only_says_what_it_found() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("mdbx.dat"), "hello\n").unwrap();
    let err = open_or_hang(dir.path(), Options::new().read_only(true)).unwrap_err();
    assert_bad_file(
        &err,
        &dir.path().join("mdbx.dat"),
        &["6 bytes", "too short", "not a database"],
    );
    assert!(!err.to_string().contains("ENODATA"), "{err}");
}

/// Each option libmdbx refuses, the option the error must name, and words of its valid range.
fn bad_options() -> Vec<(&'static str, Options, &'static str, &'static [&'static str])> {
    const GIB: usize = 1 << 30;
    vec![
        (
            "page_size(3)",
            Options::new().page_size(3),
            "page_size",
            &["power of two", "256", "65536"],
        ),
        (
            "page_size(1 MiB)",
            Options::new().page_size(1 << 20),
            "page_size",
            &["power of two", "256", "65536"],
        ),
        (
            "page_size(0)",
            Options::new().page_size(0),
            "page_size",
            &["power of two", "256", "65536"],
        ),
        (
            "max_size(1)",
            Options::new().max_size(1),
            "max_size",
            &["at least", "min_size"],
        ),
        (
            "max_size(0)",
            Options::new().max_size(0),
            "max_size",
            &["at least"],
        ),
        (
            "max_size(usize::MAX)",
            Options::new().max_size(usize::MAX),
            "max_size",
            &["at most"],
        ),
        (
            "min_size > max_size",
            Options::new().min_size(2 * GIB).max_size(GIB),
            "min_size",
            &["max_size"],
        ),
        (
            "min_size(1)",
            Options::new().min_size(1),
            "min_size",
            &["0 or at least 768"],
        ),
        (
            "max_readers(0)",
            Options::new().max_readers(0),
            "max_readers",
            &["1", "32767"],
        ),
        (
            "max_readers(u32::MAX)",
            Options::new().max_readers(u32::MAX),
            "max_readers",
            &["1", "32767"],
        ),
        (
            "extra_tables(u32::MAX)",
            Options::new().extra_tables(u32::MAX),
            "extra_tables",
            &["at most 32763", "32765"],
        ),
        (
            "page_size(256) with the default max_size",
            Options::new().page_size(256),
            "max_size",
            &["page_size", "at most"],
        ),
        (
            "page_size(65536).max_size(1 MiB)",
            Options::new().page_size(65536).max_size(1 << 20),
            "max_size",
            &["at least", "65536"],
        ),
        (
            "initial_size > max_size",
            Options::new().initial_size(2 * GIB).max_size(GIB),
            "initial_size",
            &["max_size"],
        ),
        (
            "initial_size < min_size",
            Options::new().min_size(GIB).initial_size(1 << 20),
            "initial_size",
            &["min_size"],
        ),
        (
            "growth_step > max_size",
            Options::new().max_size(GIB).growth_step(2 * GIB),
            "growth_step",
            &["max_size"],
        ),
        (
            "growth_step(usize::MAX)",
            Options::new().growth_step(usize::MAX),
            "growth_step",
            &["max_size"],
        ),
        (
            "shrink_threshold > max_size",
            Options::new().max_size(GIB).shrink_threshold(2 * GIB),
            "shrink_threshold",
            &["max_size"],
        ),
    ]
}

#[test]
fn invalid_options_are_refused_before_libmdbx_naming_option_and_range() {
    let dir = tempfile::tempdir().unwrap();
    for (i, (case, options, option, range)) in bad_options().into_iter().enumerate() {
        for read_only in [false, true] {
            let path = dir.path().join(format!("db-{i}-{read_only}"));
            let err = open_or_hang(&path, options.clone().read_only(read_only)).unwrap_err();
            let msg = err.to_string();
            assert!(
                matches!(&err, Error::InvalidOption { option: o, .. } if *o == option),
                "{case}: expected Error::InvalidOption naming `{option}`, got {err:?}"
            );
            assert!(msg.contains(&format!("Options::{option}")), "{case}: {msg}");
            for word in range {
                assert!(msg.contains(word), "{case}: expected `{word}` in: {msg}");
            }
            assert!(!msg.contains("EINVAL"), "{case}: {msg}");
            // Refused before anything was created.
            assert!(!path.exists(), "{case}: `{}` was created", path.display());
        }
    }
}

#[test]
fn options_at_the_edges_of_their_ranges_open() {
    let cases = [
        (
            "page_size(256), max_size 512 GiB",
            Options::new().page_size(256).max_size(512 << 30),
        ),
        (
            "page_size(65536), max_size 4 MiB",
            Options::new().page_size(65536).max_size(4 << 20),
        ),
        (
            "max_size 256 KiB (the default min_size)",
            Options::new().max_size(256 << 10),
        ),
        ("min_size(0)", Options::new().min_size(0).max_size(1 << 20)),
        (
            "min_size(768)",
            Options::new().min_size(768).max_size(1 << 20),
        ),
        ("max_readers(1)", Options::new().max_readers(1)),
        ("max_readers(32767)", Options::new().max_readers(32767)),
        (
            "extra_tables(32763) with one schema table",
            Options::new().extra_tables(32763),
        ),
        (
            "growth_step(0), shrink_threshold(0)",
            Options::new().growth_step(0).shrink_threshold(0),
        ),
        (
            "initial_size = max_size",
            Options::new().initial_size(64 << 20).max_size(64 << 20),
        ),
    ];
    for (case, options) in cases {
        let dir = tempfile::tempdir().unwrap();
        let db = open_or_hang(dir.path(), options).unwrap_or_else(|e| panic!("{case}: {e}"));
        let mut tx = db.write().unwrap();
        tx.put::<Items>(&1, &value(1)).unwrap();
        tx.commit().unwrap();
        assert_eq!(db.read().unwrap().len::<Items>().unwrap(), 1, "{case}");
    }
}

/// The names in `dir`, sorted: what an open left behind.
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The entries of `Items`, read from a fresh snapshot.
fn count(db: &Db<Store>) -> u64 {
    db.read().unwrap().len::<Items>().unwrap()
}

fn put(db: &Db<Store>, key: u64) {
    let mut tx = db.write().unwrap();
    tx.put::<Items>(&key, &value(key)).unwrap();
    tx.commit().unwrap();
}

/// `DIR/mdbx.dat` opened with `no_sub_dir(true)` is the database of `DIR`: libmdbx opens it as
/// the directory, with the one lock file `DIR/mdbx.lck`. Earlier builds reserved a second lock
/// file `DIR/mdbx.dat-lck` first, so libmdbx refused every such open (MDBX_DUPLICATED_LCK),
/// and the file it left refused every later open of `DIR` too.
#[test]
fn data_file_named_mdbx_dat_opens_as_its_directory_with_one_lock_file() {
    let dir = tempfile::tempdir().unwrap();
    make_db(dir.path(), false);
    let before = listing(dir.path());
    assert_eq!(before, ["mdbx.dat", "mdbx.lck"]);
    let file = dir.path().join("mdbx.dat");
    for read_only in [true, false] {
        let options = Options::new().no_sub_dir(true).read_only(read_only);
        let db =
            open_or_hang(&file, options).unwrap_or_else(|e| panic!("read_only {read_only}: {e}"));
        assert_eq!(db.path(), file);
        assert_eq!(count(&db), 3500);
        if !read_only {
            put(&db, 9000);
        }
        drop(db);
        assert_eq!(listing(dir.path()), before, "read_only {read_only}");
    }
    // The directory opens as before and holds the write made through the data file.
    let db = open_or_hang(dir.path(), Options::new()).unwrap();
    assert_eq!(
        db.read().unwrap().get::<Items>(&9000).unwrap(),
        Some(value(9000))
    );
}

/// One process: the database open through its directory, then its data file opened with
/// `no_sub_dir(true)` (and the other way round). libmdbx allows one open of a database per
/// process: the second open is refused, says the file is already open through its directory
/// and what to do, and leaves the directory as it was; the first keeps working, and the
/// database opens again either way once it is closed.
#[test]
fn data_file_opened_while_its_directory_is_open_is_refused_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    make_db(dir.path(), false);
    let file = dir.path().join("mdbx.dat");
    let by_dir = || Options::new();
    let by_file = || Options::new().no_sub_dir(true);
    for (first, second, second_path) in [
        (by_dir(), by_file(), &file),
        (by_file(), by_dir(), &dir.path().to_path_buf()),
    ] {
        let first_path = if second_path == &file {
            dir.path().to_path_buf()
        } else {
            file.clone()
        };
        let owner = open_or_hang(&first_path, first).unwrap();
        let before = listing(dir.path());
        for read_only in [false, true] {
            let err = open_or_hang(second_path, second.clone().read_only(read_only)).unwrap_err();
            let msg = err.to_string();
            assert!(matches!(err, Error::Open { .. }), "{err:?}");
            assert!(msg.contains(&second_path.display().to_string()), "{msg}");
            assert!(msg.contains("already open"), "{msg}");
            assert!(msg.contains("share the `Db`"), "{msg}");
            if second_path == &file {
                assert!(
                    msg.contains("already open through its directory in this process"),
                    "{msg}"
                );
            }
            assert_eq!(listing(dir.path()), before, "{msg}");
        }
        put(&owner, 7000);
        drop(owner);
        for path in [dir.path(), file.as_path()] {
            let options = Options::new().no_sub_dir(path == file);
            let db = open_or_hang(path, options).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(count(&db), 3501);
        }
        assert_eq!(listing(dir.path()), ["mdbx.dat", "mdbx.lck"]);
    }
}

/// A second lock file beside a database (`DIR/mdbx.dat-lck`, which earlier builds left after a
/// refused open of `DIR/mdbx.dat`): libmdbx refuses to open the database while it exists. The
/// open is refused before anything is touched, and the error names the file and says when it
/// is safe to remove.
#[test]
fn stale_duplicate_lock_file_is_named_with_when_to_remove_it() {
    let dir = tempfile::tempdir().unwrap();
    make_db(dir.path(), false);
    let stale = dir.path().join("mdbx.dat-lck");
    std::fs::write(&stale, b"").unwrap();
    let before = listing(dir.path());
    let file = dir.path().join("mdbx.dat");
    for (path, no_sub_dir) in [(dir.path(), false), (file.as_path(), true)] {
        for read_only in [false, true] {
            let options = Options::new().no_sub_dir(no_sub_dir).read_only(read_only);
            let err = open_or_hang(path, options).unwrap_err();
            assert_bad_file(
                &err,
                &stale,
                &[
                    "second lock file",
                    "mdbx.lck",
                    "safe to remove when no process has the database open",
                ],
            );
            assert_eq!(listing(dir.path()), before, "{err}");
        }
    }
    std::fs::remove_file(&stale).unwrap();
    let db = open_or_hang(dir.path(), Options::new()).unwrap();
    assert_eq!(count(&db), 3500);
}

/// With `no_sub_dir`, libmdbx takes `NAME.lck` beside the data file `NAME.EXT` (or `NAME`) for
/// a second lock file of it and refuses the open (MDBX_DUPLICATED_LCK). Tabula refuses first,
/// naming that file, and creates nothing: earlier builds left their own lock file `NAME.EXT-lck`
/// (and, for a new database, nothing else) behind.
#[test]
fn file_libmdbx_takes_for_a_second_lock_file_is_named_and_nothing_is_created() {
    for (data, other) in [("store.db", "store.lck"), ("store", "store.lck")] {
        for existing in [false, true] {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join(data);
            if existing {
                make_db(&path, true);
                std::fs::remove_file(dir.path().join(format!("{data}-lck"))).unwrap();
            }
            let alternative = dir.path().join(other);
            std::fs::write(&alternative, b"an application's own lock").unwrap();
            let before = listing(dir.path());
            for read_only in [false, true] {
                let options = Options::new().no_sub_dir(true).read_only(read_only);
                let err = open_or_hang(&path, options).unwrap_err();
                if !existing && read_only {
                    // Nothing to open read-only: refused as before, for the missing file.
                    assert!(matches!(err, Error::Open { .. }), "{err:?}");
                } else {
                    assert_bad_file(&err, &alternative, &["second lock file", data]);
                }
                assert_eq!(
                    listing(dir.path()),
                    before,
                    "{data}, existing {existing}: {err}"
                );
            }
        }
    }
}
