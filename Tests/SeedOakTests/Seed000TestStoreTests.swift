import Foundation
import Grove
import GroveRuntime
import GroveTestSupport
import GroveTesting
import Testing

/// Seed 000's machines, as written, in the exhaustive `TestStore`: every state change and every
/// event an effect sends is asserted. PollingService's loop sleeps with its environment's sleeper
/// and stamps updates with its clock (the seam in its file): here both are a `ManualSleeper`, so
/// ticks come when the test wakes the loop, and no test waits out real time.
@Suite("Seed 000 in TestStore", .timeLimit(.minutes(2)))
struct Seed000TestStoreTests {
    static let items = [DataItem(id: "1", title: "Oak")]
    static let ada = User(id: "u-ada", name: "Ada")

    @Test("DataLoader: a failed load, dismissed; a load that arrives; retry is ignored when loaded")
    func dataLoader() async {
        let fail = Locked(true)
        let env = DataLoader.Env(
            dataService: {
                if fail.value { throw TestError("offline") }
                return Self.items
            },
            connectivity: { true })
        let store = TestStore(Oak<DataLoader>.self, env: env)
        await store.send(.load) { $0 = .loading }
        await store.receive(.loadFailed(TestError("offline"))) { $0 = .error(TestError("offline"), canRetry: true) }
        await store.send(.dismiss) { $0 = .idle }
        fail.set(false)
        await store.send(.load) { $0 = .loading }
        await store.receive(.dataReceived(Self.items)) { $0 = .loaded(Self.items) }
        await store.send(.retry)    // `default: return nil`: handled, the state stays
        await store.finish()
    }

    @Test("AuthFlow: a second factor, a wrong code that asks again, the right one authenticates")
    func authFlow() async {
        let env = AuthFlow.Env(
            authenticate: { _, _ in .requiresTwoFactor(token: "t-1") },
            verifyTwoFactor: { _, code in
                guard code == "424242" else { throw TestError("wrong code") }
                return Self.ada
            },
            maxAttempts: 3)
        let store = TestStore(Oak<AuthFlow>.self, env: env)
        await store.send(.startLogin) { $0 = .enteringCredentials(email: "", password: "") }
        await store.send(.updateEmail("ada@example.com")) { $0 = .enteringCredentials(email: "ada@example.com", password: "") }
        await store.send(.updatePassword("pw")) { $0 = .enteringCredentials(email: "ada@example.com", password: "pw") }
        await store.send(.login) { $0 = .authenticating(email: "ada@example.com", password: "pw") }
        await store.receive(.twoFactorRequired(token: "t-1")) { $0 = .requiresTwoFactor(token: "t-1", email: "ada@example.com") }
        await store.send(.updateTwoFactorCode("000000")) {
            $0 = .enteringTwoFactor(token: "t-1", email: "ada@example.com", code: "000000")
        }
        await store.send(.submitTwoFactor) { $0 = .verifyingTwoFactor(token: "t-1", email: "ada@example.com", code: "000000") }
        await store.receive(.twoFactorFailed(TestError("wrong code"))) { $0 = .requiresTwoFactor(token: "t-1", email: "ada@example.com") }
        await store.send(.updateTwoFactorCode("424242")) {
            $0 = .enteringTwoFactor(token: "t-1", email: "ada@example.com", code: "424242")
        }
        await store.send(.submitTwoFactor) { $0 = .verifyingTwoFactor(token: "t-1", email: "ada@example.com", code: "424242") }
        await store.receive(.twoFactorVerified(Self.ada)) { $0 = .authenticated(Self.ada) }
        await store.finish()
    }

