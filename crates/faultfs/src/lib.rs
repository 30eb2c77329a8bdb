//! A FUSE file system that behaves like a disk with a volatile write cache, for power-cut and
//! I/O-fault tests of Tabula (in the spirit of LazyFS).
//!
//! A [`Disk`] holds a flat directory of regular files in memory. Every file has two images:
//!
//! - the *current* one, which every read sees (what the OS page cache shows a running system);
//! - the *durable* one, which survives a power cut.
//!
//! A `write`, a size change (`ftruncate`, `fallocate`) only changes the current image and is
//! queued as *pending* for its file. An `fsync`/`fdatasync` of the file (FUSE `FSYNC`, which the
//! kernel also sends for `msync(MS_SYNC)` of a shared mapping, after writing back its dirty
//! pages, and after every write through an `O_DSYNC`/`O_SYNC` descriptor) moves all of that
//! file's pending operations to the durable image, in order. Creating, renaming and removing
//! files are durable at once (the modelled file system journals its namespace synchronously).
//!
//! A power cut ([`Disk::cut_at`]) stops the disk at the N-th mutating request (write, size
//! change or fsync, counted across all files; the N-th is not applied), or at the first
//! mutating request or the first fsync after a [`mark`] ([`Disk::cut_after`],
//! [`Disk::cut_at_fsync_after`]): that request and every later one blocks until
//! [`Disk::release`], then fails with `EIO`, so nothing after the cut reaches the disk and a
//! process that waited on it never sees it succeed. The state after the cut is
//! [`Disk::durable_image`]: the durable images, optionally plus a random subset of the pending
//! writes ([`Reorder`]), or exactly the pending pieces a test chooses
//! ([`Disk::durable_image_with`], listed by [`Disk::pending`]), written to a real directory with
//! [`Image::write_to`] and opened from there as a machine would after rebooting. The
//! `faultfs-run` binary does all this for any program (its docs say how).
//!
//! An I/O fault ([`Disk::fail_at`]) answers the N-th write or fsync of a named file with an
//! error (`EIO`, `ENOSPC`, ...) instead of performing it; the disk goes on working afterwards.
//! A failed fsync leaves that file's pending writes pending (volatile).
//!
//! A process can put a label into the disk's order of events by looking up the name
//! `.faultfs-mark-<label>` in the mounted directory ([`mark`]): the lookup fails with
//! `ENOENT`, and the disk records the label together with the number of mutating requests it
//! had received, so a test knows exactly which writes came before, say, a `commit` returned.
//!
//! Mounting needs `/dev/fuse` and root (the mount is made with `mount(2)` directly, no
//! `fusermount3`). [`new_boot_namespace`] gives the calling thread a private mount namespace in
//! which every process started afterwards reads a fresh random boot ID, so that libmdbx in a
//! writer child and in the verifying parent see different boots, as they would across a real
//! power cut.

#![forbid(unsafe_code)]

use std::collections::{BTreeMap, HashMap};
use std::ffi::OsStr;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

use fuser::{
    BackgroundSession, Config, Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags,
    Generation, INodeNo, LockOwner, MountOption, OpenFlags, ReplyAttr, ReplyCreate, ReplyData,
    ReplyDirectory, ReplyEmpty, ReplyEntry, ReplyOpen, ReplyStatfs, ReplyWrite, Request, TimeOrNow,
    WriteFlags,
};

/// The prefix of the names [`mark`] looks up.
pub const MARK_PREFIX: &str = ".faultfs-mark-";

/// The granularity of [`Reorder`]: pending writes survive a cut in pieces of this many bytes,
/// aligned to file offsets, never torn inside a piece.
pub const PIECE: u64 = 4096;

const TTL: Duration = Duration::from_secs(1);
const ROOT: u64 = 1;

/// Which kind of request a [`Fault`] hits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultOp {
    /// A `write` (a `pwrite`, or the kernel writing back a page of a shared mapping).
    Write,
    /// An `fsync` or `fdatasync` (also `msync(MS_SYNC)` and a write through an `O_DSYNC`
    /// descriptor, which the kernel follows with an fsync request).
    Fsync,
}

/// An I/O error to inject: the `nth` (1-based) request of kind `op` on the file named `file`
/// is answered with `errno` instead of being performed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    /// The kind of request.
    pub op: FaultOp,
    /// Which one, counting from 1, among the requests of that kind on that file.
    pub nth: u64,
    /// The error, e.g. `libc::EIO` or `libc::ENOSPC`.
    pub errno: i32,
    /// The file's name in the mounted directory, e.g. `mdbx.dat`.
    pub file: String,
}

/// How pending writes fare at a power cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reorder {
    /// Every pending write and size change is lost: the disk keeps exactly what was synced.
    DropAll,
    /// The pending operations of each file persist in the order they were issued, up to a
    /// point drawn from this seed (anywhere from none to all, possibly inside a write, at a
    /// [`PIECE`] boundary). This models a disk that writes back in issue order: what reached
    /// it is always a prefix of what was written.
    Prefix(u64),
    /// Each [`PIECE`]-sized, offset-aligned piece of every pending write, and each pending size
    /// change, survives independently with probability 1/2 (drawn from this seed); survivors
    /// are applied in the order they were issued. This models a page cache and disk that write
    /// back any subset of dirty pages in any order between two flushes, as POSIX allows.
    Subset(u64),
}

