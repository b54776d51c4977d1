@testable import GroveCluster
import Grove
import GroveRuntime
import GroveWire
import Testing
import ZeroMQ

/// A trivial machine for hosting on a worker without a coordinator.
enum TallyMachine: Machine {
    enum Event: Codable, Sendable { case increment }
    struct State: Codable, Sendable { var count = 0 }
    static var initialState: State { State() }
    static func update(_ state: inout State, event: Event) -> Effect {
        state.count += 1
        return .none
    }
}

/// A hosted instance's drain target holds its host strongly (host → mailbox → wake-up → target
/// → host); letting the instance go must let the host go too.
struct HostedLifecycleTests {
    @Test func droppingAnInstanceReleasesItsHost() async throws {
        let context = try ZMQContext()
        let loop = try IOLoop(name: "hosted-lifecycle")
        let socket = loop.add(try Socket(context, .dealer))
        let link = WorkerLink(worker: "w", loop: loop, socket: socket)
        weak var weakHost: MachineHost<TallyMachine>?
        var hosted: Hosted<TallyMachine>? = Hosted(address: "tally", env: (), path: HostedPath(), mailboxCapacity: 100,
                                                  io: IOHandlers(), link: link)
        weakHost = hosted?.host
        for _ in 0 ..< 10 { #expect(hosted?.enqueue(Array(#""increment""#.utf8)[...], binary: false) == nil) }
        for _ in 0 ..< 200 where await hosted?.host.state.count != 10 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(await hosted?.host.state.count == 10)
        hosted = nil
        for _ in 0 ..< 200 where weakHost != nil { try await Task.sleep(for: .milliseconds(10)) }
        #expect(weakHost == nil, "the host outlived its Hosted instance: a cycle through HostDrain")
        loop.stop()
    }
}
