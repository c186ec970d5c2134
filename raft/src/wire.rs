//! How openraft messages travel inside `rtcdraftpb.RaftMessage`: a kind
//! name and a postcard-encoded payload. Replies carry `Result<T, String>`,
//! the error being the remote member's description.

use serde::Serialize;
use serde::de::DeserializeOwned;

pub const APPEND: &str = "append";
pub const VOTE: &str = "vote";
/// Would the peer vote for this candidate (without changing its term)?
pub const PRE_VOTE: &str = "pre_vote";
pub const TRANSFER_LEADER: &str = "transfer_leader";
/// A follower asks the leader for a read index (linearizable reads).
pub const READ_INDEX: &str = "read_index";
/// A follower hands a client's proposal to the leader.
pub const FORWARD: &str = "forward";
/// A follower hands a group of its clients' proposals to the leader (a
/// `Call`, so a leader without it answers "unknown call").
pub const FORWARD_BATCH: &str = "forward_batch";
/// Measures the round trip to a peer (`peer_stats`); answered at once.
pub const PROBE: &str = "probe";

pub fn encode<T: Serialize>(value: &T) -> Result<Vec<u8>, String> {
    postcard::to_stdvec(value).map_err(|e| e.to_string())
}

pub fn decode<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, String> {
    postcard::from_bytes(bytes).map_err(|e| e.to_string())
}
