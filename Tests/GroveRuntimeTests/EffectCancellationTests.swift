import Testing
import Foundation
import Grove
import GroveRuntime
import GroveTesting

@Suite("Effect ids, cancellation and replacement", .timeLimit(.minutes(2)))
struct EffectCancellationTests {
    @Test("Scenario 8: starting work with an id already in flight cancels the old work; only the newest delivers")
    func replaceDeliversOnlyNewest() async throws {
        let env = Probe.Env()
        let store = TestStore(Probe.self, env: env)
        await store.send(.startGated(id: "search", value: "old"))
        await store.send(.startGated(id: "search", value: "new"))
        env.gate.open("old")
        env.gate.open("new")
        await store.receive(.note("new")) { $0.log = ["new"] }
        await store.finish()
    }

    @Test("Scenario 8: a merge child replacing an earlier sibling does not stop the later siblings")
    func replacingInsideMergeKeepsLaterChildren() async throws {
        let env = Probe.Env()
        let host = MachineHost(Probe.self, env: env)
        host.start()
        _ = try await host.sendAndWait(.mergeReplacingSibling)
        let state = await host.firstState(within: .seconds(10)) { Set($0.log) == ["second", "third"] }
        #expect(state != nil)
        env.gate.open("first")
        await host.flush()
        #expect(await host.firstState(within: .milliseconds(200)) { $0.log.contains("first") } == nil)
        #expect(await host.inFlightEffects.isEmpty, "the merge completes once its children have")
    }

    @Test("Scenario 9: a user-chosen id never collides with ids the runtime generates")
    func userIDsNeverCollideWithGenerated() async throws {
        #expect(EffectID("1") != EffectID.generated(1))
        #expect(EffectID("#1") != EffectID.generated(1))
        #expect(EffectID.generated(1).description == "#1")
        let encoded = try JSONEncoder().encode([EffectID("1"), EffectID.generated(1)])
        #expect(String(decoding: encoded, as: UTF8.self) == #"["1",1]"#)
        #expect(try JSONDecoder().decode([EffectID].self, from: encoded) == [EffectID("1"), .generated(1)])

        let env = Probe.Env()
        let host = MachineHost(Probe.self, env: env)
        host.start()
        _ = try await host.sendAndWait(.startGated(id: nil, value: "anonymous"))
        let generated = try #require(await host.inFlightEffects.first)
        #expect(generated.isGenerated)
        _ = try await host.sendAndWait(.startGated(id: generated.description, value: "user"))
        #expect(await host.inFlightEffects.count == 2)
        _ = try await host.sendAndWait(.cancel(generated.description))
        #expect(await host.inFlightEffects == [generated])
        await host.stop()
    }

    @Test("Scenario 10: cancelled work cannot deliver afterwards, even when it never sees the cancellation")
    func cancelledWorkCannotDeliver() async throws {
        let env = Probe.Env()
        let host = MachineHost(Probe.self, env: env)
        host.start()
        _ = try await host.sendAndWait(.startDetached(id: "d", value: "late"))
        _ = try await host.sendAndWait(.cancel("d"))
        env.gate.open("late")
        #expect(await env.delivered.wait("late", within: .seconds(10)))
        await host.flush()
        #expect(await host.state.log.isEmpty)
    }

    @Test("Scenario 10: replaced work cannot deliver afterwards, even when it never sees the cancellation")
    func replacedWorkCannotDeliver() async throws {
        let env = Probe.Env()
        let discarded = Gate.Box<[EffectID]>([])
        let options = HostOptions<Probe>(trace: { trace in
            if case .resultDiscarded(let id) = trace { discarded.mutate { $0.append(id) } }
        })
        let host = MachineHost(Probe.self, env: env, options: options)
        host.start()
        _ = try await host.sendAndWait(.startDetached(id: "d", value: "old"))
        _ = try await host.sendAndWait(.startDetached(id: "d", value: "new"))
        env.gate.open("old")
        #expect(await env.delivered.wait("old", within: .seconds(10)))
        await host.flush()
        #expect(discarded.value == ["d"], "the old result reached the host and was discarded")
        env.gate.open("new")
        #expect(await env.delivered.wait("new", within: .seconds(10)))
        await host.flush()
        #expect(await host.state.log == ["new"])
    }

