import Foundation

extension RestorationCoordinator {
    /// The archive key of `window`: its persistent ``Window/sceneIdentifier``.
    func sceneName(of window: Window, in application: Application) -> String {
        window.sceneIdentifier
    }

    // MARK: Archiving

    /// The shape of `window` now, as the snapshot the writer turns into its archive: its
    /// controllers and how to make each again, in their containers, with the controllers that
    /// have a restoration identifier but cannot be archived listed (and reported once each).
    /// For a window that has an application (``submit(archiving:stored:releasingMemory:waking:)``
    /// archives no other).
    func makeArchive(of window: Window) -> HierarchySnapshot {
        var omissions: [HierarchyArchive.Omission] = []
        var snapshot = HierarchySnapshot(orientation: window.orientation.rawValue)
        if let controller = window.rootViewController {
            // Room for the controllers the last capture met and a few more (a push or a
            // presentation adds some), and at least a navigation's usual depth: a capture then
            // allocates once. At most 1,024: the last capture may have been of another, much
            // larger window, and a larger one grows as it always did.
            snapshot.entries.reserveCapacity(min(max(8, lastCaptureCount + 4), 1024))
            var sources = ClassSources()
            appendNode(for: controller, depth: 1, to: &snapshot.entries, omissions: &omissions, sources: &sources)
        }
        lastCaptureCount = snapshot.entries.count
        for omission in omissions where reportedOmissions.insert(omission).inserted {
            report(.notArchivable(omission))
        }
        if !omissions.isEmpty { snapshot.unarchived = Array(omissions.prefix(HierarchyArchive.maximumOmissions)) }
        return snapshot
    }

    /// How `controller` is made again, or why it cannot be.
    private enum Source {
        case storyboard(String)
        case codeBuilt(restorationClass: String)
        case unarchivable(reason: String)
    }

    /// What one capture learned of a controller class: its name and whether the engine can make
    /// it (a factory registered for the class, or a built-in container). Kept for the class met
    /// last, as siblings mostly share one, and only while the capture runs: a factory registered
    /// during a capture (by a `restorationIdentifier` getter) counts from the next one.
    private struct ClassSources {
        /// The storyboard that makes the window's code-built controllers again, their
        /// application's: asked of the first one met, as every controller of a window that has
        /// an application (the only kind archived) reports to that application.
        var storyboard: Storyboard??
        var last: (type: ObjectIdentifier, typeName: String, makeable: Bool)?
    }

    private func source(of controller: ViewController, _ sources: inout ClassSources) -> Source {
        if let storyboardIdentifier = controller.storyboardIdentifier { return .storyboard(storyboardIdentifier) }
        let storyboard: Storyboard?
        if let known = sources.storyboard {
            storyboard = known
        } else {
            storyboard = controller.application?.storyboard
            sources.storyboard = .some(storyboard)
        }
        let classID = ObjectIdentifier(type(of: controller))
        let typeName: String
        let makeable: Bool
        if let last = sources.last, last.type == classID {
            (typeName, makeable) = (last.typeName, last.makeable)
        } else {
            typeName = StateCoding.typeName(type(of: controller))
            makeable =
                storyboard?.hasRestorationFactory(typeName: typeName) == true || BuiltInContainer(controller) != nil
            sources.last = (classID, typeName, makeable)
        }
        if makeable { return .codeBuilt(restorationClass: typeName) }
        if let identifier = controller.restorationIdentifier,
            storyboard?.hasRestorationFactory(identifier: identifier) == true
        {
            return .codeBuilt(restorationClass: typeName)
        }
        return .unarchivable(
            reason: """
                built in code as \(typeName), which the engine cannot make: register a factory with \
                Storyboard.registerRestoration(identifier:_:) or registerRestoration(of:_:), or instantiate it from the storyboard
                """)
    }

    private static func location(_ parent: String, _ separator: String, _ controller: ViewController) -> String {
        let name = controller.restorationIdentifier ?? "<\(type(of: controller))>"
        return parent.isEmpty ? name : parent + separator + name
    }

