import Grove
import GroveExamples
import GroveRuntime
import GroveTesting
import Testing

@Suite("UserPostsFeature (TCA-SM, seed 004's phases and mock)", .timeLimit(.minutes(2)))
struct UserPostsFeatureTests {
    typealias Feature = UserPostsFeature
    static let ada = ExampleHandlers.demoAccounts[0].user
    static let token = Feature.Token("t-u-ada")
    static let posts = [Feature.Post(title: "Notes on the Analytical Engine"), Feature.Post(title: "Sketch of the Engine")]

    @Test("each phase's result leads to the next phase and its one effect")
    func phases() {
        #expect(Feature.reduceIOResult(.authenticating, .token(Self.token)) == (.fetchingUser(token: Self.token), .fetchUser(Self.token)))
        #expect(Feature.reduceIOResult(.fetchingUser(token: Self.token), .user(Self.ada))
            == (.fetchingPosts(user: Self.ada, token: Self.token), .fetchPosts(Self.ada)))
        #expect(Feature.reduceIOResult(.fetchingPosts(user: Self.ada, token: Self.token), .posts([]))
            == (.complete(user: Self.ada, posts: []), nil))
        #expect(Feature.reduceIOResult(.fetchingUser(token: Self.token), .posts([])) == Feature.undefined, "a result of another phase")
        #expect(Feature.reduceInput(.authenticating, .start(email: "a", password: "b")) == Feature.undefined)
    }

    @Test("the demo mock walks Ada through every phase to her posts")
    func demoRun() async {
        let store = TestStore(IOMachine<Feature>.self, env: .demo)
        await store.send(.input(.start(email: Self.ada.email, password: "analytical"))) { $0 = .authenticating }
        await store.receive(.ioResult(.token(Self.token))) { $0 = .fetchingUser(token: Self.token) }
        await store.receive(.ioResult(.user(Self.ada))) { $0 = .fetchingPosts(user: Self.ada, token: Self.token) }
        await store.receive(.ioResult(.posts(Self.posts))) { $0 = .complete(user: Self.ada, posts: Self.posts) }
        await store.finish()
    }

    @Test("an effect the mock does not know fails the run, which can start again")
    func unknownEffectFails() async {
        let store = TestStore(IOMachine<Feature>.self, env: .demo)
        let wrong = Feature.IOEffect.authenticate(email: Self.ada.email, password: "wrong")
        let message = "no result for \(wrong)"
        await store.send(.input(.start(email: Self.ada.email, password: "wrong"))) { $0 = .authenticating }
        await store.receive(.ioResult(.failure(message))) { $0 = .failed(message) }
        await store.send(.input(.start(email: Self.ada.email, password: "analytical"))) { $0 = .authenticating }
        await store.receive(.ioResult(.token(Self.token))) { $0 = .fetchingUser(token: Self.token) }
        await store.receive(.ioResult(.user(Self.ada))) { $0 = .fetchingPosts(user: Self.ada, token: Self.token) }
        await store.receive(.ioResult(.posts(Self.posts))) { $0 = .complete(user: Self.ada, posts: Self.posts) }
        await store.finish()
    }
}
