//! Label selectors: `k=v`, `k==v`, `k!=v`, `k in (a,b)`, `k notin (a,b)`,
//! `k`, `!k`, `k>N`, `k<N`, joined by commas (AND).
//!
//! The tokenizer, the parser's lookahead rules and the validation of keys and
//! values follow kube-apiserver closely, because clients show its error texts
//! verbatim and informers depend on exactly which objects match.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::{SelectorError, go_quote};

/// A parsed `labelSelector`: every requirement must hold.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabelSelector {
    /// Sorted by key, as kube does, so equal selectors compare equal.
    requirements: Vec<Requirement>,
}

impl LabelSelector {
    /// Parses the query parameter; `""` (or only blanks) selects everything.
    pub fn parse(s: &str) -> Result<Self, SelectorError> {
        let mut requirements = Parser::new(s).parse().map_err(SelectorError::Label)?;
        requirements.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(LabelSelector { requirements })
    }

    /// Whether an object with these `metadata.labels` is selected; `None`
    /// (no labels at all) behaves as an empty set.
    pub fn matches(&self, labels: impl LabelSet) -> bool {
        self.requirements.iter().all(|r| r.matches(&labels))
    }

    /// True when the selector restricts nothing, so callers can skip decoding labels.
    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }
}

/// An object's labels, however they are held, as a selector reads them.
pub trait LabelSet {
    fn label(&self, key: &str) -> Option<&str>;
}

/// `metadata.labels` as decoded JSON.
impl LabelSet for Option<&Map<String, Value>> {
    fn label(&self, key: &str) -> Option<&str> {
        // Labels are strings by validation; anything else counts as absent.
        self.and_then(|m| m.get(key)).and_then(Value::as_str)
    }
}

/// `metadata.labels` held apart from their object (the watch cache keeps
/// objects encoded): sorted by key, nothing allocated when there are none.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Labels(Box<[(Box<str>, Box<str>)]>);

impl Labels {
    /// The string labels of `metadata.labels` (others count as absent).
    pub fn of(labels: Option<&Map<String, Value>>) -> Labels {
        let pairs =
            labels.into_iter().flatten().filter_map(|(k, v)| Some((k.as_str().into(), v.as_str()?.into())));
        // A map's keys come sorted.
        Labels(pairs.collect())
    }

    /// The bytes they take.
    pub fn footprint(&self) -> usize {
        self.0.iter().map(|(k, v)| k.len() + v.len() + std::mem::size_of::<(Box<str>, Box<str>)>()).sum()
    }
}

