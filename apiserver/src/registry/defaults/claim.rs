//! kube's defaults of a PersistentVolumeClaim, wherever one is written:
//! the kind itself, a StatefulSet's claim templates, a pod's ephemeral
//! volume (its spec only).

use serde_json::{Value, json};

use super::{object_at, pointer, string};

/// A claim (`SetDefaults_PersistentVolumeClaim`, then its spec's): its
/// status is a Go value struct, so even a template's reads `Pending`.
pub fn claim(claim: &mut Value) {
    if let Some(claim_spec) = object_at(claim, "spec") {
        spec(claim_spec);
    }
    if let Some(status) = object_at(claim, "status") {
        string(status, "phase", "Pending");
    }
}

/// A claim's spec (`SetDefaults_PersistentVolumeClaimSpec`).
pub fn spec(spec: &mut Value) {
    pointer(spec, "volumeMode", json!("Filesystem"));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claim_is_a_pending_filesystem() {
        let mut c = json!({"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"]}});
        claim(&mut c);
        assert_eq!(c["spec"]["volumeMode"], "Filesystem");
        assert_eq!(c["status"], json!({"phase": "Pending"}));
        let mut block = json!({"spec": {"volumeMode": "Block"}, "status": {"phase": "Bound"}});
        claim(&mut block);
        assert_eq!(block, json!({"spec": {"volumeMode": "Block"}, "status": {"phase": "Bound"}}));
    }
}
