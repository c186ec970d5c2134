//! The source's statements resolved into one checked model: messages with their fields' types
//! resolved, the kinds, and the rules every emitter relies on (field numbers increase, names
//! resolve, patch facts fit their field, no message is recursive or unreachable).

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::Error;
use crate::parse::{FieldLine, Statements};

pub use crate::parse::Shape;

/// The checked source.
#[derive(Debug)]
pub struct Model {
    pub kinds: Vec<Kind>,
    /// Every message, ordered by [`Message::static_name`].
    pub messages: Vec<Message>,
}

/// A root kind.
#[derive(Debug)]
pub struct Kind {
    pub line: usize,
    /// `v1`, `apps/v1`; [`ANY_VERSION`] for any apiVersion.
    pub api_version: String,
    pub kind: String,
    /// Index into [`Model::messages`].
    pub message: usize,
    /// No resource serves the kind yet: no OpenAPI document has its messages.
    pub unserved: bool,
}

/// The apiVersion of a kind accepted in any apiVersion.
pub const ANY_VERSION: &str = "*";

impl Kind {
    /// The API group (`""` for core), or `None` for a kind of any apiVersion.
    pub fn group(&self) -> Option<&str> {
        if self.api_version == ANY_VERSION {
            return None;
        }
        Some(self.api_version.rsplit_once('/').map_or("", |(group, _)| group))
    }
}

/// A protobuf message (a Go struct).
#[derive(Debug)]
pub struct Message {
    pub line: usize,
    /// The Go type name: `PodSpec`.
    pub name: String,
    /// `core.v1.PodSpec`.
    pub short: String,
    /// `k8s.io.api.core.v1.PodSpec`.
    pub proto_name: String,
    /// `io.k8s.api.core.v1.PodSpec`.
    pub openapi_name: String,
    /// `CORE_V1_POD_SPEC`: the name of its static in every generated file.
    pub static_name: String,
    /// In increasing number.
    pub fields: Vec<Field>,
}

/// One field of a message.
#[derive(Debug)]
pub struct Field {
    pub line: usize,
    pub number: u32,
    /// The JSON name; `None` for an embedded struct whose fields are written into the parent.
    pub json: Option<String>,
    pub omitempty: bool,
    pub omitzero: bool,
    pub shape: Shape,
    pub elem: Elem,
    pub patch_strategy: Option<PatchStrategy>,
    pub patch_merge_key: Option<String>,
    pub list_type: Option<ListType>,
    pub list_map_keys: Vec<String>,
}

impl Field {
    /// The JSON name, `""` for an embedded struct.
    pub fn json_name(&self) -> &str {
        self.json.as_deref().unwrap_or_default()
    }

    /// Has patch facts (and so OpenAPI extensions).
    pub fn has_patch_facts(&self) -> bool {
        self.patch_strategy.is_some()
            || self.patch_merge_key.is_some()
            || self.list_type.is_some()
            || !self.list_map_keys.is_empty()
    }
}

/// A field's type, or its elements' type for a list or a map.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Elem {
    String,
    Bytes,
    Bool,
    Int32,
    Int64,
    /// meta/v1 Time.
    Time,
    /// meta/v1 MicroTime.
    MicroTime,
    /// meta/v1 FieldsV1.
    FieldsV1,
    /// util/intstr IntOrString.
    IntOrString,
    /// api/resource Quantity.
    Quantity,
    /// runtime RawExtension (its raw bytes are an object's JSON).
    RawExtension,
    /// Index into [`Model::messages`].
    Message(usize),
}

impl Elem {
    const NAMED: [(&'static str, Elem); 11] = [
        ("string", Elem::String),
        ("bytes", Elem::Bytes),
        ("bool", Elem::Bool),
        ("int32", Elem::Int32),
        ("int64", Elem::Int64),
        ("Time", Elem::Time),
        ("MicroTime", Elem::MicroTime),
        ("FieldsV1", Elem::FieldsV1),
        ("IntOrString", Elem::IntOrString),
        ("Quantity", Elem::Quantity),
        ("RawExtension", Elem::RawExtension),
    ];

    /// A Go struct (a message, or a type with its own JSON form): `omitempty` never omits it.
    pub fn is_struct(self) -> bool {
        !matches!(self, Elem::String | Elem::Bytes | Elem::Bool | Elem::Int32 | Elem::Int64)
    }
}

/// A `patchStrategy` struct tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchStrategy {
    Merge,
    RetainKeys,
    MergeRetainKeys,
    Replace,
}

