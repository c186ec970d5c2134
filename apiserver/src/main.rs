//! `rtcd-apiserver`: a Kubernetes-style API server over etcd v3.

use clap::Parser;
use rtcd_apiserver::options::Options;

fn init_logging(verbosity: u8) {
    let default = match verbosity {
        0 | 1 => "info",
        2..=4 => "info,rtcd_apiserver=debug",
        _ => "debug,rtcd_apiserver=trace",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).with_ansi(ansi).init();
}

fn main() -> std::process::ExitCode {
    let options = Options::parse();
    init_logging(options.verbosity);
    rtcd_apiserver::server::raise_open_files_limit();
    let runtime = match rtcd_apiserver::server::tokio_runtime() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("rtcd-apiserver: cannot start the runtime: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    match runtime.block_on(rtcd_apiserver::server::run(options)) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("rtcd-apiserver: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
