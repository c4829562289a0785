import Logging
import StateStoreSQLite

extension StateStore {
    /// The default ``Options/logger``: it discards everything, so a library never writes to an
    /// application's terminal uninvited.
    public static let silentLogger = Logger(label: "StateStore", factory: { _ in SwiftLogNoOpLogHandler() })

    /// Sends SQLite's own error log (`SQLITE_CONFIG_LOG`: recovered WAL frames, I/O retries,
    /// automatic indexes, misuse) to `logger`, at `debug` for errors the store reports itself
    /// as typed errors and `info` for notices and warnings, with the result code as metadata.
    ///
    /// SQLite's log is process-wide and can only be installed before SQLite is first used, so
    /// call this once, before the first store is opened; later calls only change the logger.
    /// Returns whether SQLite accepted the callback. See <https://www.sqlite.org/errlog.html>.
    @discardableResult
    public static func routeSQLiteLog(to logger: Logger) -> Bool {
        SQLiteLog.logger.withLock { $0 = logger }
        return SQLiteLog.installed
    }

    /// Installs the receiver of SQLite's log (which discards it until ``routeSQLiteLog(to:)``
    /// names a logger), for code that initialises SQLite before any store does: a VFS
    /// registration initialises it, after which the log can no longer be installed.
    package static func installSQLiteLog() {
        _ = SQLiteLog.installed
    }
}

/// The process-wide receiver of SQLite's log.
enum SQLiteLog {
    static let logger = Lock<Logger?>(nil)

    /// Installs the callback once, before SQLite initialises (the first call of this property).
    static let installed: Bool =
        csqlite_config_log(
            { _, code, message in
                guard let message else { return }
                let text = String(cString: message)
                SQLiteLog.logger.withLock { logger in
                    guard let logger else { return }
                    let primary = code & 0xFF
                    let level: Logger.Level = primary == SQLITE_NOTICE || primary == SQLITE_WARNING ? .info : .debug
                    logger.log(
                        level: level, "\(text)",
                        metadata: [
                            "sqlite.result_code": "\(code)",
                            "sqlite.result": "\(String(cString: sqlite3_errstr(code)))",
                        ])
                }
            }, nil) == SQLITE_OK
}
