import Testing
import Grove
import GroveRuntime

@Suite("Host termination", .timeLimit(.minutes(2)))
struct HostTerminationTests {
    @Test("Scenario 2: reaching a terminal state completes the run with the final output and reports queued events as dropped")
    func terminalStateCompletesRunAndReportsDropped() async throws {
        let log = DiagnosticLog([])
        let host = MachineHost(Probe.self, env: .init(), options: probeOptions(log: log))
        try host.send(.note("a"))
        try host.send(.finishWith([]))
        try host.send(.note("b"))
        try host.send(.note("c"))
        let termination = try await host.run()
        #expect(termination.reason == .terminalState)
        #expect(termination.finalState.log == ["a"])
        #expect(termination.lastOutput == "final")
        #expect(termination.droppedEvents == [.note("b"), .note("c")])
        #expect(log.value.contains(.dropped([.note("b"), .note("c")])))
    }

    @Test("Scenario 3: sending after termination fails with a distinct error")
    func sendAfterTerminationFails() async throws {
        let host = MachineHost(Probe.self, env: .init())
        host.start()
        _ = try await host.sendAndWait(.finish)
        let error = #expect(throws: HostError.self) { try host.send(.note("late")) }
        #expect(error?.code == .terminated)
        let waitError = await #expect(throws: HostError.self) { try await host.sendAndWait(.note("late")) }
        #expect(waitError?.code == .terminated)

        let stopped = MachineHost(Probe.self, env: .init())
        stopped.start()
        await stopped.stop()
        let stopError = #expect(throws: HostError.self) { try stopped.send(.note("late")) }
        #expect(stopError?.code == .stopped)
        #expect(stopError?.code != error?.code)
    }

    @Test("Scenario 4: a machine whose initial state is terminal completes at once with its initial output")
    func initialTerminalStateCompletesAtOnce() async throws {
        let host = MachineHost(AlreadyDone.self)
        try host.send("ignored")
        let termination = try await host.run()
        #expect(termination.reason == .terminalState)
        #expect(termination.lastOutput == "nothing to do")
        #expect(termination.droppedEvents == ["ignored"])
        let error = #expect(throws: HostError.self) { try host.send("again") }
        #expect(error?.code == .terminated)
    }

    @Test("Scenario 7: events produced by work started on the transition into a terminal state are never processed")
    func workOfTerminalTransitionNeverDelivers() async throws {
        let log = DiagnosticLog([])
        let host = MachineHost(Probe.self, env: .init(), options: probeOptions(log: log))
        host.start()
        let state = try await host.sendAndWait(.finishWith(["inline"]))
        #expect(state.log.isEmpty)
        let termination = try await host.termination()
        #expect(termination.finalState.log.isEmpty)
        #expect(termination.droppedEvents == [.note("inline")])
        #expect(termination.lastOutput == "final")
        #expect(log.value.contains(.skipped(1)))
        #expect(await host.inFlightEffects.isEmpty)
    }

    @Test("Scenario 13: a terminal state cancels in-flight work and ends streams, running their termination handlers")
    func terminalStateCancelsWork() async throws {
        let env = Probe.Env(keepStreamsOpen: true)
        let host = MachineHost(Probe.self, env: env)
        host.start()
        try host.send(.stream(id: "s"))
        try host.send(.startGated(id: "g", value: "never"))
        _ = try await host.sendAndWait(.startTimer(id: "t", seconds: 60, value: "timer"))
        #expect(await host.inFlightEffects == ["s", "g", "t"])
        _ = try await host.sendAndWait(.finish)
        #expect(await host.inFlightEffects.isEmpty)
        #expect(await env.gate.wait("s-ended", within: .seconds(10)))
    }

    @Test("Scenario 13: stop cancels every in-flight effect and ends streams")
    func stopCancelsWork() async throws {
        let env = Probe.Env(keepStreamsOpen: true)
        let host = MachineHost(Probe.self, env: env)
        host.start()
        _ = try await host.sendAndWait(.stream(id: "s"))
        await host.stop()
        #expect(await host.inFlightEffects.isEmpty)
        #expect(await env.gate.wait("s-ended", within: .seconds(10)))
        let termination = try await host.termination()
        #expect(termination.reason == .stopped)
    }

    @Test("Scenario 2: releasing a host with queued events reports them as dropped")
    func releasingHostReportsQueuedEvents() async throws {
        let log = DiagnosticLog([])
        var host: MachineHost<Probe>? = MachineHost(Probe.self, env: .init(), options: probeOptions(log: log))
        try host?.send(.note("a"))
        try host?.send(.note("b"))
        weak let released = host
        host = nil
        #expect(released == nil)
        #expect(log.value == [.dropped([.note("a"), .note("b")])])
    }

    @Test("Scenario 13: releasing the host cancels every in-flight effect and ends streams")
    func hostDeinitCancelsWork() async throws {
        let env = Probe.Env(keepStreamsOpen: true)
        var host: MachineHost<Probe>? = MachineHost(Probe.self, env: env)
        host?.start()
        _ = try await host?.sendAndWait(.stream(id: "s"))
        weak let released = host
        host = nil
        #expect(await env.gate.wait("s-ended", within: .seconds(10)))
        #expect(released == nil)
    }
}
