@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import Grove
import GroveRuntime
import GroveWire
import Testing

/// Events with idempotency keys through a real coordinator core and worker runtime in one
/// process (`InMemoryWorker`): a repeat is answered with the first answer and not applied
/// again, durable machines keep their answers across a restart, bad keys are refused.
@Suite(.timeLimit(.minutes(2)))
struct KeyedWorkerTests {
    static let topology = Topology(
        name: "keyed",
        coordinator: .init(clients: "inproc://clients", workers: "inproc://workers", events: "inproc://events"),
        workers: [.init(name: "w")],
        machines: [.init(name: "tally", type: "TallyMachine", worker: "w", durability: .state),
                   .init(name: "tallies", type: "TallyMachine", worker: "w", keyed: true, durability: .journal),
                   .init(name: "scratch", type: "TallyMachine", worker: "w")],
        heartbeat: .init(intervalMs: 50, timeoutMs: 200)
    )

    static let client: [UInt8] = [0x5E, 0x11, 0xDD]

    /// A worker on `session`, and what kills it (its later commits dropped, as a killed process's).
    private static func worker(_ session: StoreSession) throws -> (worker: InMemoryWorker, kill: () -> Void) {
        var configuration = WorkerConfiguration()
        configuration.register(TallyMachine.self)
        let worker = try InMemoryWorker(name: "w", configuration: configuration, openStore: { session })
        return (worker, {
            worker.stop()
            session.revoke()
        })
    }

