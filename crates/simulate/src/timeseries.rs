//! Time-history CSV files shared by `ewr simulate --timeseries` and `ewr solve
//! --timeseries`, and their comparison (`ewr compare`).
//!
//! Layout: one header line, then one line per sample, comma-separated, numbers in Rust's
//! shortest round-trip exponent form (`6.804837e0`). Columns, in this order:
//!
//! - `t`: time within the period, `0 <= t < T`, uniformly sampled (`t_j = j T / N`);
//! - for each contact `c = 0, 1, ...`, grouped per contact: `w<c>_<k>` for `k = 1..=dim`
//!   (relative tangential displacement), then `v<c>_<k>` (relative velocity), then
//!   `r<c>_<k>` (friction force on the structure); e.g. for two 2-D contacts
//!   `t,w0_1,w0_2,v0_1,v0_2,r0_1,r0_2,w1_1,w1_2,v1_1,v1_2,r1_1,r1_2`;
//! - for 3-D contacts (a normal direction, model format v2), after all the contact columns
//!   above, per contact `c`: `n<c>` (normal force, >= 0 in compression), `g<c>` (gap,
//!   positive = open) and `state<c>` (0 separated, 1 sliding, 2 stuck); for contacts with a
//!   constant bound, `state<c>` alone (1 sliding, 2 stuck);
//! - optionally `u<i>` (displacement of DOF `i`, 0-based) for recorded DOFs.
//!
//! Two files are compared column by column after interpolating the second onto the first's
//! times (periodic linear interpolation, the period inferred from the uniform sampling), so
//! a time integration with 65536 samples compares directly with a harmonic-balance solution
//! sampled at 512 points.

use std::fmt::Write as _;
use std::io::{BufRead, Write};
use std::path::Path;

/// Errors of reading, writing and comparing time series.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TimeSeriesError {
    /// The file cannot be read or written.
    #[error("{path}: {reason}")]
    Io {
        /// The file.
        path: String,
        /// What went wrong.
        reason: String,
    },
    /// The text is not a time-series CSV.
    #[error("line {line}: {reason}")]
    Parse {
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        reason: String,
    },
    /// The series cannot be combined (lengths, times, columns).
    #[error("{0}")]
    Mismatch(String),
}

/// Named columns of equal length; the first is normally `t`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TimeSeries {
    /// Column names, in file order.
    pub names: Vec<String>,
    /// Column values, one vector per name.
    pub columns: Vec<Vec<f64>>,
}

/// Names of the contact columns, in file order (without `t`).
pub fn contact_column_names(dim: usize, n_contacts: usize) -> Vec<String> {
    let mut out = Vec::with_capacity(3 * dim * n_contacts);
    for c in 0..n_contacts {
        for q in ["w", "v", "r"] {
            for k in 1..=dim {
                out.push(format!("{q}{c}_{k}"));
            }
        }
    }
    out
}

/// Name of the per-sample state column of contact `c` (`state<c>`: 0 separated, 1 sliding,
/// 2 stuck); 3-D contacts have it among their normal columns.
pub fn state_column_name(c: usize) -> String {
    format!("state{c}")
}

/// Names of the normal columns of 3-D contact `c`: normal force, gap and state.
pub fn normal_column_names(c: usize) -> [String; 3] {
    [format!("n{c}"), format!("g{c}"), state_column_name(c)]
}

impl TimeSeries {
    /// A series with only the time column.
    pub fn new(t: Vec<f64>) -> Self {
        TimeSeries {
            names: vec!["t".into()],
            columns: vec![t],
        }
    }

    /// `t` and the contact columns from sample-major arrays (`j * dim * nc + c * dim + k`),
    /// the layout of [`crate::Simulation`].
    ///
    /// # Panics
    /// If an array does not hold `t.len() * dim * n_contacts` values.
    pub fn from_contacts(
        t: &[f64],
        dim: usize,
        n_contacts: usize,
        w: &[f64],
        v: &[f64],
        r: &[f64],
    ) -> Self {
        let (ns, m) = (t.len(), dim * n_contacts);
        Self::contact_columns(t, dim, n_contacts, [w, v, r], |a, s| {
            (0..ns).map(|j| a[j * m + s]).collect()
        })
    }

