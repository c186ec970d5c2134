//! The source's syntax: lines into statements, each with its line number. Names are not
//! resolved here (the model does that); only the shape of every line is checked.

use crate::Error;

/// The statements of a source file, in file order.
#[derive(Debug, Default)]
pub struct Statements {
    pub packages: Vec<PackageLine>,
    pub kinds: Vec<KindLine>,
    pub messages: Vec<MessageBlock>,
}

/// `package <short> <protobuf package>`
#[derive(Debug)]
pub struct PackageLine {
    pub line: usize,
    pub short: String,
    pub proto: String,
}

/// `kind <apiVersion> <Kind> <message> [unserved]`
#[derive(Debug)]
pub struct KindLine {
    pub line: usize,
    pub api_version: String,
    pub kind: String,
    pub message: String,
    pub unserved: bool,
}

/// `message <short>.<Name>` and its field rows.
#[derive(Debug)]
pub struct MessageBlock {
    pub line: usize,
    pub name: String,
    pub fields: Vec<FieldLine>,
}

/// `<number> <json tag> <type> [attribute=value]...`
#[derive(Debug)]
pub struct FieldLine {
    pub line: usize,
    pub number: u32,
    pub json: JsonTag,
    pub ty: TypeExpr,
    pub patch_strategy: Option<String>,
    pub patch_merge_key: Option<String>,
    pub list_type: Option<String>,
    pub list_map_keys: Vec<String>,
}

/// A Go `json:"..."` tag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonTag {
    /// The JSON name; `None` for an embedded struct (`,inline`).
    pub name: Option<String>,
    pub omitempty: bool,
    pub omitzero: bool,
}

/// A field's type as written: `T`, `*T`, `[]T` or `map[string]T`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeExpr {
    pub shape: Shape,
    /// The element type's name: a scalar, a special type or a message.
    pub elem: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    Value,
    Pointer,
    List,
    Map,
}

/// Reads a source file.
pub fn parse(text: &str) -> Result<Statements, Error> {
    let mut statements = Statements::default();
    for (index, raw) in text.lines().enumerate() {
        let line = index + 1;
        let content = raw.trim_end();
        let trimmed = content.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let words: Vec<&str> = trimmed.split_whitespace().collect();
        if content.starts_with(char::is_whitespace) {
            let field = field_line(line, &words)?;
            match statements.messages.last_mut() {
                Some(message) => message.fields.push(field),
                None => return Err(Error::new(line, "a field row outside any message")),
            }
            continue;
        }
        match words.as_slice() {
            ["package", short, proto] => statements.packages.push(PackageLine {
                line,
                short: (*short).to_owned(),
                proto: (*proto).to_owned(),
            }),
            ["package", ..] => return Err(Error::new(line, "expected `package <short> <protobuf package>`")),
            ["kind", api_version, kind, message, flags @ ..] => {
                let unserved = match flags {
                    [] => false,
                    ["unserved"] => true,
                    _ => {
                        return Err(Error::new(
                            line,
                            format!("unknown kind flags {flags:?} (only `unserved`)"),
                        ));
                    }
                };
                statements.kinds.push(KindLine {
                    line,
                    api_version: (*api_version).to_owned(),
                    kind: (*kind).to_owned(),
                    message: (*message).to_owned(),
                    unserved,
                });
            }
            ["kind", ..] => {
                return Err(Error::new(line, "expected `kind <apiVersion> <Kind> <message> [unserved]`"));
            }
            ["message", name] => {
                statements.messages.push(MessageBlock { line, name: (*name).to_owned(), fields: Vec::new() })
            }
            ["message", ..] => return Err(Error::new(line, "expected `message <short>.<Name>`")),
            [word, ..] if word.starts_with(|c: char| c.is_ascii_digit()) => {
                return Err(Error::new(line, "a field row must be indented under its message"));
            }
            [word, ..] => {
                return Err(Error::new(
                    line,
                    format!("unknown statement `{word}` (expected package, kind or message)"),
                ));
            }
            [] => {}
        }
    }
    Ok(statements)
}

fn field_line(line: usize, words: &[&str]) -> Result<FieldLine, Error> {
    let [number, json, ty, attributes @ ..] = words else {
        return Err(Error::new(line, "expected `<number> <json tag> <type> [attribute=value]...`"));
    };
    let number = match number.parse::<u32>() {
        Ok(n) if (1..=536_870_911).contains(&n) => n,
        _ => return Err(Error::new(line, format!("`{number}` is not a protobuf field number"))),
    };
    let mut field = FieldLine {
        line,
        number,
        json: json_tag(line, json)?,
        ty: type_expr(line, ty)?,
        patch_strategy: None,
        patch_merge_key: None,
        list_type: None,
        list_map_keys: Vec::new(),
    };
    for attribute in attributes {
        let Some((key, value)) = attribute.split_once('=').filter(|(_, v)| !v.is_empty()) else {
            return Err(Error::new(line, format!("expected `attribute=value`, found `{attribute}`")));
        };
        let slot = match key {
            "patchStrategy" => &mut field.patch_strategy,
            "patchMergeKey" => &mut field.patch_merge_key,
            "listType" => &mut field.list_type,
            "listMapKey" => {
                field.list_map_keys.push(value.to_owned());
                continue;
            }
            _ => {
                return Err(Error::new(
                    line,
                    format!(
                        "unknown attribute `{key}` (expected patchStrategy, patchMergeKey, listType or listMapKey)"
                    ),
                ));
            }
        };
        if slot.replace(value.to_owned()).is_some() {
            return Err(Error::new(line, format!("`{key}` is given twice")));
        }
    }
    Ok(field)
}

