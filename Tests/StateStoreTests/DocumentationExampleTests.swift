import Foundation
import Testing

/// The documentation's Swift examples are code the build compiles and the tests run: each
/// article's are snippets (`Snippets/`, built by `swift build` and shown with `@Snippet`), the
/// getting-started example is the mail app's source (``ReadmeExampleTests``), and every example
/// in a documentation comment is also in a snippet, line for line.
@Suite("The documentation's examples")
struct DocumentationExampleTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let catalogs = ["Sources/StateStore/StateStore.docc", "Sources/StateStoreTesting/StateStoreTesting.docc"]
    static let documentedTargets = [
        "Sources/StateStore", "Sources/StateStoreCrypto", "Sources/StateStoreServiceLifecycle",
        "Sources/StateStoreTesting",
    ]

    static func text(_ path: String) throws -> String {
        try String(contentsOf: root.appending(path: path), encoding: .utf8)
    }

    static func files(under folder: String, suffix: String) throws -> [String] {
        let enumerator = FileManager.default.enumerator(atPath: root.appending(path: folder).path)
        var found: [String] = []
        while let next = enumerator?.nextObject() as? String {
            if next.hasSuffix(suffix) { found.append(folder + "/" + next) }
        }
        return found.sorted()
    }

    static var snippetNames: [String] {
        get throws {
            try files(under: "Snippets", suffix: ".swift").map {
                ($0 as NSString).lastPathComponent.replacingOccurrences(of: ".swift", with: "")
            }
        }
    }

    /// The lines that carry code: trimmed, blank lines and snippet markers left out.
    static func codeLines(_ lines: some Sequence<Substring>) -> [String] {
        lines.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty && !$0.hasPrefix("// snippet.") }
    }

    /// Every ```swift block in the `///` comments of `file`, with the line it starts on.
    static func commentExamples(in file: String) throws -> [(line: Int, code: [String])] {
        var examples: [(line: Int, code: [String])] = []
        var current: (line: Int, code: [Substring])?
        for (number, line) in try text(file).split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.drop { $0 == " " }
            guard trimmed.hasPrefix("///") else { continue }
            let content = trimmed.dropFirst(3).dropFirst(trimmed.dropFirst(3).hasPrefix(" ") ? 1 : 0)
            if current == nil, content.trimmingCharacters(in: .whitespaces) == "```swift" {
                current = (number + 1, [])
            } else if let block = current, content.trimmingCharacters(in: .whitespaces) == "```" {
                examples.append((block.line, codeLines(block.code)))
                current = nil
            } else {
                current?.code.append(content)
            }
        }
        return examples
    }

    static func contains(_ haystack: [String], _ needle: [String]) -> Bool {
        guard !needle.isEmpty, needle.count <= haystack.count else { return needle.isEmpty }
        return (0...(haystack.count - needle.count)).contains { Array(haystack[$0..<($0 + needle.count)]) == needle }
    }

    @Test func everyExampleInADocumentationCommentIsInASnippet() throws {
        let snippets = try Self.files(under: "Snippets", suffix: ".swift").map {
            Self.codeLines(try Self.text($0).split(separator: "\n", omittingEmptySubsequences: false))
        }
        var checked = 0
        for target in Self.documentedTargets {
            for file in try Self.files(under: target, suffix: ".swift") {
                for example in try Self.commentExamples(in: file) {
                    checked += 1
                    #expect(
                        snippets.contains { Self.contains($0, example.code) },
                        """
                        \(file):\(example.line): this example is in no file of Snippets/, so nothing compiles it; \
                        put it, line for line, in Snippets/APIExamples.swift
                        """)
                }
            }
        }
        #expect(checked >= 19, "only \(checked) examples were found in documentation comments")
    }

    /// The declarations a newcomer meets first each show an example in their documentation.
    @Test(arguments: [
        ("Sources/StateStore/Store/StateStore.swift", "public final class StateStore"),
        ("Sources/StateStore/Lifecycle/Application.swift", "public final class Application"),
        ("Sources/StateStore/Lifecycle/Window.swift", "public final class Window"),
        ("Sources/StateStore/Lifecycle/ViewController.swift", "open class ViewController"),
        ("Sources/StateStore/Lifecycle/NavigationController.swift", "open class NavigationController"),
        ("Sources/StateStore/Lifecycle/Storyboard.swift", "public final class Storyboard"),
        ("Sources/StateStore/Restoration/StateRestoring.swift", "public protocol StateRestoring"),
        (
            "Sources/StateStore/Restoration/Application+Restoration.swift",
            "public func restoreHierarchy(in window: Window)"
        ),
        ("Sources/StateStore/Memory/RecreatableCache.swift", "public final class RecreatableCache"),
        ("Sources/StateStore/Memory/MemoryPressureMonitor.swift", "public final class MemoryPressureMonitor"),
    ])
    func aFirstMetDeclarationShowsAnExample(_ file: String, _ declaration: String) throws {
        let lines = try Self.text(file).split(separator: "\n", omittingEmptySubsequences: false)
        let index = try #require(
            lines.firstIndex { $0.trimmingCharacters(in: .whitespaces).hasPrefix(declaration) },
            "\(file) no longer declares \(declaration)")
        var comment: [Substring] = []
        for line in lines[..<index].reversed() {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("///") {
                comment.append(line)
            } else if !trimmed.hasPrefix("@") {
                break
            }
        }
        #expect(comment.contains { $0.contains("```swift") }, "\(declaration) in \(file) has no example")
    }

    /// Each article shows compiled code: a snippet, or (the getting-started article) the mail
    /// app's source; no other article holds a Swift block nothing compiles.
    @Test func everyArticleShowsASnippetAndNoUncompiledSwift() throws {
        let names = Set(try Self.snippetNames)
        for article in try Self.catalogs.flatMap({ try Self.files(under: $0, suffix: ".md") }) {
            let text = try Self.text(article)
            let shown = text.components(separatedBy: "@Snippet(path: \"StateStore/Snippets/").dropFirst()
                .compactMap { $0.split(separator: "\"").first.map(String.init) }
            if article.hasSuffix("/GettingStarted.md") {
                #expect(text.contains("```swift"), "GettingStarted shows the mail app's code")
                continue
            }
            #expect(!shown.isEmpty, "\(article) shows no snippet")
            for name in shown {
                #expect(names.contains(name), "\(article) shows Snippets/\(name).swift, which does not exist")
            }
            #expect(!text.contains("```swift"), "\(article) has a Swift block nothing compiles; make it a snippet")
        }
    }

    /// Each snippet is a program, built beside `statectl`; it runs to the end and exits 0.
    /// Each runs in under a second; the limit is long because the twelve cases start together
    /// and may wait behind the suite's long process tests for a thread (see `hangGuard`).
    @Test(.hangGuard(minutes: 10), arguments: try snippetNames)
    func aSnippetRunsToItsEnd(_ name: String) throws {
        let executable = URL(fileURLWithPath: CLI.executable).deletingLastPathComponent().appending(path: name).path
        let result = try CLI.run([], executable: executable)
        #expect(result.status == 0, "Snippets/\(name).swift: \(result)")
    }
}
