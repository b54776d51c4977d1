import Testing
import Grove
@testable import GroveRuntime
import GroveTesting

@Test func counterSmoke() async throws {
    let host = MachineHost(Probe.self, env: .init())
    host.start()
    try host.send(.note("a"))
    let state = try await host.sendAndWait(.inline(["b", "c"]))
    #expect(state.log == ["a", "inline", "b", "c"])
}

@Test func storeSmoke() async throws {
    let store = TestStore(Probe.self, env: .init())
    await store.send(.startTask(id: "x", value: "v"))
    await store.receive(.note("v")) { $0.log = ["v"] }
    await store.finish()
}
