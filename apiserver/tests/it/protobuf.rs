//! Protobuf answers, as kube-controller-manager, kube-scheduler and kubelet ask for them
//! (`Accept: application/vnd.kubernetes.protobuf, application/json`): for one object of every
//! built-in kind rtcd writes in protobuf, the get, list and watch answers are decoded with
//! kube's own protobuf definitions (the k8s-pb crate, generated from kube's `generated.proto`
//! files) and must be the JSON answers' objects. What kube's types read is turned back into JSON
//! by rtcd's request decoder, whose own tests compare it with bodies captured from kubectl.

use k8s_pb::api::admissionregistration::v1 as admissionregistration;
use k8s_pb::api::apps::v1 as apps;
use k8s_pb::api::autoscaling::{v1 as autoscaling_v1, v2 as autoscaling_v2};
use k8s_pb::api::batch::v1 as batch;
use k8s_pb::api::certificates::v1 as certificates;
use k8s_pb::api::coordination::v1 as coordination;
use k8s_pb::api::core::v1 as core;
use k8s_pb::api::discovery::v1 as discovery;
use k8s_pb::api::events::v1 as events;
use k8s_pb::api::networking::v1 as networking;
use k8s_pb::api::node::v1 as node;
use k8s_pb::api::policy::v1 as policy;
use k8s_pb::api::rbac::v1 as rbac;
use k8s_pb::api::resource::v1 as resource;
use k8s_pb::api::scheduling::v1 as scheduling;
use k8s_pb::api::storage::v1 as storage;
use k8s_pb::apimachinery::pkg::apis::meta::v1 as meta;
use k8s_pb::apimachinery::pkg::runtime::{TypeMeta, Unknown};
use prost::Message as _;
use serde_json::{Value, json};

use crate::common::{ApiServer, Backend, get_bytes as get};

const PROTOBUF_FIRST: &str = "application/vnd.kubernetes.protobuf, application/json";

/// One object of each kind, as an install manifest would carry them.
const MANIFEST: &str = r#"
apiVersion: v1
kind: Namespace
metadata: {name: pb, labels: {team: storage}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: pb, annotations: {note: ""}}
data: {mode: fast, empty: ""}
binaryData: {blob: AAEC/w==}
---
apiVersion: v1
kind: Secret
metadata: {name: creds, namespace: pb}
type: Opaque
data: {password: c2VjcmV0}
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: robot, namespace: pb}
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: pb}
spec:
  type: LoadBalancer
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: http}, {name: dns, port: 53, protocol: UDP, targetPort: 5353}]
---
apiVersion: v1
kind: Endpoints
metadata: {name: web, namespace: pb}
subsets: [{addresses: [{ip: 10.0.0.7}], ports: [{name: http, port: 8080}]}]
---
apiVersion: v1
kind: Pod
metadata: {name: web-0, namespace: pb, labels: {app: web}}
spec:
  serviceAccountName: robot
  containers:
  - name: web
    image: nginx:1.27
    ports: [{name: http, containerPort: 8080}]
    resources: {limits: {cpu: 500m, memory: 128Mi}}
    readinessProbe: {httpGet: {path: /healthz, port: http}}
    env: [{name: POD, valueFrom: {fieldRef: {fieldPath: metadata.name}}}]
  volumes: [{name: cache, emptyDir: {sizeLimit: 1Gi}}, {name: settings, configMap: {name: settings}}]
---
apiVersion: v1
kind: Event
metadata: {name: web-0.1, namespace: pb}
involvedObject: {kind: Pod, name: web-0, namespace: pb}
reason: Scheduled
message: assigned pb/web-0
type: Normal
count: 1
---
apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
spec: {podCIDR: 10.244.0.0/24, taints: [{key: dedicated, value: db, effect: NoSchedule}]}
---
apiVersion: v1
kind: LimitRange
metadata: {name: limits, namespace: pb}
spec: {limits: [{type: Container, max: {cpu: "2"}}]}
---
apiVersion: v1
kind: PodTemplate
metadata: {name: worker, namespace: pb}
template: {metadata: {labels: {app: worker}}, spec: {containers: [{name: w, image: busybox:1.36}]}}
---
apiVersion: v1
kind: ReplicationController
metadata: {name: legacy, namespace: pb}
spec: {replicas: 0, template: {metadata: {labels: {app: legacy}}, spec: {containers: [{name: c, image: busybox}]}}}
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv-pb}
spec: {capacity: {storage: 5Gi}, accessModes: [ReadWriteOnce], hostPath: {path: /data}}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: pb}
spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: pb}
spec:
  replicas: 0
  selector: {matchLabels: {app: web}}
  template: {metadata: {labels: {app: web}}, spec: {containers: [{name: web, image: nginx}]}}
