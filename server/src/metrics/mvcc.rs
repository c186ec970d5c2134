//! etcd's operation counters of its MVCC store: ranges, puts and deletes
//! seen by this member (those inside transactions too), and transactions.
//! Writes are counted as each member applies them, so every member counts
//! every write, as etcd's do; ranges where they are served.

use std::sync::atomic::{AtomicU64, Ordering};

use rtcd_proto::etcdserverpb::{TxnResponse, response_op::Response as Op};
use rtcd_store::WriteResponse;

#[derive(Debug, Default)]
pub struct MvccCounters {
    ranges: AtomicU64,
    puts: AtomicU64,
    deletes: AtomicU64,
    txns: AtomicU64,
}

impl MvccCounters {
    /// A Range call served here.
    pub fn ranged(&self) {
        self.ranges.fetch_add(1, Ordering::Relaxed);
    }

    /// A write this member applied, by what it did.
    pub fn applied(&self, response: &WriteResponse) {
        match response {
            WriteResponse::Put(_) => self.add(&self.puts, 1),
            WriteResponse::DeleteRange(_) => self.add(&self.deletes, 1),
            WriteResponse::Txn(txn) => {
                self.add(&self.txns, 1);
                self.txn_ops(txn);
            }
            _ => {}
        }
    }

    /// The operations a transaction ran (its taken branch, nested
    /// transactions' included).
    fn txn_ops(&self, txn: &TxnResponse) {
        for op in txn.responses.iter().filter_map(|r| r.response.as_ref()) {
            match op {
                Op::ResponseRange(_) => self.add(&self.ranges, 1),
                Op::ResponsePut(_) => self.add(&self.puts, 1),
                Op::ResponseDeleteRange(_) => self.add(&self.deletes, 1),
                Op::ResponseTxn(nested) => self.txn_ops(nested),
            }
        }
    }

    fn add(&self, counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }

    /// etcd's families (and the deprecated debugging copy of ranges that
    /// etcd 3.5 still exports).
    pub fn render(&self, out: &mut String) {
        let value = |c: &AtomicU64| c.load(Ordering::Relaxed) as f64;
        let families = [
            ("etcd_mvcc_range_total", "Total number of ranges seen by this member.", &self.ranges),
            ("etcd_debugging_mvcc_range_total", "Total number of ranges seen by this member.", &self.ranges),
            ("etcd_mvcc_put_total", "Total number of puts seen by this member.", &self.puts),
            ("etcd_mvcc_delete_total", "Total number of deletes seen by this member.", &self.deletes),
            ("etcd_mvcc_txn_total", "Total number of txns seen by this member.", &self.txns),
        ];
        for (name, help, counter) in families {
            rtcd_metrics::text::single(out, name, "counter", help, value(counter));
        }
    }
}

#[cfg(test)]
mod tests {
    use rtcd_proto::etcdserverpb::{
        DeleteRangeResponse, PutResponse, RangeResponse, ResponseOp, TxnResponse,
    };

    use super::*;

    fn op(response: Op) -> ResponseOp {
        ResponseOp { response: Some(response) }
    }

    #[test]
    fn operations_inside_transactions_count_as_their_kind() {
        let counters = MvccCounters::default();
        counters.applied(&WriteResponse::Put(PutResponse::default()));
        counters.applied(&WriteResponse::DeleteRange(DeleteRangeResponse::default()));
        let nested = TxnResponse {
            responses: vec![op(Op::ResponsePut(PutResponse::default()))],
            ..Default::default()
        };
        let txn = TxnResponse {
            responses: vec![
                op(Op::ResponseRange(RangeResponse::default())),
                op(Op::ResponsePut(PutResponse::default())),
                op(Op::ResponseTxn(nested)),
            ],
            ..Default::default()
        };
        counters.applied(&WriteResponse::Txn(txn));
        counters.ranged();
        let mut out = String::new();
        counters.render(&mut out);
        assert!(out.contains("\netcd_mvcc_put_total 3\n"), "{out}");
        assert!(out.contains("\netcd_mvcc_delete_total 1\n"), "{out}");
        assert!(out.contains("\netcd_mvcc_range_total 2\n"), "{out}");
        assert!(out.contains("\netcd_debugging_mvcc_range_total 2\n"), "{out}");
        assert!(out.contains("\netcd_mvcc_txn_total 1\n"), "{out}");
        assert!(out.contains("# TYPE etcd_mvcc_put_total counter\n"), "{out}");
    }
}
