import Testing
import Grove
import GroveRuntime
import GroveTesting

@Suite("Streams, timers, failures and diagnostics", .timeLimit(.minutes(2)))
struct EffectKindsTests {
    @Test("Scenario 14: a stream delivers each element in order until it finishes")
    func streamDeliversInOrder() async throws {
        let env = Probe.Env(streamElements: { _ in ["1", "2", "3"] })
        let store = TestStore(Probe.self, env: env)
        await store.send(.stream(id: "numbers"))
        await store.receive(.note("1")) { $0.log = ["1"] }
        await store.receive(.note("2")) { $0.log = ["1", "2"] }
        await store.receive(.note("3")) { $0.log = ["1", "2", "3"] }
        await store.finish()
        #expect(env.gate.isOpen("numbers-ended"))
    }

    @Test("Scenario 14: replacing a stream stops the old one")
    func replacingStreamStopsOld() async throws {
        let env = Probe.Env(streamElements: { _ in ["x"] }, keepStreamsOpen: true)
        let store = TestStore(Probe.self, env: env)
        await store.send(.stream(id: "location"))
        await store.receive(.note("x")) { $0.log = ["x"] }
        await store.send(.stream(id: "location"))
        #expect(await env.gate.wait("location-ended", within: .seconds(10)))
        await store.receive(.note("x")) { $0.log = ["x", "x"] }
        await store.send(.cancel("location"))
        await store.finish()
    }

    @Test("Scenario 15: a delayed event cancelled before its deadline never fires")
    func cancelledTimerNeverFires() async throws {
        let store = TestStore(Probe.self, env: .init())
        await store.send(.startTimer(id: "timeout", seconds: 5, value: "fired"))
        await store.advance(by: .seconds(4))
        await store.send(.cancel("timeout"))
        await store.advance(by: .seconds(60))
        await store.finish()
    }

    @Test("Scenario 15: a delayed event fires at its deadline, not before")
    func timerFiresAtDeadline() async throws {
        let store = TestStore(Probe.self, env: .init())
        await store.send(.startTimer(id: "timeout", seconds: 5, value: "fired"))
        await store.advance(by: .milliseconds(4_999))
        #expect(await store.host.inFlightEffects == ["timeout"])
        await store.advance(by: .milliseconds(1))
        await store.receive(.note("fired")) { $0.log = ["fired"] }
        await store.finish()
    }

    @Test("Scenario 16: an effect error under a .map policy becomes an event")
    func mappedFailureBecomesEvent() async throws {
        let store = TestStore(Probe.self, env: .init())
        await store.send(.failing(mapped: true))
        await store.receive(.note("mapped failure")) { $0.log = ["mapped failure"] }
        await store.finish()
    }

    @Test("Scenario 16: an effect error under the .fail policy stops the machine with the error")
    func failPolicyStopsMachine() async throws {
        let log = DiagnosticLog([])
        let host = MachineHost(Probe.self, env: .init(), options: probeOptions(log: log))
        try host.send(.failing(mapped: false))
        let error = await #expect(throws: HostError.self) { try await host.run() }
        #expect(error?.code == .effectFailed)
        #expect(error?.effectID == "failing")
        #expect(error?.underlying is Probe.Failure)
        #expect(log.value.contains(.effectFailed("failing")))
        let later = #expect(throws: HostError.self) { try host.send(.note("after")) }
        #expect(later?.code == .effectFailed)
    }

    @Test("Scenario 17: an unhandled (state, event) pair leaves the state unchanged and is reported")
    func unhandledEventIsReported() async throws {
        let log = DiagnosticLog([])
        let host = MachineHost(Probe.self, env: .init(), options: probeOptions(log: log))
        host.start()
        _ = try await host.sendAndWait(.note("before"))
        let state = try await host.sendAndWait(.unknown)
        #expect(state.log == ["before"])
        #expect(log.value == [.unhandled(.unknown)])

        let store = TestStore(Probe.self, env: .init())
        await store.sendUnhandled(.unknown)
        await store.finish()
    }

    @Test("Outputs reach observers in order")
    func outputsReachObservers() async throws {
        let store = TestStore(Probe.self, env: .init())
        await store.send(.emit("one"))
        await store.send(.emit("two"))
        await store.receiveOutput("one")
        await store.receiveOutput("two")
        await store.finish()
    }
}
