//! The targets: which row of which workload must stand in what ratio to which others.
//! Kept apart from `report` (which evaluates any target) because the targets name the
//! workloads' own sizes and rows.

use crate::report::{Op, Spec, Target, Workload, evaluate};

/// The targets from the issue, checked against the figures present.
pub fn targets(workloads: &[Workload]) -> Vec<Target> {
    specs().iter().map(|s| evaluate(s, workloads)).collect()
}

/// Every target of the issue.
pub fn specs() -> Vec<Spec> {
    use Op::{AtLeast, AtMost};
    let mut s = vec![
        // Typed gets are the headline: Tabula's `get` against heed's and redb's typed gets.
        Spec::new("get_hot", "tabula_typed", AtMost, 1.0, "heed_typed"),
        // Issue 37: clearly ahead of redb's typed get, within 5 % of raw libmdbx + bincode 2.
        Spec::new("get_hot", "tabula_typed", AtMost, 0.85, "redb_typed"),
        Spec::new("get_hot", "tabula_typed", AtMost, 1.05, "raw_typed"),
        Spec::new("get_hot", "tabula_bytes", AtMost, 1.10, "raw"),
        Spec::new("get_hot", "raw_reopen_dbi", AtLeast, 5.0, "tabula_bytes"),
        Spec::new("get_cold", "tabula_typed", AtMost, 1.0, "heed_typed"),
        Spec::new("get_cold", "tabula_typed", AtMost, 0.85, "redb_typed"),
        Spec::new("get_cold", "tabula_typed", AtMost, 1.05, "raw_typed"),
        Spec::new("get_cold", "tabula_bytes", AtMost, 1.05, "raw"),
        Spec::new("get_cold", "tabula_bytes", AtMost, 1.0, "heed_bytes"),
        Spec::min_of(
            "append",
            "tabula",
            AtMost,
            1.10,
            &["raw_put", "raw_cursor_put"],
        ),
        // Without a flush, every option at its default: `SafeNoSync` against LMDB's `NOSYNC`.
        Spec::new("append", "tabula_nosync", AtMost, 1.0, "heed_nosync"),
        // Judged against the raw variant that parks like Tabula's pool does.
        Spec::new("short_reads", "tabula_8", AtLeast, 0.95, "raw_park_8"),
        Spec::new("short_reads", "tabula_8", AtLeast, 1.5, "tabula_1"),
        Spec::new(
            "short_reads",
            "tabula_8_writer",
            AtLeast,
            0.95,
            "raw_park_8_writer",
        ),
        Spec::new("many_tables", "tabula_10000", AtMost, 1.2, "tabula_10"),
        Spec::min_of(
            "async_reads",
            "tabula_task_p99",
            AtMost,
            1.0,
            &["heed_task_p99", "redb_task_p99"],
        ),
        // Issue 37: the typed scan at most raw's walk + bincode 2, and clearly ahead of redb.
        Spec::new("scan", "tabula_typed", AtMost, 1.0, "raw_typed"),
        Spec::new("scan", "tabula_typed", AtMost, 1.0, "heed_typed"),
        Spec::new("scan", "tabula_typed", AtMost, 0.80, "redb_typed"),
    ];
    for mode in ["durable", "nosync"] {
        let t = format!("tabula_{mode}");
        s.push(Spec::new(
            "upsert",
            &t,
            AtMost,
            1.10,
            &format!("raw_{mode}"),
        ));
        s.push(Spec::new(
            "upsert",
            &t,
            AtMost,
            1.0,
            &format!("heed_{mode}"),
        ));
        s.push(Spec::new(
            "upsert",
            &t,
            AtMost,
            1.0,
            &format!("redb_{mode}"),
        ));
    }
    for size in crate::workloads::big_values::SIZES {
        let n = crate::workloads::big_values::label(size);
        s.push(Spec::new(
            "big_values",
            &format!("tabula_borrowed_{n}"),
            AtMost,
            1.05,
            &format!("raw_{n}"),
        ));
    }
    for other in ["heed", "redb"] {
        for what in ["read_p50", "read_p99"] {
            s.push(Spec::new(
                "mixed",
                &format!("tabula_{what}"),
                AtMost,
                1.0,
                &format!("{other}_{what}"),
            ));
        }
        s.push(Spec::new(
            "mixed",
            "tabula_commits",
            AtLeast,
            1.0,
            &format!("{other}_commits"),
        ));
    }
    // dup_seek: Tabula's `tx.seek_dup` against one raw cursor's `MDBX_GET_BOTH_RANGE`, LMDB's
    // `MDB_GET_BOTH_RANGE` (what heed's LMDB does; heed's API has no such call) and redb's range
    // over a (key, subkey) table.
    s.push(Spec::new("dup_seek", "tabula", AtMost, 1.10, "raw"));
    s.push(Spec::new("dup_seek", "tabula", AtMost, 1.0, "lmdb"));
    s.push(Spec::new("dup_seek", "tabula", AtMost, 1.0, "redb"));
    // prune: Tabula's write-cursor walk against raw libmdbx's, heed's and redb's.
    // Issue 37: level with raw's walk.
    s.push(Spec::new("prune", "tabula", AtMost, 1.0, "raw"));
    s.push(Spec::new("prune", "tabula", AtMost, 1.0, "heed"));
    s.push(Spec::new("prune", "tabula", AtMost, 1.0, "redb"));
    // big_txn (issue 26): one-transaction inserts, deletes and retain against the faster of
    // heed and redb, at both sizes.
    for label in crate::workloads::big_txn::LABELS {
        for phase in ["insert", "delete", "retain"] {
            s.push(Spec::min_of(
                "big_txn",
                &format!("tabula_{phase}_{label}"),
                AtMost,
                1.0,
                &[
                    &format!("heed_{phase}_{label}"),
                    &format!("redb_{phase}_{label}"),
                ],
            ));
        }
    }
    // Issue 37: a range read of 10 entries within 5 % of raw libmdbx's cursor.
    for label in crate::workloads::big_txn::LABELS {
        s.push(Spec::new(
            "big_txn",
            &format!("tabula_range10_{label}"),
            AtMost,
            1.05,
            &format!("raw_range10_{label}"),
        ));
    }
    // small_commits: one-entry commits against the peer mode with the same guarantee.
    for (mode, peer) in [
        ("durable", "heed"),
        ("durable", "redb"),
        ("nometasync", "heed"),
        ("safe_nosync", "redb"),
        ("utterly_nosync", "heed"),
    ] {
        s.push(Spec::new(
            "small_commits",
            &format!("tabula_{mode}"),
            AtMost,
            1.0,
            &format!("{peer}_{mode}"),
        ));
    }
    // indexed (issue 24): writes and queries through three secondary indexes, per phase,
    // against raw libmdbx keeping the same index tables by hand and against native_db.
    for op in crate::workloads::indexed::OPS {
        s.push(Spec::new(
            "indexed",
            &format!("tabula_{op}"),
            AtMost,
            1.10,
            &format!("raw_{op}"),
        ));
        s.push(Spec::new(
            "indexed",
            &format!("tabula_{op}"),
            AtMost,
            1.0,
            &format!("native_db_{op}"),
        ));
    }
    // history (issue 36): a history table against reth's layout kept by hand on raw libmdbx:
    // a put at most 1.10x, an as-of read and an unwind at most 1.0x.
    for (op, limit) in [("put", 1.10), ("get_as_of", 1.0), ("unwind", 1.0)] {
        s.push(Spec::new(
            "history",
            &format!("tabula_{op}"),
            AtMost,
            limit,
            &format!("hand_{op}"),
        ));
    }
    for n in crate::workloads::open::COUNTS {
        s.push(Spec::new(
            "open",
            &format!("tabula_{n}"),
            AtMost,
            1.0,
            &format!("heed_{n}"),
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rows a workload writes, for the workloads that list them (their own tests check
    /// that a run writes exactly these).
    fn rows_written(workload: &str) -> Option<&'static [&'static str]> {
        match workload {
            "dup_seek" => Some(&crate::workloads::dup_seek::ROWS),
            "prune" => Some(&crate::workloads::prune::ROWS),
            _ => None,
        }
    }

    #[test]
    fn every_target_names_rows_its_workload_writes() {
        // The targets' denominators and numerators are distinct rows.
        for s in specs() {
            assert!(
                !s.den.contains(&s.num),
                "{} compares {} with itself",
                s.workload,
                s.num
            );
            assert!(s.limit > 0.0);
            if let Some(rows) = rows_written(s.workload) {
                for row in std::iter::once(&s.num).chain(&s.den) {
                    assert!(
                        rows.contains(&row.as_str()),
                        "a {} target names row {row}, which the workload does not write \
                         (it writes {rows:?})",
                        s.workload
                    );
                }
            }
        }
        // The new workloads' targets are there: heed and redb, and raw within 10 %.
        for (workload, others) in [
            ("dup_seek", ["raw", "lmdb", "redb"]),
            ("prune", ["raw", "heed", "redb"]),
        ] {
            for other in others {
                assert!(
                    specs()
                        .iter()
                        .any(|s| s.workload == workload && s.num == "tabula" && s.den == [other]),
                    "no {workload} target against {other}"
                );
            }
        }
    }
}
