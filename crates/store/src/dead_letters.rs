//! Dead letters: inbox items the worker could not process (an error that
//! persisted through its attempts, a panic, or a record that no longer
//! decodes). Each is moved aside in the same sled batch that removes it from
//! the inbox, so the queue goes on and nothing is lost: the item's stored
//! bytes are kept verbatim with the error, and `safe-outcomes dead-letters
//! replay` puts them back at the tail of the inbox once the cause is fixed.
//!
//! Key: `d/` + the item's inbox sequence (u64 BE). Value: a `DeadLetter`.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

#[cfg(test)]
use super::encode;
use super::inbox::InboxItem;
use super::{counter, decode, keys, Result, Store, StoreError};

/// An inbox item moved aside, with why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeadLetter {
    /// The item's inbox sequence when it failed (its id here).
    pub seq: u64,
    /// The error, or the panic message.
    pub error: String,
    pub failed_at: DateTime<Utc>,
    /// Attempts made before it was moved aside.
    pub attempts: u32,
    /// The inbox record exactly as it was stored (hex), so even an item that
    /// no longer decodes can be replayed once the code reads it again.
    pub item_hex: String,
}

impl DeadLetter {
    /// The dead letter of inbox item `seq`, whose stored bytes are `bytes`.
    pub fn new(seq: u64, bytes: &[u8], error: String, attempts: u32, now: DateTime<Utc>) -> Self {
        DeadLetter {
            seq,
            error,
            failed_at: now,
            attempts,
            item_hex: hex::encode(bytes),
        }
    }

    /// The item, if its record decodes.
    pub fn item(&self) -> Option<InboxItem> {
        let bytes = hex::decode(&self.item_hex).ok()?;
        super::codec::decode_item(&keys::inbox_queue(self.seq), &bytes).ok()
    }

    /// A one-line description of the item: its kind and id.
    pub fn summary(&self) -> String {
        match self.item() {
            Some(InboxItem::Delivery {
                delivery_id, event, ..
            }) => format!("delivery {delivery_id} ({event})"),
            Some(InboxItem::Manifest { key, records, .. }) => {
                format!(
                    "manifest {} ({} lines)",
                    &key[..key.len().min(16)],
                    records.len()
                )
            }
            Some(InboxItem::ManifestChunks { key, chunks, .. }) => format!(
                "manifest {} ({chunks} staged chunks)",
                &key[..key.len().min(16)]
            ),
            Some(InboxItem::Reconciled { output_id, .. }) => format!("reconciled {output_id}"),
            None => format!("undecodable record ({} bytes)", self.item_hex.len() / 2),
        }
    }
}

/// Which dead letters to replay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Replay {
    One(u64),
    All,
}

#[derive(Debug, thiserror::Error)]
pub enum DeadLetterError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("no dead letter {0} (see `safe-outcomes dead-letters list`)")]
    NotFound(u64),
}

impl Store {
    #[cfg(test)]
    /// Put into `batch` the move of inbox item `seq` (its stored `bytes`)
    /// to the dead letters; the caller commits it with the item's removal.
    pub(crate) fn dead_letter_into(
        batch: &mut super::Batch,
        seq: u64,
        bytes: &[u8],
        error: String,
        attempts: u32,
        now: DateTime<Utc>,
    ) {
        let letter = DeadLetter::new(seq, bytes, error, attempts, now);
        batch.insert(keys::dead_letter(seq), encode(&letter));
    }

    /// Every dead letter, oldest first.
    pub fn dead_letters(&self) -> Result<Vec<DeadLetter>> {
        self.decoded_under(keys::DEAD_LETTER)
    }

    /// How many dead letters there are.
    pub fn dead_letter_count(&self) -> u64 {
        self.db().scan_prefix(keys::DEAD_LETTER).count() as u64
    }

    /// Move dead letters back to the tail of the inbox (new sequences), in
    /// one batch. Only while no server holds the store: the inbox writer
    /// keeps the next sequence in memory. Returns the new sequences.
    pub fn replay_dead_letters(
        &self,
        which: Replay,
    ) -> std::result::Result<Vec<u64>, DeadLetterError> {
        let letters = match which {
            Replay::All => self.dead_letters()?,
            Replay::One(seq) => {
                let key = keys::dead_letter(seq);
                let value = self.db().get(&key)?;
                let value = value.ok_or(DeadLetterError::NotFound(seq))?;
                vec![decode(&key, &value)?]
            }
        };
        // On PostgreSQL new numbers come from the inbox sequence (a server
        // may be running); on sled they follow the RECEIVED counter.
        let mut seqs = match self.db().pg() {
            Some(pg) => pg.next_inbox_seqs(letters.len())?,
            None => {
                let received = self.counter(counter::RECEIVED);
                (received + 1..=received + letters.len() as u64).collect()
            }
        }
        .into_iter();
        let mut batch = super::Batch::default();
        let mut queued = Vec::new();
        for letter in letters {
            let bytes = hex::decode(&letter.item_hex).map_err(|e| StoreError::Decode {
                key: format!("dead letter {}", letter.seq),
                error: e.to_string(),
            })?;
            let seq = seqs.next().expect("one number per letter");
            batch.insert(keys::inbox_queue(seq), bytes);
            batch.remove(keys::dead_letter(letter.seq));
            queued.push(seq);
        }
        self.bump_counter(&mut batch, counter::RECEIVED, queued.len() as u64);
        self.db().apply_batch(batch)?;
        self.flush()?;
        Ok(queued)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::inbox::tests::delivery as item;

    #[test]
    fn a_dead_letter_keeps_its_item_and_replays_to_the_tail_of_the_inbox() {
        let (_dir, store) = crate::temp_store();
        let now = DateTime::from_timestamp(1_800_000_100, 0).unwrap();
        let mut batch = crate::Batch::default();
        Store::set_counter(&mut batch, counter::RECEIVED, 7);
        Store::dead_letter_into(&mut batch, 3, &encode(&item("d-3")), "boom".into(), 2, now);
        Store::dead_letter_into(&mut batch, 5, b"\x02garbage", "undecodable".into(), 1, now);
        store.db().apply_batch(batch).unwrap();
        if let Some(pg) = store.db().pg() {
            // Seven items were numbered (PostgreSQL numbers from a sequence).
            pg.raise_inbox_seq(7).unwrap();
        }

        let letters = store.dead_letters().unwrap();
        assert_eq!(letters.len(), 2);
        assert_eq!(letters[0].item(), Some(item("d-3")));
        assert_eq!(letters[0].summary(), "delivery d-3 (issues)");
        assert!(
            letters[1].summary().contains("undecodable"),
            "{}",
            letters[1].summary()
        );
        assert!(matches!(
            store.replay_dead_letters(Replay::One(4)),
            Err(DeadLetterError::NotFound(4))
        ));

        assert_eq!(store.replay_dead_letters(Replay::One(3)).unwrap(), vec![8]);
        assert_eq!(store.dead_letter_count(), 1);
        let back = store.db().get(keys::inbox_queue(8)).unwrap().unwrap();
        assert_eq!(decode::<InboxItem>(b"k", &back).unwrap(), item("d-3"));
        assert_eq!(store.replay_dead_letters(Replay::All).unwrap(), vec![9]);
        assert_eq!(store.dead_letter_count(), 0);
        assert_eq!(
            &store.db().get(keys::inbox_queue(9)).unwrap().unwrap()[..],
            b"\x02garbage"
        );
        assert_eq!(store.counter(counter::RECEIVED), 9);
    }
}