/// Counters of what the disk has received.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Write requests applied.
    pub writes: u64,
    /// Bytes written by those requests.
    pub bytes_written: u64,
    /// Fsync requests applied (on files).
    pub fsyncs: u64,
    /// Size changes applied (`ftruncate`, `fallocate`).
    pub resizes: u64,
    /// Mutating requests received (writes, size changes, fsyncs, including those failed by a
    /// fault): the count [`Disk::cut_at`] refers to.
    pub mutating: u64,
    /// Faults injected so far.
    pub faults: u64,
}

/// A label recorded by a lookup of `.faultfs-mark-<label>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mark {
    /// The label.
    pub label: String,
    /// Mutating requests received before it.
    pub after_ops: u64,
}

/// The files a disk holds after a power cut: name → bytes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Image {
    /// Every file by name, with its contents.
    pub files: BTreeMap<String, Vec<u8>>,
}

#[derive(Debug, Clone)]
enum Pending {
    Write { offset: u64, data: Vec<u8> },
    SetLen(u64),
}

#[derive(Debug)]
struct Node {
    name: String,
    mode: u16,
    current: Vec<u8>,
    durable: Vec<u8>,
    pending: Vec<Pending>,
    writes: u64,
    fsyncs: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Power {
    On,
    /// Cut; requests wait.
    Cut,
    /// Cut and released: requests fail with EIO at once.
    CutReleased,
}

#[derive(Debug)]
struct State {
    nodes: HashMap<u64, Node>,
    names: BTreeMap<String, u64>,
    next_ino: u64,
    next_fh: u64,
    stats: Stats,
    marks: Vec<Mark>,
    cut_at: Option<u64>,
    cut_after_mark: Option<CutAfterMark>,
    power: Power,
    fault: Option<Fault>,
    fault_log: Vec<String>,
}

struct Shared {
    state: Mutex<State>,
    changed: Condvar,
}

/// A simulated disk: the FUSE file system's state and the test's handle on it. Cheap to clone;
/// clones share the disk.
#[derive(Clone)]
pub struct Disk {
    shared: Arc<Shared>,
}

impl fmt::Debug for Disk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let st = self.lock();
        f.debug_struct("Disk")
            .field("files", &st.names.keys().collect::<Vec<_>>())
            .field("stats", &st.stats)
            .field("power", &st.power)
            .finish()
    }
}

impl Default for Disk {
    fn default() -> Self {
        Disk::new()
    }
}

/// A mounted [`Disk`]; unmounts when dropped (or with [`Mounted::unmount`]).
pub struct Mounted {
    session: Option<BackgroundSession>,
    path: PathBuf,
}

impl fmt::Debug for Mounted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Mounted").field("path", &self.path).finish()
    }
}

