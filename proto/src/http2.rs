//! The few facts of HTTP/2's framing (RFC 9113) that the connection
//! wrappers (`authority`, `pings`) read frames by.

/// What a client sends before its first frame.
pub(crate) const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
/// A frame's header: length (3 bytes), type, flags, stream (4 bytes).
pub(crate) const FRAME_HEADER: usize = 9;

pub(crate) const DATA: u8 = 0x0;
pub(crate) const HEADERS: u8 = 0x1;
pub(crate) const PING: u8 = 0x6;
pub(crate) const GOAWAY: u8 = 0x7;
pub(crate) const CONTINUATION: u8 = 0x9;
