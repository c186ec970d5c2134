//! Where one JSON value ends in a streamed request body (the gateway's
//! `/v3/watch` and `/v3/lease/keepalive` read one value after another),
//! looking at each byte once however the body is cut. Apart from the
//! gateway so the fuzz target can compile it alone.

/// Finds where the first JSON value of a growing buffer ends, resuming
/// where the last look stopped: strings (with their escapes) and the
/// nesting of objects and arrays are followed; a bare scalar ends at the
/// first byte that cannot continue it. What is found is not checked: the
/// decoder does that, once.
#[derive(Debug, Default)]
pub struct Framer {
    /// Bytes looked at so far.
    scanned: usize,
    started: bool,
    depth: usize,
    in_string: bool,
    escaped: bool,
    /// A top-level number, `true`, `false` or `null`.
    scalar: bool,
}

impl Framer {
    /// The end of the first value, once the buffer holds all of it.
    pub fn scan(&mut self, buffer: &[u8]) -> Option<usize> {
        while self.scanned < buffer.len() {
            let byte = buffer[self.scanned];
            self.scanned += 1;
            if self.in_string {
                match (self.escaped, byte) {
                    (true, _) => self.escaped = false,
                    (false, b'\\') => self.escaped = true,
                    (false, b'"') => {
                        self.in_string = false;
                        if self.depth == 0 {
                            return Some(self.scanned);
                        }
                    }
                    _ => {}
                }
                continue;
            }
            if self.scalar {
                if byte.is_ascii_alphanumeric() || matches!(byte, b'.' | b'-' | b'+') {
                    continue;
                }
                return Some(self.scanned - 1);
            }
            match byte {
                b if b.is_ascii_whitespace() && !self.started => {}
                b'"' => {
                    self.started = true;
                    self.in_string = true;
                }
                b'{' | b'[' => {
                    self.started = true;
                    self.depth += 1;
                }
                b'}' | b']' => {
                    self.depth = self.depth.saturating_sub(1);
                    if self.depth == 0 {
                        return Some(self.scanned);
                    }
                }
                _ if !self.started => {
                    self.started = true;
                    self.scalar = true;
                }
                _ => {}
            }
        }
        None
    }
}
