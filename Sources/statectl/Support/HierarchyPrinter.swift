import Foundation
import StateStore

/// Shows a window hierarchy archive (``HierarchyArchive``) as a tree, or in JSON.
///
/// ```
/// main (portrait)
/// └─ tabs [TabBarController] selected: mail
///    ├─ mail [NavigationController]
///    │  ├─ inbox
///    │  └─ message
///    └─ settings
///    ⤷ presents compose
/// ```
///
/// Each controller is named by its storyboard identifier (with `restoration: ID` when its
/// restoration identifier differs), or, built in code, by its restoration identifier with
/// `built in code` (and its class when it is not a built-in container); containers show
/// their kind, a tab bar its selected tab, and `⤷ presents` the controller presented modally
/// over it. Controllers the app could not archive follow under "Not archived", with the reason.
/// An archive this build cannot decode is shown as stored (JSON, else a hex dump), with the reason.
enum HierarchyPrinter {
    /// The archive decoded, or why it cannot be.
    static func decode(_ data: Data) -> Result<HierarchyArchive, StateStoreError> {
        Result { () throws(StateStoreError) in try HierarchyArchive(decoding: data) }
    }

    /// The scenes with a live archive; empty when the database predates scenes (inspect never migrates).
    static func savedScenes(in store: StateStore) -> [String] {
        (try? store.savedSceneIdentifiers()) ?? []
    }

    /// Why the set-aside archive of `scene` was set aside, if the library recorded it.
    static func setAsideReason(in store: StateStore, scene: String) -> String? {
        try? store.hierarchySetAsideReason(scene: scene)
    }

    /// Every value from the database is shown escaped (control, format and bidi characters as
    /// `\u{…}`, newlines as `\n`) and a reason at most ``maximumReasonLength`` characters long.
    static func text(
        archive data: Data?, scene rawScene: String, setAside: Bool, otherScenes rawOthers: [String] = [],
        setAsideReason rawReason: String? = nil
    ) -> String {
        let scene = Table.visible(rawScene)
        let otherScenes = rawOthers.map(Table.visible)
        let setAsideReason = rawReason.map(shortened)
        let which = setAside ? "set-aside hierarchy archive" : "hierarchy archive"
        guard let data else {
            let others = otherScenes.filter { $0 != scene }
            guard !others.isEmpty else { return "No \(which) for scene \"\(scene)\"." }
            return
                "No \(which) for scene \"\(scene)\". Scenes with an archive (--scene): \(others.joined(separator: ", "))."
        }
        switch decode(data) {
        case .success(let archive):
            var heading = "\(scene) (\(Table.visible(archive.orientation ?? "orientation unknown")))"
            if setAside { heading += ", set aside: not restored at the last launch" }
            if archive.format > HierarchyArchive.currentFormat {
                heading += ", format \(archive.format) (newer than this build's \(HierarchyArchive.currentFormat))"
            }
            var lines = [heading]
            if let root = archive.root {
                render(root, connector: "└─ ", childPrefix: "   ", into: &lines)
            } else {
                lines.append("└─ (no controllers)")
            }
            if setAside, let setAsideReason { lines.append("Set aside because: \(setAsideReason)") }
            if !archive.unarchived.isEmpty {
                lines.append("Not archived (a relaunch does not rebuild these; their states are kept):")
                for omission in archive.unarchived {
                    lines.append(
                        "  \(Table.visible(omission.path)) (\(Table.visible(omission.typeName))): \(shortened(omission.reason))"
                    )
                }
            }
            return lines.joined(separator: "\n")
        case .failure(let error):
            var lines = [
                "The \(which) for scene \"\(scene)\" (\(Format.bytes(data.count))) is not one this build can read: \(reason(error))"
            ]
            if setAside, let setAsideReason { lines.append("Set aside because: \(setAsideReason)") }
            if data.count > printedArchiveLimit {
                lines.append("Too large to print; the first bytes:")
                lines.append(Format.hexDump(data))
            } else if let value = StatePrinter.jsonValue(of: data) {
                lines.append(value.serialized(pretty: true, sortKeys: true))
            } else {
                lines.append("Not JSON; the first bytes:")
                lines.append(Format.hexDump(data))
            }
            return lines.joined(separator: "\n")
        }
    }

