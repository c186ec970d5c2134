//! How the server's seats are split among priority levels (kube's APF
//! controller and `conc_alloc`): each level's nominal share of the server's
//! concurrency (`--max-requests-inflight` + `--max-mutating-requests-inflight`)
//! by its `nominalConcurrencyShares`; of that, `lendablePercent` may be lent
//! to busier levels and `borrowingLimitPercent` more borrowed from idle ones.
//! Every 10 seconds the current limits are set from each level's seat
//! demand, within those bounds, summing to the server's total.

/// kube's smoothing of seat demand between adjustments.
const SMOOTHING: f64 = 0.977;
/// Below this, a target counts as this (kube's `MinTarget`).
const MIN_TARGET: f64 = 0.001;

/// One level's configuration, as allocation sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shares {
    pub exempt: bool,
    pub nominal_shares: u32,
    pub lendable_percent: u32,
    /// None: may borrow without bound.
    pub borrowing_limit_percent: Option<u32>,
    /// The hand size of a queuing level (bounds a request's seats).
    pub hand_size: Option<u32>,
}

/// A level's bounds, in seats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    pub nominal: u32,
    /// `nominal - lendable`: what it keeps however busy others are.
    pub lower: u32,
    /// `nominal + borrowable`.
    pub upper: u32,
    /// The most seats one request may take at this level; 0: no bound
    /// but the estimators' own.
    pub max_seats: u32,
}

/// Each level's bounds out of `server` seats. Nominal limits round up, so
/// they may sum to a little more than `server`, as kube's do.
pub fn bounds(server: u32, levels: &[Shares]) -> Vec<Bounds> {
    let share_sum: f64 = levels.iter().map(|l| f64::from(l.nominal_shares)).sum();
    levels
        .iter()
        .map(|level| {
            let nominal = match share_sum > 0.0 {
                true => (f64::from(server) * f64::from(level.nominal_shares) / share_sum).ceil() as u32,
                false => 0,
            };
            let lendable = (f64::from(nominal) * f64::from(level.lendable_percent) / 100.0).round() as u32;
            let borrowable = match (level.exempt, level.borrowing_limit_percent) {
                (false, Some(percent)) => (f64::from(nominal) * f64::from(percent) / 100.0).round() as u32,
                _ => server,
            };
            // 15% of the nominal seats, no more than a hand's share, at
            // least one; 0 (the estimators' own bounds) without queues.
            let max_seats = match level.hand_size {
                Some(hand) if hand > 0 => {
                    ((f64::from(nominal) * 0.15).ceil() as u32).min(nominal / hand).max(1)
                }
                _ => 0,
            };
            Bounds {
                nominal,
                lower: nominal.saturating_sub(lendable),
                upper: nominal + borrowable,
                max_seats,
            }
        })
        .collect()
}

/// A level's seat demand, remembered across adjustments.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct DemandStats {
    pub high_watermark: u32,
    pub smoothed: f64,
}

impl DemandStats {
    /// Takes in a period's `(average, deviation, high watermark)`.
    pub fn update(&mut self, period: Option<(f64, f64, f64)>, current: u32) {
        let Some((average, deviation, high)) = period else {
            self.high_watermark = current;
            return;
        };
        self.high_watermark = high.round() as u32;
        let envelope = average + deviation;
        self.smoothed = envelope.max(SMOOTHING * self.smoothed + (1.0 - SMOOTHING) * envelope);
    }
}

/// The current limits of `levels` (their bounds and demand), summing to the
/// nominal limits' sum: an exempt level takes what it used, the others
/// share the rest in proportion to their smoothed demand, each within its
/// bounds.
pub fn current_limits(levels: &[(Shares, Bounds, DemandStats)]) -> Vec<u32> {
    let total: u32 = levels.iter().map(|(_, b, _)| b.nominal).sum();
    let mut remaining = i64::from(total);
    let mut floors = Vec::new();
    for (shares, bounds, demand) in levels {
        let floor = match shares.exempt {
            true => bounds.lower.max(demand.high_watermark),
            false => bounds.lower.max(bounds.nominal.min(demand.high_watermark)),
        };
        if shares.exempt {
            remaining -= i64::from(floor);
        }
        floors.push(floor);
    }
    let limited: Vec<usize> = (0..levels.len()).filter(|&i| !levels[i].0.exempt).collect();
    let lower_sum: i64 = limited.iter().map(|&i| i64::from(levels[i].1.lower)).sum();
    let floor_sum: i64 = limited.iter().map(|&i| i64::from(floors[i])).sum();
    let mut limits: Vec<u32> = floors.clone();
    if remaining <= lower_sum {
        for &i in &limited {
            limits[i] = levels[i].1.lower;
        }
    } else if remaining <= floor_sum {
        // Not enough for every level's recent use: each gets its lower
        // bound and the same fraction of the way to its floor.
        let fraction = (remaining - lower_sum) as f64 / (floor_sum - lower_sum) as f64;
        for &i in &limited {
            let lower = levels[i].1.lower;
            limits[i] = lower + (f64::from(floors[i] - lower) * fraction).round() as u32;
        }
    } else {
        let items: Vec<(f64, f64, f64)> = limited
            .iter()
            .map(|&i| {
                let (_, bounds, demand) = levels[i];
                let floor = f64::from(floors[i]);
                (floor, f64::from(bounds.upper).max(floor), floor.max(demand.smoothed))
            })
            .collect();
        let shares = fair_allocation(remaining as f64, &items);
        for (&i, share) in limited.iter().zip(shares) {
            limits[i] = share.round() as u32;
        }
    }
    limits
}

