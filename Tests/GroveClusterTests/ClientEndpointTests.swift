import Foundation
@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import GroveTestSupport
import GroveWire
import Testing

/// `.ownThread`: a `Client` blocks for up to its timeout.
@Suite("ClientEndpoint", .timeLimit(.minutes(2)), .ownThread)
struct ClientEndpointTests {
    @Test(arguments: [
        ("tcp://0.0.0.0:5557", "tcp://grove-1:5555", "tcp://grove-1:5557"),
        ("tcp://*:5557", "tcp://10.1.2.3:5555", "tcp://10.1.2.3:5557"),
        ("tcp://[::]:5557", "tcp://grove-1:5555", "tcp://grove-1:5557"),
        // Reached over ipc, or through a wildcard: the coordinator is on this host.
        ("tcp://0.0.0.0:5557", "ipc:///run/user/1000/grove/default/clients", "tcp://127.0.0.1:5557"),
        ("tcp://0.0.0.0:5557", "tcp://0.0.0.0:5555", "tcp://127.0.0.1:5557"),
        // Anything that is not a wildcard bind is used as is.
        ("tcp://127.0.0.1:43143", "tcp://grove-1:5555", "tcp://127.0.0.1:43143"),
        ("ipc:///run/user/1000/grove/default/events", "tcp://grove-1:5555", "ipc:///run/user/1000/grove/default/events"),
    ])
    func wildcardHostsBecomeTheHostTheClientReached(endpoint: String, clients: String, expected: String) {
        #expect(ClientEndpoint.connectable(endpoint, via: clients) == expected)
    }

    @Test func anEndpointZeroMQRefusesIsBadInputNotUnreachable() throws {
        let error = #expect(throws: WireError.self) { try Client(endpoint: "foo://bar", timeout: .milliseconds(200)) }
        #expect(error?.code == .invalidEndpoint)
        #expect(error?.message.contains("foo://bar") == true)
    }

    @Test func nobodyListeningIsUnreachableWithinTheTimeout() throws {
        let endpoint = privateSocketEndpoint("nobody")
        defer { try? FileManager.default.removeItem(atPath: LocalEndpoint(endpoint).directory!) }
        let client = try Client(endpoint: endpoint, timeout: .milliseconds(200))
        let error = #expect(throws: WireError.self) { try client.list() }
        #expect(error?.code == .unreachable || error?.code == .timeout)
    }
}