    /// `kind: "hierarchy"` members: `scene`, `set_aside`, `found`, `set_aside_reason` (a set-aside
    /// archive whose reason was recorded), and when found `byte_count`,
    /// `readable`, `archive` (the decoded archive; the stored JSON, or `null`, when unreadable),
    /// `reason` (when unreadable) and `base64` (when the bytes are not JSON).
    static func json(
        archive data: Data?, scene: String, setAside: Bool, setAsideReason: String? = nil
    ) -> [(key: String, value: JSON)] {
        var members: [(key: String, value: JSON)] = [
            ("scene", .string(scene)),
            ("set_aside", .bool(setAside)),
            ("found", .bool(data != nil)),
        ]
        if setAside, data != nil, let setAsideReason { members.append(("set_aside_reason", .string(setAsideReason))) }
        guard let data else { return members }
        members.append(("byte_count", .int(data.count)))
        switch decode(data) {
        case .success(let archive):
            members.append(("readable", .bool(true)))
            members.append(("archive", json(archive)))
        case .failure(let error):
            members.append(("readable", .bool(false)))
            members.append(("reason", .string(reason(error))))
            if data.count <= printedArchiveLimit, let value = StatePrinter.jsonValue(of: data) {
                members.append(("archive", value))
            } else {
                members.append(("archive", .null))
                members.append(("base64", .string(data.base64EncodedString())))
            }
        }
        return members
    }

    // MARK: Tree

    private static func render(
        _ node: HierarchyArchive.Node, connector: String, childPrefix: String, into lines: inout [String]
    ) {
        lines.append(connector + Table.visible(label(node)))
        for (index, child) in node.children.enumerated() {
            let last = index == node.children.count - 1
            render(
                child, connector: childPrefix + (last ? "└─ " : "├─ "),
                childPrefix: childPrefix + (last ? "   " : "│  "), into: &lines)
        }
        if let presented = node.presented?.node {
            render(presented, connector: childPrefix + "⤷ presents ", childPrefix: childPrefix + "   ", into: &lines)
        }
    }

    /// An unreadable archive larger than this is not parsed to be printed whole.
    static let printedArchiveLimit = 1 << 20

    private static func name(_ node: HierarchyArchive.Node) -> String {
        node.storyboardIdentifier ?? node.displayName
    }

    private static func label(_ node: HierarchyArchive.Node) -> String {
        var text = name(node)
        if node.storyboardIdentifier == nil {
            let builtIn = [
                "StateStore.ViewController", "StateStore.NavigationController", "StateStore.TabBarController",
            ]
            if let type = node.restorationClass, !builtIn.contains(type) {
                text += " (built in code: \(type))"
            } else {
                text += " (built in code)"
            }
        } else if let restoration = node.restorationIdentifier {
            text += " (restoration: \(restoration))"
        }
        switch node.kind {
        case .plain: break
        case .navigation: text += " [NavigationController]"
        case .tabBar:
            text += " [TabBarController]"
            if let index = node.selectedIndex {
                text +=
                    " selected: " + (node.children.indices.contains(index) ? name(node.children[index]) : "#\(index)")
            }
        }
        return text
    }

    // MARK: JSON

    /// The archive with its own key names, `null` for absent optionals.
    private static func json(_ archive: HierarchyArchive) -> JSON {
        .object([
            ("format", .int(archive.format)),
            ("orientation", archive.orientation.map(JSON.string) ?? .null),
            ("root", archive.root.map(json) ?? .null),
            (
                "unarchived",
                .array(
                    archive.unarchived.map { omission in
                        .object([
                            ("path", .string(omission.path)),
                            ("typeName", .string(omission.typeName)),
                            ("reason", .string(omission.reason)),
                        ])
                    })
            ),
        ])
    }

    private static func json(_ node: HierarchyArchive.Node) -> JSON {
        .object([
            ("storyboardIdentifier", node.storyboardIdentifier.map(JSON.string) ?? .null),
            ("restorationIdentifier", node.restorationIdentifier.map(JSON.string) ?? .null),
            ("restorationClass", node.restorationClass.map(JSON.string) ?? .null),
            ("kind", .string(node.kind.rawValue)),
            ("children", .array(node.children.map(json))),
            ("selectedIndex", node.selectedIndex.map { .int($0) } ?? .null),
            ("presented", node.presented.map { json($0.node) } ?? .null),
        ])
    }

    private static func reason(_ error: StateStoreError) -> String {
        var text = oneLine(error.description)
        if case .decodingFailed(_, let reason) = error { text = oneLine(reason) }
        return text.count > 200 ? String(text.prefix(200)) + "…" : text
    }

    /// The longest reason printed; a longer one (a partial rebuild listing thousands of
    /// controllers) is cut, with the count of characters left out.
    static let maximumReasonLength = 2_000

    /// `text` on one line, escaped, and cut at ``maximumReasonLength``.
    static func shortened(_ text: String) -> String {
        let line = Table.visible(oneLine(text))
        guard line.count > maximumReasonLength else { return line }
        return String(line.prefix(maximumReasonLength)) + "… (\(line.count - maximumReasonLength) more characters)"
    }
}
