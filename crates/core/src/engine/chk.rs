//! libmdbx's integrity check with its report: the lines `mdbx_env_chk` prints (what the
//! `mdbx_chk` tool shows) and what it found in each table, collected through its callbacks.
//!
//! libmdbx formats its report with `printf` formats and hands each piece to a callback with a
//! `va_list`. Stable Rust cannot read a `va_list`, so the pieces are formatted by the C library's
//! `vsnprintf`, to which the `va_list` is passed on as received. That needs the Rust type of a
//! `va_list` parameter, which bindgen spells per platform: the lines are collected on x86-64
//! (where it is `*mut __va_list_tag`), and elsewhere the report has no lines (the per-table
//! findings and the counts do not depend on it). libmdbx's own formatting without that callback
//! cannot be used instead: it drops the last character of every formatted piece (0.14.4's
//! `chk_print_va` passes the piece's length, not length + 1, as `vsnprintf`'s buffer size).

use std::ffi::{c_char, c_int};

use mdbx_sys as sys;

use super::*;

/// One line of libmdbx's check report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ChkLine {
    /// Nesting of the report section the line belongs to (0 = top).
    pub depth: u8,
    /// Whether libmdbx reported it as a problem (an error or fatal line).
    pub problem: bool,
    /// The text, without a line end.
    pub text: String,
}

/// Which tree of the file a [`ChkTable`] is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ChkTree {
    /// libmdbx's main tree (the directory of named tables).
    Main,
    /// libmdbx's free-page tree (GC).
    Gc,
    /// The meta pages.
    Meta,
    /// A named table.
    Named(Vec<u8>),
}

/// What the check found in one tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ChkTable {
    pub tree: ChkTree,
    /// Pages the B-tree walk reached.
    pub pages: u64,
    /// Of those, pages that are damaged (bad header, wrong type, unreadable).
    pub broken_pages: u64,
    /// Problems found while reading its entries (0 when that stage did not run: libmdbx skips it
    /// when the B-tree walk found damage).
    pub entry_problems: u64,
    /// The error that ended the reading of its entries, if one did.
    pub error: Option<Code>,
}

/// The check's counts, its report and what it found in each tree.
#[derive(Debug, Clone)]
pub(crate) struct ChkReport {
    pub result: ChkResult,
    pub lines: Vec<ChkLine>,
    pub tables: Vec<ChkTable>,
}

/// How much of libmdbx's report is collected: problems, and each section's summary (walked
/// pages, records per table, totals), as `mdbx_chk` prints without `-v`.
const REPORT_VERBOSITY: sys::MDBX_chk_severity_t = sys::MDBX_chk_resolution;

/// The size of the buffer a report line is written into before it is flushed to the text.
const LINE_BUF: usize = 1024;

/// What the callbacks collect. `ctx` comes first: libmdbx hands the callbacks a pointer to it, and
/// with `repr(C)` that is a pointer to the whole.
#[repr(C)]
struct Collect {
    ctx: sys::MDBX_chk_context_t,
    line: sys::MDBX_chk_line_t,
    buf: [u8; LINE_BUF],
    /// The text of the line being printed.
    text: Vec<u8>,
    /// Whether `line` is handed out to libmdbx (between `print_begin` and `print_done`).
    open: bool,
    /// Section headings (depth, text, printed yet), innermost last.
    headings: Vec<(u8, String, bool)>,
    lines: Vec<ChkLine>,
    tables: Vec<ChkTable>,
    /// Per tree, from the entry-reading stages: (tree, problems, error).
    entries: Vec<(ChkTree, u64, c_int)>,
}

impl Env {
    /// Runs `mdbx_env_chk` as [`Env::check`] does, collecting libmdbx's report and what it
    /// found in each table. The report is at verbosity [`REPORT_VERBOSITY`].
    ///
    /// `Err` only when the check itself could not run.
    pub fn check_report(&self) -> Result<ChkReport, Code> {
        self.chk_collect(sys::MDBX_CHK_DEFAULTS)
    }

