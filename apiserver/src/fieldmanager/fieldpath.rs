//! Paths into an object and sets of them: what a manager owns.
//!
//! A path is a list of [`PathElement`]s: a field of an object or map, an
//! item of a list found by its key fields, an item of a set found by its
//! value, or (only where nothing else names it) a list index. A [`Set`] is a
//! tree of them: the paths that are *members* (owned themselves) and, under
//! each element, the set of paths below it. `metadata.managedFields[].fieldsV1`
//! is a set written as JSON (`fields_v1`).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde_json::Value;

/// One step into a value.
///
/// The derived order (fields, then keys, then values, then indexes) is the
/// order sets list paths in (conflicts); key and set values compare by their
/// JSON text, which is not kube's order for numbers. `fieldsV1` is written
/// as serde_json orders object keys: by their text.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PathElement {
    /// A field of an object or a key of a map: `f:<name>`.
    Field(String),
    /// An item of an associative list, by the values of its key fields,
    /// sorted by field name: `k:{"name":"web"}`.
    Key(Vec<(String, Scalar)>),
    /// An item of a set-list, by its value: `v:"a"`.
    Value(Scalar),
    /// An item by its position: `i:0`.
    Index(usize),
}

/// A JSON value kept as its canonical JSON text, so that it can be ordered,
/// compared and hashed (key fields and set items are scalars in practice).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Scalar(String);

impl Scalar {
    pub fn of(value: &Value) -> Scalar {
        Scalar(canonical_json(value))
    }

    /// The JSON text.
    pub fn json(&self) -> &str {
        &self.0
    }
}

/// JSON with object keys sorted and integers in floats written as integers
/// (`80.0` is `80`), so equal values have one text.
fn canonical_json(value: &Value) -> String {
    match value {
        Value::Number(n) => match n.as_f64() {
            Some(f) if n.is_f64() && f.fract() == 0.0 && f.abs() < 9.007_199_254_740_992e15 => {
                format!("{}", f as i64)
            }
            _ => n.to_string(),
        },
        Value::Array(items) => {
            let inner: Vec<String> = items.iter().map(canonical_json).collect();
            format!("[{}]", inner.join(","))
        }
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            let inner: Vec<String> = entries
                .into_iter()
                .map(|(k, v)| format!("{}:{}", Value::String(k.clone()), canonical_json(v)))
                .collect();
            format!("{{{}}}", inner.join(","))
        }
        other => other.to_string(),
    }
}

impl fmt::Display for PathElement {
    /// As kube prints paths in conflicts: `.name`, `[name="web",port=80]`,
    /// `[="a"]`, `[0]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PathElement::Field(name) => write!(f, ".{name}"),
            PathElement::Key(fields) => {
                let parts: Vec<String> = fields.iter().map(|(k, v)| format!("{k}={}", v.json())).collect();
                write!(f, "[{}]", parts.join(","))
            }
            PathElement::Value(value) => write!(f, "[={}]", value.json()),
            PathElement::Index(i) => write!(f, "[{i}]"),
        }
    }
}

/// A path from the root of an object.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Path(pub Vec<PathElement>);

impl Path {
    pub fn field(&self, name: &str) -> Path {
        self.child(PathElement::Field(name.to_string()))
    }

    pub fn child(&self, element: PathElement) -> Path {
        let mut elements = self.0.clone();
        elements.push(element);
        Path(elements)
    }

    /// `metadata.name`-style paths, for tables of fixed paths.
    pub fn of_fields(names: &[&str]) -> Path {
        Path(names.iter().map(|n| PathElement::Field(n.to_string())).collect())
    }
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for element in &self.0 {
            write!(f, "{element}")?;
        }
        Ok(())
    }
}

/// A set of paths, as a tree.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Set {
    /// The elements below this point that are members themselves.
    members: BTreeSet<PathElement>,
    /// The elements below this point that have members below them; never
    /// empty sets.
    children: BTreeMap<PathElement, Set>,
}

impl Set {
    pub fn new() -> Set {
        Set::default()
    }

    pub fn is_empty(&self) -> bool {
        self.members.is_empty() && self.children.is_empty()
    }

    /// Adds `path` as a member (the empty path is not one).
    pub fn insert(&mut self, path: &Path) {
        self.insert_elements(&path.0);
    }

