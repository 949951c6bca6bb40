//! Ctrl-C and SIGTERM during a sweep: the first one asks the sweep to stop after the points
//! being computed, so that every point is written (CSV, HDF5, figure) and `--resume` can
//! continue; a second one quits at once (outputs already on disk stay intact: they are
//! written through temporary files).

use std::sync::atomic::{AtomicBool, Ordering};

static REQUESTED: AtomicBool = AtomicBool::new(false);

/// Installs the handler (SIGINT, SIGTERM, SIGHUP). Only commands that poll [`requested`]
/// install it: elsewhere the default (quit at once) is right.
pub fn install() {
    // Failure (a handler already installed) leaves the default behaviour, which loses only
    // the points of the current run that were not yet written.
    let _ = ctrlc::set_handler(|| {
        if REQUESTED.swap(true, Ordering::SeqCst) {
            eprintln!("ewr: interrupted again, quitting now");
            std::process::exit(130);
        }
        eprintln!(
            "ewr: interrupted: finishing the points under way and writing every point computed \
             (interrupt again to quit at once)"
        );
    });
}

/// True once an interrupt was received.
pub fn requested() -> bool {
    REQUESTED.load(Ordering::SeqCst)
}

/// A flag that follows [`requested`], for library code that takes a stop flag of its own
/// (simulations, studies): a thread polls the interrupt every 50 ms until the flag is set or
/// dropped by everyone else.
pub fn flag() -> std::sync::Arc<AtomicBool> {
    let flag = std::sync::Arc::new(AtomicBool::new(false));
    let watched = std::sync::Arc::downgrade(&flag);
    std::thread::spawn(move || {
        while let Some(f) = watched.upgrade() {
            if requested() {
                f.store(true, Ordering::SeqCst);
                return;
            }
            drop(f);
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    });
    flag
}