impl Disk {
    /// An empty disk: one empty root directory, power on, no fault planned.
    ///
    /// ```rust
    /// let disk = tabula_faultfs::Disk::new();
    /// assert_eq!(disk.stats().writes, 0);
    /// ```
    pub fn new() -> Disk {
        Disk {
            shared: Arc::new(Shared {
                state: Mutex::new(State {
                    nodes: HashMap::new(),
                    names: BTreeMap::new(),
                    next_ino: ROOT + 1,
                    next_fh: 1,
                    stats: Stats::default(),
                    marks: Vec::new(),
                    cut_at: None,
                    cut_after_mark: None,
                    power: Power::On,
                    fault: None,
                    fault_log: Vec::new(),
                }),
                changed: Condvar::new(),
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while the lock is held is a bug in this crate; the state is still usable
        // for a report.
        self.shared
            .state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Mounts the disk on the directory `mountpoint` (which must exist) with FUSE and serves
    /// it from a background thread. Needs `/dev/fuse` and root (or `CAP_SYS_ADMIN`): the mount
    /// is made with `mount(2)`, no setuid helper. The file system is named `faultfs` (libmdbx
    /// treats file systems named `fuse*` as remote and refuses them).
    ///
    /// The kernel keeps no write-back cache for it (each `write` reaches the disk before it
    /// returns) and files are not opened with `direct_io`, so shared memory maps work and
    /// see the same pages as `read`/`write`.
    ///
    /// # Errors
    ///
    /// The `mount(2)` or `/dev/fuse` error, with the mount point in the message.
    ///
    /// ```rust,no_run
    /// let dir = tempfile::tempdir()?;
    /// let disk = tabula_faultfs::Disk::new();
    /// let mounted = disk.mount(dir.path())?;
    /// std::fs::write(dir.path().join("f"), b"hello")?;
    /// mounted.unmount()?;
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn mount(&self, mountpoint: &Path) -> io::Result<Mounted> {
        let mut config = Config::default();
        config.mount_options = vec![
            MountOption::FSName("faultfs".into()),
            MountOption::Subtype("faultfs".into()),
            MountOption::RW,
            MountOption::NoAtime,
        ];
        let fs = FaultFs { disk: self.clone() };
        let session = fuser::spawn_mount(fs, mountpoint, &config).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("mounting faultfs on {}: {e}", mountpoint.display()),
            )
        })?;
        Ok(Mounted {
            session: Some(session),
            path: mountpoint.to_path_buf(),
        })
    }

    /// Plans a power cut at the `nth` (1-based) mutating request since the disk was created
    /// (see [`Stats::mutating`]). That request is not applied; it and every
    /// later request wait until [`release`](Disk::release) and then fail with `EIO`.
    ///
    /// ```rust
    /// let disk = tabula_faultfs::Disk::new();
    /// disk.cut_at(10);
    /// assert!(!disk.is_cut());
    /// ```
    pub fn cut_at(&self, nth: u64) {
        self.lock().cut_at = Some(nth);
    }

    /// Plans a power cut at the first fsync request (on any file) that arrives after the mark
    /// `label` has been recorded ([`mark`]): that fsync is not applied, and it and every later
    /// request wait until [`release`](Disk::release), then fail with `EIO`. So a test can cut
    /// inside a chosen call, after the writes it issues before its flush.
    ///
    /// ```rust
    /// let disk = tabula_faultfs::Disk::new();
    /// disk.cut_at_fsync_after("before-commit-3");
    /// assert!(!disk.is_cut());
    /// ```
    pub fn cut_at_fsync_after(&self, label: &str) {
        self.lock().cut_after_mark = Some(CutAfterMark {
            label: label.to_owned(),
            fsync_only: true,
            armed: false,
        });
    }

    /// Plans a power cut at the first mutating request (write, size change or fsync, on any
    /// file) that arrives after the mark `label` has been recorded ([`mark`]), as
    /// [`cut_at_fsync_after`](Disk::cut_at_fsync_after) does for an fsync.
    ///
    /// ```rust
    /// let disk = tabula_faultfs::Disk::new();
    /// disk.cut_after("commit-3");
    /// assert!(!disk.is_cut());
    /// ```
    pub fn cut_after(&self, label: &str) {
        self.lock().cut_after_mark = Some(CutAfterMark {
            label: label.to_owned(),
            fsync_only: false,
            armed: false,
        });
    }

    /// Cuts the power now: every later request waits until [`release`](Disk::release), then
    /// fails with `EIO`.
    ///
    /// ```rust
    /// let disk = tabula_faultfs::Disk::new();
    /// disk.cut_now();
    /// assert!(disk.is_cut());
    /// ```
    pub fn cut_now(&self) {
        let mut st = self.lock();
        if st.power == Power::On {
            st.power = Power::Cut;
        }
        drop(st);
        self.shared.changed.notify_all();
    }

    /// Whether the power has been cut.
    ///
    /// ```rust
    /// let disk = tabula_faultfs::Disk::new();
    /// assert!(!disk.is_cut());
    /// ```
    pub fn is_cut(&self) -> bool {
        self.lock().power != Power::On
    }

    /// Waits until the power is cut or `timeout` passes; returns whether it was cut.
    ///
    /// ```rust
    /// let disk = tabula_faultfs::Disk::new();
    /// assert!(!disk.wait_cut(std::time::Duration::from_millis(1)));
    /// ```
    pub fn wait_cut(&self, timeout: Duration) -> bool {
        let st = self.lock();
        let (st, _) = self
            .shared
            .changed
            .wait_timeout_while(st, timeout, |st| st.power == Power::On)
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        st.power != Power::On
    }

    /// After a cut, lets the waiting requests (and all later ones) fail with `EIO`. Kill the
    /// processes using the disk first, so that none of them runs on after a failed request.
    ///
    /// ```rust
    /// let disk = tabula_faultfs::Disk::new();
    /// disk.cut_now();
    /// disk.release();
    /// assert!(disk.is_cut());
    /// ```
    pub fn release(&self) {
        let mut st = self.lock();
        if st.power == Power::Cut {
            st.power = Power::CutReleased;
        }
        drop(st);
        self.shared.changed.notify_all();
    }

    /// Plans an I/O fault (replacing any planned before). Requests are counted from the
    /// disk's creation.
    ///
    /// ```rust
    /// use tabula_faultfs::{Disk, Fault, FaultOp};
    /// let disk = Disk::new();
    /// disk.fail_at(Fault { op: FaultOp::Fsync, nth: 3, errno: libc::EIO, file: "mdbx.dat".into() });
    /// assert!(disk.fault_log().is_empty());
    /// ```
    pub fn fail_at(&self, fault: Fault) {
        self.lock().fault = Some(fault);
    }

    /// The faults injected so far, described (`EIO on write #4 of mdbx.dat at offset 8192`).
    ///
    /// ```rust
    /// assert!(tabula_faultfs::Disk::new().fault_log().is_empty());
    /// ```
    pub fn fault_log(&self) -> Vec<String> {
        self.lock().fault_log.clone()
    }

    /// What the disk has received so far.
    ///
    /// ```rust
    /// assert_eq!(tabula_faultfs::Disk::new().stats().mutating, 0);
    /// ```
    pub fn stats(&self) -> Stats {
        self.lock().stats
    }

    /// Writes and fsyncs applied so far to the file `name` (`(0, 0)` when there is none).
    ///
    /// ```rust
    /// assert_eq!(tabula_faultfs::Disk::new().file_ops("mdbx.dat"), (0, 0));
    /// ```
    pub fn file_ops(&self, name: &str) -> (u64, u64) {
        let st = self.lock();
        st.names
            .get(name)
            .and_then(|ino| st.nodes.get(ino))
            .map_or((0, 0), |n| (n.writes, n.fsyncs))
    }

    /// The labels recorded by [`mark`] lookups, in order.
    ///
    /// ```rust
    /// assert!(tabula_faultfs::Disk::new().marks().is_empty());
    /// ```
    pub fn marks(&self) -> Vec<Mark> {
        self.lock().marks.clone()
    }

    /// What survives a power cut now: each file's durable image, plus the pending writes
    /// [`Reorder`] lets through. Call it after the cut (or after the processes stopped).
    ///
    /// ```rust
    /// use tabula_faultfs::{Disk, Reorder};
    /// let image = Disk::new().durable_image(Reorder::DropAll);
    /// assert!(image.files.is_empty());
    /// ```
    pub fn durable_image(&self, reorder: Reorder) -> Image {
        let mut rng = SplitMix(match reorder {
            Reorder::DropAll => 0,
            Reorder::Prefix(seed) | Reorder::Subset(seed) => seed,
        });
        // Per file: how many of its pieces a prefix keeps, drawn when its first piece is seen.
        let mut prefix: Option<(String, usize)> = None;
        let counts: BTreeMap<String, usize> =
            self.pending().iter().fold(BTreeMap::new(), |mut m, p| {
                *m.entry(p.file.clone()).or_default() += 1;
                m
            });
        self.durable_image_with(|piece| match reorder {
            Reorder::DropAll => false,
            Reorder::Prefix(_) => {
                if prefix.as_ref().is_none_or(|(f, _)| *f != piece.file) {
                    let n = counts.get(&piece.file).copied().unwrap_or(0);
                    let k = (rng.next() % (n as u64 + 1)) as usize;
                    prefix = Some((piece.file.clone(), k));
                }
                prefix.as_ref().is_some_and(|(_, k)| piece.index < *k)
            }
            Reorder::Subset(_) => rng.coin(),
        })
    }

    /// The operations not yet flushed, cut into the pieces a power cut keeps or loses whole
    /// (see [`Piece`]), file by file in name order, each file's in issue order.
    ///
    /// ```rust
    /// assert!(tabula_faultfs::Disk::new().pending().is_empty());
    /// ```
    pub fn pending(&self) -> Vec<Piece> {
        let st = self.lock();
        let mut out = Vec::new();
        for (name, ino) in &st.names {
            for (index, op) in pieces_of(&st.nodes[ino].pending).iter().enumerate() {
                out.push(Piece {
                    file: name.clone(),
                    index,
                    op: match op {
                        Pending::SetLen(len) => PieceOp::SetLen(*len),
                        Pending::Write { offset, data } => PieceOp::Write {
                            offset: *offset,
                            len: data.len() as u64,
                        },
                    },
                });
            }
        }
        out
    }

    /// What survives a power cut in which exactly the pending pieces `keep` accepts reached the
    /// disk: each file's durable image plus those pieces, applied in issue order. `keep` is
    /// asked once per piece, in the order of [`pending`](Disk::pending). POSIX allows any
    /// subset between two flushes, so every choice is a state a real disk can be left in.
    ///
    /// ```rust
    /// use tabula_faultfs::{Disk, PieceOp};
    /// // Everything written reached the disk except the first 12 KiB of `mdbx.dat`.
    /// let image = Disk::new().durable_image_with(|p| {
    ///     !(p.file == "mdbx.dat" && matches!(p.op, PieceOp::Write { offset, .. } if offset < 12288))
    /// });
    /// assert!(image.files.is_empty());
    /// ```
    pub fn durable_image_with(&self, mut keep: impl FnMut(&Piece) -> bool) -> Image {
        let pending = self.pending();
        let st = self.lock();
        let mut files = BTreeMap::new();
        for (name, ino) in &st.names {
            let node = &st.nodes[ino];
            let mut bytes = node.durable.clone();
            let mine = pending.iter().filter(|p| p.file == *name);
            for (piece, op) in mine.zip(pieces_of(&node.pending)) {
                if keep(piece) {
                    apply(&mut bytes, &op);
                }
            }
            files.insert(name.clone(), bytes);
        }
        Image { files }
    }
}

/// One piece of an operation not yet flushed: a [`PIECE`]-sized, offset-aligned part of a
/// write, or a size change. A power cut keeps or loses each piece whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Piece {
    /// The file's name.
    pub file: String,
    /// Its position among the file's pending pieces, in issue order (from 0).
    pub index: usize,
    /// What it does.
    pub op: PieceOp,
}

