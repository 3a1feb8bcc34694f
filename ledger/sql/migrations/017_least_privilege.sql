-- Least privilege (issue 30, item 5). Two roles, made by `mrctl roles
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
-- nothing): it is run here, by `mrctl roles setup`, and by every `mrctl
-- migrate` after the migrations, so a later migration keeps the grants: a
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

-- Returns what it changed: {"owned": n, "definers": n, "public": n, "api": n}.
CREATE FUNCTION mr_apply_privileges() RETURNS jsonb LANGUAGE plpgsql AS $$
DECLARE
  v_ns oid := current_schema()::regnamespace;
  v_schema text := quote_ident(current_schema());
  v_owner name := (SELECT role_name FROM access_roles WHERE kind = 'owner');
  v_api name := (SELECT role_name FROM access_roles WHERE kind = 'api');
  v_owner_id oid;
  v_api_id oid;
  v_config text[] := ARRAY['search_path=' || quote_ident(current_schema()) || ', pg_temp'];
  -- What api_access names and exists, resolved (CASE: each name is read
  -- only as what it is).
  v_tables oid[] := array_remove(ARRAY(
    SELECT CASE WHEN privilege = 'select' THEN to_regclass(object) END FROM api_access), NULL);
  v_writers oid[] := array_remove(ARRAY(
    SELECT CASE WHEN privilege = 'execute' THEN to_regprocedure(object) END FROM api_access), NULL);
  r record;
  v_owned int := 0;
  v_definers int := 0;
  v_public int := 0;
  v_api_changes int := 0;
BEGIN
  IF v_owner IS NOT NULL THEN
    v_owner_id := to_regrole(quote_ident(v_owner));
    IF v_owner_id IS NULL THEN
      RAISE EXCEPTION 'the owner role % (mrctl roles setup) no longer exists: run mrctl roles setup again', v_owner;
    END IF;
    -- Everything in the schema belongs to the owner: a table (with its
    -- indexes and sequences), a view, a sequence of its own, a function.
    FOR r IN SELECT c.oid::regclass AS obj, CASE c.relkind WHEN 'v' THEN 'VIEW' WHEN 'm' THEN 'MATERIALIZED VIEW'
                      WHEN 'f' THEN 'FOREIGN TABLE' WHEN 'S' THEN 'SEQUENCE' ELSE 'TABLE' END AS kind
             FROM pg_class c
             WHERE c.relnamespace = v_ns AND c.relowner <> v_owner_id
               AND (c.relkind IN ('r', 'p', 'v', 'm', 'f')
                    OR (c.relkind = 'S' AND NOT EXISTS (
                          SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid
                            AND d.deptype IN ('a', 'i'))))
             ORDER BY c.oid LOOP
      EXECUTE format('ALTER %s %s OWNER TO %I', r.kind, r.obj, v_owner);
      v_owned := v_owned + 1;
    END LOOP;
    FOR r IN SELECT p.oid::regprocedure AS fn FROM pg_proc p
             WHERE p.pronamespace = v_ns AND p.prokind IN ('f', 'p') AND p.proowner <> v_owner_id ORDER BY p.oid LOOP
      EXECUTE format('ALTER ROUTINE %s OWNER TO %I', r.fn, v_owner);
      v_owned := v_owned + 1;
    END LOOP;
  END IF;

  -- The writers: definers with a fixed search_path.
  FOR r IN SELECT p.oid::regprocedure AS fn FROM pg_proc p
           WHERE p.oid = ANY (v_writers) AND p.pronamespace = v_ns
             AND (NOT p.prosecdef OR p.proconfig IS DISTINCT FROM v_config) ORDER BY p.oid LOOP
    EXECUTE format('ALTER FUNCTION %s SECURITY DEFINER SET search_path = %s, pg_temp', r.fn, v_schema);
    v_definers := v_definers + 1;
  END LOOP;
  -- No definer of the schema is PUBLIC's to call: only its grantees'.
  FOR r IN SELECT p.oid::regprocedure AS fn FROM pg_proc p
           WHERE p.pronamespace = v_ns AND p.prosecdef AND EXISTS (
             SELECT 1 FROM aclexplode(coalesce(p.proacl, acldefault('f', p.proowner))) x
             WHERE x.grantee = 0 AND x.privilege_type = 'EXECUTE') ORDER BY p.oid LOOP
    EXECUTE format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', r.fn);
    v_public := v_public + 1;
  END LOOP;

  IF v_api IS NOT NULL THEN
    v_api_id := to_regrole(quote_ident(v_api));
    IF v_api_id IS NULL THEN
      RAISE EXCEPTION 'the API role % (mrctl roles setup) no longer exists: run mrctl roles setup again', v_api;
    END IF;
    -- The schema: USAGE only.
    IF coalesce((SELECT array_agg(x.privilege_type ORDER BY x.privilege_type)
                 FROM pg_namespace n, aclexplode(n.nspacl) x WHERE n.oid = v_ns AND x.grantee = v_api_id),
                '{}') <> ARRAY['USAGE'] THEN
      EXECUTE format('REVOKE ALL ON SCHEMA %s FROM %I', v_schema, v_api);
      EXECUTE format('GRANT USAGE ON SCHEMA %s TO %I', v_schema, v_api);
      v_api_changes := v_api_changes + 1;
    END IF;
    -- Tables, views and sequences: SELECT on the listed tables, nothing on
    -- the rest (column grants included).
    FOR r IN SELECT c.oid::regclass AS obj, c.relkind = 'S' AS seq, c.oid = ANY (v_tables) AS wanted
             FROM pg_class c
             WHERE c.relnamespace = v_ns AND c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S')
               AND (coalesce((SELECT array_agg(x.privilege_type ORDER BY x.privilege_type)
                              FROM aclexplode(c.relacl) x WHERE x.grantee = v_api_id), '{}')
                    <> CASE WHEN c.oid = ANY (v_tables) THEN ARRAY['SELECT'] ELSE '{}'::text[] END
                    OR EXISTS (SELECT 1 FROM pg_attribute t, aclexplode(t.attacl) x
                               WHERE t.attrelid = c.oid AND x.grantee = v_api_id))
             ORDER BY c.oid LOOP
      EXECUTE format('REVOKE ALL ON %s %s FROM %I', CASE WHEN r.seq THEN 'SEQUENCE' ELSE 'TABLE' END, r.obj, v_api);
      IF r.wanted THEN
        EXECUTE format('GRANT SELECT ON TABLE %s TO %I', r.obj, v_api);
      END IF;
      v_api_changes := v_api_changes + 1;
    END LOOP;
    -- Functions: EXECUTE granted on the listed writers only (the invoker
    -- reads and helpers are PUBLIC's to call, as any function is).
    FOR r IN SELECT p.oid::regprocedure AS fn, p.oid = ANY (v_writers) AS wanted
             FROM pg_proc p
             WHERE p.pronamespace = v_ns AND p.prokind IN ('f', 'p')
               AND EXISTS (SELECT 1 FROM aclexplode(p.proacl) x WHERE x.grantee = v_api_id AND x.privilege_type = 'EXECUTE')
                   <> (p.oid = ANY (v_writers))
                OR EXISTS (SELECT 1 FROM aclexplode(p.proacl) x WHERE x.grantee = v_api_id AND x.privilege_type <> 'EXECUTE')
             ORDER BY p.oid LOOP
      IF r.wanted THEN
        EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO %I', r.fn, v_api);
      ELSE
        EXECUTE format('REVOKE ALL ON ROUTINE %s FROM %I', r.fn, v_api);
      END IF;
      v_api_changes := v_api_changes + 1;
    END LOOP;
  END IF;
  RETURN jsonb_build_object('owned', v_owned, 'definers', v_definers, 'public', v_public, 'api', v_api_changes);
END $$;
REVOKE EXECUTE ON FUNCTION mr_apply_privileges() FROM PUBLIC;

-- A role that could write the books before this migration (a hand-made
-- grant of INSERT on ledger_entries) keeps its way to the writers, which
-- are no longer PUBLIC's to call: an upgrade takes nothing from a running
-- deployment and gives no role more than it had.
DO $$
DECLARE
  r record;
  f record;
BEGIN
  PERFORM mr_apply_privileges();
  FOR r IN SELECT DISTINCT g.rolname
           FROM pg_class c CROSS JOIN LATERAL aclexplode(c.relacl) x JOIN pg_roles g ON g.oid = x.grantee
           WHERE c.oid = 'ledger_entries'::regclass AND x.privilege_type = 'INSERT' AND x.grantee <> c.relowner LOOP
    FOR f IN SELECT p.oid::regprocedure AS fn FROM api_access a
             JOIN pg_proc p ON p.oid = CASE WHEN a.privilege = 'execute' THEN to_regprocedure(a.object) END LOOP
      EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO %I', f.fn, r.rolname);
    END LOOP;
  END LOOP;
END $$;
