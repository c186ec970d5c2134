//! `etcdserverpb.Auth`: users, roles, permissions and the auth switch.
//!
//! Changes are replicated writes (`rtcd_store::AuthRequest`), checked for
//! root when they apply. Passwords are hashed here, with bcrypt at
//! `--bcrypt-cost` off the async workers, so the log never holds one in
//! clear and applying stays cheap. Reads (get, list, status) wait for a
//! linearizable read barrier, then answer from this member's auth store,
//! with etcd's rules on who may read what.

use std::sync::Arc;

use rtcd_proto::etcdserverpb::{
    AuthDisableRequest, AuthDisableResponse, AuthEnableRequest, AuthEnableResponse, AuthRoleAddRequest,
    AuthRoleAddResponse, AuthRoleDeleteRequest, AuthRoleDeleteResponse, AuthRoleGetRequest,
    AuthRoleGetResponse, AuthRoleGrantPermissionRequest, AuthRoleGrantPermissionResponse,
    AuthRoleListRequest, AuthRoleListResponse, AuthRoleRevokePermissionRequest,
    AuthRoleRevokePermissionResponse, AuthStatusRequest, AuthStatusResponse, AuthUserAddRequest,
    AuthUserAddResponse, AuthUserChangePasswordRequest, AuthUserChangePasswordResponse,
    AuthUserDeleteRequest, AuthUserDeleteResponse, AuthUserGetRequest, AuthUserGetResponse,
    AuthUserGrantRoleRequest, AuthUserGrantRoleResponse, AuthUserListRequest, AuthUserListResponse,
    AuthUserRevokeRoleRequest, AuthUserRevokeRoleResponse, AuthenticateRequest, AuthenticateResponse,
    ResponseHeader, auth_server::Auth,
};
use rtcd_store::{
    AuthError, AuthRequest, AuthResponse, AuthState, Caller, StoreError, WriteRequest, WriteResponse,
};
use tonic::{Request, Response, Status};

use crate::auth::TokenError;
use crate::errors::EtcdError;
use crate::node::Node;

#[derive(Debug)]
pub struct AuthService {
    node: Arc<Node>,
}

impl AuthService {
    pub fn new(node: Arc<Node>) -> Self {
        Self { node }
    }

    /// Replicates an auth change for `caller` and answers with a fresh
    /// header, as every auth response carries one.
    async fn change(&self, caller: &Caller, req: AuthRequest) -> Result<Option<ResponseHeader>, Status> {
        let applied = self.node.propose_for(WriteRequest::Auth(req), caller).await?;
        match applied.response {
            WriteResponse::Auth(_) => Ok(self.node.header()),
            _ => Err(Status::internal("rtcd: mismatched write response")),
        }
    }

    /// The caller of a read, once this member has applied everything
    /// committed before it arrived, and the auth store to answer from.
    async fn read<T>(&self, request: &Request<T>) -> Result<(Caller, Arc<AuthState>), Status> {
        self.node.read_barrier().await?;
        let caller = self.node.caller(request)?;
        Ok((caller, self.node.store().auth().map_err(EtcdError::from)?))
    }

    /// bcrypt, on the blocking pool: a hash takes tens of milliseconds.
    async fn hash(&self, password: String) -> Result<String, Status> {
        let cost = self.node.settings().bcrypt_cost;
        let hashed = tokio::task::spawn_blocking(move || bcrypt::hash(password, cost))
            .await
            .map_err(|e| Status::internal(format!("rtcd: hashing a password: {e}")))?;
        hashed.map_err(|e| Status::internal(format!("rtcd: hashing a password: {e}")))
    }

    /// Checks `name`'s password against the auth store as it is now;
    /// returns the auth revision it was checked at.
    async fn check_password(&self, name: &str, password: String) -> Result<u64, Status> {
        let auth = self.node.store().auth().map_err(EtcdError::from)?;
        if !auth.enabled() {
            return Err(denied(AuthError::NotEnabled));
        }
        let user = auth.user(name).ok_or_else(|| denied(AuthError::AuthFailed))?;
        if user.options.is_some_and(|o| o.no_password) {
            return Err(denied(AuthError::NoPasswordUser));
        }
        let hash = String::from_utf8_lossy(&user.password).into_owned();
        let matches = tokio::task::spawn_blocking(move || bcrypt::verify(password, &hash).unwrap_or(false))
            .await
            .unwrap_or(false);
        if !matches {
            return Err(denied(AuthError::AuthFailed));
        }
        Ok(auth.revision())
    }
}

