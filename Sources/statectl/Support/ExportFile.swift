import Foundation
import StateStore

/// `statectl import`'s reading of an export document file, and how `export` and `import` word
/// the library's refusals (``StateExport/DocumentError``, ``StateExport/ExportError``): naming
/// the file and `--max-state-size`, and saying that nothing was imported or exported.
enum ExportFile {
    /// Reads and decodes the whole document at `file` before anything is written: its bytes,
    /// then its states, never its JSON value whole. Every failure is a ``CLIError`` naming the
    /// file, the state and what is wrong.
    static func read(file: String, maximumStateSize: Int) throws(CLIError) -> StateExport {
        func refuse(_ message: String) -> CLIError {
            CLIError(message: "\(file): \(message.hasSuffix(".") ? message : message + ".") Nothing was imported.")
        }
        func unreadable(_ code: Int32) -> CLIError {
            CLIError(message: "Cannot read \(file): \(String(cString: strerror(code))). Nothing was imported.")
        }
        let notARegularFile = refuse(
            "it is not a regular file (a directory, FIFO or device); give the path of an export document")
        // Looked at before it is opened (opening a FIFO would wait for a writer), and again once
        // open (O_NONBLOCK: a FIFO put there meanwhile does not block), in case it was replaced.
        var info = stat()
        guard stat(file, &info) == 0 else { throw unreadable(errno) }
        guard (info.st_mode & S_IFMT) == S_IFREG else { throw notARegularFile }
        let descriptor = open(file, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else { throw unreadable(errno) }
        defer { close(descriptor) }
        guard fstat(descriptor, &info) == 0 else { throw unreadable(errno) }
        guard (info.st_mode & S_IFMT) == S_IFREG else { throw notARegularFile }
        guard Int(info.st_size) <= StateExport.maximumByteCount else {
            throw refuse(
                "the file is \(Format.bytes(Int(info.st_size))), over the \(Format.bytes(StateExport.maximumByteCount)) import limit"
            )
        }
        // Read in 1 MiB chunks into the array the parser reads (the file is never held twice), up
        // to one byte past the limit, so that a file that grew while being read is noticed.
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Int(info.st_size))
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        while bytes.count <= StateExport.maximumByteCount {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw unreadable(errno)
            }
            if count == 0 { break }
            bytes.append(contentsOf: chunk[..<count])
        }
        guard bytes.count <= StateExport.maximumByteCount else {
            throw refuse("the file grew over the import limit while being read")
        }
        do {
            return try StateExport(decoding: bytes, maximumStateSize: maximumStateSize)
        } catch {
            throw CLIError(refusing: error, source: file)
        }
    }
}

extension CLIError {
    /// A refused document, `source` naming it: `FILE: states[1] ("root//x"): … Nothing was imported.`,
    /// exit 3 for a document a newer build wrote, else 1.
    init(refusing error: StateExport.DocumentError, source file: String) {
        let problem: String
        switch error.problem {
        case .databaseSchemaTooNew(let found, let supported):
            problem =
                "the states come from a database with schema version \(found), newer than the \(supported) this build knows; import them with a newer statectl"
        case .formatTooNew(let found, let supported):
            problem =
                "the document format is version \(found), newer than the \(supported) this build reads; use a newer statectl"
        case .invalidBase64(let limit):
            problem = "\"base64\" is not valid base64, or holds more than the \(limit) bytes --max-state-size allows"
        case .stateTooLarge(let byteCount, let limit):
            problem =
                "the state is \(byteCount) bytes, over the \(limit)-byte --max-state-size; give import (and export) a larger --max-state-size, as large as the application's StateStore.Options.maximumStateSize"
        default:
            problem = error.problem.description
        }
        let message = error.location.map { "\($0): \(problem)" } ?? problem
        let text = message.hasSuffix(".") ? message : message + "."
        self.init(
            message: "\(file): \(text) Nothing was imported.",
            status: error.isFromNewerBuild ? .cannotOpen : .problemFound)
    }

    /// A store `statectl export` cannot write as a document import would take; `limit` is
    /// `--max-state-size` as given. A store error is passed on as it is, for its exit status.
    static func exporting(_ error: StateExport.ExportError, limit: SizeValue) -> any Error {
        switch error {
        case .store(let error):
            return error
        case .invalidRows(let rows):
            return CLIError(
                message:
                    "\(rows.count) row(s) have a path that is not a valid restoration path (rowid \(rows.map { String($0.rowID) }.joined(separator: ", "))), which import would refuse; `statectl inspect` lists them and `statectl prune --invalid-paths` removes them. Nothing was exported."
            )
        case .statesTooLarge(let entries, _):
            let listed = entries.prefix(5).map { "\($0.path) (\(Format.bytes($0.byteCount)))" }.joined(separator: ", ")
            return CLIError(
                message:
                    "\(entries.count) state(s) are larger than --max-state-size \(limit) (\(listed)\(entries.count > 5 ? ", ..." : "")); give a larger --max-state-size to export and to import alike. Nothing was exported."
            )
        case .timesOutOfRange(let paths):
            return CLIError(
                message:
                    "\(paths.count) state(s) have an update time outside the years 0000–9999, which the document cannot carry (\(paths.prefix(5).map(\.rawValue).joined(separator: ", "))); re-save or prune them. Nothing was exported."
            )
        case .documentTooLarge(let byteCount, let limit):
            // A lower bound: the smallest document the rows' listing allows, or what was
            // written when the document went over (the rest is not read).
            return CLIError(
                message:
                    "The document would be at least \(Format.bytes(byteCount)), over the \(Format.bytes(limit)) import accepts; export part of the states (`statectl prune` others in a copy), or keep large data outside the store. Nothing was exported."
            )
        case .notImportable(let refusal):
            // What export writes, import accepts: the library checked each part of the document
            // with import's own decoder (a row whose checksum fails, for one, is named here, not
            // at import).
            let message = CLIError(refusing: refusal, source: "The document").message
            return CLIError(
                message: message.replacingOccurrences(
                    of: "Nothing was imported.", with: "import would refuse it, so nothing was exported."))
        }
    }
}
