-- What GET balance asks PostgreSQL, without nginx (run with -M prepared).
SELECT mr_balance(:club, :member, 'pgbench');
