-- What an operator needs to know of a failed attempt beyond its rule: the
-- address refused and its class, libcurl's own message (the address and
-- port it could not reach, the TLS failure). The partner reads `error`
-- (the rule only, GET .../deliveries); `detail` is shown by the operator's
-- views alone (mrctl webhook failures, GET /webhooks/failures), since it
-- could tell a partner what the operator's internal names resolve to.
ALTER TABLE webhook_attempts ADD COLUMN detail text;
