extension Window {
    /// The presentation layers on screen, bottom first: the root, then each presented
    /// controller, going down from the top only while a layer's
    /// ``ViewController/modalPresentationStyle`` keeps what is under it visible.
    var visibleLayers: [ViewController] {
        guard let top = topViewController else { return [] }
        return ViewController.visibleLayers(from: top).reversed()
    }

    /// Every controller on screen, parents before children, bottom layer first.
    var visibleControllers: [ViewController] {
        isVisible ? visibleLayers.flatMap(\.visibleTree) : []
    }

    /// Changes the size and orientation, telling the controllers on screen as ``rotate(to:)`` describes.
    func changeSize(to newSize: Size, orientation newOrientation: InterfaceOrientation) {
        let oldOrientation = orientation
        let rotating = newOrientation != oldOrientation
        let visible = visibleControllers
        let coordinator = TransitionCoordinator(
            isAnimated: isVisible, isInteractive: false, transitionDuration: rotationDuration)
        let newTraits = TraitCollection(windowSize: newSize)
        let duration = rotationDuration
        TransitionQueue.run {
            let outer = TransitionCoordinator.sizeTransition
            TransitionCoordinator.sizeTransition = coordinator
            defer { TransitionCoordinator.sizeTransition = outer }
            if rotating {
                for controller in visible {
                    controller.deliver(.willRotate, "willRotate(to: \(newOrientation), duration: \(duration))") {
                        (controller as any LegacyRotationCallbacks).willRotate(to: newOrientation, duration: duration)
                    }
                }
            }
            for controller in visible where controller.lastTraitCollection.map({ $0 != newTraits }) ?? false {
                controller.deliver(.willTransitionToTraitCollection, "willTransition(to: \(newTraits))") {
                    controller.willTransition(to: newTraits, with: coordinator)
                }
            }
            for controller in visible {
                controller.deliver(.viewWillTransition, "viewWillTransition(to: \(newSize))") {
                    controller.viewWillTransition(to: newSize, with: coordinator)
                }
            }
            orientation = newOrientation
            size = newSize
            for controller in visible { controller.updateTraitsIfChanged() }
            if isVisible {
                if rotating {
                    for layer in visibleLayers { layer.loadedView?.setNeedsLayoutRecursively() }
                }
                layoutVisible()
            }
            coordinator.runAnimations()
            if rotating {
                for controller in visible {
                    controller.deliver(.didRotate, "didRotate(from: \(oldOrientation))") {
                        (controller as any LegacyRotationCallbacks).didRotate(from: oldOrientation)
                    }
                }
            }
            coordinator.complete(cancelled: false)
        }
    }
}

/// The deprecated rotation callbacks, called through a protocol so the engine can still
/// send them without using deprecated API itself.
@MainActor
protocol LegacyRotationCallbacks {
    func willRotate(to toInterfaceOrientation: InterfaceOrientation, duration: Double)
    func didRotate(from fromInterfaceOrientation: InterfaceOrientation)
}

extension ViewController: LegacyRotationCallbacks {}
