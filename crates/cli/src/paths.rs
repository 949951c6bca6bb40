//! The files a command reads and writes, checked together before any work: an output never
//! names an input (by any spelling: `..`, a symlink, a hard link), two outputs never name the
//! same file, and outputs are only ever regular files (root could otherwise replace
//! `/dev/null`). A refusal is exit 2 and nothing has been computed or written yet.

use crate::Failure;
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

/// One file of a command, named by the option that gave it (for messages).
pub struct Named<'a> {
    /// The option or argument, e.g. `-o` or `MODEL`.
    pub option: &'a str,
    /// The path as given.
    pub path: &'a Path,
}

/// Shorthand for a [`Named`] file.
pub fn named<'a>(option: &'a str, path: &'a Path) -> Named<'a> {
    Named { option, path }
}

/// How a file is recognised: the device and inode when it exists (hard links, symlinks), and
/// its absolute path with every existing ancestor resolved (files not written yet).
#[derive(PartialEq, Eq)]
struct Identity {
    inode: Option<(u64, u64)>,
    resolved: PathBuf,
}

fn identity(path: &Path) -> Identity {
    let inode = std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()));
    Identity {
        inode,
        resolved: resolve(path),
    }
}

impl Identity {
    fn same(&self, other: &Identity) -> bool {
        matches!((self.inode, other.inode), (Some(a), Some(b)) if a == b)
            || self.resolved == other.resolved
    }
}

/// The absolute path with the longest existing ancestor canonicalised (symlinks and `..`
/// resolved) and the rest normalised lexically.
fn resolve(path: &Path) -> PathBuf {
    let abs = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut existing = abs.as_path();
    let mut rest = Vec::new();
    loop {
        if let Ok(c) = existing.canonicalize() {
            let mut out = c;
            for part in rest.iter().rev() {
                match part {
                    Component::ParentDir => {
                        out.pop();
                    }
                    Component::CurDir => {}
                    other => out.push(other.as_os_str()),
                }
            }
            return out;
        }
        match (existing.parent(), existing.components().next_back()) {
            (Some(parent), Some(last)) => {
                rest.push(last);
                existing = parent;
            }
            _ => return abs,
        }
    }
}

/// What kind of file `meta` describes, for the refusal of non-regular outputs.
fn kind_of(meta: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = meta.file_type();
    if t.is_dir() {
        "a directory"
    } else if t.is_char_device() || t.is_block_device() {
        "a device"
    } else if t.is_fifo() {
        "a named pipe"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

/// Checks a command's files before any work: exit 2 if an output is an input, if two outputs
/// are the same file, or if an output exists and is not a regular file.
pub fn check(inputs: &[Named<'_>], outputs: &[Named<'_>]) -> Result<(), Failure> {
    let ins: Vec<Identity> = inputs.iter().map(|f| identity(f.path)).collect();
    let outs: Vec<Identity> = outputs.iter().map(|f| identity(f.path)).collect();
    for (o, id) in outputs.iter().zip(&outs) {
        if let Ok(meta) = std::fs::metadata(o.path)
            && !meta.is_file()
        {
            return Err(Failure::input(format!(
                "{} {}: {}; ewr writes results only to regular files",
                o.option,
                o.path.display(),
                kind_of(&meta)
            )));
        }
        if let Some((i, _)) = inputs.iter().zip(&ins).find(|(_, iid)| iid.same(id)) {
            return Err(Failure::input(format!(
                "{} {} is the input {} {}: ewr never overwrites its input; choose another \
                 output name",
                o.option,
                o.path.display(),
                i.option,
                i.path.display()
            )));
        }
    }
    for (a, (fa, ia)) in outputs.iter().zip(&outs).enumerate() {
        if let Some((fb, _)) = outputs
            .iter()
            .zip(&outs)
            .skip(a + 1)
            .find(|(_, ib)| ib.same(ia))
        {
            return Err(Failure::input(format!(
                "{} {} and {} {} are the same file: give each output its own name",
                fa.option,
                fa.path.display(),
                fb.option,
                fb.path.display()
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_of_one_file_are_one_identity() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::create_dir(d.join("sub")).unwrap();
        std::fs::write(d.join("m.h5"), b"x").unwrap();
        std::os::unix::fs::symlink(d.join("m.h5"), d.join("link.h5")).unwrap();
        std::fs::hard_link(d.join("m.h5"), d.join("hard.h5")).unwrap();
        let m = identity(&d.join("m.h5"));
        for other in ["sub/../m.h5", "./m.h5", "link.h5", "hard.h5"] {
            assert!(identity(&d.join(other)).same(&m), "{other}");
        }
        assert!(!identity(&d.join("n.h5")).same(&m));
        // Files that do not exist yet, in folders that do not exist yet.
        let a = identity(&d.join("new/x/../out.h5"));
        assert!(a.same(&identity(&d.join("new/out.h5"))));
        assert!(!a.same(&identity(&d.join("new/other.h5"))));
    }

    #[test]
    fn refuses_input_as_output_duplicates_and_devices() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("m.h5"), b"x").unwrap();
        let model = d.join("m.h5");
        let dotted = d.join("./m.h5");
        let e = check(&[named("MODEL", &model)], &[named("-o", &dotted)]).unwrap_err();
        assert_eq!(e.code, 2);
        assert!(
            e.message.contains("never overwrites its input"),
            "{}",
            e.message
        );
        let x = d.join("x.h5");
        let e = check(&[], &[named("-o", &x), named("--csv", &x)]).unwrap_err();
        assert!(e.message.contains("same file"), "{}", e.message);
        let e = check(&[], &[named("-o", Path::new("/dev/null"))]).unwrap_err();
        assert!(e.message.contains("a device"), "{}", e.message);
        let e = check(&[], &[named("-o", d)]).unwrap_err();
        assert!(e.message.contains("a directory"), "{}", e.message);
        assert!(check(&[named("MODEL", &model)], &[named("-o", &x)]).is_ok());
    }
}