/// What a [`Piece`] does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PieceOp {
    /// Writes `len` bytes at `offset` (never across a [`PIECE`] boundary).
    Write {
        /// The file offset.
        offset: u64,
        /// The byte count.
        len: u64,
    },
    /// Sets the file's length.
    SetLen(u64),
}

/// `pending` cut into pieces, in issue order.
fn pieces_of(pending: &[Pending]) -> Vec<Pending> {
    let mut pieces = Vec::new();
    for op in pending {
        match op {
            Pending::SetLen(_) => pieces.push(op.clone()),
            Pending::Write { offset, data } => {
                let mut at = *offset;
                let end = offset + data.len() as u64;
                while at < end {
                    let upto = (((at / PIECE) + 1) * PIECE).min(end);
                    let from = (at - offset) as usize;
                    let to = (upto - offset) as usize;
                    pieces.push(Pending::Write {
                        offset: at,
                        data: data[from..to].to_vec(),
                    });
                    at = upto;
                }
            }
        }
    }
    pieces
}

impl Image {
    /// Writes every file into the directory `dir` (created when missing).
    ///
    /// # Errors
    ///
    /// The file system error, naming the file.
    ///
    /// ```rust,no_run
    /// let image = tabula_faultfs::Disk::new().durable_image(tabula_faultfs::Reorder::DropAll);
    /// image.write_to(std::path::Path::new("/tmp/after-the-cut"))?;
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn write_to(&self, dir: &Path) -> io::Result<()> {
        std::fs::create_dir_all(dir)?;
        for (name, bytes) in &self.files {
            let path = dir.join(name);
            std::fs::write(&path, bytes).map_err(|e| {
                io::Error::new(e.kind(), format!("writing {}: {e}", path.display()))
            })?;
        }
        Ok(())
    }
}

