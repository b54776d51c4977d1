@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import Grove
import GroveRuntime
@_spi(GroveInternal) import GroveWire
import Testing
import Synchronization
import ZeroMQ

/// A trivial machine for hosting on a worker without a coordinator.
enum TallyMachine: Machine {
    enum Event: Codable, Sendable { case increment }
    struct State: Codable, Sendable { var count = 0 }
    static var initialState: State { State() }
    static func update(_ state: inout State, event: Event) -> Effect {
        state.count += 1
        return .none
    }
}

/// A hosted instance's drain target holds its host strongly (host → mailbox → wake-up → target
/// → host); letting the instance go must let the host go too.
@Suite(.timeLimit(.minutes(2)))
struct HostedLifecycleTests {
    @Test func droppingAnInstanceReleasesItsHost() async throws {
        let context = try ZMQContext()
        let loop = try IOLoop(name: "hosted-lifecycle")
        let socket = loop.add(try Socket(context, .dealer))
        let link = WorkerLink(worker: "w", loop: .io(loop), socket: socket)
        weak var weakHost: MachineHost<TallyMachine>?
        var hosted: Hosted<TallyMachine>? = Hosted(address: "tally", env: (), path: HostedPath(), mailboxCapacity: 100,
                                                  io: IOHandlers(), link: link, turn: Turn(outbound: link.outbound))
        weakHost = hosted?.host
        for _ in 0 ..< 10 { #expect(hosted?.enqueue(Array(#""increment""#.utf8)[...], binary: false) == nil) }
        for _ in 0 ..< 1000 where await hosted?.host.state.count != 10 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(await hosted?.host.state.count == 10)
        hosted = nil
        for _ in 0 ..< 1000 where weakHost != nil { try await Task.sleep(for: .milliseconds(10)) }
        #expect(weakHost == nil, "the host outlived its Hosted instance: a cycle through HostDrain")
        loop.stop()
    }
}

/// What a hosted instance answers a waiting sender with, read off a real socket: the committed
/// state in the event's codec under the sender's correlation, whether the reply travels as a
/// token through the host's reply handler or, for a correlation with the top bit set, through a
/// closure of its own; and on a worker's loop, where the second event finds the host idle and
/// is answered as it is handled.
@Suite(.timeLimit(.minutes(2)))
struct HostedReplyTests {
    @Test(arguments: [(UInt64(7), true), (UInt64(8), false), (UInt64(1) << 63 | 9, true), (UInt64(1) << 63 | 10, false)],
          [false, true])
    func theCommittedStateComesBackUnderTheSendersCorrelation(sender: (correlation: UInt64, binary: Bool), onLoop: Bool) async throws {
        let (correlation, binary) = sender
        let wire = try WorkerWire(endpoint: "inproc://hosted-reply-\(correlation)-\(onLoop)")
        defer { wire.loop.stop() }
        let link = wire.link
        let hosted = wire.hosted(TallyMachine.self, at: "tally/1", onLoop: onLoop)
        let payload = binary ? try BinaryCodec.encode(TallyMachine.Event.increment) : Array(#""increment""#.utf8)
        @Sendable func send() {
            hosted.send(payload[...], binary: binary,
                        reply: StateReply(link: link, correlation: correlation, address: "tally/1", binary: binary))
        }
        var replies: [WireMessage] = []
        for _ in 0 ..< 2 {
            if onLoop { wire.loop.execute { _ in send() } } else { send() }
            replies += try await wire.replies(1)
        }
        try #require(replies.count == 2, "\(replies.count) replies")
        var counts: [Int] = []
        for reply in replies {
            #expect(reply.header.kind == .state)
            #expect(reply.header.correlation == correlation)
            #expect(reply.header.flags.contains(.binary) == binary)
            #expect(reply.address == "tally/1")
            let state = binary ? try BinaryCodec.decode(TallyMachine.State.self, from: reply.payload)
                               : try WireJSON.decode(TallyMachine.State.self, from: reply.payload)
            counts.append(state.count)
        }
        #expect(counts == [1, 2])
    }
}

/// On a worker's loop, the hosts' executor, an event that finds its host idle is handled as it
/// arrives; one that finds anything queued before it (here a read) waits its turn, so the
/// replies keep their order either way.
@Suite(.timeLimit(.minutes(2)))
struct HandledOnArrivalTests {
    @Test func anIdleHostHandlesAnEventAsItArrivesAndOneWithWorkQueuedWaitsItsTurn() async throws {
        let wire = try WorkerWire(endpoint: "inproc://handled-on-arrival")
        defer { wire.loop.stop() }
        let link = wire.link
        let hosted = wire.hosted(TallyMachine.self, at: "tally/1")
        let increment = Array(#""increment""#.utf8)[...]
        @Sendable func reply(_ correlation: UInt64) -> StateReply {
            StateReply(link: link, correlation: correlation, address: "tally/1", binary: false)
        }
        // The first event may find the host not yet started: answered in turn either way.
        wire.loop.execute { _ in hosted.send(increment, binary: false, reply: reply(1)) }
        #expect(try await wire.replies(1).map(\.header.correlation) == [1])

        // Now idle: the next event has run when `send` returns. A read queued after it makes the
        // host busy, so the event after that waits in the mailbox.
        let read = Mutex<Result<[UInt8], WireError>?>(nil)
        let seen: (afterFirst: Int, afterSecond: Int) = await withCheckedContinuation { continuation in
            wire.loop.execute { _ in
                hosted.send(increment, binary: false, reply: reply(2))
                let afterFirst = hosted.host.assumeIsolated { $0.state.count }
                hosted.state { result in read.withLock { $0 = result } }
                hosted.send(increment, binary: false, reply: reply(3))
                let afterSecond = hosted.host.assumeIsolated { $0.state.count }
                continuation.resume(returning: (afterFirst, afterSecond))
            }
        }
        #expect(seen.afterFirst == 2, "an event for an idle host was queued instead of handled as it arrived")
        #expect(seen.afterSecond == 2, "the event behind a queued read did not wait for it")
        let replies = try await wire.replies(2)
        #expect(replies.map(\.header.correlation) == [2, 3])
        let counts = try replies.map { try WireJSON.decode(TallyMachine.State.self, from: $0.payload).count }
        #expect(counts == [2, 3])
        for _ in 0 ..< 1000 where read.withLock({ $0 }) == nil { try await Task.sleep(for: .milliseconds(10)) }
        let state = try #require(read.withLock { $0 })
        #expect(try WireJSON.decode(TallyMachine.State.self, from: state.get()).count == 2, "the read saw the state in its turn")
    }

    /// A no-wait event handled as it arrives can end the machine: its mailbox closes there, so
    /// the next event is refused at once, and the end is published.
    @Test func aNoWaitEventHandledAsItArrivesCanEndTheMachine() async throws {
        let wire = try WorkerWire(endpoint: "inproc://ended-on-arrival")
        defer { wire.loop.stop() }
        let hosted = wire.hosted(CountdownMachine.self, at: "countdown/1")
        let tick = Array(#""tick""#.utf8)[...]
        wire.loop.execute { _ in _ = hosted.enqueue(tick, binary: false) }
        for _ in 0 ..< 1000 where await hosted.host.state.remaining != 1 { try await Task.sleep(for: .milliseconds(10)) }
        try #require(await hosted.host.state.remaining == 1)

        let seen: (taken: WireError?, remaining: Int, next: WireError?) = await withCheckedContinuation { continuation in
            wire.loop.execute { _ in
                let taken = hosted.enqueue(tick, binary: false)
                let remaining = hosted.host.assumeIsolated { $0.state.remaining }
                let next = hosted.enqueue(tick, binary: false)
                continuation.resume(returning: (taken, remaining, next))
            }
        }
        #expect(seen.taken == nil)
        #expect(seen.remaining == 0, "the idle host queued the event instead of handling it as it arrived")
        #expect(seen.next?.code == .machineEnded, "an event after the end was not refused at once: \(String(describing: seen.next))")
        let published = try await wire.replies(1)
        #expect(published.map(\.header.kind) == [.machine], "the end was not published")
    }

    /// A waiting sender whose event, handled as it arrives, ends the machine gets the final
    /// state (here in binary, the event's codec) before the end is published, as it would had
    /// the event been queued; the next sender is told the machine ended.
    @Test func aWaitingSenderWhoseEventEndsTheMachineIsAnsweredBeforeTheEnd() async throws {
        let wire = try WorkerWire(endpoint: "inproc://answered-before-end")
        defer { wire.loop.stop() }
        let link = wire.link
        let hosted = wire.hosted(CountdownMachine.self, at: "countdown/2")
        let tick = try BinaryCodec.encode(CountdownMachine.Event.tick)[...]
        @Sendable func reply(_ correlation: UInt64) -> StateReply {
            StateReply(link: link, correlation: correlation, address: "countdown/2", binary: true)
        }
        wire.loop.execute { _ in hosted.send(tick, binary: true, reply: reply(1)) }
        #expect(try await wire.replies(1).map(\.header.correlation) == [1])

        let remaining = await withCheckedContinuation { continuation in
            wire.loop.execute { _ in
                hosted.send(tick, binary: true, reply: reply(2))
                continuation.resume(returning: hosted.host.assumeIsolated { $0.state.remaining })
            }
        }
        #expect(remaining == 0, "the idle host queued the event instead of handling it as it arrived")
        wire.loop.execute { _ in hosted.send(tick, binary: true, reply: reply(3)) }
        let messages = try await wire.replies(3)
        #expect(messages.map(\.header.kind) == [.state, .machine, .error], "the reply, the end and the refusal, in that order")
        #expect(messages.map(\.header.correlation) == [2, 0, 3])
        #expect(messages.first?.header.flags.contains(.binary) == true)
        #expect(try BinaryCodec.decode(CountdownMachine.State.self, from: messages[0].payload[...]).remaining == 0)
        #expect(try WireJSON.decode(WireError.self, from: messages[2].payload).code == .machineEnded)
    }
}

/// Ends after two ticks.
enum CountdownMachine: Machine {
    enum Event: Codable, Sendable { case tick }
    struct State: Codable, Sendable { var remaining = 2 }
    static var initialState: State { State() }
    static func update(_ state: inout State, event: Event) -> Effect {
        state.remaining -= 1
        return .none
    }
    static func isTerminal(_ state: State) -> Bool { state.remaining <= 0 }
}

/// A machine whose state JSON cannot encode: a NaN has no JSON number.
enum RatioMachine: Machine {
    enum Event: Codable, Sendable { case divideByZero }
    struct State: Codable, Sendable { var ratio = 1.0 }
    static var initialState: State { State() }
    static func update(_ state: inout State, event: Event) -> Effect {
        state.ratio = .nan
        return .none
    }
}

/// A committed state that does not encode is answered with `unencodable-state`, which says the
/// event ran (not `undecodable-event`, which would say it did not).
@Suite(.timeLimit(.minutes(2)))
struct UnencodableStateTests {
    @Test func theSenderLearnsTheEventRanButItsStateDoesNotEncode() async throws {
        let wire = try WorkerWire(endpoint: "inproc://unencodable-state")
        defer { wire.loop.stop() }
        let link = wire.link
        let hosted = wire.hosted(RatioMachine.self, at: "ratio/1", onLoop: false)
        hosted.send(Array(#""divideByZero""#.utf8)[...], binary: false,
                    reply: StateReply(link: link, correlation: 5, address: "ratio/1", binary: false))
        let answer = try #require(try await wire.replies(1).first)
        #expect(answer.header.kind == .error)
        #expect(answer.header.correlation == 5)
        let error = try WireJSON.decode(WireError.self, from: answer.payload)
        #expect(error.code == .unencodableState)
        #expect(error.message.contains("committed"))
        #expect(error.message.contains("RatioMachine.State"), "names the type: \(error.message)")
        #expect(error.path == "$.ratio")
        #expect(error.address == "ratio/1")
        #expect(await hosted.host.state.ratio.isNaN, "the event ran")

        // A get and a stop cannot answer with the state either, and say so instead of sending nothing.
        let read = await withCheckedContinuation { continuation in hosted.state { continuation.resume(returning: $0) } }
        #expect(throws: WireError(.unencodableState, "")) { try read.get() }
        let stopped = await withCheckedContinuation { continuation in hosted.stop { continuation.resume(returning: $0) } }
        #expect(throws: WireError(.unencodableState, "")) { try stopped.get() }
        if case .failure(let error) = stopped { #expect(error.message.contains("stopped"), "\(error.message)") }
    }
}

/// A worker's link to a ROUTER standing in for the coordinator, over inproc: what hosted
/// instances send arrives at `coordinator`.
struct WorkerWire {
    let coordinator: Socket
    let loop: IOLoop
    let link: WorkerLink

    init(endpoint: String) throws {
        let context = try ZMQContext()
        coordinator = try Socket(context, .router)
        try coordinator.setLinger(milliseconds: 0)
        try coordinator.bind(endpoint)
        let worker = try Socket(context, .dealer)
        try worker.setLinger(milliseconds: 0)
        try worker.setRoutingID(Array("w".utf8))
        try worker.connect(endpoint)
        loop = try IOLoop(name: "worker-wire")
        let socket = loop.add(worker)
        loop.start(WorkerLoopDelegate(onBatch: { _ in }))
        link = WorkerLink(worker: "w", loop: .io(loop), socket: socket)
        // As a welcomed worker's: what the instances send leaves.
        _ = link.outflow.open()
    }

    /// An instance of `M` at `address` answering through this wire's link; on the loop's executor
    /// (as a worker's instances are, so an idle one handles events as they arrive) unless
    /// `onLoop` is false, when it runs on an actor of its own and queues every event.
    func hosted<M: Machine>(_ machine: M.Type, at address: String, onLoop: Bool = true) -> Hosted<M>
    where M.State: Codable, M.Event: Codable, M.Output: Encodable, M.Env == Void {
        Hosted<M>(address: address, env: (), path: HostedPath(), mailboxCapacity: 100, io: IOHandlers(), link: link,
                  turn: Turn(outbound: link.outbound), executor: onLoop ? loop.executor : nil)
    }

    /// The messages the coordinator received, batches unpacked, once `count` arrived or after 5 s.
    /// Polled, not waited on: a blocked test thread could starve the hosts' drain tasks.
    func replies(_ count: Int) async throws -> [WireMessage] {
        var replies: [WireMessage] = []
        for _ in 0 ..< 500 where replies.count < count {
            while let frames = try coordinator.receive(dontWait: true) {
                let message = try WireMessage(frames: frames.dropFirst())  // after the routing id
                replies += message.header.kind == .batch ? try Batch.unpack(message.payload) : [message]
            }
            if replies.count < count { try await Task.sleep(for: .milliseconds(10)) }
        }
        // Indexing fewer replies would trap and take the whole test run with it.
        try #require(replies.count >= count, "\(replies.count) of \(count) replies within 5 s: \(replies.map(\.header.kind.name))")
        return replies
    }
}

/// A worker's factory, bound to its link, gives every instance one reply handler; each reply
/// still names its own instance and comes under its sender's correlation, in its codec.
@Suite(.timeLimit(.minutes(2)))
struct BoundFactoryTests {
    @Test func instancesOfABoundFactoryAnswerEachUnderItsOwnAddress() async throws {
        let wire = try WorkerWire(endpoint: "inproc://bound-factory")
        defer { wire.loop.stop() }
        let link = wire.link
        let factory = Factory<TallyMachine>(env: (), path: HostedPath()).bound(to: HostWiring(link: link, turn: Turn(outbound: link.outbound), poison: PoisonWatch(), inlet: CoreInlet()))
        let increment = try BinaryCodec.encode(TallyMachine.Event.increment)[...]
        let made = Mutex<[any HostedMachine]>([])
        let executor = wire.loop.executor
        // Made and sent to on the loop, which their hosts start on: not started yet, they queue
        // the events, answered through the shared handler once they drain.
        wire.loop.execute { _ in
            for (number, address) in ["tally/1", "tally/2"].enumerated() {
                let instance = try! factory.make(address: address, type: "TallyMachine", mailboxCapacity: 100, io: IOHandlers(), watched: false,
                                            executor: executor, durable: nil, startsNow: false)
                instance.send(increment, binary: true,
                              reply: StateReply(link: link, correlation: UInt64(number + 1), address: address, binary: true))
                made.withLock { $0.append(instance) }
            }
        }
        let replies = try await wire.replies(2)
        #expect(replies.map(\.header.kind) == [.state, .state])
        #expect(Dictionary(uniqueKeysWithValues: replies.map { ($0.header.correlation, $0.address) }) == [1: "tally/1", 2: "tally/2"])
        #expect(replies.allSatisfy { $0.header.flags.contains(.binary) })
        #expect(try replies.map { try BinaryCodec.decode(TallyMachine.State.self, from: $0.payload).count } == [1, 1])
    }

    @Test func anInstanceThatStartsNowRunsItsFirstEventOnArrivalNotInADrain() async throws {
        let wire = try WorkerWire(endpoint: "inproc://starts-now")
        defer { wire.loop.stop() }
        let link = wire.link
        let factory = Factory<TallyMachine>(env: (), path: HostedPath()).bound(to: HostWiring(link: link, turn: Turn(outbound: link.outbound), poison: PoisonWatch(), inlet: CoreInlet()))
        let increment = try BinaryCodec.encode(TallyMachine.Event.increment)[...]
        let made = Mutex<[any HostedMachine]>([])
        let countsAfterSend = Mutex<[String: Int]>([:])
        let executor = wire.loop.executor
        wire.loop.execute { _ in
            for (number, (address, startsNow)) in [("tally/now", true), ("tally/later", false)].enumerated() {
                let instance = try! factory.make(address: address, type: "TallyMachine", mailboxCapacity: 100, io: IOHandlers(), watched: false,
                                                 executor: executor, durable: nil, startsNow: startsNow)
                instance.send(increment, binary: true,
                              reply: StateReply(link: link, correlation: UInt64(number + 1), address: address, binary: true))
                // Booted as it was made, the first ran in the send; the second waits for its drain.
                let count = (instance as! Hosted<TallyMachine>).host.onOwnExecutor { $0.state.count }
                countsAfterSend.withLock { $0[address] = count }
                made.withLock { $0.append(instance) }
            }
        }
        let replies = try await wire.replies(2)
        #expect(countsAfterSend.withLock { $0 } == ["tally/now": 1, "tally/later": 0])
        #expect(Dictionary(uniqueKeysWithValues: replies.map { ($0.header.correlation, $0.address) }) == [1: "tally/now", 2: "tally/later"])
        #expect(try replies.map { try BinaryCodec.decode(TallyMachine.State.self, from: $0.payload).count } == [1, 1])
    }
}

/// A worker checks the events topology routes send to its machine types when it is welcomed.
@Suite(.timeLimit(.minutes(2)))
struct RouteEventCheckTests {
    let factory = Factory<TallyMachine>(env: (), path: HostedPath())

    @Test func anEventOfTheTypePasses() {
        #expect(factory.check(event: Array(#""increment""#.utf8), address: "tally") == nil)
        #expect(factory.check(event: Array(#"{"increment":{}}"#.utf8), address: "tally") == nil)
    }

    @Test func aMisspelledCaseIsNamed() throws {
        let problem = try #require(factory.check(event: Array(#""incremnt""#.utf8), address: "tally"))
        #expect(problem.code == .undecodableEvent)
        #expect(problem.message.contains("'incremnt' is not a case of TallyMachine.Event"), "\(problem.message)")
    }

    @Test func aWelcomeFromBeforeRouteEventsDecodes() throws {
        let old = #"{"machines":[],"remoteIO":[],"heartbeatIntervalMs":250,"heartbeatTimeoutMs":1500,"mailboxCapacity":64}"#
        #expect(try WireJSON.decode(Welcome.self, from: Array(old.utf8)).routeEvents == nil)
    }
}
