#ifndef STATESTORE_SQLITE_SHIM_H
#define STATESTORE_SQLITE_SHIM_H

#include <sqlite3.h>

// Swift cannot call C variadic functions, nor import macros that cast to
// function pointers. These thin wrappers give the few we need a fixed signature.

/// `sqlite3_db_config` for the integer on/off options
/// (`SQLITE_DBCONFIG_DEFENSIVE`, `SQLITE_DBCONFIG_TRUSTED_SCHEMA`, ...).
/// https://www.sqlite.org/c3ref/db_config.html
static inline int csqlite_db_config_int(sqlite3 *db, int op, int value, int *result) {
    return sqlite3_db_config(db, op, value, result);
}

/// `sqlite3_config(SQLITE_CONFIG_LOG, ...)`: installs the process-wide error log callback.
/// Must run before the library is initialised (before the first open).
static inline int csqlite_config_log(void (*callback)(void *, int, const char *), void *context) {
    return sqlite3_config(SQLITE_CONFIG_LOG, callback, context);
}

/// `SQLITE_TRANSIENT`: SQLite copies the bound bytes before the call returns.
static inline sqlite3_destructor_type csqlite_transient(void) {
    return SQLITE_TRANSIENT;
}

/// `SQLITE_STATIC`: the bound bytes outlive the statement's next step or reset.
static inline sqlite3_destructor_type csqlite_static(void) {
    return SQLITE_STATIC;
}

#endif
