import Grove
import GroveRuntime
import Synchronization
import Testing

/// `send(_:replyToken:)`: a transport's senders answered through a reply handler with the
/// committed state or why the event never ran, each answer exactly once. The handler is told
/// which host answers, so one can serve many.
@Suite("Reply tokens", .timeLimit(.minutes(2)))
struct HostReplyTokenTests {
    /// Collects what the handler is called with.
    final class Answers: Sendable {
        let received = Mutex<[(UInt64, Result<Probe.State, HostError>)]>([])
        let addresses = Mutex<[UInt64: String]>([:])
        /// The tokens whose events `update` did not handle.
        let unhandled = Mutex<Set<UInt64>>([])
        var handler: @Sendable (UInt64, String, Result<Probe.State, HostError>, Bool) -> Void {
            { token, address, result, unhandled in
                self.received.withLock { $0.append((token, result)) }
                self.addresses.withLock { $0[token] = address }
                if unhandled { self.unhandled.withLock { _ = $0.insert(token) } }
            }
        }
        var tokens: [UInt64] { received.withLock { $0.map(\.0) } }
        var logs: [[String]?] { received.withLock { $0.map { try? $0.1.get().log } } }
        var errors: [HostError.Code?] {
            received.withLock { $0.map { if case .failure(let error) = $0.1 { error.code } else { nil } } }
        }
    }

    static func host(_ answers: Answers, capacity: Int = 100, address: String = "probe/7") -> MachineHost<Probe> {
        var options = HostOptions<Probe>()
        options.mailboxCapacity = capacity
        options.address = address
        options.replyHandler = answers.handler
        return MachineHost(Probe.self, env: Probe.Env(), options: options)
    }

    @Test func eachSenderGetsTheStateItsEventCommittedInOrder() async throws {
        let answers = Answers()
        let host = Self.host(answers)
        host.start()
        try host.send(.note("a"), replyToken: 7)
        try host.send(.note("b"), replyToken: 3)
        try host.send(.inline(["c", "d"]), replyToken: 1 << 63 | 9)
        await host.flush()
        #expect(answers.tokens == [7, 3, 1 << 63 | 9])
        // The state after each event and the inline events it returned.
        #expect(answers.logs == [["a"], ["a", "b"], ["a", "b", "inline", "c", "d"]])
    }

    /// The handler is told when `update` returned `.unhandled` (a worker flags its reply so),
    /// for that event only: not for one whose inline events went unhandled after it.
    @Test func theHandlerIsToldWhichEventsWereUnhandled() async throws {
        let answers = Answers()
        let host = Self.host(answers)
        host.start()
        try host.send(.note("a"), replyToken: 1)
        try host.send(.unknown, replyToken: 2)
        try host.send(.note("b"), replyToken: 3)
        await host.flush()
        #expect(answers.tokens == [1, 2, 3])
        #expect(answers.unhandled.withLock { $0 } == [2])
    }

    /// `send(_:onCommitted:)`, a worker's way for a correlation no token can carry, is told the
    /// same: a reply through it keeps its `unhandled` flag.
    @Test func aSenderWithItsOwnClosureIsToldWhichEventsWereUnhandled() async throws {
        let host = Self.host(Answers())
        host.start()
        let flags = Mutex<[String: Bool]>([:])
        try host.send(.note("a")) { _, unhandled in flags.withLock { $0["a"] = unhandled } }
        try host.send(.unknown) { _, unhandled in flags.withLock { $0["unknown"] = unhandled } }
        await host.flush()
        #expect(flags.withLock { $0 } == ["a": false, "unknown": true])
    }

    @Test func oneHandlerServesManyHostsAndIsToldWhichAnswers() async throws {
        let answers = Answers()
        let first = Self.host(answers, address: "probe/1"), second = Self.host(answers, address: "probe/2")
        first.start()
        second.start()
        try first.send(.note("a"), replyToken: 1)
        try second.send(.note("b"), replyToken: 2)
        try first.send(.note("c"), replyToken: 3)
        await first.flush()
        await second.flush()
        #expect(answers.addresses.withLock { $0 } == [1: "probe/1", 2: "probe/2", 3: "probe/1"])
        #expect(Set(answers.tokens) == [1, 2, 3])
    }

    @Test func eventsThatNeverRunAreAnsweredWithWhy() async throws {
        let answers = Answers()
        let host = Self.host(answers)
        host.start()
        try host.send(.finish, replyToken: 1)
        try host.send(.note("late"), replyToken: 2)
        await host.flush()
        #expect(answers.tokens == [1, 2])
        #expect(answers.errors == [nil, .terminated])
        // Refused at once, after the end: thrown, and the handler is not called.
        #expect(throws: HostError.self) { try host.send(.note("later"), replyToken: 3) }
        #expect(answers.tokens == [1, 2])
    }

    @Test func aFullMailboxRefusesWithoutAnswering() async throws {
        let answers = Answers()
        let host = Self.host(answers, capacity: 1)
        try host.send(.note("a"), replyToken: 1)
        #expect(throws: HostError.self) { try host.send(.note("b"), replyToken: 2) }
        host.start()
        await host.flush()
        #expect(answers.tokens == [1])
    }

    @Test func releasingTheHostAnswersWhatWasQueued() async throws {
        let answers = Answers()
        var host: MachineHost<Probe>? = Self.host(answers)
        try host?.send(.note("a"), replyToken: 5)
        host = nil  // never started: the queued event is answered as released
        #expect(answers.tokens == [5])
        #expect(answers.errors == [.hostReleased])
    }
}
