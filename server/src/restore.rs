//! `rtcd snapshot restore`: turns a file saved with `etcdctl snapshot save`
//! (from an rtcd member) into a new member's data directory.

use std::path::PathBuf;

use clap::Parser;

#[derive(Debug, Parser)]
#[command(name = "rtcd snapshot", about = "Restore an rtcd snapshot into a new data directory")]
pub enum SnapshotCommand {
    /// Build a data directory from a snapshot file; the directory must not exist.
    Restore(RestoreArgs),
}

#[derive(Debug, clap::Args)]
pub struct RestoreArgs {
    /// The file `etcdctl snapshot save` wrote.
    pub file: PathBuf,
    /// Member name; the data directory defaults to `<name>.rtcd`.
    #[arg(long, default_value = "default")]
    pub name: String,
    #[arg(long)]
    pub data_dir: Option<PathBuf>,
}

/// Runs the command given after `rtcd snapshot` (`args[0]` is "snapshot").
pub fn run(args: Vec<std::ffi::OsString>) -> std::process::ExitCode {
    let SnapshotCommand::Restore(restore) = SnapshotCommand::parse_from(args);
    let data_dir = restore.data_dir.unwrap_or_else(|| PathBuf::from(format!("{}.rtcd", restore.name)));
    // The store lives where `rtcd --data-dir` looks for it.
    match rtcd_store::restore_snapshot(&restore.file, &data_dir.join(crate::node::STORE_DIR)) {
        Ok(done) => {
            println!(
                "restored snapshot {} into {}: {} records, revision {}",
                restore.file.display(),
                data_dir.display(),
                done.records,
                done.revision
            );
            std::process::ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("Error: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
