-- Schema 2: `states` becomes an ordinary rowid table, its path a unique key.
--
-- As a WITHOUT ROWID table, `states` kept every row in an index b-tree, whose cells
-- hold at most 1,002 bytes of a 4 KiB page before spilling: a 1 KB state left 489
-- bytes in its leaf and the rest alone on an overflow page (4.7 KiB of file per
-- 1 KB state), so every save rewrote the leaf, a new overflow page and the freelist
-- (about four WAL frames instead of one), and every restore read two pages.
-- A rowid table keeps rows of up to ~4 KiB in the leaf; the path moves to an index
-- that rewriting a state's bytes does not touch.
-- https://www.sqlite.org/withoutrowid.html#when_to_use_without_rowid
CREATE TABLE states_v2 (
    path        TEXT    NOT NULL PRIMARY KEY,
    type_name   TEXT    NOT NULL,
    version     INTEGER NOT NULL CHECK (version >= 0),
    generation  INTEGER NOT NULL CHECK (generation >= 1),
    encoding    TEXT    NOT NULL CHECK (encoding IN ('json', 'binary')),
    checksum    INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL, -- milliseconds since 1970-01-01 UTC
    bytes       BLOB    NOT NULL
) STRICT;

INSERT INTO states_v2 (path, type_name, version, generation, encoding, checksum, updated_at, bytes)
    SELECT path, type_name, version, generation, encoding, checksum, updated_at, bytes
    FROM states ORDER BY path;
DROP TABLE states;
ALTER TABLE states_v2 RENAME TO states;