    @Test("UserForm: each update is validated; only a valid form submits, and that ends the run")
    func userForm() async {
        let env = UserForm.Env(
            submitForm: { _ in .success(confirmation: "F-1") },
            validateForm: { data in data.email.isValidEmail ? [] : [.invalidEmail] })
        let store = TestStore(Oak<UserForm>.self, env: env)
        var data = UserForm.FormData()
        data.email = "ada"
        await store.send(.updateEmail("ada")) { [data] in $0 = .editing(data, errors: []) }
        await store.receive(.validationComplete([.invalidEmail])) { [data] in $0 = .editing(data, errors: [.invalidEmail]) }
        await store.send(.submit)   // not valid: `return nil`, the state stays
        data.email = "ada@example.com"
        await store.send(.updateEmail("ada@example.com")) { [data] in $0 = .editing(data, errors: []) }
        await store.receive(.validationComplete([])) { [data] in $0 = .editing(data, errors: []) }
        data.phone = "555 0100 200"
        await store.send(.updatePhone("555 0100 200")) { [data] in $0 = .editing(data, errors: []) }
        await store.receive(.validationComplete([])) { [data] in $0 = .editing(data, errors: []) }
        await store.send(.submit)   // no name yet: `isValid` is false, the state stays
        data.name = "Ada"
        await store.send(.updateName("Ada")) { [data] in $0 = .editing(data, errors: []) }
        await store.receive(.validationComplete([])) { [data] in $0 = .editing(data, errors: []) }
        await store.send(.submit) { [data] in $0 = .submitting(data) }
        await store.receive(.submissionComplete(.success(confirmation: "F-1"))) {
            $0 = .submitted(result: .success(confirmation: "F-1"))
        }
        await store.finish()
    }

    @Test("AppNavigator: push, a modal, pop down to home and no further, reset")
    func appNavigator() async {
        let store = TestStore(Oak<AppNavigator>.self)
        await store.send(.push(.settings)) { $0 = .navigating(stack: [.home, .settings], modal: nil) }
        await store.send(.presentModal(.login)) { $0 = .navigating(stack: [.home, .settings], modal: .login) }
        await store.send(.dismissModal) { $0 = .navigating(stack: [.home, .settings], modal: nil) }
        await store.send(.pop) { $0 = .navigating(stack: [.home], modal: nil) }
        await store.send(.pop)      // the root stays
        await store.send(.navigate(.detail(Item(id: "7")))) { $0 = .navigating(stack: [.detail(Item(id: "7"))], modal: nil) }
        await store.send(.reset) { $0 = .navigating(stack: [.home], modal: nil) }
        await store.finish()
    }

    @Test("PollingService: start ticks at once, a wake is the next tick; pause, resume and stop end the loop")
    func pollingService() async {
        let sleeper = ManualSleeper()
        let news = Data("news".utf8)
        let env = PollingService.Env(fetchData: { news }, sleep: { try await sleeper.sleep(for: $0) }, now: { sleeper.now() })
        let store = TestStore(Oak<PollingService>.self, env: env)
        let start = sleeper.now()

        await store.send(.startPolling(interval: 30)) { $0 = .polling(interval: 30, lastUpdate: nil) }
        await store.receive(.tick)      // the loop's first tick, at once: fetch, the state stays
        await store.receive(.dataUpdated(news, at: start)) { $0 = .polling(interval: 30, lastUpdate: start) }

        sleeper.wake()                  // 30 s pass: the next tick
        let later = start.addingTimeInterval(30)
        await store.receive(.tick)
        await store.receive(.dataUpdated(news, at: later)) { $0 = .polling(interval: 30, lastUpdate: later) }

        await store.send(.pausePolling) { $0 = .paused(interval: 30, lastUpdate: later) }
        await store.send(.tick)         // paused: `default: return nil`, nothing to fetch
        await store.send(.resumePolling) { $0 = .polling(interval: 30, lastUpdate: later) }
        await store.receive(.tick)
        await store.receive(.dataUpdated(news, at: later))   // no time passed while paused
        await store.send(.stopPolling) { $0 = .idle }
        await store.finish()            // fails if the loop were still running
        #expect(sleeper.requested == [.seconds(30), .seconds(30), .seconds(30)],
                "each loop sleeps for the interval: the first, after the wake, after resume")
    }
}
