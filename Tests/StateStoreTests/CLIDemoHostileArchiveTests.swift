import Foundation
import Testing

@testable import StateStore

@Suite("statectl demo over a hostile archive", .hangGuard(minutes: 10))
struct CLIDemoHostileArchiveTests {
    /// Two presentations in one containment tree used to trap a debug build in the lifecycle
    /// engine during the relaunch; now the archive is set aside with the reason before anything is made.
    @Test func demoSetsAsideAnArchiveWithTwoPresentationsInOneContainmentTree() throws {
        let folder = TemporaryFolder()
        let db = folder.file("demo.sqlite")
        #expect(try CLI.run(["demo", "--db", db]).status == 0)
        let hostile = #"""
            {"format":2,"orientation":"portrait","root":{"kind":"tabBar","storyboardIdentifier":"tabs","selectedIndex":0,
            "children":[{"kind":"navigation","storyboardIdentifier":"mail","children":[{"kind":"plain","storyboardIdentifier":"inbox","children":[]}],
            "presented":{"kind":"plain","storyboardIdentifier":"settings","children":[]}}],
            "presented":{"kind":"plain","storyboardIdentifier":"compose","children":[]}}}
            """#
        do {
            let store = try StateStore(path: db)
            try store.write { (transaction) throws(StateStoreError) in
                try transaction.setHierarchyArchive(Data(hostile.utf8))
            }
        }
        let result = try CLI.run(["demo", "--db", db])
        #expect(result.status == 0, "\(result)")
        #expect(
            result.stderr.contains(
                "could not be rebuilt (at tabs/mail: two controllers of one containment tree present (tabs too); only one presentation per tree is possible); it was set aside"
            ), "\(result)")
        let setAside = try CLI.run(["inspect", "--db", db, "--hierarchy", "--set-aside"])
        #expect(setAside.stdout.contains("      ⤷ presents settings\n   ⤷ presents compose"), "\(setAside)")
    }
}
