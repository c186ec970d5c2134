//! `rtcd-combined`: an rtcd member and rtcd-apiserver in one process, the
//! way k3s embeds its datastore. The API server stores its objects in this
//! member through the etcd API, over an in-memory connection (`local`);
//! other members and etcd clients reach the member on its URLs as usual.
//!
//! ```text
//! rtcd-combined [rtcd flags] -- [rtcd-apiserver flags]
//! ```
//!
//! The API server's `--etcd-*` connection flags are refused: its etcd is
//! the member it runs in.

mod local;

use std::ffi::OsString;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use rtcd_apiserver::options::Options;
use rtcd_server::config::Config;
use rtcd_server::process::{open_member, shutdown_signal};
use rtcd_server::server::ServeError;

// As in `rtcd`: every request allocates, and mimalloc costs a fraction of
// glibc's malloc under load.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The API server's flags that choose its etcd, which is given here.
const ETCD_CONNECTION_FLAGS: [&str; 4] =
    ["--etcd-servers", "--etcd-cafile", "--etcd-certfile", "--etcd-keyfile"];

/// The member's arguments (with the program name) and the API server's
/// (after `--`, under the API server's name, for its help and errors).
fn split(args: Vec<OsString>) -> (Vec<OsString>, Vec<OsString>) {
    let mut member = args;
    let apiserver = match member.iter().position(|a| a == "--") {
        Some(at) => member.split_off(at).into_iter().skip(1).collect(),
        None => Vec::new(),
    };
    let apiserver = std::iter::once(OsString::from("rtcd-apiserver")).chain(apiserver).collect();
    (member, apiserver)
}

/// The first API server flag that picks an etcd, if any is given.
fn etcd_connection_flag(args: &[OsString]) -> Option<&'static str> {
    args.iter().filter_map(|a| a.to_str()).find_map(|arg| {
        ETCD_CONNECTION_FLAGS
            .into_iter()
            .find(|flag| arg.strip_prefix(flag).is_some_and(|rest| rest.is_empty() || rest.starts_with('=')))
    })
}

fn main() -> ExitCode {
    // The API server's runtime: its threads have the stack its CEL needs.
    match rtcd_apiserver::server::tokio_runtime() {
        Ok(runtime) => runtime.block_on(serve()),
        Err(e) => {
            eprintln!("rtcd-combined: cannot start the runtime: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn serve() -> ExitCode {
    let (member_args, apiserver_args) = split(std::env::args_os().collect());
    let config = Config::parse_from(member_args);
    // Checked before the member opens its data: a refused flag changes nothing.
    let options = Options::parse_from(&apiserver_args);
    if let Some(flag) = etcd_connection_flag(&apiserver_args) {
        eprintln!("rtcd-combined: {flag} is not an API server flag here: its etcd is the member it runs in");
        return ExitCode::from(2);
    }
    let node = match open_member(config).await {
        Ok(node) => node,
        Err(exit) => return exit,
    };
    rtcd_apiserver::server::raise_open_files_limit();
    let (channel, connections) = local::connect();
    let mut member = tokio::spawn(rtcd_server::server::serve(node, shutdown_signal(), Some(connections)));
    tokio::select! {
        // The API server has no store without its member.
        served = &mut member => member_ended(served),
        // It returns when it stops: on the same signals as the member, or
        // because it could not start.
        api = rtcd_apiserver::server::run_over(options, channel) => {
            if let Err(e) = api {
                tracing::error!(error = %e, "the API server failed");
                return ExitCode::from(1);
            }
            // Its watches may hold the in-process connection open; the
            // member drains what else it serves, for a bounded time.
            match tokio::time::timeout(MEMBER_DRAIN, member).await {
                Ok(served) => member_ended(served),
                Err(_) => ExitCode::SUCCESS,
            }
        }
    }
}

/// How long the member may take to drain after the API server stopped.
const MEMBER_DRAIN: Duration = Duration::from_secs(2);

fn member_ended(served: Result<Result<(), ServeError>, tokio::task::JoinError>) -> ExitCode {
    match served {
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(e)) => {
            tracing::error!(error = %e, "server failed");
            ExitCode::from(1)
        }
        Err(e) => {
            tracing::error!(error = %e, "server failed");
            ExitCode::from(1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> Vec<OsString> {
        line.split_whitespace().map(OsString::from).collect()
    }

    #[test]
    fn flags_after_the_separator_are_the_api_servers() {
        let (member, apiserver) = split(args("rtcd-combined --name m1 -- --secure-port 6443 --plain-http"));
        assert_eq!(member, args("rtcd-combined --name m1"));
        assert_eq!(apiserver, args("rtcd-apiserver --secure-port 6443 --plain-http"));
        let (member, apiserver) = split(args("rtcd-combined --name m1"));
        assert_eq!((member, apiserver), (args("rtcd-combined --name m1"), args("rtcd-apiserver")));
    }

    #[test]
    fn the_api_server_may_not_pick_another_etcd() {
        assert_eq!(etcd_connection_flag(&args("x --etcd-servers=http://a:2379")), Some("--etcd-servers"));
        assert_eq!(
            etcd_connection_flag(&args("x --secure-port 1 --etcd-cafile ca.crt")),
            Some("--etcd-cafile")
        );
        assert_eq!(etcd_connection_flag(&args("x --etcd-prefix /kube --etcd-compaction-interval 0")), None);
    }
}
