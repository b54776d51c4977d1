import Grove
import GroveRuntime
import Testing

/// `requestState`, `requestStop` and `requestCancel`: a transport's get, stop and cancel keep
/// their place among the events sent before and after them.
@Suite("Requests in FIFO order", .timeLimit(.minutes(2)))
struct HostRequestTests {
    /// A reply that arrives through a callback: the request is made at once, on this thread, and
    /// its answer awaited later.
    struct Reply<T: Sendable> {
        let stream: AsyncStream<T>
        init(_ request: (@escaping @Sendable (T) -> Void) -> Void) {
            let (stream, continuation) = AsyncStream.makeStream(of: T.self)
            self.stream = stream
            request { continuation.yield($0) }
        }
        var value: T {
            get async {
                for await value in stream { return value }
                fatalError("the reply stream ended without a value")
            }
        }
    }

    @Test func aReadSeesTheEventsBeforeItAndNoneAfter() async throws {
        let host = MachineHost(Probe.self, env: Probe.Env())
        try host.send(.note("a"))
        let read = Reply { host.requestState($0) }
        try host.send(.note("b"))
        host.start()
        #expect(await read.value.log == ["a"])
        await host.flush()
        #expect(await host.state.log == ["a", "b"])
    }

    @Test func aStopEndsTheMachineAfterTheEventsBeforeIt() async throws {
        let host = MachineHost(Probe.self, env: Probe.Env())
        try host.send(.note("a"))
        try host.send(.note("b"))
        let stopped = Reply { host.requestStop($0) }
        // Queued behind the stop before the machine runs: taken now, dropped when the stop runs.
        try host.send(.note("late"))
        host.start()
        #expect(await stopped.value.log == ["a", "b"])
        let termination = try await host.termination()
        #expect(termination.reason == .stopped)
        #expect(termination.finalState.log == ["a", "b"])
        #expect(termination.droppedEvents == [.note("late")])
        // Sent once the machine ended: refused.
        #expect(throws: HostError.self) { try host.send(.note("later")) }
    }

    @Test func requestsToAnEndedMachineAreAnsweredWithItsFinalState() async throws {
        let host = MachineHost(Probe.self, env: Probe.Env())
        host.start()
        _ = try await host.sendAndWait(.note("a"))
        await host.stop()
        #expect(await Reply { host.requestState($0) }.value.log == ["a"])
        #expect(await Reply { host.requestStop($0) }.value.log == ["a"])
        await Reply { done in host.requestCancel("nothing") { done(()) } }.value
    }

    @Test func aMailboxAtCapacityStillTakesAStop() async throws {
        let host = MachineHost(Probe.self, env: Probe.Env(), options: HostOptions(address: "full", mailboxCapacity: 2))
        try host.send(.note("a"))
        try host.send(.note("b"))
        #expect(throws: HostError.self) { try host.send(.note("c")) }
        let stopped = Reply { host.requestStop($0) }
        host.start()
        #expect(await stopped.value.log == ["a", "b"])
    }
}
