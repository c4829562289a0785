import Dispatch
import Foundation
import Logging

// The lifecycle observer: a restore before `viewWillAppear`, a save after `viewWillDisappear`,
// an archive at each structural change, memory warnings and termination.
extension RestorationCoordinator {
    // MARK: LifecycleObserver

    /// It restores before `viewWillAppear` runs and saves after `viewWillDisappear` ran; the
    /// engine does not call it otherwise.
    var observedBeforeCallbacks: LifecycleCallback.Mask { LifecycleCallback.Mask([.viewWillAppear]) }
    var observedAfterCallbacks: LifecycleCallback.Mask { LifecycleCallback.Mask([.viewWillDisappear]) }

    public func controller(_ controller: ViewController, willRun callback: LifecycleCallback, animated: Bool) {
        guard callback == .viewWillAppear, let type = restoringType(of: controller) else { return }
        restore(controller, as: type)
    }

    public func controller(_ controller: ViewController, didRun callback: LifecycleCallback, animated: Bool) {
        guard callback == .viewWillDisappear, let type = restoringType(of: controller) else { return }
        enqueueSave(controller, as: type)
        handOverLater()
    }

    /// The controller's class as a `StateRestoring` type, or `nil` when it does not conform:
    /// looked up once per class (a cast to `any StateRestoring` asks the runtime each time),
    /// in a short list scanned from its front, where the classes met most recently stay.
    func restoringType(of controller: ViewController) -> (any StateRestoring.Type)? {
        let key = ObjectIdentifier(type(of: controller))
        for index in restoringTypes.indices where restoringTypes[index].key == key {
            let entry = restoringTypes[index]
            if index > 0 { restoringTypes.swapAt(index, index - 1) }
            return entry.type
        }
        let type = (controller as? any StateRestoring).map { Swift.type(of: $0) }
        if restoringTypes.count == 16 { restoringTypes.removeLast() }
        restoringTypes.insert(RestoringType(key: key, type: type), at: restoringTypes.count / 2)
        return type
    }

    /// Sends `applicationFinishedRestoringState()` to `controller` when it restores a state,
    /// its conformance taken from the cache (a rebuild sends it to every node).
    func finishRestoring(_ controller: ViewController) {
        if let type = restoringType(of: controller) { finishRestoring(controller, as: type) }
    }

    func finishRestoring<C: StateRestoring>(_ controller: ViewController, as _: C.Type) {
        unsafeDowncast(controller, to: C.self).applicationFinishedRestoringState()
    }

    func restore<C: StateRestoring>(_ controller: ViewController, as _: C.Type) {
        guard readOnlyWindows > 0, let window = controller.window, isReadOnly(window) else {
            restore(unsafeDowncast(controller, to: C.self))
            return
        }
        restoringReadOnly = true
        defer { restoringReadOnly = false }
        restore(unsafeDowncast(controller, to: C.self))
    }

    func enqueueSave<C: StateRestoring>(_ controller: ViewController, as _: C.Type) {
        enqueueSave(unsafeDowncast(controller, to: C.self))
    }

    public func hierarchyDidChange(in window: Window) {
        if window.isClosed, !isTerminating {
            // The user closed the window: its scene is gone, and a relaunch must not rebuild
            // it. Its states stay in the store. A read-only window's scene is another
            // process's. The claim goes once the removal is written.
            if !isReadOnly(window) { queuedRemovals.append(window.sceneIdentifier) }
            submit()
            windowDidClose(window)
            return
        }
        if isTerminating {
            // Terminating is a flush point: the controllers that disappeared as the windows
            // closed are written before the process goes, and only then is the scene let go.
            flush()
            if window.isClosed { windowDidClose(window) }
            return
        }
        guard !isRestoringHierarchy, !window.isClosed else {
            submit()
            return
        }
        submit(archiving: window)
    }

    public func applicationDidReceiveMemoryWarning(_ application: Application, level: MemoryPressureLevel) {
        // Recreatable: a path met again is found by its walk and validated again.
        knownPaths = [:]
        recentPaths = []
        // An OOM kill may follow a critical warning: everything visible goes to disk now.
        if level == .critical {
            saveVisibleControllers(of: application)
            store.releaseMemory()
            // The flush put the states it wrote in the cache, after the registry purged it.
            recentStates.purge(for: level)
        } else {
            // After the writes already queued, without waiting for them.
            submit(releasingMemory: true)
        }
    }

    public func applicationDidRespondToMemoryWarning(_ application: Application, report: MemoryWarningReport) {
        queuedEvents.append(
            PressureEvent(
                occurredAt: report.raisedAt, level: report.level, availableBytes: report.availableBytes ?? 0,
                rssBefore: report.rssBefore, rssAfter: report.rssAfter, duration: report.duration
            ))
        submit(waking: report.level != .critical)
        if report.level == .critical { settle() }
    }

    public func applicationWillTerminate(_ application: Application) {
        saveVisibleControllers(of: application)
        isTerminating = true
    }
}
