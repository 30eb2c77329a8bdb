//! Results: one table per workload on stdout, the targets and their verdicts, and the JSON
//! file.
//!
//! A figure that is not a finite positive number is an error (it is never written as 0, and a
//! target that uses it fails), a target names its comparison as an [`Op`] (there is no third
//! kind of comparison to fall through to), and [`outcome`] turns the verdicts into the
//! binary's exit status.

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
    /// Microseconds per operation (lower is better).
    Us,
    /// Millions of operations per second (higher is better).
    Mops,
    /// Operations per second (higher is better).
    PerSec,
    /// Mebibytes (a size; lower is better).
    MiB,
}

impl Unit {
    /// The column heading.
    pub fn label(self) -> &'static str {
        match self {
            Unit::Ns => "ns/op",
            Unit::Us => "µs/op",
            Unit::Mops => "Mops/s",
            Unit::PerSec => "ops/s",
            Unit::MiB => "MiB",
        }
    }
}

/// One variant's figure.
#[derive(Clone, Debug)]
pub struct Row {
    /// The variant, as in the JSON.
    pub name: String,
    /// The figure.
    pub value: f64,
    /// What it measures.
    pub unit: Unit,
    /// Whether the row belongs in the JSON (extra rows are investigation only).
    pub json: bool,
    /// The row this one is compared with in the printed table.
    pub base: Option<String>,
}

/// One workload's results.
#[derive(Clone, Debug)]
pub struct Workload {
    /// Its JSON key.
    pub key: &'static str,
    /// What ran, for the printed heading.
    pub title: String,
    /// Unit of the rows added without one.
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
        self.push(name, self.unit, measure, base, true);
    }

    /// [`add`](Self::add) with a unit other than the workload's.
    pub fn add_in(
        &mut self,
        name: &str,
        unit: Unit,
        measure: impl FnOnce() -> f64,
        base: Option<&str>,
    ) {
        self.push(name, unit, measure, base, true);
    }

    /// Measures and adds an investigation row (printed, not in the JSON), unless filtered out.
    pub fn extra(&mut self, name: &str, measure: impl FnOnce() -> f64, base: Option<&str>) {
        self.push(name, self.unit, measure, base, false);
    }

    /// [`extra`](Self::extra) with a unit other than the workload's.
    pub fn extra_in(
        &mut self,
        name: &str,
        unit: Unit,
        measure: impl FnOnce() -> f64,
        base: Option<&str>,
    ) {
        self.push(name, unit, measure, base, false);
    }

    fn push(
        &mut self,
        name: &str,
        unit: Unit,
        measure: impl FnOnce() -> f64,
        base: Option<&str>,
        json: bool,
    ) {
        if !variant_wanted(name) {
            return;
        }
        self.rows.push(Row {
            name: name.to_string(),
            value: measure(),
            unit,
            json,
            base: base.map(str::to_string),
        });
    }

    /// The figure of row `name`.
    pub fn get(&self, name: &str) -> Option<f64> {
        self.rows.iter().find(|r| r.name == name).map(|r| r.value)
    }

    /// The rows whose figure is not a finite positive number, as messages.
    pub fn invalid(&self) -> Vec<String> {
        self.rows
            .iter()
            .filter(|r| !valid(r.value))
            .map(|r| {
                format!(
                    "{}.{}: figure {} is not a finite positive number",
                    self.key, r.name, r.value
                )
            })
            .collect()
    }

    /// The table printed for this workload.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "\n== {} — {}", self.key, self.title);
        let _ = writeln!(
            out,
            "{:<36} {:>12} {:<7} ratio",
            "variant", "figure", "unit"
        );
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
                "{:<36} {:>12.2} {:<7} {ratio}",
                format!("{}{mark}", row.name),
                row.value,
                row.unit.label(),
            );
        }
        out
    }
}

/// Whether `x` can be a figure: finite and positive (a time or a rate of zero is a broken
/// measurement).
fn valid(x: f64) -> bool {
    x.is_finite() && x > 0.0
}

/// The JSON document: workloads in run order, each an object of its JSON rows, numbers only.
///
/// # Errors
///
/// A message naming the row whose figure is not a finite positive number.
pub fn to_json(workloads: &[Workload]) -> Result<String, String> {
    let mut out = String::from("{\n");
    for (i, w) in workloads.iter().enumerate() {
        let mut fields = Vec::new();
        for r in w.rows.iter().filter(|r| r.json) {
            let n = number(r.value).map_err(|e| format!("{}.{}: {e}", w.key, r.name))?;
            fields.push(format!("\"{}\": {n}", r.name));
        }
        let comma = if i + 1 < workloads.len() { "," } else { "" };
        let _ = writeln!(out, "  \"{}\": {{{}}}{comma}", w.key, fields.join(", "));
    }
    out.push_str("}\n");
    Ok(out)
}

/// A JSON number: finite and positive, three decimals at most.
fn number(x: f64) -> Result<String, String> {
    if !valid(x) {
        return Err(format!("figure {x} is not a finite positive number"));
    }
    let s = format!("{x:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    Ok(if s.is_empty() {
        "0".to_string()
    } else {
        s.to_string()
    })
}