    /// `t` and the contact columns from row-major histories, one row per contact direction
    /// (`(c * dim + k) * t.len() + j`), the layout of `ewr_contact::ContactHistories`.
    ///
    /// # Panics
    /// If an array does not hold `t.len() * dim * n_contacts` values.
    pub fn from_contact_rows(
        t: &[f64],
        dim: usize,
        n_contacts: usize,
        w: &[f64],
        v: &[f64],
        r: &[f64],
    ) -> Self {
        let ns = t.len();
        Self::contact_columns(t, dim, n_contacts, [w, v, r], |a, s| {
            a[s * ns..(s + 1) * ns].to_vec()
        })
    }

    /// `t` and the columns `w<c>_<k>`, `v<c>_<k>`, `r<c>_<k>`, each read from its array by
    /// `column(array, c * dim + k)`.
    fn contact_columns(
        t: &[f64],
        dim: usize,
        n_contacts: usize,
        [w, v, r]: [&[f64]; 3],
        column: impl Fn(&[f64], usize) -> Vec<f64>,
    ) -> Self {
        for a in [w, v, r] {
            assert_eq!(
                a.len(),
                t.len() * dim * n_contacts,
                "contact array of the wrong length"
            );
        }
        let mut ts = TimeSeries::new(t.to_vec());
        for c in 0..n_contacts {
            for (q, a) in [("w", w), ("v", v), ("r", r)] {
                for k in 0..dim {
                    ts.names.push(format!("{q}{c}_{}", k + 1));
                    ts.columns.push(column(a, c * dim + k));
                }
            }
        }
        ts
    }

    /// Number of samples (rows).
    pub fn len(&self) -> usize {
        self.columns.first().map_or(0, Vec::len)
    }

    /// True when there are no samples.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Appends a column; fails if its length differs from the others.
    pub fn push(&mut self, name: impl Into<String>, data: Vec<f64>) -> Result<(), TimeSeriesError> {
        let name = name.into();
        if !self.columns.is_empty() && data.len() != self.len() {
            return Err(TimeSeriesError::Mismatch(format!(
                "column {name} has {} values, the series has {}",
                data.len(),
                self.len()
            )));
        }
        self.names.push(name);
        self.columns.push(data);
        Ok(())
    }

    /// The column with this name.
    pub fn column(&self, name: &str) -> Option<&[f64]> {
        let i = self.names.iter().position(|n| n == name)?;
        Some(&self.columns[i])
    }

    /// Writes the CSV text.
    pub fn write_csv(&self, mut out: impl Write) -> std::io::Result<()> {
        writeln!(out, "{}", self.names.join(","))?;
        let mut line = String::new();
        for j in 0..self.len() {
            line.clear();
            for (i, c) in self.columns.iter().enumerate() {
                if i > 0 {
                    line.push(',');
                }
                write!(line, "{:e}", c[j]).expect("writing to a String");
            }
            writeln!(out, "{line}")?;
        }
        Ok(())
    }

    /// Writes the CSV file (atomically: under its name the file is always complete).
    pub fn save(&self, path: &Path) -> Result<(), TimeSeriesError> {
        ewr_model::h5::atomically(path, |tmp| {
            let f = std::fs::File::create(tmp).map_err(|e| e.to_string())?;
            let mut w = std::io::BufWriter::new(f);
            self.write_csv(&mut w).map_err(|e| e.to_string())?;
            w.flush().map_err(|e| e.to_string())
        })
        .map_err(|reason| TimeSeriesError::Io {
            path: path.display().to_string(),
            reason,
        })
    }

