//! Files that are written once: never overwritten, private keys (and
//! kubeconfigs, which embed them) readable by their owner only.

use std::io::Write;
use std::path::Path;

use super::PkiError;

pub fn ensure_dir(dir: &Path) -> Result<(), PkiError> {
    std::fs::create_dir_all(dir)
        .map_err(|e| PkiError::Write { path: dir.display().to_string(), why: e.to_string() })
}

/// Writes `contents` to a new file at `path` (mode 0600 when `private`).
pub fn write_new(path: &Path, contents: &[u8], private: bool) -> Result<(), PkiError> {
    let error = |e: std::io::Error| PkiError::Write { path: path.display().to_string(), why: e.to_string() };
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    if private {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    #[cfg(not(unix))]
    let _ = private;
    let mut file = options.open(path).map_err(error)?;
    file.write_all(contents).map_err(error)?;
    file.sync_all().map_err(error)
}

pub fn read(path: &Path) -> Result<String, PkiError> {
    std::fs::read_to_string(path)
        .map_err(|e| PkiError::Read { path: path.display().to_string(), why: e.to_string() })
}

/// A user name as a file name (`system:node:a` → `system_node_a`).
pub fn safe_name(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() || "._-".contains(c) { c } else { '_' }).collect()
}
