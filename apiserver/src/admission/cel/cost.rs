//! What an evaluation may cost, as kube bounds it: each call at most
//! [`PER_CALL_LIMIT`], and the evaluations of one object (a custom
//! resource's rules, one policy binding's expressions) together within a
//! [`Budget`]. Over either, evaluation stops with cel-go's and kube's texts.
//!
//! The cel crate has no cost hook, so compiled trees are instrumented:
//! every comprehension (`all`, `exists`, `map`, ...) calls `@tick` once per
//! element, charging the nodes one iteration evaluates, and `matches` is
//! `@matches` (see `regex.rs`), charging the string it scans. The whole
//! tree's nodes are charged once up front. A tick also stops evaluation
//! once the request's deadline has passed or its client has gone (checked
//! every [`CHECK_FREQUENCY`] ticks, as cel-go checks for interruption; the
//! client at most every [`PROBE_INTERVAL`]). Costs are counted on the
//! evaluating thread: an evaluation never awaits.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::request::ClientPresence;

use cel::ExecutionError;
use cel::common::ast::{CallExpr, ComprehensionExpr, EntryExpr, Expr, IdedExpr, LiteralValue, operators};
use cel::common::types::{CelBool, CelInt};
use cel::common::value::CowVal;

/// kube's limit on one evaluation (`PerCallLimit`).
pub const PER_CALL_LIMIT: u64 = 1_000_000;
/// kube's budget for a custom resource's rules, or one policy binding's
/// expressions (`RuntimeCELCostBudget`).
pub const RUNTIME_BUDGET: u64 = 10_000_000;
/// kube's budget for one webhook's match conditions
/// (`RuntimeCELCostBudgetMatchConditions`).
pub const MATCH_CONDITIONS_BUDGET: u64 = 2_500_000;
/// Comprehension iterations between looks at the deadline.
const CHECK_FREQUENCY: u64 = 100;
/// The least time between two looks at the client's connection (a system
/// call each).
const PROBE_INTERVAL: Duration = Duration::from_millis(10);

/// cel-go's error once a call's cost passes its limit.
pub const COST_LIMIT_EXCEEDED: &str = "operation cancelled: actual cost limit exceeded";
/// kube's error once an object's budget is spent.
pub const OUT_OF_BUDGET: &str =
    "validation failed due to running out of cost budget, no further validation rules will be run";
/// cel-go's error for an evaluation interrupted (here: the request's
/// deadline passed, or its client went).
pub const INTERRUPTED: &str = "operation interrupted";

/// The name of the per-iteration charge; `@` keeps it out of what an
/// expression can write.
pub(super) const TICK: &str = "@tick";

/// What is left of one object's budget, shared by its evaluations.
#[derive(Debug)]
pub struct Budget(AtomicU64);

impl Budget {
    pub fn new(total: u64) -> Budget {
        Budget(AtomicU64::new(total))
    }

    pub fn remaining(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }

    /// Whether evaluations have spent it all: none may run any more.
    pub fn is_spent(&self) -> bool {
        self.remaining() == 0
    }

    /// Leaves nothing: what kube does once one call passes its limit.
    pub fn spend_all(&self) {
        self.spend(u64::MAX);
    }

    fn spend(&self, cost: u64) {
        let _ =
            self.0.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| Some(left.saturating_sub(cost)));
    }
}

impl Default for Budget {
    fn default() -> Self {
        Budget::new(RUNTIME_BUDGET)
    }
}

/// Why a metered evaluation was stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    OverLimit,
    Interrupted,
}

/// The running count of the evaluation on this thread.
struct Meter {
    spent: u64,
    limit: u64,
    deadline: Option<Instant>,
    client: Option<ClientPresence>,
    /// When the client was last looked at; None before the first look.
    probed: Option<Instant>,
    ticks: u64,
    stop: Option<Stop>,
}

impl Meter {
    /// Whether the request's work must stop: its deadline has passed, or
    /// its client has gone.
    fn interrupted(&mut self) -> bool {
        let now = Instant::now();
        if self.deadline.is_some_and(|d| now >= d) {
            return true;
        }
        let Some(client) = &self.client else { return false };
        if self.probed.is_some_and(|at| now.duration_since(at) < PROBE_INTERVAL) {
            return false;
        }
        self.probed = Some(now);
        client.is_gone()
    }
}

thread_local! {
    static METER: RefCell<Option<Meter>> = const { RefCell::new(None) };
}

