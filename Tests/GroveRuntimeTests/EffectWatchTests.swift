import Testing
import Grove
import GroveRuntime
import GroveTesting

/// What ``MachineHost/effects()`` tells a watcher (a worker publishing `effect:<address>`): each
/// start and end of work, with its kind, in the order the host saw them.
@Suite("Watching the work in flight", .timeLimit(.minutes(2)))
struct EffectWatchTests {
    /// The next `count` changes, or fewer when the stream finished first.
    static func next(_ count: Int, of iterator: inout AsyncStream<EffectChange>.Iterator) async -> [EffectChange] {
        var changes: [EffectChange] = []
        while changes.count < count, let change = await iterator.next() { changes.append(change) }
        return changes
    }

    @Test("a timer is told started with its deadline, then replaced, cancelled or fired")
    func timers() async throws {
        let clock = TestClock()
        let host = MachineHost(Probe.self, env: Probe.Env(), clock: clock)
        host.start()
        await host.flush()
        var changes = await host.effects().makeAsyncIterator()
        let armedAt = clock.now()
        _ = try await host.sendAndWait(.startTimer(id: "tick", seconds: 5, value: "one"))
        _ = try await host.sendAndWait(.startTimer(id: "tick", seconds: 9, value: "two"))
        _ = try await host.sendAndWait(.cancel("tick"))
        _ = try await host.sendAndWait(.startTimer(id: "tock", seconds: 1, value: "three"))
        await clock.advance(by: .seconds(1)) { await host.flush() }
        #expect(await Self.next(6, of: &changes) == [
            EffectChange(id: "tick", kind: .timer, phase: .started, deadline: armedAt + .seconds(5)),
            EffectChange(id: "tick", kind: .timer, phase: .replaced, deadline: armedAt + .seconds(5)),
            EffectChange(id: "tick", kind: .timer, phase: .started, deadline: armedAt + .seconds(9)),
            EffectChange(id: "tick", kind: .timer, phase: .cancelled, deadline: armedAt + .seconds(9)),
            EffectChange(id: "tock", kind: .timer, phase: .started, deadline: armedAt + .seconds(1)),
            EffectChange(id: "tock", kind: .timer, phase: .fired, deadline: armedAt + .seconds(1)),
        ])
        #expect(await host.state.log == ["three"])
    }

    @Test("tasks and streams are told by kind and finished on their own; a failure ends its machine's work as ended")
    func tasksAndStreams() async throws {
        let env = Probe.Env()
        let host = MachineHost(Probe.self, env: env)
        host.start()
        await host.flush()
        var changes = await host.effects().makeAsyncIterator()
        _ = try await host.sendAndWait(.startTask(id: "quick", value: "done"))
        #expect(await Self.next(2, of: &changes) == [
            EffectChange(id: "quick", kind: .task, phase: .started), EffectChange(id: "quick", kind: .task, phase: .finished),
        ])
        _ = try await host.sendAndWait(.startGated(id: "slow", value: "never"))
        #expect(await Self.next(1, of: &changes) == [EffectChange(id: "slow", kind: .task, phase: .started)])
        _ = try await host.sendAndWait(.stream(id: "feed"))
        #expect(await Self.next(2, of: &changes) == [
            EffectChange(id: "feed", kind: .stream, phase: .started), EffectChange(id: "feed", kind: .stream, phase: .finished),
        ])
        // Under `.fail` the machine ends: the failed task first, then what was still in flight.
        _ = try? await host.sendAndWait(.failing(mapped: false))
        #expect(await Self.next(4, of: &changes) == [
            EffectChange(id: "failing", kind: .task, phase: .started), EffectChange(id: "failing", kind: .task, phase: .failed),
            EffectChange(id: "slow", kind: .task, phase: .ended),
        ], "and then the stream finishes with the machine")
        env.gate.open("never")
    }

    @Test("a watcher that comes late is told first what is in flight, as started")
    func lateWatcher() async throws {
        let clock = TestClock()
        let host = MachineHost(Probe.self, env: Probe.Env(), clock: clock)
        host.start()
        _ = try await host.sendAndWait(.startTimer(id: "later", seconds: 60, value: "x"))
        _ = try await host.sendAndWait(.startGated(id: "work", value: "gate"))
        var changes = await host.effects().makeAsyncIterator()
        #expect(await Self.next(2, of: &changes) == [
            EffectChange(id: "later", kind: .timer, phase: .started, deadline: clock.now() + .seconds(60)),
            EffectChange(id: "work", kind: .task, phase: .started),
        ])
        await host.cancelEffect("later")
        #expect(await Self.next(1, of: &changes) == [EffectChange(id: "later", kind: .timer, phase: .cancelled, deadline: clock.now() + .seconds(60))])
    }

    @Test("a passivated instance's timers are told passivated, and the stream finishes")
    func passivation() async throws {
        let clock = TestClock()
        let host = MachineHost(Probe.self, env: Probe.Env(), clock: clock)
        host.start()
        _ = try await host.sendAndWait(.startTimer(id: "rest", seconds: 60, value: "x"))
        var changes = await host.effects().makeAsyncIterator()
        await host.passivate()
        #expect(await Self.next(3, of: &changes) == [
            EffectChange(id: "rest", kind: .timer, phase: .started, deadline: clock.now() + .seconds(60)),
            EffectChange(id: "rest", kind: .timer, phase: .passivated, deadline: clock.now() + .seconds(60)),
        ], "and then the stream finishes")
    }
}
