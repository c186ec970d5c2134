//! `rtcd`: an etcd v3 compatible key-value store member.

use clap::Parser;
use rtcd_server::config::Config;
use rtcd_server::process::{open_member, shutdown_signal};

// Every request allocates (gRPC frames, protobuf messages, Raft entries):
// under load glibc's malloc took ~10% of the leader's CPU in profiles,
// mimalloc a fraction of that.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if args.get(1).is_some_and(|a| a == "snapshot") {
        return rtcd_server::restore::run(args[1..].to_vec());
    }
    let config = Config::parse_from(args);
    let node = match open_member(config).await {
        Ok(node) => node,
        Err(exit) => return exit,
    };
    match rtcd_server::server::serve(node, shutdown_signal(), None).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!(error = %e, "server failed");
            std::process::ExitCode::from(1)
        }
    }
}