impl PatchStrategy {
    const ALL: [PatchStrategy; 4] = [
        PatchStrategy::Merge,
        PatchStrategy::RetainKeys,
        PatchStrategy::MergeRetainKeys,
        PatchStrategy::Replace,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            PatchStrategy::Merge => "merge",
            PatchStrategy::RetainKeys => "retainKeys",
            PatchStrategy::MergeRetainKeys => "merge,retainKeys",
            PatchStrategy::Replace => "replace",
        }
    }

    pub fn merges(self) -> bool {
        matches!(self, PatchStrategy::Merge | PatchStrategy::MergeRetainKeys)
    }

    pub fn retains_keys(self) -> bool {
        matches!(self, PatchStrategy::RetainKeys | PatchStrategy::MergeRetainKeys)
    }
}

/// A `+listType` marker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListType {
    Atomic,
    Set,
    Map,
}

impl ListType {
    const ALL: [ListType; 3] = [ListType::Atomic, ListType::Set, ListType::Map];

    pub fn as_str(self) -> &'static str {
        match self {
            ListType::Atomic => "atomic",
            ListType::Set => "set",
            ListType::Map => "map",
        }
    }
}

impl Model {
    /// Resolves and checks the statements.
    pub fn build(statements: &Statements) -> Result<Model, Error> {
        let packages = packages(statements)?;

        // Messages first, ordered by static name, so that fields can refer to them by index.
        let mut messages = Vec::new();
        let mut defined = HashSet::new();
        for block in &statements.messages {
            let Some((package, name)) = block.name.rsplit_once('.') else {
                return Err(Error::new(
                    block.line,
                    format!("`{}` is not <short package>.<Name>", block.name),
                ));
            };
            let Some(proto_package) = packages.get(package) else {
                return Err(Error::new(block.line, format!("package `{package}` is not declared")));
            };
            if !name.starts_with(|c: char| c.is_ascii_uppercase())
                || !name.chars().all(|c| c.is_ascii_alphanumeric())
            {
                return Err(Error::new(block.line, format!("`{name}` is not a Go type name")));
            }
            if !defined.insert(block.name.as_str()) {
                return Err(Error::new(block.line, format!("message `{}` is defined twice", block.name)));
            }
            // Go's OpenAPI names follow the import path, whose dashes
            // protobuf package names write as underscores
            // (k8s.io/kube-aggregator: k8s.io.kube_aggregator).
            let openapi_package = format!("io.k8s.{}", proto_package["k8s.io.".len()..].replace('_', "-"));
            messages.push(Message {
                line: block.line,
                name: name.to_owned(),
                short: block.name.clone(),
                proto_name: format!("{proto_package}.{name}"),
                openapi_name: format!("{openapi_package}.{name}"),
                static_name: format!("{}_{}", package.replace('.', "_").to_uppercase(), upper_snake(name)),
                fields: Vec::new(),
            });
        }
        messages.sort_by(|a, b| a.static_name.cmp(&b.static_name));
        for pair in messages.windows(2) {
            if pair[0].static_name == pair[1].static_name {
                return Err(Error::new(
                    pair[0].line.max(pair[1].line),
                    format!(
                        "`{}` and `{}` have the same static name {}",
                        pair[0].short, pair[1].short, pair[0].static_name
                    ),
                ));
            }
        }
        let index: HashMap<String, usize> =
            messages.iter().enumerate().map(|(i, message)| (message.short.clone(), i)).collect();

        for block in &statements.messages {
            let fields =
                block.fields.iter().map(|line| field(line, &index)).collect::<Result<Vec<_>, _>>()?;
            for pair in fields.windows(2) {
                if pair[1].number <= pair[0].number {
                    return Err(Error::new(
                        pair[1].line,
                        format!(
                            "field {} does not come after field {}: numbers increase",
                            pair[1].number, pair[0].number
                        ),
                    ));
                }
            }
            messages[index[&block.name]].fields = fields;
        }

        let mut kinds = Vec::new();
        let mut seen = HashSet::new();
        for line in &statements.kinds {
            let Some(&message) = index.get(&line.message) else {
                return Err(Error::new(line.line, format!("message `{}` is not defined", line.message)));
            };
            let version_ok = line.api_version == ANY_VERSION || {
                let mut parts = line.api_version.split('/');
                let (first, second, rest) = (parts.next(), parts.next(), parts.next());
                let word = |s: &str| {
                    !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-')
                };
                rest.is_none() && first.is_some_and(word) && second.is_none_or(word)
            };
            if !version_ok {
                return Err(Error::new(
                    line.line,
                    format!("`{}` is not an apiVersion (`v1`, `apps/v1` or `*`)", line.api_version),
                ));
            }
            let kind = Kind {
                line: line.line,
                api_version: line.api_version.clone(),
                kind: line.kind.clone(),
                message,
                unserved: line.unserved,
            };
            // a kind may be served in several versions of its group (autoscaling/v1 and v2)
            if !seen.insert(kind.api_version.clone() + " " + &kind.kind) {
                return Err(Error::new(
                    line.line,
                    format!("kind {} {} is listed twice", line.api_version, line.kind),
                ));
            }
            kinds.push(kind);
        }
        if kinds.is_empty() {
            return Err(Error::new(0, "no kinds"));
        }

        let model = Model { kinds, messages };
        model.check_acyclic()?;
        model.check_reachable()?;
        model.check_fields()?;
        Ok(model)
    }

