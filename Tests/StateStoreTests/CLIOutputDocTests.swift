import Foundation
import Testing

/// `docs/cli-output.md` is what the built `statectl` prints: made again from
/// ``CLIOutputDocument`` and compared with the committed file, times and memory numbers aside.
@Suite(.hangGuard(minutes: 10)) struct CLIOutputDocTests {
    @Test func theCommittedDocumentIsWhatStatectlPrints() throws {
        let document = try CLIOutputDocument.generate()
        try Snapshot.check(
            document, against: Snapshot.packageRoot.appending(path: "docs/cli-output.md"),
            regenerate: "scripts/cli-output (or STATESTORE_UPDATE_SNAPSHOTS=1 swift test --filter CLIOutputDocTests)",
            normalize: CLIOutputDocument.normalize
        )
    }

    /// The masking keeps what is the same on every run.
    @Test func normalizingMasksOnlyWhatVaries() {
        let text = """
            tabs/compose       MailExample.ComposeController.Draft        1  125 B           1  2026-11-21 06:14:41
            Updated:     2026-11-21T06:14:41.962Z
              RSS 26.1 MiB → 26.0 MiB, cache cost released 28.9 KiB, 6 controllers
            2026-11-21 06:14:42  critical        0 B    26.3 MiB   26.2 MiB  104.0 KiB    106 µs
            2026-11-21 06:14:42    23.5 GiB    22.2 GiB         max   173.2 MiB         max      0.00      0.00    22.2 GiB     94.2  normal
            {"schema":1,"kind":"sample","time":"2026-11-21T06:14:42.506Z","level":"normal","host":{"total":1},"cgroup":null}
            """
        #expect(
            CLIOutputDocument.normalize(text) == """
                tabs/compose MailExample.ComposeController.Draft 1 125 B 1 <time>
                Updated: <time>
                 RSS <n> → <n>, cache cost released <n>, <n> controllers
                <time> critical <n> <n> <n> <n> <n>
                <time> <n> <n> <n> <n> <n> <n> <n> <n> <n> <level>
                sample with keys cgroup, host, kind, level, schema, time
                """)
    }
}
