//! Small helpers for writing and reading HDF5 result files with messages instead of panics,
//! and an atomic write (temporary file, sync, rename) so that a file under its final name is
//! always complete. Shared by every result writer of the workspace.

use hdf5::types::VarLenUnicode;
use std::ffi::{OsStr, OsString};
use std::path::Path;

/// An HDF5 error as a message.
pub fn h5(e: hdf5::Error) -> String {
    e.to_string()
}

/// Writes a UTF-8 string attribute.
pub fn put_str(loc: &hdf5::Location, name: &str, v: &str) -> Result<(), String> {
    let s: VarLenUnicode = v.parse().map_err(|e| format!("{e}"))?;
    loc.new_attr::<VarLenUnicode>()
        .create(name)
        .and_then(|a| a.write_scalar(&s))
        .map_err(h5)
}

/// Writes a scalar float attribute.
pub fn put_f64(loc: &hdf5::Location, name: &str, v: f64) -> Result<(), String> {
    loc.new_attr::<f64>()
        .create(name)
        .and_then(|a| a.write_scalar(&v))
        .map_err(h5)
}

/// Writes a scalar integer attribute.
pub fn put_i64(loc: &hdf5::Location, name: &str, v: i64) -> Result<(), String> {
    loc.new_attr::<i64>()
        .create(name)
        .and_then(|a| a.write_scalar(&v))
        .map_err(h5)
}

/// Writes a 1-D dataset (empty allowed).
pub fn put_1d<T: hdf5::H5Type>(g: &hdf5::Group, name: &str, v: &[T]) -> Result<(), String> {
    g.new_dataset::<T>()
        .shape([v.len()])
        .create(name)
        .and_then(|d| if v.is_empty() { Ok(()) } else { d.write_raw(v) })
        .map_err(h5)
}

/// Writes a row-major `rows x cols` dataset (empty allowed).
pub fn put_2d<T: hdf5::H5Type>(
    g: &hdf5::Group,
    name: &str,
    rows: usize,
    cols: usize,
    v: &[T],
) -> Result<(), String> {
    if v.len() != rows * cols {
        return Err(format!(
            "dataset {name}: {} values for shape [{rows}, {cols}]",
            v.len()
        ));
    }
    g.new_dataset::<T>()
        .shape([rows, cols])
        .create(name)
        .and_then(|d| if v.is_empty() { Ok(()) } else { d.write_raw(v) })
        .map_err(h5)
}

/// Writes a 1-D dataset of UTF-8 strings.
pub fn put_strs(g: &hdf5::Group, name: &str, v: &[String]) -> Result<(), String> {
    let s: Vec<VarLenUnicode> = v
        .iter()
        .map(|x| x.parse().map_err(|e| format!("{e}")))
        .collect::<Result<_, String>>()?;
    put_1d(g, name, &s)
}

/// Creates a group without time stamps, so that equal content gives equal files.
pub fn group(parent: &hdf5::Group, name: &str) -> Result<hdf5::Group, String> {
    parent
        .create_group_builder()
        .obj_track_times(false)
        .create(name)
        .map_err(h5)
}

/// Reads a string attribute.
pub fn get_str(loc: &hdf5::Location, name: &str) -> Result<String, String> {
    loc.attr(name)
        .and_then(|a| a.read_scalar::<VarLenUnicode>())
        .map(|s| s.as_str().to_string())
        .map_err(|e| format!("attribute {name}: {e}"))
}

/// Reads a scalar float attribute.
pub fn get_f64(loc: &hdf5::Location, name: &str) -> Result<f64, String> {
    loc.attr(name)
        .and_then(|a| a.read_scalar::<f64>())
        .map_err(|e| format!("attribute {name}: {e}"))
}

/// Reads a scalar integer attribute.
pub fn get_i64(loc: &hdf5::Location, name: &str) -> Result<i64, String> {
    loc.attr(name)
        .and_then(|a| a.read_scalar::<i64>())
        .map_err(|e| format!("attribute {name}: {e}"))
}

/// Reads a 1-D dataset.
pub fn get_1d<T: hdf5::H5Type>(g: &hdf5::Group, name: &str) -> Result<Vec<T>, String> {
    g.dataset(name)
        .and_then(|d| d.read_raw::<T>())
        .map_err(|e| format!("dataset {name}: {e}"))
}

