//! `etcdserverpb.Maintenance`: member status, alarms, hashes, defragment and
//! snapshots, leadership transfer (MoveLeader). Downgrade answers
//! Unimplemented until built.

use std::pin::Pin;
use std::sync::Arc;
use std::time::Instant;

use rtcd_proto::etcdserverpb::{
    AlarmMember, AlarmRequest, AlarmResponse, AlarmType, DefragmentRequest, DefragmentResponse,
    DowngradeRequest, DowngradeResponse, HashKvRequest, HashKvResponse, HashRequest, HashResponse,
    MoveLeaderRequest, MoveLeaderResponse, SnapshotRequest, SnapshotResponse, StatusRequest, StatusResponse,
    alarm_request::AlarmAction, maintenance_server::Maintenance,
};
use rtcd_store::{WriteRequest, WriteResponse};
use tokio_stream::Stream;
use tonic::{Request, Response, Status};

use crate::errors::{EtcdError, unmapped_auth};
use crate::node::Node;
use crate::version::ETCD_COMPAT_VERSION;

#[derive(Debug)]
pub struct MaintenanceService {
    node: Arc<Node>,
}

impl MaintenanceService {
    pub fn new(node: Arc<Node>) -> Self {
        Self { node }
    }
}

/// Bytes per Snapshot message (etcd's size).
const SNAPSHOT_CHUNK: usize = 32 * 1024;

/// Writes a snapshot into an unlinked file in the data dir (so a crash leaves
/// nothing behind) and returns it rewound, with its size.
fn snapshot_file(node: &Node) -> Result<(std::fs::File, u64), rtcd_store::SnapshotError> {
    use std::io::Seek;
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = node.settings().data_dir.join(format!("snapshot-{}-{n}.tmp", std::process::id()));
    let mut file =
        std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(true).open(&path)?;
    std::fs::remove_file(&path)?;
    let size = node.store().write_snapshot(std::io::BufWriter::new(&mut file))?.size;
    file.rewind()?;
    Ok((file, size))
}

/// Sends the file in chunks, each saying how many bytes are still to come;
/// true when all of it went.
fn stream_file(
    node: &Node,
    (mut file, size): (std::fs::File, u64),
    tx: tokio::sync::mpsc::Sender<Result<SnapshotResponse, Status>>,
) -> bool {
    use std::io::Read;
    let mut remaining = size;
    while remaining > 0 {
        let mut blob = vec![0; SNAPSHOT_CHUNK.min(remaining as usize)];
        let message = match file.read_exact(&mut blob) {
            Ok(()) => {
                remaining -= blob.len() as u64;
                Ok(SnapshotResponse { header: node.header(), remaining_bytes: remaining, blob: blob.into() })
            }
            Err(e) => Err(Status::internal(format!("rtcd: reading snapshot: {e}"))),
        };
        let failed = message.is_err();
        // A closed channel means the client went away.
        if tx.blocking_send(message).is_err() || failed {
            return false;
        }
    }
    true
}

/// Status lists active alarms as etcd prints them: "memberID:<id> alarm:<TYPE> ".
fn alarm_texts(alarms: &[AlarmMember]) -> Vec<String> {
    alarms
        .iter()
        .map(|a| {
            let name = AlarmType::try_from(a.alarm).map_or("UNKNOWN", |t| t.as_str_name());
            format!("memberID:{} alarm:{name} ", a.member_id)
        })
        .collect()
}

fn not_yet(what: &'static str) -> Status {
    EtcdError::Unsupported(what).into()
}

#[tonic::async_trait]
impl Maintenance for MaintenanceService {
    async fn alarm(&self, request: Request<AlarmRequest>) -> Result<Response<AlarmResponse>, Status> {
        let caller = self.node.caller(&request)?;
        let req = request.into_inner();
        match AlarmAction::try_from(req.action) {
            Ok(AlarmAction::Get) => {
                let all = self.node.store().alarms().map_err(EtcdError::from)?;
                // NONE lists every alarm; a type lists that type only.
                let alarms = all
                    .into_iter()
                    .filter(|a| req.alarm == AlarmType::None as i32 || a.alarm == req.alarm)
                    .collect();
                Ok(Response::new(AlarmResponse { header: self.node.header(), alarms }))
            }
            // Raising and clearing are replicated writes, like etcd's.
            _ => Ok(Response::new(
                self.node
                    .write(&caller, WriteRequest::Alarm(req), |r| match r {
                        WriteResponse::Alarm(a) => Some(a),
                        _ => None,
                    })
                    .await?,
            )),
        }
    }

