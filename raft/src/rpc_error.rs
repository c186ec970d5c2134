//! The peer transport's failures as openraft's `RPCError`s, for both the
//! unary calls (`network`) and the append stream (`append_stream`).

use std::time::Duration;

use openraft::error::{NetworkError, RPCError, Timeout, Unreachable};
use openraft::network::RPCTypes;

use crate::types::TypeConfig;

/// The peer could not be reached (openraft backs off before retrying).
pub fn unreachable(e: impl ToString) -> RPCError<TypeConfig> {
    RPCError::Unreachable(Unreachable::new(&std::io::Error::other(e.to_string())))
}

/// The peer answered something that is not an answer.
pub fn network(e: impl ToString) -> RPCError<TypeConfig> {
    RPCError::Network(NetworkError::from_string(e.to_string()))
}

/// No answer from `target` within `timeout`.
pub fn timed_out(target: u64, timeout: Duration) -> RPCError<TypeConfig> {
    RPCError::Timeout(Timeout { action: RPCTypes::AppendEntries, id: 0, target, timeout })
}
