-- mr_metrics_samples() (019), the /metrics statement: the figures
-- mr_metrics() gave, as samples; only the clubs whose books this database
-- keeps (pod IS NULL); the backlog's age in seconds with three decimals,
-- never negative. Rolled back at the end.
BEGIN;
INSERT INTO pods (pod, conninfo) VALUES ('sqltest_pod', 'hostaddr=127.0.0.1 port=1 dbname=mr');
INSERT INTO clubs (partner_ref, name, earn_rate_bp, currencies, pod)
VALUES ('sqltest-elsewhere', 'Elsewhere', 100, '{GBP}', 'sqltest_pod');
DO $$
DECLARE
  v_samples int;
  v_text text := mr_metrics();
  r record;
BEGIN
  -- Every line of mr_metrics()'s samples (not HELP or TYPE) is a sample of
  -- mr_metrics_samples() but for the other pod's club and mr_books_up.
  FOR r IN SELECT family, labels, value FROM mr_metrics_samples() LOOP
    IF r.family NOT LIKE 'mr_webhook_backlog%' THEN
      ASSERT position(E'\n' || r.family || CASE WHEN r.labels = '' THEN '' ELSE '{' || r.labels || '}' END
                      || ' ' || r.value || E'\n' IN E'\n' || v_text) > 0,
        format('%s{%s} %s is not in mr_metrics()', r.family, r.labels, r.value);
    END IF;
  END LOOP;
  SELECT count(*) INTO v_samples FROM mr_metrics_samples() WHERE labels LIKE '%sqltest-elsewhere%';
  ASSERT v_samples = 0, 'a club of another pod has samples here';
  ASSERT position('partner_ref="sqltest-elsewhere"' IN v_text) > 0, 'mr_metrics() listed every club';
  SELECT count(*) INTO v_samples FROM mr_metrics_samples() WHERE family = 'mr_webhook_backlog_oldest_seconds'
    AND value ~ '^[0-9]+\.[0-9]{3}$';
  ASSERT v_samples = 1, 'the backlog age is one sample, seconds with three decimals';
END $$;
ROLLBACK;
