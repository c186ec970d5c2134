//! Replays every committed corpus file (`fuzz/corpus/<target>/`) and every
//! crash reproducer kept in `fuzz/regressions/<target>/` through its target,
//! on stable, so `cargo test` keeps the targets building and passing on the
//! inputs that matter.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

fn files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut files: Vec<PathBuf> =
        entries.map(|e| e.expect("dir entry").path()).filter(|p| p.is_file()).collect();
    files.sort();
    files
}

#[test]
fn every_corpus_file_passes_its_target() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for (name, run) in rtcd_fuzz::TARGETS {
        let seeds = files(&root.join("corpus").join(name));
        assert!(!seeds.is_empty(), "target {name} has no seeds in corpus/{name}");
        for file in seeds.iter().chain(&files(&root.join("regressions").join(name))) {
            let data = std::fs::read(file).expect("read corpus file");
            eprintln!("{name}: {}", file.display());
            run(&data);
        }
    }
}

#[test]
fn targets_survive_trivial_inputs() {
    for (_, run) in rtcd_fuzz::TARGETS {
        for data in [&b""[..], b"\0", b"\xff", &[0u8; 64], &[0xffu8; 64]] {
            run(data);
        }
    }
}
