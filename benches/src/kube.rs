//! `kube`: kube-apiserver's storage pattern. (Skeleton: a helper is writing this module.)

use crate::Target;
use crate::load::Outcome;

#[derive(Debug, clap::Args)]
pub struct Args {}

pub async fn run(_target: &Target, _args: Args) -> Result<Outcome, String> {
    Err("kube: not built yet".into())
}
