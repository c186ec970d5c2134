//! A static estimate of what an expression may cost, the way cel-go's
//! checker estimates it for kube (`checker.Cost`): each identifier and
//! field selection costs 1, a comprehension its loop body times the most
//! elements its range may hold, string functions their traversal, with the
//! sizes of variables taken from what their declarations allow (a CRD
//! schema's `maxItems`, `maxLength`, ...).
//!
//! It is a lower bound of cel-go's maximum, never above it: where cel-go
//! knows more than this walk does (types this walk cannot infer, kube's
//! library functions not modelled here), the part is counted as nothing. A
//! caller can refuse what this estimate puts far over a limit knowing kube
//! refuses it too, with the same words; what it puts under may still be
//! over in kube (runtime limits stop those when they run).

use cel::common::ast::{CallExpr, ComprehensionExpr, EntryExpr, Expr, IdedExpr, LiteralValue, operators};

/// One step from a variable to a value inside it, as cel-go names paths.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    Field(String),
    /// An element of a list.
    Items,
    /// A key of a map.
    Keys,
    /// A value of a map.
    Values,
}

/// What a value can be, as far as the estimate needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    String,
    Bytes,
    List,
    Map,
    /// An object with declared fields (a struct to cel-go).
    Object,
    /// A number, a bool, or a value of no declared type.
    Other,
}

/// A declared value: its kind and the most elements it may hold (code
/// points of a string, items of a list, entries of a map).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    pub kind: Kind,
    pub max_size: u64,
}

/// What the variables of an expression are declared to be.
pub trait Declarations {
    /// The shape at `path` inside `variable`; None where nothing is
    /// declared (then the estimate counts its size as nothing).
    fn shape(&self, variable: &str, path: &[Step]) -> Option<Shape>;
}

/// cel-go's cost units (`common/cost.go`).
const SELECT_AND_IDENT_COST: u64 = 1;
const LIST_CREATE_BASE_COST: u64 = 10;
const MAP_CREATE_BASE_COST: u64 = 30;
const STRUCT_CREATE_BASE_COST: u64 = 40;
/// Per character of a string traversed, and per character of a pattern.
const STRING_TRAVERSAL_FACTOR: f64 = 0.1;
const REGEX_LENGTH_FACTOR: f64 = 0.25;

/// A lower bound of cel-go's estimated maximum cost of `tree`, with
/// variables as `declared` says. `tree` is a parsed, uninstrumented
/// expression whose depth was checked (the walk recurses).
pub fn max_cost(tree: &IdedExpr, declared: &dyn Declarations) -> u64 {
    Estimator { declared, locals: Vec::new() }.walk(tree).cost
}

/// What the walk knows of a node: a lower bound of its maximum cost and of
/// its maximum size, its kind where known, and where in a variable its
/// value comes from.
#[derive(Debug, Clone, Default)]
struct Estimate {
    cost: u64,
    size: u64,
    kind: Option<Kind>,
    origin: Option<Origin>,
}

#[derive(Debug, Clone)]
struct Origin {
    variable: String,
    path: Vec<Step>,
}

impl Origin {
    fn then(&self, step: Step) -> Origin {
        let mut path = self.path.clone();
        path.push(step);
        Origin { variable: self.variable.clone(), path }
    }
}

/// A comprehension's variable in scope.
struct Local {
    name: String,
    value: Estimate,
}

struct Estimator<'a> {
    declared: &'a dyn Declarations,
    locals: Vec<Local>,
}

