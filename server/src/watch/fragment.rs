//! Splitting one large watch response into fragments for watchers created
//! with `fragment: true`, by etcd's rule: only responses of at least `limit`
//! bytes with two or more events are split; each fragment takes events until
//! the next would reach the limit (a single oversized event still goes out
//! alone); every fragment but the last has `fragment: true`.

use prost::Message;
use rtcd_proto::etcdserverpb::WatchResponse;

pub fn fragments(whole: WatchResponse, limit: usize) -> Vec<WatchResponse> {
    if whole.encoded_len() < limit || whole.events.len() < 2 {
        return vec![whole];
    }
    let mut shell = whole.clone();
    shell.events = Vec::new();
    shell.fragment = true;
    let mut out = Vec::new();
    let mut current = shell.clone();
    for event in whole.events {
        current.events.push(event);
        if current.events.len() > 1 && current.encoded_len() >= limit {
            let overflow = current.events.pop();
            out.push(std::mem::replace(&mut current, shell.clone()));
            current.events.extend(overflow);
        }
    }
    current.fragment = false;
    out.push(current);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use rtcd_proto::mvccpb::{Event, KeyValue};

    fn response(sizes: &[usize]) -> WatchResponse {
        let events = sizes
            .iter()
            .map(|&n| Event {
                kv: Some(KeyValue { value: Bytes::from(vec![b'x'; n]), ..Default::default() }),
                ..Default::default()
            })
            .collect();
        WatchResponse { watch_id: 7, events, ..Default::default() }
    }

    #[test]
    fn small_or_single_event_responses_stay_whole() {
        assert_eq!(fragments(response(&[10, 10]), 1000).len(), 1);
        let one = fragments(response(&[5000]), 1000);
        assert_eq!(one.len(), 1);
        assert!(!one[0].fragment);
    }

    #[test]
    fn large_responses_split_and_only_the_last_is_unflagged() {
        let parts = fragments(response(&[400, 400, 400, 400, 400]), 1000);
        assert!(parts.len() > 1);
        let flags: Vec<bool> = parts.iter().map(|p| p.fragment).collect();
        assert_eq!(flags.last(), Some(&false));
        assert!(flags[..flags.len() - 1].iter().all(|f| *f));
        assert_eq!(parts.iter().map(|p| p.events.len()).sum::<usize>(), 5);
        assert!(parts.iter().all(|p| p.watch_id == 7));
        assert!(parts.iter().all(|p| p.encoded_len() < 1000));
    }
}