impl LabelSet for &Labels {
    fn label(&self, key: &str) -> Option<&str> {
        let found = self.0.binary_search_by(|(k, _)| k.as_ref().cmp(key)).ok()?;
        Some(&self.0[found].1)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Exists,
    DoesNotExist,
    Equals,
    DoubleEquals,
    NotEquals,
    In,
    NotIn,
    GreaterThan,
    LessThan,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Requirement {
    key: String,
    op: Op,
    /// Sorted and deduplicated (kube keeps them in a set).
    values: Vec<String>,
}

impl Requirement {
    /// Validates like kube's `NewRequirement`: all problems are collected and
    /// reported together, as its aggregated error does.
    fn new(key: String, op: Op, values: BTreeSet<String>) -> Result<Self, String> {
        let values: Vec<String> = values.into_iter().collect();
        let mut errs: Vec<String> = Vec::new();
        let key_errs = qualified_name_errors(&key);
        if !key_errs.is_empty() {
            errs.push(invalid("key", &key, &key_errs.join("; ")));
        }
        if matches!(op, Op::GreaterThan | Op::LessThan) {
            for (i, v) in values.iter().enumerate() {
                if v.parse::<i64>().is_err() {
                    errs.push(invalid(
                        &format!("values[{i}]"),
                        v,
                        "for 'Gt', 'Lt' operators, the value must be an integer",
                    ));
                }
            }
        }
        for (i, v) in values.iter().enumerate() {
            let value_errs = label_value_errors(v);
            if !value_errs.is_empty() {
                errs.push(invalid(&format!("values[{i}][{key}]"), v, &value_errs.join("; ")));
            }
        }
        let mut unique: Vec<String> = Vec::with_capacity(errs.len());
        for e in errs {
            if !unique.contains(&e) {
                unique.push(e);
            }
        }
        match unique.len() {
            0 => Ok(Requirement { key, op, values }),
            1 => Err(unique.concat()),
            _ => Err(format!("[{}]", unique.join(", "))),
        }
    }

    fn has(&self, value: &str) -> bool {
        self.values.iter().any(|v| v == value)
    }

    fn matches(&self, labels: &impl LabelSet) -> bool {
        let value = labels.label(&self.key);
        match self.op {
            Op::Exists => value.is_some(),
            Op::DoesNotExist => value.is_none(),
            Op::Equals | Op::DoubleEquals | Op::In => value.is_some_and(|v| self.has(v)),
            // kube: an object without the label is "not equal" / "not in".
            Op::NotEquals | Op::NotIn => value.is_none_or(|v| !self.has(v)),
            Op::GreaterThan | Op::LessThan => {
                let (Some(have), Some(want)) = (
                    value.and_then(|v| v.parse::<i64>().ok()),
                    self.values.first().and_then(|v| v.parse::<i64>().ok()),
                ) else {
                    return false;
                };
                if self.op == Op::GreaterThan { have > want } else { have < want }
            }
        }
    }
}

/// `field.Invalid(path, value, detail)` as kube prints it.
fn invalid(path: &str, value: &str, detail: &str) -> String {
    format!("{path}: Invalid value: {}: {detail}", go_quote(value))
}

// ---------------------------------------------------------------- validation

const LABEL_KEY_MSG: &str = "must consist of alphanumeric characters, '-', '_' or '.', \
     and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', \
     regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const LABEL_VALUE_MSG: &str = "a valid label must be an empty string or consist of alphanumeric characters, \
     '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  \
     or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
const DNS_SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric \
     characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', \
     regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const MAX_NAME_LEN: usize = 63;
const MAX_SUBDOMAIN_LEN: usize = 253;

/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`: the name part of a key and a non-empty value.
fn is_label_name(s: &str) -> bool {
    let b = s.as_bytes();
    match (b.first(), b.last()) {
        (Some(first), Some(last)) => {
            first.is_ascii_alphanumeric()
                && last.is_ascii_alphanumeric()
                && b.iter().all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
        }
        _ => false,
    }
}

/// RFC 1123 subdomain: dot-separated lowercase labels starting and ending alphanumeric.
fn is_dns_subdomain(s: &str) -> bool {
    s.split('.').all(|label| {
        let b = label.as_bytes();
        match (b.first(), b.last()) {
            (Some(first), Some(last)) => {
                is_lower_alnum(*first)
                    && is_lower_alnum(*last)
                    && b.iter().all(|c| is_lower_alnum(*c) || *c == b'-')
            }
            _ => false,
        }
    })
}

fn is_lower_alnum(c: u8) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit()
}

/// kube's label-key (qualified name) check: `[prefix/]name`.
pub fn qualified_name_errors(key: &str) -> Vec<String> {
    let mut errs = Vec::new();
    let parts: Vec<&str> = key.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_string());
            } else {
                if prefix.len() > MAX_SUBDOMAIN_LEN {
                    errs.push(format!("prefix part must be no more than {MAX_SUBDOMAIN_LEN} bytes"));
                }
                if !is_dns_subdomain(prefix) {
                    errs.push(format!("prefix part {DNS_SUBDOMAIN_MSG}"));
                }
            }
            *name
        }
        _ => {
            return vec![format!(
                "a valid label key {LABEL_KEY_MSG} with an optional DNS subdomain prefix and '/' \
                 (e.g. 'example.com/MyName')"
            )];
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_string());
    } else if name.len() > MAX_NAME_LEN {
        errs.push(format!("name part must be no more than {MAX_NAME_LEN} bytes"));
    }
    if !is_label_name(name) {
        errs.push(format!("name part {LABEL_KEY_MSG}"));
    }
    errs
}

/// kube's label-value check: empty, or a name part of at most 63 bytes.
pub fn label_value_errors(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > MAX_NAME_LEN {
        errs.push(format!("must be no more than {MAX_NAME_LEN} bytes"));
    }
    if !value.is_empty() && !is_label_name(value) {
        errs.push(LABEL_VALUE_MSG.to_string());
    }
    errs
}

// ----------------------------------------------------------------- tokenizer

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tok {
    Error,
    End,
    ClosedPar,
    Comma,
    Not,
    DoubleEquals,
    Equals,
    Gt,
    Ident,
    In,
    Lt,
    NotEquals,
    NotIn,
    OpenPar,
}

fn keyword(s: &[u8]) -> Option<Tok> {
    Some(match s {
        b")" => Tok::ClosedPar,
        b"," => Tok::Comma,
        b"!" => Tok::Not,
        b"==" => Tok::DoubleEquals,
        b"=" => Tok::Equals,
        b">" => Tok::Gt,
        b"in" => Tok::In,
        b"<" => Tok::Lt,
        b"!=" => Tok::NotEquals,
        b"notin" => Tok::NotIn,
        b"(" => Tok::OpenPar,
        _ => return None,
    })
}

fn is_whitespace(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r' | b'\n')
}

fn is_special(c: u8) -> bool {
    matches!(c, b'=' | b'!' | b'(' | b')' | b',' | b'>' | b'<')
}

/// Byte-wise scanner; a NUL byte ends the input, as in kube's lexer.
struct Lexer<'a> {
    s: &'a [u8],
    pos: usize,
}

impl Lexer<'_> {
    fn read(&mut self) -> u8 {
        match self.s.get(self.pos) {
            Some(c) => {
                self.pos += 1;
                *c
            }
            None => 0,
        }
    }

    fn unread(&mut self) {
        self.pos = self.pos.saturating_sub(1);
    }

    fn lex(&mut self) -> (Tok, String) {
        let mut c = self.read();
        while is_whitespace(c) {
            c = self.read();
        }
        if c == 0 {
            return (Tok::End, String::new());
        }
        self.unread();
        if is_special(c) { self.special() } else { self.ident_or_keyword() }
    }

    fn ident_or_keyword(&mut self) -> (Tok, String) {
        let mut buf = Vec::new();
        loop {
            let c = self.read();
            if c == 0 {
                break;
            }
            if is_special(c) || is_whitespace(c) {
                self.unread();
                break;
            }
            buf.push(c);
        }
        let tok = keyword(&buf).unwrap_or(Tok::Ident);
        (tok, String::from_utf8_lossy(&buf).into_owned())
    }

    /// Longest operator made of special characters (`!=` over `!`, `==` over `=`).
    fn special(&mut self) -> (Tok, String) {
        let mut buf = Vec::new();
        let mut last: Option<(Tok, usize)> = None;
        loop {
            let c = self.read();
            if c == 0 {
                break;
            }
            if !is_special(c) {
                self.unread();
                break;
            }
            buf.push(c);
            if let Some(tok) = keyword(&buf) {
                last = Some((tok, buf.len()));
            } else if last.is_some() {
                self.unread();
                break;
            }
        }
        match last {
            Some((tok, len)) => (tok, String::from_utf8_lossy(buf.get(..len).unwrap_or(&[])).into_owned()),
            None => {
                (Tok::Error, format!("error expected: keyword found '{}'", String::from_utf8_lossy(&buf)))
            }
        }
    }
}

// -------------------------------------------------------------------- parser

/// Where the parser is: after a key `in`/`notin` are operators, elsewhere
/// they are plain words (`x in (in)` is valid).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ctx {
    KeyAndOperator,
    Values,
}

struct Parser {
    items: Vec<(Tok, String)>,
    pos: usize,
}

impl Parser {
    fn new(s: &str) -> Self {
        let mut lexer = Lexer { s: s.as_bytes(), pos: 0 };
        let mut items = Vec::new();
        loop {
            let item = lexer.lex();
            let end = item.0 == Tok::End;
            items.push(item);
            if end {
                break;
            }
        }
        Parser { items, pos: 0 }
    }

    fn item(&self, at: usize, ctx: Ctx) -> (Tok, String) {
        let (tok, lit) =
            self.items.get(at).or(self.items.last()).cloned().unwrap_or((Tok::End, String::new()));
        let tok = match tok {
            Tok::In | Tok::NotIn if ctx == Ctx::Values => Tok::Ident,
            t => t,
        };
        (tok, lit)
    }

    fn lookahead(&self, ctx: Ctx) -> (Tok, String) {
        self.item(self.pos, ctx)
    }

    fn consume(&mut self, ctx: Ctx) -> (Tok, String) {
        let item = self.item(self.pos, ctx);
        if self.pos < self.items.len() {
            self.pos += 1;
        }
        item
    }

    fn parse(&mut self) -> Result<Vec<Requirement>, String> {
        let mut requirements = Vec::new();
        loop {
            let (tok, lit) = self.lookahead(Ctx::Values);
            match tok {
                Tok::Ident | Tok::Not => {
                    let r = self.requirement().map_err(|e| format!("unable to parse requirement: {e}"))?;
                    requirements.push(r);
                    let (t, l) = self.consume(Ctx::Values);
                    match t {
                        Tok::End => return Ok(requirements),
                        Tok::Comma => {
                            let (t2, l2) = self.lookahead(Ctx::Values);
                            if t2 != Tok::Ident && t2 != Tok::Not {
                                return Err(format!("found '{l2}', expected: identifier after ','"));
                            }
                        }
                        _ => return Err(format!("found '{l}', expected: ',' or 'end of string'")),
                    }
                }
                Tok::End => return Ok(requirements),
                _ => return Err(format!("found '{lit}', expected: !, identifier, or 'end of string'")),
            }
        }
    }

    fn requirement(&mut self) -> Result<Requirement, String> {
        let (key, op) = self.key_and_inferred_op()?;
        if let Some(op @ (Op::Exists | Op::DoesNotExist)) = op {
            return Requirement::new(key, op, BTreeSet::new());
        }
        let op = self.operator()?;
        let values = match op {
            Op::In | Op::NotIn => self.value_set()?,
            _ => self.exact_value()?,
        };
        Requirement::new(key, op, values)
    }

    /// `[!]key`, inferring "exists" when the key stands alone.
    fn key_and_inferred_op(&mut self) -> Result<(String, Option<Op>), String> {
        let mut op = None;
        let (mut tok, mut lit) = self.consume(Ctx::Values);
        if tok == Tok::Not {
            op = Some(Op::DoesNotExist);
            (tok, lit) = self.consume(Ctx::Values);
        }
        if tok != Tok::Ident {
            return Err(format!("found '{lit}', expected: identifier"));
        }
        let errs = qualified_name_errors(&lit);
        if !errs.is_empty() {
            // kube validates here with an unset field path, printed as "<nil>".
            return Err(invalid("<nil>", &lit, &errs.join("; ")));
        }
        let (next, _) = self.lookahead(Ctx::Values);
        if matches!(next, Tok::End | Tok::Comma) && op.is_none() {
            op = Some(Op::Exists);
        }
        Ok((lit, op))
    }

    fn operator(&mut self) -> Result<Op, String> {
        let (tok, lit) = self.consume(Ctx::KeyAndOperator);
        Ok(match tok {
            Tok::In => Op::In,
            Tok::Equals => Op::Equals,
            Tok::DoubleEquals => Op::DoubleEquals,
            Tok::Gt => Op::GreaterThan,
            Tok::Lt => Op::LessThan,
            Tok::NotIn => Op::NotIn,
            Tok::NotEquals => Op::NotEquals,
            _ => return Err(format!("found '{lit}', expected: in, notin, =, ==, !=, gt, lt")),
        })
    }

    /// `( v, v, … )`; empty entries stand for the empty value.
    fn value_set(&mut self) -> Result<BTreeSet<String>, String> {
        let (tok, lit) = self.consume(Ctx::Values);
        if tok != Tok::OpenPar {
            return Err(format!("found '{lit}' expected: '('"));
        }
        let (tok, lit) = self.lookahead(Ctx::Values);
        match tok {
            Tok::Ident | Tok::Comma => {
                let set = self.identifier_list()?;
                let (close, _) = self.consume(Ctx::Values);
                if close != Tok::ClosedPar {
                    return Err(format!("found '{lit}', expected: ')'"));
                }
                Ok(set)
            }
            Tok::ClosedPar => {
                self.consume(Ctx::Values);
                Ok(BTreeSet::from([String::new()]))
            }
            _ => Err(format!("found '{lit}', expected: ',', ')' or identifier")),
        }
    }

    /// Stops before the `)`; commas with nothing between them add "".
    fn identifier_list(&mut self) -> Result<BTreeSet<String>, String> {
        let mut set = BTreeSet::new();
        loop {
            let (tok, lit) = self.consume(Ctx::Values);
            match tok {
                Tok::Ident => {
                    set.insert(lit);
                    let (next, next_lit) = self.lookahead(Ctx::Values);
                    match next {
                        Tok::Comma => continue,
                        Tok::ClosedPar => return Ok(set),
                        _ => return Err(format!("found '{next_lit}', expected: ',' or ')'")),
                    }
                }
                Tok::Comma => {
                    if set.is_empty() {
                        set.insert(String::new());
                    }
                    let (next, _) = self.lookahead(Ctx::Values);
                    if next == Tok::ClosedPar {
                        set.insert(String::new());
                        return Ok(set);
                    }
                    if next == Tok::Comma {
                        set.insert(String::new());
                    }
                }
                _ => return Err(format!("found '{lit}', expected: ',', or identifier")),
            }
        }
    }

    /// The single value after `=`, `==`, `!=`, `>` or `<`; may be empty.
    fn exact_value(&mut self) -> Result<BTreeSet<String>, String> {
        let (next, _) = self.lookahead(Ctx::Values);
        if matches!(next, Tok::End | Tok::Comma) {
            return Ok(BTreeSet::from([String::new()]));
        }
        let (tok, lit) = self.consume(Ctx::Values);
        if tok == Tok::Ident {
            return Ok(BTreeSet::from([lit]));
        }
        Err(format!("found '{lit}', expected: identifier"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn labels(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => panic!("not an object"),
        }
    }

    fn err(s: &str) -> String {
        LabelSelector::parse(s).expect_err(s).to_string()
    }

    fn sel(s: &str) -> LabelSelector {
        LabelSelector::parse(s).unwrap()
    }

    #[test]
    fn empty_selects_everything() {
        for s in ["", "   ", "\t\n"] {
            let sel = sel(s);
            assert!(sel.is_empty());
            assert!(sel.matches(None));
            assert!(sel.matches(Some(&labels(json!({"a": "b"})))));
        }
        assert!(!LabelSelector::parse("a").unwrap().is_empty());
    }

    #[test]
    fn equality_terms() {
        let l = labels(json!({"env": "prod", "tier": "web"}));
        assert!(sel("env=prod").matches(Some(&l)));
        assert!(sel("env==prod").matches(Some(&l)));
        assert!(!sel("env=dev").matches(Some(&l)));
        assert!(sel("env=prod,tier=web").matches(Some(&l)));
        assert!(!sel("env=prod,tier=db").matches(Some(&l)));
        assert!(sel("env!=dev").matches(Some(&l)));
        assert!(!sel("env!=prod").matches(Some(&l)));
        // kube: `!=` selects objects lacking the label, even with no labels at all.
        assert!(sel("missing!=x").matches(Some(&l)));
        assert!(sel("missing!=x").matches(None));
        assert!(!sel("missing=x").matches(None));
        // An empty value after the operator is the empty string.
        assert!(sel("e=").matches(Some(&labels(json!({"e": ""})))));
        assert!(!sel("e=").matches(None));
    }

    #[test]
    fn set_terms() {
        let l = labels(json!({"env": "prod", "empty": ""}));
        assert!(sel("env in (prod,staging)").matches(Some(&l)));
        assert!(!sel("env in (dev,staging)").matches(Some(&l)));
        assert!(!sel("env notin (prod)").matches(Some(&l)));
        assert!(sel("env notin (dev, qa)").matches(Some(&l)));
        assert!(sel("missing notin (a)").matches(Some(&l)));
        assert!(!sel("missing in (a)").matches(Some(&l)));
        // Empty members are the empty value.
        assert!(sel("empty in ()").matches(Some(&l)));
        assert!(sel("empty in (,x)").matches(Some(&l)));
        assert!(sel("empty in (x,)").matches(Some(&l)));
        assert!(sel("empty in (x,,y)").matches(Some(&l)));
        assert!(!sel("empty in (x,y)").matches(Some(&l)));
        // Values are a set: order and duplicates don't matter.
        assert_eq!(sel("env in (b,a,a)"), sel("env in (a,b)"));
        // `in` is only a keyword in operator position.
        assert!(sel("in in (in)").matches(Some(&labels(json!({"in": "in"})))));
        assert!(sel("x=notin").matches(Some(&labels(json!({"x": "notin"})))));
    }

    #[test]
    fn existence_terms() {
        let l = labels(json!({"a": "1"}));
        assert!(sel("a").matches(Some(&l)));
        assert!(!sel("b").matches(Some(&l)));
        assert!(sel("!b").matches(Some(&l)));
        assert!(!sel("!a").matches(Some(&l)));
        assert!(sel("!b").matches(None));
        assert!(sel("a,!b").matches(Some(&l)));
        assert!(sel("example.com/a").matches(Some(&labels(json!({"example.com/a": "x"})))));
    }

    #[test]
    fn numeric_terms() {
        let l = labels(json!({"n": "10", "s": "abc"}));
        assert!(sel("n>5").matches(Some(&l)));
        assert!(!sel("n>10").matches(Some(&l)));
        assert!(sel("n<11").matches(Some(&l)));
        assert!(!sel("n<10").matches(Some(&l)));
        assert!(!sel("s>1").matches(Some(&l)));
        assert!(!sel("missing<1").matches(Some(&l)));
    }

    #[test]
    fn whitespace_is_tolerated() {
        let l = labels(json!({"a": "b", "c": "x"}));
        assert_eq!(sel("  a  =  b ,  c  in  ( x , y )  "), sel("a=b,c in (x,y)"));
        assert!(sel(" a = b , c in ( x , y ) ").matches(Some(&l)));
        assert!(sel("a\t!=\tz").matches(Some(&l)));
    }

    #[test]
    fn syntax_errors() {
        assert_eq!(err("a in ("), "unable to parse requirement: found '', expected: ',', ')' or identifier");
        assert_eq!(err("=x"), "found '=', expected: !, identifier, or 'end of string'");
        assert_eq!(err(","), "found ',', expected: !, identifier, or 'end of string'");
        assert_eq!(err("a,"), "found '', expected: identifier after ','");
        assert_eq!(err("a,,b"), "found ',', expected: identifier after ','");
        assert_eq!(err("a=b c"), "found 'c', expected: ',' or 'end of string'");
        assert_eq!(
            err("a b"),
            "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"
        );
        assert_eq!(err("a in x"), "unable to parse requirement: found 'x' expected: '('");
        assert_eq!(err("a in (b c)"), "unable to parse requirement: found 'c', expected: ',' or ')'");
        assert_eq!(err("a in (b"), "unable to parse requirement: found '', expected: ',' or ')'");
        assert_eq!(err("a in (b,=)"), "unable to parse requirement: found '=', expected: ',', or identifier");
        assert_eq!(
            err("a in (="),
            "unable to parse requirement: found '=', expected: ',', ')' or identifier"
        );
        assert_eq!(err("a=("), "unable to parse requirement: found '(', expected: identifier");
        assert_eq!(err("!"), "unable to parse requirement: found '', expected: identifier");
        assert_eq!(err("!a=b"), "found '=', expected: ',' or 'end of string'");
    }

    #[test]
    fn invalid_values() {
        let long = "a".repeat(64);
        assert_eq!(
            err(&format!("k={long}")),
            format!(
                "unable to parse requirement: values[0][k]: Invalid value: \"{long}\": must be no more than 63 bytes"
            )
        );
        assert!(LabelSelector::parse(&format!("k={}", "a".repeat(63))).is_ok());
        assert_eq!(
            err("k=-x"),
            "unable to parse requirement: values[0][k]: Invalid value: \"-x\": a valid label must be an empty \
             string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an \
             alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is \
             '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
        );
        // Values are checked in sorted order; the index is into that order.
        assert!(
            err("k in (ok,-x)")
                .starts_with("unable to parse requirement: values[0][k]: Invalid value: \"-x\"")
        );
        assert_eq!(
            err("k>x"),
            "unable to parse requirement: values[0]: Invalid value: \"x\": for 'Gt', 'Lt' operators, the value \
             must be an integer"
        );
        assert_eq!(
            err("k<"),
            "unable to parse requirement: values[0]: Invalid value: \"\": for 'Gt', 'Lt' operators, the value \
             must be an integer"
        );
        // Several problems come back together, bracketed.
        let both = err("k>-x");
        assert!(both.starts_with("unable to parse requirement: [values[0]: Invalid value: \"-x\": for 'Gt'"));
        assert!(both.contains(", values[0][k]: Invalid value: \"-x\": a valid label must be"));
        assert!(both.ends_with(']'));
    }

    #[test]
    fn invalid_keys() {
        assert_eq!(
            err("-a"),
            "unable to parse requirement: <nil>: Invalid value: \"-a\": name part must consist of alphanumeric \
             characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  \
             or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
        );
        assert_eq!(
            err(&format!("{}=x", "k".repeat(64))),
            format!(
                "unable to parse requirement: <nil>: Invalid value: \"{}\": name part must be no more than 63 bytes",
                "k".repeat(64)
            )
        );
        assert_eq!(
            err("Example.com/a"),
            "unable to parse requirement: <nil>: Invalid value: \"Example.com/a\": prefix part a lowercase RFC \
             1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end \
             with an alphanumeric character (e.g. 'example.com', regex used for validation is \
             '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
        );
        assert!(err("/a").ends_with(": prefix part must be non-empty"));
        assert!(err("a/").contains("\"a/\": name part must be non-empty; name part must consist of"));
        assert!(err("a/b/c").contains(
            "\"a/b/c\": a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must \
             start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex \
             used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain \
             prefix and '/' (e.g. 'example.com/MyName')"
        ));
        assert!(err("a\"b").contains("Invalid value: \"a\\\"b\""));
        assert!(LabelSelector::parse("app.kubernetes.io/name=web").is_ok());
    }

    #[test]
    fn error_is_a_label_error() {
        assert!(matches!(LabelSelector::parse("a in ("), Err(SelectorError::Label(_))));
    }
}