    async fn status(&self, _: Request<StatusRequest>) -> Result<Response<StatusResponse>, Status> {
        let (applied, index) = self.node.raft().indexes();
        let size = self.node.store().size_bytes() as i64;
        Ok(Response::new(StatusResponse {
            header: self.node.header(),
            version: ETCD_COMPAT_VERSION.to_string(),
            db_size: size,
            leader: self.node.raft().leader().unwrap_or(0),
            raft_index: index,
            raft_term: self.node.term(),
            raft_applied_index: applied,
            errors: alarm_texts(&self.node.store().alarms().map_err(EtcdError::from)?),
            db_size_in_use: size,
            is_learner: self.node.raft().is_learner(),
        }))
    }

    async fn defragment(
        &self,
        request: Request<DefragmentRequest>,
    ) -> Result<Response<DefragmentResponse>, Status> {
        self.node.check_admin(&request).map_err(unmapped_auth)?;
        let node = self.node.clone();
        // Compacting every table takes a while on a big store: keep it off the
        // async workers.
        tokio::task::spawn_blocking(move || {
            let _timed = node.metrics().maintenance.defrag();
            node.store().defragment()
        })
        .await
        .map_err(|_| EtcdError::Stopped)?
        .map_err(EtcdError::from)?;
        Ok(Response::new(DefragmentResponse { header: self.node.header() }))
    }

    async fn hash(&self, request: Request<HashRequest>) -> Result<Response<HashResponse>, Status> {
        self.node.check_admin(&request).map_err(unmapped_auth)?;
        let started = Instant::now();
        let hash = self.node.store().hash_all().map_err(EtcdError::from)?;
        self.node.metrics().maintenance.hashed(started);
        Ok(Response::new(HashResponse { header: self.node.header(), hash }))
    }

    async fn hash_kv(&self, request: Request<HashKvRequest>) -> Result<Response<HashKvResponse>, Status> {
        self.node.check_admin(&request).map_err(unmapped_auth)?;
        let started = Instant::now();
        let h = self.node.store().hash_kv(request.get_ref().revision).map_err(EtcdError::from)?;
        self.node.metrics().maintenance.kv_hashed(started);
        let mut header = None;
        self.node.identity().fill(&mut header, h.revision, self.node.term());
        Ok(Response::new(HashKvResponse { header, hash: h.hash, compact_revision: h.compact_revision }))
    }

    type SnapshotStream = Pin<Box<dyn Stream<Item = Result<SnapshotResponse, Status>> + Send>>;

    async fn snapshot(
        &self,
        request: Request<SnapshotRequest>,
    ) -> Result<Response<Self::SnapshotStream>, Status> {
        self.node.check_admin(&request).map_err(unmapped_auth)?;
        let started = Instant::now();
        let node = self.node.clone();
        let file = tokio::task::spawn_blocking(move || snapshot_file(&node))
            .await
            .map_err(|_| EtcdError::Stopped)?
            .map_err(|e| Status::internal(format!("rtcd: snapshot: {e}")))?;
        let (tx, rx) = tokio::sync::mpsc::channel(4);
        let node = self.node.clone();
        tokio::task::spawn_blocking(move || {
            if stream_file(&node, file, tx) {
                node.metrics().maintenance.snapshot_sent(started);
            }
        });
        Ok(Response::new(Box::pin(tokio_stream::wrappers::ReceiverStream::new(rx))))
    }

    /// Hands leadership to another voting member, as etcd's leader does;
    /// moving it to the current leader succeeds at once.
    async fn move_leader(
        &self,
        request: Request<MoveLeaderRequest>,
    ) -> Result<Response<MoveLeaderResponse>, Status> {
        self.node.check_admin(&request).map_err(unmapped_auth)?;
        let target = request.get_ref().target_id;
        if !self.node.is_leader() {
            return Err(EtcdError::NotLeader.into());
        }
        let voter = self.node.raft().members().into_iter().any(|(id, _, learner)| id == target && !learner);
        if !voter {
            return Err(EtcdError::BadLeaderTransferee.into());
        }
        if target != self.node.member_id() {
            self.node.raft().transfer_leadership(target).await.map_err(EtcdError::from)?;
        }
        Ok(Response::new(MoveLeaderResponse { header: self.node.header() }))
    }

    async fn downgrade(&self, _: Request<DowngradeRequest>) -> Result<Response<DowngradeResponse>, Status> {
        Err(not_yet("Downgrade"))
    }
}
