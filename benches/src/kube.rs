//! `kube`: kube-apiserver's storage pattern against etcd's v3 API, so rtcd
//! and etcd can be compared on what Kubernetes actually sends them
//! (`storage/etcd3/store.go`, `watcher.go`, `cacher/`).
//!
//! Before the clock starts, `--objects` objects are created under
//! `/registry/pods/<namespace>/<name>` and `--watchers` watches open on that
//! prefix (each its own stream, as each apiserver's cacher has one). Then
//! `--total` operations run, each chosen from `--mix` by a hash of its number
//! so runs replay identically:
//!
//! * create: `Txn{MOD(new key) == 0 → Put}` for a new object (kube's Create,
//!   AlreadyExists if the compare fails);
//! * update: GuaranteedUpdate, `Txn{MOD(key) == rev → Put} else {Range key}`
//!   from a cached revision (or a Get, `--update-get`), retried from the
//!   else branch's value on a conflict;
//! * list: a paged Range over the prefix, `--page-size` keys a page, later
//!   pages pinned to the first page's revision from last key + `\0`;
//! * get: `Range(key, limit 1)`, linearizable.
//!
//! Every watcher must see every write's event once, in order, with prev_kv
//! on updates; it sends a progress request every `--progress-interval`, as
//! consistent reads from the watch cache do. The summary is of all
//! operations; a per-operation breakdown goes to stderr.

mod ops;
mod stats;
mod watchers;

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::Target;
use crate::load::{self, Outcome};

use ops::{Op, Plan};
use stats::Stats;

/// At least 1: zero objects, namespaces or keys per page measure nothing.
fn positive() -> clap::builder::RangedU64ValueParser<u64> {
    clap::builder::RangedU64ValueParser::new().range(1..)
}

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Operations (create, update, list, get) over all clients.
    #[arg(long, default_value_t = 10_000)]
    total: u64,
    /// Objects created before the run, which updates and gets then touch
    /// (creates during the run make new objects besides these).
    #[arg(long, default_value_t = 1000, value_parser = positive())]
    objects: u64,
    /// Namespaces the objects are spread over (the keys' layout).
    #[arg(long, default_value_t = 10, value_parser = positive())]
    namespaces: u64,
    /// Weights of create,update,list,get (percentages if they add up to
    /// 100). The default resembles a controller-heavy cluster: mostly status
    /// updates and direct gets, few creates, rare lists that reach etcd.
    #[arg(long, default_value = "10,60,1,29", value_parser = parse_mix)]
    mix: Mix,
    /// Keys per list page (kube-apiserver's default chunk size is 500).
    #[arg(long, default_value_t = 500, value_parser = positive())]
    page_size: u64,
    /// Watches on the resource prefix, one stream each (0: none).
    #[arg(long, default_value_t = 10)]
    watchers: u64,
    /// Seconds between progress requests on each watch stream (0: none).
    #[arg(long, default_value_t = 1.0, value_parser = parse_seconds)]
    progress_interval: f64,
    /// Bytes per object (JSON-ish, padded).
    #[arg(long, default_value_t = 1024)]
    val_size: usize,
    /// Read every object with a Get before updating it, instead of starting
    /// from the revision last seen (kube-apiserver's cachedExistingObject).
    #[arg(long)]
    update_get: bool,
    /// Operations per second over all clients (0: no limit).
    #[arg(long, default_value_t = 0)]
    rate: u64,
}

/// The weights of each operation, in [`Op::ALL`]'s order.
#[derive(Debug, Clone, Copy)]
pub struct Mix([u64; 4]);

fn parse_mix(text: &str) -> Result<Mix, String> {
    let weights: Vec<u64> = text
        .split(',')
        .map(|w| w.trim().parse::<u64>().map_err(|e| format!("{w:?}: {e}")))
        .collect::<Result<_, _>>()?;
    let weights: [u64; 4] =
        weights.try_into().map_err(|_| "four weights: create,update,list,get".to_string())?;
    if weights.iter().sum::<u64>() == 0 {
        return Err("at least one weight above 0".into());
    }
    Ok(Mix(weights))
}

fn parse_seconds(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(secs) if secs.is_finite() && secs >= 0.0 => Ok(secs),
        _ => Err(format!("{text:?}: seconds, 0 or more")),
    }
}