impl Mounted {
    /// The mount point.
    ///
    /// ```rust,no_run
    /// let dir = tempfile::tempdir()?;
    /// let mounted = tabula_faultfs::Disk::new().mount(dir.path())?;
    /// assert_eq!(mounted.path(), dir.path());
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Unmounts and waits for the serving thread to end. After a power cut, call
    /// [`Disk::release`] first (and end the processes that used the disk), or the unmount
    /// waits for requests that never finish.
    ///
    /// # Errors
    ///
    /// The `umount(2)` error.
    ///
    /// ```rust,no_run
    /// let dir = tempfile::tempdir()?;
    /// tabula_faultfs::Disk::new().mount(dir.path())?.unmount()?;
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn unmount(mut self) -> io::Result<()> {
        match self.session.take() {
            Some(session) => match session.umount_and_join() {
                // The serving thread's last read of `/dev/fuse` can race the unmount and find
                // the connection aborted (`ECONNABORTED`) instead of gone (`ENODEV`, which
                // fuser takes for a clean end): either way the file system is unmounted.
                Err(e) if e.kind() == io::ErrorKind::ConnectionAborted => Ok(()),
                other => other,
            },
            None => Ok(()),
        }
    }
}

impl Drop for Mounted {
    fn drop(&mut self) {
        if let Some(session) = self.session.take() {
            let _ = session.umount_and_join();
        }
    }
}

/// Records `label` in the disk mounted at `mountpoint` (see [`Disk::marks`]), by looking up
/// `.faultfs-mark-<label>` there. Returns once the disk has recorded it. Labels must be valid
/// file names.
///
/// ```rust,no_run
/// tabula_faultfs::mark(std::path::Path::new("/mnt/db"), "commit-7");
/// ```
pub fn mark(mountpoint: &Path, label: &str) {
    // The lookup fails with ENOENT by design; the disk has recorded the label by then.
    let _ = std::fs::symlink_metadata(mountpoint.join(format!("{MARK_PREFIX}{label}")));
}

/// Gives the calling thread a private mount namespace in which
/// `/proc/sys/kernel/random/boot_id` is replaced by `/proc/sys/kernel/random/uuid`, a procfs
/// file that yields a new random UUID on every read. Processes started from this thread
/// afterwards inherit the namespace, so each reads its own, new boot ID (libmdbx reads it once,
/// when it is loaded), different from this process's and from each other's: what a machine
/// sees across a power cut and a reboot. Mounts made from this thread afterwards (such as
/// [`Disk::mount`]) are private to the namespace and vanish with it. Needs `CAP_SYS_ADMIN`.
///
/// # Errors
///
/// The `unshare(2)` or `mount(2)` error, saying which step failed.
///
/// ```rust,no_run
/// tabula_faultfs::new_boot_namespace()?;
/// let a = std::process::Command::new("cat").arg("/proc/sys/kernel/random/boot_id").output()?;
/// let b = std::process::Command::new("cat").arg("/proc/sys/kernel/random/boot_id").output()?;
/// assert_ne!(a.stdout, b.stdout);
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn new_boot_namespace() -> io::Result<()> {
    use nix::mount::{MsFlags, mount};
    use nix::sched::{CloneFlags, unshare};
    let step = |what: &str, e: nix::Error| {
        io::Error::new(
            io::Error::from_raw_os_error(e as i32).kind(),
            format!("{what}: {e}"),
        )
    };
    unshare(CloneFlags::CLONE_NEWNS)
        .map_err(|e| step("unshare(CLONE_NEWNS) (needs CAP_SYS_ADMIN)", e))?;
    mount(
        None::<&str>,
        "/",
        None::<&str>,
        MsFlags::MS_REC | MsFlags::MS_PRIVATE,
        None::<&str>,
    )
    .map_err(|e| step("making / private in the new mount namespace", e))?;
    mount(
        Some("/proc/sys/kernel/random/uuid"),
        "/proc/sys/kernel/random/boot_id",
        None::<&str>,
        MsFlags::MS_BIND,
        None::<&str>,
    )
    .map_err(|e| step("bind-mounting /proc/sys/kernel/random/uuid over boot_id", e))?;
    Ok(())
}

