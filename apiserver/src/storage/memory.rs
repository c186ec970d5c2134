//! Placeholder: an in-memory Storage (being written).

/// An in-memory `Storage` (being written).
#[derive(Debug, Default)]
pub struct MemoryStorage;
