import Foundation
import MailExample
import StateStore
import Testing

/// The README's and the DocC catalog's "A complete example" are excerpts of the mail app in
/// `Examples/Mail`, the app `statectl demo` runs: each region of its source between
/// `// README: begin` and `// README: end` must be one of their Swift code blocks, to the letter.
@MainActor
@Suite("The README's example")
struct ReadmeExampleTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// The marked regions of the example's sources, in file-name order.
    static func regions() throws -> [(file: String, text: String)] {
        let folder = root.appending(path: "Examples/Mail")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".swift") }
            .sorted()
        var regions: [(file: String, text: String)] = []
        for file in files {
            let lines = try String(contentsOf: folder.appending(path: file), encoding: .utf8)
                .split(separator: "\n", omittingEmptySubsequences: false)
            var current: [Substring]?
            for line in lines {
                if line == "// README: begin" {
                    current = []
                } else if line == "// README: end", let region = current {
                    regions.append((file, region.joined(separator: "\n") + "\n"))
                    current = nil
                } else {
                    current?.append(line)
                }
            }
        }
        return regions
    }

    /// The Swift code blocks of the section titled `heading` in the Markdown file at `path`.
    static func swiftBlocks(in path: String, section heading: String) throws -> [String] {
        let text = try String(contentsOf: root.appending(path: path), encoding: .utf8)
        let section = try #require(text.range(of: "\n\(heading)\n"), "\(path) has no section \"\(heading)\"")
        let rest = text[section.upperBound...]
        let end = rest.range(of: "\n#")?.lowerBound ?? rest.endIndex
        var blocks: [String] = []
        var current: [Substring]?
        for line in rest[..<end].split(separator: "\n", omittingEmptySubsequences: false) {
            if current == nil, line == "```swift" {
                current = []
            } else if current != nil, line == "```" {
                blocks.append(current!.joined(separator: "\n") + "\n")
                current = nil
            } else {
                current?.append(line)
            }
        }
        return blocks
    }

    @Test(arguments: [
        ("README.md", "## A complete example"),
        ("Sources/StateStore/StateStore.docc/GettingStarted.md", "## A complete example"),
    ])
    func theExampleShownIsTheExampleAppsSource(_ document: String, _ heading: String) throws {
        let regions = try Self.regions()
        #expect(!regions.isEmpty, "Examples/Mail has no region between // README: begin and // README: end")
        let blocks = try Self.swiftBlocks(in: document, section: heading)
        #expect(
            blocks.count == regions.count,
            "\(document) shows \(blocks.count) Swift blocks; Examples/Mail marks \(regions.count) regions")
        for (block, region) in zip(blocks, regions) {
            #expect(
                block == region.text,
                """
                \(document) no longer shows the region of Examples/Mail/\(region.file) between \
                // README: begin and // README: end; copy that region into the document's block
                """)
        }
    }

    @Test func theExampleRestoresTheDraftAfterARelaunch() throws {
        let folder = TemporaryFolder()
        let database = folder.file("mail.sqlite")
        do {
            let app = try MailApp.start(database: database)
            try app.open(MailMessage.mailbox[0])
            try app.reply()
            let compose = try #require(app.compose)
            compose.editor.text = "Dear Ada,"
            app.application.terminate()
        }
        let relaunched = try MailApp.start(database: database)
        #expect(relaunched.restored)
        let compose = try #require(relaunched.compose)
        #expect(compose.editor.text == "Dear Ada,")
        #expect(compose.caches.count == 1)
        relaunched.application.terminate()
    }
}
