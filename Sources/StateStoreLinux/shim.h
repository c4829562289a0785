#ifndef STATESTORE_LINUX_SHIM_H
#define STATESTORE_LINUX_SHIM_H

// The few Linux and glibc calls Swift's Glibc module does not import (<malloc.h>,
// <sys/vfs.h>, <sys/prctl.h>, <sys/xattr.h>), declared here so they are linked like any other C function:
// looking them up with dlsym at run time finds nothing in a statically linked executable.

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <sched.h>
#include <signal.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <sys/xattr.h>
#include <unistd.h>

// Open-file-description locks (Linux 3.15): glibc declares them only under _GNU_SOURCE, which
// the C module this header is part of may be built without. The numbers are Linux's, the
// same on every architecture.
#ifndef F_OFD_GETLK
#define F_OFD_GETLK 36
#endif
#ifndef F_OFD_SETLK
#define F_OFD_SETLK 37
#endif

/// `malloc_trim(pad)`: 1 when memory was returned to the system.
static inline int clinux_malloc_trim(unsigned long pad) {
    return malloc_trim(pad);
}

/// `prctl(PR_SET_PDEATHSIG, signal)` (prctl is variadic, which Swift cannot call).
static inline int clinux_set_parent_death_signal(int signal) {
    return prctl(PR_SET_PDEATHSIG, (unsigned long)signal, 0UL, 0UL, 0UL);
}

/// `prctl(PR_SET_NAME, name)`: names the calling thread (at most 15 bytes are kept).
static inline int clinux_set_thread_name(const char *name) {
    return prctl(PR_SET_NAME, (unsigned long)name, 0UL, 0UL, 0UL);
}

/// The calling thread's kernel id (`gettid`), as `/proc/self/task/<id>` names it.
static inline int clinux_thread_id(void) {
    return (int)syscall(SYS_gettid);
}

/// `fstatfs(fd)`'s `f_type` (the filesystem's magic number), or -1 when it fails.
static inline long clinux_filesystem_type(int fd) {
    struct statfs info;
    if (fstatfs(fd, &info) != 0) return -1;
    return (long)info.f_type;
}

/// Whether another process holds a lock on byte `offset` of the open file `fd` (an `F_GETLK`
/// test of an exclusive lock on it; the caller's own locks never count): 1 when one does, 0 when
/// none does, -1 with `errno` set when the test fails.
static inline int clinux_byte_locked_elsewhere(int fd, long offset) {
    struct flock lock = {0};
    lock.l_type = F_WRLCK;
    lock.l_whence = SEEK_SET;
    lock.l_start = offset;
    lock.l_len = 1;
    if (fcntl(fd, F_GETLK, &lock) != 0) return -1;
    return lock.l_type != F_UNLCK;
}

/// An exclusive lock on every byte of a file, for the open-file-description calls below.
static inline struct flock clinux_whole_file_write_lock(void) {
    struct flock lock = {0};
    lock.l_type = F_WRLCK;
    lock.l_whence = SEEK_SET;
    lock.l_start = 0;
    lock.l_len = 0;  /* to the end of the file, however it grows */
    return lock;
}

/// Takes an exclusive open-file-description lock (`F_OFD_SETLK`) on the whole of the open file
/// `fd`, without waiting: 0 when taken, -1 with `errno` set (`EAGAIN` or `EACCES` when another
/// open file description holds a lock on it). The lock belongs to the open file description,
/// not the process: closing another descriptor of the file drops nothing, and the kernel drops
/// it when the last descriptor of the description closes, or the process dies.
static inline int clinux_ofd_lock(int fd) {
    struct flock lock = clinux_whole_file_write_lock();
    return fcntl(fd, F_OFD_SETLK, &lock);
}

/// Whether an open file description other than `fd`'s holds a lock on any byte of the open
/// file `fd` (an `F_OFD_GETLK` test of an exclusive lock on the whole file, which takes
/// nothing): 1 when one does, 0 when none does, -1 with `errno` set when the test fails.
static inline int clinux_ofd_locked_elsewhere(int fd) {
    struct flock lock = clinux_whole_file_write_lock();
    if (fcntl(fd, F_OFD_GETLK, &lock) != 0) return -1;
    return lock.l_type != F_UNLCK;
}

/// Puts the calling thread under `SCHED_BATCH`: the same share of the CPU as any other thread,
/// but waking it never preempts the thread that runs (the main thread, when the two share a
/// core); it runs when that one blocks or its turn ends. 0 on success.
static inline int clinux_set_batch_scheduling(void) {
    struct sched_param parameters;
    parameters.sched_priority = 0;
    return sched_setscheduler(0, 3 /* SCHED_BATCH */, &parameters);
}

/// Lowers the calling thread alone to the idle I/O class (`ioprio_set(IOPRIO_WHO_PROCESS, 0,
/// IOPRIO_CLASS_IDLE)`: its reads wait while any other I/O is queued, with the BFQ scheduler)
/// and to nice 19 (`setpriority` on its thread id). Bit 0 of the result: the I/O class was
/// set; bit 1: the nice value was.
static inline int clinux_lower_thread_priority(void) {
    int done = 0;
    if (syscall(SYS_ioprio_set, 1 /* IOPRIO_WHO_PROCESS */, 0, 3 << 13 /* IOPRIO_CLASS_IDLE */) == 0) done |= 1;
    if (setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 19) == 0) done |= 2;
    return done;
}

/// The write end of the pipe ``clinux_termination_handler`` writes each signal's number into
/// (-1 until ``clinux_install_termination_handler`` sets it), and the bytes 0…255 it writes
/// from. Both live in static storage: see the handler.
static inline int *clinux_termination_pipe(void) {
    static int pipe = -1;
    return &pipe;
}
static inline unsigned char *clinux_signal_numbers(void) {
    static unsigned char numbers[256];
    return numbers;
}

/// A termination signal's handler: writes the signal's number into the pipe (one `write(2)`,
/// async-signal-safe), puts the signal's default action back, and leaves `errno` as it found
/// it. It keeps nothing on its stack and is not instrumented by a sanitizer: libdispatch parks
/// a main thread that called `dispatchMain()` in a signal-waiting loop after `pthread_exit`,
/// so the handler can run on a stack whose frames ended without their epilogues, where
/// AddressSanitizer would take any local (or a buffer passed to an intercepted `write`) for an
/// overflow of a stale one.
__attribute__((no_sanitize("address", "thread", "undefined")))
static void clinux_termination_handler(int number) {
    int saved = errno;
    ssize_t written = write(*clinux_termination_pipe(), clinux_signal_numbers() + (unsigned char)number, 1);
    (void)written;
    signal(number, SIG_DFL);
    errno = saved;
}

/// Makes ``clinux_termination_handler`` the handler of signal `number`, writing into `pipe`,
/// and unblocks the signal in the calling thread (the main thread): a process started with it
/// blocked (a parent's `posix_spawn` from a thread that blocks it, as libdispatch's workers do,
/// passes its mask on) would otherwise keep it pending for ever, its handler never run. 0 when
/// installed, -1 with `errno` set when `signal(2)` or `pthread_sigmask(3)` refused.
static inline int clinux_install_termination_handler(int number, int pipe) {
    unsigned char *numbers = clinux_signal_numbers();
    for (int value = 0; value < 256; value++) numbers[value] = (unsigned char)value;
    *clinux_termination_pipe() = pipe;
    if (signal(number, clinux_termination_handler) == SIG_ERR) return -1;
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, number);
    int failure = pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    if (failure != 0) {
        errno = failure;
        return -1;
    }
    return 0;
}

#endif