/// How a target compares its ratio with its limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// The ratio must be at most the limit (times: lower is better).
    AtMost,
    /// The ratio must be at least the limit (rates: higher is better).
    AtLeast,
}

impl Op {
    fn symbol(self) -> &'static str {
        match self {
            Op::AtMost => "<=",
            Op::AtLeast => ">=",
        }
    }
}

/// One target: `workload.num / den` compared with `limit`.
#[derive(Clone, Debug)]
pub struct Spec {
    /// The workload's JSON key.
    pub workload: &'static str,
    /// The row divided.
    pub num: String,
    /// The rows divided by: one row, or the smallest of several.
    pub den: Vec<String>,
    /// The comparison.
    pub op: Op,
    /// The limit.
    pub limit: f64,
}

impl Spec {
    /// `num / den op limit` in `workload`.
    pub fn new(workload: &'static str, num: &str, op: Op, limit: f64, den: &str) -> Spec {
        Spec {
            workload,
            num: num.to_string(),
            den: vec![den.to_string()],
            op,
            limit,
        }
    }

    /// `num / min(dens) op limit`.
    pub fn min_of(workload: &'static str, num: &str, op: Op, limit: f64, dens: &[&str]) -> Spec {
        Spec {
            den: dens.iter().map(|d| d.to_string()).collect(),
            ..Spec::new(workload, num, op, limit, dens[0])
        }
    }

    fn what(&self) -> String {
        if self.den.len() == 1 {
            format!("{}/{}", self.num, self.den[0])
        } else {
            format!("{}/min({})", self.num, self.den.join(", "))
        }
    }
}

/// What a target came to.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// The ratio is within the limit.
    Holds,
    /// The ratio is outside the limit.
    Missed,
    /// The workload or a row was not asked for (`--only`, `--variant`).
    NotRun,
    /// A figure the target needs is missing from a workload that ran, or is not a finite
    /// positive number: the measurement is broken.
    Invalid(String),
}

/// One target and its verdict.
#[derive(Clone, Debug)]
pub struct Target {
    /// What is required, with the measured figures.
    pub text: String,
    /// The verdict.
    pub verdict: Verdict,
}

/// Checks `spec` against the figures in `workloads`.
pub fn evaluate(spec: &Spec, workloads: &[Workload]) -> Target {
    let what = format!("{}: {}", spec.workload, spec.what());
    let need = format!("need {} {}", spec.op.symbol(), spec.limit);
    let not_run = |why: &str| Target {
        text: format!("{what} ({why}; {need})"),
        verdict: Verdict::NotRun,
    };
    let Some(w) = workloads.iter().find(|w| w.key == spec.workload) else {
        return not_run("workload not run");
    };
    let figure = |row: &str| -> Result<Option<f64>, String> {
        match w.get(row) {
            Some(x) if valid(x) => Ok(Some(x)),
            Some(x) => Err(format!("figure of {row} is {x}")),
            None if variant_wanted(row) => Err(format!("row {row} is missing")),
            None => Ok(None),
        }
    };
    let mut figures = Vec::new();
    for row in std::iter::once(&spec.num).chain(&spec.den) {
        match figure(row) {
            Ok(Some(x)) => figures.push(x),
            Ok(None) => return not_run(&format!("{row} not run")),
            Err(e) => {
                return Target {
                    text: format!("{what}: {e} ({need})"),
                    verdict: Verdict::Invalid(e),
                };
            }
        }
    }
    let num = figures[0];
    let den = figures[1..].iter().copied().fold(f64::INFINITY, f64::min);
    let ratio = num / den;
    let holds = match spec.op {
        Op::AtMost => ratio <= spec.limit,
        Op::AtLeast => ratio >= spec.limit,
    };
    Target {
        text: format!("{what} = {ratio:.3} ({need})"),
        verdict: if holds {
            Verdict::Holds
        } else {
            Verdict::Missed
        },
    }
}

