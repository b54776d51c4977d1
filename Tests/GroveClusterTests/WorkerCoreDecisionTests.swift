@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
@_spi(GroveInternal) import GroveWire
import Logging
import Testing

/// What the worker does with each message from the coordinator, decided by the pure core and
/// checked without sockets: the runtime only carries the decisions out.
@Suite(.timeLimit(.minutes(2))) struct WorkerCoreDecisionTests {
    let start = ContinuousClock.now
    let session = WorkerCoreTests()

    /// A core welcomed with `counter` (single) and `loader` (keyed) placed on it.
    func welcomed(machines: [Welcome.HostedMachine] = [WorkerCoreTests.counter, WorkerCoreTests.loader]) -> WorkerCore {
        var core = session.core()
        _ = core.decide(Header(.welcome), payload: session.welcome(machines: machines)[...], now: start)
        return core
    }

    @Test func everyKindTheCoordinatorMaySendOrNot() throws {
        for kind in MessageKind.allCases {
            var core = welcomed()
            let decision = core.decide(Header(kind, correlation: 5), payload: [][...], now: start)
            switch kind {
            case .event:
                #expect(decision == .deliver)
            case .echo:
                #expect(decision == .accept)
            case .get:
                #expect(decision == .request(.state))
            case .stop:
                #expect(decision == .request(.stop))
            case .cancel:
                #expect(decision == .request(.cancel))
            case .restart:
                #expect(decision == .request(.restart))
            case .ioRequest:
                #expect(decision == .serve)
            case .heartbeat:
                #expect(decision == .ignore, "\(kind)")
            case .ioCancel:
                #expect(decision == .answerCancel(.unknown), "no call 5 is served here: answered at once")
            case .ioResult:
                #expect(decision == .ignore, "no call 5 is waiting: a result for it is dropped unread")
            case .observe, .welcome, .error, .quarantine, .release, .returned, .access, .placement:
                // Control messages whose payload does not decode: logged, nothing else.
                guard case .act(let actions) = decision, actions.count == 1, case .log(let level, let line) = actions[0] else {
                    Issue.record("\(kind) with an empty payload should be logged, got \(decision)")
                    continue
                }
                #expect(level >= .warning, "\(kind)")
                #expect(line.contains("could not be decoded"), "\(kind): \(line)")
            case .deadLetters:
                // An empty payload is not a dead-letters request: refused, saying why.
                guard case .refuse(let error) = decision else { Issue.record("\(kind) should be refused, got \(decision)"); continue }
                #expect(error.message.contains("dead-letters request"), "\(error.message)")
            case .list, .snapshot, .poison, .locate, .batch, .state, .accepted, .listing, .deadLetterList, .states, .poisonList, .location,
                 .register, .instances,
                 .ioCancelled,
                 .stateChanged, .effect, .worker, .output, .machine:
                guard case .refuse(let error) = decision else { Issue.record("\(kind) should be refused, got \(decision)"); continue }
                #expect(error.code == .unknownKind)
                #expect(error.message.hasPrefix("a worker does not accept \(kind.name) messages: "))
            }
        }
    }

    @Test func aWelcomeAndAnErrorAreSessionActions() throws {
        var core = session.core()
        let welcome = core.decide(Header(.welcome), payload: session.welcome()[...], now: start)
        guard case .act(let actions) = welcome, case .adopt(let adopted, dropping: []) = actions.dropFirst().first else {
            Issue.record("a welcome should be adopted, got \(welcome)")
            return
        }
        #expect(adopted.machines.map(\.name) == ["counter", "loader"])
        #expect(core.isWelcomed)
        #expect(core.remoteIO == ["FetchItems"])

        let unavailable = WireError(.unavailable, "forgotten").payload
        guard case .act(let again) = core.decide(Header(.error), payload: unavailable[...], now: start) else {
            Issue.record("an error should be a session matter")
            return
        }
        #expect(again.contains(.register))
        #expect(!core.isWelcomed)
    }

    @Test func subscriptionsAreDecodedForTheRuntime() {
        var core = welcomed()
        let payload = try! WireJSON.encode(Observation(prefixes: ["state:counter"]))
        #expect(core.decide(Header(.observe), payload: payload[...], now: start) == .observe(Observation(prefixes: ["state:counter"])))
    }

    @Test func aServedCallsResultIsSentUnlessItWasCancelledFirst() {
        var core = welcomed()
        #expect(core.decide(Header(.ioRequest, correlation: 7), payload: [][...], now: start) == .serve)
        #expect(core.decide(Header(.ioRequest, correlation: 8), payload: [][...], now: start) == .serve)
        #expect(core.serving == [7: .running, 8: .running])

        // Call 7 is cancelled: its task is cancelled, and a second cancel waits with the first.
        #expect(core.decide(Header(.ioCancel, correlation: 7), payload: [][...], now: start) == .stopServing)
        #expect(core.decide(Header(.ioCancel, correlation: 7), payload: [][...], now: start) == .ignore)
        #expect(core.serving[7] == .cancelling)
        // Call 8 finishes: its result is sent once.
        #expect(core.taskEnded(8) == .result)
        #expect(core.taskEnded(8) == .nothing)
        #expect(core.serving.keys.sorted() == [7])
    }

    @Test func aCancelledTasksEndIsAnsweredOnlyWhenItEnds() {
        var core = welcomed()
        _ = core.decide(Header(.ioRequest, correlation: 7), payload: [][...], now: start)
        // The cancel stops the task; nothing answers it yet: the task has not ended.
        #expect(core.decide(Header(.ioCancel, correlation: 7), payload: [][...], now: start) == .stopServing)
        // Its end is what is answered, in place of its result.
        #expect(core.taskEnded(7) == .cancelled(.ended))
        #expect(core.serving.isEmpty)
        // A cancel that comes after the answer finds no task, and says it does not know it.
        #expect(core.decide(Header(.ioCancel, correlation: 7), payload: [][...], now: start) == .answerCancel(.unknown))
    }

    @Test func aCancelThatCrossedTheResultSaysTheTaskHadFinished() {
        var core = welcomed()
        _ = core.decide(Header(.ioRequest, correlation: 8), payload: [][...], now: start)
        #expect(core.taskEnded(8) == .result)
        #expect(core.decide(Header(.ioCancel, correlation: 8), payload: [][...], now: start) == .answerCancel(.finished))
        // A call that never came here is unknown.
        #expect(core.decide(Header(.ioCancel, correlation: 9), payload: [][...], now: start) == .answerCancel(.unknown))
    }

    @Test func finishedCallsAreRememberedBoundedly() {
        var recent = RecentIDs(capacity: 3)
        for id: UInt64 in 1...5 { recent.insert(id) }
        let remembered = (1...5).map { recent.contains(UInt64($0)) }
        #expect(remembered == [false, false, true, true, true])
        recent.insert(4)  // already there: nothing is pushed out
        #expect(recent.contains(3))
        recent.insert(6)
        #expect(!recent.contains(3) && recent.contains(6))
    }

    @Test func anIOResultIsReadNotDecoded() {
        var core = welcomed()
        let calls = (0..<3).map { _ in core.startCall(address: "loader", payload: [], binary: true, cancelled: false).call }
        let response: [UInt8] = [IOCallResult.Outcome.response.rawValue, 0xFF, 0x00]
        #expect(core.decide(Header(.ioResult, flags: .binary, correlation: calls[0]), payload: response[...], now: start)
                == .complete(.response([0xFF, 0x00], binary: true)))
        let failure = IOCallResult.payload(failing: "timeout", "slow")
        #expect(core.decide(Header(.ioResult, correlation: calls[1]), payload: failure[...], now: start)
                == .complete(.failure(.init(code: "timeout", message: "slow"))))
        guard case .complete(.failure(let unreadable)) = core.decide(Header(.ioResult, correlation: calls[2]), payload: [][...], now: start) else {
            Issue.record("an empty io result should fail its call")
            return
        }
        #expect(unreadable.code == "codec")
    }

    @Test func instancesStartOnlyWhereTheWelcomePlacesThem() throws {
        #expect(throws: WireError(.unknownMachine, "")) { try session.core().placement(of: "counter", spawning: true) }

        let core = welcomed(machines: [WorkerCoreTests.counter, WorkerCoreTests.loader,
                                       Welcome.HostedMachine(name: "stranger", type: "Unknown", keyed: false)])
        #expect(try core.placement(of: "counter", spawning: false) == WorkerCoreTests.counter)
        #expect(try core.placement(of: "loader/k1", spawning: true) == WorkerCoreTests.loader)
        let unspawned = #expect(throws: WireError.self) { try core.placement(of: "loader/k1", spawning: false) }
        #expect(unspawned?.message.contains("keyed instances start with their first event") == true)
        let elsewhere = #expect(throws: WireError.self) { try core.placement(of: "poller/eu", spawning: true) }
        #expect(elsewhere?.code == .unknownMachine)
        #expect(elsewhere?.message == "machine 'poller/eu' is not placed on worker edge")
        let noType = #expect(throws: WireError.self) { try core.placement(of: "stranger", spawning: true) }
        #expect(noType?.message == "worker edge has no machine type 'Unknown'")
    }
}
