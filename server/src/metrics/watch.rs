//! etcd's watch gauges and counter: watch streams open, watchers on them,
//! and events sent to watchers.

use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};

#[derive(Debug, Default)]
pub struct WatchCounters {
    streams: AtomicI64,
    watchers: AtomicI64,
    events: AtomicU64,
}

impl WatchCounters {
    pub fn stream_opened(&self) {
        self.streams.fetch_add(1, Ordering::Relaxed);
    }

    /// A stream ended with `watchers` still on it.
    pub fn stream_closed(&self, watchers: usize) {
        self.streams.fetch_sub(1, Ordering::Relaxed);
        self.watchers.fetch_sub(watchers as i64, Ordering::Relaxed);
    }

    pub fn watcher_added(&self) {
        self.watchers.fetch_add(1, Ordering::Relaxed);
    }

    pub fn watcher_removed(&self) {
        self.watchers.fetch_sub(1, Ordering::Relaxed);
    }

    pub fn events_sent(&self, events: usize) {
        self.events.fetch_add(events as u64, Ordering::Relaxed);
    }

    pub fn render(&self, out: &mut String) {
        let streams = self.streams.load(Ordering::Relaxed) as f64;
        let help = "Total number of watch streams.";
        rtcd_metrics::text::single(out, "etcd_debugging_mvcc_watch_stream_total", "gauge", help, streams);
        let watchers = self.watchers.load(Ordering::Relaxed) as f64;
        let help = "Total number of watchers.";
        rtcd_metrics::text::single(out, "etcd_debugging_mvcc_watcher_total", "gauge", help, watchers);
        let events = self.events.load(Ordering::Relaxed) as f64;
        let help = "Total number of events sent by this member.";
        rtcd_metrics::text::single(out, "etcd_debugging_mvcc_events_total", "counter", help, events);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_closed_stream_takes_its_watchers_with_it() {
        let counters = WatchCounters::default();
        counters.stream_opened();
        counters.stream_opened();
        counters.watcher_added();
        counters.watcher_added();
        counters.watcher_added();
        counters.watcher_removed();
        counters.events_sent(4);
        counters.stream_closed(1);
        let mut out = String::new();
        counters.render(&mut out);
        assert!(out.contains("\netcd_debugging_mvcc_watch_stream_total 1\n"), "{out}");
        assert!(out.contains("\netcd_debugging_mvcc_watcher_total 1\n"), "{out}");
        assert!(out.contains("\netcd_debugging_mvcc_events_total 4\n"), "{out}");
    }
}