    /// The fields of message `m` as JSON sees them: embedded structs' fields in their place.
    pub fn json_fields(&self, m: usize) -> Vec<&Field> {
        let mut out = Vec::new();
        for field in &self.messages[m].fields {
            match (field.json.as_ref(), field.elem) {
                (None, Elem::Message(inner)) => out.extend(self.json_fields(inner)),
                _ => out.push(field),
            }
        }
        out
    }

    /// The messages reachable from the kinds that `include` accepts (embedded ones included).
    pub fn reachable(&self, include: impl Fn(&Kind) -> bool) -> Vec<bool> {
        let mut seen = vec![false; self.messages.len()];
        let mut stack: Vec<usize> = self.kinds.iter().filter(|k| include(k)).map(|k| k.message).collect();
        while let Some(m) = stack.pop() {
            if std::mem::replace(&mut seen[m], true) {
                continue;
            }
            stack.extend(self.messages[m].fields.iter().filter_map(|f| match f.elem {
                Elem::Message(inner) => Some(inner),
                _ => None,
            }));
        }
        seen
    }

    /// Messages that appear only embedded in others (never as a kind or a field's own value):
    /// their fields exist only inside their parents' JSON (and OpenAPI schemas).
    pub fn embedded_only(&self) -> Vec<bool> {
        let mut own_value = vec![false; self.messages.len()];
        for kind in &self.kinds {
            own_value[kind.message] = true;
        }
        for field in self.messages.iter().flat_map(|m| &m.fields) {
            if let (Some(_), Elem::Message(inner)) = (&field.json, field.elem) {
                own_value[inner] = true;
            }
        }
        own_value.into_iter().map(|own| !own).collect()
    }

    fn check_acyclic(&self) -> Result<(), Error> {
        // 0 = unvisited, 1 = on the current path, 2 = done
        fn visit(model: &Model, m: usize, state: &mut [u8]) -> Result<(), Error> {
            state[m] = 1;
            for field in &model.messages[m].fields {
                let Elem::Message(inner) = field.elem else { continue };
                match state[inner] {
                    0 => visit(model, inner, state)?,
                    1 => {
                        return Err(Error::new(
                            field.line,
                            format!(
                                "{}.{} makes {} recursive, which the generated tables do not support",
                                model.messages[m].short,
                                field.json_name(),
                                model.messages[inner].short
                            ),
                        ));
                    }
                    _ => {}
                }
            }
            state[m] = 2;
            Ok(())
        }
        let mut state = vec![0; self.messages.len()];
        for m in 0..self.messages.len() {
            if state[m] == 0 {
                visit(self, m, &mut state)?;
            }
        }
        Ok(())
    }

