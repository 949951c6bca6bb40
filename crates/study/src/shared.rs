//! One condensation per distinct structure among a run's cases: cases that differ only in
//! friction (`mu_n`, `mu`), `rho`, law or harmonics share the receptance, which for a large
//! model is a modal extraction of minutes (as `ewr frc` shares one across its `--mu-n`
//! curves); cases that differ in their loads alone (forcing scale, normal preload) share the
//! modes.

use ewr_hb::receptance::Receptance;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// A structure's receptance once built, and how many of the run's cases still need it.
type Entry = (Option<Arc<Receptance>>, usize);

/// Receptances by structure key, built by the first case that needs one and dropped when the
/// last case that needs it is done, so that memory holds only the structures in flight.
///
/// Structures whose dynamics are the same (their keys differ in the forcing scale or the
/// normal preload alone: a family) share the modes: a member is derived from one already
/// built ([`Receptance::with_forcing`]), and one member whose modes can be lent is kept
/// until the family's last case is done (`run` runs a family's cases one after another).
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
    /// Per family (dynamics key): a member built, and the family's cases still to finish.
    families: Mutex<HashMap<String, Entry>>,
    built: AtomicUsize,
}

impl Receptances {
    /// A cache for cases with these `(structure key, family)` pairs (one per case, repeats
    /// counted).
    pub fn new<'a>(keys: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        let mut entries: HashMap<String, Entry> = HashMap::new();
        let mut families: HashMap<String, Entry> = HashMap::new();
        for (k, f) in keys {
            entries.entry(k.to_string()).or_default().1 += 1;
            families.entry(f.to_string()).or_default().1 += 1;
        }
        Receptances {
            entries: Mutex::new(entries),
            families: Mutex::new(families),
            built: AtomicUsize::new(0),
        }
    }

    /// The receptance of structure `key` (of `family`), built by `build` if none is cached
    /// yet. `build` is given a member of the family already built, if any, and says whether
    /// it derived the receptance from it (`true`) or built it from the model.
    pub fn get(
        &self,
        key: &str,
        family: &str,
        build: impl FnOnce(Option<Arc<Receptance>>) -> Result<(Receptance, bool), String>,
    ) -> Result<Arc<Receptance>, String> {
        let lock = || self.entries.lock().unwrap_or_else(|e| e.into_inner());
        let families = || self.families.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((Some(r), _)) = lock().get(key) {
            return Ok(r.clone());
        }
        let member = families().get(family).and_then(|f| f.0.clone());
        // Built outside the lock (see the type's note).
        let (fresh, derived) = build(member)?;
        let fresh = Arc::new(fresh);
        if !derived {
            self.built.fetch_add(1, Ordering::SeqCst);
        }
        // Kept for the family only where a member can lend its modes.
        if fresh.keeps_modes_for_other_forcing() {
            let mut fam = families();
            let entry = fam.entry(family.to_string()).or_insert((None, 1));
            entry.0.get_or_insert_with(|| fresh.clone());
        }
        let mut map = lock();
        let entry = map.entry(key.to_string()).or_insert((None, 1));
        Ok(entry.0.get_or_insert(fresh).clone())
    }

    /// A case of structure `key` (of `family`) is finished: the receptance is released after
    /// the last of its structure, the family's member after the family's last.
    pub fn done(&self, key: &str, family: &str) {
        let release = |map: &Mutex<HashMap<String, Entry>>, k: &str| {
            let mut map = map.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(e) = map.get_mut(k) {
                e.1 = e.1.saturating_sub(1);
                if e.1 == 0 {
                    map.remove(k);
                }
            }
        };
        release(&self.entries, key);
        release(&self.families, family);
    }

    /// Receptances built from the model so far (those derived from a family's member not
    /// counted).
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
        let build = |member: Option<Arc<Receptance>>| {
            assert!(member.is_none(), "no key shares a family here");
            Receptance::new(&model, ewr_hb::receptance::ReceptanceKind::Dense)
                .map(|r| (r, false))
                .map_err(|e| e.to_string())
        };
        let keys = [("a", "a"), ("b", "b"), ("a", "a"), ("a", "a")];
        let cache = Receptances::new(keys);
        let first = cache.get("a", "a", build).unwrap();
        let again = cache.get("a", "a", build).unwrap();
        assert!(Arc::ptr_eq(&first, &again));
        cache.get("b", "b", build).unwrap();
        assert_eq!(cache.built(), 2);
        for (k, f) in keys {
            cache.done(k, f);
        }
        assert!(cache.entries.lock().unwrap().is_empty());
        assert!(cache.families.lock().unwrap().is_empty());
        drop(again);
        assert_eq!(Arc::strong_count(&first), 1, "only the caller holds it now");
    }

    /// A structure whose family has a member built is given it to derive from, and the member
    /// outlives its own structure's cases while the family has cases left.
    #[test]
    fn a_family_s_member_is_lent_and_kept_until_the_family_s_last_case() {
        let model = ewr_model::examples::oscillator_2d();
        let build = |derived: bool| {
            Receptance::new(
                &model,
                ewr_hb::receptance::ReceptanceKind::Modal { modes: 2 },
            )
            .map(|r| (r, derived))
            .map_err(|e| e.to_string())
        };
        let cache = Receptances::new([("f=1", ""), ("f=2", ""), ("f=3", "")]);
        let first = cache.get("f=1", "", |m| {
            assert!(m.is_none());
            build(false)
        });
        let first = first.unwrap();
        cache.done("f=1", "");
        let lent = std::sync::Mutex::new(None);
        cache
            .get("f=2", "", |m| {
                *lent.lock().unwrap() = m;
                build(true)
            })
            .unwrap();
        assert_eq!(cache.built(), 1, "the derived one is not counted");
        let lent = lent
            .into_inner()
            .unwrap()
            .expect("the family's member is lent");
        assert!(
            Arc::ptr_eq(&lent, &first),
            "the first member, kept after its case"
        );
        cache.done("f=2", "");
        cache.done("f=3", "");
        assert!(cache.families.lock().unwrap().is_empty());
        drop(lent);
        assert_eq!(
            Arc::strong_count(&first),
            1,
            "released after the family's last case"
        );
    }

    /// A member whose modes cannot be lent (a direct backend, built anew for another
    /// forcing) is not kept for its family.
    #[test]
    fn a_member_that_cannot_lend_its_modes_is_not_kept() {
        let model = ewr_model::examples::oscillator_2d();
        let cache = Receptances::new([("f=1", ""), ("f=2", "")]);
        let first = cache
            .get("f=1", "", |_| {
                Receptance::new(&model, ewr_hb::receptance::ReceptanceKind::Dense)
                    .map(|r| (r, false))
                    .map_err(|e| e.to_string())
            })
            .unwrap();
        cache.done("f=1", "");
        assert_eq!(Arc::strong_count(&first), 1);
    }
}