/// A small deterministic generator (SplitMix64) for [`Reorder::Subset`].
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn coin(&mut self) -> bool {
        self.next() & 1 == 1
    }
}

fn write_into(bytes: &mut Vec<u8>, offset: u64, data: &[u8]) {
    let end = offset as usize + data.len();
    if bytes.len() < end {
        bytes.resize(end, 0);
    }
    bytes[offset as usize..end].copy_from_slice(data);
}

fn apply(bytes: &mut Vec<u8>, op: &Pending) {
    match op {
        Pending::Write { offset, data } => write_into(bytes, *offset, data),
        Pending::SetLen(len) => bytes.resize(*len as usize, 0),
    }
}

/// The kind of a request, for the power-cut plans.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Req {
    /// Changes nothing on the disk (lookup, read, open, ...).
    Other,
    Write,
    /// `ftruncate`, `fallocate`.
    Resize,
    Fsync,
}

/// A planned cut at the first mutating request, or the first fsync, after a mark
/// ([`Disk::cut_after`], [`Disk::cut_at_fsync_after`]).
#[derive(Debug, Clone)]
struct CutAfterMark {
    label: String,
    fsync_only: bool,
    /// The mark has been recorded.
    armed: bool,
}

/// What a request may do, decided under the lock.
enum Gate<'a> {
    Go(MutexGuard<'a, State>),
    Fail(Errno),
}

/// The FUSE file system serving a [`Disk`].
struct FaultFs {
    disk: Disk,
}

impl FaultFs {
    /// Every request passes here first. `mutating` requests count towards a planned cut; with
    /// the power cut, every request waits for `release` and then fails with `EIO`.
    fn gate(&self, req: Req) -> Gate<'_> {
        let mut st = self.disk.lock();
        if st.power == Power::On && req != Req::Other {
            st.stats.mutating += 1;
            let at_nth = st.cut_at.is_some_and(|n| st.stats.mutating >= n);
            let after_mark = st
                .cut_after_mark
                .as_ref()
                .is_some_and(|p| p.armed && (req == Req::Fsync || !p.fsync_only));
            if at_nth || after_mark {
                st.power = Power::Cut;
                self.disk.shared.changed.notify_all();
            }
        }
        if st.power == Power::Cut {
            st = self
                .disk
                .shared
                .changed
                .wait_while(st, |st| st.power == Power::Cut)
                .unwrap_or_else(|poisoned| poisoned.into_inner());
        }
        if st.power != Power::On {
            return Gate::Fail(Errno::EIO);
        }
        Gate::Go(st)
    }

    /// Whether the planned fault hits this request (the `count`-th of `op` on `name`).
    fn fault(st: &mut State, op: FaultOp, name: &str, count: u64, what: &str) -> Option<Errno> {
        let hit = st
            .fault
            .as_ref()
            .is_some_and(|f| f.op == op && f.file == name && f.nth == count);
        if !hit {
            return None;
        }
        let errno = st.fault.as_ref().map_or(libc::EIO, |f| f.errno);
        st.stats.faults += 1;
        let label = match errno {
            libc::EIO => "EIO".to_string(),
            libc::ENOSPC => "ENOSPC".to_string(),
            other => format!("errno {other}"),
        };
        st.fault_log
            .push(format!("{label} on {what} #{count} of {name}"));
        Some(Errno::from_i32(errno))
    }
}

fn attr_of(ino: u64, node: Option<&Node>) -> FileAttr {
    let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
    let (kind, perm, size, nlink) = match node {
        None => (FileType::Directory, 0o755, 0, 2),
        Some(n) => (FileType::RegularFile, n.mode, n.current.len() as u64, 1),
    };
    FileAttr {
        ino: INodeNo(ino),
        size,
        blocks: size.div_ceil(512),
        atime: now,
        mtime: now,
        ctime: now,
        crtime: now,
        kind,
        perm,
        nlink,
        uid: 0,
        gid: 0,
        rdev: 0,
        blksize: PIECE as u32,
        flags: 0,
    }
}

fn name_of(name: &OsStr) -> Option<String> {
    name.to_str().map(str::to_owned)
}

impl Filesystem for FaultFs {
    fn lookup(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        let mut st = match self.gate(Req::Other) {
            Gate::Go(st) => st,
            Gate::Fail(e) => return reply.error(e),
        };
        let Some(name) = name_of(name) else {
            return reply.error(Errno::ENOENT);
        };
        if parent.0 != ROOT {
            return reply.error(Errno::ENOENT);
        }
        if let Some(label) = name.strip_prefix(MARK_PREFIX) {
            let after_ops = st.stats.mutating;
            if let Some(plan) = st.cut_after_mark.as_mut().filter(|p| p.label == label) {
                plan.armed = true;
            }
            st.marks.push(Mark {
                label: label.to_owned(),
                after_ops,
            });
            return reply.error(Errno::ENOENT);
        }
        match st.names.get(&name) {
            Some(&ino) => reply.entry(&TTL, &attr_of(ino, st.nodes.get(&ino)), Generation(0)),
            None => reply.error(Errno::ENOENT),
        }
    }

