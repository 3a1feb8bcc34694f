-- Returns what it changed: {"owned": n, "definers": n, "public": n, "api": n}.
CREATE OR REPLACE FUNCTION mr_apply_privileges()
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
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
END $function$;
REVOKE EXECUTE ON FUNCTION mr_apply_privileges() FROM PUBLIC;
