-- Least privilege. Two roles, made by `mrctl roles
-- setup` (docs/operator-guide.md, Deploy):
--
--   owner  owns the database, the schema and everything in it; runs
--          `mrctl migrate` and mrctl's operator commands.
--   api    what nginx logs in as (mr_catalogue_dsn, mr_ledger_dsn): USAGE
--          on the schema, SELECT on the tables api_access lists, EXECUTE
--          on the functions it lists, nothing else. It changes the books
--          only through those functions: no INSERT, UPDATE, DELETE or
--          TRUNCATE on any table, no ALTER or DROP (it owns nothing).
--
-- The functions the modules call that write are SECURITY DEFINER: they run
-- as the owner, with the schema and pg_temp (last, so a temporary table
-- cannot stand in for one of ours) as their search_path, and EXECUTE is
-- taken from PUBLIC. The reads stay SECURITY INVOKER on the tables' SELECT
-- grants: the history and balance reads are LANGUAGE sql functions the
-- planner inlines into the prepared statements (006, 016), and a definer
-- is never inlined; a LANGUAGE sql function that is not inlined is parsed
-- and planned again at every execution (011). The helpers the writers call
-- stay invoker (they run as the owner inside a writer; called by the API
-- role directly they can only read what it may read). The operator's
-- functions (mr_adjust, mr_pool_topup, mr_events_prune, ...) stay invoker:
-- the API role cannot run them for want of the tables' write privileges.
--
-- mr_apply_privileges() makes the database match api_access and
-- access_roles, changing only what differs (so running it again changes
-- nothing): it is run by `mrctl roles setup` and by every `mrctl migrate`
-- after the migrations and functions, so a migration keeps the grants: a
-- function it replaces (CREATE OR REPLACE resets SECURITY DEFINER) becomes
-- a definer again, a table or function it creates as another role (a
-- superuser's migrate) passes to the owner. A later migration whose new
-- table or writer the modules use adds its row to api_access.

-- The roles `mrctl roles setup` made: at most one of each kind.
CREATE TABLE access_roles (
  kind      text PRIMARY KEY CHECK (kind IN ('owner', 'api')),
  role_name name NOT NULL
);

-- What the API role may use: a table it reads (select), or a writer it
-- calls (execute: its signature as regprocedure prints it). A row whose
-- object does not exist yet is applied once a migration makes it.
CREATE TABLE api_access (
  object    text PRIMARY KEY,
  privilege text NOT NULL CHECK (privilege IN ('select', 'execute'))
);

INSERT INTO api_access (object, privilege) VALUES
  -- The key catalogue (keys/key_catalogue.cpp): keys, clubs, the pods'
  -- directory (018), the schema's version; /readyz reads the version too.
  ('api_keys', 'select'),
  ('clubs', 'select'),
  ('pods', 'select'),
  ('schema_migrations', 'select'),
  -- Balance, histories, redemptions, the club (mr_pool_total), events,
  -- webhook endpoints and their attempts; /metrics and the ops listener's
  -- payouts and webhook views read the same tables.
  ('club_pool_stripes', 'select'),
  ('members', 'select'),
  ('ledger_entries', 'select'),
  ('transactions', 'select'),
  ('reversals', 'select'),
  ('redemptions', 'select'),
  ('payouts', 'select'),
  ('events', 'select'),
  ('webhook_endpoints', 'select'),
  ('webhook_deliveries', 'select'),
  ('webhook_attempts', 'select'),
  -- The writers (ledger/statements.hpp): partner writes and settle
  -- batches; payout results (ops listener, simulator); webhook delivery
  -- (claim, reports) and the ops listener's enable, disable and replay.
  ('mr_write(text,bigint,text,text,text,text,jsonb)', 'execute'),
  ('mr_write_batch(jsonb)', 'execute'),
  ('mr_payout_move(text,text,text)', 'execute'),
  ('mr_payout_simulate(bigint,integer)', 'execute'),
  ('mr_webhook_claim(text,integer,integer)', 'execute'),
  ('mr_webhook_report(bigint,integer,integer,text,integer,integer,integer[])', 'execute'),
  ('mr_webhook_report_batch(jsonb,integer[])', 'execute'),
  ('mr_ops_webhook_status(text,text)', 'execute'),
  ('mr_ops_webhook_replay(text,timestamp with time zone)', 'execute');

-- A role that could write the books before this migration (a hand-made
-- grant of INSERT on ledger_entries) keeps its way to the writers, which
-- are no longer PUBLIC's to call: an upgrade takes nothing from a running
-- deployment and gives no role more than it had.
DO $$
DECLARE
  r record;
  f record;
BEGIN
  FOR r IN SELECT DISTINCT g.rolname
           FROM pg_class c CROSS JOIN LATERAL aclexplode(c.relacl) x JOIN pg_roles g ON g.oid = x.grantee
           WHERE c.oid = 'ledger_entries'::regclass AND x.privilege_type = 'INSERT' AND x.grantee <> c.relowner LOOP
    FOR f IN SELECT p.oid::regprocedure AS fn FROM api_access a
             JOIN pg_proc p ON p.oid = CASE WHEN a.privilege = 'execute' THEN to_regprocedure(a.object) END LOOP
      EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO %I', f.fn, r.rolname);
    END LOOP;
  END LOOP;
END $$;
