//! `rtcd-pki`: the cluster's certificates and kubeconfigs (what kubeadm's
//! `init phase certs` and `kubeconfig` make), created once and reused.
//!
//! ```text
//! rtcd-pki init --dir data/pki                       # CA, API server, admin, ServiceAccount keys
//! rtcd-pki user --dir data/pki --name jane --group dev   # jane.crt/.key and jane.kubeconfig
//! ```

use std::net::IpAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use rtcd_apiserver::pki::{self, InitOptions};

#[derive(Debug, Parser)]
#[command(name = "rtcd-pki", version, about = "Certificates and kubeconfigs for rtcd-apiserver")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// The CA, the API server's serving certificate, the administrator's
    /// client certificate and kubeconfig, the ServiceAccount key pair.
    Init {
        #[arg(long)]
        dir: PathBuf,
        /// The API server's URL, for the kubeconfig.
        #[arg(long, default_value = "https://127.0.0.1:6443")]
        server: String,
        /// The `kubernetes` Service's cluster IP (a SAN of the certificate).
        #[arg(long, default_value = "10.0.0.1")]
        service_ip: IpAddr,
        /// More names or addresses the API server is reached by.
        #[arg(long = "san")]
        sans: Vec<String>,
    },
    /// A client certificate for a user, and a kubeconfig for it.
    User {
        #[arg(long)]
        dir: PathBuf,
        #[arg(long)]
        name: String,
        /// A group of the user (at most two; each an O of the certificate).
        #[arg(long = "group")]
        groups: Vec<String>,
        /// Where the kubeconfig goes (default: <dir>/<name>.kubeconfig).
        #[arg(long)]
        out: Option<PathBuf>,
        #[arg(long, default_value = "https://127.0.0.1:6443")]
        server: String,
    },
}

fn main() -> ExitCode {
    let result = match Cli::parse().command {
        Command::Init { dir, server, service_ip, sans } => {
            pki::init(&dir, &InitOptions { server, service_ip, extra_sans: sans })
        }
        Command::User { dir, name, groups, out, server } => {
            let out = out.unwrap_or_else(|| dir.join(format!("{}.kubeconfig", pki::files::safe_name(&name))));
            pki::add_user(&dir, &name, &groups, &server, &out)
        }
    };
    match result {
        Ok(created) if created.is_empty() => {
            println!("rtcd-pki: everything was there already; nothing changed");
            ExitCode::SUCCESS
        }
        Ok(created) => {
            for path in created {
                println!("rtcd-pki: wrote {}", path.display());
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("rtcd-pki: {e}");
            ExitCode::FAILURE
        }
    }
}