    /// Parses CSV text: a header of unique names, then rows of as many numbers.
    pub fn read_csv(input: impl BufRead) -> Result<Self, TimeSeriesError> {
        let perr = |line: usize, reason: String| TimeSeriesError::Parse { line, reason };
        let mut lines = input.lines().enumerate();
        let header = loop {
            match lines.next() {
                Some((i, l)) => {
                    let l = l.map_err(|e| perr(i + 1, e.to_string()))?;
                    if !l.trim().is_empty() {
                        break l;
                    }
                }
                None => return Err(perr(1, "empty file: no header line".into())),
            }
        };
        let names: Vec<String> = header.split(',').map(|s| s.trim().to_string()).collect();
        for (i, n) in names.iter().enumerate() {
            if n.is_empty() {
                return Err(perr(1, format!("column {} has an empty name", i + 1)));
            }
            if names[..i].contains(n) {
                return Err(perr(1, format!("column name {n:?} appears twice")));
            }
        }
        let mut columns = vec![Vec::new(); names.len()];
        for (i, l) in lines {
            let l = l.map_err(|e| perr(i + 1, e.to_string()))?;
            if l.trim().is_empty() {
                continue;
            }
            let fields: Vec<&str> = l.split(',').collect();
            if fields.len() != names.len() {
                return Err(perr(
                    i + 1,
                    format!("{} fields, the header has {}", fields.len(), names.len()),
                ));
            }
            for (c, f) in fields.iter().enumerate() {
                let x: f64 = f
                    .trim()
                    .parse()
                    .map_err(|_| perr(i + 1, format!("{:?} is not a number", f.trim())))?;
                columns[c].push(x);
            }
        }
        Ok(TimeSeries { names, columns })
    }

    /// Reads a CSV file.
    pub fn load(path: &Path) -> Result<Self, TimeSeriesError> {
        let f = std::fs::File::open(path).map_err(|e| TimeSeriesError::Io {
            path: path.display().to_string(),
            reason: e.to_string(),
        })?;
        Self::read_csv(std::io::BufReader::new(f)).map_err(|e| match e {
            TimeSeriesError::Parse { line, reason } => TimeSeriesError::Io {
                path: path.display().to_string(),
                reason: format!("line {line}: {reason}"),
            },
            e => e,
        })
    }

    /// The period implied by a uniformly sampled `t` column (`N * (t_1 - t_0)`).
    pub fn period(&self) -> Result<f64, TimeSeriesError> {
        let t = self
            .column("t")
            .ok_or_else(|| TimeSeriesError::Mismatch("no column `t`".into()))?;
        if t.len() < 2 {
            return Err(TimeSeriesError::Mismatch(
                "at least two samples are needed".into(),
            ));
        }
        let dt = t[1] - t[0];
        let uniform = dt > 0.0
            && t.windows(2)
                .all(|w| ((w[1] - w[0]) - dt).abs() <= 1e-6 * dt);
        if !uniform {
            return Err(TimeSeriesError::Mismatch(
                "column `t` is not uniformly increasing".into(),
            ));
        }
        Ok(dt * t.len() as f64)
    }

    /// Column `name` at time `t`, by periodic linear interpolation.
    fn sample(&self, col: &[f64], t0: f64, dt: f64, t: f64) -> f64 {
        let n = col.len();
        let x = (t - t0) / dt;
        let i = x.floor();
        let a = x - i;
        let i0 = (i as i64).rem_euclid(n as i64) as usize;
        let i1 = (i0 + 1) % n;
        (1.0 - a) * col[i0] + a * col[i1]
    }
}

/// How one column of two time series differs.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ColumnDiff {
    /// Column name.
    pub name: String,
    /// Largest `|a - b|` over the samples of the first series.
    pub max_abs_diff: f64,
    /// The normalisation: the column's largest `|value|` in either series (see
    /// [`RELATIVE_FLOOR`]).
    pub scale: f64,
    /// `max_abs_diff / scale` (0 when both columns are zero).
    pub max_rel_diff: f64,
    /// Root-mean-square difference over `scale`.
    pub rms_rel_diff: f64,
    /// Time of the largest difference (of the first non-finite value, if any).
    pub at_t: f64,
    /// Samples where either series is NaN or infinite; any makes every difference infinite,
    /// since a series with such values agrees with nothing.
    pub non_finite: usize,
}

