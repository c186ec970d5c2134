//! Bearer tokens reviewed by the main API server (kube's delegated
//! authentication, `--authentication-kubeconfig`): a TokenReview says who a
//! token stands for. Answers, yes or no, are kept for 10 s (kube's
//! `--authentication-token-webhook-cache-ttl`), so a client's requests cost
//! one review per token every 10 s.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::delegation::MainServer;
use crate::request::UserInfo;

const CACHE_TTL: Duration = Duration::from_secs(10);
/// Past this many tokens the cache starts over (a flood of made-up tokens
/// must not grow it without end).
const CACHE_ENTRIES: usize = 10_000;
const TOKEN_REVIEWS: &str = "/apis/authentication.k8s.io/v1/tokenreviews";

#[derive(Debug)]
pub struct TokenReviewer {
    server: MainServer,
    answers: Mutex<HashMap<String, (Instant, Option<UserInfo>)>>,
}

impl TokenReviewer {
    pub fn new(server: MainServer) -> TokenReviewer {
        TokenReviewer { server, answers: Mutex::default() }
    }

    /// The user `token` stands for, as the main server says; None when it
    /// says none, or cannot be asked.
    pub async fn user_of(&self, token: &str) -> Option<UserInfo> {
        if let Some(known) = self.known(token) {
            return known;
        }
        let review = json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
            "spec": {"token": token}});
        let user = match self.server.post(TOKEN_REVIEWS, &review).await {
            Ok(answer) => user_in(&answer["status"]),
            Err(why) => {
                tracing::warn!(%why, "cannot review a token with the main server");
                return None;
            }
        };
        let mut answers = self.answers.lock().unwrap_or_else(|p| p.into_inner());
        if answers.len() >= CACHE_ENTRIES {
            answers.clear();
        }
        answers.insert(token.to_string(), (Instant::now(), user.clone()));
        user
    }

    fn known(&self, token: &str) -> Option<Option<UserInfo>> {
        let answers = self.answers.lock().unwrap_or_else(|p| p.into_inner());
        let (at, user) = answers.get(token)?;
        (at.elapsed() < CACHE_TTL).then(|| user.clone())
    }
}

/// The user of a TokenReview's status, when it is authenticated.
fn user_in(status: &Value) -> Option<UserInfo> {
    if status["authenticated"] != true {
        return None;
    }
    let user = &status["user"];
    let strings = |value: &Value| -> Vec<String> {
        value.as_array().into_iter().flatten().filter_map(|v| v.as_str().map(str::to_string)).collect()
    };
    let extra = user["extra"]
        .as_object()
        .map(|extra| extra.iter().map(|(key, values)| (key.clone(), strings(values))).collect())
        .unwrap_or_default();
    Some(UserInfo {
        name: user["username"].as_str().unwrap_or_default().to_string(),
        uid: user["uid"].as_str().unwrap_or_default().to_string(),
        groups: strings(&user["groups"]),
        extra,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reviewed_user_is_read_from_the_status() {
        let status = json!({"authenticated": true, "user": {"username": "alice", "uid": "a-1",
            "groups": ["dev", "system:authenticated"], "extra": {"scopes": ["view"]}}});
        let user = user_in(&status).unwrap();
        assert_eq!((user.name.as_str(), user.uid.as_str()), ("alice", "a-1"));
        assert_eq!(user.groups, ["dev", "system:authenticated"]);
        assert_eq!(user.extra["scopes"], ["view"]);
        assert!(user_in(&json!({"authenticated": false, "error": "invalid bearer token"})).is_none());
    }
}
