import Grove
import GroveRuntime
import Testing

/// Seed 004's examples, as the document describes them, as `IOMachine`s on a `MachineHost`.
@Suite("Seed 004: TCA-SM", .timeLimit(.minutes(2)))
struct SeedTCASMTests {
    @Test("Pure Function Testing: the seed's testStateTransitions() reads result.0 and result.1")
    func pureTest() {
        testStateTransitions()
        let result = Feature.reduceInput(.loading, .load)
        #expect(result.0 == nil && result.1 == nil, "undefined is (nil, nil)")
    }

    @Test("IO Mocking: the mock's [IOEffect: IOResult] answers the effect")
    func mockFeature() async throws {
        let host = MachineHost(IOMachine<MockFeature>.self, env: MockFeature(mockResults: [.fetchData: .dataFetched("mocked")]))
        host.start()
        try host.send(.input(.load))
        #expect(await host.firstState(within: .seconds(10)) { $0 == .loaded("mocked") } != nil)
        await host.stop()
    }

    @Test("MappableAction: input and ioResult reach their reducers, a child's action is left alone")
    func mappableAction() {
        typealias Action = MockFeature.Action
        #expect(MockFeature.reduce(.idle, Action.input(.load)) == MockFeature.reduceInput(.idle, .load))
        #expect(MockFeature.reduce(.loading, Action.ioResult(.fetchFailed)) == (.failed, nil))
        #expect(MockFeature.reduce(.idle, Action.childAction(.tapped)) == MockFeature.identity)
        #expect(Action.map(.childAction(.tapped)) == nil)
        #expect(IOMachine<MockFeature>.Event.map(.input(.load)) == .left(.load))
    }

    @Test("Effect Abstraction: one authenticate effect hides login and profile; either failing is authFailed")
    func authenticate() async throws {
        let ada = Profile(name: "Ada")
        let api = AuthAPI(login: { user, pass in pass == "pw" ? Token(value: "t-" + user) : nil },
                          fetchProfile: { token in token.value == "t-ada" ? ada : nil })
        let host = MachineHost(IOMachine<AuthenticateFeature>.self, env: AuthenticateFeature(api: api))
        host.start()
        try host.send(.input(.signIn("ada", "wrong")))
        #expect(await host.firstState(within: .seconds(10)) { $0 == .failed } != nil)
        // Logs in, but has no profile. The state is `.failed` already: waiting for `.failed`
        // proves something only from the `.authenticating` this sign-in commits on.
        #expect(try await host.sendAndWait(.input(.signIn("bob", "pw"))) == .authenticating)
        #expect(await host.firstState(within: .seconds(10)) { $0 == .failed } != nil)
        try host.send(.input(.signIn("ada", "pw")))
        #expect(await host.firstState(within: .seconds(10)) { $0 == .signedIn(ada) } != nil)
        await host.stop()
    }

    @Test("State-Driven Cancellation: a new query replaces the search, leaving loading cancels it")
    func stateDrivenCancel() async throws {
        let held = Gate()
        let feature = SearchFeature { query in
            if query == "o" || query == "cancelled" { try? await held.wait() }
            return ["\(query)!"]
        }
        let host = MachineHost(IOMachine<SearchFeature>.self, env: feature)
        host.start()
        _ = try await host.sendAndWait(.input(.search("o")))
        _ = try await host.sendAndWait(.input(.search("oak")))
        #expect(await host.firstState(within: .seconds(10)) { $0 == .loaded(["oak!"]) } != nil)

        _ = try await host.sendAndWait(.input(.search("cancelled")))
        #expect(await host.inFlightEffects == [IOMachine<SearchFeature>.ioEffectID])
        #expect(try await host.sendAndWait(.input(.clear)) == .idle)
        #expect(await host.inFlightEffects.isEmpty, "nextState(.idle) left the search running")
        let bothCancelled = await withinDeadline {
            while held.cancelledWaits < 2 { await Task.yield() }
            return true
        }
        #expect(bothCancelled == true, "the replaced and the abandoned search should both be cancelled")
        await host.stop()
    }

    @Test("Multi-Step Operations as State Phases: ready to complete through three IO effects")
    func phases() async throws {
        let token = Token(value: "t"), ada = User(name: "Ada")
        let backend: [PhasesFeature.IOEffect: PhasesFeature.IOResult] = [
            .authenticate: .token(token), .fetchUser(token): .user(ada), .fetchPosts(ada): .posts([Post(title: "Notes")]),
        ]
        let host = MachineHost(IOMachine<PhasesFeature>.self, env: PhasesFeature(backend: backend))
        try host.send(.input(.start))
        let termination = try await host.run()
        guard case .complete(let user, let posts) = termination.finalState else {
            Issue.record("expected complete, got \(termination.finalState)")
            return
        }
        #expect(user == ada && posts == [Post(title: "Notes")])
    }

    @Test("Decision Logic in Reducers: a valid cache answers without IO, an invalid one fetches")
    func cacheDecision() async throws {
        let cached = CacheFeature.State(phase: .idle, cacheValid: true, cachedData: "cached")
        #expect(CacheFeature.reduceInput(cached, .load) == (.loaded("cached"), nil))
        #expect(CacheFeature.reduceInput(CacheFeature.initialState, .load) == (.loading, .fetchFreshData))
        let host = MachineHost(IOMachine<CacheFeature>.self, env: CacheFeature { "fresh" })
        host.start()
        try host.send(.input(.load))
        #expect(await host.firstState(within: .seconds(10)) { $0.phase == .loaded("fresh") } != nil)
        await host.stop()
    }

    @Test("Resource Validation: enough points buy, too few show the alert and start no IO")
    func purchase() async throws {
        let host = MachineHost(IOMachine<PurchaseFeature>.self, env: PurchaseFeature())
        host.start()
        #expect(try await host.sendAndWait(.input(.purchase)).points == 20)
        #expect(await host.firstState(within: .seconds(10)) { $0.purchases == 1 } != nil)
        let refused = try await host.sendAndWait(.input(.purchase))
        #expect(refused == PurchaseFeature.State(points: 20, showInsufficientPointsAlert: true, purchases: 1))
        #expect(PurchaseFeature.reduceInput(refused, .purchase).1 == nil)
        await host.stop()
    }

    @Test("unsafe runs its action and changes nothing")
    func unsafeHelper() {
        var ran = false
        let result = MockFeature.unsafe { ran = true }
        #expect(ran)
        #expect(result.0 == nil && result.1 == nil)
    }
}
