//! What every area's metrics are made of: a histogram over fixed bounds,
//! series keyed by their label values (found again without allocating, so
//! counting a request costs a hash and a read lock), and Prometheus's text
//! format with kube's stability annotations on the help texts
//! (component-base's `[STABLE] (Deprecated since 1.34.0) ...`).

use std::collections::HashMap;
use std::fmt::Write;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

/// Observations counted per bucket, with their sum. The sum is an `f64`
/// kept as bits (Go's client does the same): byte sizes and certificate
/// lifetimes would overflow a fixed-point sum within hours.
#[derive(Debug)]
pub struct Histogram {
    /// Upper bounds, ascending; the implicit last bucket is `+Inf`.
    bounds: &'static [f64],
    /// Observations per bucket (not cumulative), `+Inf` last.
    counts: Box<[AtomicU64]>,
    sum_bits: AtomicU64,
}

impl Histogram {
    pub fn new(bounds: &'static [f64]) -> Histogram {
        let counts = (0..=bounds.len()).map(|_| AtomicU64::new(0)).collect();
        Histogram { bounds, counts, sum_bits: AtomicU64::new(0f64.to_bits()) }
    }

    pub fn observe(&self, value: f64) {
        // NaN would poison the sum for good; it has no bucket either.
        if value.is_nan() {
            return;
        }
        let bucket = self.bounds.iter().position(|&bound| value <= bound).unwrap_or(self.bounds.len());
        self.counts[bucket].fetch_add(1, Ordering::Relaxed);
        let mut old = self.sum_bits.load(Ordering::Relaxed);
        loop {
            let new = (f64::from_bits(old) + value).to_bits();
            match self.sum_bits.compare_exchange_weak(old, new, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => return,
                Err(current) => old = current,
            }
        }
    }

    /// Observations so far.
    pub fn count(&self) -> u64 {
        self.counts.iter().map(|c| c.load(Ordering::Relaxed)).sum()
    }

    /// Cumulative counts per bound (`+Inf` last, equal to the count), and
    /// the sum.
    pub fn snapshot(&self) -> (Vec<(f64, u64)>, f64) {
        let mut total = 0;
        let buckets = self
            .counts
            .iter()
            .enumerate()
            .map(|(i, count)| {
                total += count.load(Ordering::Relaxed);
                (self.bounds.get(i).copied().unwrap_or(f64::INFINITY), total)
            })
            .collect();
        (buckets, f64::from_bits(self.sum_bits.load(Ordering::Relaxed)))
    }
}

/// One series: its label values, in the family's label order, and what it
/// counts.
#[derive(Debug)]
pub struct Series<V, const N: usize> {
    labels: [Box<str>; N],
    pub value: V,
}

impl<V, const N: usize> Series<V, N> {
    pub fn labels(&self) -> [&str; N] {
        std::array::from_fn(|i| &*self.labels[i])
    }
}

/// A family's series by label values. Looking one up hashes the borrowed
/// values; only a series seen for the first time allocates.
#[derive(Debug)]
pub struct LabelMap<V, const N: usize> {
    by_hash: RwLock<HashMap<u64, Vec<Arc<Series<V, N>>>>>,
}

impl<V, const N: usize> Default for LabelMap<V, N> {
    fn default() -> Self {
        LabelMap { by_hash: RwLock::default() }
    }
}

impl<V, const N: usize> LabelMap<V, N> {
    /// The series of `labels`, made by `make` if there is none yet.
    pub fn get(&self, labels: [&str; N], make: impl FnOnce() -> V) -> Arc<Series<V, N>> {
        let hash = hash_of(&labels);
        let found = |bucket: &Vec<Arc<Series<V, N>>>| {
            bucket.iter().find(|series| series.labels.iter().map(|l| &**l).eq(labels)).cloned()
        };
        {
            let by_hash = self.by_hash.read().unwrap_or_else(|p| p.into_inner());
            if let Some(series) = by_hash.get(&hash).and_then(found) {
                return series;
            }
        }
        let mut by_hash = self.by_hash.write().unwrap_or_else(|p| p.into_inner());
        let bucket = by_hash.entry(hash).or_default();
        if let Some(series) = found(bucket) {
            return series;
        }
        let series = Arc::new(Series { labels: labels.map(Box::from), value: make() });
        bucket.push(series.clone());
        series
    }

