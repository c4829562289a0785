// A power cut under SQLite, for tests: see include/StateStoreCrashVFS.h.
//
// The model. A file's content on disk after a power cut is, sector by sector, one of the
// contents that sector had since the file's last sync: the page cache may have written back
// any of them, in any order across sectors (the kernel writes pages, not transactions). So for
// every tracked file the VFS keeps each sector's synced content (version 0, "absent" past the
// end of the file) and its content after every later write or truncate; a sync makes the
// current content the synced one. A folder entry made or removed since the folder's last
// sync may or may not have reached the disk either. Reads are served by the real file, which
// always holds the newest content, so SQLite sees exactly what it would without the VFS until
// the crash; the crash then writes the chosen versions into the real files.

#define _GNU_SOURCE
#include "StateStoreCrashVFS.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SECTOR 512

// MARK: - Records

typedef struct {
    int length;              // bytes present in the sector; -1: past the end of the file
    unsigned char *bytes;
} Version;

typedef struct {
    int64_t index;           // sector number; -1 marks an empty slot
    int count, capacity;
    Version *versions;       // versions[0]: as of the last sync
} Sector;

typedef struct Tracked {
    char *path;
    int fd;                  // the file, opened once to read what a write replaces; -1: not yet
    int64_t used, capacity;  // open-addressing table of sectors
    Sector *slots;
    struct Tracked *next;
} Tracked;

typedef enum { EVENT_CREATE, EVENT_DELETE } EventKind;

typedef struct Event {
    EventKind kind;
    char *path;
    char *stash;             // EVENT_DELETE: a hard link to the removed file, or NULL
    int decided;             // settled by a crash
    struct Event *next;
} Event;

static pthread_mutex_t lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;

/// A recording of the files under one folder, from its begin to its end. Sessions on folders
/// apart run side by side (tests of one process each have their own); every file belongs to
/// the session whose folder holds it.
struct statestore_crash_session {
    /// Sessions are numbered; a file keeps the number of the session it was opened in, and
    /// once that session crashed the file stays dead (every call fails) even after the session
    /// ended: a connection closed late must not write over what the crash left.
    int64_t number;
    char *root;
    size_t rootLength;
    uint64_t rng;
    int64_t crashAt;
    statestore_crash_policy policy;
    statestore_crash_stats stats;
    int64_t keepShare;      // percent of unsynced sectors a random cut keeps as last written
    Tracked *tracked;
    Event *events, *lastEvent;
    int failingSyncs;       // statestore_crashvfs_fail_syncs
    int64_t openFiles;      // its files still open
    struct statestore_crash_session *next;
};
typedef struct statestore_crash_session Session;

static Session *sessions;       // every session begun and not ended
static Session *global;         // the one the functions without a session argument drive
static statestore_crash_stats globalStats;  // its figures, kept after it ended
static int64_t sessionCount;
static int64_t stashCounter;
static unsigned char *crashedSessions;
static int64_t crashedCapacity;

static int session_crashed(int64_t number) {
    return number > 0 && number < crashedCapacity && crashedSessions[number];
}

static uint64_t next_random(Session *s) {
    // xorshift64*
    s->rng ^= s->rng >> 12;
    s->rng ^= s->rng << 25;
    s->rng ^= s->rng >> 27;
    return s->rng * 2685821657736338717ULL;
}

static int under_root(const char *path, const char *root, size_t rootLength) {
    return path && strncmp(path, root, rootLength) == 0 && (path[rootLength] == '/' || path[rootLength] == 0);
}

/// The running session whose folder holds `path`, if any.
static Session *session_for_path(const char *path) {
    for (Session *s = sessions; s; s = s->next) {
        if (under_root(path, s->root, s->rootLength)) return s;
    }
    return NULL;
}

/// The running session numbered `number`, if it has not ended.
static Session *session_numbered(int64_t number) {
    for (Session *s = sessions; number && s; s = s->next) {
        if (s->number == number) return s;
    }
    return NULL;
}

static Tracked *tracked_for(Session *session, const char *path, int create) {
    for (Tracked *t = session->tracked; t; t = t->next) {
        if (strcmp(t->path, path) == 0) return t;
    }
    if (!create) return NULL;
    Tracked *t = calloc(1, sizeof(Tracked));
    t->path = strdup(path);
    t->fd = -1;
    t->next = session->tracked;
    session->tracked = t;
    return t;
}

static void free_sectors(Tracked *t) {
    for (int64_t i = 0; i < t->capacity; i++) {
        Sector *s = &t->slots[i];
        if (s->index < 0) continue;
        for (int v = 0; v < s->count; v++) free(s->versions[v].bytes);
        free(s->versions);
    }
    free(t->slots);
    t->slots = NULL;
    t->used = t->capacity = 0;
}

