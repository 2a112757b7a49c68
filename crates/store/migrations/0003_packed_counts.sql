-- safe-outcomes schema, version 3: packed counts added to in place
-- (`Op::AddAll`: the rollups of `store::rollup`). A value is a sequence of
-- 32-bit big-endian signed integers; a missing element counts as 0.

CREATE FUNCTION so_add_packed(a bytea, b bytea) RETURNS bytea
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT coalesce(string_agg(int4send(
           (CASE WHEN length(a) >= i * 4 + 4
                 THEN ('x' || encode(substring(a FROM i * 4 + 1 FOR 4), 'hex'))::bit(32)::int
                 ELSE 0 END)
         + (CASE WHEN length(b) >= i * 4 + 4
                 THEN ('x' || encode(substring(b FROM i * 4 + 1 FOR 4), 'hex'))::bit(32)::int
                 ELSE 0 END)), ''::bytea ORDER BY i), ''::bytea)
  FROM generate_series(0, greatest(length(a), length(b)) / 4 - 1) AS i
$$;
