//! `--token-auth-file`: kube's static token CSV, read once at startup.
//! Each row is `token,user,uid[,"group1,group2"]`; rows with an empty token
//! are skipped; a token given twice belongs to its last row.

use std::collections::HashMap;
use std::path::Path;

use crate::request::UserInfo;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TokenFileError {
    #[error("cannot read token file {path}: {why}")]
    Read { path: String, why: String },
    #[error(
        "token file line {line} must have at least 3 columns (token, user name, user uid), found {found}"
    )]
    Columns { line: usize, found: usize },
    #[error("token file line {line}: {why}")]
    Syntax { line: usize, why: String },
}

#[derive(Debug, Default)]
pub struct TokenFile {
    users: HashMap<String, UserInfo>,
}

impl TokenFile {
    pub fn read(path: &Path) -> Result<TokenFile, TokenFileError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| TokenFileError::Read { path: path.display().to_string(), why: e.to_string() })?;
        TokenFile::parse(&text)
    }

    pub fn parse(text: &str) -> Result<TokenFile, TokenFileError> {
        let mut users = HashMap::new();
        for (index, row) in text.lines().enumerate() {
            let line = index + 1;
            if row.trim().is_empty() {
                continue;
            }
            let fields = csv_fields(row).map_err(|why| TokenFileError::Syntax { line, why })?;
            if fields.len() < 3 {
                return Err(TokenFileError::Columns { line, found: fields.len() });
            }
            if fields[0].is_empty() {
                tracing::warn!(line, "token file: skipping a row with an empty token");
                continue;
            }
            let groups = match fields.get(3) {
                Some(list) if !list.is_empty() => list.split(',').map(|g| g.trim().to_string()).collect(),
                _ => Vec::new(),
            };
            let user = UserInfo {
                name: fields[1].clone(),
                uid: fields[2].clone(),
                groups,
                extra: Default::default(),
            };
            users.insert(fields[0].clone(), user);
        }
        Ok(TokenFile { users })
    }

    /// The user of `token`, compared in constant time per candidate so that
    /// response times do not reveal how much of a token was right.
    pub fn user_of(&self, token: &str) -> Option<UserInfo> {
        self.users
            .iter()
            .find(|(known, _)| constant_time_eq(known.as_bytes(), token.as_bytes()))
            .map(|(_, u)| u.clone())
    }

    pub fn len(&self) -> usize {
        self.users.len()
    }

    pub fn is_empty(&self) -> bool {
        self.users.is_empty()
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// One CSV row as Go's encoding/csv reads it: fields separated by commas,
/// a field in double quotes may hold commas, `""` is a quote inside one.
fn csv_fields(row: &str) -> Result<Vec<String>, String> {
    let mut fields = Vec::new();
    let mut chars = row.trim_end_matches('\r').chars().peekable();
    loop {
        let mut field = String::new();
        if chars.peek() == Some(&'"') {
            chars.next();
            loop {
                match chars.next() {
                    Some('"') if chars.peek() == Some(&'"') => {
                        chars.next();
                        field.push('"');
                    }
                    Some('"') => break,
                    Some(c) => field.push(c),
                    None => return Err("extraneous or missing \" in quoted-field".into()),
                }
            }
            match chars.next() {
                None => {
                    fields.push(field);
                    return Ok(fields);
                }
                Some(',') => fields.push(field),
                Some(_) => return Err("extraneous or missing \" in quoted-field".into()),
            }
        } else {
            loop {
                match chars.next() {
                    None => {
                        fields.push(field);
                        return Ok(fields);
                    }
                    Some(',') => break,
                    Some('"') => return Err("bare \" in non-quoted-field".into()),
                    Some(c) => field.push(c),
                }
            }
            fields.push(field);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_give_user_uid_and_quoted_groups() {
        let file = TokenFile::parse("t1,alice,1\nt2,bob,2,\"dev,ops\"\n\n,skipped,3\nt1,alice2,9\n").unwrap();
        assert_eq!(file.len(), 2);
        let alice = file.user_of("t1").unwrap();
        assert_eq!((alice.name.as_str(), alice.uid.as_str()), ("alice2", "9"), "the last row wins");
        assert!(alice.groups.is_empty());
        assert_eq!(file.user_of("t2").unwrap().groups, ["dev", "ops"]);
        assert_eq!(file.user_of("t3"), None);
        assert_eq!(file.user_of(""), None);
    }

    #[test]
    fn short_or_malformed_rows_are_refused_with_their_line() {
        assert_eq!(
            TokenFile::parse("ok,a,1\nbad,b\n").unwrap_err(),
            TokenFileError::Columns { line: 2, found: 2 }
        );
        assert!(matches!(TokenFile::parse("t,a,1,\"dev\n"), Err(TokenFileError::Syntax { line: 1, .. })));
        assert!(matches!(TokenFile::parse("t,a\"b,1\n"), Err(TokenFileError::Syntax { line: 1, .. })));
    }
}
