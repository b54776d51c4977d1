import Grove
import GroveRuntime
import Testing

/// `HostOptions.onEnd`: how a transport learns that a machine ended, once, with `run()`'s result.
@Suite("HostOptions.onEnd", .timeLimit(.minutes(2)))
struct HostOnEndTests {
    typealias Ends = Gate.Box<[String]>

    static func options(_ ends: Ends) -> HostOptions<Probe> {
        var options = HostOptions<Probe>(address: "probe")
        options.onEnd = { result in
            ends.mutate { log in
                switch result {
                case .success(let termination):
                    log.append("\(termination.reason) \(termination.finalState.log)")
                case .failure(let error):
                    log.append("failed \(error.code.rawValue)")
                }
            }
        }
        return options
    }

    @Test func aTerminalStateIsReportedOnceWithTheFinalState() async throws {
        let ends = Ends([])
        let host = MachineHost(Probe.self, env: Probe.Env(), options: Self.options(ends))
        host.start()
        _ = try await host.sendAndWait(.note("a"))
        _ = try await host.sendAndWait(.finishWith(["b"]))
        _ = try await host.termination()
        await host.stop() // already ended: not reported again
        #expect(ends.value.count == 1)
        #expect(ends.value.first?.hasPrefix("terminalState") == true)
        #expect(ends.value.first?.contains("a") == true)
    }

    @Test func stopIsReported() async throws {
        let ends = Ends([])
        let host = MachineHost(Probe.self, env: Probe.Env(), options: Self.options(ends))
        host.start()
        _ = try await host.sendAndWait(.note("x"))
        await host.stop()
        #expect(ends.value == [#"stopped ["x"]"#])
    }

    @Test func anEffectFailureIsReportedAsAFailure() async throws {
        let ends = Ends([])
        let host = MachineHost(Probe.self, env: Probe.Env(), options: Self.options(ends))
        host.start()
        try host.send(.failing(mapped: false))
        await #expect(throws: HostError.self) { _ = try await host.termination() }
        #expect(ends.value == ["failed effect-failed"])
    }
}