---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: web-1, namespace: pb}
spec:
  replicas: 0
  selector: {matchLabels: {app: web, rs: "1"}}
  template: {metadata: {labels: {app: web, rs: "1"}}, spec: {containers: [{name: web, image: nginx}]}}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: pb}
spec:
  replicas: 0
  serviceName: db
  selector: {matchLabels: {app: db}}
  template: {metadata: {labels: {app: db}}, spec: {containers: [{name: db, image: postgres:17}]}}
  volumeClaimTemplates: [{metadata: {name: data}, spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}}]
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: pb}
spec:
  selector: {matchLabels: {app: agent}}
  template: {metadata: {labels: {app: agent}}, spec: {containers: [{name: a, image: busybox}]}}
---
apiVersion: apps/v1
kind: ControllerRevision
metadata: {name: db-7d9, namespace: pb}
revision: 2
data: {spec: {template: {metadata: {labels: {app: db}}}}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: once, namespace: pb}
spec: {suspend: true, template: {spec: {restartPolicy: Never, containers: [{name: j, image: busybox}]}}}
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly, namespace: pb}
spec:
  schedule: "0 3 * * *"
  jobTemplate: {spec: {template: {spec: {restartPolicy: OnFailure, containers: [{name: j, image: busybox}]}}}}
---
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: leader, namespace: pb}
spec: {holderIdentity: n1, leaseDurationSeconds: 15, acquireTime: "2026-01-02T03:04:05.123456Z"}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web, namespace: pb}
spec: {minAvailable: 50%, selector: {matchLabels: {app: web}}}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: pb-high}
value: 1000
description: for the protobuf test
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: reader, namespace: pb}
rules: [{apiGroups: [""], resources: [pods], verbs: [get, list]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: reader, namespace: pb}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: reader}
subjects: [{kind: ServiceAccount, name: robot, namespace: pb}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: pb-reader}
rules: [{nonResourceURLs: [/healthz], verbs: [get]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: pb-reader}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: pb-reader}
subjects: [{kind: Group, name: pb-readers, apiGroup: rbac.authorization.k8s.io}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: pb-hook}
webhooks:
- name: widgets.example.com
  clientConfig: {url: "https://hooks.example.com/validate"}
  rules: [{apiGroups: [example.com], apiVersions: [v1], operations: [CREATE], resources: [widgets]}]
  sideEffects: None
  admissionReviewVersions: [v1]
  failurePolicy: Ignore
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: pb-hook}
webhooks:
- name: widgets.example.com
  clientConfig: {url: "https://hooks.example.com/mutate"}
  rules: [{apiGroups: [example.com], apiVersions: [v1], operations: [CREATE], resources: [widgets]}]
  sideEffects: None
  admissionReviewVersions: [v1]
  failurePolicy: Ignore
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: pb-policy}
spec:
  matchConstraints: {resourceRules: [{apiGroups: [example.com], apiVersions: [v1], operations: [CREATE], resources: [widgets]}]}
  validations: [{expression: "object.metadata.name != 'bad'"}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: pb-policy}
spec: {policyName: pb-policy, validationActions: [Deny]}
---
apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: pb-nginx}
spec: {controller: k8s.io/ingress-nginx}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web, namespace: pb}
spec:
  ingressClassName: pb-nginx
  rules: [{host: web.example.com, http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}}]
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: db, namespace: pb}
spec: {podSelector: {matchLabels: {app: db}}, ingress: [{ports: [{port: 5432}]}]}
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: pb-fast}
provisioner: ebs.csi.aws.com
parameters: {type: gp3}
---
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata: {name: pb.csi.example.com}
spec: {attachRequired: false}
---
apiVersion: storage.k8s.io/v1
kind: CSINode
metadata: {name: n1}
spec: {drivers: [{name: pb.csi.example.com, nodeID: n1}]}
---
apiVersion: storage.k8s.io/v1
kind: VolumeAttachment
metadata: {name: pb-attach}
spec: {attacher: pb.csi.example.com, nodeName: n1, source: {persistentVolumeName: pv-pb}}
---
apiVersion: storage.k8s.io/v1
kind: VolumeAttributesClass
metadata: {name: pb-gold}
driverName: pb.csi.example.com
parameters: {iops: "6000"}
---
apiVersion: storage.k8s.io/v1
kind: CSIStorageCapacity
metadata: {name: csisc-pb, namespace: pb}
storageClassName: pb-fast
nodeTopology: {matchLabels: {topology.kubernetes.io/zone: a}}
capacity: 100Gi
---
apiVersion: certificates.k8s.io/v1
kind: CertificateSigningRequest
metadata: {name: pb-csr}
spec:
  signerName: example.com/pb
  usages: [client auth]
  request: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURSBSRVFVRVNULS0tLS0KTUlISU1IQUNBUUF3RGpFTU1Bb0dBMVVFQXd3RFltOWlNRmt3RXdZSEtvWkl6ajBDQVFZSUtvWkl6ajBEQVFjRApRZ0FFSUdIOEdoWWwrZEVIYVVVQy83d2dsWk5KKzdibDR1bmNXb0dUUmRON1YrZUg0dnJaSll5VklDdldlUHlpCjRyakFRSGxHdTJTdGpaOFVKZFFEUVlHNmE2QUFNQW9HQ0NxR1NNNDlCQU1DQTBnQU1FVUNJRmtqMjVPQzRjY2wKTE9nTC9Bd2JhT0FzRDU3bGJyZXQwZ1pOR251MXhsMnRBaUVBditTOEFRekY2Ym1RNEFXYTZyQlJJMzFrQ2RvSwpMTy9pc0hoY1FJTTIxS3c9Ci0tLS0tRU5EIENFUlRJRklDQVRFIFJFUVVFU1QtLS0tLQo=
