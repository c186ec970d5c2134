//! etcd's auth store: the on/off switch, users, roles and their key
//! permissions, and the auth revision that every change to them bumps.
//!
//! Replicated like any write and kept in the `auth` table, so every member
//! decides the same for every request. Permissions are checked where etcd
//! checks them: writes when they are applied (here, with the caller the
//! proposal carries), reads by the member serving them (`check_range`).
//! A caller's `auth_revision` is the revision its member saw when it
//! accepted the request; a request checked against an older revision than
//! the one it applies at is refused (`OldRevision`), and the client
//! re-authenticates and retries.
//!
//! Passwords arrive here already hashed (bcrypt, by the member that took the
//! request): hashing is slow and random, and apply must be neither.

use std::collections::BTreeMap;

use bytes::Bytes;
use prost::Message;
use rtcd_proto::authpb::{Permission, Role, User, UserAddOptions, permission::Type as PermType};
use rtcd_proto::etcdserverpb::{
    AuthRoleAddRequest, AuthRoleDeleteRequest, AuthRoleGrantPermissionRequest,
    AuthRoleRevokePermissionRequest, AuthUserAddRequest, AuthUserChangePasswordRequest,
    AuthUserDeleteRequest, AuthUserGrantRoleRequest, AuthUserRevokeRoleRequest, RequestOp, TxnRequest,
    request_op::Request,
};

use crate::engine::{Engine, Table, WriteBatch};
pub use crate::error::AuthError;
use crate::error::StoreError;

const ROOT: &str = "root";

/// Keys of the `auth` table.
mod key {
    pub const ENABLED: &[u8] = b"enabled";
    pub const REVISION: &[u8] = b"revision";
    pub const USER: &[u8] = b"user/";
    pub const ROLE: &[u8] = b"role/";
}

/// Who a write is applied for.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Caller {
    /// The members themselves (lease expiry, checkpoints, alarms,
    /// auto-compaction): never checked.
    #[default]
    Member,
    /// A client: `user` is empty and `auth_revision` 0 when it gave no
    /// credentials.
    Client { user: String, auth_revision: u64 },
}

impl Caller {
    pub fn anonymous() -> Self {
        Caller::Client { user: String::new(), auth_revision: 0 }
    }

    /// The user name, empty for the members and anonymous clients.
    pub fn user(&self) -> &str {
        match self {
            Caller::Member => "",
            Caller::Client { user, .. } => user,
        }
    }
}

/// A replicated change to the auth store.
#[derive(Debug, Clone, PartialEq)]
pub enum AuthRequest {
    Enable,
    Disable,
    /// `hashed_password` holds the bcrypt hash; `password` is empty.
    UserAdd(AuthUserAddRequest),
    UserDelete(AuthUserDeleteRequest),
    /// `hashed_password` holds the bcrypt hash; `password` is empty.
    UserChangePassword(AuthUserChangePasswordRequest),
    UserGrantRole(AuthUserGrantRoleRequest),
    UserRevokeRole(AuthUserRevokeRoleRequest),
    RoleAdd(AuthRoleAddRequest),
    RoleDelete(AuthRoleDeleteRequest),
    RoleGrantPermission(AuthRoleGrantPermissionRequest),
    RoleRevokePermission(AuthRoleRevokePermissionRequest),
    /// A token for `name`, whose password the proposing member checked at
    /// auth revision `checked_at`. Every member learns the token when this
    /// applies (see the server's token store).
    Authenticate {
        name: String,
        token: String,
        checked_at: u64,
    },
}

/// What an applied auth request answers.
#[derive(Debug, Clone, PartialEq)]
pub enum AuthResponse {
    Done,
    /// The token of an `Authenticate`.
    Token(String),
}

/// Read or write, as a request needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
}

/// The whole auth store, in memory.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AuthState {
    enabled: bool,
    revision: u64,
    users: BTreeMap<String, User>,
    roles: BTreeMap<String, Role>,
}

