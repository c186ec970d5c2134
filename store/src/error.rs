//! The store's errors. Each request-level variant corresponds to exactly one
//! of etcd's sentinel errors; the server maps them to etcd's gRPC code and
//! message in one place. Messages here are etcd's own texts.

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// `mvcc.ErrCompacted`: the revision asked for is below the compacted one.
    #[error("mvcc: required revision has been compacted")]
    Compacted,
    /// `mvcc.ErrFutureRev`: the revision asked for has not happened yet.
    #[error("mvcc: required revision is a future revision")]
    FutureRev,
    /// `ErrGRPCEmptyKey`.
    #[error("etcdserver: key is not provided")]
    EmptyKey,
    /// `ErrGRPCKeyNotFound`: `ignore_value`/`ignore_lease` on a missing key.
    #[error("etcdserver: key not found")]
    KeyNotFound,
    /// `ErrGRPCValueProvided`: `ignore_value` together with a value.
    #[error("etcdserver: value is provided")]
    ValueProvided,
    /// `ErrGRPCLeaseProvided`: `ignore_lease` together with a lease.
    #[error("etcdserver: lease is provided")]
    LeaseProvided,
    /// `ErrGRPCTooManyOps`.
    #[error("etcdserver: too many operations in txn request")]
    TooManyOps,
    /// `ErrGRPCDuplicateKey`: one key written twice in a txn.
    #[error("etcdserver: duplicate key given in txn request")]
    DuplicateKey,
    /// `ErrGRPCInvalidSortOption`: an unknown sort order or target.
    #[error("etcdserver: invalid sort option")]
    InvalidSortOption,
    /// `lease.ErrLeaseNotFound`.
    #[error("lease not found")]
    LeaseNotFound,
    /// `lease.ErrLeaseExists`.
    #[error("lease already exists")]
    LeaseExists,
    /// `lease.ErrLeaseTTLTooLarge`.
    #[error("too large lease TTL")]
    LeaseTtlTooLarge,
    /// `ErrNoSpace`: the NOSPACE alarm is active and the request adds data.
    #[error("mvcc: database space exceeded")]
    NoSpace,
    /// The auth store refused: a permission check or an auth change.
    #[error(transparent)]
    Auth(#[from] AuthError),
    /// The engine failed (I/O error, corruption reported by RocksDB, ...).
    #[error("storage engine: {0}")]
    Engine(String),
    /// Data on disk does not decode: the file is damaged or not an rtcd store.
    #[error("corrupt store: {0}")]
    Corrupt(String),
    /// An earlier batch failed half-way in memory; the store must be reopened.
    #[error("store failed earlier and must be reopened")]
    Poisoned,
}

/// Why an auth request or a permission check failed: etcd's auth errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum AuthError {
    #[error("auth: root user does not exist")]
    RootUserNotExist,
    #[error("auth: root user does not have root role")]
    RootRoleNotExist,
    #[error("auth: user already exists")]
    UserAlreadyExist,
    #[error("auth: user name is empty")]
    UserEmpty,
    #[error("auth: user not found")]
    UserNotFound,
    #[error("auth: role already exists")]
    RoleAlreadyExist,
    #[error("auth: role not found")]
    RoleNotFound,
    #[error("auth: role name is empty")]
    RoleEmpty,
    #[error("auth: authentication failed, invalid user ID or password")]
    AuthFailed,
    #[error("auth: authentication failed, password was given for no password user")]
    NoPasswordUser,
    #[error("auth: permission denied")]
    PermissionDenied,
    #[error("auth: role is not granted to the user")]
    RoleNotGranted,
    #[error("auth: permission is not granted to the role")]
    PermissionNotGranted,
    #[error("auth: authentication is not enabled")]
    NotEnabled,
    #[error("auth: revision in header is old")]
    OldRevision,
    #[error("auth: invalid auth token")]
    InvalidToken,
    #[error("auth: invalid auth management")]
    InvalidManagement,
}
