//! Where a run's time goes (`--profile`, issue 32): wall and CPU time per phase, summed over
//! every call, so that the serial parts of a run are visible on any machine. CPU time is the
//! process's (every thread), so a phase's CPU over its wall is the parallelism it got; with
//! several curves in parallel the phases overlap and the sums exceed the run's wall time.
//! Off unless [`enable`]d: a disabled span costs one relaxed atomic load.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

/// A phase of a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Phase {
    /// Reading the model file.
    Read,
    /// Building the receptance: sparse factorisation or modal extraction (once).
    Setup,
    /// Part of [`Phase::Setup`]: sparse Cholesky factorisations (symbolic and numeric).
    Factor,
    /// Part of [`Phase::Factor`]: the fill-reducing orderings and symbolic factorisations
    /// (METIS's nested dissection runs on one thread).
    Ordering,
    /// Part of [`Phase::Setup`]: the shift-invert Lanczos iterations of the modal extraction.
    Lanczos,
    /// Part of [`Phase::Lanczos`]: the solves with the shifted factor (blocks of vectors).
    LanczosSolve,
    /// Part of [`Phase::Lanczos`]: the basis's reorthogonalisation and orthonormalisation.
    Reorthogonalise,
    /// Part of [`Phase::Setup`]: the static residual flexibility at the contacts and forces.
    ResidualFlexibility,
    /// Condensing the structure at one frequency (`Z_h^{-1}` on the contact rows).
    Condense,
    /// The E-WR residual alone (trial points of the trust region).
    Residual,
    /// The residual with its dense Jacobian, and the dense LU.
    Jacobian,
    /// Building the matrix-free preconditioner (contact and harmonic blocks).
    Preconditioner,
    /// Part of [`Phase::Preconditioner`]: the LUs of the harmonic-averaged Jacobians.
    HarmonicFactor,
    /// Jacobian products and preconditioner applications inside GMRES.
    Krylov,
    /// Part of [`Phase::Krylov`]: the solves with the harmonic-averaged Jacobians' LUs.
    HarmonicSolve,
    /// Part of [`Phase::Krylov`]: the structure's part of a Jacobian product, `G_h` times the
    /// forces' harmonics (and a held contact's terms), before the contacts' pass.
    StructureProduct,
    /// Part of [`Phase::Krylov`]: the contacts' pass of a Jacobian product (each contact's
    /// signals sampled, the law's derivatives applied, projected, its preconditioner block).
    ContactPass,
    /// Histories, summaries and monitored DOFs of a solution.
    Post,
    /// Floquet multipliers of solutions (Hill's method): the law linearised, the pencil
    /// built, shifted, factorised and its eigenvalues near the axis found.
    Stability,
    /// Part of [`Phase::Stability`]: the shifted pencil's LUs (per harmonic, and the forces'
    /// Schur complement).
    StabilityFactor,
    /// Part of [`Phase::Stability`]: the eigensolve on the shifted operator (dense, or
    /// Arnoldi with its solves).
    StabilityEigen,
    /// Writing results.
    Output,
}

const PHASES: [Phase; 22] = [
    Phase::Read,
    Phase::Setup,
    Phase::Factor,
    Phase::Ordering,
    Phase::Lanczos,
    Phase::LanczosSolve,
    Phase::Reorthogonalise,
    Phase::ResidualFlexibility,
    Phase::Condense,
    Phase::Residual,
    Phase::Jacobian,
    Phase::Preconditioner,
    Phase::HarmonicFactor,
    Phase::Krylov,
    Phase::HarmonicSolve,
    Phase::StructureProduct,
    Phase::ContactPass,
    Phase::Post,
    Phase::Stability,
    Phase::StabilityFactor,
    Phase::StabilityEigen,
    Phase::Output,
];