impl AuthState {
    pub fn load(engine: &dyn Engine) -> Result<Self, StoreError> {
        let enabled = engine.get(Table::Auth, key::ENABLED)?.is_some_and(|v| v.first() == Some(&1));
        let revision = match engine.get(Table::Auth, key::REVISION)? {
            Some(raw) => u64::from_be_bytes(
                raw.as_slice().try_into().map_err(|_| StoreError::Corrupt("auth revision".into()))?,
            ),
            // etcd's auth store starts at revision 1 (clients see it in
            // AuthStatus and in JWT claims).
            None => 1,
        };
        let mut users = BTreeMap::new();
        for (name, raw) in scan(engine, key::USER)? {
            let user = User::decode(raw.as_slice()).map_err(|e| corrupt("user", &name, e))?;
            users.insert(name, user);
        }
        let mut roles = BTreeMap::new();
        for (name, raw) in scan(engine, key::ROLE)? {
            let role = Role::decode(raw.as_slice()).map_err(|e| corrupt("role", &name, e))?;
            roles.insert(name, role);
        }
        Ok(Self { enabled, revision, users, roles })
    }

    pub fn enabled(&self) -> bool {
        self.enabled
    }

    pub fn revision(&self) -> u64 {
        self.revision
    }

    pub fn user(&self, name: &str) -> Option<&User> {
        self.users.get(name)
    }

    pub fn role(&self, name: &str) -> Option<&Role> {
        self.roles.get(name)
    }

    /// User names, ascending.
    pub fn user_names(&self) -> Vec<String> {
        self.users.keys().cloned().collect()
    }

    /// Role names, ascending.
    pub fn role_names(&self) -> Vec<String> {
        self.roles.keys().cloned().collect()
    }

    /// Whether `user` has been granted `role`.
    pub fn has_role(&self, user: &str, role: &str) -> bool {
        self.users.get(user).is_some_and(|u| u.roles.iter().any(|r| r == role))
    }

    /// etcd's `isOpPermitted`: may `caller` read or write `[key, range_end)`
    /// (one key when `range_end` is empty).
    pub fn check(
        &self,
        caller: &Caller,
        key: &[u8],
        range_end: &[u8],
        access: Access,
    ) -> Result<(), AuthError> {
        let Caller::Client { user, auth_revision } = caller else { return Ok(()) };
        if !self.enabled {
            return Ok(());
        }
        if *auth_revision == 0 {
            return Err(AuthError::UserEmpty);
        }
        if *auth_revision < self.revision {
            return Err(AuthError::OldRevision);
        }
        let user = self.users.get(user).ok_or(AuthError::PermissionDenied)?;
        if is_root(user) || self.covered(user, key, range_end, access) {
            Ok(())
        } else {
            Err(AuthError::PermissionDenied)
        }
    }

    /// etcd's `IsAdminPermitted`: only users with the root role (anyone
    /// while auth is off).
    pub fn check_admin(&self, caller: &Caller) -> Result<(), AuthError> {
        let Caller::Client { user, .. } = caller else { return Ok(()) };
        if !self.enabled {
            return Ok(());
        }
        if user.is_empty() {
            return Err(AuthError::UserEmpty);
        }
        let user = self.users.get(user).ok_or(AuthError::UserNotFound)?;
        if is_root(user) { Ok(()) } else { Err(AuthError::PermissionDenied) }
    }

    /// Every key a txn reads or writes, in every branch and every nested
    /// txn: compares and ranges need read, puts and deletes write, `prev_kv`
    /// of a delete read as well. (etcd 3.4 skips nested txns here; 3.5
    /// checks them, and so does rtcd.)
    pub fn check_txn(&self, caller: &Caller, txn: &TxnRequest) -> Result<(), AuthError> {
        if matches!(caller, Caller::Member) || !self.enabled {
            return Ok(());
        }
        for c in &txn.compare {
            self.check(caller, &c.key, &c.range_end, Access::Read)?;
        }
        self.check_ops(caller, &txn.success)?;
        self.check_ops(caller, &txn.failure)
    }

    fn check_ops(&self, caller: &Caller, ops: &[RequestOp]) -> Result<(), AuthError> {
        for op in ops {
            match &op.request {
                Some(Request::RequestRange(r)) => self.check(caller, &r.key, &r.range_end, Access::Read)?,
                Some(Request::RequestPut(p)) => self.check(caller, &p.key, &[], Access::Write)?,
                Some(Request::RequestDeleteRange(d)) => {
                    if d.prev_kv {
                        self.check(caller, &d.key, &d.range_end, Access::Read)?;
                    }
                    self.check(caller, &d.key, &d.range_end, Access::Write)?;
                }
                Some(Request::RequestTxn(t)) => self.check_txn(caller, t)?,
                None => {}
            }
        }
        Ok(())
    }

