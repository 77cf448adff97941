-- The twelfth numbered migration on SQLite: a lab's recorded actions in one
-- B-tree. lab_actions had a rowid and its primary key as an index beside
-- it, two trees for every row a direct charge records; WITHOUT ROWID keeps
-- the rows in the primary key's order alone. Every row is kept.
CREATE TABLE lab_actions_one (
    lab_id TEXT NOT NULL REFERENCES labs (id) ON DELETE CASCADE,
    seq    INTEGER NOT NULL,
    action TEXT NOT NULL, -- JSON of Action
    PRIMARY KEY (lab_id, seq)
) WITHOUT ROWID;
INSERT INTO lab_actions_one (lab_id, seq, action) SELECT lab_id, seq, action FROM lab_actions;
DROP TABLE lab_actions;
ALTER TABLE lab_actions_one RENAME TO lab_actions;
