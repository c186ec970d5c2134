//! Auditing (audit.k8s.io/v1): being built for the security issue; until
//! then nothing is audited, as kube-apiserver without `--audit-policy-file`.