    fn getattr(&self, _req: &Request, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        let st = match self.gate(Req::Other) {
            Gate::Go(st) => st,
            Gate::Fail(e) => return reply.error(e),
        };
        if ino.0 == ROOT {
            return reply.attr(&TTL, &attr_of(ROOT, None));
        }
        match st.nodes.get(&ino.0) {
            Some(node) => reply.attr(&TTL, &attr_of(ino.0, Some(node))),
            None => reply.error(Errno::ENOENT),
        }
    }

    fn setattr(
        &self,
        _req: &Request,
        ino: INodeNo,
        mode: Option<u32>,
        _uid: Option<u32>,
        _gid: Option<u32>,
        size: Option<u64>,
        _atime: Option<TimeOrNow>,
        _mtime: Option<TimeOrNow>,
        _ctime: Option<SystemTime>,
        _fh: Option<FileHandle>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<fuser::BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        let mut st = match self.gate(if size.is_some() {
            Req::Resize
        } else {
            Req::Other
        }) {
            Gate::Go(st) => st,
            Gate::Fail(e) => return reply.error(e),
        };
        if ino.0 == ROOT {
            return reply.attr(&TTL, &attr_of(ROOT, None));
        }
        if size.is_some() {
            st.stats.resizes += 1;
        }
        let Some(node) = st.nodes.get_mut(&ino.0) else {
            return reply.error(Errno::ENOENT);
        };
        if let Some(mode) = mode {
            node.mode = (mode & 0o7777) as u16;
        }
        if let Some(len) = size {
            let op = Pending::SetLen(len);
            apply(&mut node.current, &op);
            node.pending.push(op);
        }
        reply.attr(&TTL, &attr_of(ino.0, Some(node)));
    }

    fn open(&self, _req: &Request, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        let mut st = match self.gate(Req::Other) {
            Gate::Go(st) => st,
            Gate::Fail(e) => return reply.error(e),
        };
        if !st.nodes.contains_key(&ino.0) {
            return reply.error(Errno::ENOENT);
        }
        let fh = st.next_fh;
        st.next_fh += 1;
        // KEEP_CACHE: the disk's contents change only through this kernel's requests, so the
        // pages cached for other descriptors (and memory maps) stay valid.
        reply.opened(FileHandle(fh), FopenFlags::FOPEN_KEEP_CACHE);
    }

    fn create(
        &self,
        _req: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        umask: u32,
        _flags: i32,
        reply: ReplyCreate,
    ) {
        let mut st = match self.gate(Req::Other) {
            Gate::Go(st) => st,
            Gate::Fail(e) => return reply.error(e),
        };
        let Some(name) = name_of(name) else {
            return reply.error(Errno::EINVAL);
        };
        if parent.0 != ROOT || name.starts_with(MARK_PREFIX) {
            return reply.error(Errno::EPERM);
        }
        let ino = match st.names.get(&name) {
            Some(&ino) => ino,
            None => {
                let ino = st.next_ino;
                st.next_ino += 1;
                st.nodes.insert(
                    ino,
                    Node {
                        name: name.clone(),
                        mode: (mode & !umask & 0o7777) as u16,
                        current: Vec::new(),
                        durable: Vec::new(),
                        pending: Vec::new(),
                        writes: 0,
                        fsyncs: 0,
                    },
                );
                st.names.insert(name, ino);
                ino
            }
        };
        let fh = st.next_fh;
        st.next_fh += 1;
        reply.created(
            &TTL,
            &attr_of(ino, st.nodes.get(&ino)),
            Generation(0),
            FileHandle(fh),
            FopenFlags::FOPEN_KEEP_CACHE,
        );
    }

    fn read(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyData,
    ) {
        let st = match self.gate(Req::Other) {
            Gate::Go(st) => st,
            Gate::Fail(e) => return reply.error(e),
        };
        let Some(node) = st.nodes.get(&ino.0) else {
            return reply.error(Errno::ENOENT);
        };
        let len = node.current.len() as u64;
        let from = offset.min(len) as usize;
        let to = (offset + u64::from(size)).min(len) as usize;
        reply.data(&node.current[from..to]);
    }

    fn write(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        data: &[u8],
        _write_flags: WriteFlags,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        let mut st = match self.gate(Req::Write) {
            Gate::Go(st) => st,
            Gate::Fail(e) => return reply.error(e),
        };
        let Some(node) = st.nodes.get(&ino.0) else {
            return reply.error(Errno::ENOENT);
        };
        let name = node.name.clone();
        let count = node.writes + 1;
        if let Some(e) = Self::fault(&mut st, FaultOp::Write, &name, count, "write") {
            if let Some(node) = st.nodes.get_mut(&ino.0) {
                node.writes = count;
            }
            return reply.error(e);
        }
        st.stats.writes += 1;
        st.stats.bytes_written += data.len() as u64;
        let Some(node) = st.nodes.get_mut(&ino.0) else {
            return reply.error(Errno::ENOENT);
        };
        node.writes = count;
        let op = Pending::Write {
            offset,
            data: data.to_vec(),
        };
        apply(&mut node.current, &op);
        node.pending.push(op);
        reply.written(data.len() as u32);
    }

    fn flush(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _lock_owner: LockOwner,
        reply: ReplyEmpty,
    ) {
        // close(2) is not a flush to the disk.
        match self.gate(Req::Other) {
            Gate::Go(_) => reply.ok(),
            Gate::Fail(e) => reply.error(e),
        }
    }