    /// Where `controller` is, for messages: the names from the window's root down, `/` before a
    /// contained child, ` ⤷ ` before a presented controller. Found only for an omission, by
    /// walking up, so archiving a healthy hierarchy builds no location strings.
    private static func location(of controller: ViewController) -> String {
        var steps: [(separator: String, controller: ViewController)] = []
        var node = controller
        while true {
            if let parent = node.parent {
                steps.append(("/", node))
                node = parent
            } else if let presenter = node.presentingStorage {
                steps.append((" ⤷ ", node))
                node = presenter
            } else {
                steps.append(("/", node))
                break
            }
        }
        var text = ""
        for step in steps.reversed() { text = location(text, step.separator, step.controller) }
        return text
    }

    /// Appends the entries of `controller` and what it contains and presents; `false` when
    /// it is not archived (listed in `omissions` when it should have been).
    @discardableResult
    private func appendNode(
        for controller: ViewController, depth: Int, to entries: inout [HierarchySnapshot.Entry],
        omissions: inout [HierarchyArchive.Omission], sources: inout ClassSources
    ) -> Bool {
        var location: String { Self.location(of: controller) }
        guard let restorationIdentifier = controller.restorationIdentifier else {
            reportIdentifiedDescendants(of: controller, location: location, omissions: &omissions)
            return false
        }
        if depth > archiveLimits.maximumDepth {
            omissions.append(
                .init(
                    path: location, typeName: StateCoding.typeName(type(of: controller)),
                    reason: "nested deeper than \(archiveLimits.maximumDepth) controllers, the most an archive rebuilds"
                ))
            return false
        }
        let storyboardIdentifier: String?
        let restorationClass: String?
        switch source(of: controller, &sources) {
        case .storyboard(let identifier):
            storyboardIdentifier = identifier
            restorationClass = nil
        case .codeBuilt(let typeName):
            storyboardIdentifier = nil
            restorationClass = typeName
        case .unarchivable(let reason):
            omissions.append(
                .init(path: location, typeName: StateCoding.typeName(type(of: controller)), reason: reason))
            return false
        }
        let kind: HierarchyArchive.Node.Kind
        // The selected tab's controller, whose index among the archived children is recorded.
        var selected: ViewController?
        if controller is NavigationController {
            kind = .navigation
        } else if let tabs = controller as? TabBarController {
            kind = .tabBar
            selected = tabs.selectedViewController
        } else {
            kind = .plain
        }
        let index = entries.count
        entries.append(
            HierarchySnapshot.Entry(
                storyboardIdentifier: storyboardIdentifier,
                restorationIdentifier: restorationIdentifier == storyboardIdentifier ? nil : restorationIdentifier,
                restorationClass: restorationClass,
                kind: kind
            ))
        var archivedChildren: Int32 = 0
        let children = controller.children
        _ = children.allUnretained { child in
            if appendNode(for: child, depth: depth + 1, to: &entries, omissions: &omissions, sources: &sources) {
                if child === selected { entries[index].selectedIndex = archivedChildren }
                archivedChildren += 1
            }
            return true
        }
        entries[index].childCount = archivedChildren
        if let modal = controller.presentedStorage, modal.presentingViewController === controller,
            appendNode(for: modal, depth: depth + 1, to: &entries, omissions: &omissions, sources: &sources)
        {
            entries[index].presents = true
        }
        return true
    }

    /// A controller without a restoration identifier is not archived, nor is anything below it:
    /// the topmost controllers below it that have one are listed, so none is dropped silently.
    private func reportIdentifiedDescendants(
        of controller: ViewController, location: String, omissions: inout [HierarchyArchive.Omission]
    ) {
        var stack: [(ViewController, String)] = controller.children.reversed().map { ($0, location) }
        if let modal = controller.presentedStorage, modal.presentingViewController === controller {
            stack.insert((modal, location), at: 0)
        }
        while let (current, parentLocation) = stack.popLast() {
            let currentLocation = Self.location(parentLocation, "/", current)
            if current.restorationIdentifier != nil {
                omissions.append(
                    .init(
                        path: currentLocation, typeName: StateCoding.typeName(type(of: current)),
                        reason:
                            "inside \(location) (\(type(of: controller))), which has no restoration identifier: give it one"
                    ))
                continue
            }
            if let modal = current.presentedStorage, modal.presentingViewController === current {
                stack.append((modal, currentLocation))
            }
            stack += current.children.reversed().map { ($0, currentLocation) }
        }
    }

