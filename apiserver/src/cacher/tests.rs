//! Unit tests of the watch cache and the read delegator (being written).
