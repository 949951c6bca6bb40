//! Splitting a study over several processes (e.g. a Slurm job array).

use std::fmt;
use std::str::FromStr;

/// Shard `index` of `count` (1-based: `1/4` .. `4/4`). Case `i` belongs to shard
/// `i % count + 1`: round robin, so neighbouring (similar-cost) grid cases spread evenly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// Which shard, from 1.
    pub index: usize,
    /// How many shards.
    pub count: usize,
}

impl Shard {
    /// True when case `i` is this shard's.
    pub fn owns(&self, case: usize) -> bool {
        case % self.count + 1 == self.index
    }

    /// The shard of a Slurm array task, from `SLURM_ARRAY_TASK_ID`, `SLURM_ARRAY_TASK_COUNT`
    /// and `SLURM_ARRAY_TASK_MIN` (the array must be contiguous with step 1, e.g.
    /// `--array=1-8` or `--array=0-7`). `None` outside a job array.
    pub fn from_env(get: impl Fn(&str) -> Option<String>) -> Result<Option<Shard>, String> {
        let Some(id) = get("SLURM_ARRAY_TASK_ID") else {
            return Ok(None);
        };
        let num = |name: &str, v: Option<String>| -> Result<Option<usize>, String> {
            v.map(|s| {
                s.trim()
                    .parse::<usize>()
                    .map_err(|_| format!("{name}={s:?} is not a non-negative integer"))
            })
            .transpose()
        };
        let id = num("SLURM_ARRAY_TASK_ID", Some(id))?.expect("given");
        let count = num("SLURM_ARRAY_TASK_COUNT", get("SLURM_ARRAY_TASK_COUNT"))?
            .ok_or("SLURM_ARRAY_TASK_ID is set but SLURM_ARRAY_TASK_COUNT is not")?;
        let min = num("SLURM_ARRAY_TASK_MIN", get("SLURM_ARRAY_TASK_MIN"))?.unwrap_or(1);
        if id < min || id - min >= count || count == 0 {
            return Err(format!(
                "Slurm array task {id} (min {min}, count {count}) is not in a contiguous array \
                 with step 1: give --shard I/N"
            ));
        }
        Ok(Some(Shard {
            index: id - min + 1,
            count,
        }))
    }
}

impl FromStr for Shard {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || format!("shard {s:?}: expected I/N with 1 <= I <= N, e.g. 2/8");
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let (index, count) = (
            i.trim().parse::<usize>().map_err(|_| bad())?,
            n.trim().parse::<usize>().map_err(|_| bad())?,
        );
        if index == 0 || index > count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_partition_the_cases() {
        let n = 4;
        for case in 0..23 {
            let owners = (1..=n)
                .filter(|&i| Shard { index: i, count: n }.owns(case))
                .count();
            assert_eq!(owners, 1);
        }
        assert_eq!(
            "3/4".parse::<Shard>().unwrap(),
            Shard { index: 3, count: 4 }
        );
        assert!("0/4".parse::<Shard>().is_err());
        assert!("5/4".parse::<Shard>().is_err());
        assert!("x".parse::<Shard>().is_err());
    }

    #[test]
    fn slurm_environment() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                vars.iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        assert_eq!(Shard::from_env(env(&[])).unwrap(), None);
        let one_based = env(&[
            ("SLURM_ARRAY_TASK_ID", "3"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
            ("SLURM_ARRAY_TASK_MIN", "1"),
        ]);
        assert_eq!(
            Shard::from_env(one_based).unwrap(),
            Some(Shard { index: 3, count: 4 })
        );
        let zero_based = env(&[
            ("SLURM_ARRAY_TASK_ID", "0"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
            ("SLURM_ARRAY_TASK_MIN", "0"),
        ]);
        assert_eq!(
            Shard::from_env(zero_based).unwrap(),
            Some(Shard { index: 1, count: 4 })
        );
        let gap = env(&[
            ("SLURM_ARRAY_TASK_ID", "9"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
            ("SLURM_ARRAY_TASK_MIN", "1"),
        ]);
        assert!(Shard::from_env(gap).is_err());
    }
}