    // MARK: Rebuilding

    /// What a rebuild made of an archive.
    struct Rebuild {
        /// Presentations to make once the root is in a window: presenter, archived presented
        /// node, and the presenter's path components as archived and as the code names them now.
        var presentations: [(ViewController, HierarchyArchive.Node, archived: [String], current: [String])] = []
        /// Nodes that could not be made, with their descendants.
        var notRebuilt: [HierarchyArchive.Omission] = []
        /// Controllers whose path differs from the archived one (their code, or an ancestor's,
        /// now gives another restoration identifier): the archived and the current components.
        var renamed: [(archived: [String], current: [String])] = []
    }

    /// Makes the controller of `node` and its children (containers filled), or returns `nil`
    /// and lists it in `rebuild.notRebuilt` when this build cannot make it.
    ///
    /// Each controller is made as ``HierarchyArchive`` describes. Its restoration identifier is
    /// the one its own code gives it (set in `init` or `awakeFromNib`); only a controller whose
    /// code sets none takes the archived one. Children are added in one pass, so the rebuild
    /// costs time linear in the number of nodes.
    func instantiate(
        _ node: HierarchyArchive.Node, from storyboard: Storyboard,
        archivedParent: [String], currentParent: [String], location: String,
        rebuild: inout Rebuild
    ) throws(RestorationError) -> ViewController? {
        var trail = RebuildTrail(archived: archivedParent, current: currentParent, location: [location])
        return try instantiate(node, from: storyboard, trail: &trail, rebuild: &rebuild)
    }

    /// Where a rebuild is: the path components from the root as archived and as the code names
    /// them now, and the node's location for messages as parts joined with `/` (joined only
    /// for a message). Kept as stacks, so a large rebuild makes no arrays or strings per node.
    struct RebuildTrail {
        var archived: [String]
        var current: [String]
        var location: [String]
        var locationText: String { location.joined(separator: "/") }
    }

    private func instantiate(
        _ node: HierarchyArchive.Node, from storyboard: Storyboard, trail: inout RebuildTrail, rebuild: inout Rebuild
    ) throws(RestorationError) -> ViewController? {
        let controller: ViewController
        let archivedIdentifier = node.effectiveRestorationIdentifier
        func skip(_ reason: String) -> ViewController? {
            rebuild.notRebuilt.append(.init(path: trail.locationText, typeName: node.typeDescription, reason: reason))
            return nil
        }
        if let storyboardIdentifier = node.storyboardIdentifier {
            do {
                controller = try storyboard.instantiateViewController(withIdentifier: storyboardIdentifier)
            } catch {
                return skip(error.description)
            }
            if let archivedIdentifier, controller.restorationIdentifier == storyboardIdentifier {
                controller.restorationIdentifier = archivedIdentifier
            }
        } else if let made = storyboard.makeForRestoration(
            identifier: archivedIdentifier, typeName: node.restorationClass)
        {
            controller = made
            if controller.restorationIdentifier == nil { controller.restorationIdentifier = archivedIdentifier }
        } else if let builtIn = node.restorationClass.flatMap(BuiltInContainer.init(typeName:)) {
            controller = builtIn.make()
            controller.restorationIdentifier = archivedIdentifier
        } else {
            return skip(
                """
                no factory is registered for restoration identifier "\(archivedIdentifier ?? "")" \
                or class \(node.restorationClass ?? "(none)"): register one with Storyboard.registerRestoration
                """)
        }
        return try populate(controller, from: node, storyboard: storyboard, trail: &trail, rebuild: &rebuild)
    }

