//! rtcd-jepsen: jepsen-style tests against any etcd-compatible cluster.
//!
//! * `cluster`: real member processes on loopback (rtcd, or etcd as the
//!   control), killed, restarted, paused.
//! * `proxy`: a TCP proxy on every directed peer link: partitions, delays,
//!   connection drops.
//! * `nemesis`: which fault, when; every fault window is recorded.
//! * `workload`: concurrent clients recording each operation's invocation,
//!   completion and outcome (`history`, `recorder`).
//! * `checker`: verdicts on the recorded history.
//! * `report`: `report.html`, latency and throughput over time with faults
//!   shaded.
//! * `run`: one run from start to results directory.

pub mod checker;
pub mod cluster;
pub mod history;
pub mod nemesis;
pub mod proxy;
pub mod recorder;
pub mod report;
pub mod run;
pub mod summary;
pub mod workload;
