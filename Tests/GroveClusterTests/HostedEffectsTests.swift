import Grove
import GroveRuntime
@testable import GroveWorker
import GroveWire
import Testing

/// What a worker publishes of its machine's work in flight (`Hosted+Effects.swift`): the
/// host's changes as `effect` payloads, but io calls placed on other workers, which the
/// coordinator publishes from the calls it forwards.
@Suite(.timeLimit(.minutes(2)))
struct HostedEffectsTests {
    typealias Hosted = GroveWorker.Hosted<TallyMachine>

    @Test func aTimerIsPublishedWithItsIdKindPhaseAndDeadline() throws {
        let deadline = Timestamp(sinceEpoch: .seconds(1_700_000_000) + .milliseconds(250))
        let change = EffectChange(id: .stateTimeout, kind: .timer, phase: .started, deadline: deadline)
        let event = try #require(Hosted.event(change, address: "poller/eu", worker: "main", remoteIO: []))
        #expect(event == LocalEffectEvent(address: "poller/eu", worker: "main", effect: .object(["reserved": .string("state-timeout")]),
                                          kind: .timer, phase: .started, deadlineNs: 1_700_000_000_250_000_000))
        let json = String(decoding: try WireJSON.encode(event), as: UTF8.self)
        #expect(json.contains(#""kind":"timer""#) && json.contains(#""phase":"started""#) && !json.contains("request"), "\(json)")
    }

    @Test func everyPhaseAndKindHasItsName() throws {
        let phases: [EffectChange.Phase] = [.started, .fired, .finished, .failed, .cancelled, .replaced, .ended, .passivated]
        #expect(phases.map { Hosted.phase($0).rawValue } == phases.map(\.rawValue))
        let kinds: [EffectChange.Kind] = [.timer, .operation, .task, .stream, .io]
        #expect(kinds.map { Hosted.kind($0).rawValue } == kinds.map(\.rawValue))
        let generated = try #require(Hosted.event(EffectChange(id: .generated(17), kind: .task, phase: .finished),
                                                  address: "a", worker: "w", remoteIO: []))
        #expect(generated.effect == .integer(17))
    }

    @Test func ioRunLocallyIsPublishedAndIoPlacedElsewhereIsNot() throws {
        let local = EffectChange(id: "poll-fetch", kind: .io, phase: .started, request: "FetchData")
        #expect(Hosted.event(local, address: "poller/eu", worker: "main", remoteIO: [])?.request == "FetchData")
        #expect(Hosted.event(local, address: "poller/eu", worker: "main", remoteIO: ["FetchData"]) == nil,
                "the coordinator publishes a call it forwards")
        #expect(Hosted.event(local, address: "poller/eu", worker: "main", remoteIO: ["Other"]) != nil)
    }
}
