/// Parses the cgroup "flat keyed" format (`key value` per line) used by `memory.stat` and
/// `memory.events`.
enum FlatKeyedFile {
    static func parse(_ text: String, file: String) throws(MemoryError) -> [String: UInt64] {
        var values: [String: UInt64] = [:]
        var lineNumber = 0
        for line in ProcFile.lines(text) {
            lineNumber += 1
            let fields = ProcFile.split(line, where: ProcFile.isBlank)
            if fields.isEmpty { continue }
            guard fields.count == 2 else { throw .malformedLine(file: file, line: lineNumber, text: String(line)) }
            guard let value = ProcFile.unsigned(fields[1]) else {
                throw .invalidNumber(file: file, line: lineNumber, key: String(fields[0]), text: String(fields[1]))
            }
            values[String(fields[0])] = value
        }
        return values
    }

    /// A file holding one number, or `max` (cgroup v2's "no limit", returned as `nil`).
    static func limit(_ text: String, file: String) throws(MemoryError) -> UInt64? {
        let trimmed = ProcFile.split(Substring(text)) { $0 == "\n" || ProcFile.isBlank($0) }
        guard trimmed.count == 1 else {
            if trimmed.isEmpty { throw .empty(file: file) }
            throw .malformedLine(file: file, line: 1, text: text)
        }
        if trimmed[0] == "max" { return nil }
        guard let value = ProcFile.unsigned(trimmed[0]) else {
            throw .invalidNumber(file: file, line: 1, key: "value", text: String(trimmed[0]))
        }
        return value
    }
}