    static func keyed(_ address: String, sequence: UInt64, correlation: UInt64, flags: Header.Flags = [],
                      client: [UInt8] = client) -> WireMessage {
        let key = IdempotencyKey(client: client, sequence: sequence)
        return WireMessage(Header(.event, flags: flags.union(.keyed), correlation: correlation), address: address,
                           payload: key.prefixed(Array(#""increment""#.utf8)))
    }

    /// Sends `messages` as client "c" and returns the replies by correlation.
    private static func exchange(_ messages: [WireMessage], cluster: InMemoryCluster, worker: InMemoryWorker) throws -> [WireMessage] {
        try cluster.exchange(messages, with: worker)
    }

    private static func started(_ session: StoreSession, cluster: InMemoryCluster) throws -> (InMemoryWorker, () -> Void) {
        let (worker, kill) = try Self.worker(session)
        worker.start()
        try #require(cluster.settle(worker) { worker.isWelcomed }, "\(cluster.warnings)")
        return (worker, kill)
    }

    @Test(arguments: ["tally", "tallies/x", "scratch"])
    func aRepeatedKeyIsAnsweredWithTheFirstAnswerAndAppliedOnce(address: String) throws {
        let cluster = InMemoryCluster(topology: Self.topology)
        let (worker, kill) = try Self.started(StoreSession(MemoryMachineStore()), cluster: cluster)
        defer { kill() }
        let first = try Self.exchange([Self.keyed(address, sequence: 1, correlation: 1), Self.keyed(address, sequence: 2, correlation: 2)],
                                      cluster: cluster, worker: worker)
        #expect(first.map(\.text) == [#"{"count":1}"#, #"{"count":2}"#])
        // Both again (a client that lost the replies), then a new key and a read.
        let again = try Self.exchange([Self.keyed(address, sequence: 1, correlation: 3), Self.keyed(address, sequence: 2, correlation: 4),
                                       Self.keyed(address, sequence: 3, correlation: 5),
                                       WireMessage(Header(.get, correlation: 6), address: address)],
                                      cluster: cluster, worker: worker)
        #expect(again.map(\.text) == [#"{"count":1}"#, #"{"count":2}"#, #"{"count":3}"#, #"{"count":3}"#])
        #expect(again.map(\.header.kind) == [.state, .state, .state, .state])
        // Another client's sequence 1 is another key.
        let other = try Self.exchange([Self.keyed(address, sequence: 1, correlation: 7, client: [9])], cluster: cluster, worker: worker)
        #expect(other.map(\.text) == [#"{"count":4}"#])
    }

    @Test func aRepeatInTheSameTurnGetsTheSameAnswer() throws {
        let cluster = InMemoryCluster(topology: Self.topology)
        let (worker, kill) = try Self.started(StoreSession(MemoryMachineStore()), cluster: cluster)
        defer { kill() }
        // One turn: the repeat comes right behind its first copy (a repeat that finds its first copy still
        // running waits for its answer: AnswerWindowTests).
        let replies = try Self.exchange([Self.keyed("tally", sequence: 1, correlation: 1), Self.keyed("tally", sequence: 1, correlation: 2),
                                         Self.keyed("tally", sequence: 2, correlation: 3)],
                                        cluster: cluster, worker: worker)
        #expect(replies.map(\.text) == [#"{"count":1}"#, #"{"count":1}"#, #"{"count":2}"#])
    }

    @Test func aNoWaitKeyedEventIsAcceptedOnceAndItsRepeatIsNotApplied() throws {
        let cluster = InMemoryCluster(topology: Self.topology)
        let (worker, kill) = try Self.started(StoreSession(MemoryMachineStore()), cluster: cluster)
        defer { kill() }
        let replies = try Self.exchange([Self.keyed("tally", sequence: 1, correlation: 1, flags: .noWait),
                                         Self.keyed("tally", sequence: 1, correlation: 2, flags: .noWait),
                                         WireMessage(Header(.get, correlation: 3), address: "tally")],
                                        cluster: cluster, worker: worker)
        #expect(replies.map(\.header.kind) == [.accepted, .accepted, .state])
        #expect(replies.last?.text == #"{"count":1}"#)
    }

    @Test func durableAnswersSurviveARestartAndAreNotAppliedAgain() throws {
        let cluster = InMemoryCluster(topology: Self.topology)
        let store = MemoryMachineStore()
        let (first, killFirst) = try Self.started(StoreSession(store), cluster: cluster)
        let before = try Self.exchange([Self.keyed("tally", sequence: 1, correlation: 1), Self.keyed("tallies/x", sequence: 2, correlation: 2),
                                        Self.keyed("tallies/x", sequence: 3, correlation: 3)],
                                       cluster: cluster, worker: first)
        #expect(before.map(\.text) == [#"{"count":1}"#, #"{"count":1}"#, #"{"count":2}"#])
        // Kept in the commit of the state they report, before the replies left: two answers
        // and the client's sequences.
        #expect(try store.answers(of: "tallies/x").map(\.key.sequence).sorted() == [IdempotencyKey.reservedSequence, 2, 3])
        killFirst()

        let (second, killSecond) = try Self.started(StoreSession(store), cluster: cluster)
        defer { killSecond() }
        let after = try Self.exchange([Self.keyed("tally", sequence: 1, correlation: 4), Self.keyed("tallies/x", sequence: 3, correlation: 5),
                                       Self.keyed("tallies/x", sequence: 4, correlation: 6)],
                                      cluster: cluster, worker: second)
        #expect(after.map(\.text) == [#"{"count":1}"#, #"{"count":2}"#, #"{"count":3}"#], "repeats answered as first, the new key applied")
    }

    @Test func aRepeatWhoseAnswerIsGoneOrUnderTheFloorIsRefusedSayingWhatToDo() throws {
        let cluster = InMemoryCluster(topology: Self.topology)
        let (worker, kill) = try Self.started(StoreSession(MemoryMachineStore()), cluster: cluster)
        defer { kill() }
        let kept = UInt64(AnswerWindow<StateReply>.capacity)
        // One client applies 1 … kept + 1, so the answer of 1 is gone; another every other
        // sequence, more runs open under its highest than an instance keeps, so 1 is under the floor.
        let runs = UInt64(IdempotencyKey.openRunsKept)
        let applied = (1...kept + 1).map { Self.keyed("tallies/r", sequence: $0, correlation: $0) }
            + stride(from: 2, through: 2 * (runs + 2), by: 2).map { Self.keyed("tallies/r", sequence: $0, correlation: 1_000 + $0, client: [7]) }
        _ = try Self.exchange(applied, cluster: cluster, worker: worker)
        let replies = try Self.exchange([Self.keyed("tallies/r", sequence: 1, correlation: 5_001),
                                         Self.keyed("tallies/r", sequence: 1, correlation: 5_002, client: [7]),
                                         WireMessage(Header(.get, correlation: 5_003), address: "tallies/r")],
                                        cluster: cluster, worker: worker)
        let errors = replies.prefix(2).map { try? WireJSON.decode(WireError.self, from: $0.payload) }
        #expect(errors.map(\.?.code) == [.alreadyApplied, .keyTooOld])
        #expect(errors[0]?.message.contains("it was not applied again: do not resend it, read the state with a get") == true)
        // What the client can do now, and how a client keeps out of it.
        let tooOld = errors[1]?.message ?? ""
        #expect(tooOld.contains("it was not applied now, and a resend gets the same answer: read the state with a get"), "\(tooOld)")
        #expect(tooOld.contains("keeping at most \(runs) of them unanswered at a time"), "\(tooOld)")
        // Neither ran.
        #expect(replies.last?.text == "{\"count\":\(kept + 1 + runs + 2)}")
    }

    @Test func aBadKeyAndAKeyedReadAreRefusedAndTheWorkerGoesOn() throws {
        let cluster = InMemoryCluster(topology: Self.topology)
        let (worker, kill) = try Self.started(StoreSession(MemoryMachineStore()), cluster: cluster)
        defer { kill() }
        let replies = try Self.exchange([
            WireMessage(Header(.event, flags: .keyed, correlation: 1), address: "tally", payload: [70] + Array(#""increment""#.utf8)),
            WireMessage(Header(.get, flags: .keyed, correlation: 2), address: "tally"),
            Self.keyed("tally", sequence: 1, correlation: 3),
        ], cluster: cluster, worker: worker)
        #expect(replies.map { $0.wireError?.code } == [.malformedFrame, .malformedFrame, nil])
        #expect(replies[0].wireError?.message.contains("client id length byte says 70") == true)
        #expect(replies[1].wireError?.message.contains("only an event may have") == true)
        #expect(replies[2].text == #"{"count":1}"#)
    }
}
