import Dispatch
import Foundation
import Logging

// Restoration paths: the identifiers from a controller up to its window's root, and its scene,
// found once and kept on the controller's record.
extension RestorationCoordinator {
    // MARK: Restoration paths

    /// The chain of restoration identifiers from the root to `controller`, through parents
    /// and presenting controllers; `nil` when one is missing, invalid or shared by a sibling.
    ///
    /// In a window of a scene other than the default one (``Window/defaultSceneIdentifier``),
    /// the path starts with the scene's component (its identifier, or none for a scene
    /// archived before scenes had identities), so two windows showing the same controllers
    /// keep separate states.
    public func restorationPath(for controller: ViewController) -> RestorationPath? {
        if let record = existingRecord(of: controller) { return pathEntry(for: controller, record: record)?.path }
        return findPath(of: controller)?.entry.path
    }

    /// The entry of the controller's restoration path (``restorationPath(for:)``), kept on its
    /// record with the identifiers that lead to it.
    func pathEntry(for controller: ViewController, record: Record) -> PathEntry? {
        if let cached = record.path, isUnchanged(cached, for: controller) { return cached.entry }
        guard let found = findPath(of: controller) else { return nil }
        record.path = found
        return found.entry
    }

    /// The identifiers a walk to the root met (leaf first) and its scene: what a path is
    /// found by once it has been built and validated (``knownPaths``).
    /// Compared and hashed by the identifiers' UTF-8 bytes, as paths are: `é` (U+00E9) and
    /// `e` + U+0301 are equal `String`s but different paths.
    struct PathKey: Hashable {
        let leafFirst: [String]
        let scene: String?

        static func == (a: PathKey, b: PathKey) -> Bool {
            guard a.leafFirst.count == b.leafFirst.count, sameBytes(a.scene, b.scene) else { return false }
            for index in a.leafFirst.indices where !sameBytes(a.leafFirst[index], b.leafFirst[index]) { return false }
            return true
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(leafFirst.count)
            for identifier in leafFirst { Self.combine(identifier, into: &hasher) }
            if let scene { Self.combine(scene, into: &hasher) } else { hasher.combine(-1) }
        }

        static func combine(_ text: String, into hasher: inout Hasher) {
            var text = text
            text.withUTF8 { bytes in
                hasher.combine(bytes.count)
                hasher.combine(bytes: UnsafeRawBufferPointer(bytes))
            }
        }

        static func sameBytes(_ a: String?, _ b: String?) -> Bool {
            guard let a, let b else { return a == nil && b == nil }
            return RestorationCoordinator.sameBytes(a, b)
        }
    }

    /// Whether two identifiers are the same bytes (not merely canonically equivalent).
    nonisolated static func sameBytes(_ a: String, _ b: String) -> Bool {
        // The same representation (the same storage, or the same small-string bytes) holds the
        // same bytes: the usual case, an identifier compared with the one read from the same
        // controller before, costs two integer comparisons.
        if MemoryLayout<String>.size == 16,
            unsafeBitCast(a, to: (UInt64, UInt64).self) == unsafeBitCast(b, to: (UInt64, UInt64).self)
        {
            return true
        }
        guard a.utf8.count == b.utf8.count else { return false }
        // Native strings are contiguous UTF-8: one memcmp, not a walk of two UTF-8 views.
        let compared = a.utf8.withContiguousStorageIfAvailable { x in
            b.utf8.withContiguousStorageIfAvailable { y in
                x.isEmpty || memcmp(x.baseAddress!, y.baseAddress!, x.count) == 0
            }
        }
        if let compared, let compared { return compared }
        return a.utf8.elementsEqual(b.utf8)
    }
    /// The most paths ``knownPaths`` holds before it starts afresh.
    static let knownPathsLimit = 4096

    /// Whether the walk from `controller` to the root meets the identifiers of `cached`, none
    /// shared by a sibling, and ends in the same scene; no path is built.
    func isUnchanged(_ cached: CachedPath, for controller: ViewController) -> Bool {
        let leafFirst = cached.leafFirst
        var index = 0
        // One level: whether it matches, and the level above it. `controller` is the caller's
        // and is looked at as it is; each level above comes from a weak load, which gives the
        // walk its own reference. No more is retained (a controller's retain and release take
        // the runtime's slow path, as `allUnretained` explains).
        func level(_ node: ViewController) -> (matches: Bool, next: ViewController?) {
            guard index < leafFirst.count, let identifier = node.restorationIdentifier,
                Self.sameBytes(identifier, leafFirst[index])
            else { return (false, nil) }
            index += 1
            if let parent = node.parent {
                return isShared(identifier, of: node, in: parent) ? (false, nil) : (true, parent)
            }
            // Without a parent, `node` is its containment root: its presenter is `presentingViewController`.
            if let presenter = node.presentingStorage { return (true, presenter) }
            guard index == leafFirst.count else { return (false, nil) }
            switch (node.hostingWindow?.sceneIdentifier, cached.scene) {
            case (nil, nil): return (true, nil)
            case let (scene?, cachedScene?): return (Self.sameBytes(scene, cachedScene), nil)
            default: return (false, nil)
            }
        }
        var (matches, next) = level(controller)
        while matches, let above = next {
            (matches, next) = level(above)
        }
        return matches
    }

