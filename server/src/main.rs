//! `rtcd`: an etcd v3 compatible key-value store member.

use clap::Parser;
use rtcd_server::config::Config;
use rtcd_server::node::Node;
use rtcd_server::settings::{LogFormat, Logging};

// Every request allocates (gRPC frames, protobuf messages, Raft entries):
// under load glibc's malloc took ~10% of the leader's CPU in profiles,
// mimalloc a fraction of that.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn init_logging(logging: &Logging) {
    let filter = tracing_subscriber::EnvFilter::try_new(&logging.filter)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    // Colours only on a terminal: logs usually end up in files.
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let builder =
        tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).with_ansi(ansi);
    match logging.format {
        LogFormat::Json => builder.json().init(),
        LogFormat::Text => builder.init(),
    }
}

async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let term = async {
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(mut s) => {
                    s.recv().await;
                }
                Err(_) => std::future::pending::<()>().await,
            }
        };
        tokio::select! {
            _ = ctrl_c => {}
            _ = term => {}
        }
    }
    #[cfg(not(unix))]
    let _ = ctrl_c.await;
    tracing::info!("shutting down");
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if args.get(1).is_some_and(|a| a == "snapshot") {
        return rtcd_server::restore::run(args[1..].to_vec());
    }
    let config = Config::parse_from(args);
    init_logging(&config.logging());
    // Every flag is checked here, once, before anything is opened.
    let settings = match config.validate() {
        Ok(settings) => settings,
        Err(e) => {
            tracing::error!(error = %e, "refusing to start");
            return std::process::ExitCode::from(2);
        }
    };
    tracing::info!(name = %settings.name, data_dir = %settings.data_dir.display(), "starting rtcd");
    let node = match Node::open(settings).await {
        Ok(node) => node,
        Err(e) => {
            tracing::error!(error = %e, "cannot start");
            return std::process::ExitCode::from(1);
        }
    };
    match rtcd_server::server::serve(node, shutdown_signal()).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!(error = %e, "server failed");
            std::process::ExitCode::from(1)
        }
    }
}
