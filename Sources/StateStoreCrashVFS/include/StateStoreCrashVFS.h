#ifndef STATESTORE_CRASH_VFS_H
#define STATESTORE_CRASH_VFS_H

#include <stdint.h>

/// A power cut, simulated under SQLite: a VFS over the default unix VFS that keeps, for every
/// file under a root folder, each 512-byte sector's content as it was at the file's last sync
/// and after every write since. At the crash point (the Nth write, truncate or sync), each such
/// sector is set to one of its versions — the last (kept), the synced one (dropped), or one in
/// between (torn: a multi-sector write lands in part) — files created or deleted since their
/// folder was last synced may come back or vanish, and every later call fails with an I/O
/// error, as if the machine had stopped. Directory syncs are seen through the unix VFS's own
/// `openDirectory` system call, creations and deletions through its `open` and `unlink`.
///
/// For tests and benchmarks only; nothing in the StateStore library uses it.

#ifdef __cplusplus
extern "C" {
#endif

/// What a crash does with each sector written since its file's last sync.
typedef enum {
    /// A random version per sector, and a coin per unsynced creation or deletion.
    STATESTORE_CRASH_RANDOM = 0,
    /// Every write kept, every creation and deletion kept: the page cache written back whole.
    STATESTORE_CRASH_KEEP_ALL = 1,
    /// Every unsynced write dropped, every unsynced creation and deletion undone.
    STATESTORE_CRASH_DROP_ALL = 2,
} statestore_crash_policy;

typedef struct {
    int64_t operations;          ///< writes, truncates and syncs counted so far
    int crashed;                 ///< 1 once the crash has happened
    int64_t sectors_kept;        ///< unsynced sectors left with their last version
    int64_t sectors_dropped;     ///< unsynced sectors put back to their synced version
    int64_t sectors_torn;        ///< unsynced sectors left with a version in between
    int64_t entries_vanished;    ///< files created since their folder's last sync, removed
    int64_t entries_restored;    ///< files deleted since their folder's last sync, brought back
    int64_t entries_kept;        ///< unsynced creations and deletions that stood
} statestore_crash_stats;

/// Registers the VFS as "statestore-crash" (the default VFS when `make_default` is non-zero;
/// a call without it leaves the VFS the default when it already is) and installs its
/// system-call hooks in the unix VFS. Idempotent. Returns an SQLite code.
int statestore_crashvfs_register(int make_default);

/// The functions below without a session argument drive one session of the process (the
/// global one); `statestore_crashvfs_session_begin` starts more, each on a folder of its own,
/// side by side with it: a file belongs to the session whose folder holds it, and a crash, its
/// figures and its end touch that session's files alone.

/// Starts tracking the files under `root` (a folder path, no trailing slash) as the global
/// session, ending the one before: from now on writes there are recorded. `crash_at` is the 1-based operation at which the crash happens
/// (0: never, until `statestore_crashvfs_crash_now`). `seed` drives every random choice.
void statestore_crashvfs_begin(const char *root, uint64_t seed, int64_t crash_at, statestore_crash_policy policy);

/// Crashes now (when tracking and not crashed yet): applies the policy to the real files.
void statestore_crashvfs_crash_now(void);

/// Stops tracking: forgets every record without touching the files (after a crash the files
/// already hold what survived), and lets calls through again.
void statestore_crashvfs_end(void);

/// The global session's figures; after its end, the figures it ended with.
statestore_crash_stats statestore_crashvfs_stats(void);

/// While `failing` is non-zero, every sync of a file of the current session fails with
/// `SQLITE_IOERR_FSYNC` and syncs nothing, as `fdatasync` does on storage that reports an I/O
/// error; every other call works, and what was written stays unsynced (a later crash applies
/// the policy to it). Counts no operation.
void statestore_crashvfs_fail_syncs(int failing);

/// Files of the current session SQLite still has open: 0 once every connection is closed.
int64_t statestore_crashvfs_open_files(void);

/// A session on a folder of its own.
typedef struct statestore_crash_session statestore_crash_session;

/// Starts a session on the files under `root`, as `statestore_crashvfs_begin` does, beside
/// the sessions running. Returns NULL when a running session's folder holds `root` or lies in
/// it (a file belongs to one session at most).
statestore_crash_session *statestore_crashvfs_session_begin(
    const char *root, uint64_t seed, int64_t crash_at, statestore_crash_policy policy);

/// Sets the seed of the session's random choices, which are all made by the crash: a seed set
/// just before `statestore_crashvfs_session_crash_now` draws as one given to the begin does.
void statestore_crashvfs_session_reseed(statestore_crash_session *session, uint64_t seed);

/// Crashes the session's files now (when not crashed yet).
void statestore_crashvfs_session_crash_now(statestore_crash_session *session);

statestore_crash_stats statestore_crashvfs_session_stats(statestore_crash_session *session);

/// The session's files SQLite still has open.
int64_t statestore_crashvfs_session_open_files(statestore_crash_session *session);

/// Ends the session and frees it, as `statestore_crashvfs_end` ends the global one.
void statestore_crashvfs_session_end(statestore_crash_session *session);

#ifdef __cplusplus
}
#endif

#endif
