-- Pods (issue 29): clubs spread over several PostgreSQL clusters. The
-- catalogue's database holds the directory: every pod other than its own
-- (the home pod, which mr_ledger_dsn names) with the libpq conninfo its
-- servers answer on, and for each club the pod that keeps its books (NULL:
-- the home pod). Every pod carries the whole schema; a club's row is in the
-- catalogue and, with the same club_id, in its pod, where its members,
-- entries, idempotency records, events and deliveries live. The catalogue
-- load reads the directory at every start and reload. A conninfo carries no
-- password (this table is readable by the API role): each node's passfile
-- (or another libpq mechanism) gives it.
CREATE TABLE pods (
  pod        text PRIMARY KEY CHECK (pod ~ '^[a-z][a-z0-9_]{0,30}$' AND pod <> 'home'),
  conninfo   text NOT NULL CHECK (conninfo <> '' AND conninfo !~* 'password\s*='),
  created_at timestamptz NOT NULL DEFAULT now()
);

ALTER TABLE clubs ADD COLUMN pod text REFERENCES pods;