fn json_tag(line: usize, tag: &str) -> Result<JsonTag, Error> {
    if tag == ",inline" {
        return Ok(JsonTag { name: None, omitempty: false, omitzero: false });
    }
    let mut parts = tag.split(',');
    let name = parts.next().unwrap_or_default();
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.')
    {
        return Err(Error::new(
            line,
            format!("`{tag}` is not a json tag (`name[,omitempty][,omitzero]` or `,inline`)"),
        ));
    }
    let mut json = JsonTag { name: Some(name.to_owned()), omitempty: false, omitzero: false };
    for option in parts {
        let flag = match option {
            "omitempty" => &mut json.omitempty,
            "omitzero" => &mut json.omitzero,
            _ => return Err(Error::new(line, format!("unknown json tag option `{option}` in `{tag}`"))),
        };
        if std::mem::replace(flag, true) {
            return Err(Error::new(line, format!("`{option}` is given twice in `{tag}`")));
        }
    }
    Ok(json)
}

fn type_expr(line: usize, ty: &str) -> Result<TypeExpr, Error> {
    let (shape, elem) = if let Some(elem) = ty.strip_prefix('*') {
        (Shape::Pointer, elem)
    } else if let Some(elem) = ty.strip_prefix("[]") {
        (Shape::List, elem)
    } else if let Some(rest) = ty.strip_prefix("map[") {
        match rest.strip_prefix("string]") {
            Some(elem) => (Shape::Map, elem),
            None => return Err(Error::new(line, format!("`{ty}`: map keys are strings (`map[string]T`)"))),
        }
    } else {
        (Shape::Value, ty)
    };
    if elem.is_empty() || !elem.chars().all(|c| c.is_ascii_alphanumeric() || c == '.') {
        return Err(Error::new(line, format!("`{ty}` is not a type (`T`, `*T`, `[]T` or `map[string]T`)")));
    }
    Ok(TypeExpr { shape, elem: elem.to_owned() })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(text: &str) -> Error {
        match parse(text) {
            Ok(statements) => panic!("parsed: {statements:?}"),
            Err(e) => e,
        }
    }

    #[test]
    fn statements_and_rows() {
        let text = "# comment\npackage core.v1 k8s.io.api.core.v1\n\nkind v1 Pod core.v1.Pod\n\
                    kind policy/v1 PodDisruptionBudget policy.v1.PodDisruptionBudget unserved\n\
                    message core.v1.Pod\n  1  metadata,omitempty  meta.v1.ObjectMeta\n\
                    \t2 containers []core.v1.Container patchStrategy=merge patchMergeKey=name \
                    listType=map listMapKey=name listMapKey=protocol\n  3 ,inline core.v1.X\n";
        let statements = parse(text).unwrap();
        assert_eq!(statements.packages[0].proto, "k8s.io.api.core.v1");
        assert!(!statements.kinds[0].unserved && statements.kinds[1].unserved);
        let fields = &statements.messages[0].fields;
        assert_eq!(fields[0].line, 7);
        assert_eq!(
            fields[0].json,
            JsonTag { name: Some("metadata".into()), omitempty: true, omitzero: false }
        );
        assert_eq!(fields[1].ty, TypeExpr { shape: Shape::List, elem: "core.v1.Container".into() });
        assert_eq!(fields[1].patch_strategy.as_deref(), Some("merge"));
        assert_eq!(fields[1].list_map_keys, ["name", "protocol"]);
        assert_eq!(fields[2].json.name, None);
    }

    #[test]
    fn malformed_lines_name_their_line() {
        assert_eq!(error("\n  1 a string\n").line, 2);
        assert_eq!(error("message a.B\n  x a string\n").line, 2);
        assert_eq!(error("message a.B\n  1 a,omitnil string\n").line, 2);
        assert_eq!(error("message a.B\n  1 a map[int]string\n").line, 2);
        assert_eq!(error("message a.B\n  1 a string listType=set listType=map\n").line, 2);
        assert_eq!(error("message a.B\n  1 a string colour=red\n").line, 2);
        assert_eq!(error("message a.B\n1 a string\n").line, 2);
        assert_eq!(error("\n\nservice a\n").line, 3);
        assert_eq!(error("kind v1 Pod\n").line, 1);
        let e = error("kind v1 Pod core.v1.Pod served\n");
        assert_eq!(
            e.to_string(),
            format!("{}:1: unknown kind flags [\"served\"] (only `unserved`)", crate::SOURCE_DISPLAY)
        );
    }
}
