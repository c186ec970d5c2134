//! `apiserver watch`: event latency and completeness over many watchers.
//!
//! One ConfigMap is created; `--watchers` watches open on the ConfigMaps of
//! its namespace from its resourceVersion, each on its own connection, one
//! after another (a watch is registered once its response headers are in).
//! Then `--updates` merge patches, `--rate` a second, each set `data.seq` to
//! its number and `data.sent` to the time (Unix ns) just before it was sent.
//! Every watcher times each MODIFIED event it gets as receive time − `sent`,
//! and must get every successful update's event once, in order; what it
//! missed or got out of order are errors. Once the last update is answered,
//! watchers have `--event-timeout` seconds to get the rest.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use http_body_util::BodyExt;
use hyper::Response;
use hyper::body::Incoming;
use serde::Deserialize;
use serde_json::json;
use tokio::sync::watch as signal;

use super::http::Api;
use crate::Target;
use crate::load::{Outcome, Tally, Ticker};

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Watch connections.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..))]
    watchers: u64,
    /// Updates of the watched ConfigMap.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..))]
    updates: u64,
    /// Updates per second (0: each as soon as the previous one is answered).
    #[arg(long, default_value_t = 20)]
    rate: u64,
    /// The namespace watched (created if missing).
    #[arg(long, default_value = "default")]
    namespace: String,
    /// Bytes of (unchanging) data in the watched ConfigMap besides the
    /// sequence number and the timestamp.
    #[arg(long, default_value_t = 1024)]
    val_size: usize,
    /// Seconds after the last update for every watcher to get its events.
    #[arg(long, default_value_t = 30)]
    event_timeout: u64,
}

/// What of a watch event is read (the rest is skipped over).
#[derive(Debug, Deserialize)]
struct Event {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    object: EventObject,
}