/// Runs `evaluate` metered: `upfront` charged at once, stopped past what is
/// left of `budget` or the call limit, whichever is less; what it spent is
/// taken from `budget`. Its result, or kube's text for why it was stopped
/// (not run at all once `budget` is spent).
pub(super) fn metered<T>(
    budget: &Budget,
    upfront: u64,
    evaluate: impl FnOnce() -> T,
) -> Result<T, &'static str> {
    let remaining = budget.remaining();
    if remaining == 0 {
        return Err(OUT_OF_BUDGET);
    }
    let limit = PER_CALL_LIMIT.min(remaining);
    let meter = Meter {
        spent: 0,
        limit,
        deadline: crate::request::deadline::current(),
        client: crate::request::deadline::client(),
        probed: None,
        ticks: 0,
        stop: None,
    };
    let outer = METER.with(|m| m.replace(Some(meter)));
    let _ = charge(upfront);
    let result = evaluate();
    let Some(meter) = METER.with(|m| m.replace(outer)) else {
        // Only `metered` sets and takes the meter, and it is not reentered.
        return Ok(result);
    };
    budget.spend(meter.spent);
    match meter.stop {
        None => Ok(result),
        Some(Stop::Interrupted) => Err(INTERRUPTED),
        // The budget's end, not the call's limit, stopped it.
        Some(Stop::OverLimit) if limit < PER_CALL_LIMIT => {
            budget.spend_all();
            Err(OUT_OF_BUDGET)
        }
        Some(Stop::OverLimit) => Err(COST_LIMIT_EXCEEDED),
    }
}

/// Charges `cost` to the evaluation on this thread (none outside one);
/// an error once it is over its limit, past its deadline or without its
/// client, and from then on.
pub(super) fn charge(cost: u64) -> Result<(), ExecutionError> {
    METER.with(|m| {
        let mut meter = m.borrow_mut();
        let Some(meter) = meter.as_mut() else { return Ok(()) };
        if meter.stop.is_none() {
            meter.spent = meter.spent.saturating_add(cost);
            meter.ticks += 1;
            if meter.spent > meter.limit {
                meter.stop = Some(Stop::OverLimit);
            } else if meter.ticks % CHECK_FREQUENCY == 0 && meter.interrupted() {
                meter.stop = Some(Stop::Interrupted);
            }
        }
        match meter.stop {
            None => Ok(()),
            Some(_) => Err(ExecutionError::function_error(TICK, COST_LIMIT_EXCEEDED)),
        }
    })
}

/// `@tick(weight)`: one comprehension iteration, charged `weight`.
pub(super) fn tick<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let weight = args.first().and_then(|w| w.downcast_ref::<CelInt>()).map_or(1, |w| *w.inner());
    charge(u64::try_from(weight).unwrap_or(1))?;
    Ok(CowVal::owned(CelBool::from(true)))
}

/// How many nodes `root` has, walked without recursion.
pub(super) fn nodes(root: &IdedExpr) -> u64 {
    let mut count = 0;
    let mut pending = vec![root];
    while let Some(node) = pending.pop() {
        count += 1;
        match &node.expr {
            Expr::Call(call) => {
                pending.extend(call.target.as_deref());
                pending.extend(call.args.iter());
            }
            Expr::Comprehension(c) => {
                pending.extend([&c.iter_range, &c.accu_init, &c.loop_cond, &c.loop_step, &c.result]);
            }
            Expr::List(list) => pending.extend(list.elements.iter()),
            Expr::Select(select) => pending.push(&select.operand),
            Expr::Map(map) => {
                for entry in &map.entries {
                    if let EntryExpr::MapEntry(entry) = &entry.expr {
                        pending.extend([&entry.key, &entry.value]);
                    }
                }
            }
            Expr::Struct(literal) => {
                for entry in &literal.entries {
                    match &entry.expr {
                        EntryExpr::StructField(field) => pending.push(&field.value),
                        EntryExpr::MapEntry(entry) => pending.extend([&entry.key, &entry.value]),
                    }
                }
            }
            Expr::Ident(_) | Expr::Literal(_) | Expr::Unspecified => {}
        }
    }
    count
}