    /// Whether the user's roles together grant `access` on the whole of
    /// `[key, range_end)`: a single key must lie in one permission; a range
    /// must be covered by the permissions' union with no gap.
    fn covered(&self, user: &User, key: &[u8], range_end: &[u8], access: Access) -> bool {
        let mut grants: Vec<(&[u8], End)> = user
            .roles
            .iter()
            .filter_map(|name| self.roles.get(name))
            .flat_map(|role| role.key_permission.iter())
            .filter(|p| grants_access(p, access))
            .map(|p| (p.key.as_ref(), End::of(&p.key, &p.range_end)))
            .collect();
        if range_end.is_empty() {
            return grants.iter().any(|(start, end)| *start <= key && end.after(key));
        }
        let wanted = End::of(key, range_end);
        grants.sort_by(|a, b| a.0.cmp(b.0));
        let mut reached = End::Key(key.to_vec());
        for (start, end) in grants {
            if !reached.after(start) && !reached.is(start) {
                break;
            }
            if end.beyond(&reached) {
                reached = end;
            }
            if !wanted.beyond(&reached) {
                return true;
            }
        }
        false
    }

    /// Applies one auth change, writing what changed into `writes`.
    pub fn apply(&mut self, req: &AuthRequest, writes: &mut WriteBatch) -> Result<AuthResponse, AuthError> {
        match req {
            AuthRequest::Enable => {
                if !self.enabled {
                    let root = self.users.get(ROOT).ok_or(AuthError::RootUserNotExist)?;
                    if !is_root(root) {
                        return Err(AuthError::RootRoleNotExist);
                    }
                    self.enabled = true;
                    writes.put(Table::Auth, key::ENABLED, vec![1]);
                }
                // Enabling does not bump the revision (etcd's rule).
                return Ok(AuthResponse::Done);
            }
            AuthRequest::Disable => {
                if !self.enabled {
                    return Ok(AuthResponse::Done);
                }
                self.enabled = false;
                writes.put(Table::Auth, key::ENABLED, vec![0]);
            }
            AuthRequest::UserAdd(r) => self.user_add(r, writes)?,
            AuthRequest::UserDelete(r) => {
                if self.enabled && r.name == ROOT {
                    return Err(AuthError::InvalidManagement);
                }
                self.users.remove(&r.name).ok_or(AuthError::UserNotFound)?;
                writes.delete(Table::Auth, table_key(key::USER, &r.name));
            }
            AuthRequest::UserChangePassword(r) => {
                let user = self.users.get_mut(&r.name).ok_or(AuthError::UserNotFound)?;
                user.password = Bytes::from(r.hashed_password.clone().into_bytes());
                put_user(writes, &r.name, user);
            }
            AuthRequest::UserGrantRole(r) => {
                if r.role != ROOT && !self.roles.contains_key(&r.role) {
                    if !self.users.contains_key(&r.user) {
                        return Err(AuthError::UserNotFound);
                    }
                    return Err(AuthError::RoleNotFound);
                }
                let user = self.users.get_mut(&r.user).ok_or(AuthError::UserNotFound)?;
                match user.roles.binary_search(&r.role) {
                    // Granted already: nothing changes, no new revision.
                    Ok(_) => return Ok(AuthResponse::Done),
                    Err(at) => user.roles.insert(at, r.role.clone()),
                }
                put_user(writes, &r.user, user);
            }
            AuthRequest::UserRevokeRole(r) => {
                if self.enabled && r.name == ROOT && r.role == ROOT {
                    return Err(AuthError::InvalidManagement);
                }
                let user = self.users.get_mut(&r.name).ok_or(AuthError::UserNotFound)?;
                let before = user.roles.len();
                user.roles.retain(|role| *role != r.role);
                if user.roles.len() == before {
                    return Err(AuthError::RoleNotGranted);
                }
                put_user(writes, &r.name, user);
            }
            AuthRequest::RoleAdd(r) => {
                if r.name.is_empty() {
                    return Err(AuthError::RoleEmpty);
                }
                if self.roles.contains_key(&r.name) {
                    return Err(AuthError::RoleAlreadyExist);
                }
                let role =
                    Role { name: Bytes::from(r.name.clone().into_bytes()), key_permission: Vec::new() };
                put_role(writes, &r.name, &role);
                self.roles.insert(r.name.clone(), role);
            }
            AuthRequest::RoleDelete(r) => {
                if self.enabled && r.role == ROOT {
                    return Err(AuthError::InvalidManagement);
                }
                self.roles.remove(&r.role).ok_or(AuthError::RoleNotFound)?;
                writes.delete(Table::Auth, table_key(key::ROLE, &r.role));
                for (name, user) in self.users.iter_mut() {
                    let before = user.roles.len();
                    user.roles.retain(|role| *role != r.role);
                    if user.roles.len() != before {
                        put_user(writes, name, user);
                    }
                }
            }
            AuthRequest::RoleGrantPermission(r) => {
                let role = self.roles.get_mut(&r.name).ok_or(AuthError::RoleNotFound)?;
                let perm = r.perm.clone().unwrap_or_default();
                let same = |p: &Permission| p.key == perm.key && p.range_end == perm.range_end;
                match role.key_permission.iter_mut().find(|p| same(p)) {
                    Some(existing) => existing.perm_type = perm.perm_type,
                    None => {
                        let at = role.key_permission.partition_point(|p| p.key <= perm.key);
                        role.key_permission.insert(at, perm);
                    }
                }
                put_role(writes, &r.name, role);
            }
            AuthRequest::RoleRevokePermission(r) => {
                let role = self.roles.get_mut(&r.role).ok_or(AuthError::RoleNotFound)?;
                let before = role.key_permission.len();
                role.key_permission.retain(|p| p.key != r.key || p.range_end != r.range_end);
                if role.key_permission.len() == before {
                    return Err(AuthError::PermissionNotGranted);
                }
                put_role(writes, &r.role, role);
            }
            AuthRequest::Authenticate { name, token, checked_at } => {
                if !self.enabled {
                    return Err(AuthError::NotEnabled);
                }
                let user = self.users.get(name).ok_or(AuthError::AuthFailed)?;
                if user.options.is_some_and(|o| o.no_password) {
                    return Err(AuthError::AuthFailed);
                }
                // The password was checked against an older auth store (it
                // may have changed since): the member checks it again.
                if *checked_at != self.revision {
                    return Err(AuthError::OldRevision);
                }
                return Ok(AuthResponse::Token(token.clone()));
            }
        }
        self.revision += 1;
        writes.put(Table::Auth, key::REVISION, self.revision.to_be_bytes().to_vec());
        Ok(AuthResponse::Done)
    }