    fn check_reachable(&self) -> Result<(), Error> {
        let reachable = self.reachable(|_| true);
        match self.messages.iter().zip(reachable).filter(|(_, r)| !r).min_by_key(|(m, _)| m.line) {
            Some((message, _)) => Err(Error::new(
                message.line,
                format!("message {} is not reachable from any kind", message.short),
            )),
            None => Ok(()),
        }
    }

    /// The rules between a field and its patch facts, and between merge or map keys and the
    /// item message's fields.
    fn check_fields(&self) -> Result<(), Error> {
        for (m, message) in self.messages.iter().enumerate() {
            let mut names = HashSet::new();
            for field in self.json_fields(m) {
                if !names.insert(field.json_name()) {
                    return Err(Error::new(
                        field.line,
                        format!("{} has two fields named `{}`", message.short, field.json_name()),
                    ));
                }
            }
            for field in &message.fields {
                check_field(self, field)?;
            }
        }
        Ok(())
    }
}

fn check_field(model: &Model, field: &Field) -> Result<(), Error> {
    let fail = |message: String| Err(Error::new(field.line, message));
    let is_message = matches!(field.elem, Elem::Message(_));
    if field.json.is_none() {
        if field.shape != Shape::Value || !is_message {
            return fail("an embedded (`,inline`) field is a message, not a pointer, list or map".into());
        }
        if field.has_patch_facts() {
            return fail("an embedded (`,inline`) field has no patch facts of its own".into());
        }
    }
    // Go omits a zero Time either way (its JSON is null); other zero structs it would omit
    // only with omitzero, which the decoder has no rule for.
    let zero_struct = field.shape == Shape::Value && field.elem.is_struct();
    if field.omitzero && zero_struct && !matches!(field.elem, Elem::Time | Elem::MicroTime) {
        return fail(
            "omitzero on a struct other than Time and MicroTime: the decoder has no rule for it".into(),
        );
    }
    if let Some(strategy) = field.patch_strategy {
        let fits = match strategy {
            PatchStrategy::Merge | PatchStrategy::MergeRetainKeys => field.shape == Shape::List,
            PatchStrategy::RetainKeys | PatchStrategy::Replace => {
                matches!(field.shape, Shape::Value | Shape::Pointer) && is_message
            }
        };
        if !fits {
            return fail(format!("patchStrategy={} does not fit a field of this type", strategy.as_str()));
        }
    }
    let merges = field.patch_strategy.is_some_and(PatchStrategy::merges);
    if let Elem::Message(item) = field.elem {
        if merges && field.patch_merge_key.is_none() {
            return fail("a merged list of objects needs a patchMergeKey".into());
        }
        for key in field.patch_merge_key.iter().chain(&field.list_map_keys) {
            if !model.json_fields(item).iter().any(|f| f.json_name() == key) {
                return fail(format!("`{key}` is not a field of {}", model.messages[item].short));
            }
        }
    } else if field.patch_merge_key.is_some() {
        return fail("patchMergeKey is for lists of objects".into());
    }
    if field.patch_merge_key.is_some() && !merges {
        return fail("patchMergeKey without patchStrategy=merge".into());
    }
    match field.list_type {
        Some(_) if field.shape != Shape::List => fail("listType is for lists".into()),
        Some(ListType::Set) if is_message => fail("listType=set is for lists of scalars".into()),
        Some(ListType::Map) if !is_message || field.list_map_keys.is_empty() => {
            fail("listType=map is for lists of objects, with at least one listMapKey".into())
        }
        Some(ListType::Atomic | ListType::Set) | None if !field.list_map_keys.is_empty() => {
            fail("listMapKey without listType=map".into())
        }
        _ => Ok(()),
    }
}