    /// libmdbx's B-tree walk alone (`MDBX_CHK_SKIP_KV_TRAVERSAL`), with the report of
    /// [`check_report`](Self::check_report): every page of the GC tree, the main tree and each
    /// table of the latest snapshot, each checked as `MDBX_VALIDATION` checks a page but for
    /// key order (the walk's cursors always check pages, `walk_tbl` in mdbx.c; `chk_tree` skips
    /// the order so that custom comparators are no problem), the entries not read one by one.
    /// The walk stops at the first damaged page: with problems, the trees after it are
    /// unchecked.
    ///
    /// `Err` only when the walk itself could not run.
    pub fn walk_report(&self) -> Result<ChkReport, Code> {
        self.chk_collect(sys::MDBX_CHK_SKIP_KV_TRAVERSAL)
    }

    /// `mdbx_env_chk` with `flags`, collecting its report.
    fn chk_collect(&self, flags: sys::MDBX_chk_flags_t) -> Result<ChkReport, Code> {
        let verbosity = REPORT_VERBOSITY;
        // SAFETY: MDBX_chk_callbacks_t is a struct of nullable function pointers; all-zero bytes
        // are all `None`, which mdbx.h allows ("All callback functions are optional, unused ones
        // must be set to nullptr").
        let mut callbacks: sys::MDBX_chk_callbacks_t = unsafe { std::mem::zeroed() };
        callbacks.stage_begin = Some(chk_stage_begin);
        callbacks.scope_conclude = Some(chk_scope_conclude);
        callbacks.scope_pop = Some(chk_scope_pop);
        #[cfg(target_arch = "x86_64")]
        {
            callbacks.scope_push = Some(chk_scope_push);
            callbacks.print_begin = Some(chk_print_begin);
            callbacks.print_flush = Some(chk_print_flush);
            callbacks.print_done = Some(chk_print_done);
            callbacks.print_format = Some(chk_print_format);
        }
        let collect = Box::new(Collect {
            // SAFETY: MDBX_chk_context_t and MDBX_chk_line_t are plain C structs for which
            // all-zero bytes are valid; mdbx_env_chk requires `ctx.internal` to be null on entry.
            ctx: unsafe { std::mem::zeroed() },
            // SAFETY: as above.
            line: unsafe { std::mem::zeroed() },
            buf: [0; LINE_BUF],
            text: Vec::new(),
            open: false,
            headings: Vec::new(),
            lines: Vec::new(),
            tables: Vec::new(),
            entries: Vec::new(),
        });
        // `ctx` is the first field of `repr(C)` `Collect`: a pointer to the whole is a pointer
        // to it, and the callbacks turn it back into the whole (`collect_of`).
        let whole = Box::into_raw(collect);
        // SAFETY: the env is open for the life of `self`; `callbacks` and the boxed `Collect`
        // (not moved, and reached only through `whole` until it is boxed again below) outlive
        // the call, which is synchronous, begins and aborts its own read txn, and frees its
        // internal state before returning. Afterwards only the plain counters in `ctx.result`
        // are read, never its `tables` pointer (freed with that state).
        let rc = unsafe {
            sys::mdbx_env_chk(
                self.raw_env(),
                &callbacks,
                whole.cast::<sys::MDBX_chk_context_t>(),
                flags,
                verbosity,
                0,
            )
        };
        // SAFETY: `whole` came from `Box::into_raw` above and libmdbx no longer uses it.
        let mut collect = unsafe { Box::from_raw(whole) };
        // Before anything moves out of the box: the line points into its buffer.
        collect.finish_line();
        let collect = *collect;
        let result = &collect.ctx.result;
        let found = ChkResult {
            problems: result.total_problems as u64,
            tables: result.table_total as u64,
            pages: result.processed_pages as u64,
            txn_id: result.recent_txnid,
        };
        let found = match rc {
            sys::MDBX_SUCCESS => found,
            // As in `Env::check`: counted problems, or a walk that hit a damaged structure.
            sys::MDBX_PROBLEM
            | sys::MDBX_CORRUPTED
            | sys::MDBX_PAGE_NOTFOUND
            | sys::MDBX_WANNA_RECOVERY
            | sys::MDBX_PANIC => ChkResult {
                problems: found.problems.max(1),
                ..found
            },
            rc => return Err(Code(rc)),
        };
        let mut tables = collect.tables;
        for (tree, problems, err) in collect.entries {
            let error = (err != sys::MDBX_SUCCESS
                && err != sys::MDBX_RESULT_TRUE
                && err != sys::MDBX_PROBLEM)
                .then_some(Code(err));
            match tables.iter_mut().find(|t| t.tree == tree) {
                Some(t) => {
                    t.entry_problems += problems;
                    t.error = t.error.or(error);
                }
                None => tables.push(ChkTable {
                    tree,
                    pages: 0,
                    broken_pages: 0,
                    entry_problems: problems,
                    error,
                }),
            }
        }
        Ok(ChkReport {
            result: found,
            lines: collect.lines,
            tables,
        })
    }
}

