//! Claims on output files, so that two runs writing the same result (two `ewr frc -o X`, a
//! study and a merge into the same file, Python beside the command line) do not interleave
//! rows or silently replace each other's result: the second is refused before any work,
//! naming the holder. And a probe of each output's folder before any work, so that a
//! read-only file system or a name too long for its temporary file is found at once rather
//! than after the whole sweep.

use std::fs::File;
use std::io::{Read, Seek, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// An exclusive claim on one output file, released (and its lock file removed) when dropped.
/// The claim is an advisory lock (`flock`) on `.NAME.lock` beside the output, so it dies with
/// its process however that ends.
#[derive(Debug)]
pub struct OutputLock {
    file: File,
    path: PathBuf,
}

impl Drop for OutputLock {
    fn drop(&mut self) {
        // Removed while still held: a waiter that opened it meanwhile sees another inode at
        // the path and opens afresh (see `claim`).
        let _ = std::fs::remove_file(&self.path);
        let _ = self.file.unlock();
    }
}

/// `.NAME.lock` beside `output`.
fn lock_path(output: &Path) -> PathBuf {
    let name = output
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    output.with_file_name(format!(".{name}.lock"))
}

/// Claims `output` for this process, or says who holds it.
pub fn claim(output: &Path) -> Result<OutputLock, String> {
    let path = lock_path(output);
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create folder {}: {e}", dir.display()))?;
    }
    // A holder that finishes removes the lock file; the waiter that opened it before must not
    // hold a lock on a file no longer at the path, so it checks the inode and retries.
    for _ in 0..100 {
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| format!("cannot claim {}: {e}", output.display()))?;
        match file.try_lock() {
            Ok(()) => {
                let same = match (file.metadata(), std::fs::metadata(&path)) {
                    (Ok(a), Ok(b)) => a.ino() == b.ino() && a.dev() == b.dev(),
                    _ => false,
                };
                if !same {
                    continue;
                }
                let me = format!("pid {}", std::process::id());
                let _ = file.set_len(0);
                let _ = file.rewind();
                let _ = file.write_all(me.as_bytes());
                let _ = file.flush();
                return Ok(OutputLock { file, path });
            }
            Err(std::fs::TryLockError::WouldBlock) => {
                let mut holder = String::new();
                let _ = file.read_to_string(&mut holder);
                return Err(format!(
                    "{} is being written by another running ewr ({}): wait for it to finish or \
                     write to another file",
                    output.display(),
                    if holder.trim().is_empty() {
                        "holder unknown"
                    } else {
                        holder.trim()
                    }
                ));
            }
            Err(std::fs::TryLockError::Error(e)) => {
                return Err(format!("cannot claim {}: {e}", output.display()));
            }
        }
    }
    Err(format!(
        "cannot claim {}: its lock file keeps changing",
        output.display()
    ))
}

/// Checks that `output` can be written where it goes, as the writers will write it: a
/// temporary file beside it (the longest name a writer uses) is created and removed.
pub fn probe_writable(output: &Path) -> Result<(), String> {
    let name = output
        .file_name()
        .ok_or_else(|| format!("{}: not a file name", output.display()))?
        .to_string_lossy()
        .into_owned();
    let ext = output
        .extension()
        .map(|e| format!(".{}", e.to_string_lossy()))
        .unwrap_or_default();
    // As `ewr_model::h5::atomically` names it, with the widest process id.
    let probe = output.with_file_name(format!(".{name}.4194304.partial{ext}"));
    match File::create(&probe) {
        Ok(f) => {
            drop(f);
            let _ = std::fs::remove_file(&probe);
            Ok(())
        }
        Err(e) => Err(format!("cannot write {}: {e}", output.display())),
    }
}
