import Foundation
import Grove
import GroveExamples
import GroveRuntime
import GroveTesting
import Testing

@Suite("LoadingStateMachine hosted by type (StaticStateMachine)", .timeLimit(.minutes(2)))
struct LoadingStateMachineHostedTests {
    typealias Hosted = StaticStateMachine<LoadingStateMachine>

    @Test("the program's machine is the seed's, starting idle")
    func startsIdle() {
        #expect(Hosted.initialState == .idle)
        var state = Hosted.initialState
        #expect(Hosted.update(&state, event: .loadingHasSucceeded(value: 1)).isUnhandled, "sameState() is unhandled")
        #expect(state == .idle)
    }

    @Test("in the test store, the demo load answers ten times a number and fails anything else")
    func demoLoad() async {
        let store = TestStore(Hosted.self)
        await store.send(.loadingWasRequested(id: "3")) { $0 = .loading }
        await store.receive(.loadingHasSucceeded(value: 30)) { $0 = .loaded(value: 30) }
        await store.finish()

        let failing = TestStore(Hosted.self)
        await failing.send(.loadingWasRequested(id: "three")) { $0 = .loading }
        let message = "no value for id 'three': the demo loader knows numbers only"
        await failing.receive(.loadingHasFailed(message: message)) { $0 = .failed(message: message) }
        await failing.send(.loadingWasRequested(id: "4")) { $0 = .loading }
        await failing.receive(.loadingHasSucceeded(value: 40)) { $0 = .loaded(value: 40) }
        await failing.finish()
    }

    @Test("its snapshot is Codable, which a closure-carrying HostedStateMachine's cannot be")
    func snapshots() async throws {
        let host = MachineHost(Hosted.self, initialState: .loaded(value: 30))
        let data = try JSONEncoder().encode(await host.snapshot())
        let snapshot = try JSONDecoder().decode(Snapshot<Hosted>.self, from: data)
        let restored = MachineHost<Hosted>(restoring: snapshot)
        #expect(await restored.state == .loaded(value: 30))
    }
}

@Suite("LoadingStateMachine's events on the wire", .timeLimit(.minutes(2)))
struct LoadingStateMachineWireTests {
    typealias Event = LoadingStateMachine.Event

    func decode(_ json: String) throws -> Event { try JSONDecoder().decode(Event.self, from: Data(json.utf8)) }

    @Test("seed 003's spelling, loadingwasRequested, decodes as loadingWasRequested")
    func seedSpelling() throws {
        #expect(try decode(#"{"loadingwasRequested":{"id":"3"}}"#) == .loadingWasRequested(id: "3"))
        #expect(try decode(#"{"loadingWasRequested":{"id":"3"}}"#) == .loadingWasRequested(id: "3"))
    }

    @Test("events encode in Grove's spelling and decode back; unknown names still fail")
    func roundTrip() throws {
        let events: [Event] = [.loadingWasRequested(id: "3"), .loadingHasSucceeded(value: 30), .loadingHasFailed(message: "no")]
        for event in events {
            let json = String(decoding: try JSONEncoder().encode(event), as: UTF8.self)
            #expect(!json.contains("loadingwasRequested"), "\(json)")
            #expect(try decode(json) == event)
        }
        #expect(throws: DecodingError.self) { try decode(#"{"loadingWasrequested":{"id":"3"}}"#) }
    }
}
