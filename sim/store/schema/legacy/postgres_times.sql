-- A database from before the numbered migrations kept its times as RFC
-- 3339 text; migration 0001 keeps them as integers, unix milliseconds. This
-- brings such a database's times there, and adds labs.gen, the reset
-- generation.

ALTER TABLE labs ALTER COLUMN created_at TYPE BIGINT USING COALESCE(floor(extract(epoch FROM created_at::timestamptz) * 1000)::bigint, 0);
ALTER TABLE payments ALTER COLUMN created_at TYPE BIGINT USING COALESCE(floor(extract(epoch FROM created_at::timestamptz) * 1000)::bigint, 0);
ALTER TABLE idempotency_records ALTER COLUMN created_at TYPE BIGINT USING COALESCE(floor(extract(epoch FROM created_at::timestamptz) * 1000)::bigint, 0);
ALTER TABLE operations ALTER COLUMN created_at TYPE BIGINT USING COALESCE(floor(extract(epoch FROM created_at::timestamptz) * 1000)::bigint, 0);
ALTER TABLE attempts ALTER COLUMN started_at TYPE BIGINT USING COALESCE(floor(extract(epoch FROM started_at::timestamptz) * 1000)::bigint, 0);
ALTER TABLE attempts ALTER COLUMN finished_at TYPE BIGINT USING floor(extract(epoch FROM finished_at::timestamptz) * 1000)::bigint;
ALTER TABLE messages ALTER COLUMN created_at TYPE BIGINT USING COALESCE(floor(extract(epoch FROM created_at::timestamptz) * 1000)::bigint, 0);
ALTER TABLE message_deliveries ALTER COLUMN at TYPE BIGINT USING COALESCE(floor(extract(epoch FROM at::timestamptz) * 1000)::bigint, 0);
ALTER TABLE processed_messages ALTER COLUMN at TYPE BIGINT USING COALESCE(floor(extract(epoch FROM at::timestamptz) * 1000)::bigint, 0);
ALTER TABLE email_outbox ALTER COLUMN created_at TYPE BIGINT USING COALESCE(floor(extract(epoch FROM created_at::timestamptz) * 1000)::bigint, 0);
ALTER TABLE emails ALTER COLUMN received_at TYPE BIGINT USING COALESCE(floor(extract(epoch FROM received_at::timestamptz) * 1000)::bigint, 0);
ALTER TABLE orders ALTER COLUMN updated_at TYPE BIGINT USING COALESCE(floor(extract(epoch FROM updated_at::timestamptz) * 1000)::bigint, 0);

ALTER TABLE labs ADD COLUMN IF NOT EXISTS gen BIGINT NOT NULL DEFAULT 0;
