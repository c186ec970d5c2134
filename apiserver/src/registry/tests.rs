//! Unit tests of the generic store and the strategies (being written).