impl Mix {
    /// The operation of request `n`: a hash of `n` into the weights.
    fn pick(&self, n: u64) -> Op {
        let total: u64 = self.0.iter().sum();
        let mut point = crate::mix(n) % total.max(1);
        for (op, &weight) in Op::ALL.iter().zip(&self.0) {
            if point < weight {
                return *op;
            }
            point -= weight;
        }
        Op::Get
    }
}

pub async fn run(target: &Target, args: Args) -> Result<Outcome, String> {
    let plan = Arc::new(Plan {
        prefix: "/registry/pods/".into(),
        objects: args.objects,
        namespaces: args.namespaces,
        run: run_id(),
        val_size: args.val_size,
        page_size: args.page_size,
        update_get: args.update_get,
        cache: (0..args.objects).map(|_| Default::default()).collect(),
    });
    say(target.quiet, &format!("kube: seeding {} objects", args.objects));
    ops::seed(target, &plan).await?;

    // The watchers start where a cacher's initial list would have left
    // them: just after the revision the seeding ended at.
    let mut control = load::connections(&target.endpoints, 1).await.map_err(|e| e.to_string())?;
    let control = control.pop().ok_or("no connection")?;
    let start_rev = ops::current_revision(control.clone(), &plan.prefix).await?;
    let interval = (args.progress_interval > 0.0).then(|| Duration::from_secs_f64(args.progress_interval));
    say(target.quiet, &format!("kube: opening {} watchers from revision {}", args.watchers, start_rev + 1));
    let watch =
        watchers::Watchers::open(target, &plan.prefix, start_rev + 1, args.watchers, interval).await?;

    let stats = Arc::new(Stats::new().map_err(|e| e.to_string())?);
    let mut outcome = operate(target, &args, &plan, &stats).await?;

    let writes = stats.writes();
    let end_rev = ops::current_revision(control, &plan.prefix).await?;
    let seen = watch.finish(writes).await;
    // Even with --json: the breakdown is what a script's log keeps of the mix.
    eprintln!("\n{}\n{}", stats.breakdown(&plan, (start_rev, end_rev)), seen.describe(writes));
    for (count, why) in seen.errors() {
        outcome.errors += count;
        if outcome.error_samples.len() < 8 {
            outcome.error_samples.push(why);
        }
    }
    Ok(outcome)
}

/// The timed part: `--total` operations from the mix, over the clients.
async fn operate(
    target: &Target,
    args: &Args,
    plan: &Arc<Plan>,
    stats: &Arc<Stats>,
) -> Result<Outcome, String> {
    let request = {
        let (plan, stats, mix) = (plan.clone(), stats.clone(), args.mix);
        move |client, n| {
            let (plan, stats) = (plan.clone(), stats.clone());
            async move { ops::execute(client, &plan, &stats, mix.pick(n), n).await }
        }
    };
    let progress = crate::progress(args.total, target.quiet);
    load::run(&target.shape(args.total, args.rate), request, progress).await.map_err(|e| e.to_string())
}

/// A run's own tag for the names of the objects its creates make, so a
/// rerun against the same store creates rather than finding them there.
fn run_id() -> u32 {
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
    crate::mix(nanos) as u32
}

/// A step of the setup, on stderr (none with `--json`).
fn say(quiet: bool, text: &str) {
    if !quiet {
        eprintln!("{text}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mix_follows_its_weights() {
        let Ok(mix) = parse_mix("10,60,0,30") else { panic!("a valid mix") };
        let mut counts = [0u64; 4];
        for n in 0..10_000 {
            counts[mix.pick(n) as usize] += 1;
        }
        assert_eq!(counts[Op::List as usize], 0);
        assert!((800..1200).contains(&counts[Op::Create as usize]), "{counts:?}");
        assert!((5600..6400).contains(&counts[Op::Update as usize]), "{counts:?}");
        assert_eq!(counts.iter().sum::<u64>(), 10_000);
    }

    #[test]
    fn nonsense_mixes_are_refused() {
        for text in ["", "1,2,3", "1,2,3,4,5", "0,0,0,0", "1,x,1,1", "1,-1,1,1"] {
            assert!(parse_mix(text).is_err(), "{text:?}");
        }
        assert!(parse_seconds("-1").is_err() && parse_seconds("NaN").is_err());
        assert_eq!(parse_seconds("0.5"), Ok(0.5));
    }
}