#[derive(Debug, Default, Deserialize)]
struct EventObject {
    #[serde(default)]
    metadata: Meta,
    #[serde(default)]
    data: Data,
    /// An ERROR event's Status.
    #[serde(default)]
    message: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
struct Meta {
    #[serde(default)]
    name: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
struct Data {
    #[serde(default)]
    seq: Option<String>,
    #[serde(default)]
    sent: Option<String>,
}

/// What one watcher got.
#[derive(Debug, Default)]
struct Seen {
    /// `data.seq` of each MODIFIED event of the watched object, in order.
    seqs: Vec<u64>,
    /// Microseconds from `data.sent` to receipt, one per event.
    latencies: Vec<u64>,
    /// Anything else wrong (a broken stream, an unexpected event).
    problems: Vec<String>,
}

pub async fn run(api: &Api, target: &Target, args: Args) -> Result<Outcome, String> {
    super::ensure_namespace(api, &args.namespace).await?;
    let collection = super::configmaps(&args.namespace);
    let name = format!("{}-watched", super::run_id());
    let mut object = super::configmap(&name, args.val_size);
    object["data"]["seq"] = json!("0");
    object["data"]["sent"] = json!("0");
    let created = api.post(&collection, &object).await?;
    if created.status.as_u16() != 201 {
        return Err(format!("creating the watched ConfigMap: {}", created.describe()));
    }
    let created: serde_json::Value =
        serde_json::from_slice(&created.body).map_err(|e| format!("the created ConfigMap: {e}"))?;
    let rv = created["metadata"]["resourceVersion"]
        .as_str()
        .ok_or("the created ConfigMap has no resourceVersion")?
        .to_string();

    // Long enough for the opening, the updates and the wait that follows.
    let updates_secs = args.updates.checked_div(args.rate).unwrap_or(args.updates / 10);
    let timeout = 600 + updates_secs + args.event_timeout;
    let watch_path = format!("{collection}?watch=true&resourceVersion={rv}&timeoutSeconds={timeout}");
    let tally = Arc::new(Tally::new().map_err(|e| e.to_string())?);
    let received = Arc::new(AtomicU64::new(0));
    let finished = Arc::new(AtomicU64::new(0));
    let (stop, stop_rx) = signal::channel(false);
    let name: Arc<str> = name.into();

    if !target.quiet {
        eprintln!("opening {} watches on {collection} from resourceVersion {rv}", args.watchers);
    }
    let opening = Instant::now();
    let mut open_latencies = tally.histogram();
    let opened = Arc::new(AtomicU64::new(0));
    let mut watchers = Vec::with_capacity(args.watchers as usize);
    {
        let _ticker = Ticker::start(opened.clone(), crate::progress(args.watchers, target.quiet));
        for w in 0..args.watchers {
            let began = Instant::now();
            let response = match api.open(&watch_path).await {
                Ok(response) if response.status().as_u16() == 200 => response,
                Ok(response) => {
                    let status = response.status();
                    let body = response.into_body().collect().await.map(|b| b.to_bytes()).unwrap_or_default();
                    let reply = super::http::Reply { status, body };
                    tally.sample(format!("watcher {w}: {}", reply.describe()));
                    watchers.push(None);
                    continue;
                }
                Err(e) => {
                    tally.sample(format!("watcher {w}: {e}"));
                    watchers.push(None);
                    continue;
                }
            };
            let _ = open_latencies.record(crate::load::micros(began.elapsed()));
            opened.fetch_add(1, Ordering::Relaxed);
            let reader = Reader {
                name: name.clone(),
                last: args.updates,
                received: received.clone(),
                finished: finished.clone(),
            };
            watchers.push(Some(tokio::spawn(reader.read(response, stop_rx.clone()))));
        }
    }
    if !target.quiet {
        eprintln!();
    }
    let opened_in = opening.elapsed();
    let open_count = opened.load(Ordering::Relaxed);

    // The writer.
    if !target.quiet {
        eprintln!("updating {name} {} times", args.updates);
    }
    let path = format!("{collection}/{name}");
    let mut write_latencies = tally.histogram();
    let mut written = Vec::with_capacity(args.updates as usize);
    let mut pace =
        (args.rate > 0).then(|| tokio::time::interval(Duration::from_secs_f64(1.0 / args.rate as f64)));
    if let Some(pace) = pace.as_mut() {
        pace.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    }
    let ticker = Ticker::start(received.clone(), crate::progress(args.updates * open_count, target.quiet));
    let began = Instant::now();
    for seq in 1..=args.updates {
        if let Some(pace) = pace.as_mut() {
            pace.tick().await;
        }
        let sent = super::unix_nanos();
        let patch = json!({"data": {"seq": seq.to_string(), "sent": sent.to_string()}});
        let write = Instant::now();
        match api.merge_patch(&path, &patch).await {
            Ok(reply) if reply.status.as_u16() == 200 => {
                let _ = write_latencies.record(crate::load::micros(write.elapsed()));
                written.push(seq);
            }
            Ok(reply) => tally.error(format!("update {seq}: {}", reply.describe())),
            Err(e) => tally.error(format!("update {seq}: {e}")),
        }
    }
    let writes_in = began.elapsed();

    // Every watcher has until the deadline to get the last update.
    let deadline = Instant::now() + Duration::from_secs(args.event_timeout);
    while finished.load(Ordering::Relaxed) < open_count && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let delivered_in = began.elapsed();
    let _ = stop.send(true);
    let mut latencies = tally.histogram();
    let (mut missed, mut disordered, mut failed_watchers, mut slowest) = (0u64, 0u64, 0u64, 0u64);
    for (w, watcher) in watchers.into_iter().enumerate() {
        let seen = match watcher {
            Some(task) => match task.await {
                Ok(seen) => seen,
                Err(e) => Seen { problems: vec![format!("the task failed: {e}")], ..Seen::default() },
            },
            None => Seen { problems: vec!["did not open".into()], ..Seen::default() },
        };
        for &micros in &seen.latencies {
            let _ = latencies.record(micros);
        }
        slowest = slowest.max(seen.latencies.iter().copied().max().unwrap_or(0));
        let check = check(&written, &seen.seqs);
        if check.missing > 0 || check.disordered > 0 || !seen.problems.is_empty() {
            failed_watchers += 1;
            let mut what = Vec::new();
            if check.missing > 0 {
                what.push(format!(
                    "missed {} of {} events (first: seq {})",
                    check.missing,
                    written.len(),
                    check.first_missing
                ));
            }
            if check.disordered > 0 {
                what.push(format!("{} events out of order or repeated", check.disordered));
            }
            what.extend(seen.problems.iter().cloned());
            tally.sample(format!("watcher {w}: {}", what.join("; ")));
        }
        missed += check.missing;
        disordered += check.disordered;
        // Events missed or out of order are the errors; problems that cost
        // no event (a stray event) count one each.
        let errors = check.missing + check.disordered;
        tally.errors(if errors > 0 { errors } else { seen.problems.len() as u64 }, "a watcher fell short");
    }
    drop(ticker);
    if !target.quiet {
        eprintln!();
    }
    let ms = super::ms;
    super::say(
        target.quiet,
        &format!(
            "Watch: {open_count} of {} watchers opened in {:.2} s (p50 {:.3} ms, p99 {:.3} ms); \
             {} of {} updates made in {:.2} s (p50 {:.3} ms, p99 {:.3} ms); \
             {} of {} events received ({missed} missed, {disordered} out of order, \
             {failed_watchers} watchers short), all in {:.2} s; slowest event {:.3} ms. \
             The summary is of event latencies, update sent to event received, per watcher per update.",
            args.watchers,
            opened_in.as_secs_f64(),
            ms(&open_latencies, 0.5),
            ms(&open_latencies, 0.99),
            written.len(),
            args.updates,
            writes_in.as_secs_f64(),
            ms(&write_latencies, 0.5),
            ms(&write_latencies, 0.99),
            latencies.len(),
            written.len() as u64 * args.watchers,
            delivered_in.as_secs_f64(),
            slowest as f64 / 1000.0,
        ),
    );
    Ok(tally.outcome(writes_in, &latencies))
}

/// How one watcher's sequence numbers compare with the updates made.
#[derive(Debug, PartialEq, Eq)]
struct Check {
    /// Updates whose event never came.
    missing: u64,
    /// The first of those (0: none).
    first_missing: u64,
    /// Events that came no later than one before them (reordered or
    /// repeated).
    disordered: u64,
}

/// `written` is ascending (the successful updates); `seen` is what came.
fn check(written: &[u64], seen: &[u64]) -> Check {
    let disordered = seen.windows(2).filter(|pair| pair[1] <= pair[0]).count() as u64;
    let mut got: Vec<u64> = seen.to_vec();
    got.sort_unstable();
    got.dedup();
    let missing: Vec<u64> = written.iter().copied().filter(|seq| got.binary_search(seq).is_err()).collect();
    Check { missing: missing.len() as u64, first_missing: missing.first().copied().unwrap_or(0), disordered }
}

/// One watcher's stream reader.
struct Reader {
    name: Arc<str>,
    /// The last update's seq: once it has come, the reader is done.
    last: u64,
    received: Arc<AtomicU64>,
    finished: Arc<AtomicU64>,
}

impl Reader {
    async fn read(self, response: Response<Incoming>, mut stop: signal::Receiver<bool>) -> Seen {
        let mut seen = Seen::default();
        let mut body = response.into_body();
        let mut buffer: Vec<u8> = Vec::new();
        loop {
            let frame = tokio::select! {
                _ = stop.changed() => break,
                frame = body.frame() => frame,
            };
            let data = match frame {
                Some(Ok(frame)) => match frame.into_data() {
                    Ok(data) => data,
                    Err(_) => continue,
                },
                Some(Err(e)) => {
                    seen.problems.push(format!("the stream broke: {}", super::http::chain(&e)));
                    break;
                }
                None => {
                    seen.problems.push("the server ended the watch".into());
                    break;
                }
            };
            let now = super::unix_nanos();
            let start = buffer.len();
            buffer.extend_from_slice(&data);
            // Lines end in '\n'; only the new bytes need searching.
            let mut from = 0;
            let mut scan = start;
            while let Some(offset) = buffer[scan..].iter().position(|&b| b == b'\n') {
                let end = scan + offset;
                self.event(&buffer[from..end], now, &mut seen);
                from = end + 1;
                scan = from;
            }
            buffer.drain(..from);
            if seen.seqs.last() == Some(&self.last) {
                break;
            }
        }
        self.finished.fetch_add(1, Ordering::Relaxed);
        seen
    }

