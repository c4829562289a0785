-- Schema 3: the file says it is a StateStore database.
--
-- PRAGMA application_id writes 0x53745374 ("StSt") at offset 68 of the header, so
-- StateStore (and file(1), and any other tool) can tell its databases from other
-- programs' SQLite files and refuse to alter those. Databases from before this
-- migration are recognised by their schema_migrations and states tables.
-- https://www.sqlite.org/pragma.html#pragma_application_id
PRAGMA application_id = 1400132468;
