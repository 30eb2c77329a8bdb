//! Random bytes in the pages of a libmdbx 0.14.4 data file, aimed at what a reader trusts: page
//! headers, node headers (data size, flags, key size) and the node area (keys and values). Shared
//! by the damaged-file tests of the library (`tests/bad_input.rs`) and of the CLI
//! (`crates/cli/tests/check_damaged.rs`), which include `random.rs` beside it as `random`.

use std::path::Path;

use crate::random::Rng;

/// libmdbx's page header (0.14.4 `page_t`): txnid u64, dupfix_ksize u16, flags u16, lower u16,
/// upper u16, pgno u32; then the node offsets (`entries[]`, u16 each, from the header's end).
const PAGEHDRSZ: usize = 20;

/// Writes random bytes into `pages` distinct pages (never a meta page), each aimed at one
/// of: the page header; a node's header (its data size, flags and key size: 16 bytes, or the
/// data size alone); the node area (keys and values). Returns what was done, for messages.
pub fn random_bytes_in_pages(file: &Path, page: usize, rng: &mut Rng, pages: u64) -> Vec<String> {
    let mut data = std::fs::read(file).unwrap();
    // The pages written: their header holds their own number (the file's tail is zeroes).
    let written: Vec<u64> = (3..(data.len() / page) as u64)
        .filter(|&p| {
            let at = p as usize * page + 16;
            u64::from(u32::from_le_bytes(data[at..at + 4].try_into().unwrap())) == p
        })
        .collect();
    let mut chosen = Vec::new();
    while (chosen.len() as u64) < pages {
        let p = written[rng.below(written.len() as u64) as usize];
        if !chosen.contains(&p) {
            chosen.push(p);
        }
    }
    let mut done = Vec::new();
    for p in chosen {
        let at = p as usize * page;
        let u16_at =
            |d: &[u8], o: usize| usize::from(u16::from_le_bytes([d[at + o], d[at + o + 1]]));
        let (lower, upper) = (u16_at(&data, 12), u16_at(&data, 14));
        let nodes = lower / 2;
        let sane = nodes > 0 && PAGEHDRSZ + upper < page && lower <= upper;
        let (what, offset, len) = match (rng.below(3), sane) {
            (1, true) => {
                let node =
                    PAGEHDRSZ + u16_at(&data, PAGEHDRSZ + 2 * rng.below(nodes as u64) as usize);
                if rng.below(2) == 0 {
                    ("node header", node, 16)
                } else {
                    ("node data size", node, 4)
                }
            }
            (2, true) => {
                let from = PAGEHDRSZ + upper;
                (
                    "node area",
                    from + rng.below((page - 16 - from) as u64) as usize,
                    16,
                )
            }
            _ => ("header", rng.below(5) as usize, 16),
        };
        let offset = offset.min(page - len);
        data[at + offset..at + offset + len].copy_from_slice(&rng.bytes(len));
        done.push(format!("page {p} {what} +{offset}"));
    }
    std::fs::write(file, data).unwrap();
    done
}

/// The libmdbx 0.14.4 assertions that damage reaches on libmdbx's checked paths, which abort
/// the process in builds with debug assertions (mdbx-sys compiles libmdbx with
/// `MDBX_FORCE_ASSERTIONS` there); release builds compile them out and return the error:
/// - its page check (`page_check`, what `MDBX_VALIDATION` runs) takes each node through
///   `page_node`, whose assertion wants an even node offset, before it checks that the node
///   lies in the page;
/// - its checker's walk calls `page_numkeys` on a page it has just reported broken;
/// - `cursor_ops` checks the cursor's state after a seek that returned `MDBX_CORRUPTED`;
/// - `tree_search` wants a tree's root page below the allocated ones before `page_get`, which
///   refuses it (`MDBX_PAGE_NOTFOUND`) in release builds, reads it;
/// - `dbi_bind` wants a table's flags in the catalog to be the handle's, when a damaged main
///   tree changed them;
/// - `page_get_inline` wants the txnid it is given as the page's "front" (what the page's own
///   txnid may not exceed) to be at most the transaction's. The checker's walk (`walk_pgno`)
///   and the compacting copy (`compacting_walk`) pass the txnid of what refers to the page (a
///   table's catalog record for its root, the parent page for the others) without checking
///   it against the transaction, so damage there trips it (seen with
///   `tabula check` and `tabula copy --compact`, seed 15796626076643484888 of
///   `random_bytes_in_pages_never_kill_a_read_command`); release builds compare the root's
///   txnid with that value instead (`check_page_header`), and the same seed passes there.
///
/// Any other assertion (one inside a page search, say, which a read without `MDBX_VALIDATION`
/// trips over a node pointing outside its page) is not on this list.
pub const DAMAGE_ASSERTIONS: [&str; 6] = [
    "page_node: Assertion `mp->entries[i] % 2 == 0' failed",
    "page_numkeys: Assertion `mp->lower <= mp->upper' failed",
    "cursor_ops: Assertion `is_poor(mc) && !is_filled(mc)' failed",
    "tree_search: Assertion `root >= 3 && root < mc->txn->geo.first_unallocated' failed",
    // A table's catalog entry whose flags no longer match the handle's (the main tree damaged).
    "dbi_bind: Assertion `!(txn->dbi_state[dbi] & DBI_VALID) || (txn->dbs[dbi].flags | DB_VALID) == env->dbs_flags[dbi]' failed",
    // A damaged txnid given as a page's front (the checker's walk, the compacting copy).
    "page_get_inline: Assertion `front <= txn->front_txnid' failed",
];

/// The line of `stderr` with one of [`DAMAGE_ASSERTIONS`], when the process was killed by
/// `SIGABRT` in a build with debug assertions.
pub fn assertion_after_damage(status: std::process::ExitStatus, stderr: &str) -> Option<&str> {
    use std::os::unix::process::ExitStatusExt;
    const SIGABRT: i32 = 6;
    if !cfg!(debug_assertions) || status.signal() != Some(SIGABRT) {
        return None;
    }
    stderr
        .lines()
        .find(|l| DAMAGE_ASSERTIONS.iter().any(|a| l.contains(a)))
}
