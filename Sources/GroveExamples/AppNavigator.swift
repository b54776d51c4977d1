public import Grove

/// A navigation stack with an optional modal on top: the "Navigation Coordinator" pattern of Oak's
/// *Common Patterns*. Pure: every transition returns `.none`, or `.unhandled` when the event makes
/// no sense where the navigator is (popping the root, dismissing a modal that is not there).
///
/// ```swift
/// var state = AppNavigator.initialState
/// _ = AppNavigator.update(&state, event: .push(.settings))
/// // state == .navigating(stack: [.home, .settings], modal: nil)
/// ```
public enum AppNavigator: Machine {
    /// A screen of the app.
    public enum Route: Codable, Sendable, Hashable {
        /// The start screen and default root.
        case home
        /// A user's profile.
        case profile(User)
        /// The app's settings.
        case settings
        /// The sign-in screen.
        case login
        /// One item of a list.
        case detail(DataItem)
    }

    /// The navigator never ends.
    public enum State: Codable, Sendable, Equatable, NonTerminal {
        /// `stack` is never empty: its first route is the root. `modal` is shown above the stack.
        case navigating(stack: [Route], modal: Route?)
    }

    /// Navigation requests, from the UI or from other machines.
    public enum Event: Codable, Sendable, Equatable {
        /// Replaces the whole stack with `route` as the new root; a modal stays up.
        case navigate(Route)
        /// Shows `route` on top of the stack.
        case push(Route)
        /// Goes back one screen; unhandled at the root, which is never popped.
        case pop
        /// Shows `route` as the modal, replacing a modal already up.
        case presentModal(Route)
        /// Hides the modal; unhandled when none is up.
        case dismissModal
        /// Back to the home screen with no modal.
        case reset
    }

    public static var initialState: State { .navigating(stack: [.home], modal: nil) }

    public static func update(_ state: inout State, event: Event) -> Effect {
        switch state {
        case .navigating(var stack, var modal):
            switch event {
            case .navigate(let route):
                stack = [route]
            case .push(let route):
                stack.append(route)
            case .pop:
                guard stack.count > 1 else { return .unhandled }
                stack.removeLast()
            case .presentModal(let route):
                modal = route
            case .dismissModal:
                guard modal != nil else { return .unhandled }
                modal = nil
            case .reset:
                stack = [.home]
                modal = nil
            }
            state = .navigating(stack: stack, modal: modal)
            return .none
        }
    }
}
