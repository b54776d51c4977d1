import Grove
import GroveExamples
import GroveRuntime
import GroveTesting
import Testing

@Suite("AppNavigator", .timeLimit(.minutes(2)))
struct AppNavigatorTests {
    private let user = User(id: "u-ada", name: "Ada Lovelace", email: "ada@example.com")
    private let item = DataItem(id: "1", title: "Oak")

    @Test("starts at home with no modal")
    func initialState() {
        #expect(AppNavigator.initialState == .navigating(stack: [.home], modal: nil))
    }

    @Test("push and pop walk the stack; the root is never popped")
    func pushAndPop() {
        var state = AppNavigator.initialState
        #expect(AppNavigator.update(&state, event: .push(.profile(user))).isNone)
        #expect(AppNavigator.update(&state, event: .push(.detail(item))).isNone)
        #expect(state == .navigating(stack: [.home, .profile(user), .detail(item)], modal: nil))

        #expect(AppNavigator.update(&state, event: .pop).isNone)
        #expect(AppNavigator.update(&state, event: .pop).isNone)
        #expect(state == .navigating(stack: [.home], modal: nil))

        #expect(AppNavigator.update(&state, event: .pop).isUnhandled)
        #expect(state == .navigating(stack: [.home], modal: nil))
    }

    @Test("navigate replaces the stack with a new root and leaves a modal up")
    func navigateReplacesStack() {
        var state = AppNavigator.State.navigating(stack: [.home, .settings], modal: .login)
        #expect(AppNavigator.update(&state, event: .navigate(.profile(user))).isNone)
        #expect(state == .navigating(stack: [.profile(user)], modal: .login))
        #expect(AppNavigator.update(&state, event: .pop).isUnhandled, "the new root is not popped either")
    }

    @Test("a modal is presented over the stack, replaced by another, and dismissed")
    func modals() {
        var state = AppNavigator.State.navigating(stack: [.home, .settings], modal: nil)
        #expect(AppNavigator.update(&state, event: .dismissModal).isUnhandled)
        #expect(AppNavigator.update(&state, event: .presentModal(.login)).isNone)
        #expect(state == .navigating(stack: [.home, .settings], modal: .login))
        #expect(AppNavigator.update(&state, event: .presentModal(.detail(item))).isNone)
        #expect(state == .navigating(stack: [.home, .settings], modal: .detail(item)))
        #expect(AppNavigator.update(&state, event: .dismissModal).isNone)
        #expect(state == .navigating(stack: [.home, .settings], modal: nil))
    }

    @Test("reset goes home and dismisses the modal")
    func reset() {
        var state = AppNavigator.State.navigating(stack: [.login, .settings], modal: .detail(item))
        #expect(AppNavigator.update(&state, event: .reset).isNone)
        #expect(state == AppNavigator.initialState)
    }

    @Test("states and events survive a JSON round trip")
    func codableRoundTrip() throws {
        let states: [AppNavigator.State] = [
            .navigating(stack: [.home, .profile(user), .detail(item)], modal: .settings),
            .navigating(stack: [.login], modal: nil),
        ]
        let events: [AppNavigator.Event] = [.navigate(.home), .push(.detail(item)), .pop, .presentModal(.profile(user)),
                                            .dismissModal, .reset]
        #expect(try roundTrip(states) == states)
        #expect(try roundTrip(events) == events)
    }

    @Test("a navigation session through the test store; popping the root is reported as unhandled")
    func session() async {
        let store = TestStore(AppNavigator.self)
        await store.send(.push(.detail(item))) { $0 = .navigating(stack: [.home, .detail(self.item)], modal: nil) }
        await store.send(.presentModal(.login)) { $0 = .navigating(stack: [.home, .detail(self.item)], modal: .login) }
        await store.send(.pop) { $0 = .navigating(stack: [.home], modal: .login) }
        await store.sendUnhandled(.pop)
        await store.send(.dismissModal) { $0 = .navigating(stack: [.home], modal: nil) }
        await store.sendUnhandled(.dismissModal)
        await store.send(.navigate(.settings)) { $0 = .navigating(stack: [.settings], modal: nil) }
        await store.send(.reset) { $0 = .navigating(stack: [.home], modal: nil) }
        await store.finish()
    }
}
