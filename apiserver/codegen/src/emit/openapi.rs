//! `apiserver/src/openapi/schemas/list_patch.rs`: the `x-kubernetes-patch-strategy`,
//! `-patch-merge-key`, `-list-type` and `-list-map-keys` extensions kube's OpenAPI documents
//! carry, for every field with patch facts in a schema the served documents contain.

use super::{header, lit, opt_lit};
use crate::model::{Model, PatchStrategy};

/// The output, relative to `apiserver/`.
pub const PATH: &str = "src/openapi/schemas/list_patch.rs";

pub fn emit(model: &Model) -> String {
    let mut out = header(
        "The patch metadata kube's OpenAPI schemas publish, per schema property: patchStrategy and\n\
         patchMergeKey from the struct tags, listType and listMapKey from the comment markers. Only\n\
         schemas of served kinds (`unserved` kinds are left out), and not those of structs that are\n\
         only ever embedded: their fields are listed under the schema they are embedded in.",
    );
    out.push_str(
        "use super::FieldPatchMetadata;\n\n\
         /// What `super::finish` adds to the schemas' properties.\n\
         pub(in crate::openapi) const LIST_PATCH_METADATA: &[FieldPatchMetadata] = &[\n",
    );
    let served = model.reachable(|kind| !kind.unserved);
    let embedded_only = model.embedded_only();
    for (m, message) in model.messages.iter().enumerate() {
        if !served[m] || embedded_only[m] {
            continue;
        }
        for field in model.json_fields(m).into_iter().filter(|f| f.has_patch_facts()) {
            let keys: Vec<String> = field.list_map_keys.iter().map(|k| lit(k)).collect();
            out.push_str(&format!(
                "    FieldPatchMetadata {{ schema: {}, property: {}, strategy: {}, merge_key: {}, list_type: {}, map_keys: &[{}] }},\n",
                lit(&message.openapi_name),
                lit(field.json_name()),
                opt_lit(field.patch_strategy.map(PatchStrategy::as_str)),
                opt_lit(field.patch_merge_key.as_deref()),
                opt_lit(field.list_type.map(|t| t.as_str())),
                keys.join(", ")
            ));
        }
    }
    out.push_str("];\n");
    out
}
