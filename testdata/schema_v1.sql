-- The lab's ledger. Applied at start; every statement is idempotent.

CREATE TABLE IF NOT EXISTS labs (
    id         TEXT PRIMARY KEY,
    settings   TEXT NOT NULL,           -- JSON of Settings
    created_at TEXT NOT NULL
);

-- payments is the ledger the lessons count. Ids are plain rowids (no
-- AUTOINCREMENT, which costs a write per insert): after a reset, ids start
-- again from the highest one left in the file. idempotency_key is the key the
-- request carried, as sent. dedup_key is the column the UNIQUE constraint
-- guards: it is set only by the protections that rely on the constraint
-- (unique, on-conflict), so that "none" can show a double charge even when the
-- client does send a key.
CREATE TABLE IF NOT EXISTS payments (
    id              INTEGER PRIMARY KEY,
    lab_id          TEXT NOT NULL,
    order_id        TEXT NOT NULL,
    amount          INTEGER NOT NULL CHECK (amount > 0),
    idempotency_key TEXT,
    dedup_key       TEXT,
    created_at      TEXT NOT NULL,
    UNIQUE (lab_id, dedup_key)
);
CREATE INDEX IF NOT EXISTS payments_lab_key ON payments (lab_id, idempotency_key);

-- idempotency_records backs the "replay" protection (IETF Idempotency-Key
-- draft, Stripe): one row per (lab, scope, key), claimed atomically.
CREATE TABLE IF NOT EXISTS idempotency_records (
    lab_id       TEXT NOT NULL,
    scope        TEXT NOT NULL,          -- "charges", or an API route for the lab's own endpoints
    key          TEXT NOT NULL,
    fingerprint  TEXT NOT NULL,          -- SHA-256 of the canonical request
    state        TEXT NOT NULL CHECK (state IN ('in-flight', 'done')),
    token        TEXT NOT NULL,          -- who holds the claim
    status       INTEGER,
    location     TEXT,
    content_type TEXT,
    body         BLOB,
    locked_until INTEGER NOT NULL,       -- unix ms: an in-flight claim older than this is stale
    expires_at   INTEGER NOT NULL,       -- unix ms: after this the key may be used afresh
    created_at   TEXT NOT NULL,
    PRIMARY KEY (lab_id, scope, key)
) WITHOUT ROWID;

-- operations and attempts are the lab's history: what the simulated client did.
CREATE TABLE IF NOT EXISTS operations (
    lab_id       TEXT NOT NULL,
    id           TEXT NOT NULL,
    seq          INTEGER NOT NULL,
    order_id     TEXT NOT NULL,
    amount       INTEGER NOT NULL,
    key_strategy TEXT NOT NULL,
    key          TEXT,                   -- the operation's key, for strategies fixed per operation
    created_at   TEXT NOT NULL,
    PRIMARY KEY (lab_id, id)
);
CREATE INDEX IF NOT EXISTS operations_lab_seq ON operations (lab_id, seq);

CREATE TABLE IF NOT EXISTS attempts (
    lab_id      TEXT NOT NULL,
    op_id       TEXT NOT NULL,
    n           INTEGER NOT NULL,
    key         TEXT,
    fate        TEXT NOT NULL,
    status      INTEGER NOT NULL DEFAULT 0,
    error       TEXT,
    outcome     TEXT NOT NULL,
    deliveries  TEXT NOT NULL DEFAULT '[]', -- JSON: what the server did with each copy it received
    started_at  TEXT NOT NULL,
    finished_at TEXT,
    PRIMARY KEY (lab_id, op_id, n)
);

-- lab_actions is what was done to a lab since it was made or last reset:
-- first its settings then ("base"), then every action in order. A scenario
-- URL carries it, and replaying it with the same seed rebuilds the ledger.
CREATE TABLE IF NOT EXISTS lab_actions (
    lab_id TEXT NOT NULL,
    seq    INTEGER NOT NULL,
    action TEXT NOT NULL, -- JSON of Action
    PRIMARY KEY (lab_id, seq)
);

-- lab_lessons is the guided lesson open in a lab and how far it has gone,
-- so that a restart of the server does not lose a class's place.
CREATE TABLE IF NOT EXISTS lab_lessons (
    lab_id TEXT PRIMARY KEY,
    lesson INTEGER NOT NULL,
    ready  INTEGER NOT NULL,
    next   INTEGER NOT NULL
) WITHOUT ROWID;
