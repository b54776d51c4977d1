import Foundation
@testable import GroveCluster
@testable import GroveClient
@testable import GroveCoordinator
@testable import GroveWorker
import GroveWire
import Testing

/// docs/topology.schema.json, parsed.
private func schema() throws -> [String: Any] {
    let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("docs/topology.schema.json")
    let object = try JSONSerialization.jsonObject(with: Data(contentsOf: url))
    return try #require(object as? [String: Any], "the schema is a JSON object")
}

/// Every object schema below `node`, by its place in a topology (`$.workers[]`), with `$ref`s
/// to `#/$defs/...` followed.
private func objects(in node: [String: Any], at place: String, defs: [String: Any]) -> [String: [String: Any]] {
    var node = node
    if let reference = node["$ref"] as? String, reference.hasPrefix("#/$defs/"),
       let target = defs[String(reference.dropFirst("#/$defs/".count))] as? [String: Any] {
        node = target.merging(node.filter { $0.key != "$ref" }) { _, own in own }
    }
    var found: [String: [String: Any]] = [:]
    if let items = node["items"] as? [String: Any] {
        found.merge(objects(in: items, at: place + "[]", defs: defs)) { first, _ in first }
    }
    if let properties = node["properties"] as? [String: Any] {
        found[place] = properties
        for (key, value) in properties {
            guard let child = value as? [String: Any] else { continue }
            found.merge(objects(in: child, at: place + "." + key, defs: defs)) { first, _ in first }
        }
    }
    return found
}

@Suite("Topology schema", .timeLimit(.minutes(2)))
struct TopologySchemaTests {
    @Test func theSchemaDescribesExactlyTheKeysTheDecoderReads() throws {
        let root = try schema()
        let found = objects(in: root, at: "$", defs: root["$defs"] as? [String: Any] ?? [:])
        #expect(Set(found.keys) == Set(TopologyKeys.byPlace.keys), "objects in the schema and in TopologyKeys differ")
        for (place, keys) in TopologyKeys.byPlace {
            let described = Set(found[place]?.keys.filter { $0 != "$schema" } ?? [])
            #expect(described == Set(keys), "\(place): the schema has \(described.sorted()), the decoder reads \(keys.sorted())")
        }
    }

    @Test func theSchemaGivesTheModelsDefaults() throws {
        let root = try schema()
        let found = objects(in: root, at: "$", defs: root["$defs"] as? [String: Any] ?? [:])
        func schemaDefault(_ place: String, _ key: String) -> Int? {
            ((found[place]?[key] as? [String: Any])?["default"] as? NSNumber)?.intValue
        }
        let heartbeat = Topology.Heartbeat(), queues = Topology.Queues(), supervision = Topology.Supervision()
        let ioLimits = Topology.IOLimits(), restart = RestartPolicy(), limits = Topology.Limits()
        let expected: [(String, String, Int)] = [
            ("$.heartbeat", "intervalMs", heartbeat.intervalMs), ("$.heartbeat", "timeoutMs", heartbeat.timeoutMs),
            ("$.queues", "mailboxCapacity", queues.mailboxCapacity), ("$.queues", "workerOutbox", queues.workerOutbox),
            ("$.queues", "clientOutbox", queues.clientOutbox), ("$.queues", "clientOutboxBytes", queues.clientOutboxBytes),
            ("$.queues", "workerOutboxBytes", queues.workerOutboxBytes), ("$.queues", "watcherOutbox", queues.watcherOutbox),
            ("$.queues", "watcherOutboxBytes", queues.watcherOutboxBytes),
            ("$.ioLimits", "timeoutMs", ioLimits.timeoutMs), ("$.ioLimits", "concurrentPerWorker", ioLimits.concurrentPerWorker),
            ("$.workers[].supervision", "intensity", supervision.intensity), ("$.workers[].supervision", "periodMs", supervision.periodMs),
            ("$.workers[].supervision.backoff", "initialMs", supervision.backoff.initialMs),
            ("$.workers[].supervision.backoff", "maxMs", supervision.backoff.maxMs),
            ("$.workers[].supervision.backoff", "resetAfterMs", supervision.backoff.resetAfterMs),
            ("$.workers[]", "count", Topology.WorkerGroup(name: "x").count),
            ("$.machines[].restart", "intensity", restart.intensity), ("$.machines[].restart", "periodMs", restart.periodMs),
            ("$.machines[].restart.backoff", "initialMs", restart.backoff.initialMs),
            ("$.machines[].restart.backoff", "maxMs", restart.backoff.maxMs),
            ("$.limits", "addressBytes", limits.addressBytes), ("$.limits", "payloadBytes", limits.payloadBytes),
            ("$.limits", "messageBytes", limits.messageBytes), ("$.limits", "instancesPerMachine", limits.instancesPerMachine),
            ("$.limits", "watcherSubscriptions", limits.watcherSubscriptions), ("$.limits", "subscriptions", limits.subscriptions),
            ("$.limits", "owedBytesPerClient", limits.owedBytesPerClient), ("$.limits", "owedBytes", limits.owedBytes),
            ("$.limits", "watchedStateBytes", limits.watchedStateBytes), ("$.limits", "publicationBytes", limits.publicationBytes),
        ]
        for (place, key, value) in expected {
            #expect(schemaDefault(place, key) == value, "\(place).\(key): the schema's default differs from the model's \(value)")
        }
        let onGiveUp = (found["$.workers[].supervision"]?["onGiveUp"] as? [String: Any])?["default"] as? String
        #expect(onGiveUp == supervision.onGiveUp.rawValue)
        let choices = (found["$.workers[].supervision"]?["onGiveUp"] as? [String: Any])?["enum"] as? [String]
        #expect(choices == Topology.Supervision.GiveUp.allCases.map(\.rawValue))
    }
}