/// Each item's `(lower, upper, target)` scaled by one common proportion and
/// clamped to its bounds, the proportion chosen so they sum to `required`
/// (as near as the bounds allow).
fn fair_allocation(required: f64, items: &[(f64, f64, f64)]) -> Vec<f64> {
    let allocate = |p: f64| -> Vec<f64> {
        items.iter().map(|&(lo, hi, target)| (target.max(MIN_TARGET) * p).clamp(lo, hi)).collect()
    };
    let sum = |p: f64| allocate(p).iter().sum::<f64>();
    // The sum grows with the proportion; bisect for where it meets.
    let mut high = items.iter().map(|&(_, hi, target)| hi / target.max(MIN_TARGET)).fold(1.0, f64::max);
    if sum(high) <= required {
        return allocate(high);
    }
    let mut low = 0.0;
    for _ in 0..100 {
        let middle = (low + high) / 2.0;
        if sum(middle) < required {
            low = middle;
        } else {
            high = middle;
        }
    }
    allocate(high)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limited(shares: u32, lendable: u32, borrowing: Option<u32>) -> Shares {
        Shares {
            exempt: false,
            nominal_shares: shares,
            lendable_percent: lendable,
            borrowing_limit_percent: borrowing,
            hand_size: Some(6),
        }
    }

    /// kube 1.37's bootstrap levels, in the order of `bootstrap.rs`:
    /// catch-all, exempt, system, node-high, leader-election,
    /// workload-high, workload-low, global-default.
    fn bootstrap_levels() -> Vec<Shares> {
        let exempt = Shares {
            exempt: true,
            nominal_shares: 0,
            lendable_percent: 0,
            borrowing_limit_percent: None,
            hand_size: None,
        };
        let catch_all = Shares { hand_size: None, ..limited(5, 0, None) };
        vec![
            catch_all,
            exempt,
            limited(30, 33, None),
            limited(40, 25, None),
            Shares { hand_size: Some(4), ..limited(10, 0, None) },
            limited(40, 50, None),
            limited(100, 90, None),
            limited(20, 50, None),
        ]
    }

    fn table(
        levels: &[Shares],
        bounds: &[Bounds],
        demand: &[DemandStats],
    ) -> Vec<(Shares, Bounds, DemandStats)> {
        (0..levels.len()).map(|i| (levels[i], bounds[i], demand[i])).collect()
    }

    #[test]
    fn kubes_default_six_hundred_seats_split_as_kube_splits_them() {
        let bounds = bounds(600, &bootstrap_levels());
        let nominal: Vec<u32> = bounds.iter().map(|b| b.nominal).collect();
        // ceil(600 × shares / 245).
        assert_eq!(nominal, vec![13, 0, 74, 98, 25, 98, 245, 49]);
        // Less round(nominal × lendablePercent), halves away from zero.
        let lower: Vec<u32> = bounds.iter().map(|b| b.lower).collect();
        assert_eq!(lower, vec![13, 0, 50, 73, 25, 49, 24, 24]);
        // global-default: min(ceil(49 × 0.15), 49 / 6) = 8 seats at most.
        let max_seats: Vec<u32> = bounds.iter().map(|b| b.max_seats).collect();
        assert_eq!(max_seats, vec![0, 0, 12, 15, 4, 15, 37, 8]);
        assert_eq!(bounds[1].upper, 600, "unbounded borrowing");
    }

    #[test]
    fn a_busy_level_borrows_what_idle_ones_lend() {
        let levels = bootstrap_levels();
        let bounds = bounds(600, &levels);
        let total: u32 = bounds.iter().map(|b| b.nominal).sum();
        let mut demand = vec![DemandStats::default(); levels.len()];
        // global-default wants 300 seats; everyone else is idle.
        demand[7] = DemandStats { high_watermark: 300, smoothed: 300.0 };
        let limits = current_limits(&table(&levels, &bounds, &demand));
        assert!(limits.iter().sum::<u32>().abs_diff(total) <= levels.len() as u32, "{limits:?}");
        assert!(limits[7] >= 300, "borrowed: {limits:?}");
        for (i, limit) in limits.iter().enumerate() {
            assert!(*limit >= bounds[i].lower, "level {i} keeps its lower bound: {limits:?}");
        }
        // Bounded borrowing stops at nominal + the limit's percent.
        let mut capped = levels.clone();
        capped[7].borrowing_limit_percent = Some(100);
        let capped_bounds = super::bounds(600, &capped);
        let limits = current_limits(&table(&capped, &capped_bounds, &demand));
        assert_eq!(limits[7], 98, "49 + 49");
        // Idle everywhere: nothing below its lower bound, the sum kept.
        let idle = vec![DemandStats::default(); levels.len()];
        let limits = current_limits(&table(&levels, &bounds, &idle));
        assert!(limits.iter().sum::<u32>().abs_diff(total) <= levels.len() as u32, "{limits:?}");
        assert_eq!(limits[1], 0, "exempt takes only what it used");
    }

    #[test]
    fn demand_is_smoothed_down_slowly_and_up_at_once() {
        let mut stats = DemandStats::default();
        stats.update(Some((10.0, 2.0, 15.0)), 0);
        assert_eq!((stats.high_watermark, stats.smoothed), (15, 12.0));
        stats.update(Some((0.0, 0.0, 0.0)), 0);
        assert!((stats.smoothed - 12.0 * 0.977).abs() < 1e-9);
    }
}
