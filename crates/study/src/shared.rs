//! One condensation per distinct structure among a run's cases: cases that differ only in
//! friction (`mu_n`, `mu`), `rho`, law or harmonics share the receptance, which for a large
//! model is a modal extraction of minutes (as `ewr frc` shares one across its `--mu-n`
//! curves).

use ewr_hb::receptance::Receptance;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// A structure's receptance once built, and how many of the run's cases still need it.
type Entry = (Option<Arc<Receptance>>, usize);

/// Receptances by structure key, built by the first case that needs one and dropped when the
/// last case that needs it is done, so that memory holds only the structures in flight.
///
/// A case never waits for another's build: the condensation runs rayon kernels inside the
/// study's own pool, where a waiting worker may pick up a case of the same structure and
/// would then wait on itself. Two cases of one structure that start at the same moment may
/// therefore both build it (the first finished is kept); every later case reuses it. The run
/// builds the first case's structure before any case starts (`run`), so that a study with one
/// structure, the common one, condenses it once.
#[derive(Default)]
pub struct Receptances {
    entries: Mutex<HashMap<String, Entry>>,
    built: AtomicUsize,
}

impl Receptances {
    /// A cache for cases with these structure keys (one per case, repeats counted).
    pub fn new<'a>(keys: impl IntoIterator<Item = &'a str>) -> Self {
        let mut entries: HashMap<String, Entry> = HashMap::new();
        for k in keys {
            entries.entry(k.to_string()).or_default().1 += 1;
        }
        Receptances {
            entries: Mutex::new(entries),
            built: AtomicUsize::new(0),
        }
    }

    /// The receptance of structure `key`, built by `build` if none is cached yet.
    pub fn get(
        &self,
        key: &str,
        build: impl FnOnce() -> Result<Receptance, String>,
    ) -> Result<Arc<Receptance>, String> {
        let lock = || self.entries.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((Some(r), _)) = lock().get(key) {
            return Ok(r.clone());
        }
        // Built outside the lock (see the type's note).
        let fresh = Arc::new(build()?);
        self.built.fetch_add(1, Ordering::SeqCst);
        let mut map = lock();
        let entry = map.entry(key.to_string()).or_insert((None, 1));
        Ok(entry.0.get_or_insert(fresh).clone())
    }

    /// A case of structure `key` is finished: the receptance is released after the last.
    pub fn done(&self, key: &str) {
        let mut map = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(e) = map.get_mut(key) {
            e.1 = e.1.saturating_sub(1);
            if e.1 == 0 {
                map.remove(key);
            }
        }
    }

    /// Receptances built so far.
    pub fn built(&self) -> usize {
        self.built.load(Ordering::SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_structure_is_built_once_and_released_after_its_last_case() {
        let model = ewr_model::examples::oscillator_2d();
        let build = || {
            Receptance::new(&model, ewr_hb::receptance::ReceptanceKind::Dense)
                .map_err(|e| e.to_string())
        };
        let keys = ["a", "b", "a", "a"];
        let cache = Receptances::new(keys);
        let first = cache.get("a", build).unwrap();
        let again = cache.get("a", build).unwrap();
        assert!(Arc::ptr_eq(&first, &again));
        cache.get("b", build).unwrap();
        assert_eq!(cache.built(), 2);
        for k in keys {
            cache.done(k);
        }
        assert!(cache.entries.lock().unwrap().is_empty());
        drop(again);
        assert_eq!(Arc::strong_count(&first), 1, "only the caller holds it now");
    }
}
