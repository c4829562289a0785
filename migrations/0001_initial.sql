-- Schema 1: restorable states, quarantine, the window hierarchy archive,
-- memory-pressure events and metadata. Applied in one transaction by the
-- migrator, which records it in schema_migrations and PRAGMA user_version.

-- One row per restoration path. `generation` rises by one on every write that
-- changes the row, so a controller instance can tell whether the store holds
-- something newer than what it has seen. `checksum` (XXH64 of `bytes`, as a
-- signed 64-bit integer) sits before `bytes` so an unchanged-save check never
-- reads the blob's overflow pages.
CREATE TABLE states (
    path        TEXT    NOT NULL PRIMARY KEY,
    type_name   TEXT    NOT NULL,
    version     INTEGER NOT NULL CHECK (version >= 0),
    generation  INTEGER NOT NULL CHECK (generation >= 1),
    encoding    TEXT    NOT NULL CHECK (encoding IN ('json', 'binary')),
    checksum    INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL, -- milliseconds since 1970-01-01 UTC
    bytes       BLOB    NOT NULL
) STRICT, WITHOUT ROWID;

-- Rows that could not be decoded or migrated, moved here with the reason and
-- their original bytes. Nothing is deleted silently.
CREATE TABLE quarantine (
    id             INTEGER PRIMARY KEY,
    path           TEXT    NOT NULL,
    type_name      TEXT    NOT NULL,
    version        INTEGER NOT NULL,
    generation     INTEGER NOT NULL,
    encoding       TEXT    NOT NULL,
    checksum       INTEGER NOT NULL,
    updated_at     INTEGER NOT NULL,
    reason         TEXT    NOT NULL,
    quarantined_at INTEGER NOT NULL,
    bytes          BLOB    NOT NULL
) STRICT;
CREATE INDEX quarantine_by_path ON quarantine(path);

-- The window hierarchy archive: which controllers, by storyboard identifier,
-- in which containers. One row per window scene; `set_aside` rows are archives
-- the crash-loop guard refused to restore, kept for inspection.
CREATE TABLE hierarchy (
    scene       TEXT    NOT NULL,
    set_aside   INTEGER NOT NULL DEFAULT 0 CHECK (set_aside IN (0, 1)),
    archive     BLOB    NOT NULL,
    updated_at  INTEGER NOT NULL,
    PRIMARY KEY (scene, set_aside)
) STRICT;

-- Memory-pressure events as the application handled them.
CREATE TABLE pressure_events (
    id              INTEGER PRIMARY KEY,
    occurred_at     INTEGER NOT NULL, -- milliseconds since 1970-01-01 UTC
    level           INTEGER NOT NULL CHECK (level IN (0, 1, 2)),
    available_bytes INTEGER NOT NULL,
    rss_before      INTEGER NOT NULL,
    rss_after       INTEGER NOT NULL,
    duration_us     INTEGER NOT NULL
) STRICT;

-- Small key/value facts about the database and the application using it.
CREATE TABLE metadata (
    key   TEXT NOT NULL PRIMARY KEY,
    value TEXT NOT NULL
) STRICT, WITHOUT ROWID;
