-- safe-outcomes schema, version 1: the store's ordered key space (the same
-- keys and record encodings as the embedded sled store, `src/store/keys.rs`),
-- counters that replicas add to, and the sequences.

-- Every record, under its key: inbox (i/q/ items, i/d/ delivery ids, …),
-- outputs (o/), observations (b/), indexes, schedule (s/), App state (n/).
CREATE TABLE kv (
    k bytea PRIMARY KEY,
    v bytea NOT NULL
);

-- Durable counters (the m/ keys of the sled store), changed by adding to
-- them so that two replicas never lose each other's counts.
CREATE TABLE counters (
    name text PRIMARY KEY,
    value bigint NOT NULL
);

-- Inbox sequence numbers (the order of i/q/ keys) and manifest upload ids.
CREATE SEQUENCE inbox_seq AS bigint MINVALUE 1;
CREATE SEQUENCE upload_ids AS bigint MINVALUE 1;

-- `safe-outcomes migrate`: the last key copied from each source, to resume.
CREATE TABLE migrate_progress (
    source text PRIMARY KEY,
    last_key bytea NOT NULL,
    copied bigint NOT NULL DEFAULT 0
);
