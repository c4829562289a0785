import Foundation
import Glibc
import StateStoreLinux

extension MemoryPressureMonitor {
    /// Starts the monitor thread. Calling it while running does nothing.
    ///
    /// The thread samples at once, then whenever a PSI trigger or systemd's watch fires, and at
    /// the adaptive polling interval in any case. It holds the monitor weakly: releasing the
    /// last reference stops it, as does ``stop()``. Whoever calls `start()` owns the thread and
    /// ends it with ``stop()``: an ``Application`` for the monitors it starts (see
    /// ``Application/observeMemoryPressure(_:)``), or a service that runs the monitor.
    public func start() {
        shared.withLock { $0.startedForApplications = false }
        startThread()
    }

    private func startThread() {
        // The thread is created, and its handle published, under the lock that marks the
        // monitor running: a stop() on another thread sees either nothing started or a thread
        // it can join, never a running monitor without a handle. The new thread's first
        // step takes the lock too, so it waits for the handle to be stored.
        let failure: Int32? = shared.withLock { shared in
            guard !shared.running else { return nil }
            var fds: [Int32] = [-1, -1]
            guard pipe(&fds) == 0 else { return errno }
            for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
            let context = Unmanaged.passRetained(ThreadContext(reference: WeakReference(monitor: self), wakeFD: fds[0]))
                .toOpaque()
            var thread = pthread_t()
            let created = pthread_create(
                &thread, nil,
                { argument in
                    let context = Unmanaged<ThreadContext>.fromOpaque(argument!).takeRetainedValue()
                    _ = clinux_set_thread_name(MemoryPressureMonitor.threadName)
                    context.reference.monitor?.shared.withLock { if $0.running { $0.threadID = clinux_thread_id() } }
                    MemoryPressureMonitor.run(context.reference, wakeFD: context.wakeFD)
                    return nil
                }, context)
            guard created == 0 else {
                Unmanaged<ThreadContext>.fromOpaque(context).release()
                close(fds[0])
                close(fds[1])
                return created
            }
            shared.running = true
            shared.wakeFD = fds[1]
            shared.thread = thread
            return nil
        }
        if let failure {
            logger.info(
                "memory pressure: the monitor thread could not be started", metadata: ["statestore.errno": "\(failure)"]
            )
        }
    }

    /// Stops the monitor thread and waits until it has exited (it is woken, so this takes no
    /// longer than one sample). Calling it when stopped does nothing. Called on the monitor's
    /// own thread (from an event handler), it stops the thread without waiting for it.
    public func stop() {
        let thread: pthread_t? = shared.withLock { shared in
            shared.startedForApplications = false
            if shared.running {
                shared.running = false
                if shared.wakeFD >= 0 { close(shared.wakeFD) }
                shared.wakeFD = -1
                shared.watchDescription = "polling"
            }
            defer {
                shared.thread = nil
                shared.threadID = nil
            }
            return shared.thread
        }
        guard let thread else { return }
        if pthread_equal(thread, pthread_self()) != 0 {
            pthread_detach(thread)
        } else {
            pthread_join(thread, nil)
        }
    }

    /// An application begins observing: the monitor is started unless it runs, and then it
    /// runs for the applications until the last of them lets go (``releaseApplicationLease()``).
    func acquireApplicationLease() {
        let start = shared.withLock { shared in
            shared.applicationLeases += 1
            guard !shared.running else { return false }
            shared.startedForApplications = true
            return true
        }
        if start { startThread() }
    }

    /// An application stops observing; the last one stops a monitor the applications started.
    /// A monitor started otherwise (by its owner's ``start()``) keeps running.
    func releaseApplicationLease() {
        let stop = shared.withLock { shared in
            shared.applicationLeases = max(0, shared.applicationLeases - 1)
            guard shared.applicationLeases == 0, shared.startedForApplications else { return false }
            shared.startedForApplications = false
            return true
        }
        if stop { self.stop() }
    }

    /// The running monitor thread's kernel id (`/proc/self/task/<id>`), once it has started.
    var threadID: Int32? { shared.withLock { $0.threadID } }

    /// The monitor thread's name, as `/proc/self/task/*/comm` shows it (at most 15 bytes).
    static let threadName = "memory-pressure"

    private final class ThreadContext {
        let reference: WeakReference
        let wakeFD: Int32
        init(reference: WeakReference, wakeFD: Int32) {
            self.reference = reference
            self.wakeFD = wakeFD
        }
    }

    /// The thread's only link to the monitor, so that releasing the monitor stops the thread.
    private struct WeakReference: Sendable {
        weak var monitor: MemoryPressureMonitor?
    }

    private static func run(_ reference: WeakReference, wakeFD: Int32) {
        var watches: [PressureWatch] = []
        var prepared = false
        var source = MemoryPressureEvent.Source.poll
        var fired: MemoryPressureLevel?
        var aheadOfPoll: Duration?
        defer {
            for watch in watches { close(watch.fd) }
            close(wakeFD)
        }
        while true {
            let timeout: Int32
            do {
                guard let monitor = reference.monitor, monitor.isRunning else { return }
                if !prepared {
                    prepared = true
                    let cgroup = try? monitor.sample().cgroup
                    let (made, description) = PressureWatch.make(configuration: monitor.configuration, cgroup: cgroup)
                    watches = made
                    monitor.shared.withLock { $0.watchDescription = description }
                    monitor.logger.info(
                        made.isEmpty ? "memory pressure: polling only" : "memory pressure: watch armed",
                        metadata: [
                            "statestore.watch": "\(description)", "statestore.root": "\(monitor.configuration.root)",
                        ])
                }
                if var sample = try? monitor.sample() {
                    sample.stallTrigger = fired
                    monitor.record(sample, at: .now, date: Date(), source: source, aheadOfPoll: aheadOfPoll)
                }
                let sample = monitor.lastSample
                let interval = CgroupLocator.pollingInterval(
                    monitor.configuration.pollingInterval(for: sample), watchArmed: !watches.isEmpty,
                    level: sample?.level
                )
                timeout = Int32(clamping: interval.saturatingMilliseconds)
            }
            let pollDue = ContinuousClock.now + .milliseconds(max(timeout, 1))
            var pollFDs = [pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)]
            pollFDs += watches.map { pollfd(fd: $0.fd, events: $0.events, revents: 0) }
            let ready = poll(&pollFDs, nfds_t(pollFDs.count), max(timeout, 1))
            if ready < 0 && errno != EINTR { return }
            if pollFDs[0].revents != 0 { return }  // stop(): the write end was closed
            source = .poll
            fired = nil
            aheadOfPoll = nil
            var failed = false
            for index in watches.indices {
                let revents = pollFDs[index + 1].revents
                if revents & Int16(POLLERR | POLLNVAL | POLLHUP) != 0 {
                    failed = true
                    break
                }
                guard revents & watches[index].events != 0 else { continue }
                // The kernel signals POLLPRI only once the stall in the window crossed the
                // trigger's threshold (never on registration), so every wake-up counts.
                watches[index].drain()
                source = watches[index].source
                fired = max(fired ?? watches[index].level, watches[index].level)
            }
            if fired != nil {
                let remaining = pollDue - ContinuousClock.now
                aheadOfPoll = remaining > .zero ? remaining : .zero
            }
            if failed {
                // POLLERR: the watched file went away (cgroup removed) or the kernel withdrew the
                // trigger. Keep working by polling.
                for watch in watches { close(watch.fd) }
                watches = []
                reference.monitor?.shared.withLock { $0.watchDescription = "polling (pressure watch failed)" }
            }
        }
    }
}