    fn user_add(&mut self, r: &AuthUserAddRequest, writes: &mut WriteBatch) -> Result<(), AuthError> {
        if r.name.is_empty() {
            return Err(AuthError::UserEmpty);
        }
        if self.users.contains_key(&r.name) {
            return Err(AuthError::UserAlreadyExist);
        }
        let no_password = r.options.is_some_and(|o| o.no_password);
        let user = User {
            name: Bytes::from(r.name.clone().into_bytes()),
            password: if no_password {
                Bytes::new()
            } else {
                Bytes::from(r.hashed_password.clone().into_bytes())
            },
            roles: Vec::new(),
            options: Some(UserAddOptions { no_password }),
        };
        put_user(writes, &r.name, &user);
        self.users.insert(r.name.clone(), user);
        Ok(())
    }
}

/// The exclusive end of a key range.
#[derive(Debug, Clone, PartialEq, Eq)]
enum End {
    Key(Vec<u8>),
    /// To the end of the keyspace (`range_end` "\0").
    Infinite,
}

impl End {
    /// Where `[key, range_end)` ends; one key (`range_end` empty) ends
    /// right after itself, at `key + "\0"`.
    fn of(key: &[u8], range_end: &[u8]) -> End {
        match range_end {
            [] => End::Key([key, &[0]].concat()),
            [0] => End::Infinite,
            end => End::Key(end.to_vec()),
        }
    }

    /// Whether `key` lies before this end.
    fn after(&self, key: &[u8]) -> bool {
        match self {
            End::Infinite => true,
            End::Key(end) => key < end.as_slice(),
        }
    }

    fn is(&self, key: &[u8]) -> bool {
        matches!(self, End::Key(end) if end.as_slice() == key)
    }

    /// Whether this end lies past `other`.
    fn beyond(&self, other: &End) -> bool {
        match (self, other) {
            (_, End::Infinite) => false,
            (End::Infinite, End::Key(_)) => true,
            (End::Key(a), End::Key(b)) => a > b,
        }
    }
}

