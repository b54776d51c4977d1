import Grove
import Testing

/// `Machine.startsReissuableIO`: false unless a machine declares it; the dialects pass on what
/// their programs declare, and a remote-io feature's is known from its one request type.
@Suite(.timeLimit(.minutes(2)))
struct ReissueDeclarationTests {
    struct Refresh: IORequest, Equatable {
        typealias Response = Int
        static var onInterruption: IOInterruption { .reissue }
    }

    struct Pay: IORequest, Equatable {
        typealias Response = Int
    }

    enum Plain: Machine {
        static var initialState: Int { 0 }
        static func update(_ state: inout Int, event: Int) -> Effect { .none }
    }

    enum Refreshing: EffectTransducer {
        enum State: Sendable, NonTerminal { case idle }
        static var initialState: State { .idle }
        static var startsReissuableIO: Bool { true }
        static func update(_ state: inout State, event: Int) -> Effect? { nil }
    }

    enum Quiet: EffectTransducer {
        enum State: Sendable, NonTerminal { case idle }
        static var initialState: State { .idle }
        static func update(_ state: inout State, event: Int) -> Effect? { nil }
    }

    /// A remote-io feature over request type `R`.
    struct Feature<R: IORequest & Equatable>: RemoteIOStateMachine where R.Response == Int {
        typealias State = Int
        typealias Input = Int
        typealias IOEffect = R
        typealias IOResult = Int
        static var initialState: Int { 0 }
        static func reduceInput(_ state: Int, _ input: Int) -> Transition { (nil, nil) }
        static func reduceIOResult(_ state: Int, _ ioResult: Int) -> Transition { (nil, nil) }
        func runIOEffect(_ ioEffect: R) async -> Int? { nil }
        static func ioFailed(_ effect: R, _ failure: IOFailure) -> Int { 0 }
    }

    @Test("A machine starts no re-issuable io unless it says so")
    func falseByDefault() {
        #expect(!Plain.startsReissuableIO)
    }

    @Test("Oak passes on what its transducer declares")
    func oakForwards() {
        #expect(Oak<Refreshing>.startsReissuableIO)
        #expect(!Oak<Quiet>.startsReissuableIO)
    }

    @Test("A remote-io feature starts re-issuable io when its request type re-issues")
    func remoteIOFollowsItsRequestType() {
        #expect(RemoteIOMachine<Feature<Refresh>>.startsReissuableIO)
        #expect(!RemoteIOMachine<Feature<Pay>>.startsReissuableIO)
    }
}
