import Foundation

/// The shape of a StateStore database — its tables' columns, its indexes, and the absence of
/// triggers — compared at open with the shape the embedded migrations produce.
///
/// An outside edit can drop a table (and the first save fails with a raw SQLite error), or add a
/// trigger that diverts writes (and saves "succeed" while nothing is stored). Columns are compared
/// by `PRAGMA table_xinfo` (name, declared type, NOT NULL, default, key position), not by the
/// `CREATE` text, so comments and whitespace in old migrations never matter. Tables and indexes
/// the application added beside ours are left alone; triggers and views on our tables are not.
struct SchemaShape: Equatable, Sendable {
    struct Column: Equatable, Sendable, CustomStringConvertible {
        var name, type: String
        var notNull: Bool
        var defaultValue: String?
        var primaryKeyPosition: Int
        var description: String { "\(name) \(type)\(notNull ? " NOT NULL" : "")" }
    }

    /// Table name → columns in order.
    var tables: [String: [Column]] = [:]
    /// Index name → "table(column, ...)".
    var indexes: [String: String] = [:]
    /// "trigger name on table" or "view name", for every trigger and view in the file.
    var extras: [String] = []
    /// Table or index name → its `CREATE` statement without comments and with whitespace
    /// collapsed: what columns alone do not show (UNIQUE, ON CONFLICT, COLLATE, CHECK, a partial index).
    var definitions: [String: String] = [:]

    /// Reads the shape of the database `connection` is open on.
    init(of connection: Connection) throws(StateStoreError) {
        let objects = try Statement(
            connection: connection,
            sql: """
                SELECT type, name, tbl_name, sql FROM sqlite_schema
                WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\' OR type = 'index' ORDER BY type, name
                """, persistent: false)
        var tableNames: [String] = [], indexNames: [(String, String)] = []
        while try objects.step() {
            let type = objects.string(0), name = objects.string(1), table = objects.string(2)
            if !objects.isNull(3) { definitions[name] = Self.normalized(objects.string(3)) }
            switch type {
            case "table": tableNames.append(name)
            case "index": indexNames.append((name, table))
            case "trigger": extras.append("trigger \(name) on \(table)")
            default: extras.append("\(type) \(name)")
            }
        }
        for name in tableNames {
            let info = try Statement(
                connection: connection,
                sql: "SELECT name, type, \"notnull\", dflt_value, pk FROM pragma_table_xinfo(?1)", persistent: false)
            info.bind(name, at: 1)
            var columns: [Column] = []
            while try info.step() {
                columns.append(
                    Column(
                        name: info.string(0), type: info.string(1), notNull: info.int(2) != 0,
                        defaultValue: info.isNull(3) ? nil : info.string(3), primaryKeyPosition: info.int(4)
                    ))
            }
            tables[name] = columns
        }
        for (name, table) in indexNames {
            let info = try Statement(
                connection: connection, sql: "SELECT name FROM pragma_index_info(?1) ORDER BY seqno", persistent: false)
            info.bind(name, at: 1)
            var columns: [String] = []
            while try info.step() { columns.append(info.string(0)) }
            indexes[name] = "\(table)(\(columns.joined(separator: ", ")))"
        }
    }