impl Phase {
    /// Its name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Read => "read model",
            Phase::Setup => "receptance setup",
            Phase::Factor => "factorisation",
            Phase::Ordering => "ordering",
            Phase::Lanczos => "Lanczos",
            Phase::LanczosSolve => "factor solves",
            Phase::Reorthogonalise => "reorthogonalisation",
            Phase::ResidualFlexibility => "residual flexibility",
            Phase::Condense => "condensation",
            Phase::Residual => "residual",
            Phase::Jacobian => "jacobian + LU",
            Phase::Preconditioner => "preconditioner build",
            Phase::HarmonicFactor => "harmonic LUs",
            Phase::Krylov => "GMRES products",
            Phase::HarmonicSolve => "harmonic LU solves",
            Phase::StructureProduct => "receptance products",
            Phase::ContactPass => "contacts' pass",
            Phase::Post => "post-processing",
            Phase::Stability => "stability",
            Phase::StabilityFactor => "shifted pencil LUs",
            Phase::StabilityEigen => "eigensolve",
            Phase::Output => "output",
        }
    }

    /// The phase this one is a part of (its time is included there).
    pub fn part_of(self) -> Option<Phase> {
        match self {
            Phase::Factor | Phase::Lanczos | Phase::ResidualFlexibility => Some(Phase::Setup),
            Phase::Ordering => Some(Phase::Factor),
            Phase::LanczosSolve | Phase::Reorthogonalise => Some(Phase::Lanczos),
            Phase::HarmonicFactor => Some(Phase::Preconditioner),
            Phase::HarmonicSolve | Phase::StructureProduct | Phase::ContactPass => {
                Some(Phase::Krylov)
            }
            Phase::StabilityFactor | Phase::StabilityEigen => Some(Phase::Stability),
            _ => None,
        }
    }

    fn index(self) -> usize {
        PHASES
            .iter()
            .position(|&p| p == self)
            .expect("every phase is listed")
    }
}

static ON: AtomicBool = AtomicBool::new(false);
static WALL_NS: [AtomicU64; PHASES.len()] = [const { AtomicU64::new(0) }; PHASES.len()];
static CPU_NS: [AtomicU64; PHASES.len()] = [const { AtomicU64::new(0) }; PHASES.len()];
static CALLS: [AtomicU64; PHASES.len()] = [const { AtomicU64::new(0) }; PHASES.len()];

static NOTES: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Records a line about a choice the run made (e.g. the fill-reducing ordering), printed
/// under the table; nothing when not enabled.
pub fn note(line: impl FnOnce() -> String) {
    if ON.load(Ordering::Relaxed) {
        NOTES.lock().unwrap_or_else(|e| e.into_inner()).push(line());
    }
}

