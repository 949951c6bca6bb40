//! Progress bars for long work, on stderr and only when stderr is a terminal (so that logs
//! and CI output stay clean).

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;

/// A bar counting `len` items of `what`; hidden when stderr is not a terminal.
pub fn bar(len: u64, what: &str) -> ProgressBar {
    let pb = ProgressBar::new(len);
    if std::io::stderr().is_terminal() {
        pb.set_draw_target(ProgressDrawTarget::stderr());
        let template =
            format!("{{elapsed_precise}} [{{bar:40}}] {{pos}}/{{len}} {what} ({{eta}} left)");
        if let Ok(style) = ProgressStyle::with_template(&template) {
            pb.set_style(style.progress_chars("=> "));
        }
    } else {
        pb.set_draw_target(ProgressDrawTarget::hidden());
    }
    pb
}

/// A counter of `what` for work whose length is not known ahead (a sweep that may stop at a
/// fold or follow adaptive steps); hidden when stderr is not a terminal.
pub fn counter(what: &str) -> ProgressBar {
    let pb = ProgressBar::new_spinner();
    if std::io::stderr().is_terminal() {
        pb.set_draw_target(ProgressDrawTarget::stderr());
        let template = format!("{{elapsed_precise}} {{spinner}} {{pos}} {what}");
        if let Ok(style) = ProgressStyle::with_template(&template) {
            pb.set_style(style);
        }
    } else {
        pb.set_draw_target(ProgressDrawTarget::hidden());
    }
    pb
}

/// Peak resident memory of this process in MB (`VmHWM` of `/proc/self/status`), for sizing
/// runs on large models; `None` where the kernel does not report it.
pub fn peak_memory_mb() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}