impl Estimator<'_> {
    fn walk(&mut self, node: &IdedExpr) -> Estimate {
        match &node.expr {
            Expr::Literal(literal) => literal_estimate(literal),
            Expr::Ident(name) => self.ident(name),
            Expr::Select(select) => {
                if select.test {
                    // `has()`: kube's estimate charges nothing for it.
                    return scalar(0);
                }
                let operand = self.walk(&select.operand);
                let charged = matches!(operand.kind, Some(Kind::Object | Kind::Map));
                let origin = operand.origin.as_ref().map(|o| o.then(Step::Field(select.field.clone())));
                self.declared_at(origin, operand.cost + u64::from(charged) * SELECT_AND_IDENT_COST)
            }
            Expr::Call(call) => self.call(call),
            Expr::List(list) => {
                let cost = list.elements.iter().map(|e| self.walk(e).cost).fold(LIST_CREATE_BASE_COST, add);
                Estimate { cost, size: list.elements.len() as u64, kind: Some(Kind::List), origin: None }
            }
            Expr::Map(map) => {
                let mut cost = MAP_CREATE_BASE_COST;
                for entry in &map.entries {
                    if let EntryExpr::MapEntry(entry) = &entry.expr {
                        cost = add(cost, add(self.walk(&entry.key).cost, self.walk(&entry.value).cost));
                    }
                }
                Estimate { cost, size: map.entries.len() as u64, kind: Some(Kind::Map), origin: None }
            }
            Expr::Struct(literal) => {
                let mut cost = STRUCT_CREATE_BASE_COST;
                for entry in &literal.entries {
                    if let EntryExpr::StructField(field) = &entry.expr {
                        cost = add(cost, self.walk(&field.value).cost);
                    }
                }
                Estimate { cost, kind: Some(Kind::Object), ..Estimate::default() }
            }
            Expr::Comprehension(c) => self.comprehension(c),
            Expr::Unspecified => Estimate::default(),
        }
    }

    fn ident(&self, name: &str) -> Estimate {
        if let Some(local) = self.locals.iter().rev().find(|l| l.name == name) {
            let mut value = local.value.clone();
            value.cost = SELECT_AND_IDENT_COST;
            return value;
        }
        let origin = Origin { variable: name.to_string(), path: Vec::new() };
        self.declared_at(Some(origin), SELECT_AND_IDENT_COST)
    }

    /// A value read from `origin`, costing `cost`: its size and kind as
    /// declared.
    fn declared_at(&self, origin: Option<Origin>, cost: u64) -> Estimate {
        let shape = origin.as_ref().and_then(|o| self.declared.shape(&o.variable, &o.path));
        Estimate { cost, size: shape.map_or(0, |s| s.max_size), kind: shape.map(|s| s.kind), origin }
    }

    fn comprehension(&mut self, c: &ComprehensionExpr) -> Estimate {
        let range = self.walk(&c.iter_range);
        let init = self.walk(&c.accu_init);
        if is_bind(c) {
            self.locals.push(Local { name: c.accu_var.clone(), value: init.clone() });
            let result = self.walk(&c.result);
            self.locals.pop();
            return Estimate { cost: add(add(range.cost, init.cost), result.cost), ..result };
        }
        let scope = self.locals.len();
        self.locals.push(Local { name: c.accu_var.clone(), value: init.clone() });
        for (name, value) in iteration_variables(c, &range) {
            let value = match value.origin.clone() {
                Some(origin) => self.declared_at(Some(origin), 0),
                None => value,
            };
            self.locals.push(Local { name, value });
        }
        let per_element = add(self.walk(&c.loop_cond).cost, self.walk(&c.loop_step).cost);
        // The result sees the accumulator, not the iteration variables.
        self.locals.truncate(scope + 1);
        let result = self.walk(&c.result);
        self.locals.truncate(scope);
        let cost = add(add(add(range.cost, init.cost), result.cost), range.size.saturating_mul(per_element));
        // `map` and `filter` build a list as long as their range.
        let (size, kind) = match init.kind {
            Some(Kind::List | Kind::Map) => (range.size, init.kind),
            _ => (init.size, init.kind),
        };
        Estimate { cost, size, kind, origin: None }
    }

    fn call(&mut self, call: &CallExpr) -> Estimate {
        let target = call.target.as_deref().map(|t| self.walk(t));
        let args: Vec<Estimate> = call.args.iter().map(|a| self.walk(a)).collect();
        let operands = target.iter().chain(&args).fold(0, |sum, e| add(sum, e.cost));
        let name = call.func_name.as_str();
        // The receiver, or the first argument of the global form.
        let subject = target.as_ref().or(args.first());
        let after_subject =
            if target.is_some() { args.as_slice() } else { args.get(1..).unwrap_or_default() };
        let is_string = |e: Option<&Estimate>| e.is_some_and(|e| e.kind == Some(Kind::String));
        match name {
            operators::CONDITIONAL => {
                let [condition, then, otherwise] = args.as_slice() else { return cost_only(operands) };
                let kind = if then.kind == otherwise.kind { then.kind } else { None };
                Estimate {
                    cost: add(condition.cost, then.cost.max(otherwise.cost)),
                    size: then.size.max(otherwise.size),
                    kind,
                    origin: None,
                }
            }
            operators::INDEX | operators::OPT_INDEX => {
                let Some(container) = args.first() else { return cost_only(operands) };
                let step = match container.kind {
                    Some(Kind::List) => Some(Step::Items),
                    Some(Kind::Map) => Some(Step::Values),
                    _ => None,
                };
                let origin = container.origin.as_ref().zip(step).map(|(o, step)| o.then(step));
                self.declared_at(origin, add(operands, 1))
            }
            "dyn" => match args.first() {
                Some(arg) => Estimate { cost: add(arg.cost, 1), ..arg.clone() },
                None => cost_only(operands),
            },
            operators::ADD => {
                let [lhs, rhs] = args.as_slice() else { return cost_only(operands) };
                let size = lhs.size.saturating_add(rhs.size);
                match (lhs.kind, rhs.kind) {
                    (Some(Kind::String), Some(Kind::String)) | (Some(Kind::Bytes), Some(Kind::Bytes)) => {
                        Estimate { cost: add(operands, traversal(size)), size, kind: lhs.kind, origin: None }
                    }
                    (Some(Kind::List), Some(Kind::List)) => {
                        Estimate { cost: add(operands, 1), size, kind: lhs.kind, origin: None }
                    }
                    _ => cost_only(operands),
                }
            }
            operators::EQUALS | operators::NOT_EQUALS => {
                let [lhs, rhs] = args.as_slice() else { return cost_only(operands) };
                scalar(add(operands, traversal(lhs.size.min(rhs.size))))
            }
            operators::LESS | operators::LESS_EQUALS | operators::GREATER | operators::GREATER_EQUALS => {
                let [lhs, rhs] = args.as_slice() else { return cost_only(operands) };
                let strings = matches!(lhs.kind, Some(Kind::String | Kind::Bytes)) && lhs.kind == rhs.kind;
                scalar(add(operands, if strings { traversal(lhs.size.min(rhs.size)) } else { 0 }))
            }
            operators::IN => {
                let listed = args.get(1).filter(|list| list.kind == Some(Kind::List));
                scalar(add(operands, listed.map_or(0, |list| list.size)))
            }
            operators::LOGICAL_NOT | operators::NEGATE | operators::NOT_STRICTLY_FALSE | "size" => {
                scalar(add(operands, 1))
            }
            "matches" | "find" | "findAll" if is_string(subject) => {
                let text = subject.map_or(0, |s| s.size);
                let pattern = after_subject.first().map_or(0, |p| p.size);
                let cost = factor(text.saturating_add(1), STRING_TRAVERSAL_FACTOR)
                    .saturating_mul(factor(pattern, REGEX_LENGTH_FACTOR));
                scalar(add(operands, cost))
            }
            "contains" if is_string(target.as_ref()) => {
                let text = target.as_ref().map_or(0, |t| t.size);
                let needle = args.first().map_or(0, |n| n.size);
                scalar(add(operands, traversal(text).saturating_mul(traversal(needle))))
            }
            "startsWith" | "endsWith" if is_string(target.as_ref()) => {
                scalar(add(operands, args.first().map_or(0, |prefix| traversal(prefix.size))))
            }
            // kube's string library: one traversal, the result no longer.
            "lowerAscii" | "upperAscii" | "trim" | "substring" if is_string(target.as_ref()) => {
                let size = target.as_ref().map_or(0, |t| t.size);
                Estimate {
                    cost: add(operands, traversal(size)),
                    size,
                    kind: Some(Kind::String),
                    origin: None,
                }
            }
            // Traversal and building the result.
            "split" | "replace" if is_string(target.as_ref()) => {
                let size = target.as_ref().map_or(0, |t| t.size);
                let kind = if name == "split" { Kind::List } else { Kind::String };
                let cost = add(operands, factor(size, 2.0 * STRING_TRAVERSAL_FACTOR));
                Estimate { cost, kind: Some(kind), ..Estimate::default() }
            }
            "indexOf" | "lastIndexOf" if is_string(target.as_ref()) => {
                scalar(add(operands, traversal(target.as_ref().map_or(0, |t| t.size))))
            }
            _ => cost_only(operands),
        }
    }
}