fn grants_access(p: &Permission, access: Access) -> bool {
    let kind = PermType::try_from(p.perm_type).unwrap_or(PermType::Read);
    matches!(
        (kind, access),
        (PermType::Readwrite, _) | (PermType::Read, Access::Read) | (PermType::Write, Access::Write)
    )
}

fn is_root(user: &User) -> bool {
    user.roles.iter().any(|r| r == ROOT)
}

fn table_key(prefix: &[u8], name: &str) -> Vec<u8> {
    [prefix, name.as_bytes()].concat()
}

fn put_user(writes: &mut WriteBatch, name: &str, user: &User) {
    writes.put(Table::Auth, table_key(key::USER, name), user.encode_to_vec());
}

fn put_role(writes: &mut WriteBatch, name: &str, role: &Role) {
    writes.put(Table::Auth, table_key(key::ROLE, name), role.encode_to_vec());
}

/// The records under `prefix`, keyed by the name after it.
fn scan(engine: &dyn Engine, prefix: &[u8]) -> Result<Vec<(String, Vec<u8>)>, StoreError> {
    let mut end = prefix.to_vec();
    if let Some(last) = end.last_mut() {
        *last += 1;
    }
    let mut out = Vec::new();
    for entry in engine.scan(Table::Auth, prefix, Some(&end)) {
        let (raw_key, value) = entry?;
        let name = String::from_utf8(raw_key[prefix.len()..].to_vec())
            .map_err(|_| StoreError::Corrupt(format!("auth key {raw_key:?}")))?;
        out.push((name, value));
    }
    Ok(out)
}

