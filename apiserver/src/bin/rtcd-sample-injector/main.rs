//! `rtcd-sample-injector`: a sample mutating admission webhook in the
//! spirit of Linkerd's proxy injector. Pods in namespaces annotated
//! `rtcd.dev/inject: enabled` (or pods so annotated themselves) get an
//! init container and a proxy sidecar with its configuration.
//!
//! ```text
//! rtcd-sample-injector install --dir data/injector --port 8443 | kubectl apply -f -
//! rtcd-sample-injector serve --cert-file data/injector/tls.crt --key-file data/injector/tls.key \
//!     --port 8443 --kubeconfig data/kubeconfig
//! ```
//!
//! * `inject`: whether a pod is injected, and the patch.
//! * `serve`: the HTTPS AdmissionReview server.
//! * `install`: certificates and manifests.
//! * `kube`: the little API client that reads namespaces.

mod inject;
mod install;
mod kube;
mod serve;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(name = "rtcd-sample-injector", version, about = "A sample proxy-injecting admission webhook")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Makes the certificates and prints the manifests for `kubectl apply -f -`.
    Install {
        /// Where the CA and the serving certificate are kept.
        #[arg(long)]
        dir: PathBuf,
        /// The port `serve` listens on.
        #[arg(long, default_value_t = 8443)]
        port: u16,
        #[arg(long, default_value = "rtcd-system")]
        namespace: String,
        /// The address the API server reaches the injector at.
        #[arg(long, default_value = "127.0.0.1")]
        address: String,
    },
    /// Answers AdmissionReviews on https://0.0.0.0:<port>/inject.
    Serve {
        #[arg(long)]
        cert_file: PathBuf,
        #[arg(long)]
        key_file: PathBuf,
        #[arg(long, default_value_t = 8443)]
        port: u16,
        /// Credentials to read namespaces with.
        #[arg(long)]
        kubeconfig: PathBuf,
        #[arg(long, default_value = "ghcr.io/rtcd/proxy:dev")]
        proxy_image: String,
        #[arg(long, default_value = "ghcr.io/rtcd/proxy-init:dev")]
        init_image: String,
    },
}

fn main() -> ExitCode {
    let result = match Cli::parse().command {
        Command::Install { dir, port, namespace, address } => {
            let options = install::Options { dir: &dir, port, namespace: &namespace, address: &address };
            install::run(&options).map(|manifests| {
                print!("{manifests}");
                eprintln!(
                    "then run: rtcd-sample-injector serve --cert-file {} --key-file {} --port {port} --kubeconfig <kubeconfig>",
                    dir.join(install::CERT).display(),
                    dir.join(install::KEY).display()
                );
            })
        }
        Command::Serve { cert_file, key_file, port, kubeconfig, proxy_image, init_image } => {
            let images = inject::Images { proxy: proxy_image, init: init_image };
            let options = serve::Options { cert_file, key_file, port, kubeconfig, images };
            match tokio::runtime::Runtime::new() {
                Ok(runtime) => runtime.block_on(serve::run(options)),
                Err(e) => Err(e.to_string()),
            }
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("rtcd-sample-injector: {e}");
            ExitCode::FAILURE
        }
    }
}
