import Testing
import Grove
import GroveRuntime

@Suite("Observation", .timeLimit(.minutes(2)))
struct ObservationTests {
    @Test("states() yields the current state, then every committed state in order, and ends with the machine")
    func statesStreamInOrder() async throws {
        let host = MachineHost(Probe.self, env: .init())
        host.start()
        _ = try await host.sendAndWait(.note("before"))
        let states = await host.states()
        _ = try await host.sendAndWait(.inline(["a"]))
        _ = try await host.sendAndWait(.finish)
        var seen: [[String]] = []
        for await state in states { seen.append(state.log) }
        #expect(seen == [["before"], ["before", "inline"], ["before", "inline", "a"], ["before", "inline", "a"]])
    }

    @Test("firstState returns the matching state, or nil when the deadline passes")
    func firstStateWaitsWithDeadline() async throws {
        let host = MachineHost(Probe.self, env: .init())
        host.start()
        #expect(await host.firstState(within: .milliseconds(50)) { $0.log == ["never"] } == nil)
        try host.send(.note("x"))
        #expect(await host.firstState(within: .seconds(10)) { $0.log == ["x"] }?.log == ["x"])
        await host.stop()
        #expect(await host.firstState(within: .seconds(2)) { $0.log == ["y"] } == nil, "ends with the machine")
    }
}