---
apiVersion: events.k8s.io/v1
kind: Event
metadata: {name: web.2, namespace: pb}
eventTime: "2026-01-02T03:04:05.123456Z"
series: {count: 2, lastObservedTime: "2026-01-02T03:05:05.000001Z"}
reportingController: example.com/pb
reportingInstance: pb-0
action: Scaling
reason: Scaled
type: Normal
note: scaled
regarding: {kind: Deployment, name: web, namespace: pb}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web, namespace: pb}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  maxReplicas: 4
  metrics: [{type: Resource, resource: {name: memory, target: {type: AverageValue, averageValue: 500Mi}}}]
  behavior: {scaleUp: {stabilizationWindowSeconds: 30}}
---
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: pb-gvisor}
handler: runsc
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: web-abc12, namespace: pb, labels: {kubernetes.io/service-name: web}}
addressType: IPv4
ports: [{name: http, port: 8080}]
endpoints: [{addresses: [10.0.0.7], conditions: {ready: true}}]
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: pb.example.com}
spec:
  selectors: [{cel: {expression: 'device.driver == "pb.example.com"'}}]
  config: [{opaque: {driver: pb.example.com, parameters: {mode: shared}}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: gpu, namespace: pb}
spec:
  metadata: {labels: {app: web}}
  spec:
    devices:
      requests: [{name: gpu, exactly: {deviceClassName: pb.example.com, count: 2}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: gpu, namespace: pb}
spec:
  devices:
    requests:
    - name: gpu
      firstAvailable:
      - {name: big, deviceClassName: pb.example.com, selectors: [{cel: {expression: 'device.capacity["pb.example.com"].memory.compareTo(quantity("40Gi")) >= 0'}}]}
      - {name: small, deviceClassName: pb.example.com, allocationMode: All, tolerations: [{key: flaky, operator: Exists, effect: NoSchedule}]}
    - name: nic
      exactly: {deviceClassName: pb.example.com, allocationMode: ExactCount, count: 1}
    constraints: [{requests: [gpu, nic], matchAttribute: pb.example.com/numa}]
    config: [{requests: [nic], opaque: {driver: pb.example.com, parameters: {mtu: 9000}}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n1-pb.example.com}
spec:
  driver: pb.example.com
  nodeName: n1
  pool: {name: n1, generation: 1, resourceSliceCount: 1}
  devices:
  - name: gpu-0
    attributes:
      model: {string: A100}
      pb.example.com/numa: {int: 0}
      ecc: {bool: true}
      driverVersion: {version: 1.2.3}
    capacity:
      memory: {value: 40Gi}
---
apiVersion: networking.k8s.io/v1
kind: IPAddress
metadata: {name: 192.168.5.5}
spec: {parentRef: {group: gateway.networking.k8s.io, resource: gateways, namespace: pb, name: edge}}
---
apiVersion: networking.k8s.io/v1
kind: ServiceCIDR
metadata: {name: pb-extra}
spec: {cidrs: [10.200.0.0/16, "fd00:200::/112"]}
---
apiVersion: v1
kind: ResourceQuota
metadata: {name: quota, namespace: pb}
spec: {hard: {pods: "10"}}
"#;

/// A message's bytes as kube's types read them, written again: what a Go client holds.
type Reencode = fn(&[u8]) -> Vec<u8>;
/// A list read with kube's types: its resourceVersion and its items, each written again.
type ReadList = fn(&[u8]) -> (String, Vec<Vec<u8>>);

/// A kind: its apiVersion and Kind, where its objects are, which one the manifest made, and
/// kube's message types for it and its list.
struct Kind {
    api_version: &'static str,
    kind: &'static str,
    collection: &'static str,
    name: &'static str,
    object: Reencode,
    list: ReadList,
}

macro_rules! kind {
    ($api_version:literal, $kind:literal, $collection:literal, $name:literal, $message:ty, $list:ty) => {
        Kind {
            api_version: $api_version,
            kind: $kind,
            collection: $collection,
            name: $name,
            object: |raw| <$message>::decode(raw).expect(concat!($kind, " decodes")).encode_to_vec(),
            list: |raw| {
                let list = <$list>::decode(raw).expect(concat!($kind, "List decodes"));
                let rv = list.metadata.and_then(|m| m.resource_version).unwrap_or_default();
                (rv, list.items.iter().map(|item| item.encode_to_vec()).collect())
            },
        }
    };
}

fn kinds() -> Vec<Kind> {
    vec![
        kind!("v1", "Namespace", "/api/v1/namespaces", "pb", core::Namespace, core::NamespaceList),
        kind!(
            "v1",
            "ConfigMap",
            "/api/v1/namespaces/pb/configmaps",
            "settings",
            core::ConfigMap,
            core::ConfigMapList
        ),
        kind!("v1", "Secret", "/api/v1/namespaces/pb/secrets", "creds", core::Secret, core::SecretList),
        kind!(
            "v1",
            "ServiceAccount",
            "/api/v1/namespaces/pb/serviceaccounts",
            "robot",
            core::ServiceAccount,
            core::ServiceAccountList
        ),
        kind!("v1", "Service", "/api/v1/namespaces/pb/services", "web", core::Service, core::ServiceList),
        kind!(
            "v1",
            "Endpoints",
            "/api/v1/namespaces/pb/endpoints",
            "web",
            core::Endpoints,
            core::EndpointsList
        ),
        kind!("v1", "Pod", "/api/v1/namespaces/pb/pods", "web-0", core::Pod, core::PodList),
        kind!("v1", "Event", "/api/v1/namespaces/pb/events", "web-0.1", core::Event, core::EventList),
        kind!("v1", "Node", "/api/v1/nodes", "n1", core::Node, core::NodeList),
        kind!(
            "v1",
            "LimitRange",
            "/api/v1/namespaces/pb/limitranges",
            "limits",
            core::LimitRange,
            core::LimitRangeList
        ),
        kind!(
            "v1",
            "ResourceQuota",
            "/api/v1/namespaces/pb/resourcequotas",
            "quota",
            core::ResourceQuota,
            core::ResourceQuotaList
        ),
        kind!(
            "v1",
            "PodTemplate",
            "/api/v1/namespaces/pb/podtemplates",
            "worker",
            core::PodTemplate,
            core::PodTemplateList
        ),
        kind!(
            "v1",
            "ReplicationController",
            "/api/v1/namespaces/pb/replicationcontrollers",
            "legacy",
            core::ReplicationController,
            core::ReplicationControllerList
        ),
        kind!(
            "v1",
            "PersistentVolume",
            "/api/v1/persistentvolumes",
            "pv-pb",
            core::PersistentVolume,
            core::PersistentVolumeList
        ),
        kind!(
            "v1",
            "PersistentVolumeClaim",
            "/api/v1/namespaces/pb/persistentvolumeclaims",
            "data",
            core::PersistentVolumeClaim,
            core::PersistentVolumeClaimList
        ),
        kind!(
            "apps/v1",
            "Deployment",
            "/apis/apps/v1/namespaces/pb/deployments",
            "web",
            apps::Deployment,
            apps::DeploymentList
        ),
        kind!(
            "apps/v1",
            "ReplicaSet",
            "/apis/apps/v1/namespaces/pb/replicasets",
            "web-1",
            apps::ReplicaSet,
            apps::ReplicaSetList
        ),
        kind!(
            "apps/v1",
            "StatefulSet",
            "/apis/apps/v1/namespaces/pb/statefulsets",
            "db",
            apps::StatefulSet,
            apps::StatefulSetList
        ),
        kind!(
            "apps/v1",
            "DaemonSet",
            "/apis/apps/v1/namespaces/pb/daemonsets",
            "agent",
            apps::DaemonSet,
            apps::DaemonSetList
        ),
        kind!(
            "apps/v1",
            "ControllerRevision",
            "/apis/apps/v1/namespaces/pb/controllerrevisions",
            "db-7d9",
            apps::ControllerRevision,
            apps::ControllerRevisionList
        ),
        kind!("batch/v1", "Job", "/apis/batch/v1/namespaces/pb/jobs", "once", batch::Job, batch::JobList),
        kind!(
            "batch/v1",
            "CronJob",
            "/apis/batch/v1/namespaces/pb/cronjobs",
            "nightly",
            batch::CronJob,
            batch::CronJobList
        ),
        kind!(
            "coordination.k8s.io/v1",
            "Lease",
            "/apis/coordination.k8s.io/v1/namespaces/pb/leases",
            "leader",
            coordination::Lease,
            coordination::LeaseList
        ),
        kind!(
            "policy/v1",
            "PodDisruptionBudget",
            "/apis/policy/v1/namespaces/pb/poddisruptionbudgets",
            "web",
            policy::PodDisruptionBudget,
            policy::PodDisruptionBudgetList
        ),
        kind!(
            "scheduling.k8s.io/v1",
            "PriorityClass",
            "/apis/scheduling.k8s.io/v1/priorityclasses",
            "pb-high",
            scheduling::PriorityClass,
            scheduling::PriorityClassList
        ),
        kind!(
            "rbac.authorization.k8s.io/v1",
            "Role",
            "/apis/rbac.authorization.k8s.io/v1/namespaces/pb/roles",
            "reader",
            rbac::Role,
            rbac::RoleList
        ),
        kind!(
            "rbac.authorization.k8s.io/v1",
            "RoleBinding",
            "/apis/rbac.authorization.k8s.io/v1/namespaces/pb/rolebindings",
            "reader",
            rbac::RoleBinding,
            rbac::RoleBindingList
        ),
        kind!(
            "rbac.authorization.k8s.io/v1",
            "ClusterRole",
            "/apis/rbac.authorization.k8s.io/v1/clusterroles",
            "pb-reader",
            rbac::ClusterRole,
            rbac::ClusterRoleList
        ),
        kind!(
            "rbac.authorization.k8s.io/v1",
            "ClusterRoleBinding",
            "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
            "pb-reader",
            rbac::ClusterRoleBinding,
            rbac::ClusterRoleBindingList
        ),
        kind!(
            "admissionregistration.k8s.io/v1",
            "ValidatingWebhookConfiguration",
            "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
            "pb-hook",
            admissionregistration::ValidatingWebhookConfiguration,
            admissionregistration::ValidatingWebhookConfigurationList
        ),
        kind!(
            "admissionregistration.k8s.io/v1",
            "MutatingWebhookConfiguration",
            "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations",
            "pb-hook",
            admissionregistration::MutatingWebhookConfiguration,
            admissionregistration::MutatingWebhookConfigurationList
        ),
        kind!(
            "admissionregistration.k8s.io/v1",
            "ValidatingAdmissionPolicy",
            "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies",
            "pb-policy",
            admissionregistration::ValidatingAdmissionPolicy,
            admissionregistration::ValidatingAdmissionPolicyList
        ),
        kind!(
            "admissionregistration.k8s.io/v1",
            "ValidatingAdmissionPolicyBinding",
            "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings",
            "pb-policy",
            admissionregistration::ValidatingAdmissionPolicyBinding,
            admissionregistration::ValidatingAdmissionPolicyBindingList
        ),
        kind!(
            "networking.k8s.io/v1",
            "IngressClass",
            "/apis/networking.k8s.io/v1/ingressclasses",
            "pb-nginx",
            networking::IngressClass,
            networking::IngressClassList
        ),
        kind!(
            "networking.k8s.io/v1",
            "Ingress",
            "/apis/networking.k8s.io/v1/namespaces/pb/ingresses",
            "web",
            networking::Ingress,
            networking::IngressList
        ),
        kind!(
            "networking.k8s.io/v1",
            "NetworkPolicy",
            "/apis/networking.k8s.io/v1/namespaces/pb/networkpolicies",
            "db",
            networking::NetworkPolicy,
            networking::NetworkPolicyList
        ),
        kind!(
            "storage.k8s.io/v1",
            "StorageClass",
            "/apis/storage.k8s.io/v1/storageclasses",
            "pb-fast",
            storage::StorageClass,
            storage::StorageClassList
        ),
        kind!(
            "storage.k8s.io/v1",
            "CSIDriver",
            "/apis/storage.k8s.io/v1/csidrivers",
            "pb.csi.example.com",
            storage::CSIDriver,
            storage::CSIDriverList
        ),
        kind!(
            "storage.k8s.io/v1",
            "CSINode",
            "/apis/storage.k8s.io/v1/csinodes",
            "n1",
            storage::CSINode,
            storage::CSINodeList
        ),
        kind!(
            "storage.k8s.io/v1",
            "VolumeAttachment",
            "/apis/storage.k8s.io/v1/volumeattachments",
            "pb-attach",
            storage::VolumeAttachment,
            storage::VolumeAttachmentList
        ),
        kind!(
            "storage.k8s.io/v1",
            "VolumeAttributesClass",
            "/apis/storage.k8s.io/v1/volumeattributesclasses",
            "pb-gold",
            storage::VolumeAttributesClass,
            storage::VolumeAttributesClassList
        ),
        kind!(
            "storage.k8s.io/v1",
            "CSIStorageCapacity",
            "/apis/storage.k8s.io/v1/namespaces/pb/csistoragecapacities",
            "csisc-pb",
            storage::CSIStorageCapacity,
            storage::CSIStorageCapacityList
        ),
        kind!(
            "certificates.k8s.io/v1",
            "CertificateSigningRequest",
            "/apis/certificates.k8s.io/v1/certificatesigningrequests",
            "pb-csr",
            certificates::CertificateSigningRequest,
            certificates::CertificateSigningRequestList
        ),
        kind!(
            "events.k8s.io/v1",
            "Event",
            "/apis/events.k8s.io/v1/namespaces/pb/events",
            "web.2",
            events::Event,
            events::EventList
        ),
        kind!(
            "autoscaling/v2",
            "HorizontalPodAutoscaler",
            "/apis/autoscaling/v2/namespaces/pb/horizontalpodautoscalers",
            "web",
            autoscaling_v2::HorizontalPodAutoscaler,
            autoscaling_v2::HorizontalPodAutoscalerList
        ),
        kind!(
            "autoscaling/v1",
            "HorizontalPodAutoscaler",
            "/apis/autoscaling/v1/namespaces/pb/horizontalpodautoscalers",
            "web",
            autoscaling_v1::HorizontalPodAutoscaler,
            autoscaling_v1::HorizontalPodAutoscalerList
        ),
        kind!(
            "node.k8s.io/v1",
            "RuntimeClass",
            "/apis/node.k8s.io/v1/runtimeclasses",
            "pb-gvisor",
            node::RuntimeClass,
            node::RuntimeClassList
        ),
        kind!(
            "discovery.k8s.io/v1",
            "EndpointSlice",
            "/apis/discovery.k8s.io/v1/namespaces/pb/endpointslices",
            "web-abc12",
            discovery::EndpointSlice,
            discovery::EndpointSliceList
        ),
        kind!(
            "networking.k8s.io/v1",
            "IPAddress",
            "/apis/networking.k8s.io/v1/ipaddresses",
            "192.168.5.5",
            networking::IPAddress,
            networking::IPAddressList
        ),
        kind!(
            "networking.k8s.io/v1",
            "ServiceCIDR",
            "/apis/networking.k8s.io/v1/servicecidrs",
            "pb-extra",
            networking::ServiceCIDR,
            networking::ServiceCIDRList
        ),
        kind!(
            "resource.k8s.io/v1",
            "DeviceClass",
            "/apis/resource.k8s.io/v1/deviceclasses",
            "pb.example.com",
            resource::DeviceClass,
            resource::DeviceClassList
        ),
        kind!(
            "resource.k8s.io/v1",
            "ResourceClaimTemplate",
            "/apis/resource.k8s.io/v1/namespaces/pb/resourceclaimtemplates",
            "gpu",
            resource::ResourceClaimTemplate,
            resource::ResourceClaimTemplateList
        ),
        kind!(
            "resource.k8s.io/v1",
            "ResourceClaim",
            "/apis/resource.k8s.io/v1/namespaces/pb/resourceclaims",
            "gpu",
            resource::ResourceClaim,
            resource::ResourceClaimList
        ),
        kind!(
            "resource.k8s.io/v1",
            "ResourceSlice",
            "/apis/resource.k8s.io/v1/resourceslices",
            "n1-pb.example.com",
            resource::ResourceSlice,
            resource::ResourceSliceList
        ),
    ]
}

/// The envelope of a protobuf body: its typeMeta and raw message.
fn unwrap(body: &[u8]) -> (TypeMeta, Vec<u8>) {
    let envelope = body.strip_prefix(b"k8s\0").expect("the protobuf magic");
    let unknown = Unknown::decode(envelope).expect("a runtime.Unknown envelope");
    (unknown.type_meta.unwrap_or_default(), unknown.raw.unwrap_or_default())
}

/// A message as a Go client read it, back in JSON (rtcd's request decoder: what kubectl would
/// send for that Go object).
fn as_json(kind: &Kind, raw: Vec<u8>) -> Value {
    let unknown = Unknown {
        type_meta: Some(TypeMeta {
            api_version: Some(kind.api_version.into()),
            kind: Some(kind.kind.into()),
        }),
        raw: Some(raw),
        content_encoding: Some(String::new()),
        content_type: Some(String::new()),
    };
    let mut body = b"k8s\0".to_vec();
    body.extend(unknown.encode_to_vec());
    rtcd_apiserver::protobuf::decode(&body).unwrap_or_else(|e| panic!("{}: {e}", kind.kind))
}

async fn json_get(addr: &str, path: &str) -> Value {
    let (code, _, body) = get(addr, path, "application/json").await;
    assert_eq!(code, 200, "{path}: {}", String::from_utf8_lossy(&body));
    serde_json::from_slice(&body).unwrap()
}

/// The Go object a JSON answer decodes to, written back as Go's encoding/json writes it: a
/// value field rtcd's JSON leaves out (an Event's `reportingComponent`) is Go's zero either way,
/// and Go writes it.
fn as_go_reads_it(object: &Value) -> Value {
    let body = rtcd_apiserver::protobuf::encode::body(object).expect("the JSON answer encodes");
    rtcd_apiserver::protobuf::decode(&body).expect("and decodes")
}

/// Get, list and watch of one kind in protobuf, each equal to its JSON answer.
async fn answers_in_protobuf(addr: &str, kind: &Kind) {
    let path = format!("{}/{}", kind.collection, kind.name);
    let json_answer = json_get(addr, &path).await;
    let json_object = as_go_reads_it(&json_answer);

    let (code, content_type, body) = get(addr, &path, PROTOBUF_FIRST).await;
    assert_eq!(
        (code, content_type.as_str()),
        (200, "application/vnd.kubernetes.protobuf"),
        "{path}: {:?}",
        rtcd_apiserver::protobuf::encode::body(&json_answer).err()
    );
    let (type_meta, raw) = unwrap(&body);
    assert_eq!(
        (type_meta.api_version.as_deref(), type_meta.kind.as_deref()),
        (Some(kind.api_version), Some(kind.kind))
    );
    let mut object = as_json(kind, (kind.object)(&raw));
    assert_eq!(object, json_object, "{} read in protobuf by kube's types", kind.kind);

    // A list of one (by field selector), in its own List message.
    let selector = format!("fieldSelector=metadata.name%3D{}", kind.name);
    let list_path = format!("{}?{selector}", kind.collection);
    let json_list = json_get(addr, &list_path).await;
    let (code, _, body) = get(addr, &list_path, PROTOBUF_FIRST).await;
    assert_eq!(code, 200, "{list_path}");
    let (type_meta, raw) = unwrap(&body);
    assert_eq!(type_meta.kind.as_deref(), Some(format!("{}List", kind.kind).as_str()));
    let (resource_version, items) = (kind.list)(&raw);
    assert_eq!(Value::from(resource_version), json_list["metadata"]["resourceVersion"], "{list_path}");
    let items: Vec<Value> = items.into_iter().map(|raw| as_json(kind, raw)).collect();
    let mut json_items = json_list["items"].as_array().cloned().unwrap_or_default();
    // List items carry no kind and apiVersion, as kube's (the list says
    // them); Go's decoder adds them.
    assert!(
        json_items.iter().all(|i| i.get("kind").is_none() && i.get("apiVersion").is_none()),
        "{} list items carry their type",
        kind.kind
    );
    for item in &mut json_items {
        item["kind"] = json!(kind.kind);
        item["apiVersion"] = json!(kind.api_version);
        *item = as_go_reads_it(item);
    }
    assert_eq!(items, json_items, "{} list", kind.kind);

    // A watch from the current state: the object as an ADDED event.
    let watch_path = format!("{}?watch=true&resourceVersion=0&{selector}", kind.collection);
    let (content_type, event) = first_watch_event(addr, &watch_path).await;
    assert_eq!(content_type, "application/vnd.kubernetes.protobuf;stream=watch", "{watch_path}");
    assert_eq!(event.r#type.as_deref(), Some("ADDED"));
    let (_, raw) = unwrap(event.object.as_ref().and_then(|o| o.raw.as_deref()).unwrap_or_default());
    object = as_json(kind, (kind.object)(&raw));
    assert_eq!(object, json_object, "{} watched in protobuf", kind.kind);
}

/// Opens a protobuf watch: its Content-Type and its first WatchEvent (a 4-byte big-endian
/// length, then the event).
async fn first_watch_event(addr: &str, path: &str) -> (String, meta::WatchEvent) {
    use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let head = format!("GET {path} HTTP/1.0\r\nHost: {addr}\r\nAccept: {PROTOBUF_FIRST}\r\n\r\n");
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut reader = tokio::io::BufReader::new(stream);
    let (mut line, mut content_type) = (String::new(), String::new());
    loop {
        line.clear();
        reader.read_line(&mut line).await.unwrap();
        if line.starts_with("HTTP/") {
            assert!(line.contains(" 200 "), "{path}: {line}");
        }
        if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-type:") {
            content_type = value.trim().to_owned();
        }
        if line == "\r\n" || line.is_empty() {
            break;
        }
    }
    let read = async {
        let length = reader.read_u32().await.unwrap() as usize;
        let mut event = vec![0; length];
        reader.read_exact(&mut event).await.unwrap();
        event
    };
    let event = tokio::time::timeout(std::time::Duration::from_secs(20), read).await.expect("an event");
    (content_type, meta::WatchEvent::decode(event.as_slice()).expect("a WatchEvent"))
}

/// Metadata informers (kube's garbage collector) list and watch PartialObjectMetadata; deletes
/// answer a Status; custom resources, which have no protobuf form, answer JSON.
async fn metadata_status_and_fallback(api: &ApiServer) {
    let addr = api.url.trim_start_matches("http://");
    let accept = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";
    let (code, _, body) = get(addr, "/api/v1/namespaces/pb/pods", accept).await;
    assert_eq!(code, 200);
    let (type_meta, raw) = unwrap(&body);
    assert_eq!(
        (type_meta.api_version.as_deref(), type_meta.kind.as_deref()),
        (Some("meta.k8s.io/v1"), Some("PartialObjectMetadataList"))
    );
    let list = meta::PartialObjectMetadataList::decode(raw.as_slice()).unwrap();
    let names: Vec<_> = list
        .items
        .iter()
        .map(|i| i.metadata.as_ref().and_then(|m| m.name.clone()).unwrap_or_default())
        .collect();
    assert_eq!(names, ["web-0"]);
    assert_eq!(list.items[0].metadata.as_ref().unwrap().labels.get("app").map(String::as_str), Some("web"));

    let json_accept = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1";
    let (_, _, body) = get(addr, "/api/v1/namespaces/pb/pods/web-0", json_accept).await;
    let partial: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(
        (partial["kind"].as_str(), partial["metadata"]["name"].as_str(), partial.get("spec")),
        (Some("PartialObjectMetadata"), Some("web-0"), None)
    );

    // A delete kube answers with a Status, in protobuf.
    let (code, body) = protobuf_delete(addr, "/api/v1/namespaces/pb/configmaps/settings").await;
    assert_eq!(code, 200);
    let (type_meta, raw) = unwrap(&body);
    assert_eq!(type_meta.kind.as_deref(), Some("Status"));
    let status = meta::Status::decode(raw.as_slice()).unwrap();
    let details = status.details.unwrap_or_default();
    assert_eq!(
        (status.status.as_deref(), details.name.as_deref(), details.kind.as_deref()),
        (Some("Success"), Some("settings"), Some("configmaps"))
    );

    // A custom resource is written in JSON to a client that accepts both.
    api.ok_stdin(&["apply", "-f", "-"], CRD);
    api.ok(&["wait", "--for=condition=Established", "crd/widgets.example.com"]);
    api.ok_stdin(
        &["apply", "-f", "-"],
        "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: pb}\nsize: 3\n",
    );
    let (code, content_type, body) =
        get(addr, "/apis/example.com/v1/namespaces/pb/widgets/w", PROTOBUF_FIRST).await;
    assert_eq!((code, content_type.as_str()), (200, "application/json"));
    assert_eq!(serde_json::from_slice::<Value>(&body).unwrap()["size"], 3);
}

const CRD: &str = r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions:
  - name: v1
    served: true
    storage: true
    schema: {openAPIV3Schema: {type: object, properties: {size: {type: integer}}}}
"#;

async fn protobuf_delete(addr: &str, path: &str) -> (u16, Vec<u8>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let head = format!("DELETE {path} HTTP/1.0\r\nHost: {addr}\r\nAccept: {PROTOBUF_FIRST}\r\n\r\n");
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut response = Vec::new();
    stream.read_to_end(&mut response).await.unwrap();
    let split = response.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let code =
        String::from_utf8_lossy(&response[..split]).split_whitespace().nth(1).unwrap().parse().unwrap();
    (code, response[split + 4..].to_vec())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_built_in_kind_answers_in_protobuf() {
    let api = ApiServer::start(Backend::Rtcd).await;
    let out = api.ok_stdin(&["apply", "--server-side", "-f", "-"], MANIFEST);
    assert!(out.contains("resourcequota/quota serverside-applied"), "{out}");
    let addr = api.url.trim_start_matches("http://");
    for kind in kinds() {
        answers_in_protobuf(addr, &kind).await;
    }
    metadata_status_and_fallback(&api).await;
}
