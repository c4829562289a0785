-- Scenes: windows have a persistent identity (UIKit's UISceneSession.persistentIdentifier).
--
-- One row per window scene the application has archived. `hierarchy.scene` holds the scene's
-- identifier. `path_prefix` is the restoration-path component the scene's controllers save
-- under: '' for the default scene ("main"), which keeps the paths of single-window apps, and
-- the scene identifier for every other scene, so two windows showing the same controllers
-- keep separate states.
--
-- Scenes archived before this migration were keyed by window position ("main", "window1",
-- ...) and all saved under unprefixed paths; they keep '' so their states stay where they are
-- (nothing is moved, split or lost). Scenes created afterwards get their own prefix.
CREATE TABLE scenes (
    identifier  TEXT    NOT NULL PRIMARY KEY,
    path_prefix TEXT    NOT NULL,
    created_at  INTEGER NOT NULL  -- milliseconds since 1970-01-01 UTC
) STRICT, WITHOUT ROWID;

INSERT INTO scenes (identifier, path_prefix, created_at)
    SELECT scene, '', min(updated_at) FROM hierarchy GROUP BY scene;
