-- safe-outcomes schema, version 2: the outcomes as a relation operators can
-- query with SQL (and point Grafana or Metabase at), the unit epoch that lets
-- a replica keep its caches across units of work, and leases.
--
-- A store on version 1 upgrades in place: this file runs in one transaction
-- at start-up, and the engine then fills `outcomes` from the outcome records
-- already stored (their bytes are the store's own encoding, decoded by the
-- App), in the same transaction.

-- One row per judged output: the outcome record's own field names as
-- columns, and the whole record (as the read API shows it) in `record`.
-- Written in the same transaction as the record under `o/` in `kv`.
CREATE TABLE outcomes (
    safe_output_id           text PRIMARY KEY,
    repo                     text NOT NULL,
    workflow                 text,
    safe_output_type         text NOT NULL,
    run_id                   numeric(20, 0),
    outcome_status           text NOT NULL,
    evidence_strength        text NOT NULL,
    human_check_signal       text NOT NULL,
    confidence               text,
    target_kind              text,
    target_number            numeric(20, 0),
    target_url               text,
    target_resolved          boolean,
    -- When the output was executed (the record's `created_at`).
    executed_at              timestamptz NOT NULL,
    created_at               timestamptz NOT NULL,
    evaluated_at             timestamptz NOT NULL,
    evaluation_window_hours  bigint,
    time_to_acceptance_hours double precision,
    record                   jsonb NOT NULL
);

-- The dashboard's cuts: by time, and by workflow, repository, type or
-- status over time.
CREATE INDEX outcomes_by_time ON outcomes (executed_at);
CREATE INDEX outcomes_by_workflow ON outcomes (workflow, executed_at);
CREATE INDEX outcomes_by_repo ON outcomes (repo, executed_at);
CREATE INDEX outcomes_by_type ON outcomes (safe_output_type, executed_at);
CREATE INDEX outcomes_by_status ON outcomes (outcome_status, executed_at);

-- One row per output and window already passed (1h, 24h, 7d, 30d): the
-- snapshot taken at that checkpoint.
CREATE VIEW outcome_windows AS
SELECT o.safe_output_id,
       o.repo,
       o.workflow,
       o.safe_output_type,
       o.executed_at,
       w.key                                  AS "window",
       CASE w.key WHEN '1h' THEN 1 WHEN '24h' THEN 24 WHEN '7d' THEN 168
                  WHEN '30d' THEN 720 END     AS window_hours,
       w.value ->> 'outcome_status'           AS outcome_status,
       w.value ->> 'evidence_strength'        AS evidence_strength,
       w.value ->> 'human_check_signal'       AS human_check_signal,
       -- A year past 9999 (which timestamptz does not read as written) is NULL.
       CASE WHEN w.value ->> 'evaluated_at' ~ '^[0-9]{4}-'
            THEN (w.value ->> 'evaluated_at')::timestamptz END AS evaluated_at
FROM outcomes o
CROSS JOIN LATERAL jsonb_each(o.record -> 'windows') AS w;

-- Rows of `outcomes` from the App's input: a JSON array of
-- {"id", "repo", "record", "executed_at", "evaluated_at"}: the record as the
-- read API shows it, and its two times as timestamptz reads them (the App
-- writes `infinity` for a year past 9999).
CREATE FUNCTION upsert_outcomes(input jsonb) RETURNS void LANGUAGE sql AS $$
    INSERT INTO outcomes AS o (
        safe_output_id, repo, workflow, safe_output_type, run_id,
        outcome_status, evidence_strength, human_check_signal, confidence,
        target_kind, target_number, target_url, target_resolved,
        executed_at, created_at, evaluated_at, evaluation_window_hours,
        time_to_acceptance_hours, record)
    SELECT e ->> 'id', e ->> 'repo', r ->> 'workflow', r ->> 'safe_output_type',
           (r ->> 'run_id')::numeric,
           r ->> 'outcome_status', r ->> 'evidence_strength', r ->> 'human_check_signal',
           r ->> 'confidence',
           r -> 'target' ->> 'kind', (r -> 'target' ->> 'number')::numeric,
           r -> 'target' ->> 'url', (r ->> 'target_resolved')::boolean,
           (e ->> 'executed_at')::timestamptz, (e ->> 'executed_at')::timestamptz,
           (e ->> 'evaluated_at')::timestamptz,
           (r ->> 'evaluation_window_hours')::bigint,
           (r ->> 'time_to_acceptance_hours')::double precision, r
    FROM jsonb_array_elements(input) AS e
    CROSS JOIN LATERAL (SELECT e -> 'record') AS x(r)
    ON CONFLICT (safe_output_id) DO UPDATE SET
        repo = excluded.repo, workflow = excluded.workflow,
        safe_output_type = excluded.safe_output_type, run_id = excluded.run_id,
        outcome_status = excluded.outcome_status,
        evidence_strength = excluded.evidence_strength,
        human_check_signal = excluded.human_check_signal,
        confidence = excluded.confidence, target_kind = excluded.target_kind,
        target_number = excluded.target_number, target_url = excluded.target_url,
        target_resolved = excluded.target_resolved, executed_at = excluded.executed_at,
        created_at = excluded.created_at, evaluated_at = excluded.evaluated_at,
        evaluation_window_hours = excluded.evaluation_window_hours,
        time_to_acceptance_hours = excluded.time_to_acceptance_hours,
        record = excluded.record
$$;

-- Bumped by every unit of work's commit. A replica keeps its caches of
-- outputs and observations from one unit to the next only while no other
-- replica's unit committed in between: it reads `n` when a unit begins and
-- bumps it, expecting its own last value, when the unit commits (a unit
-- whose caches turn out stale is rolled back and done again).
CREATE TABLE unit_epoch (
    id boolean PRIMARY KEY DEFAULT true CHECK (id),
    n  bigint NOT NULL
);
INSERT INTO unit_epoch (n) VALUES (0);

CREATE FUNCTION bump_unit_epoch(expected bigint) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    bumped bigint;
BEGIN
    UPDATE unit_epoch SET n = n + 1 RETURNING n INTO bumped;
    IF expected IS NOT NULL AND bumped <> expected + 1 THEN
        RAISE EXCEPTION 'another unit committed since epoch %', expected
            USING ERRCODE = 'SO001';
    END IF;
    RETURN bumped;
END
$$;

-- Work a replica holds for a while (a manifest upload being streamed, a
-- gh-aw run being harvested): whoever finds a lease expired may sweep or
-- resume the work. Times are the database's.
CREATE TABLE leases (
    name       text PRIMARY KEY,
    holder     text NOT NULL,
    expires_at timestamptz NOT NULL
);