/// The lines recorded by [`note`], in order.
pub fn notes() -> Vec<String> {
    NOTES.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

static COUNTS: Mutex<Vec<(&'static str, u64)>> = Mutex::new(Vec::new());

/// Counts one more of a choice a run makes many times (e.g. a harmonic LU kept in single
/// precision, or one that fell back to double), printed under the table as `what: count`;
/// nothing when not enabled.
pub fn count(what: &'static str) {
    count_n(what, 1);
}

/// Adds `n` to the count of `what` (a quantity rather than an event: vectors, passes).
pub fn count_n(what: &'static str, n: u64) {
    if ON.load(Ordering::Relaxed) {
        let mut counts = COUNTS.lock().unwrap_or_else(|e| e.into_inner());
        match counts.iter_mut().find(|(w, _)| *w == what) {
            Some((_, c)) => *c += n,
            None => counts.push((what, n)),
        }
    }
}

/// The counts of [`count`] and [`count_n`], in the order first counted.
pub fn counts() -> Vec<(&'static str, u64)> {
    COUNTS.lock().unwrap_or_else(|e| e.into_inner()).clone()
}

/// Starts recording (for the rest of the process).
pub fn enable() {
    ON.store(true, Ordering::Relaxed);
}

/// The process's CPU time (all threads), in nanoseconds.
fn process_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_PROCESS_CPUTIME_ID is always there
    // on Linux, and on failure `ts` stays zero (the phase then reads no CPU time).
    unsafe {
        libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts);
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// A phase being timed; its time is added when it is dropped.
pub struct Span {
    phase: usize,
    wall: Instant,
    cpu: u64,
}

impl Drop for Span {
    fn drop(&mut self) {
        let wall = self.wall.elapsed().as_nanos() as u64;
        let cpu = process_cpu_ns().saturating_sub(self.cpu);
        WALL_NS[self.phase].fetch_add(wall, Ordering::Relaxed);
        CPU_NS[self.phase].fetch_add(cpu, Ordering::Relaxed);
        CALLS[self.phase].fetch_add(1, Ordering::Relaxed);
    }
}

/// Times `phase` until the returned span is dropped; `None` (no cost) when not enabled.
#[must_use = "the phase is timed until the span is dropped"]
pub fn span(phase: Phase) -> Option<Span> {
    ON.load(Ordering::Relaxed).then(|| Span {
        phase: phase.index(),
        wall: Instant::now(),
        cpu: process_cpu_ns(),
    })
}

/// One phase's totals.
#[derive(Clone, Debug, serde::Serialize)]
pub struct PhaseTime {
    /// The phase's name.
    pub phase: &'static str,
    /// How many times it ran.
    pub calls: u64,
    /// Wall time summed over its calls, s.
    pub wall_s: f64,
    /// Process CPU time during its calls, s.
    pub cpu_s: f64,
    /// The phase it is a part of, if any (its time is included there).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub part_of: Option<&'static str>,
}

/// The phases that ran, in pipeline order; a part of a phase follows it.
pub fn report() -> Vec<PhaseTime> {
    PHASES
        .iter()
        .enumerate()
        .filter(|(i, _)| CALLS[*i].load(Ordering::Relaxed) > 0)
        .map(|(i, p)| PhaseTime {
            phase: p.name(),
            calls: CALLS[i].load(Ordering::Relaxed),
            wall_s: WALL_NS[i].load(Ordering::Relaxed) as f64 * 1e-9,
            cpu_s: CPU_NS[i].load(Ordering::Relaxed) as f64 * 1e-9,
            part_of: p.part_of().map(Phase::name),
        })
        .collect()
}

/// How many phases the phase named `name` is a part of, through its parents.
fn depth(name: &str) -> usize {
    let mut phase = PHASES.iter().find(|p| p.name() == name).copied();
    let mut d = 0;
    while let Some(parent) = phase.and_then(Phase::part_of) {
        d += 1;
        phase = Some(parent);
    }
    d
}

/// The report as a table, with each phase's share of `total_wall_s` and its parallelism
/// (CPU over wall).
pub fn table(total_wall_s: f64) -> String {
    let mut out = format!(
        "{:<22} {:>9} {:>10} {:>7} {:>10} {:>8}\n",
        "phase", "calls", "wall s", "share", "cpu s", "cpu/wall"
    );
    for p in report() {
        out.push_str(&format!(
            "{:<22} {:>9} {:>10.3} {:>6.1}% {:>10.3} {:>8.2}\n",
            // Parts are indented under the phase they belong to, two spaces a level.
            format!("{}{}", "  ".repeat(depth(p.phase)), p.phase),
            p.calls,
            p.wall_s,
            100.0 * p.wall_s / total_wall_s.max(1e-12),
            p.cpu_s,
            if p.wall_s > 0.0 {
                p.cpu_s / p.wall_s
            } else {
                0.0
            }
        ));
    }
    out.push_str(&format!(
        "{:<22} {:>9} {:>10.3} (threads: {})\n",
        "run",
        "",
        total_wall_s,
        rayon::current_num_threads()
    ));
    for line in notes() {
        out.push_str(&line);
        out.push('\n');
    }
    for (what, n) in counts() {
        out.push_str(&format!("{what}: {n}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_add_up_in_the_order_first_counted() {
        enable();
        for _ in 0..3 {
            count("test: kept");
        }
        count("test: fell back");
        let c = counts();
        let kept = c.iter().position(|(w, n)| *w == "test: kept" && *n == 3);
        let back = c
            .iter()
            .position(|(w, n)| *w == "test: fell back" && *n == 1);
        assert!(kept.is_some() && back.is_some() && kept < back, "{c:?}");
    }

    #[test]
    fn spans_add_up_when_enabled() {
        enable();
        for _ in 0..3 {
            let _s = span(Phase::Output);
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        let r = report();
        let out = r.iter().find(|p| p.phase == "output").unwrap();
        assert_eq!(out.calls, 3);
        assert!(out.wall_s >= 0.006, "{out:?}");
        assert!(table(1.0).contains("output"));
        // A part of the setup is reported as such and indented in the table.
        drop(span(Phase::Lanczos));
        let r = report();
        let l = r.iter().find(|p| p.phase == "Lanczos").unwrap();
        assert_eq!(l.part_of, Some("receptance setup"));
        assert!(table(1.0).contains("\n  Lanczos"));
        // A part of a part, two levels in.
        drop(span(Phase::LanczosSolve));
        assert!(table(1.0).contains("\n    factor solves"));
        note(|| "a choice".into());
        assert!(table(1.0).contains("\na choice\n"));
    }
}
