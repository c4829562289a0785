-- Sealed states: a row may hold its state sealed with a key (an AEAD box) instead of clear.
--
-- `key_id` names the key a row is sealed with: 16 hex digits derived from the key, which
-- identify it without revealing it. NULL means the bytes are clear, as every row before this
-- migration is, so nothing is rewritten. `checksum` stays the XXH64 of the stored bytes (the
-- sealed ones), so a damaged row is found without the key; `encoding` stays the encoding of
-- what the box holds. A quarantined row keeps its key id, so its bytes stay openable.
--
-- ADD COLUMN with no constraint changes no row: the migration is instant at any size.
ALTER TABLE states ADD COLUMN key_id TEXT;
ALTER TABLE quarantine ADD COLUMN key_id TEXT;
