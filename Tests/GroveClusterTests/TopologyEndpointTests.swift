import Foundation
@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import GroveTestSupport
import Testing

/// A topology's coordinator endpoints: left out, they are sockets in the launching user's
/// runtime directory; abstract sockets need CURVE; the coordinator makes ready (or refuses) the
/// directories before it binds.
@Suite("Topology endpoints", .timeLimit(.minutes(2)))
struct TopologyEndpointTests {
    static func document(name: String = "orders", coordinator: String? = nil, security: String? = nil) -> Data {
        Data("""
            { "name": "\(name)", \(coordinator.map { "\"coordinator\": \($0)," } ?? "")
              "workers": [ { "name": "main" } ], "machines": []\(security.map { ", \"security\": \($0)" } ?? "") }
            """.utf8)
    }

    static func issues(_ data: Data, environment: [String: String]) -> [TopologyIssue] {
        do {
            _ = try Topology(json: data, source: "t", environment: environment)
            Issue.record("expected the topology to be refused")
            return []
        } catch {
            return error.issues
        }
    }

    @Test func theRuntimeDirectoryComesFromTheEnvironment() {
        #expect(RuntimeDirectory.path(environment: ["GROVE_RUNTIME_DIR": "/srv/g/", "XDG_RUNTIME_DIR": "/run/user/7"], uid: 7) == "/srv/g")
        #expect(RuntimeDirectory.path(environment: ["XDG_RUNTIME_DIR": "/run/user/7"], uid: 7) == "/run/user/7/grove")
        #expect(RuntimeDirectory.path(environment: ["XDG_RUNTIME_DIR": "relative", "GROVE_RUNTIME_DIR": ""], uid: 7) == "/tmp/grove-7")
        #expect(RuntimeDirectory.path(environment: [:], uid: 0) == "/tmp/grove-0")
        #expect(RuntimeDirectory.endpoints(ofTopology: "default", environment: ["XDG_RUNTIME_DIR": "/run/user/7"], uid: 7)
            == Topology.Endpoints(clients: "ipc:///run/user/7/grove/default/clients", workers: "ipc:///run/user/7/grove/default/workers",
                                  events: "ipc:///run/user/7/grove/default/events"))
    }

    @Test func endpointsLeftOutAreSocketsInTheRuntimeDirectory() throws {
        let environment = ["GROVE_RUNTIME_DIR": "/run/g"]
        let all = try Topology(json: Self.document(), source: "t", environment: environment)
        #expect(all.coordinator == Topology.Endpoints(clients: "ipc:///run/g/orders/clients", workers: "ipc:///run/g/orders/workers",
                                                      events: "ipc:///run/g/orders/events"))
        let some = try Topology(json: Self.document(coordinator: #"{ "events": "ipc:///srv/orders/events" }"#), source: "t",
                                environment: environment)
        #expect(some.coordinator == Topology.Endpoints(clients: "ipc:///run/g/orders/clients", workers: "ipc:///run/g/orders/workers",
                                                       events: "ipc:///srv/orders/events"))
    }

    @Test func theNameMustNameADirectoryWhenEndpointsAreLeftOut() throws {
        let issues = Self.issues(Self.document(name: "a/b"), environment: [:])
        #expect(issues.map { "\($0.code) \($0.path)" } == ["invalid-value $.name"])
        #expect(issues.first?.message.contains("contains '/'") == true, "\(issues)")
        // Every endpoint written: the name is only a name.
        let written = #"{ "clients": "ipc:///run/c", "workers": "ipc:///run/w", "events": "ipc:///run/e" }"#
        #expect(throws: Never.self) { try Topology(json: Self.document(name: "a/b", coordinator: written), source: "t", environment: [:]) }
    }

    @Test func aSocketPathTooLongIsToldWithWhatToDo() {
        let environment = ["GROVE_RUNTIME_DIR": "/run/" + String(repeating: "d", count: 100)]
        let issues = Self.issues(Self.document(), environment: environment)
        #expect(issues.map { "\($0.code) \($0.path)" } == [
            "invalid-endpoint $.coordinator.clients", "invalid-endpoint $.coordinator.workers", "invalid-endpoint $.coordinator.events",
        ])
        #expect(issues.first?.message.contains("GROVE_RUNTIME_DIR") == true, "\(issues)")
    }

    @Test func anAbstractSocketNeedsCurve() throws {
        let abstract = #"{ "clients": "ipc://@grove/clients", "workers": "ipc:///run/g/w", "events": "ipc://@grove/events" }"#
        let issues = Self.issues(Self.document(coordinator: abstract), environment: [:])
        #expect(issues.map { "\($0.code) \($0.path)" } == ["insecure $.coordinator.clients", "insecure $.coordinator.events"])
        #expect(issues.first?.message.contains("any local user could bind it first") == true, "\(issues)")
        #expect(issues.first?.message.contains("Leave clients out") == true, "\(issues)")
        #expect(issues.first?.message.contains("security.coordinatorKey") == true, "\(issues)")
        // With CURVE, the coordinator's key proves it.
        let curve = #"{ "coordinatorKey": "keys/coordinator.key_secret" }"#
        #expect(throws: Never.self) { try Topology(json: Self.document(coordinator: abstract, security: curve), source: "t", environment: [:]) }
    }

    @Test func everyShippedTopologyLeavesItsEndpointsToTheRuntimeDirectory() throws {
        let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appending(path: "Topologies")
        for file in try FileManager.default.contentsOfDirectory(atPath: directory.path) where file.hasSuffix(".json") {
            let topology = try Topology.load(contentsOf: directory.appendingPathComponent(file), environment: ["GROVE_RUNTIME_DIR": "/run/g"])
            #expect(topology.coordinator == RuntimeDirectory.endpoints(ofTopology: topology.name, environment: ["GROVE_RUNTIME_DIR": "/run/g"]),
                    "\(file)")
        }
    }

    // MARK: - Before binding

    @Test func theCoordinatorMakesItsDirectoriesPrivate() throws {
        let base = makePrivateDirectory()
        defer { try? FileManager.default.removeItem(atPath: base) }
        let environment = ["GROVE_RUNTIME_DIR": base + "/runtime"]
        let topology = try Topology(json: Self.document(), source: "t", environment: environment)
        try Coordinator.prepareLocalEndpoints(of: topology, environment: environment)
        for path in [base + "/runtime", base + "/runtime/orders"] {
            var status = stat()
            lstat(path, &status)
            #expect(status.st_mode & 0o7777 == 0o700, "\(path)")
        }
        // Checking creates nothing, and finds nothing wrong.
        let other = ["GROVE_RUNTIME_DIR": base + "/other"]
        try Coordinator.prepareLocalEndpoints(of: try Topology(json: Self.document(), source: "t", environment: other),
                                              environment: other, creating: false)
        #expect(!FileManager.default.fileExists(atPath: base + "/other"))
    }

    @Test func aRuntimeDirectoryOpenToOthersIsRefused() throws {
        let base = makePrivateDirectory()
        defer { try? FileManager.default.removeItem(atPath: base) }
        mkdir(base + "/runtime", 0o700)
        chmod(base + "/runtime", 0o777)
        let environment = ["GROVE_RUNTIME_DIR": base + "/runtime"]
        let topology = try Topology(json: Self.document(), source: "t", environment: environment)
        let error = #expect(throws: CoordinatorError.self) { try Coordinator.prepareLocalEndpoints(of: topology, environment: environment) }
        let message = error?.message ?? ""
        #expect(message.contains("cannot bind the clients endpoint ipc://\(base)/runtime/orders/clients"), "\(message)")
        #expect(message.contains("\(base)/runtime has mode 0777") && message.contains("chmod 700"), "\(message)")
        #expect(message.contains("or set GROVE_RUNTIME_DIR"), "\(message)")
        // --check says so too, without creating the topology's directory.
        #expect(throws: CoordinatorError.self) { try Coordinator.prepareLocalEndpoints(of: topology, environment: environment, creating: false) }
        #expect(!FileManager.default.fileExists(atPath: base + "/runtime/orders"))
    }

    @Test func aSocketFileMustBeInADirectoryOnlyTheUserCanWrite() throws {
        let base = makePrivateDirectory()
        defer { try? FileManager.default.removeItem(atPath: base) }
        mkdir(base + "/shared", 0o700)
        chmod(base + "/shared", 0o1777)
        let written = #"{ "clients": "ipc://\#(base)/shared/c", "workers": "ipc://\#(base)/w", "events": "ipc://\#(base)/e" }"#
        let topology = try Topology(json: Self.document(coordinator: written), source: "t", environment: [:])
        let error = #expect(throws: CoordinatorError.self) { try Coordinator.prepareLocalEndpoints(of: topology, environment: [:]) }
        #expect(error?.message.contains("\(base)/shared has mode 01777") == true && error?.message.contains("a directory of your own") == true, "\(String(describing: error))")
        #expect(error?.message.contains("change coordinator.clients") == true, "\(String(describing: error))")
    }

    @Test func aLiveSocketIsNotTakenOver() throws {
        let base = makePrivateDirectory()
        defer { try? FileManager.default.removeItem(atPath: base) }
        let environment = ["GROVE_RUNTIME_DIR": base + "/runtime"]
        let topology = try Topology(json: Self.document(), source: "t", environment: environment)
        try Coordinator.prepareLocalEndpoints(of: topology, environment: environment)
        let (context, socket) = try LocalEndpointTests.bound(topology.coordinator.workers)
        defer { socket.close(); context.terminate() }
        let error = #expect(throws: CoordinatorError.self) { try Coordinator.prepareLocalEndpoints(of: topology, environment: environment) }
        #expect(error?.message.contains("cannot bind the workers endpoint") == true, "\(String(describing: error))")
        #expect(error?.message.contains("another fsm-launch") == true, "\(String(describing: error))")
    }

    @Test func aTopologyBuiltInCodeCannotBindAnAbstractSocketWithoutCurve() {
        let topology = Topology(name: "t", coordinator: .init(clients: "ipc://@t/c", workers: "ipc://@t/w", events: "ipc://@t/e"),
                                workers: [], machines: [])
        let error = #expect(throws: CoordinatorError.self) { try Coordinator(topology: topology) }
        #expect(error?.message.contains("abstract socket") == true, "\(String(describing: error))")
    }
}