    fn insert_elements(&mut self, elements: &[PathElement]) {
        match elements {
            [] => {}
            [last] => {
                self.members.insert(last.clone());
            }
            [first, rest @ ..] => self.children.entry(first.clone()).or_default().insert_elements(rest),
        }
    }

    pub fn has(&self, path: &Path) -> bool {
        let mut set = self;
        let Some((last, above)) = path.0.split_last() else {
            return false;
        };
        for element in above {
            match set.children.get(element) {
                Some(child) => set = child,
                None => return false,
            }
        }
        set.members.contains(last)
    }

    /// Whether `element` is a member directly below this point.
    pub fn has_member(&self, element: &PathElement) -> bool {
        self.members.contains(element)
    }

    /// The set below `element`, if any path goes through it.
    pub fn child(&self, element: &PathElement) -> Option<&Set> {
        self.children.get(element)
    }

    /// Every element directly below this point: members and those with
    /// children.
    pub fn elements(&self) -> BTreeSet<&PathElement> {
        self.members.iter().chain(self.children.keys()).collect()
    }

    pub fn union(&self, other: &Set) -> Set {
        let mut out = self.clone();
        out.union_with(other);
        out
    }

    /// Adds `other`'s members to this set, in place.
    pub fn union_with(&mut self, other: &Set) {
        self.members.extend(other.members.iter().cloned());
        for (element, child) in &other.children {
            self.children.entry(element.clone()).or_default().union_with(child);
        }
    }

    pub fn intersection(&self, other: &Set) -> Set {
        let members = self.members.intersection(&other.members).cloned().collect();
        let children = self
            .children
            .iter()
            .filter_map(|(element, mine)| {
                let common = mine.intersection(other.children.get(element)?);
                (!common.is_empty()).then(|| (element.clone(), common))
            })
            .collect();
        Set { members, children }
    }

    /// The members of `self` that are not members of `other`.
    pub fn difference(&self, other: &Set) -> Set {
        let members = self.members.difference(&other.members).cloned().collect();
        let children = self
            .children
            .iter()
            .filter_map(|(element, mine)| {
                let left = match other.children.get(element) {
                    Some(theirs) => mine.difference(theirs),
                    None => mine.clone(),
                };
                (!left.is_empty()).then(|| (element.clone(), left))
            })
            .collect();
        Set { members, children }
    }

    /// Every member path: a node's members, then its children's.
    pub fn paths(&self) -> Vec<Path> {
        let mut out = Vec::new();
        self.collect_paths(&mut Vec::new(), &mut out);
        out
    }

    /// A node's members first, then what is below its children (kube's
    /// order of iteration).
    fn collect_paths(&self, prefix: &mut Vec<PathElement>, out: &mut Vec<Path>) {
        for member in &self.members {
            prefix.push(member.clone());
            out.push(Path(prefix.clone()));
            prefix.pop();
        }
        for (element, child) in &self.children {
            prefix.push(element.clone());
            child.collect_paths(prefix, out);
            prefix.pop();
        }
    }

    /// The members that have no member below them (what kube lists in
    /// conflicts).
    pub fn leaves(&self) -> Vec<Path> {
        self.paths().into_iter().filter(|p| !self.has_member_below(&p.0)).collect()
    }

    fn has_member_below(&self, elements: &[PathElement]) -> bool {
        let mut set = self;
        for element in elements {
            match set.children.get(element) {
                Some(child) => set = child,
                None => return false,
            }
        }
        !set.is_empty()
    }

    /// How many elements the longest path has.
    pub fn depth(&self) -> usize {
        let below = self.children.values().map(Set::depth).max().unwrap_or(0);
        if self.is_empty() { 0 } else { 1 + below }
    }

    /// The set with `fields_v1`'s text: a member is `{}` (or `".": {}` beside
    /// its children), each element written with its prefix.
    pub fn to_fields_v1(&self) -> Value {
        let mut map = serde_json::Map::new();
        for element in self.elements() {
            let mut entry = match self.children.get(element) {
                Some(child) => child.to_fields_v1(),
                None => Value::Object(serde_json::Map::new()),
            };
            if self.children.contains_key(element)
                && self.members.contains(element)
                && let Value::Object(inner) = &mut entry
            {
                // The member itself beside its children.
                let mut with_self = serde_json::Map::new();
                with_self.insert(".".into(), Value::Object(serde_json::Map::new()));
                with_self.extend(std::mem::take(inner));
                *inner = with_self;
            }
            map.insert(encode_element(element), entry);
        }
        Value::Object(map)
    }