impl Collect {
    /// Ends the line being printed, if any: its text becomes a report line.
    fn finish_line(&mut self) {
        if !self.open {
            return;
        }
        self.take_buffered();
        self.open = false;
        let text = String::from_utf8_lossy(&self.text).trim_end().to_owned();
        self.text.clear();
        if text.is_empty() {
            return;
        }
        let severity = u32::from(self.line.severity);
        self.lines.push(ChkLine {
            depth: self.line.scope_depth,
            problem: severity < sys::MDBX_chk_warning,
            text,
        });
    }

    /// Moves what libmdbx wrote into the line's buffer to the line's text.
    fn take_buffered(&mut self) {
        let begin = self.buf.as_ptr() as usize;
        let written = (self.line.out as usize).saturating_sub(begin).min(LINE_BUF);
        let end = self.buf[..written]
            .iter()
            .position(|&b| b == 0)
            .unwrap_or(written);
        self.text.extend_from_slice(&self.buf[..end]);
    }
}

/// The [`Collect`] whose `ctx` libmdbx passed to a callback.
///
/// # Safety
///
/// `ctx` is the context `Env::check_report` passed to `mdbx_env_chk`, which is the first field of
/// a live, boxed `Collect`; no other reference to that `Collect` is in use during the callback.
unsafe fn collect_of<'a>(ctx: *mut sys::MDBX_chk_context_t) -> &'a mut Collect {
    // SAFETY: per this function's contract; `Collect` is `repr(C)` with `ctx` first, so a
    // pointer to `ctx` is a pointer to the `Collect`.
    unsafe { &mut *ctx.cast::<Collect>() }
}

/// The tree a check table describes: its name, or one of libmdbx's pseudo-names for the main
/// and GC trees (`MDBX_CHK_MAIN` is a null name pointer, `MDBX_CHK_GC` is -1, `MDBX_CHK_META`
/// is -2).
///
/// # Safety
///
/// `table` points to a table record of a running check whose name, if a real one, points into
/// the check's live read transaction.
unsafe fn tree_of(table: *const sys::MDBX_chk_table_t) -> ChkTree {
    // SAFETY: per this function's contract.
    let name = unsafe { (*table).name };
    match name.iov_base as isize {
        0 => ChkTree::Main,
        -1 => ChkTree::Gc,
        -2 => ChkTree::Meta,
        _ => ChkTree::Named(
            // SAFETY: a real name is `iov_len` bytes at `iov_base` (a key of the main tree, in
            // a page of the live read transaction).
            unsafe { std::slice::from_raw_parts(name.iov_base.cast::<u8>(), name.iov_len) }
                .to_vec(),
        ),
    }
}

/// `stage_begin`: records the checked transaction's ID (libmdbx 0.14.4 leaves
/// `result.recent_txnid` unset), and, when the check moves on to releasing its transaction
/// (every tree has been walked), what the walk found in each tree.
///
/// # Safety
///
/// libmdbx calls it with the live context of a running `Env::check_report`.
unsafe extern "C" fn chk_stage_begin(
    ctx: *mut sys::MDBX_chk_context_t,
    stage: sys::MDBX_chk_stage_t,
) -> c_int {
    // SAFETY: per this function's contract (see `collect_of`).
    let collect = unsafe { collect_of(ctx) };
    let txn = collect.ctx.txn;
    if txn.is_null() {
        return sys::MDBX_SUCCESS;
    }
    if collect.ctx.result.recent_txnid == 0 {
        // SAFETY: while the check runs its `txn` is null or its own live read transaction.
        collect.ctx.result.recent_txnid = unsafe { sys::mdbx_txn_id(txn) };
    }
    let tables = collect.ctx.result.tables;
    if stage == sys::MDBX_chk_unlock && !tables.is_null() {
        // `result.tables` is libmdbx's array of MDBX_MAX_DBI + 2 table pointers, zeroed when the
        // check began and filled from the front as the walk meets each tree (mdbx.c walks it up
        // to the first null the same way).
        for i in 0..(sys::MDBX_MAX_DBI as usize + 2) {
            // SAFETY: `i` is within the array, which lives until the check frees its state.
            let table = unsafe { *tables.add(i) };
            if table.is_null() {
                break;
            }
            // SAFETY: a non-null entry is a table record of this check; its transaction is
            // still live (it is aborted after this stage begins).
            let (tree, pages) = unsafe { (tree_of(table), (*table).pages) };
            collect.tables.push(ChkTable {
                tree,
                pages: pages.all as u64,
                broken_pages: pages.broken as u64,
                entry_problems: 0,
                error: None,
            });
        }
    }
    sys::MDBX_SUCCESS
}

