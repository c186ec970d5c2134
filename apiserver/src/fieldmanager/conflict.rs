//! The 409 an apply gets when it would change fields other managers hold.

use super::fieldpath::{Path, Set};
use super::managed::Manager;
use crate::errors::{ApiError, Cause};

/// kube's apply conflict: one cause per conflicting field, and a message
/// that lists them by manager.
pub fn error(conflicts: &[(Manager, Set)]) -> ApiError {
    let mut all: Vec<(String, Path)> = Vec::new();
    for (manager, fields) in conflicts {
        let who = manager.describe();
        all.extend(fields.paths().into_iter().map(|p| (who.clone(), p)));
    }
    let causes = all
        .iter()
        .map(|(who, path)| Cause {
            reason: "FieldManagerConflict",
            field: path.to_string(),
            message: format!("conflict with {who}"),
        })
        .collect();
    ApiError::ApplyConflict { message: message(&all), causes }
}

/// One conflict on one line; several grouped under their managers, the
/// managers sorted.
fn message(all: &[(String, Path)]) -> String {
    if let [(who, path)] = all {
        return format!("Apply failed with 1 conflict: conflict with {who}: {path}");
    }
    let mut managers: Vec<&String> = all.iter().map(|(who, _)| who).collect();
    managers.sort();
    managers.dedup();
    let mut lines = Vec::new();
    for manager in managers {
        lines.push(format!("conflicts with {manager}:"));
        lines.extend(all.iter().filter(|(who, _)| who == manager).map(|(_, path)| format!("- {path}")));
    }
    format!("Apply failed with {} conflicts: {}", all.len(), lines.join("\n"))
}