    /// Gives `controller`, made for `node` (by a factory, or by its container as one of its
    /// own), the node's children and presentation, rebuilt.
    private func populate(
        _ controller: ViewController, from node: HierarchyArchive.Node, storyboard: Storyboard,
        trail: inout RebuildTrail, rebuild: inout Rebuild
    ) throws(RestorationError) -> ViewController? {
        func skip(_ reason: String) -> ViewController? {
            rebuild.notRebuilt.append(.init(path: trail.locationText, typeName: node.typeDescription, reason: reason))
            return nil
        }
        trail.archived.append(node.effectiveRestorationIdentifier ?? "")
        trail.current.append(controller.restorationIdentifier ?? "")
        defer {
            trail.archived.removeLast()
            trail.current.removeLast()
        }
        if trail.archived != trail.current { rebuild.renamed.append((trail.archived, trail.current)) }
        // A plain container's children made by its own code in `init`, by restoration
        // identifier: the archived child of that identifier is that one, given its own
        // archived children and presentation, not a second instance beside it.
        var own: [String: ViewController] = [:]
        if node.kind == .plain, !node.children.isEmpty, !controller.children.isEmpty {
            for child in controller.children {
                if let identifier = child.restorationIdentifier, own[identifier] == nil { own[identifier] = child }
            }
        }
        var children: [ViewController] = []
        children.reserveCapacity(node.children.count)
        var selected: ViewController?
        for (index, child) in node.children.enumerated() {
            trail.location.append(child.displayName)
            defer { trail.location.removeLast() }
            if !own.isEmpty, let identifier = child.effectiveRestorationIdentifier,
                let mine = own.removeValue(forKey: identifier)
            {
                _ = try populate(mine, from: child, storyboard: storyboard, trail: &trail, rebuild: &rebuild)
                continue
            }
            if let made = try instantiate(child, from: storyboard, trail: &trail, rebuild: &rebuild) {
                // One the container's code may make again as its view loads: `addChild` then
                // puts that one in its place, with what this one contains (not one with a
                // presentation of its own, which would be lost).
                if node.kind == .plain, child.presented == nil { made.placedByRebuild = true }
                children.append(made)
                if index == node.selectedIndex { selected = made }
            }
        }
        switch node.kind {
        case .navigation:
            guard let navigation = controller as? NavigationController else {
                throw .archiveUnusable(reason: "\"\(node.displayName)\" no longer makes a NavigationController")
            }
            if children.isEmpty, !node.children.isEmpty {
                // None of its screens could be made again (all renamed, say): the stack this
                // build makes stays, and a navigation controller with none is no screen to show:
                // not rebuilt (a tab bar's factory then keeps its own tab; as the window's root,
                // the archive is set aside).
                guard !navigation.viewControllers.isEmpty else {
                    return skip("none of its screens could be rebuilt")
                }
            } else {
                navigation.setViewControllers(children, animated: false)
            }
        case .tabBar:
            guard let tabs = controller as? TabBarController else {
                throw .archiveUnusable(reason: "\"\(node.displayName)\" no longer makes a TabBarController")
            }
            let ownTabs = tabs.viewControllers
            if ownTabs.isEmpty {
                tabs.viewControllers = children
            } else {
                // A tab bar its factory makes with its tabs keeps this build's tabs, a tab added
                // since the archive was written included; each one archived is put back in its
                // place, found by its restoration identifier. An archived tab this build no
                // longer has is not rebuilt (its states stay in the store).
                tabs.viewControllers = mergeTabs(
                    ownTabs, archived: children, location: trail.locationText, rebuild: &rebuild)
            }
            if let selected, tabs.viewControllers.contains(where: { $0 === selected }) {
                tabs.selectedViewController = selected
            }
        case .plain:
            if !children.isEmpty, controller is NavigationController || controller is TabBarController {
                throw .archiveUnusable(
                    reason: "\"\(node.displayName)\" now makes a \(type(of: controller)), not a plain container")
            }
            if children.contains(where: \.placedByRebuild) { controller.holdsRebuiltChildren = true }
            // The engine sends willMove/didMove(toParent:) itself.
            controller.addChildrenWhileOffscreen(children)
        }
        if let presented = node.presented?.node {
            rebuild.presentations.append((controller, presented, trail.archived, trail.current))
        }
        return controller
    }

    /// `own`, a tab bar's tabs as its factory made them, with each one that has an archived tab
    /// of the same restoration identifier replaced by that one; archived tabs matching none are
    /// listed as not rebuilt.
    private func mergeTabs(
        _ own: [ViewController], archived: [ViewController], location: String, rebuild: inout Rebuild
    ) -> [ViewController] {
        var byIdentifier: [String: ViewController] = [:]
        for tab in archived {
            guard let identifier = tab.restorationIdentifier, byIdentifier[identifier] == nil else { continue }
            byIdentifier[identifier] = tab
        }
        let merged = own.map { tab in tab.restorationIdentifier.flatMap { byIdentifier.removeValue(forKey: $0) } ?? tab
        }
        for tab in archived where !merged.contains(where: { $0 === tab }) {
            rebuild.notRebuilt.append(
                .init(
                    path: location + "/" + (tab.restorationIdentifier ?? String(describing: type(of: tab))),
                    typeName: String(reflecting: type(of: tab)),
                    reason:
                        "the tab bar this build makes has no tab \"\(tab.restorationIdentifier ?? "")\"; its states stay in the store"
                ))
        }
        return merged
    }

