//! # rtcd-apiserver-codegen
//!
//! rtcd-apiserver needs the same facts about the Kubernetes API in three places: the protobuf
//! decoder (field numbers, types, JSON names, when Go writes a field), strategic merge patch
//! (`patchStrategy` / `patchMergeKey`) and the OpenAPI documents (the same, plus `+listType` /
//! `+listMapKey`). They are written down once, as upstream's Go types state them, in
//! `apiserver/codegen/api/kube-types.txt` (its header describes the format), and this tool writes
//! the three tables from it:
//!
//! | output (under `apiserver/src/`)   | used by                                          |
//! |-----------------------------------|--------------------------------------------------|
//! | `protobuf/schema.rs`              | `protobuf::decode`: `Message` tables and KINDS   |
//! | `patch/strategic_schema/nodes.rs` | `strategic_schema::for_kind`: `TypeNode`s, KINDS |
//! | `openapi/schemas/list_patch.rs`   | `openapi::schemas::finish`: LIST_PATCH_METADATA  |
//!
//! Every message gets a static of the same name in the first two (`CORE_V1_POD`,
//! `APPS_V1_DEPLOYMENT`, `META_V1_OBJECT_META`).
//!
//! ```text
//! cargo run -p rtcd-apiserver-codegen              # rewrite the outputs
//! cargo run -p rtcd-apiserver-codegen -- --check   # exit 1, naming the outputs that differ
//! ```
//!
//! It reads nothing but the source file (no network, no upstream checkout), and
//! `cargo test -p rtcd-apiserver-codegen` fails when a committed output is not what it generates.
//!
//! ## Adding a kind
//!
//! 1. In `kube-types.txt`, add a `kind <apiVersion> <Kind> <package>.<Message>` line (with
//!    `unserved` if no resource serves it yet: it then stays out of the OpenAPI metadata).
//! 2. Add a `message` block for the kind's message and for every message it reaches that is not
//!    there yet, copying the facts from upstream at the commits the header names: numbers and
//!    types from the package's generated.proto, the json tag, pointer and patch tags from
//!    types.go, `listType` / `listMapKey` from the `+listType=` / `+listMapKey=` markers. A
//!    package not yet used needs a `package` line. The generator refuses unknown or unreachable
//!    messages, fields out of order, and patch facts that do not fit their field, naming the line.
//! 3. Run `cargo run -p rtcd-apiserver-codegen`, then `cargo test -p rtcd-apiserver-codegen` and
//!    `cargo test -p rtcd-apiserver --lib`. A type with its own JSON form beyond Time, MicroTime,
//!    FieldsV1, IntOrString, Quantity and RawExtension needs a new `Type` in `protobuf/mod.rs` and
//!    in the generator's model.

use std::process::ExitCode;

use rtcd_apiserver_codegen::{SOURCE, apiserver_dir, crate_dir, generate, stale};

fn main() -> ExitCode {
    let check = match std::env::args().skip(1).collect::<Vec<_>>().as_slice() {
        [] => false,
        [flag] if flag == "--check" => true,
        _ => {
            eprintln!("usage: rtcd-apiserver-codegen [--check]");
            return ExitCode::from(2);
        }
    };
    let source_path = crate_dir().join(SOURCE);
    let source = match std::fs::read_to_string(&source_path) {
        Ok(source) => source,
        Err(e) => {
            eprintln!("cannot read {}: {e}", source_path.display());
            return ExitCode::FAILURE;
        }
    };
    let outputs = match generate(&source) {
        Ok(outputs) => outputs,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let root = apiserver_dir();
    let stale = stale(&outputs, &root);
    if check {
        if stale.is_empty() {
            return ExitCode::SUCCESS;
        }
        for output in stale {
            eprintln!("apiserver/{} differs from what the generator produces", output.path);
        }
        eprintln!("run `cargo run -p rtcd-apiserver-codegen` to update");
        return ExitCode::FAILURE;
    }
    for output in stale {
        let path = root.join(output.path);
        let written = path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| std::fs::write(&path, &output.contents));
        if let Err(e) = written {
            eprintln!("cannot write {}: {e}", path.display());
            return ExitCode::FAILURE;
        }
        println!("wrote apiserver/{}", output.path);
    }
    ExitCode::SUCCESS
}
