-- Pool stripes by connection, not by member.
--
-- Each club's pool is split into 16 stripes so that awards do not queue on
-- one row. Drawn by member (stripe member_id % 16), a batch would lock every
-- stripe its members draw from: a batch of ten settles for ten members
-- touches about seven of the 16, so two batches of one club on two
-- connections would almost always want a stripe the other holds, and wait
-- for its commit (bench/RESULTS.md).
--
-- Which stripe an award draws from does not matter to the books: the pool
-- is the sum of the club's stripes, a stripe that cannot cover an award
-- still makes mr_pool_take consolidate (lock all 16 in order, refuse only
-- what the whole pool cannot cover), and points given back may land on any
-- stripe. So a connection draws from and gives back to one stripe of its
-- own, mr_pool_stripe(): its backend's process id modulo 16. A
-- connection's transactions never wait for each other, and the pool's
-- connections, opened together, get consecutive process ids and so
-- distinct stripes; two connections that share a stripe wait only as two
-- members of one stripe would. The lock order is idempotency locks, members
-- by id, then stripes by club and stripe, and a batch holds at most one
-- stripe per club, as a single write does.
--
-- mr_write_batch locks its stripe and draws on mr_pool_stripe(); it finds
-- and locks its members in one statement (an array variable would be
-- planned again by PL/pgSQL on every call).
CREATE OR REPLACE FUNCTION mr_pool_stripe()
 RETURNS smallint
 LANGUAGE sql
 STABLE PARALLEL RESTRICTED
AS $function$
  SELECT (pg_backend_pid() % 16)::smallint
$function$;
