public import Grove

/// Signs in, then fetches the user and their posts, one IO effect per phase: TCA-SM's
/// "Multi-Step Operations as State Phases" (seed 004), with the seed's "IO Mocking" as its
/// effect runner (`mockResults[effect]`), written with Codable types so that it runs on a worker.
///
/// Each phase is a state that carries what the next step needs (the token, then the user), so a
/// new state is where a step's result leads and the one effect in flight always belongs to the
/// current phase. An effect the mock does not know fails the run.
///
/// ```swift
/// let feature = UserPostsFeature(mockResults: [.authenticate(email: "ada@example.com", password: "pw"): .token(t), …])
/// let host = MachineHost(IOMachine<UserPostsFeature>.self, env: feature)
/// try host.send(.input(.start(email: "ada@example.com", password: "pw")))
/// ```
public struct UserPostsFeature: IOStateMachine {
    /// A session token.
    public struct Token: Codable, Sendable, Hashable {
        /// The token's text.
        public var value: String
        /// A token with the text `value`.
        public init(_ value: String) { self.value = value }
    }

    /// A post of the user's.
    public struct Post: Codable, Sendable, Hashable {
        /// The post's title.
        public var title: String
        /// A post titled `title`.
        public init(title: String) { self.title = title }
    }

    /// The seed's phases; `failed` holds a message, as states must be Codable.
    public enum State: Codable, Sendable, Equatable {
        /// Nothing started.
        case ready
        /// Signing in.
        case authenticating
        /// Signed in; fetching the user.
        case fetchingUser(token: Token)
        /// Fetching the user's posts.
        case fetchingPosts(user: User, token: Token)
        /// Done: the user and their posts.
        case complete(user: User, posts: [Post])
        /// A step failed, and why.
        case failed(String)
    }

    /// What the user does.
    public enum Input: Codable, Sendable, Equatable {
        /// Sign in and load, from `ready`, `complete` or `failed`.
        case start(email: String, password: String)
    }

    /// One effect per phase.
    public enum IOEffect: Codable, Sendable, Hashable {
        /// Sign in with credentials.
        case authenticate(email: String, password: String)
        /// Fetch the token's user.
        case fetchUser(Token)
        /// Fetch the user's posts.
        case fetchPosts(User)
    }

    /// What each phase's effect reports.
    public enum IOResult: Codable, Sendable, Hashable {
        /// Signed in.
        case token(Token)
        /// The user fetched.
        case user(User)
        /// The posts fetched.
        case posts([Post])
        /// A step failed, and why.
        case failure(String)
    }

    /// The seed's mock: each effect's result.
    public let mockResults: [IOEffect: IOResult]

    /// A feature whose effects answer from `mockResults`.
    public init(mockResults: [IOEffect: IOResult]) { self.mockResults = mockResults }

    public static var initialState: State { .ready }

    public static func reduceInput(_ state: State, _ input: Input) -> Transition {
        switch (state, input) {
        case (.ready, .start(let email, let password)), (.complete, .start(let email, let password)),
             (.failed, .start(let email, let password)):
            transition(.authenticating, effect: .authenticate(email: email, password: password))
        case (.authenticating, .start), (.fetchingUser, .start), (.fetchingPosts, .start):
            undefined
        }
    }

    public static func reduceIOResult(_ state: State, _ ioResult: IOResult) -> Transition {
        switch (state, ioResult) {
        case (.authenticating, .token(let token)):
            transition(.fetchingUser(token: token), effect: .fetchUser(token))
        case (.fetchingUser(let token), .user(let user)):
            transition(.fetchingPosts(user: user, token: token), effect: .fetchPosts(user))
        case (.fetchingPosts(let user, _), .posts(let posts)):
            nextState(.complete(user: user, posts: posts))
        case (.authenticating, .failure(let message)), (.fetchingUser, .failure(let message)),
             (.fetchingPosts, .failure(let message)):
            nextState(.failed(message))
        case (.authenticating, .user), (.authenticating, .posts), (.fetchingUser, .token), (.fetchingUser, .posts),
             (.fetchingPosts, .token), (.fetchingPosts, .user):
            // A result for another phase than the one in flight.
            undefined
        case (.ready, _), (.complete, _), (.failed, _):
            // No effect in flight.
            undefined
        }
    }

    public func runIOEffect(_ effect: IOEffect) async -> IOResult? {
        mockResults[effect] ?? .failure("no result for \(effect)")
    }
}

extension UserPostsFeature {
    /// What `fsm-worker` hosts: Ada of ``ExampleHandlers/demoAccounts`` signs in with her password
    /// and has two posts; any other sign-in fails.
    public static var demo: UserPostsFeature {
        let ada = ExampleHandlers.demoAccounts[0]
        let token = Token("t-\(ada.user.id)")
        return UserPostsFeature(mockResults: [
            .authenticate(email: ada.user.email, password: ada.password): .token(token),
            .fetchUser(token): .user(ada.user),
            .fetchPosts(ada.user): .posts([Post(title: "Notes on the Analytical Engine"), Post(title: "Sketch of the Engine")]),
        ])
    }
}
