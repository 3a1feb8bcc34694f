-- Why reversals and redemptions are batched: alone, each is its own
-- transaction and its own commit (WAL flush), and a redemption holds its
-- club's row (the cash capacity) until that commit, so redemptions of one
-- club would go one commit at a time (bench/RESULTS.md, "Reversals and
-- redemptions against pgbench").
--
-- mr_write_batch_each: reversals, or redemptions, that queued on one
-- worker while its connections were busy (modules/ledger/pool_core.hpp), in
-- one statement and one transaction. A batch holds one op only, never
-- settles (those have mr_write_batch). Each element is one mr_write
-- call, in the order given (the order they queued in): its own outcome,
-- idempotency record, event and the contract's order of checks, and each
-- sees what the elements before it did exactly as if they had run one
-- after another (two partial reversals of one transaction, the cash
-- capacity earlier redemptions took). The elements' results come back in
-- that order, one row each, as mr_write_batch's do.
--
-- Locks: every lock the elements will take is taken first, kind by kind,
-- each kind in ascending order, in the order single writes take them:
--   1. the idempotency advisory locks, by key (mr_write), then those of
--      the signatures, by key (mr_write);
--   2. redemptions: the requestId advisory locks, by key (mr_do_redeem);
--   3. the member rows named, by member id;
--   4. reversals: the settled transactions named, by tx id; then the
--      connection's pool stripe of each club (mr_pool_give), by club;
--      redemptions: the club rows (the cash capacity), by club id,
--      FOR NO KEY UPDATE as mr_do_redeem's UPDATE locks it (FOR UPDATE
--      would also block every insert that references the club).
-- A single write holds at most one lock of each kind and takes the kinds
-- in this order, and settle batches take kinds 1, 3 and the stripes in it,
-- so no batch waits for a lock while holding one a single write or another
-- batch waits for with a lock this batch wants. The mr_write calls then
-- only take locks the batch already holds. Anything that fails (a
-- deadlock all the same, MR503 for a moving club, any error) rolls the
-- whole batch back; the module then runs its writes one by one
-- (pg_pool.cpp, complete_batch), as it does a failed settle batch. Two
-- writes with one idempotency key of one club never share a batch (the
-- module keeps the later one for the next), as for settles.
CREATE OR REPLACE FUNCTION mr_write_batch_each(p_batch jsonb)
 RETURNS SETOF jsonb
 LANGUAGE plpgsql
 SECURITY DEFINER
 SET search_path TO 'public', 'pg_temp'
AS $function$
DECLARE
  v_op text := p_batch->0->>0;
  v_key bigint;
  v_club bigint;
  v_req jsonb;
BEGIN
  IF v_op IS NULL OR v_op NOT IN ('reverse', 'redeem')
     OR EXISTS (SELECT 1 FROM jsonb_array_elements(p_batch) r WHERE r->>0 IS DISTINCT FROM v_op) THEN
    RAISE EXCEPTION 'a batch holds reversals only or redemptions only' USING ERRCODE = 'MRB01';
  END IF;
  -- A moving club's write raises in mr_write all the same; refused here
  -- before any lock is taken.
  PERFORM mr_refuse_moving(c) FROM (SELECT DISTINCT (r->>1)::bigint AS c FROM jsonb_array_elements(p_batch) r) x;
  -- 1. The keys of mr_write, one at a time so the order is certain.
  FOR v_key IN SELECT DISTINCT hashtextextended((r->>1) || ':' || (r->>3), 0)
               FROM jsonb_array_elements(p_batch) r ORDER BY 1 LOOP
    PERFORM pg_advisory_xact_lock(v_key);
  END LOOP;
  -- 1b. The signatures' keys of mr_write, after the idempotency keys.
  FOR v_key IN SELECT DISTINCT mr_signature_lock_key((r->>7)::bytea)
               FROM jsonb_array_elements(p_batch) r WHERE r->>7 IS NOT NULL ORDER BY 1 LOOP
    PERFORM pg_advisory_xact_lock(v_key);
  END LOOP;
  -- 2. The requestId keys of mr_do_redeem.
  IF v_op = 'redeem' THEN
    FOR v_key IN SELECT DISTINCT hashtextextended('redeem:' || (r->>1) || ':' || (r->6->>'requestId'), 0)
                 FROM jsonb_array_elements(p_batch) r WHERE r->6->>'requestId' IS NOT NULL ORDER BY 1 LOOP
      PERFORM pg_advisory_xact_lock(v_key);
    END LOOP;
  END IF;
  -- 3. The members, found and locked in one statement (LIMIT 1 on a unique
  -- key keeps each lookup an index probe; ORDER BY under FOR UPDATE locks
  -- them as the sort hands them out).
  PERFORM 1 FROM members
  WHERE member_id IN (SELECT m.member_id FROM jsonb_array_elements(p_batch) r
                      CROSS JOIN LATERAL (SELECT member_id FROM members
                                          WHERE club_id = (r->>1)::bigint AND external_id = r->6->>'externalMemberId'
                                          LIMIT 1) m)
  ORDER BY member_id FOR UPDATE;
  -- 4. What each op changes after its member.
  IF v_op = 'reverse' THEN
    PERFORM 1 FROM transactions
    WHERE tx_id IN (SELECT t.tx_id FROM jsonb_array_elements(p_batch) r
                    CROSS JOIN LATERAL (SELECT tx_id FROM transactions
                                        WHERE club_id = (r->>1)::bigint
                                          AND external_id = r->6->>'externalTransactionId' LIMIT 1) t)
    ORDER BY tx_id FOR UPDATE;
    -- No subtransaction updates a stripe on this path (mr_pool_give is a
    -- plain UPDATE), so FOR UPDATE leaves no MultiXact behind.
    FOR v_club IN SELECT DISTINCT (r->>1)::bigint FROM jsonb_array_elements(p_batch) r ORDER BY 1 LOOP
      PERFORM 1 FROM club_pool_stripes WHERE club_id = v_club AND stripe = mr_pool_stripe() FOR UPDATE;
    END LOOP;
  ELSE
    PERFORM 1 FROM clubs
    WHERE club_id IN (SELECT DISTINCT (r->>1)::bigint FROM jsonb_array_elements(p_batch) r)
    ORDER BY club_id FOR NO KEY UPDATE;
  END IF;
  FOR v_req IN SELECT value FROM jsonb_array_elements(p_batch) WITH ORDINALITY ORDER BY ordinality LOOP
    RETURN NEXT mr_write(v_req->>0, (v_req->>1)::bigint, v_req->>2, v_req->>3, v_req->>4, v_req->>5, v_req->6,
                         (v_req->>7)::bytea);
  END LOOP;
END $function$;
