import Foundation
@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import GroveWire
import Testing

/// The repository root, found from this file: Tests/GroveClusterTests/TopologyTests.swift.
private let repositoryRoot = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

private func shippedTopology(_ name: String) throws -> Topology {
    try Topology.load(contentsOf: repositoryRoot.appending(path: "Topologies/\(name)"))
}

@Suite("Topology files and helpers", .timeLimit(.minutes(2)))
struct TopologyTests {
    @Test func everyShippedTopologyLoads() throws {
        let directory = repositoryRoot.appending(path: "Topologies")
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
            .filter { $0.hasSuffix(".json") }.sorted()
        #expect(files.contains("default.json"))
        #expect(files.contains("auth-loading-polling.json"))
        #expect(files.contains("load.json"))
        #expect(files.contains("dialects.json"))
        for file in files {
            do {
                _ = try Topology.load(contentsOf: directory.appending(path: file))
            } catch {
                Issue.record("\(error)")
            }
        }
    }

    @Test func defaultFileEqualsTheEmbeddedDefault() throws {
        let file = try shippedTopology("default.json")
        let defaultTopology = try Topology.defaultTopology()
        #expect(file == defaultTopology)
        #expect(defaultTopology.name == "default")
        // Its endpoints are left out: sockets in this user's runtime directory.
        #expect(defaultTopology.coordinator == RuntimeDirectory.endpoints(ofTopology: "default"))
        #expect(defaultTopology.coordinator.clients == Client.defaultEndpoint)
        #expect(defaultTopology.machines.map(\.type) == [
            "AuthFlow", "DataLoader", "PollingService", "UserForm", "Search", "LoginFlow", "AppNavigator", "Counter",
        ])
        // io crosses processes even in the default.
        #expect(defaultTopology.ioWorkerGroup(for: "Authenticate") == "io")
        #expect(defaultTopology.placement(ofMachine: "auth", key: nil) == "main")
    }

    @Test func authLoadingPolling() throws {
        let topology = try shippedTopology("auth-loading-polling.json")
        #expect(topology.workerInstances.map(\.name) == ["edge", "auth-io", "data-io-1", "data-io-2"])
        #expect(Set(["auth", "loader", "poller"].compactMap { topology.machine(named: $0)?.worker }) == ["edge"])
        #expect(topology.ioWorkerGroup(for: "Authenticate") == "auth-io")
        #expect(topology.ioWorkerGroup(for: "FetchData") == "data-io")
        #expect(topology.ioWorkerGroup(for: "SubmitForm") == nil)
        #expect(topology.routes == [Topology.Route(from: "auth", when: "signedIn", to: "loader", event: .string("load"))])
    }

    @Test func loadTopologyHasAKeyedPoolAndLargeQueues() throws {
        let topology = try shippedTopology("load.json")
        #expect(topology.instances(of: "bench") == ["bench-1", "bench-2"])
        #expect(topology.machine(named: "counter")?.keyed == true)
        #expect(topology.machine(named: "sink")?.keyed == false)
        #expect(topology.queues == Topology.Queues(mailboxCapacity: 65536, workerOutbox: 100_000, clientOutbox: 100_000))
    }

    @Test func instanceNaming() {
        #expect(Topology.WorkerGroup(name: "edge").instanceNames == ["edge"])
        #expect(Topology.WorkerGroup(name: "io", count: 3).instanceNames == ["io-1", "io-2", "io-3"])
        let topology = Topology(
            name: "t",
            coordinator: .init(clients: "inproc://c", workers: "inproc://w", events: "inproc://e"),
            workers: [Topology.WorkerGroup(name: "a"), Topology.WorkerGroup(name: "b", count: 2)],
            machines: []
        )
        #expect(topology.workerInstances == [
            Topology.WorkerInstance(name: "a", group: "a", index: 0),
            Topology.WorkerInstance(name: "b-1", group: "b", index: 0),
            Topology.WorkerInstance(name: "b-2", group: "b", index: 1),
        ])
        #expect(topology.instances(of: "b") == ["b-1", "b-2"])
        #expect(topology.instances(of: "missing") == [])
    }

    /// FNV-1a 64 (whose values for "a" and "foobar" are 0xaf63dc4c8601ec8c and
    /// 0x85944171f73967e8) finished with fmix64.
    @Test func stableHashIsFNV1a64ThenFmix64() {
        #expect(Topology.stableHash("") == 0xefd0_1f60_ba99_2926)
        #expect(Topology.stableHash("a") == 0x82a2_a958_a9be_ce5b)
        #expect(Topology.stableHash("foobar") == 0x2c22_1949_22d1_672b)
    }

    @Test func keyedPlacementIsStable() throws {
        let topology = try shippedTopology("load.json")
        // stableHash("a") is odd, stableHash("alice") even: fixed across processes and runs.
        #expect(topology.placement(ofMachine: "counter", key: "a") == "bench-2")
        #expect(topology.placement(ofMachine: "counter", key: "alice") == "bench-1")
        #expect(topology.placement(ofMachine: "counter", key: "user-2") == "bench-2")
        for _ in 0..<3 {
            #expect(topology.placement(ofMachine: "counter", key: "alice") == "bench-1")
        }
        // A single machine on a pool goes to its first instance.
        #expect(topology.placement(ofMachine: "sink", key: nil) == "bench-1")
    }

    /// A topology named `name` with one keyed machine, `m`, on a pool of `workers`.
    static func pooled(_ name: String, workers: Int) -> Topology {
        Topology(
            name: name,
            coordinator: .init(clients: "inproc://c", workers: "inproc://w", events: "inproc://e"),
            workers: [Topology.WorkerGroup(name: "pool", count: workers)],
            machines: [Topology.MachineSpec(name: "m", type: "Counter", worker: "pool", keyed: true)]
        )
    }

    /// What the coordinator places a fresh key by, reading the key inside its address, is what
    /// every other process computes from the key alone.
    @Test(arguments: [1, 2, 3, 5])
    func poolIndexInsideAnAddressIsThePlacementOfItsKey(poolSize: Int) {
        let topology = Self.pooled("pool-index", workers: poolSize)
        let pool = topology.instances(of: "pool")
        for key in (0..<200).map({ "user-\($0)" }) + ["a", "a/b", "clé-é", "e\u{301}", String(repeating: "x", count: 40)] {
            let address = "m/" + key
            let slash = address.utf8.firstIndex(of: UInt8(ascii: "/"))!
            let index = Topology.poolIndex(ofKeyIn: address, after: slash, poolSize: poolSize)
            #expect(pool[index] == topology.placement(ofMachine: "m", key: key), "key \(key)")
        }
    }

    @Test func keyedPlacementSpreadsKeysOverAPool() {
        let topology = Self.pooled("spread", workers: 4)
        var counts: [String: Int] = [:]
        for index in 0..<4000 {
            counts[topology.placement(ofMachine: "m", key: "user-\(index)") ?? "none", default: 0] += 1
        }
        #expect(Set(counts.keys) == ["pool-1", "pool-2", "pool-3", "pool-4"])
        for (instance, count) in counts {
            #expect((800...1200).contains(count), "\(instance) got \(count) of 4000 keys")
        }
    }

    /// Keys whose bytes differ only in their high bits (A, Q, a and q are 0x41, 0x51, 0x61 and
    /// 0x71): FNV-1a alone put all 64 on one instance of a pool of 2, 4 or 8.
    @Test(arguments: [2, 4, 8])
    func keyedPlacementSpreadsKeysThatDifferOnlyInHighBits(poolSize: Int) {
        let topology = Self.pooled("spread", workers: poolSize)
        let letters = ["A", "Q", "a", "q"]
        var counts: [String: Int] = [:]
        for first in letters {
            for second in letters {
                for third in letters {
                    counts[topology.placement(ofMachine: "m", key: first + second + third) ?? "none", default: 0] += 1
                }
            }
        }
        let fair = 64 / poolSize
        #expect(counts.count == poolSize, "\(counts)")
        for (instance, count) in counts {
            #expect((fair / 2...fair * 2).contains(count), "\(instance) got \(count) of 64 keys")
        }
    }

    @Test func placementRefusesAddressesThatDoNotFit() throws {
        let topology = try shippedTopology("load.json")
        #expect(topology.placement(ofMachine: "counter", key: nil) == nil)
        #expect(topology.placement(ofMachine: "counter", key: "") == nil)
        #expect(topology.placement(ofMachine: "sink", key: "k") == nil)
        #expect(topology.placement(ofMachine: "ghost", key: nil) == nil)
    }

    @Test func routesMatchOutputsByCaseName() {
        let route = Topology.Route(from: "auth", when: "signedIn", to: "loader", event: .string("load"))
        #expect(route.matches(.string("signedIn")))
        #expect(route.matches(.object(["signedIn": .object(["id": .string("u1")])])))
        #expect(!route.matches(.string("signedOut")))
        #expect(!route.matches(.object(["signedIn": .null, "other": .null])))
        #expect(route.event(for: .string("signedIn")) == .string("load"))
        let forward = Topology.Route(from: "auth", to: "poller/p1")
        #expect(forward.matches(.number(3)))
        #expect(forward.event(for: .string("tick")) == .string("tick"))
        #expect(forward.targetMachine == "poller")
        #expect(forward.targetKey == "p1")
        #expect(route.targetKey == nil)
    }

    @Test func defaultsAreApplied() throws {
        let json = """
            {
              "name": "minimal",
              "coordinator": { "clients": "tcp://*:5555", "workers": "tcp://*:5556", "events": "tcp://*:5557" },
              "security": { "insecure": true },
              "workers": [ { "name": "main" } ],
              "machines": [ { "name": "auth", "type": "AuthFlow", "worker": "main" } ]
            }
            """
        let topology = try Topology(json: Data(json.utf8), source: "minimal.json")
        #expect(topology.workers == [
            Topology.WorkerGroup(name: "main", count: 1, executable: "fsm-worker", arguments: [], external: false),
        ])
        #expect(topology.machines == [Topology.MachineSpec(name: "auth", type: "AuthFlow", worker: "main", keyed: false)])
        #expect(topology.io.isEmpty)
        #expect(topology.routes.isEmpty)
        #expect(topology.heartbeat == Topology.Heartbeat(intervalMs: 250, timeoutMs: 1500))
        #expect(topology.heartbeat.timeout == .milliseconds(1500))
        #expect(topology.queues == Topology.Queues(mailboxCapacity: 1024, workerOutbox: 10000, workerOutboxBytes: 64 << 20,
                                                   clientOutbox: 10000, clientOutboxBytes: 16 << 20))
    }

    @Test func queuesAreBoundedInBytesAsSet() throws {
        let json = """
            {
              "name": "bytes",
              "coordinator": { "clients": "tcp://*:5555", "workers": "tcp://*:5556", "events": "tcp://*:5557" },
              "security": { "insecure": true },
              "workers": [ { "name": "main" } ],
              "machines": [ { "name": "auth", "type": "AuthFlow", "worker": "main" } ],
              "queues": { "workerOutboxBytes": 1048576, "clientOutbox": 50, "clientOutboxBytes": 65536 }
            }
            """
        let topology = try Topology(json: Data(json.utf8), source: "bytes.json")
        #expect(topology.queues == Topology.Queues(mailboxCapacity: 1024, workerOutbox: 10000, workerOutboxBytes: 1 << 20,
                                                   clientOutbox: 50, clientOutboxBytes: 64 << 10))
    }

    @Test func externalWorkersAndRouteEventsAreKept() throws {
        let json = """
            {
              "$schema": "../docs/topology.schema.json",
              "name": "remote",
              "coordinator": { "clients": "tcp://*:5555", "workers": "tcp://*:5556", "events": "tcp://*:5557" },
              "security": { "insecure": true },
              "workers": [
                { "name": "edge" },
                { "name": "remote", "external": true, "executable": "my-worker", "arguments": ["--flag"] }
              ],
              "machines": [
                { "name": "auth", "type": "AuthFlow", "worker": "edge" },
                { "name": "poller", "type": "PollingService", "worker": "remote", "keyed": true }
              ],
              "routes": [
                { "from": "auth", "to": "poller/p1", "event": { "startPolling": { "interval": 5 } } },
                { "from": "auth", "when": "signedOut", "to": "poller/p1" }
              ]
            }
            """
        let topology = try Topology(json: Data(json.utf8), source: "remote.json")
        #expect(topology.workers[1] == Topology.WorkerGroup(
            name: "remote", count: 1, executable: "my-worker", arguments: ["--flag"], external: true
        ))
        #expect(topology.routes[0].event == .object(["startPolling": .object(["interval": .number(5)])]))
        #expect(topology.routes[0].when == nil)
        #expect(topology.routes[1].event == nil)
    }
}
