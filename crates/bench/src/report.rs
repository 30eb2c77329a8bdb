//! Results: one table per workload on stdout, the targets, and the JSON file.

use std::fmt::Write as _;
use std::sync::OnceLock;

static VARIANTS: OnceLock<Vec<String>> = OnceLock::new();

/// Restricts every workload to the variants named in `names` (for
/// profiling one variant); call once, before running.
pub fn only_variants(names: Vec<String>) {
    let _ = VARIANTS.set(names);
}

/// Whether variant `name` is to run.
pub fn variant_wanted(name: &str) -> bool {
    VARIANTS
        .get()
        .is_none_or(|v| v.is_empty() || v.iter().any(|p| p == name))
}

/// What a figure measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// Nanoseconds per operation (lower is better).
    Ns,
    /// Millions of operations per second (higher is better).
    Mops,
}

/// One variant's figure.
#[derive(Clone, Debug)]
pub struct Row {
    /// The variant, as in the JSON.
    pub name: String,
    /// The figure.
    pub value: f64,
    /// Whether the row belongs in the JSON (extra rows are investigation only).
    pub json: bool,
    /// The raw-libmdbx row this one is compared with.
    pub base: Option<String>,
}

/// One workload's results.
#[derive(Clone, Debug)]
pub struct Workload {
    /// Its JSON key.
    pub key: &'static str,
    /// What ran, for the printed heading.
    pub title: String,
    /// Unit of every row.
    pub unit: Unit,
    /// Rows in JSON order, then extra rows.
    pub rows: Vec<Row>,
}

impl Workload {
    /// A workload without rows yet.
    pub fn new(key: &'static str, title: String, unit: Unit) -> Self {
        Workload {
            key,
            title,
            unit,
            rows: Vec::new(),
        }
    }

    /// Measures and adds a JSON row compared with `base`, unless `--variant` filters it out.
    pub fn add(&mut self, name: &str, measure: impl FnOnce() -> f64, base: Option<&str>) {
        self.push(name, measure, base, true);
    }

    /// Measures and adds an investigation row (printed, not in the JSON), unless filtered out.
    pub fn extra(&mut self, name: &str, measure: impl FnOnce() -> f64, base: Option<&str>) {
        self.push(name, measure, base, false);
    }

    fn push(&mut self, name: &str, measure: impl FnOnce() -> f64, base: Option<&str>, json: bool) {
        if !variant_wanted(name) {
            return;
        }
        self.rows.push(Row {
            name: name.to_string(),
            value: measure(),
            json,
            base: base.map(str::to_string),
        });
    }

    /// The figure of row `name`.
    pub fn get(&self, name: &str) -> Option<f64> {
        self.rows.iter().find(|r| r.name == name).map(|r| r.value)
    }

    /// The table printed for this workload.
    pub fn render(&self) -> String {
        let unit = match self.unit {
            Unit::Ns => "ns/op",
            Unit::Mops => "Mops/s",
        };
        let mut out = String::new();
        let _ = writeln!(out, "\n== {} — {}", self.key, self.title);
        let _ = writeln!(out, "{:<36} {:>12}  ratio to raw", "variant", unit);
        for row in &self.rows {
            let ratio = row
                .base
                .as_deref()
                .and_then(|b| self.get(b))
                .map(|b| format!("{:>6.2}× {}", row.value / b, row.base.as_deref().unwrap()))
                .unwrap_or_default();
            let mark = if row.json { "" } else { " (investigation)" };
            let _ = writeln!(
                out,
                "{:<36} {:>12.2}  {ratio}",
                format!("{}{mark}", row.name),
                row.value
            );
        }
        out
    }
}

/// The JSON document: workloads in run order, each an object of its JSON rows, numbers only.
pub fn to_json(workloads: &[Workload]) -> String {
    let mut out = String::from("{\n");
    for (i, w) in workloads.iter().enumerate() {
        let fields: Vec<String> = w
            .rows
            .iter()
            .filter(|r| r.json)
            .map(|r| format!("\"{}\": {}", r.name, number(r.value)))
            .collect();
        let comma = if i + 1 < workloads.len() { "," } else { "" };
        let _ = writeln!(out, "  \"{}\": {{{}}}{comma}", w.key, fields.join(", "));
    }
    out.push_str("}\n");
    out
}

/// A JSON number: finite, three decimals at most.
fn number(x: f64) -> String {
    if !x.is_finite() {
        return "0".to_string();
    }
    let s = format!("{x:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s.is_empty() || s == "-" {
        "0".to_string()
    } else {
        s.to_string()
    }
}

/// One target: a description and whether it holds.
pub struct Target {
    /// What is required, with the measured figures.
    pub text: String,
    /// Whether it holds; `None` when a figure is missing (workload not run).
    pub holds: Option<bool>,
}

