//! Shuffle sharding (kube's `shufflesharding.Dealer`): a flow's hash deals
//! it a hand of distinct queues out of the deck, so two flows rarely share
//! a whole hand and one heavy flow fills only its own.

/// `hand_size` distinct indexes below `deck`, drawn from `hash` as digits
/// of a mixed radix (deck, deck-1, ...): each digit picks among the cards
/// not dealt yet.
pub fn deal(mut hash: u64, deck: usize, hand_size: usize) -> Vec<usize> {
    let hand_size = hand_size.clamp(1, deck.max(1));
    let mut dealt: Vec<usize> = Vec::with_capacity(hand_size);
    for left in (deck.max(1) - hand_size + 1..=deck.max(1)).rev() {
        let left = left as u64;
        let mut card = (hash % left) as usize;
        hash /= left;
        // The card-th of those not dealt: step over each dealt one at or
        // below it, lowest first.
        let mut sorted = dealt.clone();
        sorted.sort_unstable();
        for taken in sorted {
            if card >= taken {
                card += 1;
            }
        }
        dealt.push(card);
    }
    dealt
}

/// The hash of a flow: its schema and distinguisher.
pub fn flow_hash(schema: &str, distinguisher: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    // SipHash with fixed keys: the same flow gets the same hand for as long
    // as the server runs.
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    schema.hash(&mut hasher);
    distinguisher.hash(&mut hasher);
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    #[test]
    fn hands_are_distinct_cards_of_the_deck() {
        for hash in [0, 1, 7, 12345, u64::MAX, flow_hash("global-default", "alice")] {
            let hand = deal(hash, 64, 8);
            assert_eq!(hand.len(), 8);
            assert_eq!(hand.iter().collect::<BTreeSet<_>>().len(), 8, "{hand:?}");
            assert!(hand.iter().all(|&c| c < 64), "{hand:?}");
        }
        let whole = deal(99, 5, 5);
        assert_eq!(whole.iter().copied().collect::<BTreeSet<_>>(), (0..5).collect());
        assert_eq!(deal(3, 1, 8), vec![0], "a hand is never larger than the deck");
    }

    #[test]
    fn flows_are_spread_over_the_deck() {
        let mut first_cards = BTreeSet::new();
        for user in 0..200 {
            first_cards.insert(deal(flow_hash("s", &format!("user-{user}")), 64, 6)[0]);
        }
        assert!(first_cards.len() > 40, "{} distinct", first_cards.len());
    }
}
