extension ViewController {
    /// The controller's view, loaded on first access: ``loadView()`` then ``viewDidLoad()``.
    ///
    /// Assign it from an override of ``loadView()``.
    public var view: View {
        get {
            loadViewIfNeeded()
            if let loadedView { return loadedView }
            // Accessed from inside loadView before it assigned one.
            let made = View()
            attachView(made)
            return made
        }
        set {
            attachView(newValue)
        }
    }

    /// Whether the view has been loaded.
    public var isViewLoaded: Bool { loadedView != nil }

    /// The view if it is loaded, without loading it.
    public var viewIfLoaded: View? { loadedView }

    /// Loads the view now if it is not loaded yet.
    public func loadViewIfNeeded() {
        guard loadedView == nil, !isLoadingView else { return }
        isLoadingView = true
        deliver(.loadView, "loadView") { loadView() }
        if loadedView == nil { attachView(View()) }
        isLoadingView = false
        deliver(.viewDidLoad, "viewDidLoad") { viewDidLoad() }
    }

    private func attachView(_ newView: View) {
        let old = loadedView
        if let old, old !== newView {
            old.viewController = nil
        }
        newView.viewController = self
        loadedView = newView
        // The replaced view is released after the assignment, not during it: a view's
        // `deinit` never runs inside an access to `loadedView`.
        #if compiler(>=6.2)
        extendLifetime(old)
        #else
        withExtendedLifetime(old) {}
        #endif
    }
}
