//! The committed corpus is exactly what `rtcd_fuzz::seeds` generates. With
//! `RTCD_WRITE_SEEDS=1` the files are (re)written instead:
//! `RTCD_WRITE_SEEDS=1 cargo test -p rtcd-fuzz --test seeds`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

#[test]
fn committed_seeds_match_the_generator() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus");
    let write = std::env::var_os("RTCD_WRITE_SEEDS").is_some_and(|v| v == "1");
    let seeds = rtcd_fuzz::seeds::all();
    let total: usize = seeds.iter().map(|(_, _, bytes)| bytes.len()).sum();
    assert!(total < 1 << 20, "the committed corpus stays under 1 MB (is {total} bytes)");
    for (target, name, bytes) in &seeds {
        assert!(rtcd_fuzz::TARGETS.iter().any(|(t, _)| t == target), "seed for unknown target {target}");
        let path = corpus.join(target).join(name);
        if write {
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(&path, bytes).expect("write seed");
        } else {
            let committed = std::fs::read(&path).unwrap_or_default();
            assert!(
                &committed == bytes,
                "{} differs from the generator: run RTCD_WRITE_SEEDS=1 cargo test -p rtcd-fuzz --test seeds",
                path.display()
            );
        }
    }
}
