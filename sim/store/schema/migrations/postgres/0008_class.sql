-- The eighth numbered migration on PostgreSQL, as SQLite's 0008: a class
-- on a lab (SPEC, "Predict, then see"). One class per lab: its join code, the teacher's token (a SHA-256
-- of it, never the token), when it ends. Its questions in order, each
-- open for votes, running (the vote closed, the step on its way) or
-- revealed, with what the step did once measured; one vote per voter per
-- question, changed in place until the reveal.
CREATE TABLE IF NOT EXISTS classes (
    lab_id     TEXT PRIMARY KEY REFERENCES labs (id) ON DELETE CASCADE,
    code       TEXT NOT NULL UNIQUE,
    teacher    TEXT NOT NULL,
    origin     TEXT NOT NULL,              -- where phones join: the scheme and host the class was started at
    started_at BIGINT NOT NULL,
    ends_at    BIGINT NOT NULL,
    asked      BIGINT NOT NULL DEFAULT 0
);

CREATE TABLE IF NOT EXISTS class_questions (
    lab_id      TEXT NOT NULL REFERENCES classes (lab_id) ON DELETE CASCADE,
    n           BIGINT NOT NULL,
    lesson      BIGINT NOT NULL,           -- the lesson, 0 for the generic question
    step        BIGINT NOT NULL,           -- the lesson's step, from 0
    action      TEXT NOT NULL,              -- what runs at the reveal (JSON)
    measure     TEXT NOT NULL,              -- what decides the right choice
    order_id    TEXT NOT NULL,
    choices     TEXT NOT NULL,              -- the choices' codes, comma-separated
    state       TEXT NOT NULL CHECK (state IN ('open', 'running', 'revealed')),
    stamp       BIGINT NOT NULL DEFAULT 0, -- votes taken: each vote's write locks the question
    before      TEXT NOT NULL,              -- what was measured when it was asked (JSON)
    seen        TEXT NOT NULL DEFAULT '',   -- what was measured after the step (JSON)
    run_until   BIGINT NOT NULL DEFAULT 0, -- running: another reveal may take over after
    asked_at    BIGINT NOT NULL,
    revealed_at BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (lab_id, n)
);

CREATE TABLE IF NOT EXISTS class_votes (
    lab_id TEXT NOT NULL,
    n      BIGINT NOT NULL,
    voter  TEXT NOT NULL,
    choice TEXT NOT NULL,
    at     BIGINT NOT NULL,
    PRIMARY KEY (lab_id, n, voter),
    FOREIGN KEY (lab_id, n) REFERENCES class_questions (lab_id, n) ON DELETE CASCADE
);
