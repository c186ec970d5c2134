//! The cluster's certificates and kubeconfigs (`rtcd-pki`): being built for
//! the security issue.