fn packages(statements: &Statements) -> Result<BTreeMap<&str, &str>, Error> {
    let mut packages = BTreeMap::new();
    for line in &statements.packages {
        if !line.proto.starts_with("k8s.io.") {
            return Err(Error::new(line.line, format!("`{}` is not a k8s.io protobuf package", line.proto)));
        }
        if packages.insert(line.short.as_str(), line.proto.as_str()).is_some() {
            return Err(Error::new(line.line, format!("package `{}` is declared twice", line.short)));
        }
    }
    Ok(packages)
}

fn field(line: &FieldLine, index: &HashMap<String, usize>) -> Result<Field, Error> {
    let elem = match Elem::NAMED.iter().find(|(name, _)| *name == line.ty.elem) {
        Some((_, elem)) => *elem,
        None => match index.get(&line.ty.elem) {
            Some(&m) => Elem::Message(m),
            None => {
                return Err(Error::new(
                    line.line,
                    format!("`{}` is neither a known type nor a message defined here", line.ty.elem),
                ));
            }
        },
    };
    let patch_strategy = match &line.patch_strategy {
        None => None,
        Some(s) => match PatchStrategy::ALL.into_iter().find(|p| p.as_str() == s) {
            Some(p) => Some(p),
            None => {
                return Err(Error::new(
                    line.line,
                    format!("unknown patchStrategy `{s}` (merge, retainKeys, merge,retainKeys or replace)"),
                ));
            }
        },
    };
    let list_type = match &line.list_type {
        None => None,
        Some(s) => match ListType::ALL.into_iter().find(|t| t.as_str() == s) {
            Some(t) => Some(t),
            None => {
                return Err(Error::new(line.line, format!("unknown listType `{s}` (atomic, set or map)")));
            }
        },
    };
    Ok(Field {
        line: line.line,
        number: line.number,
        json: line.json.name.clone(),
        omitempty: line.json.omitempty,
        omitzero: line.json.omitzero,
        shape: line.ty.shape,
        elem,
        patch_strategy,
        patch_merge_key: line.patch_merge_key.clone(),
        list_type,
        list_map_keys: line.list_map_keys.clone(),
    })
}