    func findPath(of controller: ViewController) -> CachedPath? {
        // The cache serves the few paths a navigating app meets again and again; a rebuild or a
        // pass over many controllers (each path met once) neither reads nor fills it.
        let usesCache = batchDepth == 0 && !isRestoringHierarchy
        // The few paths met last first (a new page of the kind just pushed): each compared by a
        // walk that stops at the first identifier that differs, with no list of identifiers
        // built. A walk that meets a shared identifier matches none; the walk below reports it.
        if usesCache {
            for recent in recentPaths where isUnchanged(recent, for: controller) {
                remember(recent)
                return recent
            }
        }
        var components: [String] = []
        components.reserveCapacity(4)
        var shared = false
        var node: ViewController = controller
        while true {
            guard let identifier = node.restorationIdentifier else { return nil }
            components.append(identifier)
            if let parent = node.parent {
                if isShared(identifier, of: node, in: parent) { shared = true }
                node = parent
            } else if let presenter = node.presentingStorage {
                node = presenter
            } else {
                break
            }
        }
        // The walk ended at the root of everything `controller` is in: its window's root.
        let scene = node.hostingWindow?.sceneIdentifier
        let key = usesCache ? PathKey(leafFirst: components, scene: scene) : nil
        if !shared, let key, let known = knownPaths[key] {
            remember(known)
            return known
        }
        let path: RestorationPath
        do {
            let prefix = try pathPrefix(of: scene)
            path = try RestorationPath(prefix: prefix?.isEmpty == false ? prefix : nil, leafFirst: components)
        } catch {
            report(.store(error))
            return nil
        }
        if shared {
            if reportedDuplicates.insert(path).inserted { report(.duplicateRestorationIdentifier(path: path)) }
            return nil
        }
        let found = CachedPath(leafFirst: components, scene: scene, entry: entry(path))
        // Bounded: many distinct paths met outside a rebuild start it afresh.
        if let key {
            if knownPaths.count >= Self.knownPathsLimit { knownPaths = [:] }
            knownPaths[key] = found
            remember(found)
        }
        return found
    }

    /// Puts `path` first among ``recentPaths``, which keeps four.
    func remember(_ path: CachedPath) {
        if let first = recentPaths.first, first === path { return }
        recentPaths.removeIdentical(path)
        if recentPaths.count == 4 { recentPaths.removeLast() }
        recentPaths.insert(path, at: 0)
    }

    /// Whether `controller`, a child of `parent`, shares `identifier` with a sibling.
    ///
    /// A controller its parent no longer lists is leaving it (a stack or a tab bar replaced by
    /// `setViewControllers` drops it before the transition). It shares its path only with a
    /// listed child of its identifier that has been on screen before, a twin that stays (a
    /// screen pushed twice, one popped): then neither is saved, as while both were listed.
    /// A listed one never shown is the new instance replacing it, which gets its last state.
    func isShared(_ identifier: String, of controller: ViewController, in parent: ViewController) -> Bool {
        let children = parent.children
        if children.isEmpty { return false }
        // Terminating closes every window in one pass, which changes no identifier: each
        // parent's duplicates are looked at once there too, not once per disappearing child
        // (100,000 children of one container took minutes to close).
        guard isRestoringHierarchy || batchDepth > 0 || isTerminating, children.count > 16 else {
            var listed = false, twin = false, shownTwin = false
            _ = children.allUnretained { child in
                if child === controller {
                    listed = true
                } else if child.restorationIdentifier == identifier {
                    twin = true
                    if child.lifecycleState != .initialized { shownTwin = true }
                }
                return !(listed && twin)
            }
            return listed ? twin : shownTwin
        }
        let key = ObjectIdentifier(parent)
        let siblings: Siblings
        if let known = duplicateIdentifiersByParent[key] {
            siblings = known
        } else {
            var seen = Set<String>(minimumCapacity: children.count)
            var found = Siblings(duplicates: [], members: Set(minimumCapacity: children.count))
            for child in children {
                found.members.insert(ObjectIdentifier(child))
                if let name = child.restorationIdentifier, !seen.insert(name).inserted { found.duplicates.insert(name) }
            }
            duplicateIdentifiersByParent[key] = found
            siblings = found
        }
        guard siblings.members.contains(ObjectIdentifier(controller)) else {
            return children.contains { $0.restorationIdentifier == identifier && $0.lifecycleState != .initialized }
        }
        return !siblings.duplicates.isEmpty && siblings.duplicates.contains(identifier)
    }

    /// The path component the controllers of `scene` save under: none for the default scene,
    /// else the one recorded for the scene (none for scenes archived before scenes had
    /// identities), else the scene identifier itself.
    func pathPrefix(of scene: String?) throws(StateStoreError) -> String? {
        guard let scene, scene != Window.defaultSceneIdentifier else { return nil }
        if let known = scenePrefixes[scene] { return known }
        let prefix = try store.scenePathPrefix(scene: scene) ?? scene
        scenePrefixes[scene] = prefix
        return prefix
    }

    /// The restoration path of a controller of `scene` whose identifiers from the root are `components`.
    func restorationPath(components: [String], scene: String) throws(StateStoreError) -> RestorationPath {
        if let prefix = try pathPrefix(of: scene), !prefix.isEmpty {
            return try RestorationPath(components: [prefix] + components)
        }
        return try RestorationPath(components: components)
    }
}
