// Lists every public or open declaration of the library products that has no documentation
// comment, from the symbol graphs `swift package dump-symbol-graph --minimum-access-level
// public` writes; exits 1 when there is one. Declarations the compiler makes (a synthesized
// `Codable` conformance, a raw-value initializer) have no place in the source and are left out.
//
//     swift scripts/check-doc-comments.swift .build/x86_64-unknown-linux-gnu/symbolgraph
import Foundation

let modules = ["StateStore", "StateStoreCrypto", "StateStoreServiceLifecycle", "StateStoreTesting", "StateStoreGTK"]
guard CommandLine.arguments.count == 2 else {
    FileHandle.standardError.write(Data("usage: check-doc-comments.swift SYMBOLGRAPH-FOLDER\n".utf8))
    exit(2)
}
let folder = URL(fileURLWithPath: CommandLine.arguments[1])
var missing: [String] = []
var count = 0
// A module's own symbols, and (in `Module@Other.symbols.json`) its extensions of other modules' types.
let files = modules.flatMap { module -> [(module: String, file: URL)] in
    let extensions = ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [])
        .filter { $0.hasPrefix("\(module)@") && $0.hasSuffix(".symbols.json") }.sorted()
    return [(module, folder.appending(path: "\(module).symbols.json"))]
        + extensions.map { (module, folder.appending(path: $0)) }
}
for (module, file) in files {
    guard let data = try? Data(contentsOf: file),
        let graph = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
        let symbols = graph["symbols"] as? [[String: Any]]
    else {
        FileHandle.standardError.write(Data("check-doc-comments: cannot read \(file.path)\n".utf8))
        exit(2)
    }
    for symbol in symbols {
        guard let access = symbol["accessLevel"] as? String, access == "public" || access == "open",
            let location = symbol["location"] as? [String: Any], let uri = location["uri"] as? String,
            uri.contains("/Sources/\(module)/")
        else { continue }
        count += 1
        if let comment = symbol["docComment"] as? [String: Any], let lines = comment["lines"] as? [Any], !lines.isEmpty
        {
            continue
        }
        let path = (symbol["pathComponents"] as? [String] ?? []).joined(separator: ".")
        let line = ((location["position"] as? [String: Any])?["line"] as? Int).map { $0 + 1 } ?? 0
        let source = uri.components(separatedBy: "/Sources/").last ?? uri
        missing.append("Sources/\(source):\(line): \(module).\(path) has no documentation comment")
    }
}
if missing.isEmpty {
    print("check-doc-comments: all \(count) public declarations of \(modules.joined(separator: ", ")) are documented")
    exit(0)
}
missing.sort()
print(missing.joined(separator: "\n"))
print("check-doc-comments: \(missing.count) of \(count) public declarations have no documentation comment (above)")
exit(1)