/// The targets from the issue, checked against the figures present.
pub fn targets(workloads: &[Workload]) -> Vec<Target> {
    let fig = |w: &str, r: &str| workloads.iter().find(|x| x.key == w).and_then(|x| x.get(r));
    let mut out = Vec::new();
    let mut check = |name: &str, figures: Option<(f64, f64)>, op: &str, limit: f64, what: &str| {
        let (text, holds) = match figures {
            Some((num, den)) => {
                let ratio = num / den;
                let holds = match op {
                    "<=" => ratio <= limit,
                    _ => ratio >= limit,
                };
                (
                    format!("{name}: {what} = {ratio:.3} (need {op} {limit})"),
                    Some(holds),
                )
            }
            None => (format!("{name}: {what} (not run)"), None),
        };
        out.push(Target { text, holds });
    };
    let pair = |a: Option<f64>, b: Option<f64>| a.zip(b);
    check(
        "get_hot",
        pair(fig("get_hot", "tabula"), fig("get_hot", "raw")),
        "<=",
        1.10,
        "tabula/raw",
    );
    check(
        "get_hot",
        pair(fig("get_hot", "raw_reopen_dbi"), fig("get_hot", "tabula")),
        ">=",
        5.0,
        "raw_reopen_dbi/tabula",
    );
    check(
        "get_cold",
        pair(fig("get_cold", "tabula"), fig("get_cold", "raw")),
        "<=",
        1.05,
        "tabula/raw",
    );
    check(
        "get_cold",
        pair(fig("get_cold", "tabula"), fig("get_cold", "heed")),
        "<=",
        1.0,
        "tabula/heed",
    );
    let raw_min =
        pair(fig("append", "raw_put"), fig("append", "raw_cursor_put")).map(|(a, b)| a.min(b));
    check(
        "append",
        pair(fig("append", "tabula"), raw_min),
        "<=",
        1.10,
        "tabula/min(raw_put, raw_cursor_put)",
    );
    check(
        "short_reads",
        pair(
            fig("short_reads", "tabula_8"),
            fig("short_reads", "raw_reuse_8"),
        ),
        ">=",
        0.95,
        "tabula_8/raw_reuse_8",
    );
    check(
        "short_reads",
        pair(
            fig("short_reads", "tabula_8"),
            fig("short_reads", "tabula_1"),
        ),
        ">=",
        1.5,
        "tabula_8/tabula_1",
    );
    check(
        "many_tables",
        pair(
            fig("many_tables", "tabula_10000"),
            fig("many_tables", "tabula_10"),
        ),
        "<=",
        1.2,
        "tabula_10000/tabula_10",
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn workload(key: &'static str, unit: Unit, names: &[&str]) -> Workload {
        let mut w = Workload::new(key, String::new(), unit);
        for (i, n) in names.iter().enumerate() {
            w.add(n, || 100.0 + i as f64 + 0.25, Some(names[0]));
        }
        w.extra("not_in_json", || 1.0, None);
        w
    }

    #[test]
    fn json_has_the_documented_shape() {
        let all = [
            workload(
                "get_hot",
                Unit::Ns,
                &["tabula", "raw", "raw_reopen_dbi", "heed", "redb"],
            ),
            workload("get_cold", Unit::Ns, &["tabula", "raw", "heed", "redb"]),
            workload(
                "append",
                Unit::Ns,
                &["tabula", "raw_put", "raw_cursor_put", "heed", "redb"],
            ),
            workload(
                "short_reads",
                Unit::Mops,
                &[
                    "tabula_1",
                    "tabula_8",
                    "raw_fresh_8",
                    "raw_reuse_8",
                    "heed_8",
                    "actor_8",
                ],
            ),
            workload(
                "many_tables",
                Unit::Ns,
                &[
                    "tabula_10",
                    "tabula_10000",
                    "raw_10",
                    "raw_10000",
                    "heed_10",
                    "heed_10000",
                ],
            ),
        ];
        let json: serde_json::Value = serde_json::from_str(&to_json(&all)).unwrap();
        let obj = json.as_object().unwrap();
        let keys: Vec<&str> = obj.keys().map(String::as_str).collect();
        assert_eq!(keys.len(), 5);
        for w in &all {
            let fields = obj[w.key].as_object().unwrap();
            let expected: Vec<&str> = w
                .rows
                .iter()
                .filter(|r| r.json)
                .map(|r| r.name.as_str())
                .collect();
            let mut got: Vec<&str> = fields.keys().map(String::as_str).collect();
            let mut want = expected.clone();
            got.sort_unstable();
            want.sort_unstable();
            assert_eq!(got, want, "{}", w.key);
            assert!(fields.values().all(serde_json::Value::is_number));
        }
        assert_eq!(obj["get_hot"]["tabula"].as_f64(), Some(100.25));
        assert_eq!(targets(&all).len(), 8);
    }

    #[test]
    fn numbers_are_plain() {
        assert_eq!(number(12.5), "12.5");
        assert_eq!(number(3.0), "3");
        assert_eq!(number(f64::NAN), "0");
    }
}