    /// Runs `f` on the series of `labels` (made by `make` if new), under
    /// the read lock when it exists: no reference count touched.
    pub fn with<R>(&self, labels: [&str; N], make: impl FnOnce() -> V, f: impl FnOnce(&V) -> R) -> R {
        let hash = hash_of(&labels);
        {
            let by_hash = self.by_hash.read().unwrap_or_else(|p| p.into_inner());
            let bucket = by_hash.get(&hash).into_iter().flatten();
            if let Some(series) = bucket.into_iter().find(|s| s.labels.iter().map(|l| &**l).eq(labels)) {
                return f(&series.value);
            }
        }
        f(&self.get(labels, make).value)
    }

    /// Every series, ordered by label values (stable output).
    pub fn all(&self) -> Vec<Arc<Series<V, N>>> {
        let by_hash = self.by_hash.read().unwrap_or_else(|p| p.into_inner());
        let mut all: Vec<_> = by_hash.values().flatten().cloned().collect();
        drop(by_hash);
        all.sort_by(|a, b| a.labels.cmp(&b.labels));
        all
    }
}

fn hash_of(labels: &[&str]) -> u64 {
    let mut hasher = DefaultHasher::new();
    for label in labels {
        label.hash(&mut hasher);
    }
    hasher.finish()
}

/// component-base's stability levels, shown before each help text (the
/// process collector's families, registered past the framework, come from
/// `rtcd_metrics::process` without one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stability {
    Alpha,
    Beta,
    Stable,
}

/// A family's name, type and help text as kube declares them.
#[derive(Debug, Clone, Copy)]
pub struct Meta {
    pub name: &'static str,
    pub kind: Kind,
    pub help: &'static str,
    pub stability: Stability,
    /// `DeprecatedVersion`, when it has been reached.
    pub deprecated: Option<&'static str>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Counter,
    Gauge,
    Histogram,
}

impl Meta {
    pub const fn new(name: &'static str, kind: Kind, stability: Stability, help: &'static str) -> Meta {
        Meta { name, kind, help, stability, deprecated: None }
    }

    pub const fn deprecated_since(self, version: &'static str) -> Meta {
        Meta { deprecated: Some(version), ..self }
    }

    /// The HELP and TYPE lines: the help as component-base annotates it
    /// (deprecation first, then the stability level in front).
    pub fn header(&self, out: &mut String) {
        let level = match self.stability {
            Stability::Alpha => "[ALPHA] ",
            Stability::Beta => "[BETA] ",
            Stability::Stable => "[STABLE] ",
        };
        let kind = match self.kind {
            Kind::Counter => "counter",
            Kind::Gauge => "gauge",
            Kind::Histogram => "histogram",
        };
        let _ = write!(out, "# HELP {} {level}", self.name);
        if let Some(version) = self.deprecated {
            let _ = write!(out, "(Deprecated since {version}) ");
        }
        let _ = writeln!(out, "{}\n# TYPE {} {kind}", self.help, self.name);
    }

