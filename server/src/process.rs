//! What a process running a member sets up around it: logging, and the
//! signals that stop it gracefully. Shared by `rtcd` and by binaries that
//! run a member beside something else (`rtcd-combined`).

use std::process::ExitCode;
use std::sync::Arc;

use crate::config::Config;
use crate::node::Node;
use crate::settings::{LogFormat, Logging};

/// Starts logging, checks every flag (once, before anything is opened) and
/// opens the member; on failure, logs why and returns the exit code: 2 for
/// flags refused, 1 for a member that cannot start.
pub async fn open_member(config: Config) -> Result<Arc<Node>, ExitCode> {
    init_logging(&config.logging());
    let settings = config.validate().map_err(|e| {
        tracing::error!(error = %e, "refusing to start");
        ExitCode::from(2)
    })?;
    tracing::info!(name = %settings.name, data_dir = %settings.data_dir.display(), "starting rtcd");
    Node::open(settings).await.map_err(|e| {
        tracing::error!(error = %e, "cannot start");
        ExitCode::from(1)
    })
}

/// Logs to stderr with the flags' filter and format.
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

/// Resolves on Ctrl-C or SIGTERM.
pub async fn shutdown_signal() {
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