/// The variables a comprehension binds for each element, with where their
/// values come from: a list's items (and their indices), a map's keys (and
/// values).
fn iteration_variables(c: &ComprehensionExpr, range: &Estimate) -> Vec<(String, Estimate)> {
    let from =
        |step: Step| Estimate { origin: range.origin.as_ref().map(|o| o.then(step)), ..Estimate::default() };
    let is_map = range.kind == Some(Kind::Map);
    let first = if is_map {
        from(Step::Keys)
    } else if c.iter_var2.is_some() {
        Estimate::default()
    } else {
        from(Step::Items)
    };
    let mut variables = vec![(c.iter_var.clone(), first)];
    if let Some(second) = &c.iter_var2 {
        variables.push((second.clone(), from(if is_map { Step::Values } else { Step::Items })));
    }
    variables
}

/// `cel.bind(name, value, result)`: a comprehension over nothing whose
/// accumulator is the bound name.
fn is_bind(c: &ComprehensionExpr) -> bool {
    let empty_range = matches!(&c.iter_range.expr, Expr::List(list) if list.elements.is_empty());
    let never = matches!(&c.loop_cond.expr, Expr::Literal(LiteralValue::Boolean(b)) if !*b.inner());
    empty_range && never && c.accu_var != "@result" && c.accu_var != "__result__"
}

fn literal_estimate(literal: &LiteralValue) -> Estimate {
    let (size, kind) = match literal {
        LiteralValue::String(s) => (s.inner().chars().count() as u64, Kind::String),
        LiteralValue::Bytes(b) => (b.inner().len() as u64, Kind::Bytes),
        _ => (0, Kind::Other),
    };
    Estimate { cost: 0, size, kind: Some(kind), origin: None }
}

fn cost_only(cost: u64) -> Estimate {
    Estimate { cost, ..Estimate::default() }
}

fn scalar(cost: u64) -> Estimate {
    Estimate { cost, kind: Some(Kind::Other), ..Estimate::default() }
}

fn add(a: u64, b: u64) -> u64 {
    a.saturating_add(b)
}

fn traversal(size: u64) -> u64 {
    factor(size, STRING_TRAVERSAL_FACTOR)
}

/// `size × factor`, rounded up as cel-go rounds it.
fn factor(size: u64, factor: f64) -> u64 {
    let product = (size as f64 * factor).ceil();
    if product >= u64::MAX as f64 { u64::MAX } else { product as u64 }
}
