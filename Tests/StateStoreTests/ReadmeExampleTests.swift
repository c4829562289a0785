import Foundation
import Testing
@testable import StateStore

@MainActor
@Suite("The README's example")
struct ReadmeExampleTests {
    @Test func theReadmeShowsTheCompiledExample() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let readme = try String(contentsOf: root.appending(path: "README.md"), encoding: .utf8)
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath).deletingLastPathComponent().appending(path: "ReadmeExample.swift"), encoding: .utf8)
        let code = source.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false)[1]
        #expect(readme.contains("```swift\n" + code + "```\n"))
    }

    @Test func theExampleRestoresTheDraftAfterARelaunch() throws {
        let folder = TemporaryFolder()
        let database = folder.file("mail.sqlite")
        do {
            let application = try launch(database: database)
            let mail = application.windows[0].rootViewController as! NavigationController
            let compose = try application.storyboard.instantiateViewController(withIdentifier: "compose") as! ComposeViewController
            mail.pushViewController(compose, animated: false)
            compose.editor.text = "Dear Ada,"
            application.terminate()
        }
        let relaunched = try launch(database: database)
        let mail = relaunched.windows[0].rootViewController as! NavigationController
        let compose = try #require(mail.topViewController as? ComposeViewController)
        #expect(compose.editor.text == "Dear Ada,")
        #expect(compose.caches.count == 1)
        relaunched.terminate()
    }
}