    fn release(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        _flush: bool,
        reply: ReplyEmpty,
    ) {
        match self.gate(Req::Other) {
            Gate::Go(_) => reply.ok(),
            Gate::Fail(e) => reply.error(e),
        }
    }

    fn fsync(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        _datasync: bool,
        reply: ReplyEmpty,
    ) {
        let mut st = match self.gate(Req::Fsync) {
            Gate::Go(st) => st,
            Gate::Fail(e) => return reply.error(e),
        };
        let Some(node) = st.nodes.get(&ino.0) else {
            return reply.error(Errno::ENOENT);
        };
        let name = node.name.clone();
        let count = node.fsyncs + 1;
        if let Some(e) = Self::fault(&mut st, FaultOp::Fsync, &name, count, "fsync") {
            if let Some(node) = st.nodes.get_mut(&ino.0) {
                node.fsyncs = count;
            }
            return reply.error(e);
        }
        st.stats.fsyncs += 1;
        let Some(node) = st.nodes.get_mut(&ino.0) else {
            return reply.error(Errno::ENOENT);
        };
        node.fsyncs = count;
        let pending = std::mem::take(&mut node.pending);
        for op in &pending {
            apply(&mut node.durable, op);
        }
        reply.ok();
    }

    fn fallocate(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        length: u64,
        mode: i32,
        reply: ReplyEmpty,
    ) {
        if mode & !libc::FALLOC_FL_KEEP_SIZE != 0 {
            return reply.error(Errno::from_i32(libc::EOPNOTSUPP));
        }
        let mut st = match self.gate(Req::Resize) {
            Gate::Go(st) => st,
            Gate::Fail(e) => return reply.error(e),
        };
        st.stats.resizes += 1;
        let Some(node) = st.nodes.get_mut(&ino.0) else {
            return reply.error(Errno::ENOENT);
        };
        let end = offset + length;
        if mode & libc::FALLOC_FL_KEEP_SIZE == 0 && end > node.current.len() as u64 {
            let op = Pending::SetLen(end);
            apply(&mut node.current, &op);
            node.pending.push(op);
        }
        reply.ok();
    }

    fn unlink(&self, _req: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        let mut st = match self.gate(Req::Other) {
            Gate::Go(st) => st,
            Gate::Fail(e) => return reply.error(e),
        };
        let name = name_of(name).unwrap_or_default();
        if parent.0 != ROOT {
            return reply.error(Errno::ENOENT);
        }
        match st.names.remove(&name) {
            Some(ino) => {
                st.nodes.remove(&ino);
                reply.ok();
            }
            None => reply.error(Errno::ENOENT),
        }
    }

    fn rename(
        &self,
        _req: &Request,
        parent: INodeNo,
        name: &OsStr,
        newparent: INodeNo,
        newname: &OsStr,
        _flags: fuser::RenameFlags,
        reply: ReplyEmpty,
    ) {
        let mut st = match self.gate(Req::Other) {
            Gate::Go(st) => st,
            Gate::Fail(e) => return reply.error(e),
        };
        let (Some(from), Some(to)) = (name_of(name), name_of(newname)) else {
            return reply.error(Errno::EINVAL);
        };
        if parent.0 != ROOT || newparent.0 != ROOT {
            return reply.error(Errno::ENOENT);
        }
        let Some(ino) = st.names.remove(&from) else {
            return reply.error(Errno::ENOENT);
        };
        if let Some(old) = st.names.insert(to.clone(), ino) {
            st.nodes.remove(&old);
        }
        if let Some(node) = st.nodes.get_mut(&ino) {
            node.name = to;
        }
        reply.ok();
    }

    fn readdir(
        &self,
        _req: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectory,
    ) {
        let st = match self.gate(Req::Other) {
            Gate::Go(st) => st,
            Gate::Fail(e) => return reply.error(e),
        };
        if ino.0 != ROOT {
            return reply.error(Errno::ENOTDIR);
        }
        let mut entries = vec![
            (ROOT, FileType::Directory, ".".to_string()),
            (ROOT, FileType::Directory, "..".to_string()),
        ];
        entries.extend(
            st.names
                .iter()
                .map(|(name, &ino)| (ino, FileType::RegularFile, name.clone())),
        );
        for (i, (ino, kind, name)) in entries.into_iter().enumerate().skip(offset as usize) {
            if reply.add(INodeNo(ino), (i + 1) as u64, kind, name) {
                break;
            }
        }
        reply.ok();
    }

    fn fsyncdir(
        &self,
        _req: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _datasync: bool,
        reply: ReplyEmpty,
    ) {
        // The namespace is durable at once.
        match self.gate(Req::Other) {
            Gate::Go(_) => reply.ok(),
            Gate::Fail(e) => reply.error(e),
        }
    }

    fn statfs(&self, _req: &Request, _ino: INodeNo, reply: ReplyStatfs) {
        // 4 GiB, mostly free.
        reply.statfs(1 << 20, 1 << 20, 1 << 20, 1 << 20, 1 << 20, 4096, 255, 4096);
    }

    fn access(&self, _req: &Request, _ino: INodeNo, _mask: fuser::AccessFlags, reply: ReplyEmpty) {
        reply.ok();
    }
}
