//! The committed generated files are what the generator makes of the committed source.

use rtcd_apiserver_codegen::{SOURCE, apiserver_dir, crate_dir, generate, stale};

#[test]
fn committed_outputs_are_up_to_date() {
    let source = std::fs::read_to_string(crate_dir().join(SOURCE)).expect("the source file");
    let outputs = generate(&source).unwrap_or_else(|e| panic!("{e}"));
    let stale: Vec<String> =
        stale(&outputs, &apiserver_dir()).iter().map(|o| format!("apiserver/{}", o.path)).collect();
    assert!(
        stale.is_empty(),
        "not what the generator produces from the source: {}; run `cargo run -p rtcd-apiserver-codegen`",
        stale.join(", ")
    );
}

#[test]
fn generation_is_deterministic() {
    let source = std::fs::read_to_string(crate_dir().join(SOURCE)).expect("the source file");
    assert_eq!(
        generate(&source).unwrap_or_else(|e| panic!("{e}")),
        generate(&source).unwrap_or_else(|e| panic!("{e}"))
    );
}