    @Test("Scenario 11: cancelling an unknown or completed id is a no-op, and finished work is removed")
    func cancelUnknownIsNoOpAndFinishedIsRemoved() async throws {
        let store = TestStore(Probe.self, env: .init())
        await store.send(.cancel("never-started"))
        await store.send(.startTask(id: "t", value: "done"))
        await store.receive(.note("done")) { $0.log = ["done"] }
        #expect(await store.host.inFlightEffects.isEmpty, "finished work must leave the registry")
        await store.send(.cancel("t"))
        await store.send(.startGated(id: "t", value: "again"))
        #expect(await store.host.inFlightEffects == ["t"])
        await store.send(.cancel("t"))
        await store.finish()
    }

    @Test("Scenario 11: the late finish of replaced work never removes its successor")
    func lateFinishOfReplacedWorkKeepsSuccessor() async throws {
        let env = Probe.Env()
        let host = MachineHost(Probe.self, env: env)
        host.start()
        _ = try await host.sendAndWait(.startDetached(id: "w", value: "first"))
        _ = try await host.sendAndWait(.startDetached(id: "w", value: "second"))
        env.gate.open("first")
        #expect(await env.delivered.wait("first", within: .seconds(10)))
        await host.flush()
        #expect(await host.inFlightEffects == ["w"], "the successor must still be registered")
        env.gate.open("second")
        let state = await host.firstState(within: .seconds(10)) { $0.log == ["second"] }
        #expect(state != nil)
    }

    @Test("Scenario 12: cancelling a sequence prevents its pending steps from starting")
    func cancellingSequenceStopsPendingSteps() async throws {
        let env = Probe.Env()
        let store = TestStore(Probe.self, env: env)
        await store.send(.sequence(id: "seq", steps: [.gated("a"), .note("b"), .timer(seconds: 1, value: "c")]))
        await store.send(.cancel("seq"))
        env.gate.open("a")
        await store.advance(by: .seconds(5))
        #expect(store.clock.pendingTimerCount == 0)
        await store.finish()
    }

    @Test("Scenario 12: a sequence runs its steps one after another")
    func sequenceIsTrulySequential() async throws {
        let env = Probe.Env()
        let store = TestStore(Probe.self, env: env)
        await store.send(.sequence(id: "seq", steps: [.gated("a"), .note("b"), .timer(seconds: 1, value: "c")]))
        #expect(store.clock.pendingTimerCount == 0, "the timer step must not start before the first step ends")
        env.gate.open("a")
        await store.receive(.note("a")) { $0.log = ["a"] }
        await store.receive(.note("b")) { $0.log = ["a", "b"] }
        #expect(store.clock.pendingTimerCount == 1)
        await store.advance(by: .seconds(1))
        await store.receive(.note("c")) { $0.log = ["a", "b", "c"] }
        await store.finish()
    }

    @Test("Scenario 18: two machine instances using the same effect id never cancel each other's work")
    func instancesDoNotShareIDs() async throws {
        let env = Probe.Env()
        let first = MachineHost(Probe.self, env: env)
        let second = MachineHost(Probe.self, env: env)
        first.start()
        second.start()
        _ = try await first.sendAndWait(.startGated(id: "w", value: "shared"))
        _ = try await second.sendAndWait(.startGated(id: "w", value: "shared"))
        _ = try await first.sendAndWait(.cancel("w"))
        #expect(await first.inFlightEffects.isEmpty)
        #expect(await second.inFlightEffects == ["w"])
        env.gate.open("shared")
        #expect(await second.firstState(within: .seconds(10)) { $0.log == ["shared"] } != nil)
        await first.flush()
        #expect(await first.state.log.isEmpty)
    }
}
