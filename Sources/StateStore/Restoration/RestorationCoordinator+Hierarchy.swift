import Foundation

extension RestorationCoordinator {
    /// The archive key of `window`: `"main"` for the application's first window, else `"window<N>"`.
    func sceneName(of window: Window, in application: Application) -> String {
        let index = application.windows.firstIndex { $0 === window } ?? 0
        return index == 0 ? "main" : "\(scenePrefix)\(index)"
    }

    /// The shape of `window` now: its controllers by storyboard identifier, in their containers.
    func makeArchive(of window: Window) -> HierarchyArchive {
        HierarchyArchive(
            orientation: window.orientation.rawValue,
            root: window.rootViewController.flatMap { node(for: $0) }
        )
    }

    private func node(for controller: ViewController) -> HierarchyArchive.Node? {
        guard let storyboardIdentifier = controller.storyboardIdentifier else { return nil }
        var kept: [ViewController] = []
        var children: [HierarchyArchive.Node] = []
        for child in controller.children {
            if let childNode = node(for: child) {
                kept.append(child)
                children.append(childNode)
            }
        }
        let kind: HierarchyArchive.Node.Kind
        var selectedIndex: Int?
        if controller is NavigationController {
            kind = .navigation
        } else if let tabs = controller as? TabBarController {
            kind = .tabBar
            let selected = tabs.viewControllers.indices.contains(tabs.selectedIndex) ? tabs.viewControllers[tabs.selectedIndex] : nil
            selectedIndex = kept.firstIndex { $0 === selected }
        } else {
            kind = .plain
        }
        var presented: HierarchyArchive.Node?
        if let modal = controller.presentedViewController, modal.presentingViewController === controller {
            presented = node(for: modal)
        }
        return HierarchyArchive.Node(
            storyboardIdentifier: storyboardIdentifier,
            restorationIdentifier: controller.restorationIdentifier == storyboardIdentifier ? nil : controller.restorationIdentifier,
            kind: kind,
            children: children,
            selectedIndex: selectedIndex,
            presented: presented
        )
    }

    /// Instantiates the controllers of `node` from `storyboard`, containers filled, and lists
    /// the presentations to make once the root is in a window (presenter, archived presented node).
    func instantiate(
        _ node: HierarchyArchive.Node, from storyboard: Storyboard,
        presentations: inout [(ViewController, HierarchyArchive.Node)]
    ) throws(RestorationError) -> ViewController {
        let controller: ViewController
        do {
            controller = try storyboard.instantiateViewController(withIdentifier: node.storyboardIdentifier)
        } catch {
            throw .archiveUnusable(reason: error.description)
        }
        if let identifier = node.restorationIdentifier { controller.restorationIdentifier = identifier }
        var children: [ViewController] = []
        for child in node.children {
            children.append(try instantiate(child, from: storyboard, presentations: &presentations))
        }
        switch node.kind {
        case .navigation:
            guard let navigation = controller as? NavigationController else {
                throw .archiveUnusable(reason: "\"\(node.storyboardIdentifier)\" no longer makes a NavigationController")
            }
            navigation.setViewControllers(children, animated: false)
        case .tabBar:
            guard let tabs = controller as? TabBarController else {
                throw .archiveUnusable(reason: "\"\(node.storyboardIdentifier)\" no longer makes a TabBarController")
            }
            tabs.viewControllers = children
            if let index = node.selectedIndex, children.indices.contains(index) { tabs.selectedIndex = index }
        case .plain:
            // The engine sends willMove/didMove(toParent:) itself.
            for child in children { controller.addChild(child) }
        }
        if let presented = node.presented?.node { presentations.append((controller, presented)) }
        return controller
    }

    /// Every controller of `controller`'s tree, parents before children, presented ones after their presenter.
    func preorder(_ controller: ViewController) -> [ViewController] {
        var result = [controller]
        for child in controller.children { result += preorder(child) }
        if let modal = controller.presentedViewController, modal.presentingViewController === controller {
            result += preorder(modal)
        }
        return result
    }
}