/// `scope_conclude`: the problems found in a tree's entries (a scope whose object is a table).
///
/// # Safety
///
/// libmdbx calls it with the live context of a running `Env::check_report` and its scopes.
unsafe extern "C" fn chk_scope_conclude(
    ctx: *mut sys::MDBX_chk_context_t,
    _outer: *mut sys::MDBX_chk_scope_t,
    inner: *mut sys::MDBX_chk_scope_t,
    err: c_int,
) -> c_int {
    // SAFETY: per this function's contract (see `collect_of`).
    let collect = unsafe { collect_of(ctx) };
    // SAFETY: `inner` is the scope being ended, valid for the call.
    let scope = unsafe { &*inner };
    let entries = [sys::MDBX_chk_maindb, sys::MDBX_chk_tables, sys::MDBX_chk_gc];
    if !scope.object.is_null() && entries.contains(&scope.stage) {
        // SAFETY: in these stages a scope's object is the table record being read, whose name
        // points into the check's live read transaction.
        let tree = unsafe { tree_of(scope.object.cast()) };
        collect
            .entries
            .push((tree, scope.subtotal_issues as u64, err));
    }
    err
}

/// `scope_pop`: the section's heading is done with.
///
/// # Safety
///
/// libmdbx calls it with the live context of a running `Env::check_report`.
unsafe extern "C" fn chk_scope_pop(
    ctx: *mut sys::MDBX_chk_context_t,
    _outer: *mut sys::MDBX_chk_scope_t,
    _inner: *mut sys::MDBX_chk_scope_t,
) {
    // SAFETY: per this function's contract (see `collect_of`).
    let collect = unsafe { collect_of(ctx) };
    let depth = collect.ctx.scope_nesting;
    while collect.headings.last().is_some_and(|h| h.0 > depth) {
        collect.headings.pop();
    }
}

// The C library's `vsnprintf`, taking the `va_list` parameter in the form bindgen gives
// libmdbx's callbacks on x86-64 (a pointer to the caller's `__va_list_tag`).
#[cfg(target_arch = "x86_64")]
unsafe extern "C" {
    fn vsnprintf(
        buf: *mut c_char,
        size: usize,
        format: *const c_char,
        args: *mut sys::__va_list_tag,
    ) -> c_int;
}

/// Formats `fmt` with `args`.
///
/// # Safety
///
/// `fmt` and `args` are a format and its arguments libmdbx passed to a callback, used once.
#[cfg(target_arch = "x86_64")]
unsafe fn format(fmt: *const c_char, args: *mut sys::__va_list_tag) -> String {
    let mut buf = vec![0u8; 512];
    // SAFETY: `buf` is writable for its length; `fmt`/`args` per this function's contract.
    // `vsnprintf` consumes `args`, so it is called once: a longer text is cut at the buffer.
    let n = unsafe { vsnprintf(buf.as_mut_ptr().cast(), buf.len(), fmt, args) };
    let len = usize::try_from(n).unwrap_or(0).min(buf.len() - 1);
    String::from_utf8_lossy(&buf[..len]).into_owned()
}

