import Testing
import Grove
import GroveRuntime

@Suite("Host ordering and mailbox", .timeLimit(.minutes(2)))
struct HostOrderingTests {
    @Test("Scenario 1: events sent before start are processed in FIFO order once it runs")
    func eventsBeforeStartAreFIFO() async throws {
        let host = MachineHost(Probe.self, env: .init())
        for name in ["a", "b", "c", "d", "e"] { try host.send(.note(name)) }
        #expect(await host.state.log.isEmpty)
        host.start()
        let state = try await host.sendAndWait(.note("f"))
        #expect(state.log == ["a", "b", "c", "d", "e", "f"])
    }

    @Test("Scenario 1: send-and-wait before start waits its turn behind earlier sends")
    func sendAndWaitBeforeStartKeepsOrder() async throws {
        let host = MachineHost(Probe.self, env: .init())
        try host.send(.note("first"))
        async let committed = host.sendAndWait(.note("second"))
        host.start()
        #expect(try await committed.log == ["first", "second"])
        #expect(try await host.sendAndWait(.note("third")).log == ["first", "second", "third"])
    }

    @Test("Scenario 5: a full mailbox rejects the send with an overflow error and the machine keeps running")
    func fullMailboxRejectsAndKeepsRunning() async throws {
        let log = DiagnosticLog([])
        let host = MachineHost(Probe.self, env: .init(), options: probeOptions(capacity: 2, log: log))
        try host.send(.note("a"))
        try host.send(.note("b"))
        let error = #expect(throws: HostError.self) { try host.send(.note("c")) }
        #expect(error?.code == .mailboxFull)
        #expect(error?.address == "probe")
        #expect(log.value == [.overflow(.note("c"))])
        host.start()
        let state = try await host.sendAndWait(.note("d"))
        #expect(state.log == ["a", "b", "d"])
        try host.send(.note("e"))
        #expect(try await host.sendAndWait(.note("f")).log == ["a", "b", "d", "e", "f"])
    }

    @Test("Scenario 6: inline events [a, b, c] run as a, b, c before any queued event")
    func inlineEventsRunBeforeQueuedEvents() async throws {
        let host = MachineHost(Probe.self, env: .init())
        try host.send(.inline(["a", "b", "c"]))
        try host.send(.note("queued"))
        host.start()
        let state = try await host.sendAndWait(.note("last"))
        #expect(state.log == ["inline", "a", "b", "c", "queued", "last"])
    }

    @Test("Scenario 6: inline events of an inline event run before its later siblings (depth first)")
    func nestedInlineEventsRunDepthFirst() async throws {
        let host = MachineHost(Probe.self, env: .init())
        host.start()
        let state = try await host.sendAndWait(.nestedInline)
        #expect(state.log == ["nested", "inline", "a1", "a2", "b"])
    }

    @Test("Scenario 19: send-and-wait returns the state committed by that event")
    func sendAndWaitReturnsCommittedState() async throws {
        let host = MachineHost(Probe.self, env: .init())
        host.start()
        #expect(try await host.sendAndWait(.note("x")).log == ["x"])
        #expect(try await host.sendAndWait(.inline(["y"])).log == ["x", "inline", "y"])
    }

    @Test("Scenario 19: cancelling the waiter does not undo the event")
    func cancellingTheWaiterDoesNotUndoTheEvent() async throws {
        let host = MachineHost(Probe.self, env: .init())
        let waiter = Task { try await host.sendAndWait(.note("kept")) }
        waiter.cancel()
        host.start()
        let committed = try await waiter.value
        #expect(committed.log == ["kept"])
        #expect(await host.state.log == ["kept"])
    }
}
