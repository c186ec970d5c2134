//! Counting gRPC messages in a body as it streams past: each message is a
//! 5-byte prefix (compression flag, big-endian length) and its payload, and
//! a message can arrive split across any number of HTTP/2 data frames.

/// The gRPC length-prefix size.
const PREFIX: usize = 5;

/// Where the stream is: in a prefix (how much of it has been seen), or in
/// a payload (how much of it is still to come).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Position {
    Prefix { bytes: [u8; PREFIX], have: usize },
    Payload { len: usize, left: usize },
}

/// Follows the framing of one direction of one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MessageMeter {
    position: Position,
}

/// What one chunk completed: messages whose last byte it held, and the sum
/// of their payload sizes (what etcd counts as bytes: the marshalled
/// message, without the prefix).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Completed {
    pub messages: u64,
    pub payload_bytes: u64,
}

impl Default for MessageMeter {
    fn default() -> Self {
        MessageMeter { position: Position::Prefix { bytes: [0; PREFIX], have: 0 } }
    }
}

impl MessageMeter {
    /// Takes the next chunk of the body.
    pub fn feed(&mut self, mut data: &[u8]) -> Completed {
        let mut done = Completed::default();
        while !data.is_empty() {
            match &mut self.position {
                Position::Prefix { bytes, have } => {
                    let n = (PREFIX - *have).min(data.len());
                    bytes[*have..*have + n].copy_from_slice(&data[..n]);
                    *have += n;
                    data = &data[n..];
                    if *have == PREFIX {
                        let len = u32::from_be_bytes([bytes[1], bytes[2], bytes[3], bytes[4]]) as usize;
                        self.position = Position::Payload { len, left: len };
                        if len == 0 {
                            self.finish(&mut done, 0);
                        }
                    }
                }
                Position::Payload { len, left } => {
                    let n = (*left).min(data.len());
                    *left -= n;
                    data = &data[n..];
                    if *left == 0 {
                        let len = *len;
                        self.finish(&mut done, len);
                    }
                }
            }
        }
        done
    }

    fn finish(&mut self, done: &mut Completed, payload: usize) {
        done.messages += 1;
        done.payload_bytes += payload as u64;
        *self = MessageMeter::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(payload: &[u8]) -> Vec<u8> {
        let mut m = vec![0];
        m.extend((payload.len() as u32).to_be_bytes());
        m.extend(payload);
        m
    }

    #[test]
    fn messages_are_counted_once_however_the_body_is_split() {
        let body = [message(b"hello"), message(b""), message(&[7; 300])].concat();
        let whole = MessageMeter::default().feed(&body);
        assert_eq!(whole, Completed { messages: 3, payload_bytes: 305 });
        for split in 0..body.len() {
            let mut meter = MessageMeter::default();
            let (a, b) = (meter.feed(&body[..split]), meter.feed(&body[split..]));
            assert_eq!(a.messages + b.messages, 3, "split at {split}");
            assert_eq!(a.payload_bytes + b.payload_bytes, 305, "split at {split}");
        }
        let mut meter = MessageMeter::default();
        let bytewise = body.iter().map(|b| meter.feed(&[*b])).fold(0, |n, c| n + c.messages);
        assert_eq!(bytewise, 3);
    }

    #[test]
    fn a_message_is_counted_when_its_last_byte_arrives() {
        let body = message(b"abc");
        let mut meter = MessageMeter::default();
        assert_eq!(meter.feed(&body[..7]).messages, 0);
        assert_eq!(meter.feed(&body[7..]), Completed { messages: 1, payload_bytes: 3 });
    }
}