static void forget_tracked(Session *session, const char *path) {
    for (Tracked **link = &session->tracked; *link; link = &(*link)->next) {
        if (strcmp((*link)->path, path) == 0) {
            Tracked *t = *link;
            *link = t->next;
            free_sectors(t);
            if (t->fd >= 0) close(t->fd);
            free(t->path);
            free(t);
            return;
        }
    }
}

static Sector *sector_slot(Tracked *t, int64_t index, int create) {
    if (create && (t->used + 1) * 2 > t->capacity) {
        int64_t oldCapacity = t->capacity;
        Sector *old = t->slots;
        t->capacity = oldCapacity ? oldCapacity * 2 : 64;
        t->slots = malloc(sizeof(Sector) * (size_t)t->capacity);
        for (int64_t i = 0; i < t->capacity; i++) t->slots[i].index = -1;
        for (int64_t i = 0; i < oldCapacity; i++) {
            if (old[i].index < 0) continue;
            int64_t at = (int64_t)((uint64_t)old[i].index * 11400714819323198485ULL % (uint64_t)t->capacity);
            while (t->slots[at].index >= 0) at = (at + 1) % t->capacity;
            t->slots[at] = old[i];
        }
        free(old);
    }
    if (t->capacity == 0) return NULL;
    int64_t at = (int64_t)((uint64_t)index * 11400714819323198485ULL % (uint64_t)t->capacity);
    while (t->slots[at].index >= 0) {
        if (t->slots[at].index == index) return &t->slots[at];
        at = (at + 1) % t->capacity;
    }
    if (!create) return NULL;
    Sector *s = &t->slots[at];
    s->index = index;
    s->count = 0;
    s->capacity = 0;
    s->versions = NULL;
    t->used++;
    return s;
}

static void add_version(Sector *s, const unsigned char *bytes, int length) {
    if (s->count == s->capacity) {
        s->capacity = s->capacity ? s->capacity * 2 : 2;
        s->versions = realloc(s->versions, sizeof(Version) * (size_t)s->capacity);
    }
    Version *v = &s->versions[s->count++];
    v->length = length;
    v->bytes = NULL;
    if (length > 0) {
        v->bytes = malloc((size_t)length);
        memcpy(v->bytes, bytes, (size_t)length);
    }
}

static void add_event(Session *session, EventKind kind, const char *path, const char *stash) {
    Event *e = calloc(1, sizeof(Event));
    e->kind = kind;
    e->path = strdup(path);
    e->stash = stash ? strdup(stash) : NULL;
    if (session->lastEvent) session->lastEvent->next = e; else session->events = e;
    session->lastEvent = e;
}

static void free_events(Session *session, int removeStashes) {
    for (Event *e = session->events, *next; e; e = next) {
        next = e->next;
        if (e->stash && removeStashes) unlink(e->stash);
        free(e->path);
        free(e->stash);
        free(e);
    }
    session->events = session->lastEvent = NULL;
}

// MARK: - Reading the real file's sectors

/// Reads sectors [first, last] of `fd` into `out` (room for the whole range) and sets each
/// sector's present length in `lengths` (-1 past the end).
static void read_sectors(int fd, int64_t first, int64_t last, unsigned char *out, int *lengths) {
    struct stat st;
    int64_t size = fstat(fd, &st) == 0 ? (int64_t)st.st_size : 0;
    for (int64_t s = first; s <= last; s++) {
        int64_t start = s * SECTOR;
        int length = start >= size ? -1 : (int)(size - start < SECTOR ? size - start : SECTOR);
        lengths[s - first] = length;
        if (length > 0) {
            ssize_t got = pread(fd, out + (s - first) * SECTOR, (size_t)length, start);
            if (got < length) {
                memset(out + (s - first) * SECTOR + (got > 0 ? got : 0), 0, (size_t)(length - (got > 0 ? got : 0)));
            }
        }
    }
}

/// Records, for sectors [first, last] of `path`, their content before a change (when the
/// sector has no record since the last sync) — `after` 0 — or after it — `after` 1.
static void record_sectors(Session *session, const char *path, int64_t first, int64_t last, int after) {
    if (last < first) return;
    Tracked *t = tracked_for(session, path, 1);
    if (t->fd < 0) t->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (t->fd < 0) return;
    int64_t count = last - first + 1;
    unsigned char *buffer = malloc((size_t)(count * SECTOR));
    int *lengths = malloc(sizeof(int) * (size_t)count);
    read_sectors(t->fd, first, last, buffer, lengths);
    for (int64_t s = first; s <= last; s++) {
        Sector *sector = sector_slot(t, s, !after);
        if (!sector) continue;
        if (!after && sector->count > 0) continue;
        add_version(sector, buffer + (s - first) * SECTOR, lengths[s - first]);
    }
    free(buffer);
    free(lengths);
}

