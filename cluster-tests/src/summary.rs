//! What a run concluded (`summary.json`): the target, the seed and
//! duration, the faults injected and every checker's verdict.

use serde::Serialize;

use crate::checker::Verdicts;

#[derive(Debug, Serialize)]
pub struct Summary {
    pub target: &'static str,
    pub seed: u64,
    pub seconds: u64,
    pub faults: Vec<String>,
    pub fault_windows: usize,
    #[serde(flatten)]
    pub verdicts: Verdicts,
}

impl Summary {
    /// `Some(true)`: every checker found the history valid.
    pub fn valid(&self) -> Option<bool> {
        self.verdicts.valid()
    }
}