/// `scope_push`: a report section begins; its heading is printed before its first line.
///
/// # Safety
///
/// libmdbx calls it with the live context of a running `Env::check_report`, a format (or null)
/// and its arguments.
#[cfg(target_arch = "x86_64")]
unsafe extern "C" fn chk_scope_push(
    ctx: *mut sys::MDBX_chk_context_t,
    _outer: *mut sys::MDBX_chk_scope_t,
    _inner: *mut sys::MDBX_chk_scope_t,
    fmt: *const c_char,
    args: *mut sys::__va_list_tag,
) -> c_int {
    // SAFETY: per this function's contract (see `collect_of`).
    let collect = unsafe { collect_of(ctx) };
    if fmt.is_null() {
        return sys::MDBX_SUCCESS;
    }
    // SAFETY: `fmt` and `args` as libmdbx passed them, used once.
    let heading = unsafe { format(fmt, args) };
    // The scope is entered after this call: its lines are one deeper than the current nesting.
    let depth = collect.ctx.scope_nesting + 1;
    while collect.headings.last().is_some_and(|h| h.0 >= depth) {
        collect.headings.pop();
    }
    if !heading.is_empty() {
        collect.headings.push((depth, heading, false));
    }
    sys::MDBX_SUCCESS
}

/// `print_begin`: hands libmdbx the line buffer for a line of `severity`, or null when the
/// current section's verbosity leaves it out.
///
/// # Safety
///
/// libmdbx calls it with the live context of a running `Env::check_report`.
#[cfg(target_arch = "x86_64")]
unsafe extern "C" fn chk_print_begin(
    ctx: *mut sys::MDBX_chk_context_t,
    severity: sys::MDBX_chk_severity_t,
) -> *mut sys::MDBX_chk_line_t {
    // SAFETY: per this function's contract (see `collect_of`).
    let collect = unsafe { collect_of(ctx) };
    collect.finish_line();
    let scope = collect.ctx.scope;
    let mut verbosity = sys::MDBX_chk_error;
    if !scope.is_null() {
        // SAFETY: while the check runs, a non-null `scope` is its current scope.
        verbosity = unsafe { (*scope).verbosity };
    }
    if severity > verbosity {
        return std::ptr::null_mut();
    }
    let depth = collect.ctx.scope_nesting;
    // The headings of the sections this line is in, once each.
    for (d, text, printed) in &mut collect.headings {
        if !*printed && *d <= depth {
            *printed = true;
            collect.lines.push(ChkLine {
                depth: d.saturating_sub(1),
                problem: false,
                text: text.clone(),
            });
        }
    }
    let begin: *mut c_char = collect.buf.as_mut_ptr().cast();
    collect.line = sys::MDBX_chk_line_t {
        ctx: std::ptr::null_mut(),
        severity: severity as u8,
        scope_depth: depth,
        empty: 1,
        begin,
        // SAFETY: one past the end of `buf`.
        end: unsafe { begin.add(LINE_BUF) },
        out: begin,
    };
    collect.open = true;
    &mut collect.line
}

/// `print_flush`: moves the buffered text out, for libmdbx to reuse the buffer.
///
/// # Safety
///
/// `line` is the line `chk_print_begin` handed out; libmdbx has set its `ctx`.
#[cfg(target_arch = "x86_64")]
unsafe extern "C" fn chk_print_flush(line: *mut sys::MDBX_chk_line_t) {
    // SAFETY: per this function's contract: `ctx` is the check's context (see `collect_of`).
    let collect = unsafe { collect_of((*line).ctx) };
    collect.take_buffered();
    // libmdbx rewinds `out` after this call; so does this, for the bookkeeping above.
    collect.line.out = collect.line.begin;
}

/// `print_done`: the line is complete.
///
/// # Safety
///
/// As for [`chk_print_flush`].
#[cfg(target_arch = "x86_64")]
unsafe extern "C" fn chk_print_done(line: *mut sys::MDBX_chk_line_t) {
    // SAFETY: as for `chk_print_flush`.
    let collect = unsafe { collect_of((*line).ctx) };
    collect.finish_line();
}

/// `print_format`: appends a formatted piece to the line.
///
/// # Safety
///
/// As for [`chk_print_flush`]; `fmt` and `args` as libmdbx passed them.
#[cfg(target_arch = "x86_64")]
unsafe extern "C" fn chk_print_format(
    line: *mut sys::MDBX_chk_line_t,
    fmt: *const c_char,
    args: *mut sys::__va_list_tag,
) {
    // SAFETY: as for `chk_print_flush`.
    let collect = unsafe { collect_of((*line).ctx) };
    // What libmdbx wrote into the buffer (through `chk_puts`) comes first.
    collect.take_buffered();
    collect.line.out = collect.line.begin;
    // SAFETY: `fmt` and `args` as libmdbx passed them, used once.
    let piece = unsafe { format(fmt, args) };
    collect.text.extend_from_slice(piece.as_bytes());
}
