-- Reversals and redemptions batched (mr_write_batch_each). The API role
-- calls it: a definer with a fixed search_path, made so by
-- mr_apply_privileges after every migrate.

INSERT INTO api_access (object, privilege) VALUES ('mr_write_batch_each(jsonb)', 'execute');