/// `PodDNSConfig` → `POD_DNS_CONFIG`: a word starts at an upper-case letter that follows a
/// lower-case letter or a digit, or that is followed by a lower-case letter after other capitals.
pub fn upper_snake(name: &str) -> String {
    let chars: Vec<char> = name.chars().collect();
    let mut out = String::with_capacity(name.len() + 4);
    for (i, &c) in chars.iter().enumerate() {
        if i > 0 && c.is_ascii_uppercase() {
            let prev = chars[i - 1];
            let next_lower = chars.get(i + 1).is_some_and(char::is_ascii_lowercase);
            if prev.is_ascii_lowercase() || prev.is_ascii_digit() || (prev.is_ascii_uppercase() && next_lower)
            {
                out.push('_');
            }
        }
        out.push(c.to_ascii_uppercase());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse;

    const PACKAGES: &str = "package core.v1 k8s.io.api.core.v1\n";

    fn build(text: &str) -> Result<Model, Error> {
        Model::build(&parse(&format!("{PACKAGES}{text}"))?)
    }

    fn error(text: &str) -> Error {
        match build(text) {
            Ok(model) => panic!("built: {model:?}"),
            Err(e) => e,
        }
    }

    #[test]
    fn static_names() {
        for (name, expected) in [
            ("PodSpec", "POD_SPEC"),
            ("PodDNSConfig", "POD_DNS_CONFIG"),
            ("CephFSVolumeSource", "CEPH_FS_VOLUME_SOURCE"),
            ("SELinuxOptions", "SE_LINUX_OPTIONS"),
            ("HTTPGetAction", "HTTP_GET_ACTION"),
            ("PodIP", "POD_IP"),
            ("ScaleIOVolumeSource", "SCALE_IO_VOLUME_SOURCE"),
            ("GRPCAction", "GRPC_ACTION"),
        ] {
            assert_eq!(upper_snake(name), expected);
        }
    }

    #[test]
    fn a_small_model() {
        let model = build(
            "kind v1 Pod core.v1.Pod\nkind * Opts core.v1.Opts\nmessage core.v1.Pod\n  1 spec core.v1.Spec\n\
             message core.v1.Spec\n  1 ,inline core.v1.Common\n  2 ports,omitempty []core.v1.Port \
             patchStrategy=merge patchMergeKey=port listType=map listMapKey=port listMapKey=name\n\
             message core.v1.Common\n  1 name string\nmessage core.v1.Port\n  1 port int32\n  2 name string\n\
             message core.v1.Opts\n",
        )
        .unwrap();
        let names: Vec<&str> = model.messages.iter().map(|m| m.static_name.as_str()).collect();
        assert_eq!(names, ["CORE_V1_COMMON", "CORE_V1_OPTS", "CORE_V1_POD", "CORE_V1_PORT", "CORE_V1_SPEC"]);
        assert_eq!(model.messages[4].openapi_name, "io.k8s.api.core.v1.Spec");
        let json: Vec<&str> = model.json_fields(4).iter().map(|f| f.json_name()).collect();
        assert_eq!(json, ["name", "ports"]);
        assert_eq!(model.embedded_only(), [true, false, false, false, false]);
        assert_eq!(model.kinds[0].group(), Some(""));
        assert_eq!(model.kinds[1].group(), None);
    }

    #[test]
    fn inconsistent_sources_name_their_line() {
        let pod = "kind v1 Pod core.v1.Pod\nmessage core.v1.Pod\n";
        // line numbers count the package line first
        assert_eq!(error(&format!("{pod}  1 a core.v1.Nope\n")).line, 4);
        assert_eq!(error(&format!("{pod}  2 a string\n  1 b string\n")).line, 5);
        assert_eq!(error(&format!("{pod}  1 a string\n  2 a string\n")).line, 5);
        assert_eq!(error(&format!("{pod}  1 a []string patchMergeKey=x\n")).line, 4);
        assert_eq!(error(&format!("{pod}  1 a string listType=atomic\n")).line, 4);
        assert_eq!(error(&format!("{pod}  1 a []string listType=map listMapKey=x\n")).line, 4);
        assert_eq!(error(&format!("{pod}  1 a []core.v1.Pod\n")).line, 4);
        assert_eq!(error(&format!("{pod}  1 a []core.v1.X patchStrategy=merge patchMergeKey=b\nmessage core.v1.X\n  1 c string\n")).line, 4);
        assert_eq!(
            error(&format!("{pod}  1 a []core.v1.X patchStrategy=merge\nmessage core.v1.X\n  1 c string\n"))
                .line,
            4
        );
        assert_eq!(
            error(&format!("{pod}  1 a core.v1.X patchStrategy=sideways\nmessage core.v1.X\n")).line,
            4
        );
        assert_eq!(error(&format!("{pod}  1 ,inline *core.v1.X\nmessage core.v1.X\n")).line, 4);
        assert_eq!(error(&format!("{pod}message core.v1.Lonely\n")).line, 4);
        assert_eq!(error(&format!("{pod}message core.v1.Pod\n")).line, 4);
        assert_eq!(error(&format!("{pod}message apps.v1.Pod\n")).line, 4);
        assert_eq!(error("kind v1 Pod core.v1.Nope\n").line, 2);
        assert_eq!(error("kind v1/x/y Pod core.v1.Pod\nmessage core.v1.Pod\n").line, 2);
        assert_eq!(error("kind v1 Pod core.v1.Pod\nkind v1 Pod core.v1.Pod\nmessage core.v1.Pod\n").line, 3);
        // a kind served in two versions of its group is listed once per version
        assert!(build("kind v1 Pod core.v1.Pod\nkind v2 Pod core.v1.Pod\nmessage core.v1.Pod\n").is_ok());
        let e = error(&format!("{pod}  1 a,omitempty core.v1.X\nmessage core.v1.X\n  1 b []core.v1.Pod\n"));
        assert_eq!(
            (e.line, e.message.as_str()),
            (6, "core.v1.X.b makes core.v1.Pod recursive, which the generated tables do not support")
        );
    }
}
