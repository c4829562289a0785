/// An opt-in recorder of the callbacks the lifecycle engine sends, one line per callback.
///
/// Attach one to an application to see, in order, what every controller received:
///
/// ```swift
/// let trace = LifecycleTrace()
/// application.trace = trace
/// window.makeKeyAndVisible()
/// print(trace.lines)  // ["NavigationController: loadView", "NavigationController: viewDidLoad", …]
/// ```
///
/// ## Line format
///
/// `<controller>: <callback>[(<arguments>)]`, where `<controller>` is the controller's
/// ``ViewController/restorationIdentifier``, or its type name when it has none, and the
/// arguments are written as in Swift source:
///
/// - `Inbox: loadView`, `Inbox: viewDidLoad`, `Inbox: awakeFromNib`
/// - `Inbox: viewWillAppear(animated: true)` (likewise `viewDidAppear`, `viewWillDisappear`, `viewDidDisappear`)
/// - `Inbox: viewWillLayoutSubviews`, `Inbox: viewDidLayoutSubviews`
/// - `Inbox: didReceiveMemoryWarning(level: warning)`
/// - `Inbox: viewIsAppearing(animated: true)`
/// - `Inbox: willRotate(to: landscapeLeft, duration: 0.3)`, `Inbox: didRotate(from: portrait)`
/// - `Inbox: willTransition(to: compact×compact)`, `Inbox: viewWillTransition(to: 844.0x390.0)`,
///   `Inbox: traitCollectionDidChange(from: compact×regular)`
/// - `Inbox: willMove(toParent: Mail)`, `Inbox: didMove(toParent: nil)`
///
/// A line is recorded just before the callback's override runs, so callbacks that an
/// override causes appear after it.
@MainActor
public final class LifecycleTrace {
    /// The recorded lines, oldest first.
    public private(set) var lines: [String] = []

    /// The callbacks this trace records; others are ignored.
    public var callbacks: Set<LifecycleCallback>

    /// When `true`, each line is also printed to standard output as it is recorded.
    public var echo: Bool

    /// Creates a trace.
    ///
    /// - Parameters:
    ///   - callbacks: The callbacks to record. Defaults to all of them; pass
    ///     ``LifecycleCallback/appearance`` to see only appear/disappear callbacks.
    ///   - echo: Whether to print each line as it is recorded.
    public init(recording callbacks: Set<LifecycleCallback> = Set(LifecycleCallback.allCases), echo: Bool = false) {
        self.callbacks = callbacks
        self.echo = echo
    }

    /// Whether `callback` is recorded by this trace.
    public func records(_ callback: LifecycleCallback) -> Bool { callbacks.contains(callback) }

    /// Appends a line of your own, for instance a marker between steps of a demo.
    public func append(_ line: String) {
        lines.append(line)
        if echo { print(line) }
    }

    /// The lines of the controller named `name`, without the `"name: "` prefix.
    public func lines(for name: String) -> [String] {
        let prefix = name + ": "
        return lines.filter { $0.hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count)) }
    }

    /// Forgets every recorded line.
    public func removeAll() { lines.removeAll() }

    func record(_ callback: LifecycleCallback, controller name: String, _ text: String) {
        guard callbacks.contains(callback) else { return }
        append("\(name): \(text)")
    }
}