fn denied(e: AuthError) -> Status {
    EtcdError::from(StoreError::Auth(e)).into()
}

/// etcd lets a user read themselves, and the roles they hold, without root.
fn admin_or(auth: &AuthState, caller: &Caller, allowed: bool) -> Result<(), Status> {
    match auth.check_admin(caller) {
        Err(e) if !allowed => Err(denied(e)),
        _ => Ok(()),
    }
}

#[tonic::async_trait]
impl Auth for AuthService {
    async fn auth_enable(
        &self,
        request: Request<AuthEnableRequest>,
    ) -> Result<Response<AuthEnableResponse>, Status> {
        let caller = self.node.caller(&request)?;
        let header = self.change(&caller, AuthRequest::Enable).await?;
        Ok(Response::new(AuthEnableResponse { header }))
    }

    async fn auth_disable(
        &self,
        request: Request<AuthDisableRequest>,
    ) -> Result<Response<AuthDisableResponse>, Status> {
        let caller = self.node.caller(&request)?;
        let header = self.change(&caller, AuthRequest::Disable).await?;
        Ok(Response::new(AuthDisableResponse { header }))
    }

    async fn auth_status(
        &self,
        request: Request<AuthStatusRequest>,
    ) -> Result<Response<AuthStatusResponse>, Status> {
        let (_, auth) = self.read(&request).await?;
        Ok(Response::new(AuthStatusResponse {
            header: self.node.header(),
            enabled: auth.enabled(),
            auth_revision: auth.revision(),
        }))
    }

    /// As etcd: the password is checked here, then a token for the user is
    /// replicated so every member knows it (a JWT is signed once the entry
    /// applied). If the auth store changed in between (the password, say),
    /// the check runs again.
    async fn authenticate(
        &self,
        request: Request<AuthenticateRequest>,
    ) -> Result<Response<AuthenticateResponse>, Status> {
        self.node.read_barrier().await?;
        let req = request.into_inner();
        loop {
            let checked_at = self.check_password(&req.name, req.password.clone()).await?;
            let tokens = self.node.authenticator().tokens();
            let signing_failed = |e: TokenError| EtcdError::TokenSigning(e.to_string());
            let token = tokens.to_replicate(self.node.raft().indexes().0).map_err(signing_failed)?;
            let ask = AuthRequest::Authenticate { name: req.name.clone(), token, checked_at };
            match self.node.propose_for(WriteRequest::Auth(ask), &Caller::anonymous()).await {
                Ok(applied) => {
                    let WriteResponse::Auth(AuthResponse::Token(replicated)) = applied.response else {
                        return Err(Status::internal("rtcd: mismatched write response"));
                    };
                    let token = tokens.issue(&req.name, checked_at, replicated).map_err(signing_failed)?;
                    return Ok(Response::new(AuthenticateResponse { header: self.node.header(), token }));
                }
                Err(EtcdError::Store(StoreError::Auth(AuthError::OldRevision))) => continue,
                Err(e) => return Err(e.into()),
            }
        }
    }

    async fn user_add(
        &self,
        request: Request<AuthUserAddRequest>,
    ) -> Result<Response<AuthUserAddResponse>, Status> {
        let caller = self.node.caller(&request)?;
        let mut req = request.into_inner();
        let no_password = req.options.is_some_and(|o| o.no_password);
        // A client may send a hash of its own (etcd 3.5's `hashedPassword`).
        if !no_password && req.hashed_password.is_empty() {
            req.hashed_password = self.hash(std::mem::take(&mut req.password)).await?;
        }
        req.password.clear();
        let header = self.change(&caller, AuthRequest::UserAdd(req)).await?;
        Ok(Response::new(AuthUserAddResponse { header }))
    }

    async fn user_get(
        &self,
        request: Request<AuthUserGetRequest>,
    ) -> Result<Response<AuthUserGetResponse>, Status> {
        let (caller, auth) = self.read(&request).await?;
        let name = &request.get_ref().name;
        admin_or(&auth, &caller, caller.user() == name)?;
        let user = auth.user(name).ok_or_else(|| denied(AuthError::UserNotFound))?;
        Ok(Response::new(AuthUserGetResponse { header: self.node.header(), roles: user.roles.clone() }))
    }

    async fn user_list(
        &self,
        request: Request<AuthUserListRequest>,
    ) -> Result<Response<AuthUserListResponse>, Status> {
        let (caller, auth) = self.read(&request).await?;
        admin_or(&auth, &caller, false)?;
        Ok(Response::new(AuthUserListResponse { header: self.node.header(), users: auth.user_names() }))
    }