fn corrupt(what: &str, name: &str, e: prost::DecodeError) -> StoreError {
    StoreError::Corrupt(format!("auth {what} {name:?}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn perm(kind: PermType, key: &str, range_end: &str) -> Permission {
        Permission {
            perm_type: kind as i32,
            key: key.to_owned().into(),
            range_end: range_end.to_owned().into(),
        }
    }

    /// Auth on, with `alice` holding one role with `perms`, and `root`.
    fn with_perms(perms: Vec<Permission>) -> (AuthState, Caller) {
        let mut auth = AuthState::default();
        let mut writes = WriteBatch::default();
        let add = |name: &str| AuthUserAddRequest {
            name: name.into(),
            hashed_password: "h".into(),
            ..Default::default()
        };
        let mut apply = |req: AuthRequest| auth.apply(&req, &mut writes).unwrap();
        apply(AuthRequest::UserAdd(add("root")));
        apply(AuthRequest::UserGrantRole(AuthUserGrantRoleRequest {
            user: "root".into(),
            role: ROOT.into(),
        }));
        apply(AuthRequest::UserAdd(add("alice")));
        apply(AuthRequest::RoleAdd(AuthRoleAddRequest { name: "r".into() }));
        for p in perms {
            apply(AuthRequest::RoleGrantPermission(AuthRoleGrantPermissionRequest {
                name: "r".into(),
                perm: Some(p),
            }));
        }
        apply(AuthRequest::UserGrantRole(AuthUserGrantRoleRequest {
            user: "alice".into(),
            role: "r".into(),
        }));
        apply(AuthRequest::Enable);
        let alice = Caller::Client { user: "alice".into(), auth_revision: auth.revision() };
        (auth, alice)
    }

    #[test]
    fn a_range_must_be_covered_without_a_gap() {
        let (auth, alice) = with_perms(vec![
            perm(PermType::Read, "a", "c"),
            perm(PermType::Readwrite, "c", "e"),
            perm(PermType::Read, "k", ""),
            perm(PermType::Write, "x", "\0"),
        ]);
        let read =
            |key: &str, end: &str| auth.check(&alice, key.as_bytes(), end.as_bytes(), Access::Read).is_ok();
        let write =
            |key: &str, end: &str| auth.check(&alice, key.as_bytes(), end.as_bytes(), Access::Write).is_ok();
        assert!(read("a", "") && read("b", "") && read("d", "") && read("k", ""));
        assert!(!read("e", "") && !read("ka", "") && !read("j", ""));
        assert!(read("a", "e"), "two adjacent permissions cover the range");
        assert!(read("b", "d") && !read("a", "f") && !read("0", "b"));
        assert!(read("k", "k\0"), "a one-key permission covers exactly that key");
        assert!(!read("k", "l"));
        assert!(
            write("c", "e") && !write("a", "d") && write("x", "") && write("zzz", "\0") && write("y", "\0")
        );
        assert!(!write("w", "\0"));
        assert!(!read("x", ""), "write does not grant read");
    }

    #[test]
    fn callers_are_checked_as_etcd_checks_them() {
        let (auth, alice) = with_perms(vec![perm(PermType::Read, "a", "")]);
        let root = Caller::Client { user: "root".into(), auth_revision: auth.revision() };
        assert_eq!(auth.check(&root, b"anything", b"\0", Access::Write), Ok(()));
        assert_eq!(auth.check(&Caller::Member, b"anything", b"", Access::Write), Ok(()));
        assert_eq!(auth.check(&Caller::anonymous(), b"a", b"", Access::Read), Err(AuthError::UserEmpty));
        let stale = Caller::Client { user: "alice".into(), auth_revision: auth.revision() - 1 };
        assert_eq!(auth.check(&stale, b"a", b"", Access::Read), Err(AuthError::OldRevision));
        let ghost = Caller::Client { user: "ghost".into(), auth_revision: auth.revision() };
        assert_eq!(auth.check(&ghost, b"a", b"", Access::Read), Err(AuthError::PermissionDenied));
        assert_eq!(auth.check_admin(&alice), Err(AuthError::PermissionDenied));
        assert_eq!(auth.check_admin(&ghost), Err(AuthError::UserNotFound));
        assert_eq!(auth.check_admin(&root), Ok(()));
        // A nested txn is checked too.
        let nested = TxnRequest {
            success: vec![RequestOp {
                request: Some(Request::RequestTxn(TxnRequest {
                    success: vec![RequestOp {
                        request: Some(Request::RequestPut(rtcd_proto::etcdserverpb::PutRequest {
                            key: "a".into(),
                            ..Default::default()
                        })),
                    }],
                    ..Default::default()
                })),
            }],
            ..Default::default()
        };
        assert_eq!(auth.check_txn(&alice, &nested), Err(AuthError::PermissionDenied));
        assert_eq!(auth.check_txn(&root, &nested), Ok(()));
    }

    #[test]
    fn changes_bump_the_revision_and_survive_a_reload() {
        let (mut auth, _) = with_perms(vec![perm(PermType::Read, "a", "b")]);
        let before = auth.revision();
        let mut writes = WriteBatch::default();
        // A role granted twice changes nothing.
        let again = AuthUserGrantRoleRequest { user: "alice".into(), role: "r".into() };
        assert_eq!(auth.apply(&AuthRequest::UserGrantRole(again), &mut writes), Ok(AuthResponse::Done));
        assert_eq!(auth.revision(), before);
        assert_eq!(
            auth.apply(&AuthRequest::RoleDelete(AuthRoleDeleteRequest { role: ROOT.into() }), &mut writes),
            Err(AuthError::InvalidManagement)
        );
        auth.apply(&AuthRequest::RoleDelete(AuthRoleDeleteRequest { role: "r".into() }), &mut writes)
            .unwrap();
        assert_eq!(auth.revision(), before + 1);
        assert!(!auth.has_role("alice", "r"), "a deleted role leaves its users");

        let engine = crate::engine::MemEngine::default();
        let mut all = WriteBatch::default();
        let fresh = with_perms_into(&mut all);
        engine.write(all, true).unwrap();
        assert_eq!(AuthState::load(&engine).unwrap(), fresh);
    }

    /// An auth store whose records all went into `writes`.
    fn with_perms_into(writes: &mut WriteBatch) -> AuthState {
        let mut auth = AuthState::default();
        let add =
            AuthUserAddRequest { name: "root".into(), hashed_password: "h".into(), ..Default::default() };
        auth.apply(&AuthRequest::UserAdd(add), writes).unwrap();
        let grant = AuthUserGrantRoleRequest { user: "root".into(), role: ROOT.into() };
        auth.apply(&AuthRequest::UserGrantRole(grant), writes).unwrap();
        auth.apply(&AuthRequest::RoleAdd(AuthRoleAddRequest { name: "r".into() }), writes).unwrap();
        let p = perm(PermType::Write, "k", "\0");
        auth.apply(
            &AuthRequest::RoleGrantPermission(AuthRoleGrantPermissionRequest {
                name: "r".into(),
                perm: Some(p),
            }),
            writes,
        )
        .unwrap();
        auth.apply(&AuthRequest::Enable, writes).unwrap();
        auth
    }
}
