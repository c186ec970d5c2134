//! Micro-benchmarks of the store's hot paths on a store holding 1M keys:
//! Put (one request per batch, as under light load, and 100 per batch, as
//! under group commit), point Range and a 100-key Range.
//!
//! `cargo bench -p rtcd-store --bench store` (RTCD_BENCH_KEYS sets the key count).

#![allow(clippy::expect_used)]

use std::hint::black_box;

use bytes::Bytes;
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use rtcd_proto::etcdserverpb::{PutRequest, RangeRequest};
use rtcd_store::{AppliedMark, Store, StoreOptions, WriteRequest};

fn key(i: u64) -> Bytes {
    Bytes::from(format!("/registry/pods/default/pod-{i:08}"))
}

fn put(i: u64, value: &Bytes) -> WriteRequest {
    WriteRequest::Put(PutRequest { key: key(i), value: value.clone(), ..Default::default() })
}

fn loaded_store(dir: &std::path::Path, keys: u64, value: &Bytes) -> Store {
    // Unsynced: in a cluster the Raft log, not the store, makes writes durable.
    let store = Store::open(dir, StoreOptions { sync: false, ..Default::default() }).expect("open");
    for chunk in 0..keys.div_ceil(1000) {
        let reqs: Vec<_> = (chunk * 1000..((chunk + 1) * 1000).min(keys)).map(|i| put(i, value)).collect();
        store.apply(&reqs, AppliedMark { index: chunk + 1, context: vec![] }).expect("load");
    }
    store
}

fn benches(c: &mut Criterion) {
    // `cargo test --all-targets` runs benches once as smoke tests: keep that quick.
    let benchmarking = std::env::args().any(|a| a == "--bench");
    let default_keys = if benchmarking { 1_000_000 } else { 1_000 };
    let keys = std::env::var("RTCD_BENCH_KEYS").ok().and_then(|v| v.parse().ok()).unwrap_or(default_keys);
    let value = Bytes::from(vec![b'v'; 256]);
    let dir = tempfile::tempdir().expect("tempdir");
    let store = loaded_store(dir.path(), keys, &value);
    let mut index = keys;
    let mut next = move || {
        index += 1;
        index
    };

    let mut group = c.benchmark_group(format!("store_{keys}_keys"));
    group.bench_function("put_1_per_batch", |b| {
        b.iter_batched(
            || {
                let i = next();
                (put(i % keys, &value), i)
            },
            |(req, i)| store.apply(&[req], AppliedMark { index: i, context: vec![] }).expect("put"),
            BatchSize::SmallInput,
        )
    });
    group.bench_function("put_100_per_batch", |b| {
        b.iter_batched(
            || {
                let i = next();
                ((0..100).map(|j| put((i * 100 + j) % keys, &value)).collect::<Vec<_>>(), i)
            },
            |(reqs, i)| store.apply(&reqs, AppliedMark { index: i, context: vec![] }).expect("put"),
            BatchSize::SmallInput,
        )
    });
    let mut probe = 0u64;
    group.bench_function("range_1_key", |b| {
        b.iter(|| {
            probe = (probe + 7919) % keys;
            let r = RangeRequest { key: key(probe), ..Default::default() };
            black_box(store.range(&r).expect("range"))
        })
    });
    group.bench_function("range_100_keys", |b| {
        b.iter(|| {
            probe = (probe + 7919) % keys.saturating_sub(100).max(1);
            let r = RangeRequest { key: key(probe), range_end: key(probe + 100), ..Default::default() };
            black_box(store.range(&r).expect("range"))
        })
    });
    group.finish();
}

criterion_group!(store_benches, benches);
criterion_main!(store_benches);