    async fn user_delete(
        &self,
        request: Request<AuthUserDeleteRequest>,
    ) -> Result<Response<AuthUserDeleteResponse>, Status> {
        let caller = self.node.caller(&request)?;
        let header = self.change(&caller, AuthRequest::UserDelete(request.into_inner())).await?;
        Ok(Response::new(AuthUserDeleteResponse { header }))
    }

    async fn user_change_password(
        &self,
        request: Request<AuthUserChangePasswordRequest>,
    ) -> Result<Response<AuthUserChangePasswordResponse>, Status> {
        let caller = self.node.caller(&request)?;
        let mut req = request.into_inner();
        if req.hashed_password.is_empty() {
            req.hashed_password = self.hash(std::mem::take(&mut req.password)).await?;
        }
        req.password.clear();
        let header = self.change(&caller, AuthRequest::UserChangePassword(req)).await?;
        Ok(Response::new(AuthUserChangePasswordResponse { header }))
    }

    async fn user_grant_role(
        &self,
        request: Request<AuthUserGrantRoleRequest>,
    ) -> Result<Response<AuthUserGrantRoleResponse>, Status> {
        let caller = self.node.caller(&request)?;
        let header = self.change(&caller, AuthRequest::UserGrantRole(request.into_inner())).await?;
        Ok(Response::new(AuthUserGrantRoleResponse { header }))
    }

    async fn user_revoke_role(
        &self,
        request: Request<AuthUserRevokeRoleRequest>,
    ) -> Result<Response<AuthUserRevokeRoleResponse>, Status> {
        let caller = self.node.caller(&request)?;
        let header = self.change(&caller, AuthRequest::UserRevokeRole(request.into_inner())).await?;
        Ok(Response::new(AuthUserRevokeRoleResponse { header }))
    }

    async fn role_add(
        &self,
        request: Request<AuthRoleAddRequest>,
    ) -> Result<Response<AuthRoleAddResponse>, Status> {
        let caller = self.node.caller(&request)?;
        let header = self.change(&caller, AuthRequest::RoleAdd(request.into_inner())).await?;
        Ok(Response::new(AuthRoleAddResponse { header }))
    }

    async fn role_get(
        &self,
        request: Request<AuthRoleGetRequest>,
    ) -> Result<Response<AuthRoleGetResponse>, Status> {
        let (caller, auth) = self.read(&request).await?;
        let name = &request.get_ref().role;
        admin_or(&auth, &caller, auth.has_role(caller.user(), name))?;
        let role = auth.role(name).ok_or_else(|| denied(AuthError::RoleNotFound))?;
        Ok(Response::new(AuthRoleGetResponse {
            header: self.node.header(),
            perm: role.key_permission.clone(),
        }))
    }

    async fn role_list(
        &self,
        request: Request<AuthRoleListRequest>,
    ) -> Result<Response<AuthRoleListResponse>, Status> {
        let (caller, auth) = self.read(&request).await?;
        admin_or(&auth, &caller, false)?;
        Ok(Response::new(AuthRoleListResponse { header: self.node.header(), roles: auth.role_names() }))
    }

    async fn role_delete(
        &self,
        request: Request<AuthRoleDeleteRequest>,
    ) -> Result<Response<AuthRoleDeleteResponse>, Status> {
        let caller = self.node.caller(&request)?;
        let header = self.change(&caller, AuthRequest::RoleDelete(request.into_inner())).await?;
        Ok(Response::new(AuthRoleDeleteResponse { header }))
    }

    async fn role_grant_permission(
        &self,
        request: Request<AuthRoleGrantPermissionRequest>,
    ) -> Result<Response<AuthRoleGrantPermissionResponse>, Status> {
        let caller = self.node.caller(&request)?;
        let header = self.change(&caller, AuthRequest::RoleGrantPermission(request.into_inner())).await?;
        Ok(Response::new(AuthRoleGrantPermissionResponse { header }))
    }

    async fn role_revoke_permission(
        &self,
        request: Request<AuthRoleRevokePermissionRequest>,
    ) -> Result<Response<AuthRoleRevokePermissionResponse>, Status> {
        let caller = self.node.caller(&request)?;
        let header = self.change(&caller, AuthRequest::RoleRevokePermission(request.into_inner())).await?;
        Ok(Response::new(AuthRoleRevokePermissionResponse { header }))
    }
}
