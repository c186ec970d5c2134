//! Collects the history while a run goes on; timestamps are nanoseconds
//! since the run started.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use crate::history::{Nanos, Record};

#[derive(Debug, Clone)]
pub struct Recorder {
    start: Instant,
    records: Arc<Mutex<Vec<Record>>>,
}

impl Recorder {
    pub fn new() -> Self {
        Self { start: Instant::now(), records: Arc::default() }
    }

    pub fn now(&self) -> Nanos {
        self.start.elapsed().as_nanos() as Nanos
    }

    pub fn record(&self, record: Record) {
        self.records.lock().unwrap_or_else(|e| e.into_inner()).push(record);
    }

    /// Visits everything recorded so far, in recording order, without
    /// copying it (the history of a long run is large; clients wait while
    /// this runs, so keep `f` cheap).
    pub fn for_each(&self, mut f: impl FnMut(&Record)) {
        self.records.lock().unwrap_or_else(|e| e.into_inner()).iter().for_each(&mut f);
    }

    /// Everything recorded so far, in recording order.
    pub fn snapshot(&self) -> Vec<Record> {
        self.records.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl Default for Recorder {
    fn default() -> Self {
        Self::new()
    }
}

/// A small deterministic PRNG (xorshift64*): runs replay from their seed.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed.max(1))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
}
