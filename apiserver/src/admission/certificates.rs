//! CertificateApproval and CertificateSigning: approving a CertificateSigningRequest, or writing
//! its certificate, needs more than access to the subresource: the `approve` (or `sign`) verb
//! on the `signers` resource of `certificates.k8s.io`, named for the request's signer
//! (`kubernetes.io/kube-apiserver-client`) or for every signer of its domain
//! (`kubernetes.io/*`). So a user allowed to update `certificatesigningrequests/approval` still
//! approves only for the signers a role names.
//!
//! `PodCertificateSigning` is the same rule for PodCertificateRequests, which kube keeps in their
//! status strategy rather than in a plugin: it is on whatever the flags say, and refuses as the
//! strategy does (422, naming `spec.signerName`).

use async_trait::async_trait;
use serde_json::Value;

use super::lookup::PermissionsLookup;
use super::{Attributes, Operation, Plugin};
use crate::errors::{ApiError, Cause};

const GROUP: &str = "certificates.k8s.io";
const CSRS: &str = "certificatesigningrequests";

/// One of the two plugins: which subresource's writes it checks, for which verb.
#[derive(Debug)]
pub struct SignerCheck {
    plugin: &'static str,
    subresource: &'static str,
    verb: &'static str,
    permissions: PermissionsLookup,
}

impl SignerCheck {
    /// kube's CertificateApproval: writes to `certificatesigningrequests/approval`.
    pub fn approval(permissions: PermissionsLookup) -> Self {
        SignerCheck { plugin: "CertificateApproval", subresource: "approval", verb: "approve", permissions }
    }

    /// kube's CertificateSigning: writes to `certificatesigningrequests/status` that change the
    /// certificate or the conditions.
    pub fn signing(permissions: PermissionsLookup) -> Self {
        SignerCheck { plugin: "CertificateSigning", subresource: "status", verb: "sign", permissions }
    }
}

#[async_trait]
impl Plugin for SignerCheck {
    fn name(&self) -> &'static str {
        self.plugin
    }

    async fn validate(&self, write: &Attributes) -> Result<(), ApiError> {
        let Some(old) = csr_update(write, self.subresource) else { return Ok(()) };
        let answer =
            |csr: &Value| (csr["status"]["certificate"].clone(), csr["status"]["conditions"].clone());
        if self.verb == "sign" && write.object.as_ref().map(answer) == Some(answer(old)) {
            return Ok(());
        }
        // The signer as stored: a change of signerName in the same write is refused elsewhere,
        // and must not choose whose permission is checked.
        check(&self.permissions, write, self.verb, old)
    }
}

/// A status write to a PodCertificateRequest that changes its status needs `sign` on its signer.
#[derive(Debug)]
pub struct PodCertificateSigning(pub PermissionsLookup);

#[async_trait]
impl Plugin for PodCertificateSigning {
    fn name(&self) -> &'static str {
        "PodCertificateRequestSigning"
    }

    async fn validate(&self, write: &Attributes) -> Result<(), ApiError> {
        let Some(old) = update_of(write, PCRS, "status") else { return Ok(()) };
        if write.object.as_ref().map(|new| &new["status"]) == Some(&old["status"]) {
            return Ok(());
        }
        let signer = old["spec"]["signerName"].as_str().unwrap_or_default();
        if allowed(&self.0, write, "sign", signer)? {
            return Ok(());
        }
        Err(ApiError::Invalid {
            kind: format!("PodCertificateRequest.{GROUP}"),
            name: write.name.clone(),
            causes: vec![Cause {
                reason: "FieldValueForbidden",
                field: "spec.signerName".into(),
                message: format!(
                    "Forbidden: User {} is not permitted to \"sign\" for signer {}",
                    crate::errors::go_quote(&write.user.name),
                    crate::errors::go_quote(signer)
                ),
            }],
        })
    }
}

const PCRS: &str = "podcertificaterequests";

/// The stored request, when `write` updates its `subresource`.
fn csr_update<'a>(write: &'a Attributes, subresource: &str) -> Option<&'a Value> {
    update_of(write, CSRS, subresource)
}

/// The stored object, when `write` updates `resource`'s `subresource`.
fn update_of<'a>(write: &'a Attributes, resource: &str, subresource: &str) -> Option<&'a Value> {
    let ours = write.resource.group == GROUP
        && write.resource.resource == resource
        && write.subresource.as_deref() == Some(subresource)
        && write.operation == Operation::Update;
    ours.then_some(write.old_object.as_ref()).flatten()
}

/// kube's IsAuthorizedForSignerName: `verb` on the signer, or on its domain's wildcard.
fn allowed(
    permissions: &PermissionsLookup,
    write: &Attributes,
    verb: &str,
    signer: &str,
) -> Result<bool, ApiError> {
    let domain = signer.split('/').next().unwrap_or_default();
    let permissions = permissions.get().ok_or_else(|| ApiError::Internal("no authorizer yet".into()))?;
    let allowed = |name: &str| permissions.allows(&write.user, verb, GROUP, "signers", name);
    Ok(allowed(signer) || allowed(&format!("{domain}/*")))
}

/// A CertificateSigningRequest's approval or signing, refused unless `verb` is allowed.
fn check(
    permissions: &PermissionsLookup,
    write: &Attributes,
    verb: &str,
    csr: &Value,
) -> Result<(), ApiError> {
    let signer = csr["spec"]["signerName"].as_str().unwrap_or_default();
    if allowed(permissions, write, verb, signer)? {
        return Ok(());
    }
    Err(ApiError::ForbiddenFor {
        qualified: format!("{CSRS}.{GROUP}"),
        name: write.name.clone(),
        why: format!(
            "user not permitted to {verb} requests with signerName {}",
            crate::errors::go_quote(signer)
        ),
        causes: Vec::new(),
    })
}