/// Writes through a temporary file in the same folder, synced to disk and renamed at the
/// end: under its final name a file is always complete, whenever the process is killed.
/// Temporary files that killed processes left for the same target are removed first.
pub fn atomically(path: &Path, f: impl FnOnce(&Path) -> Result<(), String>) -> Result<(), String> {
    let name = path
        .file_name()
        .ok_or_else(|| format!("{}: not a file name", path.display()))?;
    let tmp = path.with_file_name(partial_name(name, std::process::id(), path.extension()));
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    if let Some(dir) = dir {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create folder {}: {e}", dir.display()))?;
    }
    remove_stale_partials(dir.unwrap_or(Path::new(".")), Some(name));
    let result = f(&tmp).and_then(|()| {
        std::fs::File::open(&tmp)
            .and_then(|f| f.sync_all())
            .map_err(|e| e.to_string())
    });
    match result {
        Ok(()) => {
            std::fs::rename(&tmp, path).map_err(|e| {
                let _ = std::fs::remove_file(&tmp);
                format!("cannot write {}: {e}", path.display())
            })?;
            if let Some(dir) = dir {
                // Make the rename itself durable; not all file systems allow this.
                let _ = std::fs::File::open(dir).and_then(|d| d.sync_all());
            }
            Ok(())
        }
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(format!("cannot write {}: {e}", path.display()))
        }
    }
}

/// `.NAME.PID.partial`, plus NAME's extension when it has one (plotters picks the image
/// format by the extension).
fn partial_name(name: &OsStr, pid: u32, ext: Option<&OsStr>) -> OsString {
    let mut s = OsString::from(".");
    s.push(name);
    s.push(format!(".{pid}.partial"));
    if let Some(ext) = ext {
        s.push(".");
        s.push(ext);
    }
    s
}

/// Removes from `dir` the temporary files of [`atomically`] whose writing process no longer
/// runs (a kill leaves them behind); with `target`, only those of that file name.
pub fn remove_stale_partials(dir: &Path, target: Option<&OsStr>) {
    // Without /proc there is no telling a live writer from a dead one: leave everything.
    if !Path::new("/proc/self").exists() {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let file = e.file_name();
        let file = file.to_string_lossy();
        let Some((name, pid)) = parse_partial(&file) else {
            continue;
        };
        if target.is_some_and(|t| t.to_string_lossy() != name) {
            continue;
        }
        let alive = pid == std::process::id() || Path::new(&format!("/proc/{pid}")).exists();
        if !alive {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// The target name and writer pid of a temporary file name made by [`partial_name`].
fn parse_partial(file: &str) -> Option<(&str, u32)> {
    let (front, _) = file.strip_prefix('.')?.rsplit_once(".partial")?;
    let (name, pid) = front.rsplit_once('.')?;
    Some((name, pid.parse().ok()?))
}

/// Creates (truncates) an HDF5 file.
pub fn create_h5(path: &Path) -> Result<hdf5::File, String> {
    hdf5::File::create(path).map_err(|e| format!("cannot create {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partial_names_round_trip_and_stale_ones_are_removed() {
        let n = partial_name(OsStr::new("fig.png"), 42, Some(OsStr::new("png")));
        assert_eq!(n, ".fig.png.42.partial.png");
        assert_eq!(
            parse_partial(".fig.png.42.partial.png"),
            Some(("fig.png", 42))
        );
        assert_eq!(parse_partial(".r.h5.7.partial"), Some(("r.h5", 7)));
        assert_eq!(parse_partial("r.h5"), None);
        let dir = tempfile::tempdir().unwrap();
        // A pid above the kernel's limit (2^22) is never alive.
        let dead = dir.path().join(".r.h5.99999999.partial");
        let mine = dir
            .path()
            .join(format!(".r.h5.{}.partial", std::process::id()));
        let other = dir.path().join(".s.h5.99999999.partial");
        for p in [&dead, &mine, &other] {
            std::fs::write(p, b"x").unwrap();
        }
        atomically(&dir.path().join("r.h5"), |tmp| {
            std::fs::write(tmp, b"done").map_err(|e| e.to_string())
        })
        .unwrap();
        assert!(!dead.exists(), "a dead writer's partial file is removed");
        assert!(
            other.exists(),
            "another target's partial file is left alone"
        );
        assert_eq!(std::fs::read(dir.path().join("r.h5")).unwrap(), b"done");
    }
}