/// Instruments `node` and everything below it: comprehensions tick,
/// `matches` is metered. Recursive: called only on trees whose depth was
/// checked.
pub(super) fn instrument(node: &mut IdedExpr) {
    match &mut node.expr {
        Expr::Call(call) => {
            if let Some(target) = call.target.as_deref_mut() {
                instrument(target);
            }
            call.args.iter_mut().for_each(instrument);
            super::regex::meter_call(call);
        }
        Expr::Comprehension(c) => {
            for part in
                [&mut c.iter_range, &mut c.accu_init, &mut c.loop_cond, &mut c.loop_step, &mut c.result]
            {
                instrument(part);
            }
            meter_iterations(c);
        }
        Expr::List(list) => list.elements.iter_mut().for_each(instrument),
        Expr::Select(select) => instrument(&mut select.operand),
        Expr::Map(map) => {
            for entry in &mut map.entries {
                if let EntryExpr::MapEntry(entry) = &mut entry.expr {
                    instrument(&mut entry.key);
                    instrument(&mut entry.value);
                }
            }
        }
        Expr::Struct(literal) => {
            for entry in &mut literal.entries {
                match &mut entry.expr {
                    EntryExpr::StructField(field) => instrument(&mut field.value),
                    EntryExpr::MapEntry(entry) => {
                        instrument(&mut entry.key);
                        instrument(&mut entry.value);
                    }
                }
            }
        }
        Expr::Ident(_) | Expr::Literal(_) | Expr::Unspecified => {}
    }
}

/// Makes each iteration of `c` tick, charged the nodes an iteration
/// evaluates. The tick guards what runs per element, in a ternary so that
/// its error stops the loop (`&&` would let a false operand swallow it).
/// `map` and `filter` keep the shape the cel crate appends in place for
/// (a literal condition; `@result + [x]`, or `guard ? @result + [x] :
/// @result`): their tick goes in the guard.
fn meter_iterations(c: &mut ComprehensionExpr) {
    let weight = i64::try_from(nodes(&c.loop_cond) + nodes(&c.loop_step)).unwrap_or(i64::MAX);
    let accu = c.accu_var.clone();
    if !appends_only(c) {
        let cond = std::mem::take(&mut c.loop_cond);
        c.loop_cond = ticked(weight, cond, literal(LiteralValue::Boolean(false.into())));
        return;
    }
    match &mut c.loop_step.expr {
        Expr::Call(call) if call.func_name == operators::CONDITIONAL => {
            let guard = std::mem::take(&mut call.args[0]);
            call.args[0] = ticked(weight, guard, literal(LiteralValue::Boolean(false.into())));
        }
        _ => {
            let step = std::mem::take(&mut c.loop_step);
            c.loop_step = ticked(weight, step, node(Expr::Ident(accu)));
        }
    }
}

/// Whether `c` is a `map` or `filter` the cel crate runs as appends: its
/// result is the accumulator, its condition a literal, its step appends a
/// list to the accumulator, under a guard or not.
fn appends_only(c: &ComprehensionExpr) -> bool {
    let is_accu = |e: &IdedExpr| matches!(&e.expr, Expr::Ident(name) if *name == c.accu_var);
    let appends = |e: &IdedExpr| match &e.expr {
        Expr::Call(call) if call.func_name == operators::ADD && call.target.is_none() => {
            matches!(call.args.as_slice(), [lhs, rhs] if is_accu(lhs) && matches!(rhs.expr, Expr::List(_)))
        }
        _ => false,
    };
    if !is_accu(&c.result) || !matches!(c.loop_cond.expr, Expr::Literal(_)) {
        return false;
    }
    match &c.loop_step.expr {
        Expr::Call(call) if call.func_name == operators::CONDITIONAL && call.target.is_none() => {
            matches!(call.args.as_slice(), [_, step, otherwise] if appends(step) && is_accu(otherwise))
        }
        _ => appends(&c.loop_step),
    }
}

/// `@tick(weight) ? then : otherwise`.
fn ticked(weight: i64, then: IdedExpr, otherwise: IdedExpr) -> IdedExpr {
    let tick = node(Expr::Call(CallExpr {
        func_name: TICK.to_string(),
        target: None,
        args: vec![literal(LiteralValue::Int(CelInt::from(weight)))],
    }));
    node(Expr::Call(CallExpr {
        func_name: operators::CONDITIONAL.to_string(),
        target: None,
        args: vec![tick, then, otherwise],
    }))
}

fn literal(value: LiteralValue) -> IdedExpr {
    node(Expr::Literal(value))
}