/// Floor of a column's normalisation, relative to the largest column of the same quantity:
/// a contact stuck all period has `w`, `v` equal to zero up to rounding, and rounding noise
/// must not read as a 100 % difference.
pub const RELATIVE_FLOOR: f64 = 1e-9;

/// The physical quantity of a column, for [`compare`]'s normalisation floor.
fn quantity(name: &str) -> Option<char> {
    if name.starts_with("state") {
        return Some('s');
    }
    name.chars().next().map(|q| match q {
        'g' => 'w',
        'n' => 'r',
        q => q,
    })
}

/// Compares every column that both series have (except `t`), interpolating `b` onto the
/// times of `a` when their samplings differ.
///
/// Each difference is normalised by the column's largest `|value|` in either series, but
/// at least [`RELATIVE_FLOOR`] times the largest value of the same quantity (columns
/// grouped by their first letter: `w`, `v`, `r`, `u`; a gap `g` counts as a displacement `w`
/// and a normal force `n` as a force `r`, so that a gap that stays zero up to rounding in
/// both series is not a 100 % difference).
pub fn compare(a: &TimeSeries, b: &TimeSeries) -> Result<Vec<ColumnDiff>, TimeSeriesError> {
    let (ta, pa) = (
        a.column("t")
            .ok_or_else(|| TimeSeriesError::Mismatch("first series: no column `t`".into()))?,
        a.period()?,
    );
    let tb = b
        .column("t")
        .ok_or_else(|| TimeSeriesError::Mismatch("second series: no column `t`".into()))?;
    let pb = b.period()?;
    if (pa - pb).abs() > 1e-6 * pa.max(pb) {
        return Err(TimeSeriesError::Mismatch(format!(
            "the periods differ: {pa} and {pb} (different forcing frequencies?)"
        )));
    }
    let same = ta.len() == tb.len() && ta.iter().zip(tb).all(|(x, y)| (x - y).abs() <= 1e-9 * pa);
    let (t0b, dtb) = (tb[0], tb[1] - tb[0]);
    let max_abs = |c: &[f64]| {
        c.iter()
            .filter(|x| x.is_finite())
            .fold(0.0f64, |s, x| s.max(x.abs()))
    };
    // Largest value of each quantity (first letter of the name) over the common columns.
    let mut quantity_scale: Vec<(char, f64)> = Vec::new();
    for (name, ca) in a.names.iter().zip(&a.columns) {
        let (Some(q), Some(cb)) = (quantity(name), b.column(name)) else {
            continue;
        };
        let s = max_abs(ca).max(max_abs(cb));
        match quantity_scale.iter_mut().find(|e| e.0 == q) {
            Some(e) => e.1 = e.1.max(s),
            None => quantity_scale.push((q, s)),
        }
    }
    let mut out = Vec::new();
    for (name, ca) in a.names.iter().zip(&a.columns) {
        if name == "t" {
            continue;
        }
        let Some(cb) = b.column(name) else { continue };
        let (mut max_d, mut at, mut sum2) = (0.0f64, ta[0], 0.0);
        let mut non_finite = 0;
        for (j, (&t, &x)) in ta.iter().zip(ca).enumerate() {
            let y = if same {
                cb[j]
            } else {
                b.sample(cb, t0b, dtb, t)
            };
            if !x.is_finite() || !y.is_finite() {
                if non_finite == 0 {
                    at = t;
                }
                non_finite += 1;
                continue;
            }
            let d = (x - y).abs();
            if d > max_d {
                max_d = d;
                at = t;
            }
            sum2 += d * d;
        }
        let q = quantity(name).and_then(|q| quantity_scale.iter().find(|e| e.0 == q));
        let floor = q.map_or(0.0, |e| RELATIVE_FLOOR * e.1);
        let scale = max_abs(ca).max(max_abs(cb)).max(floor);
        let rel = |d: f64| if d == 0.0 { 0.0 } else { d / scale };
        let (max_rel, rms_rel) = if non_finite > 0 {
            max_d = f64::INFINITY;
            (f64::INFINITY, f64::INFINITY)
        } else {
            (rel(max_d), rel((sum2 / ta.len() as f64).sqrt()))
        };
        out.push(ColumnDiff {
            name: name.clone(),
            max_abs_diff: max_d,
            scale,
            max_rel_diff: max_rel,
            rms_rel_diff: rms_rel,
            at_t: at,
            non_finite,
        });
    }
    if out.is_empty() {
        return Err(TimeSeriesError::Mismatch(
            "the two series have no column in common besides `t`".into(),
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_grouped_per_contact() {
        assert_eq!(
            contact_column_names(2, 2).join(","),
            "w0_1,w0_2,v0_1,v0_2,r0_1,r0_2,w1_1,w1_2,v1_1,v1_2,r1_1,r1_2"
        );
        let t = [0.0, 0.5];
        // dim 2, 2 contacts: 4 values per sample.
        let w = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0];
        let ts = TimeSeries::from_contacts(&t, 2, 2, &w, &w, &w);
        assert_eq!(ts.names[1..], contact_column_names(2, 2)[..]);
        assert_eq!(ts.column("w1_2").unwrap(), &[4.0, 8.0]);
        assert_eq!(ts.column("r0_1").unwrap(), &[1.0, 5.0]);
        // The same data row-major (one row per contact direction).
        let rows = [1.0, 5.0, 2.0, 6.0, 3.0, 7.0, 4.0, 8.0];
        assert_eq!(
            TimeSeries::from_contact_rows(&t, 2, 2, &rows, &rows, &rows),
            ts
        );
    }

    #[test]
    fn csv_round_trip_is_exact() {
        let mut ts = TimeSeries::new(vec![0.0, 0.1, 0.2]);
        ts.push("w0_1", vec![1.0 / 3.0, -1e-300, 6.02e23]).unwrap();
        assert!(ts.push("bad", vec![1.0]).is_err());
        let mut buf = Vec::new();
        ts.write_csv(&mut buf).unwrap();
        let back = TimeSeries::read_csv(&buf[..]).unwrap();
        assert_eq!(back, ts);
        assert!(TimeSeries::read_csv(&b"t,a\n1,2,3\n"[..]).is_err());
        assert!(TimeSeries::read_csv(&b"t,a\n1,x\n"[..]).is_err());
        assert!(TimeSeries::read_csv(&b"t,t\n"[..]).is_err());
        assert!(TimeSeries::read_csv(&b""[..]).is_err());
    }

    #[test]
    fn compare_interpolates_a_finer_sampling() {
        let period = 2.0;
        let mk = |n: usize, amp: f64| {
            let t: Vec<f64> = (0..n).map(|j| j as f64 * period / n as f64).collect();
            let x = t
                .iter()
                .map(|t| amp * (std::f64::consts::PI * t).sin())
                .collect();
            let mut ts = TimeSeries::new(t);
            ts.push("w0_1", x).unwrap();
            ts
        };
        let d = compare(&mk(64, 1.0), &mk(4096, 1.0)).unwrap();
        assert_eq!(d.len(), 1);
        assert!(d[0].max_rel_diff < 1e-5, "{d:?}");
        let d = compare(&mk(64, 1.0), &mk(64, 1.1)).unwrap();
        assert!((d[0].max_rel_diff - 0.1 / 1.1).abs() < 1e-12, "{d:?}");
        let mut other = mk(64, 1.0);
        other.names[1] = "x".into();
        assert!(compare(&mk(64, 1.0), &other).is_err());
    }
}
