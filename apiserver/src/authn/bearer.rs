//! `Authorization: Bearer <token>` as kube reads it: the scheme compared
//! without regard to case, the token the next space-separated part; any
//! other scheme, or an empty token, is no credential at all.

use axum::http::HeaderMap;
use axum::http::header::AUTHORIZATION;

#[derive(Debug, PartialEq, Eq)]
pub enum Token {
    Absent,
    Present(String),
}

pub fn token_of(headers: &HeaderMap) -> Token {
    let Some(value) = headers.get(AUTHORIZATION).and_then(|v| v.to_str().ok()) else {
        return Token::Absent;
    };
    let mut parts = value.splitn(3, ' ');
    match (parts.next(), parts.next()) {
        (Some(scheme), Some(token)) if scheme.eq_ignore_ascii_case("bearer") && !token.is_empty() => {
            Token::Present(token.to_string())
        }
        _ => Token::Absent,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn token(value: &str) -> Token {
        let mut headers = HeaderMap::new();
        headers.insert(AUTHORIZATION, value.parse().unwrap());
        token_of(&headers)
    }

    #[test]
    fn bearer_tokens_are_read_as_kube_reads_them() {
        assert_eq!(token("Bearer abc"), Token::Present("abc".into()));
        assert_eq!(token("bEaReR abc extra"), Token::Present("abc".into()));
        assert_eq!(token("Basic dXNlcjpwYXNz"), Token::Absent);
        assert_eq!(token("Bearer "), Token::Absent);
        assert_eq!(token("Bearer"), Token::Absent);
        assert_eq!(token_of(&HeaderMap::new()), Token::Absent);
    }
}