/// A node the instrumentation adds; ids only place parse errors, and
/// these are made after parsing.
pub(super) fn node(expr: Expr) -> IdedExpr {
    IdedExpr { id: 0, expr }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    use serde_json::{Value, json};

    use super::*;
    use crate::admission::cel::{Variables, compile};

    fn evaluate(variables: &Variables, expression: &str) -> Result<Value, String> {
        variables.json(&*compile(expression)?)
    }

    fn with_items(items: Value) -> Variables {
        let mut variables = Variables::default();
        variables.set("self", &json!({"items": items})).unwrap();
        variables
    }

    #[test]
    fn metering_leaves_every_macro_meaning_what_it_meant() {
        let variables = with_items(json!([0, 1, 2, 3]));
        let cases = [
            ("self.items.all(x, x >= 0)", json!(true)),
            ("self.items.exists(x, x > 2)", json!(true)),
            ("self.items.exists_one(x, x > 2)", json!(true)),
            ("self.items.map(x, x * 2)", json!([0, 2, 4, 6])),
            ("self.items.map(x, x > 1, x * 10)", json!([20, 30])),
            ("self.items.filter(x, x % 2 == 1)", json!([1, 3])),
            ("self.items.map(x, self.items.filter(y, y < x).size())", json!([0, 1, 2, 3])),
            // An error beside a deciding element is absorbed, as in cel-go.
            ("self.items.exists(x, 6 / x == 2)", json!(true)),
            (
                "['ab', 'xb', 'a'].filter(s, s.matches('^a')) + [matches('zz', 'z$')]",
                json!(["ab", "a", true]),
            ),
        ];
        for (expression, expected) in cases {
            assert_eq!(evaluate(&variables, expression), Ok(expected), "{expression}");
        }
        assert!(evaluate(&variables, "self.items.all(x, 6 / x > 0)").is_err());
    }

    #[test]
    fn a_call_past_its_limit_stops_at_once() {
        let variables = with_items(json!((0..6000).collect::<Vec<_>>()));
        let started = Instant::now();
        let outcome = evaluate(&variables, "self.items.all(x, self.items.all(y, y >= 0))");
        assert_eq!(outcome, Err(COST_LIMIT_EXCEEDED.to_string()));
        // 36 million iterations unmetered; stopped within the first million.
        assert!(started.elapsed() < Duration::from_secs(10), "{:?}", started.elapsed());
        // Something cheap still runs.
        assert_eq!(evaluate(&variables, "self.items.size()"), Ok(json!(6000)));
    }

    #[test]
    fn evaluations_sharing_a_budget_stop_when_it_is_spent() {
        let budget = Arc::new(Budget::new(3 * PER_CALL_LIMIT));
        let mut variables = Variables::default().with_budget(budget.clone());
        variables.set("self", &json!({"items": (0..1000).collect::<Vec<_>>()})).unwrap();
        // Each call: 100 × 1,000 inner iterations of 7 nodes, 0.7 of the
        // call's limit: four calls fit, the fifth finds too little left.
        let expression = "self.items.filter(x, x < 100).all(x, self.items.all(y, y >= 0))";
        let outcomes: Vec<_> = (0..6).map(|_| evaluate(&variables, expression)).collect();
        let passed = Ok(json!(true));
        let spent = Err(OUT_OF_BUDGET.to_string());
        assert_eq!(outcomes, [&passed, &passed, &passed, &passed, &spent, &spent].map(Clone::clone));
        assert!(budget.is_spent());
    }

    #[tokio::test]
    async fn a_passed_deadline_interrupts_evaluation() {
        let variables = with_items(json!((0..900).collect::<Vec<_>>()));
        let passed = Instant::now() - Duration::from_millis(1);
        let expression = "self.items.all(x, self.items.all(y, y >= 0))";
        let outcome =
            crate::request::deadline::within(passed, None, async { evaluate(&variables, expression) }).await;
        assert_eq!(outcome, Err(INTERRUPTED.to_string()));
    }

    #[tokio::test]
    async fn a_client_gone_interrupts_evaluation_one_there_does_not() {
        let variables = with_items(json!((0..900).collect::<Vec<_>>()));
        let expression = "self.items.all(x, self.items.all(y, y >= 0))";
        let later = Instant::now() + Duration::from_secs(600);
        let run =
            |client| {
                let variables = &variables;
                crate::request::deadline::within(later, Some(client), async move {
                    evaluate(variables, expression)
                })
            };
        // The client waits: the evaluation runs until kube's limit stops it.
        let (presence, client) = crate::request::presence::connected().await;
        assert_eq!(run(presence.clone()).await, Err(COST_LIMIT_EXCEEDED.to_string()));
        // The client closed its connection: stopped at the first look.
        drop(client);
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert_eq!(run(presence).await, Err(INTERRUPTED.to_string()));
    }

    #[test]
    fn matching_is_charged_by_the_length_it_scans() {
        let long = "ab".repeat(200_000);
        let mut variables = Variables::default();
        variables.set("self", &json!({"s": long, "items": (0..200).collect::<Vec<_>>()})).unwrap();
        // 40,001 × 3 per match: two hundred of them pass the limit.
        assert_eq!(evaluate(&variables, "self.s.matches('b+a')"), Ok(json!(true)));
        assert_eq!(
            evaluate(&variables, "self.items.all(i, self.s.matches('b+a'))"),
            Err(COST_LIMIT_EXCEEDED.to_string())
        );
    }
}
