public import Grove
public import GroveCheck

// Sample events and declared states of the TCA-SM examples ported from seed 004, for `fsm-check`.
// Struct states are drawn by what the user sees; events by the input or result they carry.

extension PurchaseFeature: Checkable {
    public typealias Checked = IOMachine<PurchaseFeature>

    public static var sampleEvents: [Checked.Event] {
        [.input(.purchase), .input(.dismissAlert), .ioResult(.purchaseCompleted), .ioResult(.purchaseDeclined("declined"))]
    }

    public static var declaredStates: [State] {
        [State(points: 100), State(points: 70, isPurchasing: true), State(points: 10, showInsufficientPointsAlert: true)]
    }

    /// Drawn by what the user sees: the alert, a purchase in flight, or the shop.
    public static func node(of state: State) -> String {
        if state.isPurchasing { return "purchasing" }
        return state.showInsufficientPointsAlert ? "insufficientPoints" : "ready"
    }

    public static func label(of event: Checked.Event) -> String {
        switch event {
        case .input(let input): caseName(of: input)
        case .ioResult(let result): caseName(of: result)
        }
    }
}

extension UserPostsFeature: Checkable {
    public typealias Checked = IOMachine<UserPostsFeature>

    public static var sampleEvents: [Checked.Event] {
        let ada = ExampleHandlers.demoAccounts[0].user
        return [.input(.start(email: ada.email, password: "analytical")), .ioResult(.token(Token("t"))), .ioResult(.user(ada)),
                .ioResult(.posts([Post(title: "Notes")])), .ioResult(.failure("offline"))]
    }

    public static var declaredStates: [State] {
        let ada = ExampleHandlers.demoAccounts[0].user
        return [.ready, .authenticating, .fetchingUser(token: Token("")), .fetchingPosts(user: ada, token: Token("")),
                .complete(user: ada, posts: []), .failed("")]
    }

    public static func label(of event: Checked.Event) -> String {
        switch event {
        case .input(let input): caseName(of: input)
        case .ioResult(let result): caseName(of: result)
        }
    }
}

extension CacheFeature: Checkable {
    public typealias Checked = IOMachine<CacheFeature>

    public static var sampleEvents: [Checked.Event] {
        [.input(.load), .input(.invalidateCache), .ioResult(.dataFetched("headlines")), .ioResult(.fetchFailed("offline"))]
    }

    public static var declaredStates: [State] {
        [State(), State(phase: .loading), .loaded("headlines"), State(phase: .failed("offline"))]
    }

    /// Drawn by phase, and whether a loaded one came with a valid cache.
    public static func node(of state: State) -> String {
        switch state.phase {
        case .idle: "idle"
        case .loading: "loading"
        case .loaded: state.cacheValid ? "loaded" : "loadedStale"
        case .failed: "failed"
        }
    }

    public static func label(of event: Checked.Event) -> String {
        switch event {
        case .input(let input): caseName(of: input)
        case .ioResult(let result): caseName(of: result)
        }
    }
}

extension AuthenticateFeature: Checkable {
    public typealias Checked = IOMachine<AuthenticateFeature>

    public static var sampleEvents: [Checked.Event] {
        let ada = ExampleHandlers.demoAccounts[0]
        return [.input(.signIn(username: ada.user.email, password: ada.password)), .input(.signOut),
                .ioResult(.authenticated(ada.user)), .ioResult(.authFailed)]
    }

    public static var declaredStates: [State] { [.signedOut, .authenticating, .signedIn(ExampleHandlers.demoAccounts[0].user), .failed] }

    public static func label(of event: Checked.Event) -> String {
        switch event {
        case .input(let input): caseName(of: input)
        case .ioResult(let result): caseName(of: result)
        }
    }
}
