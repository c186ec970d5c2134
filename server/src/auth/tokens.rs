//! etcd's simple tokens: opaque random strings a member maps to a user for
//! `--auth-token-ttl`, each use extending the time. Every member learns a
//! token when the `Authenticate` entry that made it applies, so a client
//! may present it to any member; tokens live in memory only (a restarted
//! member forgets them and its clients authenticate again, as with etcd).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Letters of a token's random part (etcd's simple tokens have 16).
const TOKEN_LETTERS: usize = 16;

#[derive(Debug)]
pub struct SimpleTokens {
    ttl: Duration,
    live: Mutex<HashMap<String, Entry>>,
}

#[derive(Debug)]
struct Entry {
    user: String,
    expires: Instant,
}

impl SimpleTokens {
    pub fn new(ttl: Duration) -> Self {
        Self { ttl, live: Mutex::new(HashMap::new()) }
    }

    /// A fresh token: 16 random letters, a dot and `suffix` (etcd puts the
    /// log index there; rtcd the proposal's number), unique per member.
    pub fn generate(suffix: u64) -> String {
        let mut random = [0u8; TOKEN_LETTERS];
        // Without the OS's randomness no token could be trusted: refuse to
        // make one rather than make a guessable one.
        if getrandom::fill(&mut random).is_err() {
            return String::new();
        }
        let letters: String = random.iter().map(|b| char::from(b'a' + b % 26)).collect();
        format!("{letters}.{suffix}")
    }

    /// Records `token` for `user`; also drops every expired token, which
    /// bounds memory by the tokens made within one TTL.
    pub fn assign(&self, token: String, user: String) {
        let now = Instant::now();
        let mut live = self.lock();
        live.retain(|_, e| e.expires > now);
        live.insert(token, Entry { user, expires: now + self.ttl });
    }

    /// The user of a live token, whose time starts over.
    pub fn user(&self, token: &str) -> Option<String> {
        let now = Instant::now();
        let mut live = self.lock();
        let entry = live.get_mut(token).filter(|e| e.expires > now)?;
        entry.expires = now + self.ttl;
        Some(entry.user.clone())
    }

    /// Forgets the tokens of a user who was deleted or got a new password.
    pub fn invalidate_user(&self, user: &str) {
        self.lock().retain(|_, e| e.user != user);
    }

    /// Forgets every token (auth was disabled).
    pub fn clear(&self) {
        self.lock().clear();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        // The map holds no invariant a panicking holder could break.
        self.live.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_random_and_expire_unless_used() {
        let a = SimpleTokens::generate(7);
        assert_eq!(a.len(), TOKEN_LETTERS + 2);
        assert!(a.ends_with(".7"));
        assert_ne!(a, SimpleTokens::generate(7));

        let tokens = SimpleTokens::new(Duration::from_millis(200));
        tokens.assign(a.clone(), "alice".into());
        assert_eq!(tokens.user(&a).as_deref(), Some("alice"));
        assert_eq!(tokens.user("forged.1"), None);
        // Each use extends the time.
        for _ in 0..4 {
            std::thread::sleep(Duration::from_millis(100));
            assert_eq!(tokens.user(&a).as_deref(), Some("alice"));
        }
        std::thread::sleep(Duration::from_millis(300));
        assert_eq!(tokens.user(&a), None, "expired");
    }

    #[test]
    fn a_users_tokens_go_with_a_new_password() {
        let tokens = SimpleTokens::new(Duration::from_secs(60));
        tokens.assign("a.1".into(), "alice".into());
        tokens.assign("b.2".into(), "bob".into());
        tokens.invalidate_user("alice");
        assert_eq!(tokens.user("a.1"), None);
        assert_eq!(tokens.user("b.2").as_deref(), Some("bob"));
        tokens.clear();
        assert_eq!(tokens.user("b.2"), None);
    }
}