    fn event(&self, line: &[u8], now: u64, seen: &mut Seen) {
        if line.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        let event: Event = match serde_json::from_slice(line) {
            Ok(event) => event,
            Err(e) => {
                seen.problems.push(format!("an event that is not JSON: {e}"));
                return;
            }
        };
        match event.kind.as_str() {
            "BOOKMARK" => {}
            "MODIFIED" if event.object.metadata.name.as_deref() == Some(&*self.name) => {
                let data = &event.object.data;
                let seq = data.seq.as_deref().and_then(|s| s.parse::<u64>().ok());
                let sent = data.sent.as_deref().and_then(|s| s.parse::<u64>().ok());
                match (seq, sent) {
                    (Some(seq), Some(sent)) => {
                        seen.seqs.push(seq);
                        seen.latencies.push((now.saturating_sub(sent) / 1000).clamp(1, 60_000_000));
                        self.received.fetch_add(1, Ordering::Relaxed);
                    }
                    _ => seen.problems.push("a MODIFIED event without data.seq and data.sent".into()),
                }
            }
            "ERROR" => seen.problems.push(format!(
                "an ERROR event: {}",
                event.object.message.as_deref().unwrap_or("(no message)")
            )),
            other => seen.problems.push(format!(
                "an unexpected {other} event for {}",
                event.object.metadata.name.as_deref().unwrap_or("(no name)")
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_watcher_that_got_everything_in_order_passes() {
        assert_eq!(check(&[1, 2, 3], &[1, 2, 3]), Check { missing: 0, first_missing: 0, disordered: 0 });
    }

    #[test]
    fn misses_and_reorders_are_counted() {
        assert_eq!(check(&[1, 2, 3, 4], &[1, 3, 2]), Check { missing: 1, first_missing: 4, disordered: 1 });
        assert_eq!(check(&[1, 2], &[1, 1, 2]), Check { missing: 0, first_missing: 0, disordered: 1 });
        // An update that failed for the writer but whose event came is no
        // error (it may have been applied after all).
        assert_eq!(check(&[1, 3], &[1, 2, 3]), Check { missing: 0, first_missing: 0, disordered: 0 });
    }
}
