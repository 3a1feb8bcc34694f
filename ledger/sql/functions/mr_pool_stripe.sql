-- Pool stripes by connection, not by member.
--
-- 002 split each club's pool into 16 stripes so that awards for different
-- members do not queue on one row, and drew each member's awards from
-- stripe member_id % 16. Batches (006, 009) then lock every stripe their
-- members draw from: a batch of ten settles for ten members touches about
-- seven of the 16, so two batches of one club on two connections almost
-- always wanted a stripe the other held, and waited for its commit. Under
-- settles at 32 connections, PostgreSQL sat idle a fifth of the time with
-- batches queued on each other's stripe locks (bench/RESULTS.md).
--
-- Which stripe an award draws from does not matter to the books: the pool
-- is the sum of the club's stripes, a stripe that cannot cover an award
-- still makes mr_pool_take consolidate (lock all 16 in order, refuse only
-- what the whole pool cannot cover), and points given back may land on any
-- stripe. So a connection now draws from and gives back to one stripe of
-- its own, mr_pool_stripe(): its backend's process id modulo 16. A
-- connection's transactions never wait for each other, and the pool's
-- connections, opened together, get consecutive process ids and so
-- distinct stripes; two connections that share a stripe only wait as two
-- members of one stripe did before. The lock order is unchanged
-- (idempotency locks, members by id, then stripes by club and stripe),
-- and a batch now holds at most one stripe per club, as a single write
-- does.
--
-- mr_write_batch is 009's with the stripe lock and the stripe draw on
-- mr_pool_stripe(); its member lock now finds and locks the members in one
-- statement (the two it replaces took an array variable, which PL/pgSQL
-- planned again on every call: 0.12 ms of a lone batch's 0.8 ms).
CREATE OR REPLACE FUNCTION mr_pool_stripe()
 RETURNS smallint
 LANGUAGE sql
 STABLE PARALLEL RESTRICTED
AS $function$
  SELECT (pg_backend_pid() % 16)::smallint
$function$;
