extension ViewController {
    /// The name used in traces and violation reports: the restoration identifier, else the type name.
    var lifecycleName: String {
        restorationIdentifier ?? String(describing: type(of: self))
    }

    /// The root of this controller's containment tree.
    var containmentRoot: ViewController {
        var node = self
        while let parent = node.parent { node = parent }
        return node
    }

    /// The window this controller is in, through its parents and presenters.
    public var window: Window? {
        var node = containmentRoot
        while let presenter = node.presentingStorage {
            node = presenter.containmentRoot
        }
        return node.hostingWindow
    }

    /// The application that receives this controller's reports: its window's, else the one
    /// it registered with when created.
    public var application: Application? {
        // With one application alive, the application the controller registered with (when
        // still alive) is its window's too, or the window has none: no walk to the window.
        if Application.instances.load(ordering: .relaxed) == 1, let registeredApplication {
            return registeredApplication
        }
        return window?.application ?? registeredApplication
    }

    /// Whether the controller is in a window that is visible.
    var isInVisibleWindow: Bool { window?.isVisible == true }

    /// Runs `body` (the override) between the observers' willRun and didRun, recording
    /// `text` in the trace.
    func deliver(
        _ callback: LifecycleCallback, animated: Bool = false, _ text: @autoclosure () -> String, _ body: () -> Void
    ) {
        let bit = callback.bit
        guard Application.someApplicationTraces || Application.callbacksSomeApplicationObserves.rawValue & bit != 0,
            let application
        else {
            body()
            return
        }
        if let trace = application.trace, trace.records(callback) {
            trace.record(callback, controller: lifecycleName, text())
        }
        let before = application.observedBeforeCallbacks.rawValue & bit != 0
        let after = application.observedAfterCallbacks.rawValue & bit != 0
        guard before || after else {
            // No observer acts on this callback (the restoration coordinator acts on two).
            body()
            return
        }
        let observers = application.observers
        if before { for observer in observers { observer.controller(self, willRun: callback, animated: animated) } }
        body()
        if after { for observer in observers { observer.controller(self, didRun: callback, animated: animated) } }
    }

    func deliverLayout(_ callback: LifecycleCallback) {
        deliver(callback, "\(callback)") {
            if callback == .viewWillLayoutSubviews { viewWillLayoutSubviews() } else { viewDidLayoutSubviews() }
        }
    }

    func deliverWillMove(toParent newParent: ViewController?) {
        deliver(.willMoveToParent, "willMove(toParent: \(newParent?.lifecycleName ?? "nil"))") {
            willMove(toParent: newParent)
        }
    }

    func deliverDidMove(toParent newParent: ViewController?) {
        deliver(.didMoveToParent, "didMove(toParent: \(newParent?.lifecycleName ?? "nil"))") {
            didMove(toParent: newParent)
        }
    }

    func deliverMemoryWarning(level: MemoryPressureLevel) {
        deliver(.didReceiveMemoryWarning, "didReceiveMemoryWarning(level: \(level))") {
            didReceiveMemoryWarning(level: level)
        }
    }

    /// Sends one appearance callback if the state machine allows it (see ``LifecycleState``);
    /// otherwise reports a violation and sends nothing.
    @discardableResult
    func deliverAppearance(_ callback: LifecycleCallback, animated: Bool) -> Bool {
        let next: LifecycleState?
        switch (callback, lifecycleState) {
        case (.viewWillAppear, .initialized), (.viewWillAppear, .disappeared), (.viewWillAppear, .disappearing):
            next = .appearing
        case (.viewDidAppear, .appearing):
            next = .appeared
        case (.viewWillDisappear, .appeared), (.viewWillDisappear, .appearing):
            next = .disappearing
        case (.viewDidDisappear, .disappearing):
            next = .disappeared
        default:
            next = nil
        }
        guard let next else {
            reportViolation(callback, reason: "illegal transition; the matching \"did\" or a cancel must come first")
            return false
        }
        if callback == .viewWillAppear, !isInVisibleWindow {
            reportViolation(callback, reason: "the controller is not in a visible window")
            return false
        }
        lifecycleState = next
        pendingAnimated = animated
        if callback == .viewWillAppear { sentIsAppearing = false }
        deliver(callback, animated: animated, "\(callback)(animated: \(animated))") {
            switch callback {
            case .viewWillAppear: viewWillAppear(animated)
            case .viewDidAppear: viewDidAppear(animated)
            case .viewWillDisappear: viewWillDisappear(animated)
            default: viewDidDisappear(animated)
            }
        }
        return true
    }

    /// Reports a programmer error with this controller, its state and the attempted callback.
    func reportViolation(_ callback: LifecycleCallback?, reason: String) {
        let violation = LifecycleViolation(
            controller: self, name: lifecycleName, state: lifecycleState, callback: callback, reason: reason)
        if let application {
            application.report(violation)
        } else {
            LifecycleViolation.defaultHandler(violation)
        }
    }

    /// Registers this controller and everything it contains or presents with `application`.
    func adopt(_ application: Application?) {
        guard let application else { return }
        if registeredApplication !== application {
            application.register(self)
        }
        for child in children { child.adopt(application) }
        presentedStorage?.adopt(application)
    }
}
