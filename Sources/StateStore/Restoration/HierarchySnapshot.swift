/// A window's hierarchy as the main actor captures it at a structural change: its archived
/// controllers in preorder, in one flat array (no tree of nodes, no array per container); the
/// writer makes the ``HierarchyArchive`` from it, off the main actor.
struct HierarchySnapshot: Sendable {
    /// One archived controller. Its archived children follow it (each with its own
    /// descendants), then the controller it presents, when ``presents``.
    struct Entry: Sendable {
        var storyboardIdentifier: String?
        /// Its restoration identifier, when it differs from the storyboard identifier.
        var restorationIdentifier: String?
        var restorationClass: String?
        var kind: HierarchyArchive.Node.Kind
        /// How many archived children follow.
        var childCount: Int32 = 0
        /// The selected tab among them; -1 for none.
        var selectedIndex: Int32 = -1
        var presents = false
    }

    var orientation: String?
    var entries: [Entry] = []
    var unarchived: [HierarchyArchive.Omission] = []

    /// The archive it describes.
    var archive: HierarchyArchive {
        var index = 0
        let root = entries.isEmpty ? nil : node(at: &index)
        assert(index == entries.count, "a snapshot's counts do not match its entries")
        return HierarchyArchive(orientation: orientation, root: root, unarchived: unarchived)
    }

    private func node(at index: inout Int) -> HierarchyArchive.Node {
        let entry = entries[index]
        index += 1
        var children: [HierarchyArchive.Node] = []
        if entry.childCount > 0 {
            children.reserveCapacity(Int(entry.childCount))
            for _ in 0..<entry.childCount { children.append(node(at: &index)) }
        }
        let presented = entry.presents ? node(at: &index) : nil
        return HierarchyArchive.Node(
            storyboardIdentifier: entry.storyboardIdentifier, restorationIdentifier: entry.restorationIdentifier,
            restorationClass: entry.restorationClass, kind: entry.kind, children: children,
            selectedIndex: entry.selectedIndex < 0 ? nil : Int(entry.selectedIndex), presented: presented
        )
    }

    /// Whether ``archive`` would equal `stored`, found without making it: the entries are
    /// compared with `stored`'s nodes in the same order. A relaunch compares the hierarchy it
    /// rebuilt with the archive it read, node by node.
    func describes(_ stored: HierarchyArchive) -> Bool {
        guard stored.format == HierarchyArchive.currentFormat, stored.orientation == orientation,
            stored.unarchived == unarchived
        else { return false }
        guard let root = stored.root else { return entries.isEmpty }
        var index = 0
        return matches(root, at: &index) && index == entries.count
    }

    /// Whether the entries from `index` on describe `node` and its descendants; `index` then
    /// stands past them. The archive's depth is bounded (``HierarchyArchive/Limits``).
    private func matches(_ node: HierarchyArchive.Node, at index: inout Int) -> Bool {
        guard index < entries.count else { return false }
        let entry = entries[index]
        index += 1
        guard entry.kind == node.kind, Int(entry.childCount) == node.children.count,
            (entry.selectedIndex < 0 ? nil : Int(entry.selectedIndex)) == node.selectedIndex,
            entry.presents == (node.presented != nil),
            entry.storyboardIdentifier == node.storyboardIdentifier,
            entry.restorationIdentifier == node.restorationIdentifier,
            entry.restorationClass == node.restorationClass
        else { return false }
        for child in node.children {
            guard matches(child, at: &index) else { return false }
        }
        if let presented = node.presented?.node { return matches(presented, at: &index) }
        return true
    }
}
