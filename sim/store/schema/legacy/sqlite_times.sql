-- A file from before the numbered migrations kept its times as RFC 3339
-- text, which the database compared as strings (".1Z" sorted after
-- ".15Z"); migration 0001 keeps them as integers, unix milliseconds. This
-- brings such a file's times there, and adds labs.gen, the reset
-- generation. Tables made empty just before (0002's, on a file of version
-- 2) pass through unchanged.

-- SQLite cannot change a column's type: each text time gets an integer
-- column beside it, filled from it, and takes its name once it is dropped.
-- The indexes on those columns go first and come back after.
DROP INDEX IF EXISTS idempotency_records_lab_age;
DROP INDEX IF EXISTS attempts_unfinished;
DROP INDEX IF EXISTS messages_unpublished;
DROP INDEX IF EXISTS messages_age;
DROP INDEX IF EXISTS email_outbox_unsent;

ALTER TABLE labs ADD COLUMN created_at_ms INTEGER NOT NULL DEFAULT 0;
UPDATE labs SET created_at_ms = COALESCE(CAST(ROUND(unixepoch(created_at, 'subsec') * 1000) AS INTEGER), 0);
ALTER TABLE labs DROP COLUMN created_at;
ALTER TABLE labs RENAME COLUMN created_at_ms TO created_at;

ALTER TABLE payments ADD COLUMN created_at_ms INTEGER NOT NULL DEFAULT 0;
UPDATE payments SET created_at_ms = COALESCE(CAST(ROUND(unixepoch(created_at, 'subsec') * 1000) AS INTEGER), 0);
ALTER TABLE payments DROP COLUMN created_at;
ALTER TABLE payments RENAME COLUMN created_at_ms TO created_at;

ALTER TABLE idempotency_records ADD COLUMN created_at_ms INTEGER NOT NULL DEFAULT 0;
UPDATE idempotency_records SET created_at_ms = COALESCE(CAST(ROUND(unixepoch(created_at, 'subsec') * 1000) AS INTEGER), 0);
ALTER TABLE idempotency_records DROP COLUMN created_at;
ALTER TABLE idempotency_records RENAME COLUMN created_at_ms TO created_at;

ALTER TABLE operations ADD COLUMN created_at_ms INTEGER NOT NULL DEFAULT 0;
UPDATE operations SET created_at_ms = COALESCE(CAST(ROUND(unixepoch(created_at, 'subsec') * 1000) AS INTEGER), 0);
ALTER TABLE operations DROP COLUMN created_at;
ALTER TABLE operations RENAME COLUMN created_at_ms TO created_at;

ALTER TABLE attempts ADD COLUMN started_at_ms INTEGER NOT NULL DEFAULT 0;
UPDATE attempts SET started_at_ms = COALESCE(CAST(ROUND(unixepoch(started_at, 'subsec') * 1000) AS INTEGER), 0);
ALTER TABLE attempts DROP COLUMN started_at;
ALTER TABLE attempts RENAME COLUMN started_at_ms TO started_at;

ALTER TABLE attempts ADD COLUMN finished_at_ms INTEGER;
UPDATE attempts SET finished_at_ms = CAST(ROUND(unixepoch(finished_at, 'subsec') * 1000) AS INTEGER);
ALTER TABLE attempts DROP COLUMN finished_at;
ALTER TABLE attempts RENAME COLUMN finished_at_ms TO finished_at;

ALTER TABLE messages ADD COLUMN created_at_ms INTEGER NOT NULL DEFAULT 0;
UPDATE messages SET created_at_ms = COALESCE(CAST(ROUND(unixepoch(created_at, 'subsec') * 1000) AS INTEGER), 0);
ALTER TABLE messages DROP COLUMN created_at;
ALTER TABLE messages RENAME COLUMN created_at_ms TO created_at;

ALTER TABLE message_deliveries ADD COLUMN at_ms INTEGER NOT NULL DEFAULT 0;
UPDATE message_deliveries SET at_ms = COALESCE(CAST(ROUND(unixepoch(at, 'subsec') * 1000) AS INTEGER), 0);
ALTER TABLE message_deliveries DROP COLUMN at;
ALTER TABLE message_deliveries RENAME COLUMN at_ms TO at;

ALTER TABLE processed_messages ADD COLUMN at_ms INTEGER NOT NULL DEFAULT 0;
UPDATE processed_messages SET at_ms = COALESCE(CAST(ROUND(unixepoch(at, 'subsec') * 1000) AS INTEGER), 0);
ALTER TABLE processed_messages DROP COLUMN at;
ALTER TABLE processed_messages RENAME COLUMN at_ms TO at;

ALTER TABLE email_outbox ADD COLUMN created_at_ms INTEGER NOT NULL DEFAULT 0;
UPDATE email_outbox SET created_at_ms = COALESCE(CAST(ROUND(unixepoch(created_at, 'subsec') * 1000) AS INTEGER), 0);
ALTER TABLE email_outbox DROP COLUMN created_at;
ALTER TABLE email_outbox RENAME COLUMN created_at_ms TO created_at;

ALTER TABLE emails ADD COLUMN received_at_ms INTEGER NOT NULL DEFAULT 0;
UPDATE emails SET received_at_ms = COALESCE(CAST(ROUND(unixepoch(received_at, 'subsec') * 1000) AS INTEGER), 0);
ALTER TABLE emails DROP COLUMN received_at;
ALTER TABLE emails RENAME COLUMN received_at_ms TO received_at;

ALTER TABLE orders ADD COLUMN updated_at_ms INTEGER NOT NULL DEFAULT 0;
UPDATE orders SET updated_at_ms = COALESCE(CAST(ROUND(unixepoch(updated_at, 'subsec') * 1000) AS INTEGER), 0);
ALTER TABLE orders DROP COLUMN updated_at;
ALTER TABLE orders RENAME COLUMN updated_at_ms TO updated_at;

CREATE INDEX IF NOT EXISTS idempotency_records_lab_age ON idempotency_records (lab_id, scope, created_at);
CREATE INDEX IF NOT EXISTS attempts_unfinished ON attempts (lab_id) WHERE finished_at IS NULL;
CREATE INDEX IF NOT EXISTS messages_unpublished ON messages (created_at) WHERE published = 0;
CREATE INDEX IF NOT EXISTS messages_age ON messages (created_at);
CREATE INDEX IF NOT EXISTS email_outbox_unsent ON email_outbox (created_at) WHERE sent = 0;

ALTER TABLE labs ADD COLUMN gen INTEGER NOT NULL DEFAULT 0;
