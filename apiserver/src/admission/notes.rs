//! What admission says beside its verdict (kube's warning recorder and
//! audit annotations): warnings for the client's `Warning` headers and
//! annotations for the request's audit event. Plugins and webhooks add
//! to them while a write runs, even one that ends refused; the endpoint
//! hands them on when it answers.

use std::sync::Mutex;

/// The audit level an annotation needs before the event keeps it (kube's
/// `AddAnnotationWithLevel`); plain annotations are kept at every level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum AnnotationLevel {
    Metadata,
    Request,
}

#[derive(Debug, Default)]
pub struct Notes {
    warnings: Mutex<Vec<String>>,
    annotations: Mutex<Vec<(String, String, AnnotationLevel)>>,
    /// The name a create's body gave its object, which the audit event's
    /// `objectRef` carries (the path names no object on a create).
    created_name: Mutex<Option<String>>,
}

impl Notes {
    /// A warning for the client; the same text twice is sent once.
    pub fn warn(&self, text: impl Into<String>) {
        let text = text.into();
        let mut warnings = lock(&self.warnings);
        if !warnings.contains(&text) {
            warnings.push(text);
        }
    }

    /// An annotation for the audit event; a later value for a key wins.
    pub fn annotate(&self, key: impl Into<String>, value: impl Into<String>) {
        self.annotate_at(AnnotationLevel::Metadata, key, value);
    }

    /// An annotation kept only when the request is audited at `level` or
    /// above.
    pub fn annotate_at(&self, level: AnnotationLevel, key: impl Into<String>, value: impl Into<String>) {
        let key = key.into();
        let mut annotations = lock(&self.annotations);
        annotations.retain(|(k, _, _)| *k != key);
        annotations.push((key, value.into(), level));
    }

    /// The name in a create's body (empty with generateName: not noted).
    pub fn note_created_name(&self, name: &str) {
        if !name.is_empty() {
            *lock(&self.created_name) = Some(name.to_string());
        }
    }

    pub fn created_name(&self) -> Option<String> {
        lock(&self.created_name).clone()
    }

    pub fn warnings(&self) -> Vec<String> {
        lock(&self.warnings).clone()
    }

    pub fn annotations(&self) -> Vec<(String, String, AnnotationLevel)> {
        lock(&self.annotations).clone()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warnings_keep_their_order_once_each_and_annotations_keep_the_last_value() {
        let notes = Notes::default();
        notes.warn("first");
        notes.warn("second");
        notes.warn("first");
        assert_eq!(notes.warnings(), ["first", "second"]);
        notes.annotate("a", "1");
        notes.annotate_at(AnnotationLevel::Request, "b", "2");
        notes.annotate("a", "3");
        assert_eq!(
            notes.annotations(),
            [
                ("b".into(), "2".into(), AnnotationLevel::Request),
                ("a".into(), "3".into(), AnnotationLevel::Metadata)
            ]
        );
    }
}