    /// A set from `fieldsV1`; what is wrong with it otherwise.
    pub fn from_fields_v1(value: &Value) -> Result<Set, String> {
        let Value::Object(map) = value else {
            return Err("expected an object".into());
        };
        let mut set = Set::new();
        for (key, child) in map {
            if key == "." {
                // Marks the parent a member; read by the caller.
                continue;
            }
            let element = decode_element(key)?;
            let Value::Object(inner) = child else {
                return Err(format!("expected an object at {key:?}"));
            };
            if inner.contains_key(".") || inner.is_empty() {
                set.members.insert(element.clone());
            }
            let below = Set::from_fields_v1(child)?;
            if !below.is_empty() {
                set.children.insert(element, below);
            }
        }
        Ok(set)
    }
}

fn encode_element(element: &PathElement) -> String {
    match element {
        PathElement::Field(name) => format!("f:{name}"),
        PathElement::Key(fields) => {
            let parts: Vec<String> =
                fields.iter().map(|(k, v)| format!("{}:{}", Value::String(k.clone()), v.json())).collect();
            format!("k:{{{}}}", parts.join(","))
        }
        PathElement::Value(value) => format!("v:{}", value.json()),
        PathElement::Index(i) => format!("i:{i}"),
    }
}

fn decode_element(text: &str) -> Result<PathElement, String> {
    let (prefix, rest) = text.split_once(':').ok_or_else(|| format!("unknown path element {text:?}"))?;
    match prefix {
        "f" => Ok(PathElement::Field(rest.to_string())),
        "v" => {
            let value: Value = serde_json::from_str(rest).map_err(|e| format!("{text:?}: {e}"))?;
            Ok(PathElement::Value(Scalar::of(&value)))
        }
        "k" => {
            let value: Value = serde_json::from_str(rest).map_err(|e| format!("{text:?}: {e}"))?;
            let Value::Object(fields) = value else {
                return Err(format!("{text:?}: a key must be an object"));
            };
            let mut fields: Vec<(String, Scalar)> =
                fields.iter().map(|(k, v)| (k.clone(), Scalar::of(v))).collect();
            fields.sort();
            Ok(PathElement::Key(fields))
        }
        "i" => rest.parse().map(PathElement::Index).map_err(|e| format!("{text:?}: {e}")),
        _ => Err(format!("unknown path element {text:?}")),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn key(name: &str) -> PathElement {
        PathElement::Key(vec![("name".into(), Scalar::of(&json!(name)))])
    }

    #[test]
    fn fields_v1_round_trips_with_members_beside_children() {
        let text = json!({
            "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
            "f:spec": {"f:containers": {"k:{\"name\":\"web\"}": {".": {}, "f:image": {}, "f:name": {}}}},
            "f:finalizers": {"v:\"a\"": {}},
        });
        let set = Set::from_fields_v1(&text).unwrap();
        assert!(set.has(&Path::of_fields(&["metadata", "labels"])));
        assert!(set.has(&Path::of_fields(&["metadata", "labels", "app"])));
        assert!(!set.has(&Path::of_fields(&["metadata"])));
        let image = Path::of_fields(&["spec", "containers"]).child(key("web")).field("image");
        assert!(set.has(&image));
        assert_eq!(set.to_fields_v1(), text);
        assert_eq!(image.to_string(), ".spec.containers[name=\"web\"].image");
    }

    #[test]
    fn set_algebra() {
        let mut a = Set::new();
        a.insert(&Path::of_fields(&["a", "b"]));
        a.insert(&Path::of_fields(&["a", "c"]));
        let mut b = Set::new();
        b.insert(&Path::of_fields(&["a", "c"]));
        b.insert(&Path::of_fields(&["d"]));
        assert_eq!(a.intersection(&b).paths(), vec![Path::of_fields(&["a", "c"])]);
        assert_eq!(a.difference(&b).paths(), vec![Path::of_fields(&["a", "b"])]);
        assert_eq!(a.union(&b).paths().len(), 3);
        assert!(a.difference(&a).is_empty());
    }

    #[test]
    fn garbage_is_refused() {
        assert!(Set::from_fields_v1(&json!({"x:y": {}})).is_err());
        assert!(Set::from_fields_v1(&json!({"f:a": 1})).is_err());
        assert!(Set::from_fields_v1(&json!({"k:notjson": {}})).is_err());
        assert!(Set::from_fields_v1(&json!([])).is_err());
    }
}