/// Records a write of `amount` bytes at `offset` before it is made: each sector's content as
/// of the last sync (read from the file the first time), then its content after the write,
/// which is its newest version with the written bytes laid over it.
static void record_write(Session *session, const char *path, const unsigned char *bytes, int amount, int64_t offset) {
    int64_t first = offset / SECTOR, last = (offset + amount - 1) / SECTOR;
    Tracked *t = tracked_for(session, path, 1);
    int64_t unread = -1;
    for (int64_t s = first; s <= last; s++) {
        Sector *sector = sector_slot(t, s, 0);
        if (!sector || sector->count == 0) { unread = s; break; }
    }
    if (unread >= 0) {
        // Some sectors have no record yet: their synced content comes from the file.
        record_sectors(session, path, first, last, 0);
    }
    unsigned char content[SECTOR];
    for (int64_t s = first; s <= last; s++) {
        Sector *sector = sector_slot(t, s, 0);
        if (!sector || sector->count == 0) continue;
        Version *newest = &sector->versions[sector->count - 1];
        int length = newest->length > 0 ? newest->length : 0;
        memset(content, 0, SECTOR);
        if (length > 0) memcpy(content, newest->bytes, (size_t)length);
        int64_t start = s * SECTOR;
        int64_t from = offset > start ? offset - start : 0;
        int64_t to = offset + amount - start < SECTOR ? offset + amount - start : SECTOR;
        memcpy(content + from, bytes + (start + from - offset), (size_t)(to - from));
        if (to > length) length = (int)to;
        add_version(sector, content, length);
    }
}

// MARK: - The crash

static void apply_file(Session *session, Tracked *t) {
    if (t->used == 0) return;
    int fd = open(t->path, O_RDWR | O_CLOEXEC);
    if (fd < 0) return;
    struct stat st;
    int64_t size = fstat(fd, &st) == 0 ? (int64_t)st.st_size : 0;
    int64_t sectors = (size + SECTOR - 1) / SECTOR;
    // The highest sector no write touched since the sync: it, and everything below it that
    // no write touched either, is on disk as it is.
    int64_t end = 0;
    for (int64_t s = sectors - 1; s >= 0; s--) {
        if (!sector_slot(t, s, 0)) { end = s * SECTOR + (s == sectors - 1 ? size - s * SECTOR : SECTOR); break; }
    }
    // Each recorded sector takes one of its versions.
    int *chosen = malloc(sizeof(int) * (size_t)t->capacity);
    for (int64_t i = 0; i < t->capacity; i++) {
        Sector *s = &t->slots[i];
        chosen[i] = -1;
        if (s->index < 0) continue;
        int pick;
        switch (session->policy) {
        case STATESTORE_CRASH_KEEP_ALL: pick = s->count - 1; break;
        case STATESTORE_CRASH_DROP_ALL: pick = 0; break;
        default:
            // The disk had written back a share of the cache, chosen per cut (so some cuts keep
            // nearly everything and some nearly nothing); the other sectors hold any version.
            pick = (int64_t)(next_random(session) % 100) < session->keepShare ? s->count - 1
                : (int)(next_random(session) % (uint64_t)s->count);
            break;
        }
        chosen[i] = pick;
        if (s->count == 1) { /* nothing written after the snapshot */ }
        else if (pick == s->count - 1) session->stats.sectors_kept++;
        else if (pick == 0) session->stats.sectors_dropped++;
        else session->stats.sectors_torn++;
        Version *v = &s->versions[pick];
        if (v->length >= 0) {
            int64_t last = s->index * SECTOR + v->length;
            if (last > end) end = last;
        }
    }
    if (ftruncate(fd, end) != 0) { /* the file keeps its size: reported by the checks after */ }
    unsigned char zeros[SECTOR] = {0};
    for (int64_t i = 0; i < t->capacity; i++) {
        Sector *s = &t->slots[i];
        if (s->index < 0) continue;
        Version *v = &s->versions[chosen[i]];
        int64_t start = s->index * SECTOR;
        if (start >= end) continue;
        int room = (int)(end - start < SECTOR ? end - start : SECTOR);
        if (v->length > 0) {
            int n = v->length < room ? v->length : room;
            if (pwrite(fd, v->bytes, (size_t)n, start) != n) { /* see above */ }
            if (n < room && pwrite(fd, zeros, (size_t)(room - n), start + n) != room - n) { }
        } else if (pwrite(fd, zeros, (size_t)room, start) != room) { }
    }
    free(chosen);
    close(fd);
}

