-- A POST's signature serves one idempotency key (contract section 2): the
-- MAC of the request's X-MR-Signature is kept with its idempotency record,
-- unique, and mr_write (and the batches) refuse it under another key as
-- invalid_signature in the write's own transaction, so losing Redis does
-- not let a captured request run again under a new key. A signature can
-- only arrive while its timestamp is inside the window (else
-- stale_timestamp), so unique for as long as the record is kept is unique
-- for as long as it matters. Records written before have none (NULL).
ALTER TABLE idempotency_records ADD COLUMN signature bytea;
CREATE UNIQUE INDEX idempotency_records_signature ON idempotency_records (signature) WHERE signature IS NOT NULL;
-- mr_write takes the signature as its eighth parameter.
UPDATE api_access SET object = 'mr_write(text,bigint,text,text,text,text,jsonb,bytea)'
WHERE object = 'mr_write(text,bigint,text,text,text,text,jsonb)';
