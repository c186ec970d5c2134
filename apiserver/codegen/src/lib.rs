//! The generator behind `cargo run -p rtcd-apiserver-codegen` (see `main.rs` for how to use it):
//! one source file of Kubernetes API facts in, three Rust files of rtcd-apiserver out.
//!
//! * [`parse`] reads the source text into statements, each with its line number;
//! * [`model`] resolves and checks them into a [`model::Model`] (every error names its line);
//! * [`emit`] writes one file per consumer from the model: the protobuf decoder's field tables,
//!   the strategic merge patch metadata, the OpenAPI list patch metadata.
//!
//! Everything is in memory and deterministic: [`generate`] is a pure function of the source
//! text, which is what the up-to-date test and `--check` compare against the committed files.

pub mod emit;
pub mod model;
pub mod parse;

use std::fmt;
use std::path::{Path, PathBuf};

/// The source file, relative to the codegen crate's directory.
pub const SOURCE: &str = "api/kube-types.txt";

/// The source file as named in generated headers: relative to the workspace root, with `/`.
pub const SOURCE_DISPLAY: &str = "apiserver/codegen/api/kube-types.txt";

/// One generated file: its path relative to the `apiserver/` directory, and its contents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Output {
    pub path: &'static str,
    pub contents: String,
}

/// A malformed or inconsistent source: the line it is about (1-based; 0 for the file as a
/// whole) and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub line: usize,
    pub message: String,
}

impl Error {
    pub fn new(line: usize, message: impl Into<String>) -> Self {
        Self { line, message: message.into() }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{SOURCE_DISPLAY}: {}", self.message)
        } else {
            write!(f, "{SOURCE_DISPLAY}:{}: {}", self.line, self.message)
        }
    }
}

impl std::error::Error for Error {}

/// Every generated file, made from the source text.
pub fn generate(source: &str) -> Result<Vec<Output>, Error> {
    let statements = parse::parse(source)?;
    let model = model::Model::build(&statements)?;
    Ok(vec![
        Output { path: emit::protobuf::PATH, contents: emit::protobuf::emit(&model) },
        Output { path: emit::patch::PATH, contents: emit::patch::emit(&model) },
        Output { path: emit::openapi::PATH, contents: emit::openapi::emit(&model) },
    ])
}

/// The codegen crate's directory (`apiserver/codegen`).
pub fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The `apiserver/` directory the output paths are relative to.
pub fn apiserver_dir() -> PathBuf {
    crate_dir().join("..")
}

/// The generated outputs whose committed file (under `apiserver_dir`) is missing or differs.
pub fn stale<'a>(outputs: &'a [Output], apiserver_dir: &Path) -> Vec<&'a Output> {
    outputs
        .iter()
        .filter(|output| {
            std::fs::read_to_string(apiserver_dir.join(output.path)).ok().as_deref()
                != Some(output.contents.as_str())
        })
        .collect()
}