static void crash_locked(Session *session) {
    if (!session || session->stats.crashed) return;
    session->stats.crashed = 1;
    int64_t number = session->number;
    if (number >= crashedCapacity) {
        int64_t capacity = crashedCapacity ? crashedCapacity : 1024;
        while (capacity <= number) capacity *= 2;
        crashedSessions = realloc(crashedSessions, (size_t)capacity);
        memset(crashedSessions + crashedCapacity, 0, (size_t)(capacity - crashedCapacity));
        crashedCapacity = capacity;
    }
    crashedSessions[number] = 1;
    session->keepShare = (int64_t)(next_random(session) % 101);
    // Folder entries, path by path: of the creations and deletions since the folder's last
    // sync, a prefix reached the disk (a journaling file system commits them in order).
    statestore_crash_policy policy = session->policy;
    statestore_crash_stats *stats = &session->stats;
    for (Event *e = session->events; e; e = e->next) {
        if (e->decided) continue;
        int count = 0;
        for (Event *f = e; f; f = f->next) {
            if (!f->decided && strcmp(f->path, e->path) == 0) count++;
        }
        Event **list = malloc(sizeof(Event *) * (size_t)count);
        count = 0;
        for (Event *f = e; f; f = f->next) {
            if (!f->decided && strcmp(f->path, e->path) == 0) list[count++] = f;
        }
        int stood = policy == STATESTORE_CRASH_KEEP_ALL ? count
            : policy == STATESTORE_CRASH_DROP_ALL ? 0 : (int)(next_random(session) % (uint64_t)(count + 1));
        int exists = stood == 0 ? list[0]->kind == EVENT_DELETE : list[stood - 1]->kind == EVENT_CREATE;
        struct stat st;
        int present = lstat(e->path, &st) == 0;
        if (stood == count) {
            stats->entries_kept += count;
        } else if (exists) {
            // The file as it was when the first deletion that did not stand removed it.
            Event *deletion = list[stood];
            if (deletion->kind == EVENT_DELETE && deletion->stash) {
                forget_tracked(session, e->path);
                Tracked *t = tracked_for(session, deletion->stash, 0);
                if (t) { apply_file(session, t); forget_tracked(session, deletion->stash); }
                if (rename(deletion->stash, e->path) == 0) stats->entries_restored++;
            }
        } else if (present) {
            unlink(e->path);
            forget_tracked(session, e->path);
            stats->entries_vanished++;
        }
        for (int i = 0; i < count; i++) {
            list[i]->decided = 1;
            if (list[i]->stash) {
                forget_tracked(session, list[i]->stash);
                unlink(list[i]->stash);  // gone already when it was brought back
            }
        }
        free(list);
    }
    // File contents.
    for (Tracked *t = session->tracked; t; t = t->next) {
        struct stat st;
        if (lstat(t->path, &st) == 0) apply_file(session, t);
    }
}

/// Counts one operation; returns 1 when it is the one the crash happens at (the crash has
/// then happened, and the operation must not).
static int count_operation(Session *session) {
    session->stats.operations++;
    if (session->crashAt > 0 && session->stats.operations == session->crashAt) {
        crash_locked(session);
        return 1;
    }
    return 0;
}

// MARK: - System calls of the unix VFS

static sqlite3_vfs *unixVFS;
static int (*realOpen)(const char *, int, int);
static int (*realUnlink)(const char *);
static int (*realOpenDirectory)(const char *, int *);

static int hooked_open(const char *path, int flags, int mode) {
    pthread_mutex_lock(&lock);
    Session *session = session_for_path(path);
    if (!session) {
        pthread_mutex_unlock(&lock);
        return realOpen(path, flags, mode);
    }
    if (session->stats.crashed) {
        pthread_mutex_unlock(&lock);
        errno = EIO;
        return -1;
    }
    int existed = access(path, F_OK) == 0;
    int fd = realOpen(path, flags, mode);
    if (fd >= 0 && !existed && (flags & O_CREAT)) add_event(session, EVENT_CREATE, path, NULL);
    pthread_mutex_unlock(&lock);
    return fd;
}