    /// A counter or gauge family over `samples`; nothing at all without
    /// samples (as kube's registry leaves out families with no series).
    pub fn write<'a, const N: usize>(
        &self,
        out: &mut String,
        names: [&str; N],
        samples: impl IntoIterator<Item = ([&'a str; N], f64)>,
    ) {
        let mut samples = samples.into_iter().peekable();
        if samples.peek().is_none() {
            return;
        }
        self.header(out);
        for (values, value) in samples {
            sample(out, self.name, "", &names, &values, None, value);
        }
    }

    /// A histogram family: per series its cumulative `_bucket`s (`le`),
    /// `_sum` and `_count`; nothing at all without series.
    pub fn write_histograms<'a, const N: usize>(
        &self,
        out: &mut String,
        names: [&str; N],
        series: impl IntoIterator<Item = ([&'a str; N], &'a Histogram)>,
    ) {
        let mut series = series.into_iter().peekable();
        if series.peek().is_none() {
            return;
        }
        self.header(out);
        for (values, histogram) in series {
            let (buckets, sum) = histogram.snapshot();
            let count = buckets.last().map_or(0, |(_, c)| *c);
            for (bound, cumulative) in buckets {
                let le = number(bound);
                sample(out, self.name, "_bucket", &names, &values, Some(("le", &le)), cumulative as f64);
            }
            sample(out, self.name, "_sum", &names, &values, None, sum);
            sample(out, self.name, "_count", &names, &values, None, count as f64);
        }
    }
}

/// One sample line: `name{labels} value`.
fn sample(
    out: &mut String,
    name: &str,
    suffix: &str,
    names: &[&str],
    values: &[&str],
    extra: Option<(&str, &str)>,
    value: f64,
) {
    out.push_str(name);
    out.push_str(suffix);
    let pairs = names.iter().zip(values).map(|(n, v)| (*n, *v)).chain(extra);
    let mut first = true;
    for (label, value) in pairs {
        out.push(if first { '{' } else { ',' });
        first = false;
        out.push_str(label);
        out.push_str("=\"");
        escape_into(out, value);
        out.push('"');
    }
    if !first {
        out.push('}');
    }
    out.push(' ');
    out.push_str(&number(value));
    out.push('\n');
}

/// A label value as the text format quotes it.
fn escape_into(out: &mut String, value: &str) {
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
}

/// A number as the text format writes it (`+Inf`, not Rust's `inf`).
pub fn number(value: f64) -> String {
    match value {
        v if v.is_nan() => "NaN".to_string(),
        v if v == f64::INFINITY => "+Inf".to_string(),
        v if v == f64::NEG_INFINITY => "-Inf".to_string(),
        v => v.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BOUNDS: &[f64] = &[0.5, 1.0];

    #[test]
    fn histograms_are_cumulative_and_inf_is_the_count() {
        let histogram = Histogram::new(BOUNDS);
        for value in [0.1, 0.5, 0.7, 3.0, f64::NAN] {
            histogram.observe(value);
        }
        let meta = Meta::new("x_seconds", Kind::Histogram, Stability::Stable, "X.");
        let mut out = String::new();
        meta.write_histograms(&mut out, ["verb"], [(["GET"], &histogram)]);
        assert_eq!(
            out,
            "# HELP x_seconds [STABLE] X.\n# TYPE x_seconds histogram\n\
             x_seconds_bucket{verb=\"GET\",le=\"0.5\"} 2\n\
             x_seconds_bucket{verb=\"GET\",le=\"1\"} 3\n\
             x_seconds_bucket{verb=\"GET\",le=\"+Inf\"} 4\n\
             x_seconds_sum{verb=\"GET\"} 4.3\n\
             x_seconds_count{verb=\"GET\"} 4\n"
        );
    }

    #[test]
    fn large_observations_keep_an_exact_sum() {
        let histogram = Histogram::new(BOUNDS);
        for _ in 0..1000 {
            histogram.observe(31_104_000.0);
        }
        assert_eq!(histogram.snapshot().1, 31_104_000_000.0);
    }

    #[test]
    fn help_texts_carry_deprecation_and_stability_and_values_are_escaped() {
        let meta = Meta::new("o", Kind::Gauge, Stability::Stable, "Objects.").deprecated_since("1.34.0");
        let mut out = String::new();
        meta.write(&mut out, ["resource"], [(["a\"b\\c\nd"], -1.0)]);
        assert_eq!(
            out,
            "# HELP o [STABLE] (Deprecated since 1.34.0) Objects.\n# TYPE o gauge\no{resource=\"a\\\"b\\\\c\\nd\"} -1\n"
        );
        let mut empty = String::new();
        meta.write::<1>(&mut empty, ["resource"], []);
        assert_eq!(empty, "", "no samples, no family");
    }

    #[test]
    fn series_are_found_again_by_their_values() {
        let map: LabelMap<AtomicU64, 2> = LabelMap::default();
        for labels in [["a", "b"], ["a", "b"], ["ab", ""], ["a", "b"]] {
            map.with(labels, AtomicU64::default, |c| c.fetch_add(1, Ordering::Relaxed));
        }
        let series = map.all();
        let all: Vec<_> = series.iter().map(|s| (s.labels(), s.value.load(Ordering::Relaxed))).collect();
        assert_eq!(all, vec![(["a", "b"], 3), (["ab", ""], 1)]);
    }
}
