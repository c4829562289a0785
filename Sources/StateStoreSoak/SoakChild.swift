import Glibc

/// A child process started with `posix_spawn(3)`, with the pipes to it managed here.
///
/// Foundation's `Process` is not used on purpose: it needs a run-loop wake-up socket pair, and
/// where none can be made (the loopback interface is down, as in `unshare -n`) it prints
/// `Could not create wakeup socket pair for CFSocket!!!` and hangs, deaf to SIGTERM. A spawn
/// and a pipe need nothing but the kernel.
final class SoakChild {
    /// What a standard stream of the child is connected to.
    enum Stream {
        /// `/dev/null`.
        case null
        /// The supervisor's own descriptor.
        case inherit
        /// A pipe; the supervisor's end is ``SoakChild/input`` or ``SoakChild/output``.
        case pipe
    }

    let pid: pid_t
    /// The write end of the child's stdin pipe, or -1.
    private(set) var input: Int32
    /// The read end of the child's stdout pipe, or -1.
    private(set) var output: Int32
    private var status: Int32?

    private init(pid: pid_t, input: Int32, output: Int32) {
        self.pid = pid
        self.input = input
        self.output = output
    }

    deinit {
        closeInput()
        closeOutput()
    }

    /// Starts `executable` with `arguments` (not including argv[0]) and this process's
    /// environment. Signals the supervisor ignores or catches start with their default action.
    static func spawn(
        _ executable: String, _ arguments: [String], stdin: Stream = .null, stdout: Stream = .pipe,
        stderr: Stream = .inherit
    ) throws -> SoakChild {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }

        var parentEnds: [Int32] = []
        var childEnds: [Int32] = []
        func cleanUp() { for fd in parentEnds + childEnds { close(fd) } }
        var input: Int32 = -1, output: Int32 = -1
        for (target, stream) in [(Int32(0), stdin), (1, stdout), (2, stderr)] {
            switch stream {
            case .inherit:
                break
            case .null:
                posix_spawn_file_actions_addopen(&actions, target, "/dev/null", target == 0 ? O_RDONLY : O_WRONLY, 0)
            case .pipe:
                var fds: [Int32] = [-1, -1]
                guard pipe(&fds) == 0 else {
                    let reason = String(cString: strerror(errno))
                    cleanUp()
                    throw SoakError(message: "cannot create a pipe to start \(executable): \(reason)")
                }
                for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
                let (childEnd, parentEnd) = target == 0 ? (fds[0], fds[1]) : (fds[1], fds[0])
                posix_spawn_file_actions_adddup2(&actions, childEnd, target)
                childEnds.append(childEnd)
                parentEnds.append(parentEnd)
                if target == 0 { input = parentEnd } else { output = parentEnd }
            }
        }

        var defaults = sigset_t()
        sigemptyset(&defaults)
        for number in [SIGINT, SIGTERM, SIGPIPE, SIGCHLD] { sigaddset(&defaults, number) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&attributes, &mask)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))

        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, &attributes, argv, environ)
        for fd in childEnds { close(fd) }
        childEnds = []
        guard result == 0 else {
            cleanUp()
            throw SoakError(message: "cannot start \(executable): \(String(cString: strerror(result)))")
        }
        return SoakChild(pid: pid, input: input, output: output)
    }

    /// Writes all of `text` to the child's stdin; `false` when it cannot (no pipe, or it closed).
    @discardableResult
    func send(_ text: String) -> Bool {
        guard input >= 0 else { return false }
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { write(input, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 && errno == EINTR { continue }
            if written <= 0 { return false }
            offset += written
        }
        return true
    }

    func closeInput() {
        if input >= 0 { close(input) }
        input = -1
    }

    func closeOutput() {
        if output >= 0 { close(output) }
        output = -1
    }

    /// Reads the child's stdout to end of file.
    func readToEnd() -> [UInt8] {
        var data: [UInt8] = []
        guard output >= 0 else { return data }
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(output, &chunk, chunk.count)
            if count < 0 && errno == EINTR { continue }
            if count <= 0 { break }
            data += chunk[0..<count]
        }
        return data
    }

    /// Whether the child has not been reaped yet (reaps it if it has exited).
    var isRunning: Bool {
        if status != nil { return false }
        return !reap(options: WNOHANG)
    }

    /// Waits for the child to exit and reaps it.
    func waitUntilExit() {
        while status == nil {
            if !reap(options: 0), errno != EINTR { return }
        }
    }

    /// The exit status, when the child exited by itself.
    var exitStatus: Int32? {
        guard let status, status & 0x7f == 0 else { return nil }
        return (status >> 8) & 0xff
    }

    /// The signal that ended the child, when one did.
    var terminationSignal: Int32? {
        guard let status, status & 0x7f != 0, status & 0x7f != 0x7f else { return nil }
        return status & 0x7f
    }

    /// `waitpid`: `true` once the child is reaped (now or before).
    private func reap(options: Int32) -> Bool {
        var raw: Int32 = 0
        let result = waitpid(pid, &raw, options)
        if result == pid {
            status = raw
            return true
        }
        if result < 0 && errno == ECHILD {
            status = status ?? 0
            return true
        }
        return false
    }
}