    /// `sql` without `--` and `/* */` comments (outside quotes), whitespace runs as one space.
    static func normalized(_ sql: String) -> String {
        var output: [Unicode.Scalar] = []
        var scalars = Array(sql.unicodeScalars)[...]
        var quote: Unicode.Scalar?
        while let scalar = scalars.first {
            scalars = scalars.dropFirst()
            if let open = quote {
                output.append(scalar)
                if scalar == open { quote = nil }
                continue
            }
            if scalar == "'" || scalar == "\"" || scalar == "`" || scalar == "[" {
                quote = scalar == "[" ? "]" : scalar
                output.append(scalar)
            } else if scalar == "-", scalars.first == "-" {
                while let next = scalars.first, next != "\n" { scalars = scalars.dropFirst() }
                if output.last != " " { output.append(" ") }
            } else if scalar == "/", scalars.first == "*" {
                scalars = scalars.dropFirst()
                while !scalars.isEmpty, !(scalars.first == "*" && scalars.dropFirst().first == "/") {
                    scalars = scalars.dropFirst()
                }
                scalars = scalars.dropFirst(2)
                if output.last != " " { output.append(" ") }
            } else if scalar.properties.isWhitespace {
                if output.last != " " { output.append(" ") }
            } else {
                output.append(scalar)
            }
        }
        // A space stays only between two word characters: `t (a)` and `t(a)` are the same table.
        func isWord(_ scalar: Unicode.Scalar?) -> Bool {
            guard let scalar else { return false }
            return scalar == "_" || scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)
        }
        var compact: [Unicode.Scalar] = []
        for (index, scalar) in output.enumerated() {
            if scalar == " ", !(isWord(compact.last) && isWord(index + 1 < output.count ? output[index + 1] : nil)) {
                continue
            }
            compact.append(scalar)
        }
        return String(String.UnicodeScalarView(compact))
    }

    /// The shape this build's migrations give a new database, computed once per process.
    static let expected: SchemaShape? = {
        guard let connection = try? Connection(path: ":memory:", options: .init()),
            (try? Migrator().migrate(connection)) != nil
        else { return nil }
        return try? SchemaShape(of: connection)
    }()

    /// What differs from ``expected`` in the way that matters: a missing or changed table or index
    /// of ours, and any trigger or view. Empty when the database can be used as it is.
    func problems(comparedWith expected: SchemaShape) -> [String] {
        var problems: [String] = []
        for (name, columns) in expected.tables.sorted(by: { $0.key < $1.key }) {
            guard let found = tables[name] else {
                problems.append("the table \(name) is missing")
                continue
            }
            if found != columns {
                problems.append(
                    "the table \(name) has the columns (\(found.map(\.description).joined(separator: ", "))), not (\(columns.map(\.description).joined(separator: ", ")))"
                )
            }
        }
        for (name, definition) in expected.indexes.sorted(by: { $0.key < $1.key }) where indexes[name] != definition {
            problems.append(
                indexes[name] == nil
                    ? "the index \(name) is missing" : "the index \(name) is on \(indexes[name]!), not \(definition)")
        }
        for (name, definition) in expected.definitions.sorted(by: { $0.key < $1.key })
        where tables[name] == expected.tables[name] && indexes[name] == expected.indexes[name]
            && definitions[name] != definition
        {
            problems.append(
                "the constraints of \(name) differ from StateStore's (a UNIQUE, ON CONFLICT, COLLATE or CHECK clause, or an index's WHERE, was changed)"
            )
        }
        // An index of someone else's on our tables is harmless unless it is UNIQUE: then writes
        // the store must be able to make fail, or (ON CONFLICT REPLACE on a table) vanish.
        for (name, definition) in definitions.sorted(by: { $0.key < $1.key })
        where expected.definitions[name] == nil && definition.hasPrefix("CREATE UNIQUE INDEX")
            && expected.tables.keys.contains(where: { indexes[name]?.hasPrefix($0 + "(") == true })
        {
            problems.append(
                "the unique index \(name) on \(indexes[name] ?? "?") is not StateStore's (it can make saves fail)")
        }
        for extra in extras {
            problems.append(
                extra.hasPrefix("trigger")
                    ? "the \(extra) is not StateStore's (a trigger can divert or drop writes)"
                    : "the \(extra) is not part of StateStore's schema")
        }
        return problems
    }

    /// This shape with `schema_migrations` as `expected` has it: what a schema repair puts back.
    func withRecordTable(of expected: SchemaShape) -> SchemaShape {
        var shape = self
        shape.tables["schema_migrations"] = expected.tables["schema_migrations"]
        shape.definitions["schema_migrations"] = expected.definitions["schema_migrations"]
        return shape
    }

    /// The ``problems(comparedWith:)`` of `schema_migrations` alone.
    func recordTableProblems(comparedWith expected: SchemaShape) -> [String] {
        let all = problems(comparedWith: expected)
        let others = Set(withRecordTable(of: expected).problems(comparedWith: expected))
        return all.filter { !others.contains($0) }
    }

    /// Throws ``StateStoreError/schemaMismatch(file:detail:)`` when the database's shape is not
    /// the one this build's migrations produce. When only `schema_migrations` differs, the
    /// detail points at the repair, which makes it again.
    static func verify(_ connection: Connection) throws(StateStoreError) {
        guard let expected else { return }
        let shape = try SchemaShape(of: connection)
        let problems = shape.problems(comparedWith: expected)
        guard !problems.isEmpty else { return }
        let repair =
            shape.withRecordTable(of: expected).problems(comparedWith: expected).isEmpty
            ? "; only the table of version records differs: `statectl migrate --repair` (StateStore.repairSchemaVersion(at:)) makes it again"
            : ""
        throw .schemaMismatch(file: connection.path, detail: problems.joined(separator: "; ") + repair)
    }
}