    /// Every controller of `controller`'s tree, parents before children, presented ones after
    /// their presenter (the order `applicationFinishedRestoringState` is sent in).
    func preorder(_ controller: ViewController) -> [ViewController] {
        var result: [ViewController] = []
        forEachInPreorder(controller) { result.append($0) }
        return result
    }

    /// Calls `body` with every controller of `root`'s tree in ``preorder(_:)``'s order, without
    /// collecting them: each controller is retained once, by the walk. `body` must not change
    /// the hierarchy.
    func forEachInPreorder(_ root: ViewController, _ body: (ViewController) -> Void) {
        /// A controller being walked: its children, held so that each step does not read them
        /// again, and the next one to visit (`children.count`: what it presents).
        struct Frame {
            let node: ViewController
            let children: [ViewController]
            var next = 0
        }
        body(root)
        var frames = [Frame(node: root, children: root.children)]
        while !frames.isEmpty {
            let top = frames.count - 1
            let next = frames[top].next
            frames[top].next = next + 1
            let child: ViewController
            if next < frames[top].children.count {
                child = frames[top].children[next]
            } else if next == frames[top].children.count, let modal = frames[top].node.presentedStorage,
                modal.presentingViewController === frames[top].node
            {
                child = modal
            } else {
                frames.removeLast()
                continue
            }
            body(child)
            // A leaf (most controllers of a large hierarchy) needs no frame of its own.
            let grandchildren = child.children
            if !grandchildren.isEmpty || child.presentedStorage != nil {
                frames.append(Frame(node: child, children: grandchildren))
            }
        }
    }
}

extension HierarchyArchive.Node {
    /// The node's type for messages: its class, else its storyboard identifier.
    var typeDescription: String {
        restorationClass ?? storyboardIdentifier.map { "storyboard identifier \"\($0)\"" } ?? "unknown"
    }
}

extension RestorationCoordinator {
    /// Moves each renamed controller's state from its archived path to its current one, in one
    /// transaction, when the current path holds none; reports the ones that could not move.
    /// Rows are never deleted: a state that cannot move stays where it is.
    func followRenamedIdentifiers(
        _ renamed: [(archived: [String], current: [String])], scene: String
    ) -> [HierarchyRestoration.Move] {
        var moves: [HierarchyRestoration.Move] = []
        for (archived, current) in renamed where !archived.contains("") && !current.contains("") {
            do {
                let from = try restorationPath(components: archived, scene: scene)
                let to = try restorationPath(components: current, scene: scene)
                if from != to { moves.append(.init(from: from, to: to)) }
            } catch {
                report(.store(error))
            }
        }
        guard !moves.isEmpty else { return [] }
        do {
            var unopened: [StateStoreError] = []
            let results = try store.write { (transaction) throws(StateStoreError) -> [Bool?] in
                var results: [Bool?] = []
                for move in moves {
                    do throws(StateStoreError) {
                        if try transaction.moveState(from: move.from, to: move.to) {
                            results.append(true)
                        } else {
                            // Not moved: nothing was saved under the old path, or the new one has a state.
                            results.append(try transaction.hasState(at: move.from) ? false : nil)
                        }
                    } catch .keyMismatch(let path, let found, let configured) {
                        // Sealed with a key this store was not given: it stays where it is, unread.
                        unopened.append(.keyMismatch(path: path, found: found, configured: configured))
                        results.append(false)
                    }
                }
                return results
            }
            for error in unopened { report(.store(error)) }
            var done: [HierarchyRestoration.Move] = []
            for (move, moved) in zip(moves, results) {
                if moved == true { done.append(move) }
                if moved == false { report(.stateNotMoved(from: move.from, to: move.to)) }
            }
            return done
        } catch {
            report(.store(error))
            return []
        }
    }
}
