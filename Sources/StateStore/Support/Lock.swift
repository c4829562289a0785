#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A value that one thread at a time may use, guarded by a `pthread_mutex_t`.
///
/// Every lock in the package is one of these, in place of the standard library's `Mutex`,
/// because ThreadSanitizer sees a pthread mutex: it intercepts `pthread_mutex_lock` and
/// `pthread_mutex_unlock` and orders what one thread did under the lock before what the next
/// one does. On Linux, `Synchronization.Mutex` waits on a `futex` inside the prebuilt standard
/// library, which TSan does not instrument, so it reports every access two threads make
/// under one `Mutex` as a race, and cannot find a real one among them. The cost is a call
/// into glibc for each lock and unlock where `Mutex` inlines a compare-and-swap: measured in
/// the Performance article.
///
/// Its value lives in generic storage (a pointer's pointee), where a value that is itself a
/// function, an optional function or a tuple holding one is kept at its most general
/// representation: each `withLock` passes it to `body` through a reabstraction thunk and
/// stores it back through another, so a closure kept that way grows a chain of thunks at
/// every access, for as long as the process runs, and overflows the stack when it is
/// released. Keep such a value in a struct (or a class): a struct's stored closure is not
/// reabstracted. Arrays and dictionaries of closures are unaffected.
///
/// The interface is `Mutex`'s: ``withLock(_:)`` and ``withLockIfAvailable(_:)``. Copies share
/// one lock and one value. A debug build makes the mutex error-checking, so a thread that
/// takes a lock it already holds traps instead of hanging; a release build uses the default
/// (fastest) kind.
package struct Lock<Value: ~Copyable>: Sendable {
    package let storage: LockStorage<Value>

    /// Makes a lock guarding `initialValue`.
    package init(_ initialValue: consuming sending Value) {
        storage = LockStorage(initialValue)
    }

    /// Runs `body` with the value while holding the lock, waiting for it when another thread
    /// holds it. `body` must not take this lock again.
    @inlinable
    package func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        storage.lock()
        defer { storage.unlock() }
        return try body(&storage.value.pointee)
    }

    /// Runs `body` with the value when the lock is free, and returns `nil` at once, without
    /// running it, when another thread holds the lock.
    @inlinable
    package func withLockIfAvailable<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result? {
        guard storage.tryLock() else { return nil }
        defer { storage.unlock() }
        return try body(&storage.value.pointee)
    }
}

/// The mutex and the value of a ``Lock``, at addresses that never move.
package final class LockStorage<Value: ~Copyable>: @unchecked Sendable {
    package let mutex: UnsafeMutablePointer<pthread_mutex_t>
    package let value: UnsafeMutablePointer<Value>

    init(_ initialValue: consuming sending Value) {
        mutex = .allocate(capacity: 1)
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        #if DEBUG
        pthread_mutexattr_settype(&attributes, Int32(PTHREAD_MUTEX_ERRORCHECK))
        #endif
        let result = pthread_mutex_init(mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
        precondition(result == 0, "pthread_mutex_init failed: \(result)")
        value = .allocate(capacity: 1)
        value.initialize(to: initialValue)
    }

    deinit {
        value.deinitialize(count: 1)
        value.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    package func lock() {
        let result = pthread_mutex_lock(mutex)
        precondition(result == 0, "pthread_mutex_lock failed: \(result) (a lock taken again by its holder?)")
    }

    package func tryLock() -> Bool {
        let result = pthread_mutex_trylock(mutex)
        precondition(result == 0 || result == EBUSY, "pthread_mutex_trylock failed: \(result)")
        return result == 0
    }

    package func unlock() {
        let result = pthread_mutex_unlock(mutex)
        precondition(result == 0, "pthread_mutex_unlock failed: \(result)")
    }
}