/// The run's outcome from its targets and invalid figures: `Err` with the reason when a figure
/// is invalid, or when a target missed and `allow_misses` is off.
///
/// # Errors
///
/// The message the binary prints before exiting non-zero.
pub fn outcome(targets: &[Target], invalid: &[String], allow_misses: bool) -> Result<(), String> {
    let mut broken: Vec<String> = invalid.to_vec();
    broken.extend(targets.iter().filter_map(|t| match &t.verdict {
        Verdict::Invalid(_) => Some(t.text.clone()),
        _ => None,
    }));
    if !broken.is_empty() {
        return Err(format!(
            "{} broken measurement(s):\n  {}",
            broken.len(),
            broken.join("\n  ")
        ));
    }
    let missed = targets
        .iter()
        .filter(|t| t.verdict == Verdict::Missed)
        .count();
    if missed > 0 && !allow_misses {
        return Err(format!(
            "{missed} target(s) missed (--allow-misses reports them without failing the run)"
        ));
    }
    Ok(())
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

    fn fixed(key: &'static str, rows: &[(&str, f64)]) -> Workload {
        let mut w = Workload::new(key, String::new(), Unit::Ns);
        for &(n, v) in rows {
            w.add(n, || v, None);
        }
        w
    }

    #[test]
    fn json_has_the_documented_shape() {
        let all = [
            workload("get_hot", Unit::Ns, &["tabula_typed", "raw", "heed_typed"]),
            workload("short_reads", Unit::Mops, &["tabula_1", "tabula_8"]),
        ];
        let json: serde_json::Value = serde_json::from_str(&to_json(&all).unwrap()).unwrap();
        let obj = json.as_object().unwrap();
        assert_eq!(obj.len(), 2);
        for w in &all {
            let fields = obj[w.key].as_object().unwrap();
            let mut got: Vec<&str> = fields.keys().map(String::as_str).collect();
            let mut want: Vec<&str> = w
                .rows
                .iter()
                .filter(|r| r.json)
                .map(|r| r.name.as_str())
                .collect();
            got.sort_unstable();
            want.sort_unstable();
            assert_eq!(got, want, "{}", w.key);
            assert!(fields.values().all(serde_json::Value::is_number));
        }
        assert_eq!(obj["get_hot"]["tabula_typed"].as_f64(), Some(100.25));
    }

    #[test]
    fn a_nan_or_zero_figure_is_an_error_not_zero() {
        assert_eq!(number(12.5).unwrap(), "12.5");
        assert_eq!(number(3.0).unwrap(), "3");
        assert!(number(f64::NAN).is_err());
        assert!(number(f64::INFINITY).is_err());
        assert!(number(0.0).is_err());
        let w = fixed(
            "get_hot",
            &[("tabula_typed", f64::NAN), ("heed_typed", 1.0)],
        );
        let err = to_json(std::slice::from_ref(&w)).unwrap_err();
        assert!(err.contains("get_hot.tabula_typed"), "{err}");
        assert_eq!(w.invalid().len(), 1);
    }

    #[test]
    fn verdicts_follow_the_figures() {
        let w = [fixed(
            "get_hot",
            &[
                ("a", 100.0),
                ("b", 100.0),
                ("c", 90.0),
                ("nan", f64::NAN),
                ("zero", 0.0),
            ],
        )];
        let v = |spec: Spec| evaluate(&spec, &w).verdict;
        // At the limit holds; just past it misses; both directions.
        assert_eq!(
            v(Spec::new("get_hot", "a", Op::AtMost, 1.0, "b")),
            Verdict::Holds
        );
        assert_eq!(
            v(Spec::new("get_hot", "a", Op::AtMost, 1.0, "c")),
            Verdict::Missed
        );
        assert_eq!(
            v(Spec::new("get_hot", "c", Op::AtMost, 1.0, "a")),
            Verdict::Holds
        );
        assert_eq!(
            v(Spec::new("get_hot", "a", Op::AtLeast, 1.1, "c")),
            Verdict::Holds
        );
        assert_eq!(
            v(Spec::new("get_hot", "c", Op::AtLeast, 0.95, "a")),
            Verdict::Missed
        );
        // The smallest of several denominators.
        assert_eq!(
            v(Spec::min_of("get_hot", "a", Op::AtMost, 1.05, &["b", "c"])),
            Verdict::Missed
        );
        assert_eq!(
            v(Spec::min_of("get_hot", "c", Op::AtMost, 1.0, &["b", "a"])),
            Verdict::Holds
        );
        // A NaN or zero figure, on either side, is a broken measurement, never a pass.
        assert!(matches!(
            v(Spec::new("get_hot", "nan", Op::AtMost, 1.0, "a")),
            Verdict::Invalid(_)
        ));
        assert!(matches!(
            v(Spec::new("get_hot", "a", Op::AtLeast, 0.0, "nan")),
            Verdict::Invalid(_)
        ));
        assert!(matches!(
            v(Spec::new("get_hot", "zero", Op::AtMost, 1.0, "a")),
            Verdict::Invalid(_)
        ));
        // A row missing from a workload that ran is broken; a workload not run is not.
        assert!(matches!(
            v(Spec::new("get_hot", "gone", Op::AtMost, 1.0, "a")),
            Verdict::Invalid(_)
        ));
        assert_eq!(
            v(Spec::new("scan", "a", Op::AtMost, 1.0, "b")),
            Verdict::NotRun
        );
    }

    #[test]
    fn the_exit_status_follows_the_verdicts() {
        let t = |verdict: Verdict| Target {
            text: String::from("t"),
            verdict,
        };
        assert!(outcome(&[t(Verdict::Holds), t(Verdict::NotRun)], &[], false).is_ok());
        let missed = [t(Verdict::Holds), t(Verdict::Missed)];
        let err = outcome(&missed, &[], false).unwrap_err();
        assert!(err.contains("1 target(s) missed"), "{err}");
        assert!(outcome(&missed, &[], true).is_ok());
        // Broken figures fail the run even when misses are allowed.
        let broken = [t(Verdict::Invalid("figure of x is NaN".into()))];
        assert!(outcome(&broken, &[], true).is_err());
        assert!(outcome(&[], &["scan.x: figure NaN".into()], true).is_err());
    }
}