static int hooked_unlink(const char *path) {
    pthread_mutex_lock(&lock);
    Session *session = session_for_path(path);
    if (!session) {
        pthread_mutex_unlock(&lock);
        return realUnlink(path);
    }
    if (session->stats.crashed) {
        pthread_mutex_unlock(&lock);
        errno = EIO;
        return -1;
    }
    char stash[4096];
    snprintf(stash, sizeof stash, "%s.crash-stash-%lld", path, (long long)++stashCounter);
    int linked = link(path, stash) == 0;
    int rc = realUnlink(path);
    if (rc == 0) {
        // The removed file's unsynced writes go with it, to be decided if it comes back.
        Tracked *t = tracked_for(session, path, 0);
        if (t) {
            if (linked) { free(t->path); t->path = strdup(stash); } else forget_tracked(session, path);
        }
        add_event(session, EVENT_DELETE, path, linked ? stash : NULL);
    } else if (linked) {
        unlink(stash);
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

static int hooked_open_directory(const char *file, int *fd) {
    int rc = realOpenDirectory(file, fd);
    pthread_mutex_lock(&lock);
    Session *session = rc == SQLITE_OK ? session_for_path(file) : NULL;
    if (session && !session->stats.crashed) {
        // The unix VFS syncs the folder right after opening it: every entry made or removed
        // in it so far is on disk.
        const char *slash = strrchr(file, '/');
        size_t folder = slash ? (size_t)(slash - file) : 0;
        Event **link = &session->events;
        session->lastEvent = NULL;
        while (*link) {
            Event *e = *link;
            const char *eslash = strrchr(e->path, '/');
            size_t efolder = eslash ? (size_t)(eslash - e->path) : 0;
            if (efolder == folder && strncmp(e->path, file, folder) == 0) {
                *link = e->next;
                if (e->stash) {
                    forget_tracked(session, e->stash);
                    unlink(e->stash);
                }
                free(e->path);
                free(e->stash);
                free(e);
            } else {
                session->lastEvent = e;
                link = &e->next;
            }
        }
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

// MARK: - The VFS

typedef struct {
    sqlite3_file base;
    sqlite3_file *real;
    char *path;              // tracked files only
    int64_t session;         // the session it was opened in; 0: untracked
} CrashFile;

/// Whether `p` belongs to a session that crashed: every call on it fails.
static int dead(CrashFile *p) {
    if (!p->session) return 0;
    pthread_mutex_lock(&lock);
    int crashed = session_crashed(p->session);
    pthread_mutex_unlock(&lock);
    return crashed;
}

/// The session that records the writes to `p`: the one it was opened in, while that runs.
static Session *recording(CrashFile *p) {
    return session_numbered(p->session);
}

static int x_close(sqlite3_file *file) {
    CrashFile *p = (CrashFile *)file;
    pthread_mutex_lock(&lock);
    Session *session = session_numbered(p->session);
    if (session) session->openFiles--;
    pthread_mutex_unlock(&lock);
    int rc = p->real->pMethods ? p->real->pMethods->xClose(p->real) : SQLITE_OK;
    free(p->path);
    p->path = NULL;
    return rc;
}

static int x_read(sqlite3_file *file, void *buffer, int amount, sqlite3_int64 offset) {
    CrashFile *p = (CrashFile *)file;
    if (dead(p)) return SQLITE_IOERR_READ;
    return p->real->pMethods->xRead(p->real, buffer, amount, offset);
}

static int x_write(sqlite3_file *file, const void *buffer, int amount, sqlite3_int64 offset) {
    CrashFile *p = (CrashFile *)file;
    if (!p->session) return p->real->pMethods->xWrite(p->real, buffer, amount, offset);
    pthread_mutex_lock(&lock);
    if (session_crashed(p->session)) {
        pthread_mutex_unlock(&lock);
        return SQLITE_IOERR_WRITE;
    }
    Session *session = recording(p);
    if (!session) {
        pthread_mutex_unlock(&lock);
        return p->real->pMethods->xWrite(p->real, buffer, amount, offset);
    }
    if (count_operation(session)) {
        pthread_mutex_unlock(&lock);
        return SQLITE_IOERR_WRITE;
    }
    record_write(session, p->path, buffer, amount, offset);
    int rc = p->real->pMethods->xWrite(p->real, buffer, amount, offset);
    if (rc != SQLITE_OK) {
        // The write did not happen (or not whole: SQLite treats it as failed): forget its versions.
        Tracked *t = tracked_for(session, p->path, 0);
        for (int64_t s = offset / SECTOR; t && s <= (offset + amount - 1) / SECTOR; s++) {
            Sector *sector = sector_slot(t, s, 0);
            if (sector && sector->count > 1) free(sector->versions[--sector->count].bytes);
        }
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

static int x_truncate(sqlite3_file *file, sqlite3_int64 size) {
    CrashFile *p = (CrashFile *)file;
    if (!p->session) return p->real->pMethods->xTruncate(p->real, size);
    pthread_mutex_lock(&lock);
    if (session_crashed(p->session)) {
        pthread_mutex_unlock(&lock);
        return SQLITE_IOERR_TRUNCATE;
    }
    Session *session = recording(p);
    if (!session) {
        pthread_mutex_unlock(&lock);
        return p->real->pMethods->xTruncate(p->real, size);
    }
    if (count_operation(session)) {
        pthread_mutex_unlock(&lock);
        return SQLITE_IOERR_TRUNCATE;
    }
    struct stat st;
    int64_t old = stat(p->path, &st) == 0 ? (int64_t)st.st_size : 0;
    int64_t low = (old < size ? old : size) / SECTOR;
    int64_t high = ((old > size ? old : size) + SECTOR - 1) / SECTOR - 1;
    record_sectors(session, p->path, low, high, 0);
    int rc = p->real->pMethods->xTruncate(p->real, size);
    record_sectors(session, p->path, low, high, 1);
    pthread_mutex_unlock(&lock);
    return rc;
}

static int x_sync(sqlite3_file *file, int flags) {
    CrashFile *p = (CrashFile *)file;
    if (!p->session) return p->real->pMethods->xSync(p->real, flags);
    pthread_mutex_lock(&lock);
    if (session_crashed(p->session)) {
        pthread_mutex_unlock(&lock);
        return SQLITE_IOERR_FSYNC;
    }
    Session *session = recording(p);
    if (!session) {
        pthread_mutex_unlock(&lock);
        return p->real->pMethods->xSync(p->real, flags);
    }
    if (session->failingSyncs) {
        pthread_mutex_unlock(&lock);
        return SQLITE_IOERR_FSYNC;
    }
    if (count_operation(session)) {
        pthread_mutex_unlock(&lock);
        return SQLITE_IOERR_FSYNC;
    }
    int rc = p->real->pMethods->xSync(p->real, flags);
    if (rc == SQLITE_OK) forget_tracked(session, p->path);
    pthread_mutex_unlock(&lock);
    return rc;
}

static int x_file_size(sqlite3_file *file, sqlite3_int64 *size) {
    CrashFile *p = (CrashFile *)file;
    if (dead(p)) return SQLITE_IOERR_FSTAT;
    return p->real->pMethods->xFileSize(p->real, size);
}

static int x_lock(sqlite3_file *file, int level) {
    CrashFile *p = (CrashFile *)file;
    if (dead(p)) return SQLITE_IOERR_LOCK;
    return p->real->pMethods->xLock(p->real, level);
}

static int x_unlock(sqlite3_file *file, int level) {
    CrashFile *p = (CrashFile *)file;
    return p->real->pMethods->xUnlock(p->real, level);
}

static int x_check_reserved_lock(sqlite3_file *file, int *out) {
    CrashFile *p = (CrashFile *)file;
    return p->real->pMethods->xCheckReservedLock(p->real, out);
}

static int x_file_control(sqlite3_file *file, int op, void *arg) {
    CrashFile *p = (CrashFile *)file;
    // Memory-mapped I/O and chunked growth write through the unix VFS's own calls, which
    // the model would not see: refused for tracked files, so the model stays whole.
    if (p->session && (op == SQLITE_FCNTL_CHUNK_SIZE || (op == SQLITE_FCNTL_MMAP_SIZE && arg && *(sqlite3_int64 *)arg > 0))) {
        return SQLITE_NOTFOUND;
    }
    return p->real->pMethods->xFileControl(p->real, op, arg);
}

static int x_sector_size(sqlite3_file *file) {
    CrashFile *p = (CrashFile *)file;
    return p->real->pMethods->xSectorSize(p->real);
}

static int x_device_characteristics(sqlite3_file *file) {
    CrashFile *p = (CrashFile *)file;
    return p->real->pMethods->xDeviceCharacteristics(p->real);
}

static int x_shm_map(sqlite3_file *file, int page, int size, int extend, void volatile **out) {
    CrashFile *p = (CrashFile *)file;
    if (dead(p)) return SQLITE_IOERR_SHMMAP;
    return p->real->pMethods->xShmMap(p->real, page, size, extend, out);
}

static int x_shm_lock(sqlite3_file *file, int offset, int n, int flags) {
    CrashFile *p = (CrashFile *)file;
    return p->real->pMethods->xShmLock(p->real, offset, n, flags);
}

static void x_shm_barrier(sqlite3_file *file) {
    CrashFile *p = (CrashFile *)file;
    p->real->pMethods->xShmBarrier(p->real);
}

static int x_shm_unmap(sqlite3_file *file, int deleteFlag) {
    CrashFile *p = (CrashFile *)file;
    return p->real->pMethods->xShmUnmap(p->real, deleteFlag);
}

static int x_fetch(sqlite3_file *file, sqlite3_int64 offset, int amount, void **out) {
    CrashFile *p = (CrashFile *)file;
    // Memory-mapped reads would bypass nothing (reads are served by the real file), but
    // memory-mapped writes are never used by SQLite; keep it simple and let SQLite read.
    (void)p; (void)offset; (void)amount;
    *out = NULL;
    return SQLITE_OK;
}

static int x_unfetch(sqlite3_file *file, sqlite3_int64 offset, void *pointer) {
    (void)file; (void)offset; (void)pointer;
    return SQLITE_OK;
}

static const sqlite3_io_methods methods = {
    3, x_close, x_read, x_write, x_truncate, x_sync, x_file_size, x_lock, x_unlock,
    x_check_reserved_lock, x_file_control, x_sector_size, x_device_characteristics,
    x_shm_map, x_shm_lock, x_shm_barrier, x_shm_unmap, x_fetch, x_unfetch,
};

static int v_open(sqlite3_vfs *vfs, const char *name, sqlite3_file *file, int flags, int *outFlags) {
    (void)vfs;
    CrashFile *p = (CrashFile *)file;
    p->real = (sqlite3_file *)&p[1];
    p->path = NULL;
    p->session = 0;
    p->base.pMethods = NULL;
    int rc = unixVFS->xOpen(unixVFS, name, p->real, flags, outFlags);
    if (rc != SQLITE_OK) return rc;
    pthread_mutex_lock(&lock);
    Session *session = name ? session_for_path(name) : NULL;
    if (session) {
        p->path = strdup(name);
        p->session = session->number;
        session->openFiles++;
    }
    pthread_mutex_unlock(&lock);
    p->base.pMethods = &methods;
    return SQLITE_OK;
}

static int v_delete(sqlite3_vfs *vfs, const char *name, int syncDir) {
    (void)vfs;
    return unixVFS->xDelete(unixVFS, name, syncDir);
}

static int v_access(sqlite3_vfs *vfs, const char *name, int flags, int *out) {
    (void)vfs;
    return unixVFS->xAccess(unixVFS, name, flags, out);
}

static int v_full_pathname(sqlite3_vfs *vfs, const char *name, int size, char *out) {
    (void)vfs;
    return unixVFS->xFullPathname(unixVFS, name, size, out);
}

static void *v_dl_open(sqlite3_vfs *vfs, const char *name) { (void)vfs; return unixVFS->xDlOpen(unixVFS, name); }
static void v_dl_error(sqlite3_vfs *vfs, int n, char *out) { (void)vfs; unixVFS->xDlError(unixVFS, n, out); }
static void (*v_dl_sym(sqlite3_vfs *vfs, void *handle, const char *symbol))(void) {
    (void)vfs;
    return unixVFS->xDlSym(unixVFS, handle, symbol);
}
static void v_dl_close(sqlite3_vfs *vfs, void *handle) { (void)vfs; unixVFS->xDlClose(unixVFS, handle); }
static int v_randomness(sqlite3_vfs *vfs, int n, char *out) { (void)vfs; return unixVFS->xRandomness(unixVFS, n, out); }
static int v_sleep(sqlite3_vfs *vfs, int micros) { (void)vfs; return unixVFS->xSleep(unixVFS, micros); }
static int v_current_time(sqlite3_vfs *vfs, double *out) { (void)vfs; return unixVFS->xCurrentTime(unixVFS, out); }
static int v_get_last_error(sqlite3_vfs *vfs, int n, char *out) { (void)vfs; return unixVFS->xGetLastError(unixVFS, n, out); }
static int v_current_time_int64(sqlite3_vfs *vfs, sqlite3_int64 *out) {
    (void)vfs;
    return unixVFS->xCurrentTimeInt64(unixVFS, out);
}

static sqlite3_vfs crashVFS = {
    2, 0, 0, NULL, "statestore-crash", NULL,
    v_open, v_delete, v_access, v_full_pathname, v_dl_open, v_dl_error, v_dl_sym, v_dl_close,
    v_randomness, v_sleep, v_current_time, v_get_last_error, v_current_time_int64,
    NULL, NULL, NULL,
};

int statestore_crashvfs_register(int make_default) {
    pthread_mutex_lock(&lock);
    if (!unixVFS) {
        sqlite3_initialize();
        sqlite3_vfs *base = sqlite3_vfs_find("unix");
        if (!base || base->iVersion < 3 || !base->xSetSystemCall) {
            pthread_mutex_unlock(&lock);
            return SQLITE_ERROR;
        }
        realOpen = (int (*)(const char *, int, int))base->xGetSystemCall(base, "open");
        realUnlink = (int (*)(const char *))base->xGetSystemCall(base, "unlink");
        realOpenDirectory = (int (*)(const char *, int *))base->xGetSystemCall(base, "openDirectory");
        if (!realOpen || !realUnlink || !realOpenDirectory) {
            pthread_mutex_unlock(&lock);
            return SQLITE_ERROR;
        }
        base->xSetSystemCall(base, "open", (sqlite3_syscall_ptr)hooked_open);
        base->xSetSystemCall(base, "unlink", (sqlite3_syscall_ptr)hooked_unlink);
        base->xSetSystemCall(base, "openDirectory", (sqlite3_syscall_ptr)hooked_open_directory);
        unixVFS = base;
        crashVFS.szOsFile = (int)sizeof(CrashFile) + base->szOsFile;
        crashVFS.mxPathname = base->mxPathname;
    }
    pthread_mutex_unlock(&lock);
    // Registered again without `make_default`, it stays the default when it is: code that
    // only names it must not take it from code that relies on it being the default.
    if (!make_default && sqlite3_vfs_find(NULL) == &crashVFS) return SQLITE_OK;
    return sqlite3_vfs_register(&crashVFS, make_default);
}

/// Whether a running session's folder holds `folder`, or lies in it.
static int overlaps_running_session(const char *folder, size_t length) {
    for (Session *s = sessions; s; s = s->next) {
        if (under_root(folder, s->root, s->rootLength) || under_root(s->root, folder, length)) return 1;
    }
    return 0;
}

static Session *begin_locked(const char *folder, uint64_t seed, int64_t crash_at, statestore_crash_policy chosen) {
    Session *session = calloc(1, sizeof(Session));
    session->number = ++sessionCount;
    session->root = strdup(folder);
    session->rootLength = strlen(session->root);
    while (session->rootLength > 1 && session->root[session->rootLength - 1] == '/') {
        session->root[--session->rootLength] = 0;
    }
    session->rng = seed ? seed : 0x9E3779B97F4A7C15ULL;
    session->crashAt = crash_at;
    session->policy = chosen;
    session->next = sessions;
    sessions = session;
    return session;
}

static void end_locked(Session *session) {
    while (session->tracked) forget_tracked(session, session->tracked->path);
    // Without a crash, the deletions stand: their stashes go.
    free_events(session, 1);
    for (Session **link = &sessions; *link; link = &(*link)->next) {
        if (*link == session) { *link = session->next; break; }
    }
    free(session->root);
    free(session);
}

statestore_crash_session *statestore_crashvfs_session_begin(
    const char *folder, uint64_t seed, int64_t crash_at, statestore_crash_policy chosen) {
    pthread_mutex_lock(&lock);
    size_t length = strlen(folder);
    while (length > 1 && folder[length - 1] == '/') length--;
    char *trimmed = strndup(folder, length);
    Session *session = overlaps_running_session(trimmed, length) ? NULL : begin_locked(trimmed, seed, crash_at, chosen);
    free(trimmed);
    pthread_mutex_unlock(&lock);
    return session;
}

void statestore_crashvfs_session_reseed(statestore_crash_session *session, uint64_t seed) {
    pthread_mutex_lock(&lock);
    session->rng = seed ? seed : 0x9E3779B97F4A7C15ULL;
    pthread_mutex_unlock(&lock);
}

void statestore_crashvfs_session_crash_now(statestore_crash_session *session) {
    pthread_mutex_lock(&lock);
    crash_locked(session);
    pthread_mutex_unlock(&lock);
}

statestore_crash_stats statestore_crashvfs_session_stats(statestore_crash_session *session) {
    pthread_mutex_lock(&lock);
    statestore_crash_stats copy = session->stats;
    pthread_mutex_unlock(&lock);
    return copy;
}

int64_t statestore_crashvfs_session_open_files(statestore_crash_session *session) {
    pthread_mutex_lock(&lock);
    int64_t count = session->openFiles;
    pthread_mutex_unlock(&lock);
    return count;
}

void statestore_crashvfs_session_end(statestore_crash_session *session) {
    pthread_mutex_lock(&lock);
    end_locked(session);
    pthread_mutex_unlock(&lock);
}

void statestore_crashvfs_begin(const char *folder, uint64_t seed, int64_t crash_at, statestore_crash_policy chosen) {
    pthread_mutex_lock(&lock);
    statestore_crashvfs_end();
    global = begin_locked(folder, seed, crash_at, chosen);
    memset(&globalStats, 0, sizeof globalStats);
    pthread_mutex_unlock(&lock);
}

void statestore_crashvfs_crash_now(void) {
    pthread_mutex_lock(&lock);
    crash_locked(global);
    pthread_mutex_unlock(&lock);
}

void statestore_crashvfs_end(void) {
    pthread_mutex_lock(&lock);
    if (global) {
        globalStats = global->stats;
        end_locked(global);
        global = NULL;
    }
    pthread_mutex_unlock(&lock);
}

int64_t statestore_crashvfs_open_files(void) {
    pthread_mutex_lock(&lock);
    int64_t count = global ? global->openFiles : 0;
    pthread_mutex_unlock(&lock);
    return count;
}

statestore_crash_stats statestore_crashvfs_stats(void) {
    pthread_mutex_lock(&lock);
    statestore_crash_stats copy = global ? global->stats : globalStats;
    pthread_mutex_unlock(&lock);
    return copy;
}

void statestore_crashvfs_fail_syncs(int failing) {
    pthread_mutex_lock(&lock);
    if (global) global->failingSyncs = failing;
    pthread_mutex_unlock(&lock);
}
